set -u
cd /work/main 2>/dev/null || { mkdir -p /work; ln -s "$PWD" /work/main; cd /work/main; }
for f in .carry/*.xz; do xz -dkf "$f"; done; chmod +x .carry/*
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export GDSCAN_NVCOMP_LIBRARY=$(find /tmp/site -name libnvcomp.so.6) PARQUET_TEST_DATA=$PWD/.ptd/data CUDA_DEVICE_MAX_CONNECTIONS=32
R=/tmp/r5; mkdir -p $R; nvidia-smi -L > $R/gpu.txt; cat $R/gpu.txt
pack() { tar -cJf $OUT/r.tar.xz -C /tmp r5; }
s=$(date +%s); [ -d /tmp/dn ] || timeout 200 .carry/gdscan-new tpch gen --sf 10 --tables lineitem,orders_nested --out /tmp/dn --quiet > $R/gen.txt 2>&1; echo "gen wall=$(( $(date +%s)-s ))"
for r in 1 2; do for b in base new; do
  echo "== round $r $b" | tee -a $R/ab.txt
  timeout 100 .carry/gdscan-$b bench decode --data /tmp/dn --cases nested,all,q1,q6 --iterations 5 --json $R/ab-$r-$b.json > $R/ab-$r-$b.txt 2>&1
  grep -E "^(case|nested|all|q[0-9]+) " $R/ab-$r-$b.txt | tee -a $R/ab.txt
done; done; pack
s=$(date +%s); timeout 170 .carry/gpu-tests --ignored --test-threads 1 --skip two_gpus_ decode:: nested > $R/tests.txt 2>&1; echo "tests rc=$? wall=$(( $(date +%s)-s ))" | tee -a $R/tests.txt
grep -E "^test .*(FAILED|ok)$|test result" $R/tests.txt | tail -40; pack
for b in base new; do for c in q1; do
  timeout 100 ncu --clock-control none --csv --metrics gpu__time_duration.sum,sm__cycles_active.sum,sm__inst_executed.sum -k regex:gds_decode_pages -c 4000 \
    .carry/gdscan-$b bench decode --data /tmp/dn --cases $c --iterations 1 > $R/ncu-$b-$c.csv 2> $R/ncu-$b-$c.err
  python3 benches/ncu_summary.py $R/ncu-$b-$c.csv > $R/ncu-$b-$c.txt; echo "== ncu $b $c $(tail -1 $R/ncu-$b-$c.txt)"; xz -T4 $R/ncu-$b-$c.csv
done; done; pack
