#!/usr/bin/env python3
"""Is the host's memory the limit of a bounce-buffer read into several GPUs?

A bounce read moves each byte three times through host memory: the page
cache is read, a pinned buffer written (the `pread`), and the pinned buffer
read again by the GPU's DMA. This measures, for a fixed time each, in one
run: (1) `--threads` threads `pread`ing a warm file into pinned buffers
(the host side alone), (2) pinned host-to-device copies to every GPU at
once (the links alone), and (3) both at the same time. If (3) delivers far
less of each than (1) and (2), the two share a limit: host memory
bandwidth. Prints one JSON object.

    python3 benches/anchors/host_contention.py --file /dev/shm/f.bin --gpus 0,1
"""

import argparse
import json
import os
import threading
import time

import cupy as cp
import numpy as np


def pinned(n):
    mem = cp.cuda.alloc_pinned_memory(n)
    return np.frombuffer(mem, dtype=np.uint8, count=n), mem


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--file", required=True)
    p.add_argument("--size", type=int, default=4 << 30)
    p.add_argument("--threads", type=int, default=32)
    p.add_argument("--chunk", type=int, default=4 << 20)
    p.add_argument("--copy-size", type=int, default=512 << 20)
    p.add_argument("--gpus", default="0,1")
    p.add_argument("--seconds", type=float, default=3.0)
    args = p.parse_args()
    gpus = [int(g) for g in args.gpus.split(",")]
    if not os.path.exists(args.file) or os.path.getsize(args.file) != args.size:
        with open(args.file, "wb") as f:
            block = np.random.default_rng(1).integers(0, 255, size=64 << 20, dtype=np.uint8).tobytes()
            for _ in range(args.size // len(block)):
                f.write(block)
    with open(args.file, "rb") as f:  # warm
        while f.read(64 << 20):
            pass

    def reader(stop, counter, lock, state):
        buf, _keep = pinned(args.chunk)
        fd = os.open(args.file, os.O_RDONLY)
        moved = 0
        while not stop.is_set():
            with lock:
                off = state[0]
                state[0] = (off + args.chunk) % args.size
            moved += os.preadv(fd, [buf], off)
        os.close(fd)
        counter.append(moved)

    def copier(dev, stop, counter):
        with cp.cuda.Device(dev):
            src, _keep = pinned(args.copy_size)
            dst = cp.empty(args.copy_size, dtype=cp.uint8)
            stream = cp.cuda.Stream(non_blocking=True)
            moved = 0
            while not stop.is_set():
                dst.data.copy_from_host_async(src.ctypes.data, args.copy_size, stream)
                while not stream.done:  # poll: leave the GIL to the readers
                    time.sleep(0.0002)
                moved += args.copy_size
            counter.append(moved)

    def phase(read, copy):
        stop = threading.Event()
        reads, copies, lock, state = [], [], threading.Lock(), [0]
        threads = []
        if read:
            threads += [threading.Thread(target=reader, args=(stop, reads, lock, state)) for _ in range(args.threads)]
        if copy:
            threads += [threading.Thread(target=copier, args=(g, stop, copies)) for g in gpus]
        start = time.perf_counter()
        for t in threads:
            t.start()
        time.sleep(args.seconds)
        stop.set()
        for t in threads:
            t.join()
        secs = time.perf_counter() - start
        return {"pread_to_pinned_gbps": sum(reads) / secs / 1e9 if read else None,
                "pinned_h2d_gbps": sum(copies) / secs / 1e9 if copy else None}

    for g in gpus:  # contexts and first copies out of the timed phases
        with cp.cuda.Device(g):
            cp.empty(1).get()
    out = {"file": args.file, "threads": args.threads, "gpus": gpus,
           "host_alone": phase(True, False), "links_alone": phase(False, True), "together": phase(True, True)}
    t = out["together"]
    out["together_over_alone"] = {
        "pread": t["pread_to_pinned_gbps"] / out["host_alone"]["pread_to_pinned_gbps"],
        "h2d": t["pinned_h2d_gbps"] / out["links_alone"]["pinned_h2d_gbps"]}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
