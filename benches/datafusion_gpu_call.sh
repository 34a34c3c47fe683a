#!/usr/bin/env bash
# Issue 59's first GPU run, in one call from carried binaries: the
# all-features gdscan (.carry-df/gdscan-df.xz, `cargo build --release -p
# gdscan-cli --features ballista`, stripped, xz -9: about 28 MB) and
# libnvcomp.so.6 alone (.carry-df/libnvcomp.so.6.xz, from the
# nvidia-libnvcomp-cu13 wheel, xz -9: about 22 MB; both fit one carry with
# .carry/gpu-tests.xz):
#   carry [".carry", ".carry-df"]; bash benches/datafusion_gpu_call.sh
# SF 10 TPC-H generated; Q6 through `gdscan sql --decode gpu --stats`; the
# 22 answers with --decode gpu against DataFusion's own reader
# (benches/anchors/tpch_duckdb.py --reference datafusion; DuckDB's wheel in a
# later call for --reference duckdb); `bench tpch --engine datafusion
# --decode gpu --iterations 3` (BENCHMARKS.md's table; STAGED=1 runs it
# again with GDSCAN_DATAFUSION_PINNED_COPY_BACK=0, about 100 s more); the
# filter property test; first use timed by subtraction. About 400 s.
# TESTS="filter_exact:: ..." (arguments of the test binary) runs those GPU tests after the bench; BALLISTA=1 adds the
# 22 on a 2-executor Ballista cluster; SKIP_TAIL=1 stops before the
# property test and first use; SHARED=1 runs the answers and the bench again
# with GDSCAN_DECODE_PIPELINE=shared (the partitions on one pipeline per GPU;
# SHARED=only with LEAN=1: only those, as one call cannot hold both).
set -u
cd "$(dirname "$0")/.."
R=/tmp/r; mkdir -p $R
s0=$(date +%s)
D=$PWD/.carry-df/gdscan-df
xz -dkf -T8 .carry-df/gdscan-df.xz .carry-df/libnvcomp.so.6.xz .carry/gpu-tests.xz; chmod +x $D .carry/gpu-tests
export GDSCAN_NVCOMP_LIBRARY=$PWD/.carry-df/libnvcomp.so.6 KVIKIO_NTHREADS=16 PARQUET_TEST_DATA=$PWD/.ptd/data
nvidia-smi -L
T=/tmp/t10
[ -d $T/lineitem ] || timeout 60 $D tpch gen --sf 10 --out $T --quiet > $R/gen-t10.txt 2>&1
echo "gen $(( $(date +%s)-s0 ))s"; du -sh $T
# LEAN=1 (a short lease): first use, the 22 answers and the bench only.
if [ -n "${LEAN:-}" ]; then
  timeout 20 $D tpch gen --sf 0.01 --tables lineitem --out /tmp/fb --quiet > /dev/null 2>&1; F=$(find /tmp/fb -name '*.parquet' | head -1)
  for m in AUTO AUTO AUTO ON ON; do
    s=$(date +%s.%N); KVIKIO_COMPAT_MODE=$m $D scan $F --decode --device 0 --columns l_orderkey,l_extendedprice --stats > $R/fu.txt 2>&1
    echo "$m $(awk "BEGIN{printf \"%.3f\", $(date +%s.%N)-$s}") s a process; $(grep -E 'first batch|startup' $R/fu.txt | tr '\n' ' ')"
  done | tee $R/first-use.txt
  tar -cJf $OUT/r.tar.xz -C /tmp r
  # SHARED=only: the shared pipeline's answers and bench instead (a call
  # of 600 s holds one pair, not both).
  if [ "${SHARED:-}" != only ]; then
  timeout 120 python3 benches/anchors/tpch_duckdb.py --data $T --gdscan $D --decode gpu --reference datafusion > $R/answers.txt 2>&1; echo "answers rc=$? $(( $(date +%s)-s0 ))s"; cut -c1-120 $R/answers.txt | tail -4
  tar -cJf $OUT/r.tar.xz -C /tmp r
  timeout 200 $D bench tpch --engine datafusion --data $T --decode gpu --iterations 3 --json $R/tpch-pinned.json > $R/tpch-pinned.txt 2>&1; echo "bench rc=$? $(( $(date +%s)-s0 ))s"
  cut -c1-150 $R/tpch-pinned.txt | head -32
  tar -cJf $OUT/r.tar.xz -C /tmp r
  fi
  [ -n "${SHARED:-}" ] && {
    GDSCAN_DECODE_PIPELINE=shared timeout 120 python3 benches/anchors/tpch_duckdb.py --data $T --gdscan $D --decode gpu --reference datafusion > $R/answers-shared.txt 2>&1; echo "shared answers rc=$? $(( $(date +%s)-s0 ))s"; cut -c1-120 $R/answers-shared.txt | tail -3
    GDSCAN_DECODE_PIPELINE=shared timeout 200 $D bench tpch --engine datafusion --data $T --decode gpu --iterations 3 --json $R/tpch-shared.json > $R/tpch-shared.txt 2>&1; echo "shared bench rc=$? $(( $(date +%s)-s0 ))s"
    cut -c1-150 $R/tpch-shared.txt | head -32
    tar -cJf $OUT/r.tar.xz -C /tmp r
  }
  exit 0
