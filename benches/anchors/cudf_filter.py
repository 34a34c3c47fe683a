#!/usr/bin/env python3
"""cuDF's Parquet reader with a filter, on the lineitem scans of `gdscan
bench decode`'s `-exact` cases, in the same call: every lineitem file of a
`gdscan tpch gen` folder read by `pylibcudf.io.parquet.read_parquet` with
the query's columns and filter columns (cuDF hands both out) and its
predicate as a libcudf AST (statistics prune row groups, then the rows
are filtered on the GPU), one warm-up, then the median and best of N runs,
each ended by a device synchronize. A predicate libcudf's AST does not
take (decimal literals, string IN lists) is reported as such per case.

    python3 benches/anchors/cudf_filter.py --data DIR [--cases q1-exact,q6-exact,q14-exact] [--iterations 5]

Prints one JSON object."""

import argparse
import datetime
import decimal
import glob
import json
import os
import statistics
import time

import pyarrow as pa

D = decimal.Decimal


def date(y, m, d):
    return pa.scalar(datetime.date(y, m, d), pa.date32())


def dec(v):
    # libcudf reads DECIMAL(15, 2) as decimal64: the literal must match.
    return pa.scalar(D(v), pa.decimal64(15, 2) if hasattr(pa, "decimal64") else pa.decimal128(15, 2))


# Per case: the columns read (the query's and its filter's) and the
# predicate as nested tuples: ("and"|"or", a, b) or (op, column, literal).
CASES = {
    "q1-exact": (["l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_shipdate"],
                 ("<=", "l_shipdate", date(1998, 9, 2))),
    "q6-exact": (["l_extendedprice", "l_discount", "l_shipdate", "l_quantity"],
                 ("and", ("and", (">=", "l_shipdate", date(1994, 1, 1)), ("<", "l_shipdate", date(1995, 1, 1))),
                  ("and", ("and", (">=", "l_discount", dec("0.05")), ("<=", "l_discount", dec("0.07"))),
                   ("<", "l_quantity", dec("24"))))),
    "q14-exact": (["l_partkey", "l_extendedprice", "l_discount", "l_shipdate"],
                  ("and", (">=", "l_shipdate", date(1995, 9, 1)), ("<", "l_shipdate", date(1995, 10, 1)))),
}


def build(plc, node):
    E = plc.expressions
    ops = {"<": "LESS", "<=": "LESS_EQUAL", ">": "GREATER", ">=": "GREATER_EQUAL", "=": "EQUAL",
           "and": "NULL_LOGICAL_AND", "or": "NULL_LOGICAL_OR"}
    op = getattr(E.ASTOperator, ops[node[0]])
    if node[0] in ("and", "or"):
        return E.Operation(op, build(plc, node[1]), build(plc, node[2]))
    scalar = plc.Scalar.from_arrow(node[2]) if hasattr(plc.Scalar, "from_arrow") else plc.interop.from_arrow(node[2])
    return E.Operation(op, E.ColumnNameReference(node[1]), E.Literal(scalar))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--cases", default="q1-exact,q6-exact,q14-exact")
    args = parser.parse_args()
    import cupy as cp
    import pylibcudf as plc

    files = sorted(glob.glob(os.path.join(args.data, "lineitem", "*.parquet")))
    assert files, f"no lineitem files under {args.data}"
    out = {"reader": "pylibcudf.io.parquet.read_parquet with filter",
           "version": __import__("importlib.metadata").metadata.version("pylibcudf-cu13"),
           "kvikio_nthreads": os.environ.get("KVIKIO_NTHREADS", "<default>"), "cases": {}}
    for name in args.cases.split(","):
        columns, predicate = CASES[name]
        try:
            expr = build(plc, predicate)

            def read():
                builder = (plc.io.parquet.ParquetReaderOptions.builder(plc.io.types.SourceInfo(files))
                           .columns(columns))
                if hasattr(builder, "filter"):
                    options = builder.filter(expr).build()
                else:
                    options = builder.build()
                    options.set_filter(expr)
                result = plc.io.parquet.read_parquet(options)
                cp.cuda.runtime.deviceSynchronize()
                return result.tbl.num_rows()

            rows = read()
            runs = []
            for _ in range(args.iterations):
                start = time.perf_counter()
                assert read() == rows
                runs.append(time.perf_counter() - start)
            out["cases"][name] = {"rows": rows, "median_seconds": statistics.median(runs), "best_seconds": min(runs)}
        except Exception as e:  # a filter libcudf refuses: said, not fatal
            out["cases"][name] = {"error": f"{type(e).__name__}: {e}"[:300]}
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
