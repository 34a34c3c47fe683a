#!/usr/bin/env bash
# GPU work per decode of two builds, from Nsight Compute (one GPU call):
# .carry/gdscan(.xz) is the base, .carry/gdscan-new(.xz) the change; each runs
# `bench decode --cases C --iterations 1` (a warm-up and one decode) under
# ncu for every case in CASES, and benches/ncu_summary.py sums SM-active time
# and instructions per kernel (halve them for one decode). SM time, unlike
# wall time, does not move with the machine's ±5 % from run to run.
# With NEW_ENV set, "new" is the base build run with those settings instead
# (e.g. NEW_ENV="GDSCAN_SNAPPY_DECODER=gdscan": nvCOMP against gdscan's own
# Snappy decoder, one build). Output under $OUT/ncu/. Carry .carry and .whl:
#   CASES="nested all" bash benches/ncu_ab.sh
cd /work/main 2>/dev/null || cd "$(dirname "$0")/.."
for f in .carry/*.xz; do xz -dkf "$f"; done; chmod +x .carry/*
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export GDSCAN_NVCOMP_LIBRARY=$(find /tmp/site -name libnvcomp.so.6) CUDA_DEVICE_MAX_CONNECTIONS=32
[ -d /tmp/dn ] || .carry/gdscan tpch gen --sf 10 --tables lineitem,orders_nested --out /tmp/dn --quiet
mkdir -p $OUT/ncu
for c in ${CASES:-nested all}; do for v in base new; do
  G=.carry/gdscan; E=
  if [ $v = new ]; then
    if [ -n "${NEW_ENV:-}" ]; then E="$NEW_ENV"; else G=.carry/gdscan-new; fi
  fi
  env $E timeout ${NT:-150} ncu --clock-control none --csv \
    --metrics gpu__time_duration.sum,sm__cycles_active.sum,sm__inst_executed.sum -c 4000 \
    $G bench decode --data /tmp/dn --cases $c --iterations 1 > $OUT/ncu/$c-$v.csv 2> $OUT/ncu/$c-$v.err
  echo "== $c $v rc=$?"
  python3 benches/ncu_summary.py $OUT/ncu/$c-$v.csv | tee $OUT/ncu/$c-$v.txt | tail -1
  xz -T4 $OUT/ncu/$c-$v.csv
done; done
