"""How the Snappy scan's speculative walks behave on a real file, on the CPU.

Usage: python3 benches/probe/snappy_walks.py FILE.parquet [ROW_GROUPS]

For every Snappy page of the first ROW_GROUPS row groups (default 1), cut
its stream into 2 KiB segments as `gds_snappy_spec` does and walk each
segment from its first three bytes (src/decode/kernels/cuda/snappy_scan.cu):
walk 0 to the segment's end; walks 1 and 2 until they land on an offset walk
0 visited (then they stop: `gds_snappy_spec_later`) or leave the segment.
Prints how many later walks stop early and the warp-steps of the kernels
(threads in warps of 32, each warp as long as its longest walk): three full
walks per segment in one launch (before session 28); walk 0 in one launch
and the stopping later walks in another; and, as the kernels run now, the
later walks giving up after LATER_STEPS elements, those walked whole again
side by side in a third launch (`gds_snappy_spec_rest`); and what that costs
the verify kernel and the join: the real chain's own elements before it
meets a walk that kept its bitmap. Needs pyarrow (for the footer); the page headers are read here
(Thrift compact protocol).
"""

import sys

import pyarrow.parquet as pq

SEGMENT = 2048
WARP = 32
# Elements a later walk takes before it leaves its segment to the last
# launch: the record's first 32, then GDS_SCAN_LATER_STEPS (snappy_scan.cu).
LATER_STEPS = 32 + 40
# What the verify kernel's proof needs of the meeting: among the met walk's
# first RECORD_ELEMENTS elements (SCAN_WALK_WORDS) and its first
# INDEX_BYTES bytes (GDS_SCAN_INDEX_WORDS words of its bitmap).
RECORD_ELEMENTS = 32
INDEX_BYTES = 256


def varint(b, p):
    r = s = 0
    while True:
        x = b[p]
        p += 1
        r |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return r, p


def zigzag(n):
    return (n >> 1) ^ -(n & 1)


def skip(b, p, t):
    if t in (1, 2):
        return p
    if t == 3:
        return p + 1
    if t in (4, 5, 6):
        return varint(b, p)[1]
    if t == 7:
        return p + 8
    if t == 8:
        n, p = varint(b, p)
        return p + n
    if t in (9, 10):
        h = b[p]
        p += 1
        n, et = h >> 4, h & 15
        if n == 15:
            n, p = varint(b, p)
        for _ in range(n):
            p = skip(b, p, et)
        return p
    if t == 12:
        return thrift_struct(b, p)[1]
    raise ValueError(f"thrift type {t}")


def thrift_struct(b, p):
    """A Thrift compact struct at p: {field id: int or nested dict}, end."""
    fid, d = 0, {}
    while True:
        h = b[p]
        p += 1
        if h == 0:
            return d, p
        t, delta = h & 15, h >> 4
        if delta:
            fid += delta
        else:
            v, p = varint(b, p)
            fid = zigzag(v)
        if t in (5, 6):
            v, p = varint(b, p)
            d[fid] = zigzag(v)
        elif t == 12:
            d[fid], p = thrift_struct(b, p)
        elif t in (1, 2):
            d[fid] = t == 1
        else:
            p = skip(b, p, t)


def next_element(b, p, n):
    """Where the element at p ends, or None when it runs past the stream."""
    tag = b[p]
    kind, m = tag & 3, tag >> 2
    if kind == 0:
        extra = m - 59 if m >= 60 else 0
        if p + 1 + extra > n:
            return None
        run = int.from_bytes(b[p + 1 : p + 1 + extra], "little") if m >= 60 else m
        end = p + 1 + extra + run + 1
        return end if end <= n else None
    extra = 4 if kind == 3 else kind
    return p + 1 + extra if p + 1 + extra <= n else None


def own_steps(stream, entry, end, visited):
    """Elements of the real chain from `entry` before an offset in one of
    the `visited` sets (the join's and the verify kernel's own walk)."""
    p, steps = entry, 0
    while p is not None and p < end and not any(p in v for v in visited):
        p = next_element(stream, p, len(stream))
        steps += 1
    return steps


def verify_rest(stream, entry, start, end, paths):
    """Elements the verify kernel walks past the meeting: none where the
    met walk's record proves the rest (here: the meeting among the walk's
    first RECORD_ELEMENTS elements and in the segment's first INDEX_BYTES
    bytes, as gds_walk_index and gds_rest_proved need; piece edges not
    modelled),
    else the met walk's elements from the meeting to the segment's end.
    `paths`: the walks the join can meet, each its offsets in order."""
    sets = [set(path) for path in paths]
    p = entry
    while p is not None and p < end:
        for path, seen in zip(paths, sets):
            if p in seen:
                index = path.index(p)
                if index < RECORD_ELEMENTS and p - start < INDEX_BYTES:
                    return 0
                return len(path) - index
        p = next_element(stream, p, len(stream))
    return 0


