#!/usr/bin/env bash
# Runs on the GPU machine (the device tool's H200) from the repository root,
# with binaries built on the dev machine and carried in .carry/:
#   .carry/gdscan      release CLI        (cargo build --release)
#   .carry/gpu-tests   GPU test binary    (cargo test --release --test gpu --no-run)
# and KvikIO's wheels in .whl/ (see BENCHMARKS.md).
# Usage: bash benches/h200.sh [tests] [udev] [tests-udev] [bench] [kvikio]
#   tests       GPU tests without the udev entry (cuFile registration fails: 5027)
#   udev        add the udev entry that lets cuFile register files on /dev/vda
#   tests-udev  GPU tests again, expecting cuFile to register
# (default: all of them, in that order)
# Output goes to stdout and to $OUT (when set) as files.
set -uo pipefail
out=${OUT:-/tmp/gdscan-out}
mkdir -p "$out"
steps=${*:-tests udev tests-udev bench kvikio}
size=${GDSCAN_BENCH_SIZE:-4GiB}
ext4_dir=$PWD/.benchdata
mkdir -p "$ext4_dir"
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
df -T "$ext4_dir" /dev/shm | tail -n 2

for step in $steps; do
case $step in
tests|tests-udev)
  expect=fallback; [ "$step" = tests-udev ] && expect=registered
  log="$out/scenario-$expect.txt"
  echo "== cuFile expected: $expect (full log: scenario-$expect.txt) =="
  {
    ./.carry/gdscan doctor "$PWD/benches/h200.sh"
    head -c 64M /dev/urandom > "$ext4_dir/stats.bin"
    ./.carry/gdscan read "$ext4_dir/stats.bin" --stats --checksum
    python3 -c "import zlib,sys; print('zlib.crc32: %08x' % zlib.crc32(open(sys.argv[1],'rb').read()))" "$ext4_dir/stats.bin"
    ./.carry/gdscan read "$ext4_dir/stats.bin" --compat off --stats
    echo "(exit $?)"
    GDSCAN_EXPECT_CUFILE=$expect ./.carry/gpu-tests --ignored --test-threads 1 --nocapture
  } > "$log" 2>&1
  grep -E "^answer|^stage|^verdict|^crc32|^zlib|^gdscan: error|cuFile unavailable|test result|FAILED|panicked|n_posix_reads" "$log"
  ;;
udev)
  expect=fallback; [ "$step" = tests-udev ] && expect=registered
  echo "== GPU tests, cuFile expected: $expect =="
  ./.carry/gdscan doctor "$PWD/benches/h200.sh" 2>&1 | tee "$out/doctor-$expect.txt"
  head -c 64M /dev/urandom > "$ext4_dir/stats.bin"
  ./.carry/gdscan read "$ext4_dir/stats.bin" --stats --checksum 2>&1 | tee "$out/read-stats-$expect.txt"
  python3 -c "import zlib,sys; print('zlib.crc32: %08x' % zlib.crc32(open(sys.argv[1],'rb').read()))" "$ext4_dir/stats.bin"
  ./.carry/gdscan read "$ext4_dir/stats.bin" --compat off 2>&1 | tail -n 3
  GDSCAN_EXPECT_CUFILE=$expect ./.carry/gpu-tests --ignored --test-threads 1 --nocapture 2>&1 | tee "$out/gpu-tests-$expect.txt" | grep -v '^$'
  ;;
udev)
  echo "== adding the udev entry for /dev/vda (254:0) =="
  mkdir -p /run/udev/data && printf 'E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=ext4\n' > /run/udev/data/b254:0
  ;;
bench)
  echo "== gdscan bench read ($size; ext4 and /dev/shm) =="
  ./.carry/gdscan bench read --dir "$ext4_dir" --dir /dev/shm --size "$size" \
      --threads-sweep "${GDSCAN_BENCH_THREADS:-1,4,8,16}" --routes "${GDSCAN_BENCH_ROUTES:-bounce,mmap,cufile}" \
      --repeats 3 --cold --json "$out/bench-read.json" 2>&1 | tee "$out/bench-read.txt"
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
