#!/usr/bin/env bash
# One GPU call: lineitem at several scale factors (SFS, default "1 10 30 100"),
# `gdscan bench decode` on each (decode beside the raw scan of the same bytes,
# warm), then `bench tpch --decode` warm and cold on SF 10 (issue 38: cost per
# GB as the table grows; the two benches side by side). Needs .carry/gdscan.xz
# and the nvCOMP wheel in .whl/. Results under /tmp/r, packed into $OUT/r.tar.xz.
set -u
R=/tmp/r; mkdir -p $R
cd "$(dirname "$0")/.."
xz -dkf .carry/gdscan.xz && chmod +x .carry/gdscan
G=$PWD/.carry/gdscan
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export GDSCAN_NVCOMP_LIBRARY=$(find /tmp/site -name libnvcomp.so.6)
pack() { [ -n "${OUT:-}" ] && tar -cJf $OUT/r.tar.xz -C /tmp r; true; }
for sf in ${SFS:-1 10 30 100}; do
  s=$(date +%s)
  [ -d /tmp/s$sf ] || timeout 300 $G tpch gen --sf $sf --tables lineitem --out /tmp/s$sf > $R/gen-$sf.txt 2>&1
  echo "gen wall=$(( $(date +%s)-s ))" >> $R/gen-$sf.txt
  du -sb /tmp/s$sf >> $R/sizes.txt
  s=$(date +%s)
  timeout ${BT:-240} $G bench decode --data /tmp/s$sf --iterations ${IT:-5} --json $R/decode-$sf.json > $R/decode-$sf.txt 2>&1
  echo "rc=$? wall=$(( $(date +%s)-s ))" >> $R/decode-$sf.txt
  pack
done
if [ -d /tmp/s10 ]; then
  timeout 200 $G bench tpch --data /tmp/s10 --decode --iterations ${IT:-5} > $R/tpch-decode-warm.txt 2>&1; echo "rc=$?" >> $R/tpch-decode-warm.txt
  timeout 200 $G bench tpch --data /tmp/s10 --decode --cold --iterations 3 > $R/tpch-decode-cold.txt 2>&1; echo "rc=$?" >> $R/tpch-decode-cold.txt
  timeout 200 $G bench tpch --data /tmp/s10 --cold --iterations 3 > $R/tpch-scan-cold.txt 2>&1; echo "rc=$?" >> $R/tpch-scan-cold.txt
  pack
fi
