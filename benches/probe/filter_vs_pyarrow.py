"""The exact GPU filter against pyarrow's (issue 58's "equal rows"): files
written by pyarrow, DuckDB and Polars (nulls in filter columns, NaN and
-0.0 in floats, decimals, dates, timestamps, strings, binary, and nested
payload columns), each scanned with `gdscan scan --decode --filter F
--output x.arrow` and compared, rows in order and values (NaN equal to
NaN), with `pyarrow.parquet.read_table(filters=<the same predicate as a
pyarrow expression>)`; TPC-H lineitem's query filters too, when a
`gdscan tpch gen` folder is given.

    python3 filter_vs_pyarrow.py make DIR            # write the files (pyarrow; DuckDB, Polars where installed)
    python3 filter_vs_pyarrow.py check DIR GDSCAN [LINEITEM.parquet]
    FILTER_MODE=late python3 ...                     # the same through --filter-mode late

Exits 1 on any difference, printing it."""
import datetime
import decimal
import os
import subprocess
import sys
import tempfile

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

F = pc.field
D = decimal.Decimal

CASES = [
    ("i > 100 AND i <= 30000", (F("i") > 100) & (F("i") <= 30000)),
    ("f < 0.5", F("f") < 0.5),
    ("f != 0.25", F("f") != 0.25),
    ("d BETWEEN 10.00 AND 500.50", (F("d") >= pa.scalar(D("10.00"), pa.decimal128(12, 2))) & (F("d") <= pa.scalar(D("500.50"), pa.decimal128(12, 2)))),
    ("s LIKE 'ab%'", pc.starts_with(F("s"), "ab")),
    ("s IN ('x', 'yy', '')", F("s").isin(["x", "yy", ""])),
    ("dt >= DATE '2020-06-01' AND flag = TRUE", (F("dt") >= pa.scalar(datetime.date(2020, 6, 1))) & (F("flag") == True)),
    ("ts < TIMESTAMP '2021-01-01 00:00:00'", F("ts") < pa.scalar(datetime.datetime(2021, 1, 1), pa.timestamp("us"))),
    ("NOT (i < 10 OR s IS NULL)", ~((F("i") < 10) | F("s").is_null())),
    ("b = X'0102'", F("b") == pa.scalar(b"\x01\x02")),
    ("f IS NULL OR i IS NULL", F("f").is_null() | F("i").is_null()),
    ("i < 0", F("i") < 0),
]

LINEITEM = [
    ("q1", "l_returnflag,l_linestatus,l_quantity,l_extendedprice,l_discount,l_tax", "l_shipdate <= DATE '1998-09-02'",
     F("l_shipdate") <= pa.scalar(datetime.date(1998, 9, 2))),
    ("q6", "l_extendedprice,l_discount",
     "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
     None),
    ("q12", "l_orderkey,l_shipmode",
     "l_shipmode IN ('MAIL', 'SHIP') AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate AND l_receiptdate >= DATE '1994-01-01' AND l_receiptdate < DATE '1995-01-01'",
     F("l_shipmode").isin(["MAIL", "SHIP"]) & (F("l_commitdate") < F("l_receiptdate")) & (F("l_shipdate") < F("l_commitdate"))
     & (F("l_receiptdate") >= pa.scalar(datetime.date(1994, 1, 1))) & (F("l_receiptdate") < pa.scalar(datetime.date(1995, 1, 1)))),
    ("q14", "l_partkey,l_extendedprice,l_discount", "l_shipdate >= DATE '1995-09-01' AND l_shipdate < DATE '1995-10-01'",
     (F("l_shipdate") >= pa.scalar(datetime.date(1995, 9, 1))) & (F("l_shipdate") < pa.scalar(datetime.date(1995, 10, 1)))),
    ("q19", "l_partkey,l_extendedprice,l_discount",
     " OR ".join(f"(l_quantity BETWEEN {lo} AND {hi} AND l_shipmode IN ('AIR', 'AIR REG') AND l_shipinstruct = 'DELIVER IN PERSON')" for lo, hi in [(1, 11), (10, 20), (20, 30)]),
     None),
]


