#!/usr/bin/env bash
# Where a fresh process's first batch goes (issue 60's first use), on the
# GPU machine from carried binaries: the timeline of the files a process
# opens (strace -tt: libcuda, NVRTC, the kernel cache, nvCOMP, the
# Parquet file) and the CUDA API calls' durations (nsys), for one fresh
# `scan --decode` of a small file with the kernel cache warm, with
# KVIKIO_COMPAT_MODE=ON (no cuFile) and AUTO.
#   bash benches/probe/first_batch_profile.sh     (results under $OUT or /tmp)
set -u
cd "$(dirname "$0")/../.."
G=${G:-$PWD/.carry/gdscan}
O=${OUT:-/tmp}
export GDSCAN_NVCOMP_LIBRARY=${GDSCAN_NVCOMP_LIBRARY:-$(find /tmp/site -name libnvcomp.so.6 | head -1)}
export GDSCAN_KERNEL_CACHE=/tmp/kernel-cache
D=/tmp/fb-data
[ -d $D ] || timeout 120 "$G" tpch gen --sf 0.01 --tables lineitem --out $D > /dev/null 2>&1
F=$(find $D -name '*.parquet' | head -1)
scan() { "$G" scan "$F" --decode --device 0 --columns l_orderkey,l_extendedprice "$@"; }
scan > /dev/null 2>&1 # the kernel cache warm
for mode in ON AUTO; do
  export KVIKIO_COMPAT_MODE=$mode
  s=$(date +%s.%N); scan > /dev/null 2>&1; e=$(date +%s.%N)
  echo "$mode: $(awk "BEGIN { printf \"%.3f\", $e - $s }") s a process" >> $O/fb-profile.txt
  strace -f -tt -e trace=openat,execve,exit_group -o $O/strace-$mode.txt "$G" scan "$F" --decode --device 0 --columns l_orderkey,l_extendedprice > /dev/null 2>&1
  grep -v ENOENT $O/strace-$mode.txt | grep -E 'execve|libcuda|nvrtc|nvcomp|cufile|kernel-cache|parquet|exit_group|libnvidia' | head -40 > $O/opens-$mode.txt
  nsys profile -q -t cuda,osrt --force-overwrite true -o /tmp/fb-$mode "$G" scan "$F" --decode --device 0 --columns l_orderkey,l_extendedprice > /dev/null 2>&1
  nsys stats -q --report cuda_api_sum,osrt_sum --format csv /tmp/fb-$mode.nsys-rep > $O/nsys-$mode.csv 2>&1
done
export KVIKIO_COMPAT_MODE=ON
scan --stats >> $O/fb-profile.txt 2>&1
cat $O/fb-profile.txt; for m in ON AUTO; do echo "== $m"; cat $O/opens-$m.txt; head -30 $O/nsys-$m.csv; done
