#!/usr/bin/env python3
"""TPC-H scan anchors beside gdscan, in one run over the same files.

For each query (the column sets and filters of `gdscan bench tpch`, repeated
here because the anchors speak Python):

  1. KvikIO: the byte ranges gdscan plans (`gdscan plan --json`, coalesced
     requests) read into CuPy device memory with KvikIO's thread pool;
  2. pyarrow: `pyarrow.parquet.read_table` of the same columns and filter,
     then every column's buffers copied to the GPU with CuPy;
  3. gdscan: `gdscan bench tpch --queries Q --json`, its median.

Prints one table of median seconds and the ratios to gdscan, and one JSON
object on stdout with --json. Run on the GPU machine with KvikIO's wheels
installed (see benches/anchors/kvikio_read.py for the install line):

  python3 benches/anchors/tpch_anchors.py --data DIR --gdscan .carry/gdscan \\
      --queries q1,q6 --iterations 3 --threads 16

Without --no-gpu the script needs cupy and kvikio; with --no-gpu it runs
only the pyarrow read (no upload) and gdscan --host, which is how it is
checked on machines without a GPU.
"""

import argparse
import datetime as dt
import glob
import json
import os
import statistics
import subprocess
import sys
import time

LINEITEM_QUERIES = {
    # lineitem, every column, no filter (bench tpch's scan_lineitem).
    "scan": (None, None, []),
    "q1": (
        ["l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_shipdate"],
        "l_shipdate <= DATE '1998-09-02'",
        [("l_shipdate", "<=", dt.date(1998, 9, 2))],
    ),
    "q6": (
        ["l_shipdate", "l_discount", "l_quantity", "l_extendedprice"],
        "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' "
        "AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
        None,  # built in pyarrow_filter: decimals need pyarrow's own scalar types
    ),
    "q14": (
        ["l_partkey", "l_extendedprice", "l_discount", "l_shipdate"],
        "l_shipdate >= DATE '1995-09-01' AND l_shipdate < DATE '1995-10-01'",
        [("l_shipdate", ">=", dt.date(1995, 9, 1)), ("l_shipdate", "<", dt.date(1995, 10, 1))],
    ),
    "q19": (
        ["l_partkey", "l_quantity", "l_extendedprice", "l_discount", "l_shipinstruct", "l_shipmode"],
        "l_shipinstruct = 'DELIVER IN PERSON' AND l_quantity >= 1 AND l_quantity <= 30",
        None,
    ),
}


def pyarrow_filter(query):
    """The pyarrow filter expression for a lineitem query."""
    import pyarrow.compute as pc
    import decimal

    d = lambda s: decimal.Decimal(s)  # noqa: E731
    if query == "q6":
        return (
            (pc.field("l_shipdate") >= dt.date(1994, 1, 1))
            & (pc.field("l_shipdate") < dt.date(1995, 1, 1))
            & (pc.field("l_discount") >= d("0.05"))
            & (pc.field("l_discount") <= d("0.07"))
            & (pc.field("l_quantity") < d("24"))
        )
    if query == "q19":
        return (
            (pc.field("l_shipinstruct") == "DELIVER IN PERSON")
            & (pc.field("l_quantity") >= d("1"))
            & (pc.field("l_quantity") <= d("30"))
        )
    expr = None  # stays None (no filter) for "scan"
    for col, op, value in LINEITEM_QUERIES[query][2]:
        term = {"<=": pc.field(col) <= value, "<": pc.field(col) < value, ">=": pc.field(col) >= value}[op]
        expr = term if expr is None else expr & term
    return expr


def files_of(data, table):
    files = sorted(glob.glob(os.path.join(data, table, "*.parquet")))
    if not files:
        sys.exit(f"tpch_anchors: no parquet files in {os.path.join(data, table)}")
    return files


def median_of(fn, iterations):
    fn()  # warm-up
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def planned_requests(gdscan, path, columns, filter_text):
    cmd = [gdscan, "plan", path, "--json"]
    if columns:
        cmd += ["--columns", ",".join(columns)]
    if filter_text:
        cmd += ["--filter", filter_text]
    out = subprocess.run(
        cmd,
        check=True,
        capture_output=True,
        text=True,
    )
    plan = json.loads(out.stdout)
    return [(r["offset"], r["len"]) for r in plan["requests"]]


