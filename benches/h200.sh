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
  # cuFile looks up the file system of the block device in udev's database;
  # the VM's udev has no entry. Write one for the device holding $ext4_dir
  # (and its whole disk, when that is a partition).
  dev=$(python3 -c "import os,sys; d=os.stat(sys.argv[1]).st_dev; print(f'{os.major(d)}:{os.minor(d)}')" "$ext4_dir")
  disk=$(basename "$(readlink -f /sys/dev/block/$dev/..)" 2>/dev/null)
  diskdev=$(cat /sys/class/block/$disk/dev 2>/dev/null)
  echo "== udev entry for the file system of $ext4_dir: block $dev (disk ${diskdev:-?}) =="
  mkdir -p /run/udev/data
  for d in $dev $diskdev 254:0; do
    printf 'E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=ext4\n' > /run/udev/data/b$d
  done
  ls -l /run/udev/data
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
