"""How much of gds_snappy_decode's warp places idle beside a block's slowest
warp, on the CPU (a model, not a timing).

Usage: python3 benches/probe/snappy_decode_blocks.py FILE.parquet [ROW_GROUPS]

Every job (a 64 KiB piece of a Snappy page's output, a warp each) of the
first ROW_GROUPS row groups (default 1) gets snappy_decode_rounds.py's
warp-steps; jobs go to blocks of W warps in launch order (W = 4, 2, 1:
GDSCAN_UNSNAP_WARPS), and the blocks to an SM's free places as they come
free (132 SMs, 28 warps each: the kernel's 72 registers a thread). A block
holds its W places until its slowest job ends. Prints, per W, the launch's
length in steps and the share of the occupied warp-place time spent on a
job (1.00: no place held idle), then the columns with the longest jobs.

Measured against it (BENCHMARKS.md): a warp a block, which this
model scores 1.00 against 0.84 for four, made the kernel slower on the GPU
(82.2 against 67.9 SM-ms per two flat decodes), so the idle places it counts
are not what bounds the launch.
"""

import heapq
import sys
from collections import defaultdict

import snappy_decode_rounds as rounds
from snappy_walks import snappy_pages

SMS = 132
WARPS_AN_SM = 28


def job_costs(path, groups):
    """[(warp-steps, column)] of every job, in launch order."""
    costs = []
    column = None

    def one_job(elems, _acc):
        acc = defaultdict(int)
        measure(elems, acc)
        costs.append((acc["steps"], column))

    measure = rounds.job_steps
    rounds.job_steps = one_job
    try:
        for column, body, size in snappy_pages(path, groups):
            rounds.page(body, size, None)
    finally:
        rounds.job_steps = measure
    return costs


def schedule(steps, warps):
    """(launch length, busy share) of jobs `steps` in blocks of `warps`."""
    places = [0] * (SMS * (WARPS_AN_SM // warps))
    held = 0
    for b in range(0, len(steps), warps):
        longest = max(steps[b : b + warps])
        start = heapq.heappop(places)
        heapq.heappush(places, start + longest)
        held += warps * longest
    return max(places), sum(steps) / held


def main():
    path = sys.argv[1]
    groups = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    costs = job_costs(path, groups)
    steps = [s for s, _ in costs]
    print(f"jobs {len(steps)}, warp-steps {sum(steps)}, longest job {max(steps)}")
    for warps in (4, 2, 1):
        length, share = schedule(steps, warps)
        print(f"{warps} warps a block: launch {length} steps, busy share of held places {share:.2f}")
    per = defaultdict(list)
    for s, c in costs:
        per[c].append(s)
    for c, v in sorted(per.items(), key=lambda kv: -max(kv[1]))[:5]:
        print(f"{c:<30} jobs {len(v):>5} mean {sum(v) / len(v):>8.0f} longest {max(v):>7}")


if __name__ == "__main__":
    main()
