#!/usr/bin/env bash
# One GPU call comparing builds of the CLI on the same data, alternated
# (base, new, ..., base, new, ...): BUILDS names them (default "base new"):
# base is .carry/gdscan(.xz), any other name N is .carry/gdscan-N(.xz); nvCOMP
# from .whl/. SF 10 lineitem and orders_nested are generated into /tmp/dn
# when absent; `bench decode --cases $CASES` (default nested,all,q1,
# 5 iterations) per run, ROUNDS rounds (default 2), JSON and text under
# $OUT/ab/.
#   bash benches/ab_call.sh                          (carry .carry and .whl)
#   BUILDS="base new new2" CASES=nested,all,q1,q6 bash benches/ab_call.sh
cd /work/main 2>/dev/null || cd "$(dirname "$0")/.."
for f in .carry/*.xz; do xz -dkf $f; done; chmod +x .carry/*
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export GDSCAN_NVCOMP_LIBRARY=$(find /tmp/site -name libnvcomp.so.6) CUDA_DEVICE_MAX_CONNECTIONS=32
[ -d /tmp/dn ] || .carry/gdscan tpch gen --sf 10 --tables lineitem,orders_nested --out /tmp/dn --quiet
mkdir -p $OUT/ab
for round in $(seq ${ROUNDS:-2}); do for v in ${BUILDS:-base new}; do
  G=.carry/gdscan; [ $v = base ] || G=.carry/gdscan-$v
  $G bench decode --data /tmp/dn --cases ${CASES:-nested,all,q1} --iterations 5 --json $OUT/ab/$v-$round.json > $OUT/ab/$v-$round.txt 2>&1
  echo "$v $round rc=$?"; grep -E "^(nested|all|q1|q6) " $OUT/ab/$v-$round.txt
done; done