fi
# Q6's plan: its filters exact, no FilterExec of DataFusion's above the scan.
timeout 20 $D sql --tpch $T --decode gpu "EXPLAIN SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24" > $R/q6-explain.txt 2>&1; grep -c FilterExec $R/q6-explain.txt
timeout 20 $D sql --tpch $T --decode gpu --stats "SELECT sum(l_extendedprice * l_discount) AS revenue FROM lineitem WHERE l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24" > $R/q6-gpu.txt 2>&1; head -c 1500 $R/q6-gpu.txt
tar -cJf $OUT/r.tar.xz -C /tmp r
timeout 150 python3 benches/anchors/tpch_duckdb.py --data $T --gdscan $D --decode gpu --reference datafusion > $R/answers.txt 2>&1; echo "answers rc=$? $(( $(date +%s)-s0 ))s"; cut -c1-120 $R/answers.txt | tail -3
tar -cJf $OUT/r.tar.xz -C /tmp r
# BENCHMARKS.md's table: the GPU provider against DataFusion's reader, then
# the same with the staged copy back (what the pinned copy back is worth).
timeout 240 $D bench tpch --engine datafusion --data $T --decode gpu --iterations 3 --json $R/tpch-pinned.json > $R/tpch-pinned.txt 2>&1; echo "bench rc=$? $(( $(date +%s)-s0 ))s"
cut -c1-150 $R/tpch-pinned.txt | head -28
tar -cJf $OUT/r.tar.xz -C /tmp r
[ -n "${SHARED:-}" ] && {
  GDSCAN_DECODE_PIPELINE=shared timeout 120 python3 benches/anchors/tpch_duckdb.py --data $T --gdscan $D --decode gpu --reference datafusion > $R/answers-shared.txt 2>&1; echo "shared answers rc=$? $(( $(date +%s)-s0 ))s"; cut -c1-120 $R/answers-shared.txt | tail -3
  GDSCAN_DECODE_PIPELINE=shared timeout 200 $D bench tpch --engine datafusion --data $T --decode gpu --iterations 3 --json $R/tpch-shared.json > $R/tpch-shared.txt 2>&1; echo "shared bench rc=$? $(( $(date +%s)-s0 ))s"
  cut -c1-150 $R/tpch-shared.txt | head -32
  tar -cJf $OUT/r.tar.xz -C /tmp r
}
# GPU tests named in TESTS (test-name filters of .carry/gpu-tests).
if [ -n "${TESTS:-}" ]; then
  [ -d .ptd/data ] || echo "no .ptd carried: tests of parquet-testing's files skip"
  [ -d .ptd/data ] || unset PARQUET_TEST_DATA
  timeout 200 .carry/gpu-tests --ignored --test-threads 1 $TESTS > $R/gpu-tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-s0 ))s"
  grep -E "^test result|FAILED|panicked" $R/gpu-tests.txt | head -20
