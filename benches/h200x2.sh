#!/usr/bin/env bash
# Runs on the two-GPU machine (the device tool's nvidia-h200-x2) from the
# repository root, with the binaries benches/h200.sh uses, carried in .carry/:
#   .carry/gdscan      release CLI   (cargo build --release -p gdscan-cli --no-default-features)
#   .carry/gpu-tests   GPU tests     (cargo test --release -p gdscan-cli --no-default-features --test gpu --no-run)
# (or xz-compressed as .carry/NAME.xz), KvikIO's wheels in .whl/ and the nvCOMP
# wheel unpacked so that GDSCAN_NVCOMP_LIBRARY names libnvcomp.so.6.
# Usage: bash benches/h200x2.sh [topo] [tests] [ceiling] [read] [kvikio] [tpch] [decode] [check] [scaling] [scan] [trace]
#   topo     GPUs, NVLink, NUMA nodes (sysfs) and what gdscan pins where
#   tests    every GPU test, the two-GPU ones included (they fail, not skip,
#            with fewer than two GPUs)
#   ceiling  pinned H2D to each GPU alone and to both at once (CuPy)
#   read     gdscan bench read --devices 0,1: a warm $GDSCAN_BENCH_SIZE (4GiB)
#            file on ext4 and /dev/shm, one GPU then two, CPU s/GB
#   kvikio   KvikIO on the same files, one GPU then two, CPU s/GB
#   tpch     gdscan bench tpch --devices 0,1 at SF $GDSCAN_TPCH_SF (default 10):
#            raw fetch warm, decoded (--decode) warm, raw with 32 workers, cold
#   decode   gdscan bench decode --devices 0,1 (raw and decoded) on the same data
#   check    gdscan bench decode --devices 0,1 with the Snappy check on the
#            host, on the GPU and off (where the check's cost shows)
#   scaling  gdscan bench decode on one GPU at SF 1, 10 and 30 (lineitem):
#            seconds per GB and peak device memory as the work grows
#   scan     gdscan bench scan --devices 0,1 on one SF $GDSCAN_TPCH_SF lineitem file
#   trace    one GPU, SF $GDSCAN_TPCH_SF lineitem: the decoder's timeline
#            (GDSCAN_DECODE_TRACE) per case and check, and the device pool
#            shared by scans against one pool per scan (GDSCAN_DEVICE_POOL)
# (default: all of them, in that order). Results go to $OUT (default
# /tmp/gdscan-out-h200x2); raw output stays out of the repository.
set -uo pipefail
out=${OUT:-/tmp/gdscan-out-h200x2}
mkdir -p "$out"
steps=${*:-topo tests ceiling read kvikio tpch decode scan}
size=${GDSCAN_BENCH_SIZE:-4GiB}
sf=${GDSCAN_TPCH_SF:-10}
threads=${GDSCAN_BENCH_THREADS:-8,16,32}
ext4_dir=$PWD/.benchdata
mkdir -p "$ext4_dir"
for xz in .carry/*.xz; do
  [ -f "$xz" ] || continue
  bin=${xz%.xz}
  [ -x "$bin" ] && continue
  python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" "$xz" "$bin"
  chmod +x "$bin"
done
gds=./.carry/gdscan
data="$ext4_dir/tpch-sf$sf"
kvikio_env() {
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && export PYTHONPATH=/tmp/site
}

for step in $steps; do
  case $step in
    topo)
      {
        nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv
        nvidia-smi topo -m
        echo "NUMA nodes: $(ls -d /sys/devices/system/node/node[0-9]* | xargs -n1 basename | tr '\n' ' ')"
        for bus in $(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader); do
          b=$(echo "$bus" | tr 'A-Z' 'a-z' | sed 's/^0000\(0000:\)/\1/')
          echo "GPU $bus: numa_node=$(cat /sys/bus/pci/devices/$b/numa_node 2>/dev/null || echo '?')"
        done
        nproc; free -g | head -n 2
      } 2>&1 | tee "$out/topo.txt"
      ;;
    tests)
      echo "== every GPU test, two-GPU ones included (log: gpu-tests.log) =="
      ./.carry/gpu-tests --ignored --test-threads 1 --nocapture > "$out/gpu-tests.log" 2>&1
      echo "(exit $?)"
      grep -E "^test |test result|NUMA node|row groups: GPU" "$out/gpu-tests.log" | grep -vE " ok$" 
      grep -E "test result" "$out/gpu-tests.log"
      ;;
    ceiling)
      echo "== pinned H2D: each GPU alone, both at once (CuPy, 2 GiB) =="
      python3 benches/anchors/h2d_ceiling.py --devices 0,1 --size 2GiB --repeats 5 | tee "$out/h2d-ceiling.json"
      ;;
    read)
      echo "== gdscan bench read --devices 0,1 ($size, warm; threads $threads) =="
      $gds bench read --dir "$ext4_dir" --dir /dev/shm --size "$size" --devices 0,1 \
          --threads-sweep "$threads" --routes bounce --repeats 5 \
          --json "$out/bench-read-2gpu.json" 2>&1 | tee "$out/bench-read-2gpu.txt"
      ;;
    kvikio)
      kvikio_env || { echo "kvikio: wheels missing"; continue; }
      for devs in 0 0,1; do
        tag=${devs/,/-}
        echo "== KvikIO on the same files, GPUs $devs =="
        python3 benches/anchors/kvikio_read.py "$ext4_dir/gdscan-bench-$size.bin" "/dev/shm/gdscan-bench-$size.bin" \
            --threads "$threads" --repeats 5 --warmup 1 --compat on --devices "$devs" > "$out/kvikio-gpus$tag.json"
        python3 - "$out/kvikio-gpus$tag.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    print(f'kvikio {d["version"]} GPUs {r.get("devices")} {r["file"]} threads={r["threads"]} '
          f'best={r.get("best_gbps", float("nan")):.2f} GB/s cpu={r.get("cpu_s_per_gb", float("nan")):.3f} s/GB '
          f'crc32={r.get("crc32")} {r.get("error", "")}')
PY
      done
      ;;
    tpch)
      [ -d "$data/lineitem" ] || $gds tpch gen --sf "$sf" --out "$data" --quiet
      echo "== gdscan bench tpch --devices 0,1 (SF $sf, raw fetch), warm =="
      $gds bench tpch --data "$data" --devices 0,1 --iterations 5 \
          --json "$out/bench-tpch-sf$sf-2gpu.json" 2>&1 | tee "$out/bench-tpch-sf$sf-2gpu.txt"
      echo "== decoded on the GPUs: gdscan bench tpch --devices 0,1 --decode (SF $sf) =="
      $gds bench tpch --data "$data" --devices 0,1 --decode --iterations 5 \
          --json "$out/bench-tpch-sf$sf-2gpu-decode.json" 2>&1 | tee "$out/bench-tpch-sf$sf-2gpu-decode.txt"
      echo "== the same, with 32 workers (the default is the core count clamped to 8..=16) =="
      KVIKIO_NTHREADS=32 $gds bench tpch --data "$data" --devices 0,1 --iterations 5 --queries scan,q1,q6 \
          --json "$out/bench-tpch-sf$sf-2gpu-t32.json" 2>&1 | tee "$out/bench-tpch-sf$sf-2gpu-t32.txt"
      echo "== cold (the disk's rate is shared) =="
      $gds bench tpch --data "$data" --devices 0,1 --iterations 3 --queries q1,q6 --cold \
          --json "$out/bench-tpch-sf$sf-2gpu-cold.json" 2>&1 | tee "$out/bench-tpch-sf$sf-2gpu-cold.txt"
      ;;
    decode)
      [ -d "$data/lineitem" ] || $gds tpch gen --sf "$sf" --out "$data" --quiet
      echo "== gdscan bench decode --devices 0,1 (SF $sf lineitem; raw and decoded) =="
      $gds bench decode --data "$data" --devices 0,1 --cases all,q1,q6 --iterations 5 \
          --json "$out/bench-decode-sf$sf-2gpu.json" 2>&1 | tee "$out/bench-decode-sf$sf-2gpu.txt"
      echo "== the same, with 32 workers (the default is the core count clamped to 8..=16) =="
      KVIKIO_NTHREADS=32 $gds bench decode --data "$data" --devices 0,1 --cases all,q1 --iterations 5 \
          --json "$out/bench-decode-sf$sf-2gpu-t32.json" 2>&1 | tee "$out/bench-decode-sf$sf-2gpu-t32.txt"
      ;;
    check)
      [ -d "$data/lineitem" ] || $gds tpch gen --sf "$sf" --out "$data" --quiet
      for check in host gpu off; do
        echo "== gdscan bench decode --devices 0,1 --check $check (SF $sf lineitem) =="
        $gds bench decode --data "$data" --devices 0,1 --cases all,q1,q6 --iterations 5 --check "$check" \
            --json "$out/bench-decode-sf$sf-2gpu-check-$check.json" 2>&1 | tee "$out/bench-decode-sf$sf-2gpu-check-$check.txt"
      done
      ;;
    scaling)
      # Cost as the work grows: the same decode at SF 1, 10 and 30 (lineitem
      # only; GDSCAN_SCALING_SFS overrides), seconds per GB read and peak
      # device memory from each report (batches are released as consumed).
      for s in ${GDSCAN_SCALING_SFS:-1 10 30}; do
        d="$ext4_dir/tpch-sf$s"
        [ -d "$d/lineitem" ] || $gds tpch gen --sf "$s" --out "$d" --tables lineitem --quiet
        echo "== gdscan bench decode --device 0 (SF $s lineitem) =="
        $gds bench decode --data "$d" --device 0 --cases all,q1,q6 --iterations 5 \
            --json "$out/bench-decode-scaling-sf$s.json" 2>&1 | tee "$out/bench-decode-scaling-sf$s.txt"
      done
      python3 - "$out" ${GDSCAN_SCALING_SFS:-1 10 30} <<'PY'
import json, sys
out, sfs = sys.argv[1], sys.argv[2:]
print("case  SF   GB read  decode s  s/GB    peak device MB")
for sf in sfs:
    d = json.load(open(f"{out}/bench-decode-scaling-sf{sf}.json"))
    for c in d["cases"]:
        gb = c["bytes_read"] / 1e9
        print(f'{c["case"]:<5} {sf:>3} {gb:8.3f} {c["decode_seconds"]:9.4f} {c["decode_seconds"] / gb:7.4f} {c["peak_device_bytes"] / 1e6:10.0f}')
PY
      ;;
    scan)
      f="$ext4_dir/lineitem-sf$sf.parquet"
      echo "== gdscan bench scan --devices 0,1 (one SF $sf lineitem file) =="
      $gds bench scan --sf "$sf" --dir "$ext4_dir" --devices 0,1 --iterations 5 \
          --json "$out/bench-scan-sf$sf-2gpu.json" 2>&1 | tee "$out/bench-scan-sf$sf-2gpu.txt"
      echo "== gdscan scan --devices 0,1 --checksum against one GPU =="
      $gds scan "$f" --columns l_shipdate,l_discount,l_quantity --checksum --devices 0,1 > "$out/scan-2gpu.txt" 2>&1
      $gds scan "$f" --columns l_shipdate,l_discount,l_quantity --checksum > "$out/scan-1gpu.txt" 2>&1
      grep -E "^scanned|^per GPU" "$out/scan-2gpu.txt"
      if diff <(grep '^crc32' "$out/scan-2gpu.txt") <(grep '^crc32' "$out/scan-1gpu.txt") > /dev/null && grep -q '^crc32' "$out/scan-2gpu.txt"; then
        echo "two-GPU and one-GPU chunk checksums agree ($(grep -c '^crc32' "$out/scan-2gpu.txt") chunks)"
      else
        echo "CHECKSUM MISMATCH between the two-GPU and one-GPU scans"
      fi
      ;;
    trace)
      [ -d "$data/lineitem" ] || $gds tpch gen --sf "$sf" --out "$data" --tables lineitem --quiet
      for pool in scan shared; do
        echo "== gdscan bench decode --device 0, device pool per $pool (SF $sf lineitem) =="
        GDSCAN_DEVICE_POOL=$pool $gds bench decode --data "$data" --device 0 --cases all,q1,q6 --iterations 5 \
            --json "$out/bench-decode-pool-$pool.json" 2>&1 | tee "$out/bench-decode-pool-$pool.txt"
      done
      for check in ${GDSCAN_TRACE_CHECKS:-host off}; do
        for c in all q1 q6; do
          GDSCAN_DECODE_TRACE="$out/trace-$c-$check.jsonl" $gds bench decode --data "$data" --device 0 \
              --cases "$c" --iterations 2 --check "$check" --json "$out/bench-decode-trace-$c-$check.json" \
              > "$out/bench-decode-trace-$c-$check.txt" 2>&1
          tail -n 1 "$out/bench-decode-trace-$c-$check.txt"
        done
      done
      ;;
    *) echo "unknown step $step" ;;
  esac
done
