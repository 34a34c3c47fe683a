set -u
cd /work/main 2>/dev/null || { mkdir -p /work; ln -s "$PWD" /work/main; cd /work/main; }
for f in .carry/*.xz; do xz -dkf "$f"; done; chmod +x .carry/*
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export GDSCAN_NVCOMP_LIBRARY=$(find /tmp/site -name libnvcomp.so.6) PARQUET_TEST_DATA=$PWD/.ptd/data CUDA_DEVICE_MAX_CONNECTIONS=32
R=/tmp/r2; mkdir -p $R; nvidia-smi -L > $R/gpu.txt; G=.carry/gdscan
pack() { tar -cJf $OUT/r.tar.xz -C /tmp r2; }
s=$(date +%s); [ -d /tmp/dl ] || timeout 200 $G tpch gen --sf 10 --tables lineitem --out /tmp/dl --quiet > $R/gen.txt 2>&1; echo "gen wall=$(( $(date +%s)-s ))"
timeout 100 $G bench decode --data /tmp/dl --cases q1,q6,all --iterations 5 --json $R/b.json > $R/b.txt 2>&1; cat $R/b.txt
for c in q1 q6; do GDSCAN_DECODE_TRACE=$R/trace-$c.jsonl timeout 60 $G bench decode --data /tmp/dl --cases $c --iterations 3 --json $R/t-$c.json > $R/trace-$c.txt 2>&1
  python3 benches/trace_summary.py $R/trace-$c.jsonl > $R/trace-$c.sum.txt 2>&1; tail -2 $R/trace-$c.sum.txt; done
pack
