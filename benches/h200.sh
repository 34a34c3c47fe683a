#!/usr/bin/env bash
# Runs on the GPU machine (the device tool's H200) from the repository root,
# with binaries built on the dev machine and carried in .carry/:
#   .carry/gdscan      release CLI        (cargo build --release)
#   .carry/gpu-tests   GPU test binary    (cargo test --release --test gpu --no-run)
# and KvikIO's wheels in .whl/ (see BENCHMARKS.md).
# Usage: bash benches/h200.sh [tests] [bench] [kvikio]   (default: all three)
# Output goes to stdout and to $OUT (when set) as files.
set -uo pipefail
out=${OUT:-/tmp/gdscan-out}
mkdir -p "$out"
steps=${*:-tests bench kvikio}
size=${GDSCAN_BENCH_SIZE:-4GiB}
ext4_dir=$PWD/.benchdata
mkdir -p "$ext4_dir"
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
df -T "$ext4_dir" /dev/shm | tail -n 2

for step in $steps; do
case $step in
tests)
  echo "== GPU tests (all ignored tests, which need a GPU) =="
  ./.carry/gpu-tests --ignored --test-threads 1 2>&1 | tee "$out/gpu-tests.txt"
  ;;
bench)
  echo "== gdscan bench read ($size; ext4 and /dev/shm) =="
  ./.carry/gdscan bench read --dir "$ext4_dir" --dir /dev/shm --size "$size" \
      --threads-sweep "${GDSCAN_BENCH_THREADS:-1,2,4,8,16}" --routes "${GDSCAN_BENCH_ROUTES:-bounce,mmap}" \
      --repeats 3 --json "$out/bench-read.json" 2>&1 | tee "$out/bench-read.txt"
  ;;
kvikio)
  echo "== KvikIO 26.10 on the same files =="
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
    && PYTHONPATH=/tmp/site python3 benches/anchors/kvikio_read.py "$ext4_dir"/gdscan-bench-"$size".bin /dev/shm/gdscan-bench-"$size".bin \
        --threads 1,8,16 --repeats 3 --warmup 1 --compat on > "$out/kvikio.json"
  python3 - "$out/kvikio.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["results"]:
    print(f'kvikio {d["version"]} {r["file"]} threads={r["threads"]} best={r.get("best_gbps", float("nan")):.2f} GB/s median={r.get("median_gbps", float("nan")):.2f} GB/s crc32={r.get("crc32")} {r.get("error", "")}')
PY
  ;;
esac
done
