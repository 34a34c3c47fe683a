"""How gds_snappy_decode's warps would step through a real file, on the CPU.

Usage: python3 benches/probe/snappy_decode_rounds.py [--exact | --resolve | --jump] FILE.parquet [ROW_GROUPS]

For every Snappy page of the first ROW_GROUPS row groups (default 1), its
elements are followed from the preamble, the page cut into its 64 KiB
pieces of output (the jobs, a warp each: src/decode/kernels/cuda/
snappy_decode.cu), each job's elements taken as the kernel takes them: per
1024 bytes of stream, 32 at a time (a batch). Per batch it counts what the
warp waits on in turn: the short literal runs (a lane each, eight bytes a
step: the longest sets the warp's steps), the long ones (64 bytes and more,
the whole warp, 128 bytes a step), and the copies' rounds (each round writes
every copy whose source ends before the first unwritten copy's place, and
that one; a round lasts as long as its longest copy, eight bytes a step
where the offset is 8 or more, else a byte a step). Prints per column and in
all: jobs, batches, rounds per batch and these warp-steps, so that a change
to the kernel's rules can be weighed before a GPU is at hand. Needs pyarrow
(for the footer); page headers and elements are read here (snappy_walks.py).
"""

import sys
from collections import defaultdict

from snappy_walks import next_element, snappy_pages

PIECE = 65536
CHUNK = 1024
WARP = 32
LONG_RUN = 64
# The copies' rule: a copy goes when every element its source overlaps is
# written (EXACT, set by --exact), or when its source ends before the first
# unwritten copy's place (the kernel's rule).
EXACT = "--exact" in sys.argv
# Or no rounds at all: every copy's bytes traced back through the batch's
# elements (--resolve).
RESOLVE = "--resolve" in sys.argv
# Or copies traced back through earlier whole copies first (--jump).
JUMP = "--jump" in sys.argv


def elements(stream):
    """(stream offset, output bytes, copy offset or 0) of every element."""
    p, n = 0, len(stream)
    while stream[p] & 0x80:
        p += 1
    p += 1
    out = []
    while p < n:
        tag = stream[p]
        kind, m = tag & 3, tag >> 2
        end = next_element(stream, p, n)
        if end is None:
            raise ValueError("truncated stream")
        if kind == 0:
            out.append((p, end - p - 1 - (m - 59 if m >= 60 else 0), 0))
        elif kind == 1:
            out.append((p, 4 + ((tag >> 2) & 7), ((tag >> 5) << 8) | stream[p + 1]))
        else:
            extra = 2 if kind == 2 else 4
            out.append((p, m + 1, int.from_bytes(stream[p + 1 : p + 1 + extra], "little")))
        p = end
    return out


def sources_done(i, batch, places, place0, done):
    """Whether copy i's source bytes are all written: before the batch, or
    in elements of the batch already written (`done`)."""
    length, off = batch[i]
    start, end = max(places[i] - off, place0), places[i] - off + length
    if end <= place0:
        return True
    for k, (n, _) in enumerate(batch):
        if places[k] < end and places[k] + n > start and k not in done:
            return False
    return True


def traced(i, batch, places, place0):
    """Whether copy i's source, moved back through each earlier copy of the
    batch that holds it whole, ends before the batch or inside one literal
    run (pointer jumping: five doubling passes over 32 lanes would do it)."""
    length, off = batch[i]
    start = places[i] - off
    while start >= place0:
        k = max(j for j in range(len(batch)) if places[j] <= start)
        if start + length > places[k] + batch[k][0]:
            return False  # straddles two elements
        if batch[k][1] == 0:
            return True
        start -= batch[k][1]
    return start + length <= place0


def resolved_cost(i, batch, places, place0):
    """Steps of copy i when each of its bytes is traced back through the
    batch's elements to a literal's stream byte or to output before the
    batch (written): a step per byte and hop."""
    length, off = batch[i]
    cost = 0
    for x in range(places[i] - off, places[i] - off + length):
        hops = 1
        while x >= place0:
            k = max(j for j in range(len(batch)) if places[j] <= x)
            if batch[k][1] == 0:
                break
            x -= batch[k][1]
            hops += 1
        cost += hops
    return cost


