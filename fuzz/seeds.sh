#!/usr/bin/env bash
# Builds the AFL seed folders in fuzz/out/seeds/<target>: the committed text
# seeds (fuzz/corpus/), the small (< 64 KiB) Parquet files of
# parquet-testing's data/ and bad_data/ ($PARQUET_TEST_DATA, default
# ../shared/parquet-testing/data beside the checkout) and of TPC-H SF 0.01
# (gdscan tpch gen, when GDSCAN_BIN names the binary), and for page_header
# the bytes after each file's magic (where the first page header sits).
set -euo pipefail
cd "$(dirname "$0")"
data=${PARQUET_TEST_DATA:-$(cd ../../shared/parquet-testing/data 2>/dev/null && pwd || true)}
out=out/seeds
rm -rf "$out" && mkdir -p "$out"/{filter,metadata_plan,reader,location_settings,page_header}
cp corpus/filter/* "$out/filter/"
cp corpus/location_settings/* "$out/location_settings/"
files=()
if [ -n "$data" ]; then
  while IFS= read -r f; do files+=("$f"); done < <(find "$data" "$data/../bad_data" -name '*.parquet' -size -64k | sort)
fi
if [ -n "${GDSCAN_BIN:-}" ]; then
  rm -rf out/tpch && "$GDSCAN_BIN" tpch gen --sf 0.01 --out out/tpch --tables region,nation,supplier >/dev/null
  while IFS= read -r f; do files+=("$f"); done < <(find out/tpch -name '*.parquet' -size -64k | sort)
fi
i=0
for f in "${files[@]}"; do
  i=$((i + 1))
  cp "$f" "$out/metadata_plan/f$i.parquet"
  cp "$f" "$out/reader/f$i.parquet"
  tail -c +5 "$f" | head -c 512 > "$out/page_header/f$i.bin"
done
echo "seeds: ${#files[@]} Parquet files from ${data:-<no PARQUET_TEST_DATA>}"
