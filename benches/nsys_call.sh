#!/usr/bin/env bash
# Where the GPU's time goes in `gdscan bench decode`: Nsight Systems'
# timeline of one folder's cases (after benches/gpu_call.sh generated it),
# reduced to per-kernel sums and the union of busy time per engine
# (benches/nsys_summary.py). Results in /tmp/r/nsys-*, packed like
# gpu_call.sh's. Usage: DIR=dn CASES="nested" bash benches/nsys_call.sh
set -u
R=/tmp/r; mkdir -p $R
cd "$(dirname "$0")/.."
G=$PWD/.carry/gdscan
export GDSCAN_NVCOMP_LIBRARY=${GDSCAN_NVCOMP_LIBRARY:-$(find /tmp/site -name libnvcomp.so.6)}
command -v nsys > $R/nsys-which.txt 2>&1 || { echo "no nsys" >> $R/nsys-which.txt; exit 0; }
for c in ${CASES:-all}; do
  rep=/tmp/nsys-${DIR:-dd}-$c
  timeout ${NT:-120} nsys profile -o $rep --force-overwrite true --trace cuda \
    $G bench decode --data /tmp/${DIR:-dd} --cases $c --iterations ${IT:-2} > $R/nsys-${DIR:-dd}-$c-run.txt 2>&1
  nsys stats --report cuda_gpu_trace --format csv --output $rep $rep.nsys-rep > /dev/null 2>&1
  python3 benches/nsys_summary.py ${rep}_cuda_gpu_trace.csv > $R/nsys-${DIR:-dd}-$c.txt 2>&1
  [ -n "${OUT:-}" ] && tar -cJf $OUT/r.tar.xz -C /tmp r
done
true
