#!/usr/bin/env bash
# One GPU call: every TPC-H table at SF (default 10), then `bench tpch` with
# and without --decode, warm and --cold (caches dropped per run), so that the
# decode's cost beside the raw scan's is seen from the disk too (issue 38).
# Needs .carry/gdscan.xz and the nvCOMP wheel in .whl/. Results in $OUT/r.tar.xz.
set -u
R=/tmp/r; mkdir -p $R
cd "$(dirname "$0")/.."
xz -dkf .carry/gdscan.xz && chmod +x .carry/gdscan
G=$PWD/.carry/gdscan
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export GDSCAN_NVCOMP_LIBRARY=$(find /tmp/site -name libnvcomp.so.6)
pack() { [ -n "${OUT:-}" ] && tar -cJf $OUT/r.tar.xz -C /tmp r; true; }
SF=${SF:-10}
timeout 300 $G tpch gen --sf $SF --out /tmp/t$SF > $R/gen.txt 2>&1
for mode in "" "--decode"; do
  for temp in "" "--cold"; do
    name=tpch${mode:+-decode}${temp:+-cold}
    s=$(date +%s)
    timeout 240 $G bench tpch --data /tmp/t$SF $mode $temp --iterations ${IT:-3} --json $R/$name.json > $R/$name.txt 2>&1
    echo "rc=$? wall=$(( $(date +%s)-s ))" >> $R/$name.txt
    pack
  done
done
timeout 120 $G bench decode --data /tmp/t$SF --iterations 5 > $R/decode.txt 2>&1
pack