def table(n=50_000):
    import random
    r = random.Random(7)
    def maybe(v, p=0.1):
        return None if r.random() < p else v
    floats = []
    for k in range(n):
        x = r.random()
        floats.append(maybe(float("nan") if x < 0.05 else (-0.0 if x < 0.07 else (0.25 if x < 0.1 else r.uniform(-1, 2)))))
    words = ["", "x", "yy", "ab", "abc", "abcdefghijklmnopq", "zz top", "a" * 40]
    return pa.table({
        "i": pa.array([maybe(r.randint(-50, 40_000)) for _ in range(n)], pa.int64()),
        "f": pa.array(floats, pa.float64()),
        "d": pa.array([maybe(D(r.randint(-10_000, 100_000)) / 100) for _ in range(n)], pa.decimal128(12, 2)),
        "s": pa.array([maybe(r.choice(words) + (str(r.randint(0, 9)) if r.random() < 0.3 else "")) for _ in range(n)], pa.string()),
        "b": pa.array([maybe(bytes(r.choice([[1, 2], [1], [2, 3, 4], []]))) for _ in range(n)], pa.binary()),
        "dt": pa.array([maybe(datetime.date(2019, 1, 1) + datetime.timedelta(days=r.randint(0, 900))) for _ in range(n)], pa.date32()),
        "ts": pa.array([maybe(datetime.datetime(2020, 1, 1) + datetime.timedelta(seconds=r.randint(0, 90_000_000))) for _ in range(n)], pa.timestamp("us")),
        "flag": pa.array([maybe(r.random() < 0.5) for _ in range(n)], pa.bool_()),
        "lst": pa.array([maybe([maybe(r.randint(0, 9), 0.2) for _ in range(r.randint(0, 4))]) for _ in range(n)], pa.list_(pa.int32())),
        "st": pa.array([maybe({"a": maybe(r.randint(0, 9)), "b": maybe(r.choice(words))}) for _ in range(n)],
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
    })


def make(out):
    os.makedirs(out, exist_ok=True)
    t = table()
    pq.write_table(t, f"{out}/pyarrow.parquet", row_group_size=10_000, data_page_size=8192, write_page_index=True)
    pq.write_table(t, f"{out}/pyarrow_plain_zstd.parquet", row_group_size=20_000, use_dictionary=False, compression="zstd")
    try:
        import duckdb
        con = duckdb.connect()
        con.register("t", t)
        con.execute(f"COPY (SELECT * FROM t) TO '{out}/duckdb.parquet' (FORMAT PARQUET, ROW_GROUP_SIZE 10000)")
    except ImportError:
        print("no duckdb: skipped")
    try:
        import polars as pl
        pl.from_arrow(t).write_parquet(f"{out}/polars.parquet", row_group_size=10_000, statistics=True)
    except ImportError:
        print("no polars: skipped")
    print(sorted(os.listdir(out)))


def plain(v):
    if isinstance(v, float) and v != v:
        return "NaN"
    if isinstance(v, list):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, tuple):
        return tuple(plain(x) for x in v)
    return v


def rows(t):
    return [plain(r) for r in t.to_pylist()]


def gdscan_rows(gdscan, path, columns, predicate):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "x.arrow")
        cmd = [gdscan, "scan", path, "--decode", "--filter", predicate, "--output", out]
        if columns:
            cmd[3:3] = ["--columns", columns]
        if os.environ.get("FILTER_MODE"):
            cmd += ["--filter-mode", os.environ["FILTER_MODE"]]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            return None, run.stderr.strip()[-400:]
        with pa.memory_map(out) as f:
            return pa.ipc.open_file(f).read_all(), run.stdout.strip().splitlines()[-1:]


def pyarrow_filtered(path, cols, expr):
    """pyarrow's rows of `path` where `expr` holds: read_table(filters=),
    or, where the file stores string_view (which pyarrow's filter kernels
    do not take), the whole table with views cast to strings, filtered."""
    try:
        return pq.read_table(path, columns=cols, filters=expr)
    except pa.ArrowNotImplementedError:
        t = pq.read_table(path)
        t = t.cast(pa.schema([pa.field(f.name, pa.string() if f.type == pa.string_view() else f.type)
                              for f in t.schema]))
        t = t.filter(expr)
        return t.select(cols) if cols else t


def compare(gdscan, path, columns, predicate, expr):
    cols = columns.split(",") if columns else None
    if cols:
        order = pq.read_schema(path).names
        cols = sorted(cols, key=order.index)
        columns = ",".join(cols)
    ref = pyarrow_filtered(path, cols, expr)
    got, note = gdscan_rows(gdscan, path, columns, predicate)
    name = f"{os.path.basename(path)} [{columns or '*'}] WHERE {predicate}"
    if got is None:
        print(f"FAIL {name}: gdscan failed: {note}")
        return False
    if got.column_names != ref.column_names or rows(got) != rows(ref):
        print(f"FAIL {name}: {got.num_rows} rows, pyarrow {ref.num_rows}; columns {got.column_names} vs {ref.column_names}")
        return False
    print(f"ok   {name}: {ref.num_rows} rows")
    return True


def check(data, gdscan, lineitem=None):
    ok = True
    for f in sorted(os.listdir(data)):
        if f.endswith(".parquet"):
            for predicate, expr in CASES:
                ok &= compare(gdscan, os.path.join(data, f), "", predicate, expr)
    if lineitem:
        for name, columns, predicate, expr in LINEITEM:
            if expr is None:
                # Q6 and Q19 as pyarrow expressions.
                if name == "q6":
                    expr = ((F("l_shipdate") >= pa.scalar(datetime.date(1994, 1, 1))) & (F("l_shipdate") < pa.scalar(datetime.date(1995, 1, 1)))
                            & (F("l_discount") >= pa.scalar(D("0.05"), pa.decimal128(15, 2))) & (F("l_discount") <= pa.scalar(D("0.07"), pa.decimal128(15, 2)))
                            & (F("l_quantity") < pa.scalar(D("24"), pa.decimal128(15, 2))))
                else:
                    expr = None
                    for lo, hi in [(1, 11), (10, 20), (20, 30)]:
                        branch = ((F("l_quantity") >= pa.scalar(D(lo), pa.decimal128(15, 2))) & (F("l_quantity") <= pa.scalar(D(hi), pa.decimal128(15, 2)))
                                  & F("l_shipmode").isin(["AIR", "AIR REG"]) & (F("l_shipinstruct") == "DELIVER IN PERSON"))
                        expr = branch if expr is None else expr | branch
            ok &= compare(gdscan, lineitem, columns, predicate, expr)
    print("ALL EQUAL" if ok else "DIFFERENCES")
    return ok


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        sys.exit(0 if check(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None) else 1)
