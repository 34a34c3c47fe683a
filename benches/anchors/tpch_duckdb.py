#!/usr/bin/env python3
"""The 22 TPC-H queries on DuckDB over a `gdscan tpch gen` folder: the
reference answers for `gdscan sql` (any reader, any --decode) and DuckDB's
own times beside DataFusion's.

    python3 tpch_duckdb.py --data DIR --gdscan GDSCAN [--decode gpu] [--queries 1,6]
        every query through `gdscan sql --tpch DIR --format csv` compared with
        DuckDB's answer: same rows in order (the queries order totally),
        numbers equal to 1e-9 relative (DuckDB and DataFusion sum doubles in
        different orders) or to the last digit the shorter of the two shows
        (a decimal average against a double), everything else as text;
        exits 1 on a difference.
    python3 tpch_duckdb.py --data DIR --gdscan GDSCAN --decode gpu --reference datafusion
        the same check against DataFusion's own reader (arrow-rs on the host)
        where DuckDB is not installed.
    python3 tpch_duckdb.py --data DIR --time 5 [--cold-cmd CMD] [--json OUT]
        DuckDB's time per query, median of N warm runs (views over the
        folder's Parquet files, DuckDB's default threads), as JSON.

The queries are the files gdscan runs (cli/src/tpch/queries/qNN.sql)."""

import argparse
import csv
import io
import json
import math
import os
import statistics
import subprocess
import sys
import time

QUERIES = os.path.join(os.path.dirname(__file__), "..", "..", "cli", "src", "tpch", "queries")
TABLES = ["customer", "lineitem", "nation", "orders", "part", "partsupp", "region", "supplier"]


def connect(data):
    import duckdb

    con = duckdb.connect()
    for t in TABLES:
        con.execute(f"CREATE VIEW {t} AS SELECT * FROM read_parquet('{os.path.join(data, t)}/*.parquet')")
    return con


def query(n):
    with open(os.path.join(QUERIES, f"q{n:02}.sql")) as f:
        return f.read()


def text(v):
    """DuckDB's value as `gdscan sql --format csv` writes it (dates ISO,
    numbers compared as numbers later)."""
    if v is None:
        return ""
    return str(v)


def same_cell(a, b):
    if a == b:
        return True
    try:
        x, y = float(a), float(b)
    except ValueError:
        return a.strip() == b.strip()
    if math.isnan(x) and math.isnan(y):
        return True
    if math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9):
        return True
    # A decimal average (DataFusion: DECIMAL(19, 6), cut at its scale)
    # against DuckDB's double: equal to the last digit the shorter shows.
    places = [len(v.split(".")[1]) if "." in v else None for v in (a, b)]
    if None in places:
        return False
    return abs(x - y) <= 10.0 ** -min(places)


def gdscan_csv(args, n, extra):
    cmd = [args.gdscan, "sql", "--tpch", args.data, "--format", "csv"] + extra
    return subprocess.run(cmd + ["--", query(n)], capture_output=True, text=True)


def reference(args, con, n):
    """DuckDB's rows of query n, or with --reference datafusion those of
    DataFusion's own Parquet reader (arrow-rs decoding on the host)."""
    if con is not None:
        return [[text(v) for v in row] for row in con.execute(query(n)).fetchall()]
    run = gdscan_csv(args, n, ["--reader", "datafusion"])
    if run.returncode != 0:
        raise RuntimeError(f"q{n:02}: DataFusion's reader failed: {run.stderr.strip()[-300:]}")
    return list(csv.reader(io.StringIO(run.stdout)))[1:]


def check(args, con, queries):
    ok = True
    name = "DuckDB" if con is not None else "DataFusion's reader"
    for n in queries:
        ref = reference(args, con, n)
        started = time.perf_counter()
        run = gdscan_csv(args, n, ["--decode", args.decode] if args.decode else [])
        seconds = time.perf_counter() - started
        if run.returncode != 0:
            print(f"q{n:02} FAIL: gdscan sql failed: {run.stderr.strip()[-500:]}")
            ok = False
            continue
        got = list(csv.reader(io.StringIO(run.stdout)))[1:]
        fallback = [l for l in run.stderr.splitlines() if "cpu (" in l or "fall" in l.lower()]
        diff = None
        if len(got) != len(ref):
            diff = f"{len(got)} rows, {name} {len(ref)}"
        else:
            for i, (g, r) in enumerate(zip(got, ref)):
                if len(g) != len(r) or not all(same_cell(x, y) for x, y in zip(g, r)):
                    diff = f"row {i}: gdscan {g} {name} {r}"
                    break
        if diff:
            print(f"q{n:02} FAIL: {diff}")
            ok = False
        else:
            note = f" ({len(fallback)} fallback lines on stderr)" if fallback else ""
            print(f"q{n:02} ok: {len(ref)} rows equal to {name}'s, {seconds:.2f} s a process{note}")
    print("ALL EQUAL" if ok else "DIFFERENCES")
    return ok


def timing(args, con, queries):
    out = {"engine": "duckdb", "version": __import__("duckdb").__version__, "queries": {}}
    for n in queries:
        sql = query(n)
        con.execute(sql).fetchall()  # warm-up
        times = []
        for _ in range(args.time):
            started = time.perf_counter()
            con.execute(sql).fetchall()
            times.append(time.perf_counter() - started)
        out["queries"][f"q{n}"] = {"median_seconds": statistics.median(times), "seconds": times}
    out["sum_of_medians"] = sum(q["median_seconds"] for q in out["queries"].values())
    text_out = json.dumps(out, indent=2)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text_out)
    print(text_out)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", required=True)
    p.add_argument("--gdscan")
    p.add_argument("--decode")
    p.add_argument("--queries", default=",".join(str(i) for i in range(1, 23)))
    p.add_argument("--time", type=int, default=0, help="time each query N times instead of checking")
    p.add_argument("--json")
    p.add_argument("--reference", choices=["duckdb", "datafusion"], default="duckdb",
                   help="the answers checked against: DuckDB's, or DataFusion's own reader's through gdscan sql")
    args = p.parse_args()
    queries = [int(q) for q in args.queries.split(",")]
    con = connect(args.data) if args.reference == "duckdb" or args.time else None
    if args.time:
        timing(args, con, queries)
        return 0
    if not args.gdscan:
        p.error("--gdscan is needed to check answers")
    return 0 if check(args, con, queries) else 1


if __name__ == "__main__":
    sys.exit(main())
