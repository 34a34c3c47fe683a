#!/usr/bin/env python3
"""Summarises an Nsight Systems `cuda_gpu_trace` CSV of `gdscan bench
decode`: the timeline is cut into runs at gaps of 20 ms without GPU work,
and for each run (the last is the one to read) it prints the span, the
union of time with a kernel running, with a host-to-device copy, with
either, and each kernel's summed duration (largest first)."""
import csv
import sys
from collections import defaultdict


def union(intervals):
    total, end = 0, None
    for s, e in sorted(intervals):
        if end is None or s > end:
            total += e - s
            end = e
        elif e > end:
            total += e - end
            end = e
    return total


def main(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            try:
                s = int(float(r["Start (ns)"]))
                d = int(float(r["Duration (ns)"]))
            except (KeyError, ValueError):
                continue
            rows.append((s, s + d, r.get("Name", "")))
    rows.sort()
    runs, cur, end = [], [], None
    for row in rows:
        if end is not None and row[0] - end > 20_000_000:
            runs.append(cur)
            cur = []
        cur.append(row)
        end = row[1] if end is None else max(end, row[1])
    if cur:
        runs.append(cur)
    for i, run in enumerate(runs):
        t0 = min(r[0] for r in run)
        t1 = max(r[1] for r in run)
        kern = [(s, e) for s, e, n in run if not n.startswith("[CUDA")]
        h2d = [(s, e) for s, e, n in run if "Host-to-Device" in n]
        other = [(s, e) for s, e, n in run if n.startswith("[CUDA") and "Host-to-Device" not in n]
        print(f"run {i}: span {(t1 - t0) / 1e6:.2f} ms, kernels busy {union(kern) / 1e6:.2f} ms "
              f"(sum {sum(e - s for s, e in kern) / 1e6:.2f}), H2D busy {union(h2d) / 1e6:.2f} ms, "
              f"other copies/sets {union(other) / 1e6:.2f} ms, kernels or H2D {union(kern + h2d) / 1e6:.2f} ms, "
              f"launches {len(kern)}")
        if i == len(runs) - 1:
            per = defaultdict(lambda: [0, 0])
            for s, e, n in run:
                per[n[:60]][0] += e - s
                per[n[:60]][1] += 1
            for n, (t, c) in sorted(per.items(), key=lambda x: -x[1][0])[:25]:
                print(f"  {t / 1e6:8.2f} ms  {c:6d}  {n}")


if __name__ == "__main__":
    main(sys.argv[1])
