#!/usr/bin/env bash
# One GPU call for issue 38's figures (needs .carry/gdscan.xz and the nvCOMP
# wheel in .whl/; results under /tmp/r, packed into $OUT/r.tar.xz):
# - SFS (default "1 10 30 100"): lineitem at each scale factor, `gdscan bench
#   decode` on each (decode beside the raw scan of the same bytes, warm): the
#   cost per GB as the table grows;
# - TPCH_SF (default 10): every table at that scale factor, then `bench tpch`
#   with and without --decode, warm and --cold (caches dropped per run), and
#   `bench decode` on the same lineitem: the decode beside the raw scan from
#   the disk, and the two benches side by side.
# Either part is skipped when its variable is set empty, e.g.
#   SFS= TPCH_SF=10 bash benches/scale_call.sh
set -u
R=/tmp/r; mkdir -p $R
cd "$(dirname "$0")/.."
xz -dkf .carry/gdscan.xz && chmod +x .carry/gdscan
G=$PWD/.carry/gdscan
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export GDSCAN_NVCOMP_LIBRARY=$(find /tmp/site -name libnvcomp.so.6)
pack() { [ -n "${OUT:-}" ] && tar -cJf $OUT/r.tar.xz -C /tmp r; true; }
for sf in ${SFS-1 10 30 100}; do
  s=$(date +%s)
  [ -d /tmp/s$sf ] || timeout 300 $G tpch gen --sf $sf --tables lineitem --out /tmp/s$sf > $R/gen-$sf.txt 2>&1
  echo "gen wall=$(( $(date +%s)-s ))" >> $R/gen-$sf.txt
  du -sb /tmp/s$sf >> $R/sizes.txt
  s=$(date +%s)
  timeout ${BT:-240} $G bench decode --data /tmp/s$sf --iterations ${IT:-5} --json $R/decode-$sf.json > $R/decode-$sf.txt 2>&1
  echo "rc=$? wall=$(( $(date +%s)-s ))" >> $R/decode-$sf.txt
  pack
done
SF=${TPCH_SF-10}
if [ -n "$SF" ]; then
  timeout 300 $G tpch gen --sf $SF --out /tmp/t$SF > $R/gen.txt 2>&1
  for mode in "" "--decode"; do
    for temp in "" "--cold"; do
      name=tpch${mode:+-decode}${temp:+-cold}
      s=$(date +%s)
      timeout 240 $G bench tpch --data /tmp/t$SF $mode $temp --iterations ${TIT:-3} --json $R/$name.json > $R/$name.txt 2>&1
      echo "rc=$? wall=$(( $(date +%s)-s ))" >> $R/$name.txt
      pack
    done
  done
  timeout 120 $G bench decode --data /tmp/t$SF --iterations 5 > $R/decode.txt 2>&1
  pack
fi
