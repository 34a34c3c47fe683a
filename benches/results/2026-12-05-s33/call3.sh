set -u
cd /work/main 2>/dev/null || { mkdir -p /work; ln -s "$PWD" /work/main; cd /work/main; }
for f in .carry/*.xz; do xz -dkf "$f"; done; chmod +x .carry/*
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export GDSCAN_NVCOMP_LIBRARY=$(find /tmp/site -name libnvcomp.so.6) PARQUET_TEST_DATA=$PWD/.ptd/data CUDA_DEVICE_MAX_CONNECTIONS=32
R=/tmp/r3; mkdir -p $R; nvidia-smi -L > $R/gpu.txt; G=.carry/gdscan
pack() { tar -cJf $OUT/r.tar.xz -C /tmp r3; }
s=$(date +%s); [ -d /tmp/dl ] || timeout 200 $G tpch gen --sf 10 --tables lineitem --out /tmp/dl --quiet > $R/gen.txt 2>&1; echo "gen wall=$(( $(date +%s)-s ))"
timeout 100 $G bench decode --data /tmp/dl --cases all,q1,q6 --iterations 5 --json $R/b1.json > $R/b1.txt 2>&1; grep -E "^(case|all|q)" $R/b1.txt
for c in q6 q1 all; do
  s=$(date +%s)
  timeout 150 ncu --clock-control none --csv --metrics gpu__time_duration.sum,sm__cycles_active.sum,sm__inst_executed.sum -c 4000 \
    $G bench decode --data /tmp/dl --cases $c --iterations 1 > $R/ncu-$c.csv 2> $R/ncu-$c.err
  echo "== ncu $c rc=$? wall=$(( $(date +%s)-s ))"; python3 benches/ncu_summary.py $R/ncu-$c.csv > $R/ncu-$c.txt; head -6 $R/ncu-$c.txt; tail -1 $R/ncu-$c.txt; xz -T4 $R/ncu-$c.csv; pack
done
for c in q6 q1 all; do GDSCAN_DECODE_TRACE=$R/trace-$c.jsonl timeout 60 $G bench decode --data /tmp/dl --cases $c --iterations 3 > $R/trace-$c.txt 2>&1
  python3 benches/trace_summary.py $R/trace-$c.jsonl > $R/trace-$c.sum.txt 2>&1; done
timeout 100 $G bench decode --data /tmp/dl --cases all,q1,q6 --iterations 5 --json $R/b2.json > $R/b2.txt 2>&1; grep -E "^(case|all|q)" $R/b2.txt
pack
