set -u
cd /work/main 2>/dev/null || { mkdir -p /work; ln -s "$PWD" /work/main; cd /work/main; }
for f in .carry/*.xz; do xz -dkf "$f"; done; chmod +x .carry/*
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export GDSCAN_NVCOMP_LIBRARY=$(find /tmp/site -name libnvcomp.so.6) PARQUET_TEST_DATA=$PWD/.ptd/data CUDA_DEVICE_MAX_CONNECTIONS=32
R=/tmp/r; mkdir -p $R; nvidia-smi -L > $R/gpu.txt; G=.carry/gdscan
pack() { tar -cJf $OUT/r.tar.xz -C /tmp r; }
s=$(date +%s); [ -d /tmp/dl ] || timeout 200 $G tpch gen --sf 10 --tables lineitem --out /tmp/dl --quiet > $R/gen.txt 2>&1; echo "gen wall=$(( $(date +%s)-s ))"
for r in 1 2; do for a in "X=0" "GDSCAN_DECODE_RAMP_DOWN=1" "G=32" "G=64" "GDSCAN_STAGE_THREADS=8"; do
  n=$(echo $a | tr ' =' '__'); ex=""; case $a in G=*) ex="--group-mib ${a#G=}";; esac
  echo "== round $r $a" | tee -a $R/ab.txt
  env $a timeout 100 $G bench decode --data /tmp/dl --cases all,q1,q6 --iterations 5 $ex > $R/ab-$r-$n.txt 2>&1
  grep -E "^(case|all|q[0-9]+) " $R/ab-$r-$n.txt | tee -a $R/ab.txt
done; done; pack
for c in all q1 q6; do
  GDSCAN_DECODE_TRACE=$R/trace-$c.jsonl timeout 60 $G bench decode --data /tmp/dl --cases $c --iterations 1 > $R/trace-$c.txt 2>&1
  python3 benches/trace_summary.py $R/trace-$c.jsonl > $R/trace-$c.sum.txt 2>&1; tail -2 $R/trace-$c.sum.txt
done; pack
for c in q1 all; do
  timeout 120 nsys profile -t cuda,osrt --sample=cpu -o /tmp/nsys-$c -f true $G bench decode --data /tmp/dl --cases $c --iterations 3 > $R/nsys-$c.txt 2>&1
  timeout 120 nsys stats --report cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,osrt_sum --format csv -o $R/nsys-$c /tmp/nsys-$c.nsys-rep > /dev/null 2>&1
  ls $R | grep nsys-$c; pack
done
