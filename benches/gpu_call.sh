#!/usr/bin/env bash
# One GPU call from carried binaries (.carry/gpu-tests.xz, .carry/gdscan.xz, nvCOMP in .whl/, parquet-testing in .ptd/data). MODE letters (combinable): t = GPU tests matching FILTER
# (space-separated, empty = all but two_gpus_), p = property test for PROP s,
# c = campaign (CASES, SEED, SETTINGS, CT s), m = memcheck over MCASES campaign cases (MT s),
# b = SF lineitem with --encoding delta (and the dictionary default) generated, `bench decode` on
#     each of DIRS, cuDF's anchor beside it when its wheels were carried (benches/carry_parts.sh), again;
#     DIRS entry dn: lineitem and orders_nested (issue 36's nested case) generated into /tmp/dn,
#     `bench decode --cases $NCASES` (default nested) and cuDF's `--cases $NCUDF` (default nested,all),
# r = the decoder's timeline of the delta files (GDSCAN_DECODE_TRACE).
# Results under /tmp/r, packed into $OUT/r.tar.xz after each step. E.g.
#   MODE=br DIRS="dl dd" IT=5 bash benches/gpu_call.sh
#   MODE=b DIRS=dn DICT=0 bash benches/gpu_call.sh          (the nested case alone)
#   MODE=tcm FILTERS="delta_strings decode::;tpch_matrix" CASES=10000 MCASES=500 bash benches/gpu_call.sh
set -u
R=/tmp/r; mkdir -p $R
cd "$(dirname "$0")/.."
ROOT=$PWD
[ -e /work/main ] || { mkdir -p /work; ln -s "$ROOT" /work/main; }
for f in .carry/*.xz; do xz -dkf "$f"; done
chmod +x .carry/gdscan .carry/gpu-tests
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export GDSCAN_NVCOMP_LIBRARY=$(find /tmp/site -name libnvcomp.so.6) PARQUET_TEST_DATA=$ROOT/.ptd/data CUDA_DEVICE_MAX_CONNECTIONS=32 GDSCAN_BIN=$ROOT/.carry/gdscan
nvidia-smi -L > $R/gpu.txt 2>&1
T=$ROOT/.carry/gpu-tests
pack() { [ -n "${OUT:-}" ] && tar -cJf $OUT/r.tar.xz -C /tmp r; true; }
MODE=${MODE:-t}
SETTINGS=${SETTINGS:-Dictionary,Plain,DeltaNumbers,DeltaLength,DeltaPrefix}
if [[ $MODE == *t* ]]; then
  # FILTERS: groups separated by ';', each its own run under TT seconds.
  IFS=';' read -ra groups <<< "${FILTERS:-}"
  [ ${#groups[@]} -eq 0 ] && groups=("")
  for g in "${groups[@]}"; do
    s=$(date +%s)
    echo "=== group: $g" >> $R/tests.txt
    timeout ${TT:-400} $T --ignored --test-threads 1 --skip two_gpus_ $g >> $R/tests.txt 2>&1; echo "rc=$? wall=$(( $(date +%s)-s ))" >> $R/tests.txt
    pack
  done
fi
if [[ $MODE == *p* ]]; then
  s=$(date +%s)
  GDSCAN_PROPERTY_SECONDS=${PROP:-30} timeout 200 $T --ignored --test-threads 1 --nocapture random_flat_files > $R/property.txt 2>&1; echo "rc=$? wall=$(( $(date +%s)-s ))" >> $R/property.txt
pack
fi
if [[ $MODE == *c* ]]; then
  s=$(date +%s); mkdir -p $R/campaign-fail
  GDSCAN_CAMPAIGN_CASES=${CASES:-10000} GDSCAN_CAMPAIGN_SEED=${SEED:-1} GDSCAN_CAMPAIGN_SETTINGS=$SETTINGS GDSCAN_CAMPAIGN_CASE_SECONDS=20 GDSCAN_CAMPAIGN_OUT=$R/campaign-fail \
    timeout ${CT:-300} $T --ignored --test-threads 1 --nocapture corruption_campaign > $R/campaign.txt 2>&1; echo "rc=$? wall=$(( $(date +%s)-s ))" >> $R/campaign.txt
pack
fi
if [[ $MODE == *m* ]]; then
  s=$(date +%s)
  GDSCAN_CAMPAIGN_CASES=${MCASES:-500} GDSCAN_CAMPAIGN_SEED=7 GDSCAN_CAMPAIGN_SETTINGS=$SETTINGS GDSCAN_CAMPAIGN_CASE_SECONDS=120 \
    timeout ${MT:-300} compute-sanitizer --tool memcheck --print-limit 20 $T --ignored --test-threads 1 --nocapture corruption_campaign > $R/memcheck.txt 2>&1; echo "rc=$? wall=$(( $(date +%s)-s ))" >> $R/memcheck.txt
pack
fi
ls -la $R > $R/ls.txt
if [[ $MODE == *b* ]]; then
  # b: SF (default 10) lineitem with --encoding delta and the default dictionary files, gdscan's bench decode,
  # cuDF on the same files (when /tmp/carry holds its wheels), gdscan again.
  s=$(date +%s)
  G=$ROOT/.carry/gdscan
  if [ ! -d /tmp/dl ]; then
    timeout ${BT:-200} $G tpch gen --sf ${SF:-10} --tables lineitem --encoding delta --out /tmp/dl > $R/gen-delta.txt 2>&1
    echo "gen-delta wall=$(( $(date +%s)-s ))" >> $R/gen-delta.txt
  fi
  if [ ! -d /tmp/dd ] && [[ ${DICT:-1} == 1 ]]; then
    timeout ${BT:-200} $G tpch gen --sf ${SF:-10} --tables lineitem --out /tmp/dd > $R/gen-dict.txt 2>&1
  fi
  if [[ " ${DIRS:-dl dd} " == *" dn "* ]] && [ ! -d /tmp/dn ]; then
    # The nested case: orders with their lineitems as list<struct>, and the flat lineitem beside it.
    timeout ${BT:-200} $G tpch gen --sf ${SF:-10} --tables lineitem,orders_nested --out /tmp/dn > $R/gen-nested.txt 2>&1
  fi
  du -sb /tmp/dl /tmp/dd /tmp/dn > $R/sizes.txt 2>&1
  pack
  if [ -d /tmp/carry ] && [ ! -d /tmp/cudfsite ]; then
    (cd $ROOT && bash benches/carry_parts.sh join && python3 -m pip install -q --no-index --no-deps --target /tmp/cudfsite /tmp/carry/*.whl /tmp/carry/rest/*.whl) > $R/cudf-install.txt 2>&1
  fi
  for d in ${DIRS:-dl dd}; do
    [ -d /tmp/$d ] || continue
    # Cases: the bench's defaults, or for dn the nested case (split into words on purpose).
    CA=""; CC=""
    if [ $d = dn ]; then CA="--cases ${NCASES:-nested}"; CC="--cases ${NCUDF:-nested,all}"; fi
    timeout ${BT:-200} $G bench decode --data /tmp/$d $CA --iterations ${IT:-5} --json $R/bench-$d-1.json > $R/bench-$d-1.txt 2>&1
    pack
    if [ -d /tmp/cudfsite ]; then
      PYTHONPATH=/tmp/cudfsite KVIKIO_NTHREADS=16 timeout ${BT:-200} python3 $ROOT/benches/anchors/cudf_decode.py --data /tmp/$d $CC --iterations ${IT:-5} --json $R/cudf-$d.json > $R/cudf-$d.txt 2>&1
      timeout ${BT:-200} $G bench decode --data /tmp/$d $CA --iterations ${IT:-5} --json $R/bench-$d-2.json --cudf $R/cudf-$d.json --plot $R/decode-$d.svg > $R/bench-$d-2.txt 2>&1
    fi
    pack
  done
  echo "b wall=$(( $(date +%s)-s ))" >> $R/ls.txt
  pack
fi
if [[ $MODE == *r* ]]; then
  # r: the decoder's timeline of the delta files (all and q1).
  G=$ROOT/.carry/gdscan
  for c in all q1; do
    GDSCAN_DECODE_TRACE=$R/trace-dl-$c.json timeout 60 $G bench decode --data /tmp/dl --cases $c --iterations 1 > $R/trace-dl-$c.txt 2>&1
  done
  pack
fi
