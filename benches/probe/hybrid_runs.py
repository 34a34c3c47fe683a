"""How many run headers a tile of dictionary indices has, per column, on the CPU.

Usage: python3 benches/probe/hybrid_runs.py FILE.parquet COLUMN [ROW_GROUPS]

For the dictionary-encoded data pages (v1, Snappy or uncompressed) of COLUMN
in the first ROW_GROUPS row groups (default 2), counts the RLE/bit-packed
hybrid stream's runs: bit-packed (P) and RLE (R), and the runs per 1024
values, a tile of `gds_decode_pages` (src/decode/kernels/cuda/decode.cu),
whose value-run table a warp fills while the block waits (`gds_runs_fill`).
Measured on `gdscan tpch gen --sf 0.2 --tables lineitem`'s first file:
l_returnflag 30.5 runs a tile (17 887 P, 17 909 R), l_linestatus 56.3
(26 005 P, 39 989 R); l_shipmode, l_tax, l_quantity, l_shipdate,
l_discount and l_orderkey's dictionary pages 2.1 (bit-packed runs of 504
values). Needs pyarrow (for the footer); page headers are read here (Thrift
compact protocol, `snappy_walks.py`'s reader) and Snappy pages decompressed here.
"""

import sys

import pyarrow.parquet as pq

from snappy_walks import thrift_struct, varint


def unsnappy(src):
    n, p = varint(src, 0)
    out = bytearray()
    while p < len(src):
        tag = src[p]
        p += 1
        kind = tag & 3
        if kind == 0:
            length = tag >> 2
            if length >= 60:
                extra = length - 59
                length = int.from_bytes(src[p:p + extra], "little")
                p += extra
            length += 1
            out += src[p:p + length]
            p += length
            continue
        if kind == 1:
            length, offset = 4 + ((tag >> 2) & 7), ((tag >> 5) << 8) | src[p]
            p += 1
        else:
            width = 2 if kind == 2 else 4
            length, offset = (tag >> 2) + 1, int.from_bytes(src[p:p + width], "little")
            p += width
        for _ in range(length):
            out.append(out[-offset])
    assert len(out) == n, "snappy length"
    return bytes(out)


def runs(stream, values):
    """The (kind, items) of the hybrid runs of a dictionary page's values."""
    bw, p, items, found = stream[0], 1, 0, []
    while items < values and p < len(stream):
        h, p = varint(stream, p)
        if h & 1:
            items += (h >> 1) * 8
            p += (h >> 1) * bw
            found.append("P")
        else:
            items += h >> 1
            p += (bw + 7) // 8
            found.append("R")
    return found


def main():
    path, column = sys.argv[1], sys.argv[2]
    row_groups = int(sys.argv[3]) if len(sys.argv) > 3 else 2
    meta = pq.ParquetFile(path).metadata
    data = open(path, "rb").read()
    names = [meta.schema.column(i).name for i in range(meta.num_columns)]
    ci = names.index(column)
    counts, pages, values, other = {"P": 0, "R": 0}, 0, 0, 0
    for rg in range(min(row_groups, meta.num_row_groups)):
        chunk = meta.row_group(rg).column(ci)
        p = chunk.dictionary_page_offset or chunk.data_page_offset
        end = p + chunk.total_compressed_size
        while p < end:
            header, body_at = thrift_struct(data, p)
            body = data[body_at:body_at + header[3]]
            p = body_at + header[3]
            page = header.get(5)  # DataPageHeader (v1)
            if not page:
                continue
            raw = unsnappy(body) if header[2] != header[3] else body
            if page[2] not in (2, 8):  # PLAIN_DICTIONARY, RLE_DICTIONARY
                other += 1
                continue
            pages += 1
            values += page[1]
            for kind in runs(raw, page[1]):
                counts[kind] += 1
    per_tile = (counts["P"] + counts["R"]) * 1024 / max(values, 1)
    print(f"{column}: {pages} dictionary pages ({other} others), {values} values, "
          f"{counts['P']} bit-packed and {counts['R']} RLE runs, {per_tile:.1f} runs per 1024 values")


if __name__ == "__main__":
    main()