def walk_page(stream, acc):
    n = len(stream)
    entry = 0  # the real chain's entry into the segment (after the preamble)
    while stream[entry] & 0x80:
        entry += 1
    entry += 1
    for start in range(0, n, SEGMENT):
        end = min(n, start + SEGMENT)
        visited, p, steps0, path0 = set(), start, 0, []
        while p is not None and p < end:
            visited.add(p)
            path0.append(p)
            p = next_element(stream, p, n)
            steps0 += 1
        acc["walk0"].append(steps0)
        acc["before"].append(steps0)
        kept_before, kept_now, stopped_at = [visited], [visited], {}
        paths_before, paths_now = [path0], [path0]
        for j in (1, 2):
            p, steps, stopped = start + j, 0, False
            while p is not None and p < end:
                if p in visited:
                    stopped = True
                    break
                p = next_element(stream, p, n)
                steps += 1
            q, full, mine, path = start + j, 0, set(), []
            while q is not None and q < end:
                mine.add(q)
                path.append(q)
                q = next_element(stream, q, n)
                full += 1
            kept_before.append(mine)
            paths_before.append(path)
            if not stopped:
                kept_now.append(mine)
                paths_now.append(path)
            else:
                stopped_at[start + j] = p
            acc["before"].append(full)
            acc["later"].append(steps)
            acc["stopped"] += stopped
            if not stopped and steps > LATER_STEPS:
                acc["rest"].append(full)
        # The join meets the walks that keep their bitmaps: all three
        # before, walk 0 and the unstopped ones now.
        if entry is not None:
            acc["own_before"].append(own_steps(stream, entry, end, kept_before))
            own = own_steps(stream, entry, end, kept_now)
            acc["own_now"].append(own)
            # The join jumps over a stopped walk that began at the entry.
            acc["join_now"].append(0 if entry in stopped_at else own)
            acc["verify_before"].append(verify_rest(stream, entry, start, end, paths_before))
            acc["verify_now"].append(verify_rest(stream, stopped_at.get(entry, entry), start, end, paths_now))
            while entry is not None and entry < end:
                entry = next_element(stream, entry, n)


def warp_steps(lanes):
    return sum(max(lanes[i : i + WARP]) for i in range(0, len(lanes), WARP))


def snappy_pages(path, groups):
    """(column, Snappy stream, its output bytes) of every non-empty Snappy
    page of the first `groups` row groups of the file at `path` (a
    DATA_PAGE_V2's stream without the levels before it)."""
    data = open(path, "rb").read()
    meta = pq.ParquetFile(path).metadata
    for r in range(min(groups, meta.num_row_groups)):
        rg = meta.row_group(r)
        for c in range(rg.num_columns):
            cc = rg.column(c)
            if cc.compression != "SNAPPY":
                continue
            p = cc.dictionary_page_offset or cc.data_page_offset
            end = p + cc.total_compressed_size
            while p < end:
                header, q = thrift_struct(data, p)
                kind, size, stored = header[1], header[2], header[3]
                body = data[q : q + stored]
                if kind == 3:  # DATA_PAGE_V2: levels before the stream
                    v2 = header[8]
                    levels = v2.get(5, 0) + v2.get(6, 0)
                    body, size = body[levels:], size - levels
                if body:
                    yield cc.path_in_schema, body, size
                p = q + stored


def main():
    path = sys.argv[1]
    groups = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    acc = {"walk0": [], "later": [], "before": [], "stopped": 0, "rest": [], "own_before": [], "own_now": [], "join_now": [], "verify_before": [], "verify_now": []}
    for _, body, _ in snappy_pages(path, groups):
        walk_page(body, acc)
    segs, later = len(acc["walk0"]), len(acc["later"])
    before = warp_steps(acc["before"])
    walk0, rest = warp_steps(acc["walk0"]), warp_steps(acc["later"])
    print(f"{path}: {segs} segments; {acc['stopped']} of {later} later walks stop on walk 0's path "
          f"({100 * acc['stopped'] / max(later, 1):.1f} %), {sum(acc['later']) / max(later, 1):.1f} steps on average")
    print(f"warp-steps: three full walks {before}; walk 0 {walk0} + later walks {rest} = {walk0 + rest} "
          f"({(walk0 + rest) / max(before, 1):.3f} of before)")
    capped = warp_steps([min(x, LATER_STEPS) for x in acc["later"]])
    again = warp_steps(acc["rest"]) if acc["rest"] else 0
    total = walk0 + capped + again
    print(f"with the last launch: walk 0 {walk0} + later walks {capped} + {len(acc['rest'])} walked again {again} "
          f"= {total} ({total / max(before, 1):.3f} of before)")
    ob, on, jn = acc["own_before"], acc["own_now"], acc["join_now"]
    print(f"the real chain's own elements before it meets a walk that kept its bitmap (the verify kernel "
          f"walks them, a thread a segment): {sum(ob)} before, {sum(on)} now ({sum(on) / max(len(on), 1):.1f} a "
          f"segment), warp-steps {warp_steps(ob)} before, {warp_steps(on)} now; of them the join (a thread a "
          f"page) walks {sum(jn)}, jumping over a stopped walk that began at the entry")
    vb, vn = acc["verify_before"], acc["verify_now"]
    print(f"the verify kernel's walk past the meeting where the record cannot prove the rest: "
          f"{sum(1 for x in vb if x)} segments before, {sum(1 for x in vn if x)} now; warp-steps "
          f"{warp_steps(vb)} before, {warp_steps(vn)} now")


if __name__ == "__main__":
    main()
