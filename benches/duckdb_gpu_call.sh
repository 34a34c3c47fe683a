#!/usr/bin/env bash
# Issue 59's DuckDB and cold figures, a call right after
# benches/datafusion_gpu_call.sh on the same warm machine (its SF 10 folder
# /tmp/t10 and the unpacked .carry-df/gdscan-df and libnvcomp are still
# there): carry [".duck"] (DuckDB's wheel, about 25 MB), and [".carry-load"]
# for a newer gdscan binary.
#   1. the 22 answers of `gdscan sql --decode gpu` against DuckDB's;
#   2. DuckDB's own medians of 3 warm runs per query (JSON);
#   2b. load (8 streams at SF 10) and soak (1,056 queries at SF 1);
#   3. gdscan's CPU provider against DataFusion's reader, warm;
#   4. cold: `bench tpch --engine datafusion --decode gpu --cold`, the page
#      cache dropped before every iteration, GPU provider against
#      DataFusion's reader.
# STEPS picks the steps (default: all, in this order): answers bench tests
# load soak duckdb cpu cold. `bench` is the warm GPU table again (with the
# newer binary), `tests` runs the GPU tests named in TESTS from
# .carry-load/gpu-tests.xz (else .carry/gpu-tests.xz).
set -u
STEPS=${STEPS:-answers bench tests load soak duckdb cpu cold}
want() { [[ " $STEPS " == *" $1 "* ]]; }
cd "$(dirname "$0")/.."
R=/tmp/r2; mkdir -p $R
s0=$(date +%s)
D=$PWD/.carry-df/gdscan-df T=/tmp/t10
# A newer gdscan carried beside the wheel (.carry-load/gdscan-df.xz) replaces it.
if [ -f .carry-load/gdscan-df.xz ]; then xz -dkf -T8 .carry-load/gdscan-df.xz && chmod +x .carry-load/gdscan-df && D=$PWD/.carry-load/gdscan-df; fi
export GDSCAN_NVCOMP_LIBRARY=$PWD/.carry-df/libnvcomp.so.6 KVIKIO_NTHREADS=16
[ -x $D ] && [ -d $T/lineitem ] || { echo "no warm machine: run benches/datafusion_gpu_call.sh first"; exit 2; }
# Into a folder of its own (the image's Python may be managed by its
# distribution, and `pip` may not be this python3's).
python3 -m pip install --quiet --no-index --target /tmp/duckpkg .duck/duckdb-*.whl 2>&1 | grep -v "as the .root. user" | tail -3
export PYTHONPATH=/tmp/duckpkg${PYTHONPATH:+:$PYTHONPATH}
python3 -c "import duckdb" || echo "duckdb did not install"
want answers && { timeout 120 python3 benches/anchors/tpch_duckdb.py --data $T --gdscan $D --decode gpu > $R/answers-duckdb.txt 2>&1; echo "answers rc=$? $(( $(date +%s)-s0 ))s"; cut -c1-120 $R/answers-duckdb.txt | tail -3; }
tar -cJf $OUT/r2.tar.xz -C /tmp r2
want bench && { timeout 200 $D bench tpch --engine datafusion --data $T --decode gpu --iterations 3 --json $R/tpch-gpu.json > $R/tpch-gpu.txt 2>&1; echo "bench rc=$? $(( $(date +%s)-s0 ))s"; cut -c1-150 $R/tpch-gpu.txt | tail -n 28; }
tar -cJf $OUT/r2.tar.xz -C /tmp r2
if want tests && [ -n "${TESTS:-}" ]; then
  G=.carry/gpu-tests.xz; [ -f .carry-load/gpu-tests.xz ] && G=.carry-load/gpu-tests.xz
  xz -dkf -T8 $G && chmod +x ${G%.xz}
  [ -d .ptd/data ] && export PARQUET_TEST_DATA=$PWD/.ptd/data
  timeout 200 ${G%.xz} --ignored --test-threads 1 $TESTS > $R/gpu-tests.txt 2>&1; echo "gpu tests rc=$? $(( $(date +%s)-s0 ))s"
  grep -E "^test result|FAILED|panicked" $R/gpu-tests.txt | head -20
fi
tar -cJf $OUT/r2.tar.xz -C /tmp r2
# Load: 8 streams of the 22 at once over the GPU provider at SF 10 (one
# round), then the soak: 8 streams x 6 rounds = 1,056 queries at SF 1,
# memory after every round.
want load && timeout 120 $D bench tpch --engine datafusion --data $T --decode gpu --streams 8 --rounds 1 --json $R/load-sf10.json > $R/load-sf10.txt 2>&1; echo "load rc=$? $(( $(date +%s)-s0 ))s"; tail -n 14 $R/load-sf10.txt | cut -c1-160
want soak && { [ -d /tmp/t1/lineitem ] || timeout 60 $D tpch gen --sf 1 --out /tmp/t1 --quiet > /dev/null 2>&1
timeout 150 $D bench tpch --engine datafusion --data /tmp/t1 --decode gpu --streams 8 --rounds 6 --json $R/soak-sf1.json > $R/soak-sf1.txt 2>&1; echo "soak rc=$? $(( $(date +%s)-s0 ))s"; tail -n 18 $R/soak-sf1.txt | cut -c1-160; }
tar -cJf $OUT/r2.tar.xz -C /tmp r2
want duckdb && timeout 100 python3 benches/anchors/tpch_duckdb.py --data $T --time 3 --json $R/duckdb-times.json > $R/duckdb-times.txt 2>&1; echo "duckdb times rc=$? $(( $(date +%s)-s0 ))s"; tail -n 25 $R/duckdb-times.txt | cut -c1-120
tar -cJf $OUT/r2.tar.xz -C /tmp r2
# gdscan's CPU provider against DataFusion's reader, warm (the chart's third reader).
want cpu && timeout 120 $D bench tpch --engine datafusion --data $T --decode cpu --iterations 1 --json $R/tpch-cpu.json > $R/tpch-cpu.txt 2>&1; echo "cpu rc=$? $(( $(date +%s)-s0 ))s"; cut -c1-150 $R/tpch-cpu.txt | tail -n 26
tar -cJf $OUT/r2.tar.xz -C /tmp r2
want cold && timeout 100 $D bench tpch --engine datafusion --data $T --decode gpu --iterations 1 --cold --json $R/tpch-cold.json > $R/tpch-cold.txt 2>&1; echo "cold rc=$? $(( $(date +%s)-s0 ))s"; cut -c1-150 $R/tpch-cold.txt | tail -n 28
tar -cJf $OUT/r2.tar.xz -C /tmp r2
echo "all $(( $(date +%s)-s0 ))s"