def batch_steps(batch, place0):
    """Warp-steps and rounds of one batch: [(output bytes, offset)]."""
    places, at = [], place0
    for length, _ in batch:
        places.append(at)
        at += length
    short = [(length + 7) // 8 for (length, off) in batch if off == 0 and length < LONG_RUN]
    steps = 1 + max(short, default=0)
    steps += sum((length + 127) // 128 for (length, off) in batch if off == 0 and length >= LONG_RUN)
    if RESOLVE:
        return steps + 1 + max((resolved_cost(i, batch, places, place0) for i, (_, off) in enumerate(batch) if off),
                               default=0), 1 if any(off for _, off in batch) else 0
    pending = [i for i, (_, off) in enumerate(batch) if off != 0]
    done = {i for i, (_, off) in enumerate(batch) if off == 0}
    rounds = 0
    if JUMP and pending:
        # Copies whose source traces back, whole, through earlier copies
        # of the batch to output before it or into one literal run: all in
        # the first round, reading there; the rest in rounds as before.
        jumped = [i for i in pending if traced(i, batch, places, place0)]
        steps += 2 + max((batch[i][0] + 7) // 8 for i in jumped) if jumped else 0
        done.update(jumped)
        pending = [i for i in pending if i not in jumped]
        rounds += 1 if jumped else 0
    while pending:
        if EXACT:
            ready = [i for i in pending if i == pending[0] or sources_done(i, batch, places, place0, done)]
        else:
            written = places[pending[0]]
            ready = [
                i
                for i in pending
                if i == pending[0] or places[i] - batch[i][1] + batch[i][0] <= written
            ]
        done.update(ready)
        steps += 1 + max((batch[i][0] + 7) // 8 if batch[i][1] >= 8 else batch[i][0] for i in ready)
        pending = [i for i in pending if i not in ready]
        rounds += 1
    return steps, rounds


def job_steps(elems, acc):
    """A job's elements (stream offset, output bytes, offset): its batches."""
    place, i = 0, 0
    while i < len(elems):
        chunk = elems[i][0] // CHUNK
        j = i
        while j < len(elems) and elems[j][0] // CHUNK == chunk:
            j += 1
        for b in range(i, j, WARP):
            batch = [(length, off) for (_, length, off) in elems[b : min(j, b + WARP)]]
            steps, rounds = batch_steps(batch, place)
            place += sum(length for length, _ in batch)
            acc["batches"] += 1
            acc["rounds"] += rounds
            acc["steps"] += steps
        i = j
    acc["jobs"] += 1


def page(stream, size, acc):
    elems = elements(stream)
    if size <= PIECE:
        job_steps(elems, acc)
        return
    piece, out, start = [], 0, 0
    for e in elems:
        if out // PIECE != start and out % PIECE == 0:
            job_steps(piece, acc)
            piece, start = [], out // PIECE
        piece.append(e)
        out += e[1]
    job_steps(piece, acc)


def main():
    args = [a for a in sys.argv[1:] if a not in ("--exact", "--resolve", "--jump")]
    path = args[0]
    groups = int(args[1]) if len(args) > 1 else 1
    per = defaultdict(lambda: {"jobs": 0, "batches": 0, "rounds": 0, "steps": 0, "out": 0})
    for column, body, size in snappy_pages(path, groups):
        acc = per[column]
        page(body, size, acc)
        acc["out"] += size
    total = defaultdict(int)
    print(f"{'column':<40} {'jobs':>6} {'batches':>8} {'rounds/batch':>12} {'warp-steps':>10} {'out MB':>8}")
    for name, a in per.items():
        for k, v in a.items():
            total[k] += v
        print(f"{name:<40} {a['jobs']:>6} {a['batches']:>8} {a['rounds'] / max(a['batches'], 1):>12.2f} "
              f"{a['steps']:>10} {a['out'] / 1e6:>8.2f}")
    print(f"{'all':<40} {total['jobs']:>6} {total['batches']:>8} "
          f"{total['rounds'] / max(total['batches'], 1):>12.2f} {total['steps']:>10} {total['out'] / 1e6:>8.2f}")


if __name__ == "__main__":
    main()
