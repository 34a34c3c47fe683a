#!/usr/bin/env bash
# A/B of one setting in one GPU call: `bench decode` over /tmp/dn (lineitem and
# orders_nested, generated when absent) with each value of KNOB in turn,
# ROUNDS times alternated. Carry .carry and .whl. E.g.
#   KNOB=GDSCAN_DECODE_MIN_BLOCKS VALUES="4 3 2" CASES=nested,all,q1,q6 bash benches/knob_ab.sh
set -u
R=/tmp/r; mkdir -p $R
cd "$(dirname "$0")/.."
for f in .carry/*.xz; do xz -dkf "$f"; done
chmod +x .carry/gdscan
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export GDSCAN_NVCOMP_LIBRARY=$(find /tmp/site -name libnvcomp.so.6) CUDA_DEVICE_MAX_CONNECTIONS=32
G=$PWD/.carry/gdscan
[ -d /tmp/dn ] || timeout 200 $G tpch gen --sf ${SF:-10} --tables lineitem,orders_nested --out /tmp/dn --quiet > $R/gen.txt 2>&1
for r in $(seq ${ROUNDS:-2}); do
  for v in $VALUES; do
    echo "== round $r $KNOB=$v" | tee -a $R/ab.txt
    env $KNOB=$v timeout 120 $G bench decode --data /tmp/dn --cases ${CASES:-nested} --iterations ${IT:-5} > $R/ab-$r-$v.txt 2>&1
    grep -E "^(case|nested|all|q[0-9]+) " $R/ab-$r-$v.txt | tee -a $R/ab.txt
  done
done
[ -n "${OUT:-}" ] && tar -cJf $OUT/r.tar.xz -C /tmp r
true
