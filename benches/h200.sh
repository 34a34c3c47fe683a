#!/usr/bin/env bash
# Runs on the GPU machine (the device tool's H200) from the repository root,
# with binaries built on the dev machine and carried in .carry/:
#   .carry/gdscan      release CLI        (cargo build --release -p gdscan-cli --no-default-features)
#   .carry/gpu-tests   GPU test binary    (cargo test --release -p gdscan-cli --no-default-features --test gpu --no-run)
# (each may be carried xz-compressed as .carry/NAME.xz: it is unpacked first)
# and KvikIO's wheels in .whl/ (see BENCHMARKS.md).
# Usage: bash benches/h200.sh [tests] [udev] [tests-udev] [bench] [kvikio]
#   tests       doctor, read --stats and the GPU tests without the udev entry
#               (AUTO declines cuFile: no nvidia-fs, so stage 2 would be its
#               compat path; OFF's registration fails with 5027)
#   udev        add the udev entry that lets cuFile register files on the disk
#   tests-udev  the same again, expecting OFF's handle to register (AUTO
#               still takes the bounce route)
#   bench       gdscan bench read (4 GiB, ext4 and /dev/shm, warm and cold)
#   kvikio      KvikIO 26.10 on the same files
#   parquet     gdscan bench scan on TPC-H lineitem (SF $GDSCAN_TPCH_SF, default 1),
#               and device against host chunk checksums of gdscan scan
#   tpch        gdscan tpch gen (SF $GDSCAN_TPCH_SF), bench tpch warm and cold,
#               and the KvikIO / pyarrow anchors beside it (needs .whl)
#   store       gdscan bench store into device memory from an HTTP range server
#               on 127.0.0.1 (benches/anchors/range_server.py), SF 1 lineitem
#   sql         gdscan bench tpch --engine datafusion (the 22 queries, gdscan's
#               provider against DataFusion's own tables), warm then cold, SF
#               $GDSCAN_TPCH_SF; needs the DataFusion build as .carry/gdscan-df
#               (cargo build --release -p gdscan-cli), or xz-compressed as .carry/gdscan-df.xz
#               (GDSCAN_SQL_ITERATIONS, default 3; GDSCAN_SQL_MODES, default
#               "warm cold"; GDSCAN_SQL_QUERIES, e.g. "6 17", default all;
#               GDSCAN_SQL_CONFIGS, settings to compare in one run, separated
#               by ';', e.g. "default;GDSCAN_READ_AHEAD=0 KVIKIO_NTHREADS=32")
#   decode      gdscan bench decode on SF $GDSCAN_DECODE_SF (default 10) lineitem,
#               cases all, q1, q6, once per configuration in GDSCAN_DECODE_CONFIGS
#               (settings separated by ';', e.g. "default;GDSCAN_SNAPPY_SPLIT=0",
#               default "default"; words starting with -- are options of bench
#               decode, e.g. "--depth=4 KVIKIO_NTHREADS=12"), each with every
#               build in GDSCAN_DECODE_BUILDS (binaries in .carry/ separated by
#               spaces, default "gdscan"; e.g. "gdscan gdscan-s14" to run an
#               older build beside the new one), all in one call so
#               the ratios compare, then
#               the decoder's timeline (GDSCAN_DECODE_TRACE) of each case under
#               the first configuration; needs GDSCAN_NVCOMP_LIBRARY
# (default: all of them but decode, in that order). Full logs go to $OUT.
set -uo pipefail
out=${OUT:-/tmp/gdscan-out}
mkdir -p "$out"
steps=${*:-tests udev tests-udev bench kvikio}
size=${GDSCAN_BENCH_SIZE:-4GiB}
ext4_dir=$PWD/.benchdata
mkdir -p "$ext4_dir"
# Binaries may be carried xz-compressed (.carry/NAME.xz) to fit the carry limit.
for xz in .carry/*.xz; do
  [ -f "$xz" ] || continue
  bin=${xz%.xz}
  [ -x "$bin" ] && continue
  python3 -c "import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2],'wb'))" "$xz" "$bin"
  chmod +x "$bin"
done
nvidia-smi --query-gpu=name,driver_version,pcie.link.gen.current,pcie.link.width.current --format=csv,noheader
df -T "$ext4_dir" /dev/shm | tail -n 2

run_scenario() { # $1: fallback | registered
  local expect=$1 log="$out/scenario-$1.txt"
  echo "== cuFile expected: $expect (full log: scenario-$expect.txt) =="
  {
    [ -f "$ext4_dir/stats.bin" ] || head -c 64M /dev/urandom > "$ext4_dir/stats.bin"
    ./.carry/gdscan doctor "$ext4_dir/stats.bin"
    ./.carry/gdscan read "$ext4_dir/stats.bin" --stats --checksum
    python3 -c "import zlib,sys; print('zlib.crc32: %08x' % zlib.crc32(open(sys.argv[1],'rb').read()))" "$ext4_dir/stats.bin"
    ./.carry/gdscan read "$ext4_dir/stats.bin" --compat off --stats --checksum
    echo "(exit $?)"
    # The two-GPU tests (two_gpus_*) run on the two-GPU machine: benches/h200x2.sh.
    GDSCAN_EXPECT_CUFILE=$expect ./.carry/gpu-tests --ignored --test-threads 1 --nocapture --skip two_gpus_
    echo "--- cufile.log (last lines) ---"; tail -n 20 cufile.log 2>/dev/null
  } > "$log" 2>&1
  grep -E "^answer|^stage|^verdict|^crc32|^zlib|^gdscan: error|n_posix_reads|test result|FAILED|panicked" "$log"
}

add_udev_entry() {
  # cuFile looks up the file system of the block device in udev's database,
  # which is empty in this VM. Write an entry for the device holding
  # $ext4_dir (and its whole disk, when that is a partition).
  local dev disk diskdev d
  dev=$(python3 -c "import os,sys; d=os.stat(sys.argv[1]).st_dev; print(f'{os.major(d)}:{os.minor(d)}')" "$ext4_dir")
  disk=$(basename "$(readlink -f "/sys/dev/block/$dev/..")" 2>/dev/null)
  diskdev=$(cat "/sys/class/block/$disk/dev" 2>/dev/null)
  echo "== udev entry for the file system of $ext4_dir: block $dev (disk ${diskdev:-none}) =="
  mkdir -p /run/udev/data
  for d in $dev $diskdev; do
    printf 'E:ID_FS_USAGE=filesystem\nE:ID_FS_TYPE=ext4\n' > "/run/udev/data/b$d"
  done
}

remove_udev_entry() {
  # With the entry, KvikIO's AUTO (and gdscan's before issue 18) took cuFile's
  # compat path (no nvidia-fs: O_DIRECT, ~2 GB/s on cached files); gdscan's
  # AUTO no longer does, and the benchmarks keep the setup they were measured in.
  # Only the entries add_udev_entry writes are removed.
  local dev disk diskdev d
  dev=$(python3 -c "import os,sys; d=os.stat(sys.argv[1]).st_dev; print(f'{os.major(d)}:{os.minor(d)}')" "$ext4_dir")
  disk=$(basename "$(readlink -f "/sys/dev/block/$dev/..")" 2>/dev/null)
  diskdev=$(cat "/sys/class/block/$disk/dev" 2>/dev/null)
  for d in $dev $diskdev; do
    if grep -q "ID_FS_TYPE=ext4" "/run/udev/data/b$d" 2>/dev/null; then
      echo "== removing the udev entry b$d so that AUTO measures gdscan's POSIX path, not cuFile compat =="
      rm -f "/run/udev/data/b$d"
    fi
  done
}

# A decode configuration's words: settings (NAME=VALUE) go to the
# environment, options (--depth=4) to the command line.
split_config() {
  config_env=() config_args=()
  local word
  for word in $1; do
    case $word in
      --*) config_args+=("$word") ;;
      *) config_env+=("$word") ;;
    esac
  done
}

for step in $steps; do
  case $step in parquet|tpch|store|sql) remove_udev_entry ;; esac
  case $step in
    tests) run_scenario fallback ;;
    decode)
      sf=${GDSCAN_DECODE_SF:-10}
      data="$ext4_dir/tpch-sf$sf"
      [ -d "$data/lineitem" ] || ./.carry/gdscan tpch gen --sf "$sf" --out "$data" --tables lineitem --quiet
      IFS=';' read -r -a configs <<< "${GDSCAN_DECODE_CONFIGS:-default}"
      n=0
      read -r -a builds <<< "${GDSCAN_DECODE_BUILDS:-gdscan}"
      for config in "${configs[@]}"; do
        split_config "${config/#default/}"
        for build in "${builds[@]}"; do
          n=$((n + 1))
          echo "== [$n] $build bench decode, SF $sf lineitem, ${config} =="
          env "${config_env[@]}" "./.carry/$build" bench decode --data "$data" --device 0 --cases all,q1,q6 \
              --iterations 5 --json "$out/decode-$n.json" "${config_args[@]}" > "$out/decode-$n.txt" 2>&1
          tail -n 4 "$out/decode-$n.txt"
        done
      done
      split_config "${configs[0]/#default/}"
      for c in all q1 q6; do
        env "${config_env[@]}" GDSCAN_DECODE_TRACE="$out/trace-$c.jsonl" ./.carry/gdscan bench decode --data "$data" \
            --device 0 --cases "$c" --iterations 2 "${config_args[@]}" > /dev/null 2>&1
        python3 benches/trace_summary.py "$out/trace-$c.jsonl" | tail -n 1
      done
      ;;
    udev) add_udev_entry ;;
    tests-udev) run_scenario registered ;;
    bench)
      echo "== gdscan bench read ($size; ext4 and /dev/shm) =="
      ./.carry/gdscan bench read --dir "$ext4_dir" --dir /dev/shm --size "$size" \
          --threads-sweep "${GDSCAN_BENCH_THREADS:-1,4,8,16}" --routes "${GDSCAN_BENCH_ROUTES:-bounce,mmap,cufile}" \
          --repeats 3 --cold --json "$out/bench-read.json" 2>&1 | tee "$out/bench-read.txt"
      ;;
    kvikio)
      echo "== KvikIO 26.10 on the same files =="
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || continue
      export PYTHONPATH=/tmp/site
      python3 benches/anchors/kvikio_read.py "$ext4_dir/gdscan-bench-$size.bin" "/dev/shm/gdscan-bench-$size.bin" \
          --threads 1,8,16 --repeats 3 --warmup 1 --compat on > "$out/kvikio.json"
      python3 benches/anchors/kvikio_read.py "$ext4_dir/gdscan-bench-$size.bin" \
          --threads 16 --repeats 3 --warmup 1 --compat auto > "$out/kvikio-auto.json"
      python3 - "$out/kvikio.json" "$out/kvikio-auto.json" <<'PY'
import json, sys
for path in sys.argv[1:]:
    d = json.load(open(path))
    for r in d["results"]:
        print(f'kvikio {d["version"]} compat={d["compat_mode"]} {r["file"]} threads={r["threads"]} '
              f'best={r.get("best_gbps", float("nan")):.2f} GB/s median={r.get("median_gbps", float("nan")):.2f} GB/s '
              f'crc32={r.get("crc32")} {r.get("error", "")}')
PY
      ;;
    parquet)
      sf=${GDSCAN_TPCH_SF:-1}
      echo "== gdscan bench scan (TPC-H lineitem SF $sf) =="
      ./.carry/gdscan bench scan --sf "$sf" --dir "$ext4_dir" --iterations 3 --json "$out/bench-scan.json" 2>&1 | tee "$out/bench-scan.txt"
      f="$ext4_dir/lineitem-sf$sf.parquet"
      q6="l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"
      ./.carry/gdscan scan "$f" --columns l_shipdate,l_discount,l_quantity,l_extendedprice --filter "$q6" --checksum --stats > "$out/scan-device.txt" 2>&1
      ./.carry/gdscan scan "$f" --columns l_shipdate,l_discount,l_quantity,l_extendedprice --filter "$q6" --checksum --host > "$out/scan-host.txt" 2>&1
      head -n 3 "$out/scan-device.txt"; grep -E "^verdict" "$out/scan-device.txt"
      if diff <(grep '^crc32' "$out/scan-device.txt") <(grep '^crc32' "$out/scan-host.txt") > /dev/null && grep -q '^crc32' "$out/scan-device.txt"; then
        echo "device and host chunk checksums agree ($(grep -c '^crc32' "$out/scan-device.txt") chunks)"
      else
        echo "CHECKSUM MISMATCH between device and host scans"
      fi
      ;;
    tpch)
      sf=${GDSCAN_TPCH_SF:-1}
      data="$ext4_dir/tpch-sf$sf"
      [ -d "$data/lineitem" ] || ./.carry/gdscan tpch gen --sf "$sf" --out "$data" --quiet
      echo "== gdscan bench tpch (SF $sf), warm then cold =="
      ./.carry/gdscan bench tpch --data "$data" --iterations 3 --json "$out/bench-tpch.json" 2>&1 | tee "$out/bench-tpch.txt"
      ./.carry/gdscan bench tpch --data "$data" --iterations 3 --cold --json "$out/bench-tpch-cold.json" 2>&1 | tee "$out/bench-tpch-cold.txt"
      echo "== anchors: KvikIO on the planned ranges, pyarrow read + upload =="
      python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
        && PYTHONPATH=/tmp/site python3 benches/anchors/tpch_anchors.py --data "$data" --gdscan ./.carry/gdscan --iterations 3 2>&1 | tee "$out/anchors.txt"
      ;;
    store)
      f="$ext4_dir/lineitem-sf1.parquet"
      [ -f "$f" ] || ./.carry/gdscan bench scan --sf 1 --dir "$ext4_dir" --iterations 1 > /dev/null 2>&1
      python3 benches/anchors/range_server.py --dir "$ext4_dir" --port 8765 &
      server=$!
      sleep 1
      echo "== gdscan bench store: http://127.0.0.1:8765 (Python range server), SF 1 lineitem into the GPU =="
      ./.carry/gdscan bench store --url http://127.0.0.1:8765/lineitem-sf1.parquet --concurrency 1,4,16,64 \
          --cases all,q1,q6 --iterations 3 --json "$out/bench-store.json" 2>&1 | tee "$out/bench-store.txt"
      kill "$server"
      ;;
    sql)
      sf=${GDSCAN_TPCH_SF:-1}
      bin=./.carry/gdscan-df
      data="$ext4_dir/tpch-sf$sf"
      [ -d "$data/lineitem" ] || "$bin" tpch gen --sf "$sf" --out "$data" --quiet
      qflags=""; for q in ${GDSCAN_SQL_QUERIES:-}; do qflags="$qflags --query $q"; done
      IFS=';' read -r -a configs <<< "${GDSCAN_SQL_CONFIGS:-default}"
      for mode in ${GDSCAN_SQL_MODES:-warm cold}; do
        flag=""; [ "$mode" = cold ] && flag="--cold"
        for i in "${!configs[@]}"; do
          config=${configs[$i]}; envs=""; [ "$config" = default ] || envs=$config
          tag="sf$sf-$mode"; [ ${#configs[@]} -gt 1 ] && tag="$tag-c$i"
          echo "== gdscan bench tpch --engine datafusion (SF $sf, $mode, settings: $config) =="
          env $envs "$bin" bench tpch --engine datafusion --data "$data" --iterations "${GDSCAN_SQL_ITERATIONS:-3}" \
              $flag $qflags --json "$out/sql-$tag.json" > "$out/sql-$tag.txt" 2>&1
          grep -E "^(q[0-9]|total|verdicts|gdscan: error)" "$out/sql-$tag.txt" || tail -n 5 "$out/sql-$tag.txt"
        done
      done
      ;;
    *) echo "unknown step $step" ;;
  esac
done
