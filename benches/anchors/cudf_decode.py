#!/usr/bin/env python3
"""cuDF's Parquet reader on the cases of `gdscan bench decode`, in the same
run: every file of the case's table folder in a `gdscan tpch gen` folder
read by `pylibcudf.io.parquet.read_parquet` (one call over the list of
files, as cuDF reads a list) into GPU columns, one warm-up, then the median
and best of N runs, each ended by a device synchronize. The cases: `all`
(every lineitem column), Q1's and Q6's lineitem columns (projection only,
as the bench's cases) and `nested`: every column of `orders_nested` (the
orders columns and `o_lineitems`, each order's lineitems as
list<struct<...>>; `gdscan tpch gen --tables orders_nested`).

    python3 benches/anchors/cudf_decode.py --data DIR [--cases all,q1,q6] [--iterations 5] [--json OUT]
    python3 benches/anchors/cudf_decode.py --data DIR --cases nested

KVIKIO_NTHREADS (cuDF reads through KvikIO) is taken from the environment;
the issue measured cuDF at its best with 16. Prints one JSON object.
"""

import argparse
import glob
import json
import os
import statistics
import time

# Per case: the table folder it reads and its columns (None: all of them).
CASES = {
    "all": ("lineitem", None),
    "q1": ("lineitem", ["l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice",
                        "l_discount", "l_tax", "l_shipdate"]),
    "q6": ("lineitem", ["l_shipdate", "l_discount", "l_quantity", "l_extendedprice"]),
    "nested": ("orders_nested", None),
}


def table_files(data, table):
    """The Parquet files of `table`'s folder under `data`, sorted by name."""
    files = sorted(glob.glob(os.path.join(data, table, "*.parquet")))
    assert files, f"no {table} files under {data}"
    return files


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--cases", default="all,q1,q6")
    parser.add_argument("--json")
    args = parser.parse_args()

    import cupy as cp
    import pylibcudf as plc

    names = args.cases.split(",")
    unknown = [n for n in names if n not in CASES]
    assert not unknown, f"unknown cases {unknown}: expected {', '.join(CASES)}"
    out = {"reader": "pylibcudf.io.parquet.read_parquet", "version": __import__("importlib.metadata").metadata.version("pylibcudf-cu13"),
           "kvikio_nthreads": os.environ.get("KVIKIO_NTHREADS", "<default>"), "cases": {}}
    if any(CASES[n][0] == "lineitem" for n in names):
        # The lineitem files, at the top level as before.
        lineitem = table_files(args.data, "lineitem")
        out["files"] = len(lineitem)
        out["file_bytes"] = sum(os.path.getsize(f) for f in lineitem)
    for name in names:
        table, columns = CASES[name]
        files = table_files(args.data, table)

        def read():
            builder = plc.io.parquet.ParquetReaderOptions.builder(plc.io.types.SourceInfo(files))
            if columns is not None:
                builder = builder.columns(columns)
            result = plc.io.parquet.read_parquet(builder.build())
            cp.cuda.runtime.deviceSynchronize()
            return result.tbl.num_rows()

        rows = read()  # warm-up
        runs = []
        for _ in range(args.iterations):
            start = time.perf_counter()
            assert read() == rows
            runs.append(time.perf_counter() - start)
        out["cases"][name] = {"table": table, "files": len(files),
                              "file_bytes": sum(os.path.getsize(f) for f in files),
                              "rows": rows, "median_seconds": statistics.median(runs),
                              "best_seconds": min(runs)}
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        open(args.json, "w").write(text)


if __name__ == "__main__":
    main()