def kvikio_seconds(files, requests_per_file, iterations, threads):
    # The import dance (libcufile preload for wheels installed with --target)
    # lives beside this file.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from kvikio_read import import_gpu_modules

    cupy, kvikio, _ = import_gpu_modules()

    kvikio.defaults.set({"num_threads": threads, "compat_mode": kvikio.CompatMode.ON})
    total = sum(n for reqs in requests_per_file for _, n in reqs)
    buf = cupy.empty(max(total, 1), dtype=cupy.uint8)

    def run():
        at = 0
        handles, futures = [], []
        for path, reqs in zip(files, requests_per_file):
            f = kvikio.CuFile(path, "r")
            handles.append(f)
            for offset, n in reqs:
                futures.append(f.pread(buf[at : at + n], n, offset))
                at += n
        for fut in futures:
            fut.get()
        for f in handles:
            f.close()
        cupy.cuda.runtime.deviceSynchronize()

    return median_of(run, iterations), total


def pyarrow_seconds(files, columns, query, iterations, upload):
    import pyarrow.parquet as pq

    flt = pyarrow_filter(query)

    def run():
        import pyarrow as pa

        table = pq.read_table(files, columns=columns)
        # tpchgen writes strings as Utf8View, which pyarrow's filter kernels
        # do not take yet: cast them to plain strings first, as a user would.
        schema = pa.schema(
            [f.with_type(pa.string()) if f.type == pa.string_view() else f for f in table.schema]
        )
        table = table.cast(schema)
        if flt is not None:
            table = table.filter(flt)
        if upload:
            import cupy
            import numpy

            for column in table.columns:
                for chunk in column.chunks:
                    for b in chunk.buffers():
                        if b is not None and b.size:
                            cupy.asarray(numpy.frombuffer(b, dtype=numpy.uint8))  # copy to the device
            cupy.cuda.runtime.deviceSynchronize()
        return table.num_rows

    return median_of(run, iterations)


def gdscan_seconds(gdscan, data, query, iterations, host):
    out_json = f"/tmp/gdscan-anchor-{os.getpid()}-{query}.json"
    cmd = [gdscan, "bench", "tpch", "--data", data, "--queries", query, "--iterations", str(iterations), "--json", out_json]
    # "scan" covers every table; the anchors compare lineitem.
    name = "scan_lineitem" if query == "scan" else query
    if host:
        cmd.append("--host")
    subprocess.run(cmd, check=True, capture_output=True)
    report = json.load(open(out_json))
    os.remove(out_json)
    q = next(q for q in report["queries"] if q["query"] == name)
    return statistics.median(i["elapsed"] for i in q["iterations"]), q["bytes_read"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", required=True, help="a `gdscan tpch gen` folder")
    ap.add_argument("--gdscan", default="gdscan", help="the gdscan binary")
    ap.add_argument("--queries", default="scan,q1,q6,q14,q19")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--threads", type=int, default=16, help="KvikIO threads")
    ap.add_argument("--no-gpu", action="store_true", help="pyarrow without upload, gdscan --host, no KvikIO")
    ap.add_argument("--json", action="store_true", help="print the results as JSON")
    args = ap.parse_args()

    files = files_of(args.data, "lineitem")
    rows = []
    for query in args.queries.split(","):
        if query not in LINEITEM_QUERIES:
            sys.exit(f"tpch_anchors: unknown query {query!r}")
        columns, filter_text, _ = LINEITEM_QUERIES[query]
        g_s, g_bytes = gdscan_seconds(args.gdscan, args.data, query, args.iterations, args.no_gpu)
        row = {"query": query, "gdscan_s": g_s, "gdscan_bytes": g_bytes}
        row["pyarrow_s"] = pyarrow_seconds(files, columns, query, args.iterations, not args.no_gpu)
        if not args.no_gpu:
            reqs = [planned_requests(args.gdscan, f, columns, filter_text) for f in files]
            row["kvikio_s"], row["kvikio_bytes"] = kvikio_seconds(files, reqs, args.iterations, args.threads)
        rows.append(row)

    if args.json:
        print(json.dumps({"data": args.data, "gpu": not args.no_gpu, "results": rows}, indent=2))
        return
    print(f"{'query':<6} {'gdscan s':>10} {'kvikio s':>10} {'x kvikio':>9} {'pyarrow s':>10} {'x pyarrow':>10}")
    for r in rows:
        kv = r.get("kvikio_s")
        print(
            f"{r['query']:<6} {r['gdscan_s']:>10.4f} {kv if kv is not None else float('nan'):>10.4f} "
            f"{(kv / r['gdscan_s']) if kv else float('nan'):>9.2f} {r['pyarrow_s']:>10.4f} "
            f"{r['pyarrow_s'] / r['gdscan_s']:>10.2f}"
        )


if __name__ == "__main__":
    main()
