#!/usr/bin/env python3
"""cuDF's Parquet reader on the cases of `gdscan bench decode`, in the same
run: every lineitem file of a `gdscan tpch gen` folder read by
`pylibcudf.io.parquet.read_parquet` (one call over the list of files, as
cuDF reads a list) into GPU columns, all columns and Q1's and Q6's columns
(projection only, as the bench's cases), one warm-up, then the median and
best of N runs, each ended by a device synchronize.

    python3 benches/anchors/cudf_decode.py --data DIR [--iterations 5] [--json OUT]

KVIKIO_NTHREADS (cuDF reads through KvikIO) is taken from the environment;
the issue measured cuDF at its best with 16. Prints one JSON object.
"""

import argparse
import glob
import json
import os
import statistics
import time

CASES = {
    "all": None,
    "q1": ["l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice", "l_discount", "l_tax",
           "l_shipdate"],
    "q6": ["l_shipdate", "l_discount", "l_quantity", "l_extendedprice"],
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--cases", default="all,q1,q6")
    parser.add_argument("--json")
    args = parser.parse_args()

    import cupy as cp
    import pylibcudf as plc

    files = sorted(glob.glob(os.path.join(args.data, "lineitem", "*.parquet")))
    assert files, f"no lineitem files under {args.data}"
    out = {"reader": "pylibcudf.io.parquet.read_parquet", "version": __import__("importlib.metadata").metadata.version("pylibcudf-cu13"),
           "kvikio_nthreads": os.environ.get("KVIKIO_NTHREADS", "<default>"),
           "files": len(files), "file_bytes": sum(os.path.getsize(f) for f in files), "cases": {}}
    for name in args.cases.split(","):
        columns = CASES[name]

        def read():
            builder = plc.io.parquet.ParquetReaderOptions.builder(plc.io.types.SourceInfo(files))
            if columns is not None:
                builder = builder.columns(columns)
            table = plc.io.parquet.read_parquet(builder.build())
            cp.cuda.runtime.deviceSynchronize()
            return table.tbl.num_rows()

        rows = read()  # warm-up
        runs = []
        for _ in range(args.iterations):
            start = time.perf_counter()
            assert read() == rows
            runs.append(time.perf_counter() - start)
        out["cases"][name] = {"rows": rows, "median_seconds": statistics.median(runs),
                              "best_seconds": min(runs)}
    text = json.dumps(out, indent=2)
    print(text)
    if args.json:
        open(args.json, "w").write(text)


if __name__ == "__main__":
    main()
