set -u
cd /work/main 2>/dev/null || { mkdir -p /work; ln -s "$PWD" /work/main; cd /work/main; }
for f in .carry/gdscan-*.xz; do xz -dkf "$f"; done; chmod +x .carry/*
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export GDSCAN_NVCOMP_LIBRARY=$(find /tmp/site -name libnvcomp.so.6) CUDA_DEVICE_MAX_CONNECTIONS=32
R=/tmp/r6; mkdir -p $R; nvidia-smi -L > $R/gpu.txt; cat $R/gpu.txt
pack() { tar -cJf $OUT/r.tar.xz -C /tmp r6; }
s=$(date +%s); [ -d /tmp/dl ] || timeout 100 .carry/gdscan-new tpch gen --sf 10 --tables lineitem --out /tmp/dl --quiet > $R/gen.txt 2>&1; echo "gen wall=$(( $(date +%s)-s ))"
for b in base new; do for c in all q6; do
  timeout 60 ncu --clock-control none --csv --metrics gpu__time_duration.sum,sm__cycles_active.sum,sm__inst_executed.sum -k regex:gds_decode_pages -c 4000 \
    .carry/gdscan-$b bench decode --data /tmp/dl --cases $c --iterations 1 > $R/ncu-$b-$c.csv 2> $R/ncu-$b-$c.err
  python3 benches/ncu_summary.py $R/ncu-$b-$c.csv > $R/ncu-$b-$c.txt; echo "== ncu $b $c $(tail -1 $R/ncu-$b-$c.txt)"; xz -T4 $R/ncu-$b-$c.csv
done; done; pack
for r in 1 2 3; do for b in base new; do
  echo "== round $r $b" | tee -a $R/ab.txt
  timeout 60 .carry/gdscan-$b bench decode --data /tmp/dl --cases all,q1,q6 --iterations 5 --json $R/ab-$r-$b.json > $R/ab-$r-$b.txt 2>&1
  grep -E "^(all|q[0-9]+) " $R/ab-$r-$b.txt | tee -a $R/ab.txt
done; pack; done
