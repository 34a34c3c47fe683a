#!/usr/bin/env python3
"""Pinned host-to-device copy ceiling, to each GPU alone and to all at once.

The ceiling a multi-GPU read is measured against: for every GPU of
--devices, one pinned host buffer (allocated while that GPU is current) and
one device buffer of --size bytes; then, --repeats times each:

  * each GPU alone: one cudaMemcpyAsync on a non-blocking stream, then a
    synchronize;
  * all GPUs at once: every copy queued (one stream per GPU) before any
    synchronize, the clock stopped when the last finishes.

Prints one JSON object: {"size", "devices", "numa": {gpu: node}, "alone":
{gpu: best_gbps}, "all_at_once_gbps", "ratio_to_sum_of_alone"}. GB/s is
1e9 bytes per second (all GPUs' bytes together for the joint figure).

Usage (GPU machine, CuPy installed): python3 benches/anchors/h2d_ceiling.py
--devices 0,1 --size 2GiB --repeats 5
"""

import argparse
import json
import re
import sys
import time


def parse_size(text):
    m = re.fullmatch(r"\s*(\d+)\s*(?:([kmgt])(?:i?b)?|b)?\s*", text, re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError("not a size: %r" % text)
    value = int(m.group(1))
    if m.group(2):
        value <<= 10 * ("kmgt".index(m.group(2).lower()) + 1)
    return value


def parse_devices(text):
    out = [int(p) for p in text.split(",") if p.strip()]
    if not out or any(d < 0 for d in out) or len(set(out)) != len(out):
        raise argparse.ArgumentTypeError("bad device list: %r" % text)
    return out


def numa_node(cupy, d):
    try:
        bus = cupy.cuda.runtime.deviceGetPCIBusId(d).lower()
        with open("/sys/bus/pci/devices/%s/numa_node" % bus) as f:
            return int(f.read().strip())
    except Exception:
        return None


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--devices", type=parse_devices, default=[0, 1])
    p.add_argument("--size", type=parse_size, default=2 << 30)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()
    try:
        import cupy
    except Exception as e:
        sys.stderr.write("h2d_ceiling.py: cannot import cupy: %s\n" % e)
        return 2
    count = cupy.cuda.runtime.getDeviceCount()
    for d in args.devices:
        if d >= count:
            sys.stderr.write("h2d_ceiling.py: GPU %d does not exist (%d GPUs)\n" % (d, count))
            return 2
    n = args.size
    kit = {}
    for d in args.devices:
        with cupy.cuda.Device(d):
            host = cupy.cuda.alloc_pinned_memory(n)
            dst = cupy.cuda.alloc(n)
            stream = cupy.cuda.Stream(non_blocking=True)
            kit[d] = (host, dst, stream)

    def copy(d):
        host, dst, stream = kit[d]
        with cupy.cuda.Device(d):
            cupy.cuda.runtime.memcpyAsync(dst.ptr, host.ptr, n, 1, stream.ptr)  # 1: host to device

    def sync(d):
        with cupy.cuda.Device(d):
            kit[d][2].synchronize()

    for d in args.devices:  # warm-up
        copy(d)
        sync(d)
    alone = {}
    for d in args.devices:
        best = float("inf")
        for _ in range(args.repeats):
            t0 = time.perf_counter()
            copy(d)
            sync(d)
            best = min(best, time.perf_counter() - t0)
        alone[d] = n / best / 1e9
    best = float("inf")
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        for d in args.devices:
            copy(d)
        for d in args.devices:
            sync(d)
        best = min(best, time.perf_counter() - t0)
    joint = n * len(args.devices) / best / 1e9
    out = {
        "size": n,
        "devices": args.devices,
        "numa": {d: numa_node(cupy, d) for d in args.devices},
        "alone": alone,
        "all_at_once_gbps": joint,
        "ratio_to_sum_of_alone": joint / sum(alone.values()),
    }
    json.dump(out, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
