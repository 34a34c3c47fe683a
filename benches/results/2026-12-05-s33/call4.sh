set -u
cd /work/main 2>/dev/null || { mkdir -p /work; ln -s "$PWD" /work/main; cd /work/main; }
for f in .carry/*.xz; do xz -dkf "$f"; done; chmod +x .carry/*
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export GDSCAN_NVCOMP_LIBRARY=$(find /tmp/site -name libnvcomp.so.6) PARQUET_TEST_DATA=$PWD/.ptd/data CUDA_DEVICE_MAX_CONNECTIONS=32
R=/tmp/r4; mkdir -p $R; nvidia-smi -L > $R/gpu.txt; G=.carry/gdscan
pack() { tar -cJf $OUT/r.tar.xz -C /tmp r4; }
s=$(date +%s); [ -d /tmp/dl ] || timeout 200 $G tpch gen --sf 10 --tables lineitem --out /tmp/dl --quiet > $R/gen.txt 2>&1; echo "gen wall=$(( $(date +%s)-s ))"
for c in l_returnflag l_tax l_shipdate l_quantity l_shipmode l_orderkey; do
  timeout 100 ncu --clock-control none --csv --metrics gpu__time_duration.sum,sm__cycles_active.sum,sm__inst_executed.sum -k regex:gds_decode_pages -c 4000 \
    $G bench decode --data /tmp/dl --cases $c --iterations 1 > $R/ncu-$c.csv 2> $R/ncu-$c.err
  python3 benches/ncu_summary.py $R/ncu-$c.csv > $R/ncu-$c.txt; echo "== $c $(tail -1 $R/ncu-$c.txt)"; xz -T4 $R/ncu-$c.csv
done; pack
for c in l_returnflag l_quantity; do
  timeout 150 ncu --clock-control none --set full --import-source yes -k regex:gds_decode_pages --launch-skip 20 -c 1 -f -o /tmp/p-$c $G bench decode --data /tmp/dl --cases $c --iterations 1 > $R/p-$c-run.txt 2>&1
  ncu -i /tmp/p-$c.ncu-rep --page details > $R/p-$c.txt 2>&1
  ncu -i /tmp/p-$c.ncu-rep --page source --csv --print-source cuda,sass > $R/p-$c-source.csv 2>&1; xz -T4 $R/p-$c-source.csv
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Memory Throughput|Compute \(SM\) Throughput|Block Size|Grid Size|Issued Ipc|No Eligible" $R/p-$c.txt | head -14; pack
done
