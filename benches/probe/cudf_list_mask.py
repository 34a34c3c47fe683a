"""What pylibcudf makes of a gdscan list column (its null mask and count),
beside cuDF's own reader of the same file."""
import sys

import gdscan
import pyarrow as pa
import pyarrow.parquet as pq
import pylibcudf as plc

path = sys.argv[1]
n = 100
table = pa.table({"ints": pa.array([[1, 2], [], None, [3]] * (n // 4), pa.list_(pa.int64()))})
pq.write_table(table, path)
t = gdscan.read_parquet(path, device=0).batch(0)
c = plc.Table.from_arrow(t).columns()[0]
print("ours: type", c.type().id(), "size", c.size(), "nulls", c.null_count(), "mask", c.null_mask() is not None,
      "children", [(k.type().id(), k.size(), k.null_count()) for k in c.children()])
options = plc.io.parquet.ParquetReaderOptions.builder(plc.io.types.SourceInfo([path])).build()
r = plc.io.parquet.read_parquet(options).tbl.columns()[0]
print("cudf: type", r.type().id(), "size", r.size(), "nulls", r.null_count(), "mask", r.null_mask() is not None,
      "children", [(k.type().id(), k.size(), k.null_count()) for k in r.children()])
cap = t.__arrow_c_device_array__()
host = pa.RecordBatch._import_from_c_device_capsule(*cap) if False else None
got = gdscan.read_parquet(path, device=0).to_arrow()
arr = got.column(0).chunk(0)
print("ours via to_arrow: nulls", arr.null_count, "buffers", [None if b is None else b.size for b in arr.buffers()])
