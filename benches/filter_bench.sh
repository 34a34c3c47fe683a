#!/usr/bin/env bash
# The exact GPU filter's speed and bytes (issue 58), on the GPU machine
# from carried binaries (.carry/gdscan, nvCOMP from .whl/):
#   bash benches/filter_bench.sh [SF]        (results under $OUT or /tmp/fb)
# 1. SF (default 10) lineitem from `tpch gen` (/tmp/dd, reused): `bench
#    decode` of Q1's, Q6's, Q12's, Q14's and Q19's scans: the columns
#    unfiltered (q1, q6, q14: the query's and its filter's columns) and
#    with the filter exact in one pass (-exact) and late materialized
#    (-late), medians of 5; with cuDF (benches/anchors/cudf_filter.py) when
#    CUDF_SITE names its site-packages, run between two gdscan runs.
# 2. The same lineitem sorted by l_shipdate (pyarrow, page index written):
#    Q14's month (about 1.2 % of the rows) exact and late, and the bytes
#    each fetches against the unfiltered scan of its columns (--stats).
set -u
cd "$(dirname "$0")/.."
G=${G:-$PWD/.carry/gdscan}
O=${OUT:-/tmp/fb}; mkdir -p "$O"
SF=${1:-10}
export GDSCAN_NVCOMP_LIBRARY=${GDSCAN_NVCOMP_LIBRARY:-$(find /tmp/site -name libnvcomp.so.6 | head -1)}
export KVIKIO_NTHREADS=${KVIKIO_NTHREADS:-16}
D=/tmp/dd
[ -d $D/lineitem ] || timeout 300 "$G" tpch gen --sf "$SF" --tables lineitem --out $D --quiet
CASES=q1,q1-exact,q1-late,q6,q6-exact,q6-late,q14,q14-exact,q14-late,q12-exact,q19-exact
bench() { timeout 300 "$G" bench decode --data $D --cases $CASES --iterations 5 > "$O/$1.txt" 2>&1; tail -n 14 "$O/$1.txt"; }
bench gdscan-1
if [ -n "${CUDF_SITE:-}" ]; then
  PYTHONPATH=$CUDF_SITE timeout 300 python3 benches/anchors/cudf_filter.py --data $D --cases q1-exact,q6-exact,q14-exact > "$O/cudf.json" 2>&1
  cat "$O/cudf.json"
  bench gdscan-2
fi
S=/tmp/dsorted/lineitem; mkdir -p $S
[ -f $S/sorted.parquet ] || timeout 300 python3 - "$D" "$S/sorted.parquet" <<'PY'
import glob, sys
import pyarrow.parquet as pq
t = pq.read_table(sorted(glob.glob(sys.argv[1] + "/lineitem/*.parquet")))
t = t.sort_by("l_shipdate")
pq.write_table(t, sys.argv[2], row_group_size=1 << 20, compression="snappy", write_page_index=True)
print(t.num_rows, "rows sorted")
PY
Q14="l_shipdate >= DATE '1995-09-01' AND l_shipdate < DATE '1995-10-01'"
COLS=l_partkey,l_extendedprice,l_discount
for mode in exact late; do
  "$G" scan $S/sorted.parquet --decode --columns $COLS --filter "$Q14" --filter-mode $mode --stats > "$O/sorted-$mode.txt" 2>&1
done
"$G" scan $S/sorted.parquet --decode --columns $COLS,l_shipdate --stats > "$O/sorted-unfiltered.txt" 2>&1
head -n 4 "$O"/sorted-*.txt
D=/tmp/dsorted timeout 300 "$G" bench decode --data /tmp/dsorted --cases q14,q14-exact,q14-late --iterations 5 > "$O/sorted-bench.txt" 2>&1
tail -n 6 "$O/sorted-bench.txt"
