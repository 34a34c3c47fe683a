#!/usr/bin/env bash
# A fresh process's first decoded batch of a small file, with the kernel
# disk cache cold, warm and off (issue 60's first-use case). Run on the GPU
# machine from carried binaries (.carry/gdscan, nvCOMP from .whl/):
#   bash benches/first_batch.sh            (results in $OUT/first-batch.txt or /tmp)
# Each line: the case, then the wall seconds of each fresh process
# (process start to exit, so an upper bound on the first batch), read with
# the shell's clock around the command.
set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
G=${G:-$ROOT/.carry/gdscan}
OUTF=${OUT:-/tmp}/first-batch.txt
export GDSCAN_NVCOMP_LIBRARY=${GDSCAN_NVCOMP_LIBRARY:-$(find /tmp/site -name libnvcomp.so.6 | head -1)}
D=/tmp/fb-data
[ -d $D ] || timeout 120 "$G" tpch gen --sf 0.01 --tables lineitem --out $D > /dev/null 2>&1
F=$(find $D -name '*.parquet' | head -1)
ls -la "$F" >> "$OUTF"
run() { # $1: label, $2: runs; GDSCAN_KERNEL_CACHE from the caller
  local line="$1"
  for _ in $(seq "$2"); do
    local s e
    s=$(date +%s.%N)
    timeout 120 "$G" scan "$F" --decode --device 0 --columns l_orderkey,l_extendedprice > /dev/null 2>>"$OUTF.err" || line="$line FAILED"
    e=$(date +%s.%N)
    line="$line $(awk "BEGIN { printf \"%.3f\", $e - $s }")"
  done
  echo "$line" >> "$OUTF"
}
KC=/tmp/kernel-cache; rm -rf $KC
GDSCAN_KERNEL_CACHE=$KC run "cache cold, then warm:" 1
GDSCAN_KERNEL_CACHE=$KC run "cache warm:" 5
GDSCAN_KERNEL_CACHE=off run "cache off:" 3
ls -la $KC >> "$OUTF"
GDSCAN_KERNEL_CACHE=$KC timeout 60 "$G" scan "$F" --decode --device 0 --columns l_orderkey,l_extendedprice --stats >> "$OUTF" 2>&1
cat "$OUTF"
