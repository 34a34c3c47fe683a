#!/usr/bin/env bash
# What bounds a TPC-H query on the GPU path: `EXPLAIN ANALYZE` of the
# queries in QUERIES (default 1 13) through gdscan's provider decoding on
# the GPU and through DataFusion's own reader, on the warm machine that
# benches/datafusion_gpu_call.sh left (/tmp/t10, .carry-df unpacked).
# Each operator's elapsed_compute (summed over partitions) shows where the
# query's time goes: the scan's (gdscan's decode, copy back) or
# DataFusion's operators above it. Output: $OUT/explain-qN-{gpu,df}.txt.
set -u
cd "$(dirname "$0")/.."
D=$PWD/.carry-df/gdscan-df T=/tmp/t10
export GDSCAN_NVCOMP_LIBRARY=$PWD/.carry-df/libnvcomp.so.6 KVIKIO_NTHREADS=16
q1="select l_returnflag, l_linestatus, sum(l_quantity) as sum_qty, sum(l_extendedprice) as sum_base_price, sum(l_extendedprice * (1 - l_discount)) as sum_disc_price, sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge, avg(l_quantity) as avg_qty, avg(l_extendedprice) as avg_price, avg(l_discount) as avg_disc, count(*) as count_order from lineitem where l_shipdate <= date '1998-12-01' - interval '90' day group by l_returnflag, l_linestatus order by l_returnflag, l_linestatus"
q13="select c_count, count(*) as custdist from (select c_custkey, count(o_orderkey) from customer left outer join orders on c_custkey = o_custkey and o_comment not like '%special%requests%' group by c_custkey) as c_orders (c_custkey, c_count) group by c_count order by custdist desc, c_count desc"
for q in ${QUERIES:-1 13}; do
  eval "sql=\$q$q"
  for side in gpu df; do
    case $side in
      gpu) args=(--decode gpu) ;;
      df) args=(--reader datafusion) ;;
    esac
    # A warm-up run, then the analysed one.
    timeout 60 $D sql --tpch $T "${args[@]}" "$sql" > /dev/null 2>&1
    timeout 60 $D sql --tpch $T "${args[@]}" "EXPLAIN ANALYZE $sql" > $OUT/explain-q$q-$side.txt 2>&1
    echo "q$q $side rc=$?"
    grep -oE "(AggregateExec|FilterExec|DataSourceExec|HashJoinExec|ProjectionExec|RepartitionExec|CoalesceBatchesExec)[^,]*|elapsed_compute=[0-9.]+[a-zµ]+|gds_gpu_decode_time=[0-9.]+[a-zµ]+|gds_copy_back_time=[0-9.]+[a-zµ]+|time_elapsed_processing=[0-9.]+[a-zµ]+" $OUT/explain-q$q-$side.txt | tr '\n' ' ' | cut -c1-900; echo
  done
done