fi
[ -n "${SKIP_TAIL:-}" ] || {
[ -n "${PROP:-}" ] && GDSCAN_PROPERTY_SECONDS=15 timeout 40 .carry/gpu-tests --ignored --test-threads 1 filter_property:: > $R/prop.txt 2>&1; echo "prop rc=$?"; grep -E "test result|filter property test|panicked" -A2 $R/prop.txt | cut -c1-600 | head
tar -cJf $OUT/r.tar.xz -C /tmp r
# First use, by subtraction: fresh processes on a 0.5 MB file (kernel cache warm after the first).
export GDSCAN_KERNEL_CACHE=/tmp/kc KVIKIO_COMPAT_MODE=ON
timeout 20 $D tpch gen --sf 0.01 --tables lineitem --out /tmp/fb --quiet > /dev/null 2>&1; F=$(find /tmp/fb -name '*.parquet' | head -1)
python3 -c "import pyarrow as pa, pyarrow.parquet as pq; t=pq.read_table('$F'); t=t.cast(pa.schema([pa.field(f.name, pa.string() if f.type==pa.string_view() else f.type) for f in t.schema])); pq.write_table(t,'/tmp/fb-none.parquet',compression='none')"
t() { local s=$(date +%s.%N); "$@" > /dev/null 2>&1; echo "$(awk "BEGIN{printf \"%.3f\", $(date +%s.%N)-$s}") s: ${*:2}"; }
t $D scan $F --decode --device 0 --columns l_orderkey,l_extendedprice
for i in 1 2; do
  t $D --version; t $D scan $F --device 0 --columns l_orderkey,l_extendedprice
  t $D scan $F --decode --device 0 --columns l_orderkey,l_extendedprice
  t $D scan /tmp/fb-none.parquet --decode --device 0 --columns l_orderkey,l_extendedprice
done 2>&1 | tee $R/first-use.txt
$D scan $F --decode --device 0 --columns l_orderkey,l_extendedprice --stats 2>&1 | tail -5
# The same under AUTO (the default): cuFile's driver opens in the
# background when the kernel has no nvidia-fs module.
for i in 1 2 3; do
  KVIKIO_COMPAT_MODE=AUTO t $D scan $F --decode --device 0 --columns l_orderkey,l_extendedprice
done 2>&1 | sed 's/^/AUTO /' | tee -a $R/first-use.txt
KVIKIO_COMPAT_MODE=AUTO $D scan $F --decode --device 0 --columns l_orderkey,l_extendedprice --stats 2>&1 | tail -8
tar -cJf $OUT/r.tar.xz -C /tmp r
unset KVIKIO_COMPAT_MODE GDSCAN_KERNEL_CACHE
}
# DataFusion's own reader with its row filters on (its other setting: the
# table's baseline is the better of the two per query).
[ -n "${PUSHDOWN:-}" ] && timeout 240 $D bench tpch --engine datafusion --data $T --decode gpu --iterations 3 --listing-pushdown --json $R/tpch-pushdown.json > $R/tpch-pushdown.txt 2>&1; echo "pushdown rc=$? $(( $(date +%s)-s0 ))s"; cut -c1-150 $R/tpch-pushdown.txt | tail -n 26
tar -cJf $OUT/r.tar.xz -C /tmp r
[ -n "${STAGED:-}" ] && GDSCAN_DATAFUSION_PINNED_COPY_BACK=0 timeout 240 $D bench tpch --engine datafusion --data $T --decode gpu --iterations 3 --json $R/tpch-staged.json > $R/tpch-staged.txt 2>&1 && tail -n 30 $R/tpch-staged.txt | cut -c1-150
tar -cJf $OUT/r.tar.xz -C /tmp r
# BALLISTA=1: the 22 on a scheduler and 2 executors decoding on the GPU,
# beside single-node gdscan and DataFusion (answers compared by the bench).
[ -n "${BALLISTA:-}" ] && timeout 300 $D bench tpch --engine ballista --executors 2 --data $T --decode gpu --iterations 1 --json $R/ballista.json > $R/ballista.txt 2>&1; echo "ballista rc=$? $(( $(date +%s)-s0 ))s"; tail -n 30 $R/ballista.txt | cut -c1-160
tar -cJf $OUT/r.tar.xz -C /tmp r
echo "all $(( $(date +%s)-s0 ))s"
