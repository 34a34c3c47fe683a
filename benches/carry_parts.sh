#!/usr/bin/env bash
# Brings a set of files larger than one device call may carry (64 MiB) to
# the GPU machine over several calls made back to back while it stays warm:
#   here:   bash benches/carry_parts.sh split FILE...   (cuts each into
#           .cudf/NAME.partNN of 50 MiB, GDSCAN_PART_MIB, writes
#           .cudf/SHA256SUMS; a call carries the working tree too)
#   there:  bash benches/carry_parts.sh stash           (one call per part:
#           copies what .cudf/ holds this call into /tmp/carry)
#   there:  bash benches/carry_parts.sh join            (joins the parts in
#           /tmp/carry, checks every sha256, lists what is there)
# .cudf/ is git-ignored (.git/info/exclude); name the parts in `carry`.
set -euo pipefail
case ${1:-} in
  split)
    shift
    mkdir -p .cudf
    for f in "$@"; do
      name=$(basename "$f")
      split -b ${GDSCAN_PART_MIB:-50}M -d "$f" ".cudf/$name.part"
      (cd "$(dirname "$f")" && sha256sum "$name") >> .cudf/SHA256SUMS
    done
    ls -la .cudf
    ;;
  stash)
    mkdir -p /tmp/carry
    cp -rv .cudf/* /tmp/carry/
    du -sh /tmp/carry
    ;;
  join)
    cd /tmp/carry
    for first in *.part00; do
      name=${first%.part00}
      cat "$name".part* > "$name" && rm -f "$name".part*
    done
    sha256sum -c SHA256SUMS
    ls -la
    ;;
  *) echo "usage: $0 split FILE... | stash | join"; exit 2 ;;
esac
