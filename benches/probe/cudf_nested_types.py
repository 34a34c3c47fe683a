"""Which nested Arrow types pylibcudf's from_arrow takes from gdscan's
device arrays (one column at a time; prints each verdict)."""
import sys

import gdscan
import pyarrow as pa
import pyarrow.parquet as pq
import pylibcudf as plc

path = sys.argv[1]
n = 100
table = pa.table({
    "ints": pa.array([[1, 2], [], None, [3]] * (n // 4), pa.list_(pa.int64())),
    "strs": pa.array([["a", None], [], None, ["b"]] * (n // 4), pa.list_(pa.string())),
    "items": pa.array([[{"q": 1, "p": 2.0}], [], None, [None]] * (n // 4), pa.list_(pa.struct([("q", pa.int32()), ("p", pa.float64())]))),
    "attrs": pa.array([[("k", 1)], [], None, [("j", None)]] * (n // 4), pa.map_(pa.string(), pa.int32())),
    "info": pa.array([{"name": "x", "s": [1]}, None, {"name": None, "s": None}, {"name": "y", "s": []}] * (n // 4), pa.struct([("name", pa.string()), ("s", pa.list_(pa.int64()))])),
    "flat_str": pa.array(["x", None, "yy", "z" * 20] * (n // 4)),
})
pq.write_table(table, path)
for col in table.column_names:
    t = gdscan.read_parquet(path, device=0, columns=[col]).batch(0)
    try:
        imported = plc.Table.from_arrow(t)
        back = pa.table(imported.to_arrow(metadata=[col]))
        print(col, "OK", back.schema.field(col).type, back.column(0).to_pylist() == table.column(col).to_pylist())
    except Exception as e:  # noqa: BLE001 (a probe: every verdict is printed)
        print(col, "FAILED", type(e).__name__, str(e)[:160])
