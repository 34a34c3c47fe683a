#!/usr/bin/env python3
"""Issue 61 on the GPU machine: pyarrow-written all-None columns (flat, list<null>,
struct with a null field, beside others; Snappy, Zstd, none; four projections)
through `gdscan scan --decode --device 0 --output`, compared with
`pq.read_table` (values and types). Usage: python3 null_columns_pyarrow.py GDSCAN_BINARY"""
import subprocess, sys
import pyarrow as pa, pyarrow.parquet as pq, pyarrow.ipc as ipc
G = sys.argv[1]
n = 1000
t = pa.table({
    "id": pa.array(range(n), pa.int64()),
    "n": pa.array([None] * n),
    "ln": pa.array([None if i % 5 == 0 else [None] * (i % 3) for i in range(n)], pa.list_(pa.null())),
    "s": pa.array([None if i % 7 == 0 else {"a": i, "b": None} for i in range(n)],
                  pa.struct([("a", pa.int32()), ("b", pa.null())])),
    "x": pa.array([float(i) for i in range(n)]),
})
ok = 0
for comp in ["snappy", "zstd", "none"]:
    for cols in [None, ["n"], ["ln", "x"], ["s"]]:
        path = f"/tmp/nulls-{comp}.parquet"
        pq.write_table(t, path, compression=comp, row_group_size=300, data_page_size=1000)
        out = "/tmp/nulls-out.arrow"
        args = [G, "scan", path, "--decode", "--device", "0", "--output", out]
        if cols:
            args += ["--columns", ",".join(cols)]
        r = subprocess.run(args, capture_output=True, text=True)
        if r.returncode != 0:
            print("FAIL", comp, cols, r.stderr[-500:]); continue
        got = ipc.open_file(out).read_all()
        want = pq.read_table(path, columns=cols)
        same = got.to_pylist() == want.to_pylist() and [f.type for f in got.schema] == [f.type for f in want.schema]
        print("equal" if same else "DIFFER", comp, cols, got.schema.types if not same else "")
        ok += same
print(f"pyarrow null columns: {ok} of 12 equal")
