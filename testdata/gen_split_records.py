#!/usr/bin/env python3
"""Writes testdata/nested_v1_split_records.parquet: nested columns whose v1
data pages split records, i.e. pages that begin with a repetition level > 0
(one top-level row continued from the page before).

parquet-cpp (pyarrow's writer) up to pyarrow 22 only keeps pages on record
boundaries when it writes a page index or v2 data pages; with v1 pages and
no page index it cuts a page after any mini-batch of `write_batch_size`
level entries once the page holds `data_page_size` bytes, so a long list
straddles many pages. pyarrow 23 and later (tried: 23.0.0, 24.0.0,
26.0.1) cut pages on record boundaries only, with these same settings: a
list of 2,000 elements stays in one page however small `data_page_size`
is. Hence the pinned version.

The values are formulas of the row index `i` (and the element indices), so
that tests can check the file against what was written rather than against
a reader; tests/special_files.rs repeats the formulas of the three list
columns (and totals this script's formulas give). Keep the two in step.

Regenerate (pyarrow 22.0.0 wrote the committed file; 20.0.0 and 21.0.0
split the same pages):

    python3 -m venv /tmp/pa22 && /tmp/pa22/bin/pip install pyarrow==22.0.0
    /tmp/pa22/bin/python testdata/gen_split_records.py

tests/special_files.rs checks that the pages do start mid-record.
"""

import os

import pyarrow as pa
import pyarrow.parquet as pq

ROWS = 600
ROW_GROUP_ROWS = 300


def long_list(i):
    """list<int64>: null, empty, short, or (every 97th row) 1000-2000 long."""
    if i % 11 == 4:
        return None
    if i % 13 == 6:
        return []
    n = 1000 + (i % 5) * 250 if i % 97 == 10 else (i * 7) % 23
    return [None if (i + j) % 16 == 5 else i * 10 + j % 16 for j in range(n)]


def list_of_structs(i):
    """list<struct<a: int32, b: string>>: every 89th row 800-1200 long."""
    if i % 9 == 2:
        return None
    if i % 14 == 0:
        return []
    n = 800 + (i % 3) * 200 if i % 89 == 20 else (i * 5) % 11
    out = []
    for j in range(n):
        if (i + j) % 23 == 7:
            out.append(None)
            continue
        a = None if (i + j) % 7 == 3 else i + 2 * j
        b = None if (i * j) % 10 == 1 else f"s{i % 5}-{j % 40}"
        out.append({"a": a, "b": b})
    return out


def list_of_lists(i):
    """list<list<int32>>: every 83rd row 300-450 inner lists of 3-11."""
    if i % 10 == 3:
        return None
    if i % 15 == 8:
        return []
    long = i % 83 == 30
    n = 300 + (i % 4) * 50 if long else (i * 3) % 7
    out = []
    for k in range(n):
        if (i + k) % 13 == 4:
            out.append(None)
        elif (i + k) % 11 == 2:
            out.append([])
        else:
            m = (i + k) % 9 + (3 if long else 0)
            out.append(
                [
                    None if (i + k + x) % 17 == 0 else (3 * i + 5 * k + x) % 1000
                    for x in range(m)
                ]
            )
    return out


def table():
    schema = pa.schema(
        [
            ("id", pa.int64()),
            ("long_list", pa.list_(pa.int64())),
            (
                "list_of_structs",
                pa.list_(pa.struct([("a", pa.int32()), ("b", pa.string())])),
            ),
            ("list_of_lists", pa.list_(pa.list_(pa.int32()))),
        ]
    )
    rows = range(ROWS)
    return pa.table(
        {
            "id": list(rows),
            "long_list": [long_list(i) for i in rows],
            "list_of_structs": [list_of_structs(i) for i in rows],
            "list_of_lists": [list_of_lists(i) for i in rows],
        },
        schema=schema,
    )


def main():
    major = int(pa.__version__.split(".")[0])
    if major >= 23:
        raise SystemExit(
            f"pyarrow {pa.__version__} keeps every page on a record boundary: "
            "install pyarrow==22.0.0 (see the module's docstring)"
        )
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "nested_v1_split_records.parquet")
    t = table()
    pq.write_table(
        t,
        path,
        row_group_size=ROW_GROUP_ROWS,
        data_page_version="1.0",
        write_page_index=False,
        data_page_size=1024,
        write_batch_size=64,
        # Plain everywhere but the strings, which are dictionary encoded.
        use_dictionary=["list_of_structs.list.element.b"],
        compression="snappy",
        write_statistics=False,
    )
    back = pq.read_table(path)
    assert back.equals(t), "pyarrow reads back what it wrote"
    print(f"{path}: {os.path.getsize(path)} bytes, {t.num_rows} rows")


if __name__ == "__main__":
    main()
