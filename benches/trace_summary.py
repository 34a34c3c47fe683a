#!/usr/bin/env python3
"""Summarises the decoder's timeline (GDSCAN_DECODE_TRACE=FILE) per group.

Usage: python3 benches/trace_summary.py TRACE.jsonl [...]

For each group of row groups: the decoder thread's spans (waiting for the
planner, staging, queueing) and, on the GPU, when its uploads ended, when
its nvCOMP call ran, and when each kernel of its row groups ended (first and
last row group), all in milliseconds from the scan's origin. On the upload
stream: when its copies ended (copied), each kernel of the Snappy scan
(scan_*, with --check scan) or the warp check (warp_check), then uploaded.
"""
import json
import sys


def span(marks, what):
    times = [m["ms"] for m in marks if m["what"] == what]
    return (round(min(times), 1), round(max(times), 1)) if times else None


def summarise(path):
    lines = [json.loads(line) for line in open(path)]
    gpu = [x for x in lines if x["side"] == "gpu"]
    host = [x for x in lines if x["side"] == "host"]
    print(f"== {path}")
    for group in sorted({x["group"] for x in gpu}):
        marks = [x for x in gpu if x["group"] == group]
        spans = {
            x["what"]: (round(x["start_ms"], 1), round(x["end_ms"], 1))
            for x in host
            if x["group"] == group and x["what"] != "finish"
        }
        row_groups = len({x["row_group"] for x in marks if x["row_group"] is not None})
        gpu_part = " ".join(
            f"{what} {span(marks, what)}"
            for what in ["copied", "scan_spec", "scan_chain", "scan_outs", "scan_sums", "scan_prefix",
                         "scan_verify", "scan_finish", "scan_pieces", "warp_check",
                         "uploaded", "nvcomp_start", "nvcomp_end", "kernels_start",
                         "dict_views", "byte_array_walk", "string_walks", "decode_pages", "nest", "gather_status"]
            if span(marks, what) is not None
        )
        print(f"group {group} ({row_groups} row groups) host {spans} | gpu {gpu_part}")
    finish = [x for x in host if x["what"] == "finish"]
    if finish:
        waited = sum(x["end_ms"] - x["start_ms"] for x in finish)
        print(f"batches: {len(finish)}, first handed out at {finish[0]['end_ms']:.1f} ms, "
              f"last at {finish[-1]['end_ms']:.1f} ms, {waited:.1f} ms waiting for the GPU")
    totals = {}
    for x in host:
        totals[x["what"]] = totals.get(x["what"], 0.0) + x["end_ms"] - x["start_ms"]
    print("host spans, ms in all: " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(totals.items())))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for p in sys.argv[1:]:
        summarise(p)
