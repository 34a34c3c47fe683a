"""GPU tests (marker `gpu`): skipped without a GPU; with
GDSCAN_REQUIRE_GPU=1 a missing GPU, CuPy, PyTorch or lineitem file fails.

CuFile into CuPy and PyTorch memory against the file's bytes; TPC-H
lineitem (GDSCAN_LINEITEM: a `gdscan tpch gen --tables lineitem` folder or
one of its files) decoded on the GPU: CuPy and PyTorch views of its columns
against pyarrow's values, the whole table copied back against pyarrow, the
device capsule read through the C structures by hand (and by pyarrow's C
device import, and by pylibcudf, where those can)."""

import ctypes
import datetime
import decimal
import glob
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import gdscan
from conftest import REQUIRE_GPU, need

pytestmark = pytest.mark.gpu

INT_COLUMNS = ["l_orderkey", "l_partkey", "l_suppkey", "l_linenumber"]
DATE_COLUMNS = ["l_shipdate", "l_commitdate", "l_receiptdate"]


def test_cufile_into_cupy_equals_the_file(file_bytes):
    cp = need("cupy")
    path, data = file_bytes
    a = cp.empty(len(data), dtype=cp.uint8)
    with gdscan.CuFile(path, "r") as f:
        assert f.read(a) == len(data)
        stats = f.stats()
    assert a.get().tobytes() == data
    device_bytes = sum(c["bytes"] for c in stats["counters"] if c["path"] != "posix-host")
    assert device_bytes == len(data), stats
    assert stats["stage1"] is not None and stats["stage1"]["reason"]


def test_cufile_futures_and_raw_calls_with_cupy(file_bytes, tmp_path):
    cp = need("cupy")
    path, data = file_bytes
    half = len(data) // 2
    b = cp.zeros(len(data), dtype=cp.uint8)
    with gdscan.CuFile(path) as f:
        futures = [f.pread(b[:half]), f.pread(b[half:], file_offset=half)]
        assert sum(fut.get() for fut in futures) == len(data)
        assert all(fut.done() for fut in futures)
        c = cp.zeros(1 << 20, dtype=cp.uint8)
        assert f.raw_read(c, 4096, file_offset=123, dev_offset=100) == 4096
    assert b.get().tobytes() == data
    assert c[100:4196].get().tobytes() == data[123:123 + 4096]
    assert not c[:100].any() and not c[4196:].any()

    # KvikIO's getting-started example with CuPy.
    a = cp.arange(100)
    f = gdscan.CuFile(tmp_path / "test-file", "w")
    f.write(a)
    f.close()
    assert (tmp_path / "test-file").read_bytes() == a.get().tobytes()
    d = cp.empty_like(a)
    with gdscan.CuFile(tmp_path / "test-file", "r") as f:
        assert f.pread(d).get() == a.nbytes
    assert bool((a == d).all())
    with gdscan.CuFile(tmp_path / "raw", "w") as f:
        assert f.raw_write(a, dev_offset=8) == a.nbytes - 8
    assert (tmp_path / "raw").read_bytes() == a.get().tobytes()[8:]


def test_cufile_into_torch(file_bytes):
    torch = need("torch")
    path, data = file_bytes
    t = torch.empty(len(data), dtype=torch.uint8, device="cuda:0")
    with gdscan.CuFile(path) as f:
        assert f.read(t) == len(data)
    assert t.cpu().numpy().tobytes() == data


@pytest.fixture(scope="module")
def lineitem():
    location = os.environ.get("GDSCAN_LINEITEM")
    if not location:
        if REQUIRE_GPU:
            pytest.fail("GDSCAN_REQUIRE_GPU=1 needs GDSCAN_LINEITEM (a gdscan tpch gen lineitem folder or file)")
        pytest.skip("GDSCAN_LINEITEM not set")
    if os.path.isdir(location):
        files = sorted(glob.glob(os.path.join(location, "**", "*.parquet"), recursive=True))
        assert files, f"no Parquet files under {location}"
        location = files[0]
    return location, pq.read_table(location)


def as_numpy(column):
    """pyarrow's values as NumPy integers (dates as their int32 days)."""
    array = column.combine_chunks()
    if pa.types.is_date32(array.type):
        array = array.view(pa.int32())
    return array.to_numpy()


def test_lineitem_columns_in_cupy_and_torch(lineitem):
    cp = need("cupy")
    torch = need("torch")
    path, expected = lineitem
    table = gdscan.read_parquet(path, columns=INT_COLUMNS + DATE_COLUMNS, device=0)
    assert table.device == 0
    assert table.num_rows == expected.num_rows
    assert table.num_batches == pq.ParquetFile(path).metadata.num_row_groups
    for name in INT_COLUMNS + DATE_COLUMNS:
        col = table.column(name)
        want = as_numpy(expected[name])
        pointer = col.__cuda_array_interface__["data"][0]
        view = cp.asarray(col)
        assert view.data.ptr == pointer, name  # the same device memory
        assert cp.array_equal(view, cp.asarray(want)), name
        tensor = torch.from_dlpack(col)
        assert tensor.device.type == "cuda" and tensor.data_ptr() == pointer, name
        assert torch.equal(tensor.cpu(), torch.from_numpy(want)), name
    # One batch's column is a view of the decoder's own buffer.
    first = table.batch(0).column("l_orderkey")
    rows0 = pq.ParquetFile(path).metadata.row_group(0).num_rows
    assert cp.array_equal(cp.asarray(first), cp.asarray(as_numpy(expected["l_orderkey"])[:rows0]))


def same_table(got, expected):
    """Equal values; Utf8View columns compared as strings."""
    assert got.column_names == expected.column_names
    for name in expected.column_names:
        g = got[name]
        if g.type != expected[name].type:
            g = g.cast(expected[name].type)
        assert g.equals(expected[name]), name


def test_lineitem_copied_back_equals_pyarrow(lineitem):
    path, expected = lineitem
    table = gdscan.read_parquet(path, device=0)
    same_table(table.to_arrow(), expected)


def test_lineitem_scan_and_filter_match_the_cpu_decoder(lineitem):
    path, expected = lineitem
    columns = ["l_shipdate", "l_discount", "l_quantity", "l_extendedprice"]
    q6 = ("l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' "
          "AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24")
    gpu = gdscan.read_parquet(path, columns=columns, filter=q6, device=0).to_arrow()
    cpu = gdscan.read_parquet(path, columns=columns, filter=q6, device=None).to_arrow()
    same_table(gpu, cpu)
    # Exactly Q6's rows, as pyarrow filters them; the same through filters=.
    exact = pa.types.is_decimal(pq.read_schema(path).field("l_discount").type)
    low, high = (decimal.Decimal("0.05"), decimal.Decimal("0.07")) if exact else (0.05, 0.07)
    dnf = [("l_shipdate", ">=", datetime.date(1994, 1, 1)),
           ("l_shipdate", "<", datetime.date(1995, 1, 1)),
           ("l_discount", ">=", low), ("l_discount", "<=", high), ("l_quantity", "<", 24)]
    want = pq.read_table(path, columns=columns, filters=dnf)
    assert want.num_rows > 0
    same_table(cpu, want)
    same_table(gdscan.read_parquet(path, columns=["l_extendedprice"], filters=dnf,
                                   device=0).to_arrow(), want.select(["l_extendedprice"]))
    batches = 0
    rows = 0
    for part in gdscan.scan(path, columns=["l_orderkey"], device=0):
        assert part.num_batches == 1 and part.device == 0
        batches += 1
        rows += part.num_rows
    assert rows == expected.num_rows
    assert batches == pq.ParquetFile(path).metadata.num_row_groups


class ArrowArray(ctypes.Structure):
    pass


ArrowArray._fields_ = [
    ("length", ctypes.c_int64), ("null_count", ctypes.c_int64), ("offset", ctypes.c_int64),
    ("n_buffers", ctypes.c_int64), ("n_children", ctypes.c_int64),
    ("buffers", ctypes.POINTER(ctypes.c_void_p)),
    ("children", ctypes.POINTER(ctypes.POINTER(ArrowArray))),
    ("dictionary", ctypes.POINTER(ArrowArray)),
    ("release", ctypes.CFUNCTYPE(None, ctypes.POINTER(ArrowArray))),
    ("private_data", ctypes.c_void_p),
]


class ArrowDeviceArray(ctypes.Structure):
    _fields_ = [("array", ArrowArray), ("device_id", ctypes.c_int64), ("device_type", ctypes.c_int32),
                ("sync_event", ctypes.c_void_p), ("reserved", ctypes.c_int64 * 3)]


def capsule_pointer(capsule, name):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return get(capsule, name)


def test_device_capsule_read_by_hand(lineitem):
    """The C Device Data Interface by its spec, with ctypes: CUDA device 0,
    a struct array of the columns, a sync event to wait on, buffers that
    hold pyarrow's values, and a release the consumer calls."""
    cp = need("cupy")
    path, expected = lineitem
    table = gdscan.read_parquet(path, columns=["l_orderkey", "l_linenumber"], device=0).batch(0)
    schema_capsule, array_capsule = table.__arrow_c_device_array__()
    schema = pa.Schema._import_from_c_capsule(schema_capsule)
    assert schema.names == ["l_orderkey", "l_linenumber"]
    device_array = ArrowDeviceArray.from_address(capsule_pointer(array_capsule, b"arrow_device_array"))
    assert device_array.device_type == 2 and device_array.device_id == 0
    assert device_array.array.length == table.num_rows
    assert device_array.array.n_children == 2
    if device_array.sync_event:
        event = ctypes.c_void_p.from_address(device_array.sync_event).value
        cp.cuda.runtime.streamWaitEvent(cp.cuda.get_current_stream().ptr, event)
    for i, name in enumerate(["l_orderkey", "l_linenumber"]):
        dtype = np.dtype(schema.field(name).type.to_pandas_dtype())
        child = device_array.array.children[i].contents
        assert child.length == table.num_rows and child.n_buffers == 2
        values = child.buffers[1]
        memory = cp.cuda.UnownedMemory(values, child.length * cp.dtype(dtype).itemsize, table)
        view = cp.ndarray((child.length,), dtype=dtype, memptr=cp.cuda.MemoryPointer(memory, 0))
        want = as_numpy(expected[name])[: table.num_rows]
        assert cp.array_equal(view, cp.asarray(want)), name
    # The consumer moves the array out and releases it.
    release = device_array.array.release
    release(ctypes.pointer(device_array.array))
    assert not device_array.array.release


def test_device_capsule_through_pyarrow(lineitem):
    path, expected = lineitem
    table = gdscan.read_parquet(path, columns=["l_orderkey", "l_shipdate"], device=0).batch(0)
    try:
        batch = pa.RecordBatch._import_from_c_device_capsule(*table.__arrow_c_device_array__())
    except (pa.ArrowException, NotImplementedError) as e:
        pytest.skip(f"this pyarrow cannot import CUDA device arrays (built without CUDA): {e}")
    assert batch.device_type == pa.DeviceAllocationType.CUDA
    assert batch.num_rows == table.num_rows
    host = batch.copy_to(pa.default_cpu_memory_manager())
    want = expected.select(["l_orderkey", "l_shipdate"]).slice(0, table.num_rows)
    same_table(pa.Table.from_batches([host]), want.combine_chunks())


def test_pylibcudf_takes_the_table(lineitem):
    """pylibcudf imports the table through the Arrow C Device interface
    (no copy), and it equals cuDF's own reader of the same row group."""
    plc = pytest.importorskip("pylibcudf", reason="pylibcudf is not installed")
    path, expected = lineitem
    table = gdscan.read_parquet(path, device=0).batch(0)
    imported = plc.Table.from_arrow(table)
    rows0 = pq.ParquetFile(path).metadata.row_group(0).num_rows
    options = plc.io.parquet.ParquetReaderOptions.builder(plc.io.types.SourceInfo([str(path)])).build()
    options.set_row_groups([[0]])
    theirs = plc.io.parquet.read_parquet(options)
    assert imported.num_rows() == rows0 == theirs.tbl.num_rows()
    ours = pa.table(imported.to_arrow(metadata=table.column_names))
    want = pa.table(theirs.tbl.to_arrow(metadata=theirs.column_names()))
    same_table(ours, want)

@pytest.fixture(scope="module")
def nested_file(tmp_path_factory):
    """A file of nested columns written by pyarrow: lists (empty, null, of
    nulls), a list of structs, a map, a struct of a list, two row groups,
    v1 pages (pyarrow's default) of a few hundred values."""
    rng = np.random.default_rng(7)
    n = 3000

    def maybe(v, p=0.15):
        return None if rng.random() < p else v

    tags = [maybe([maybe(f"t{rng.integers(0, 50)}") for _ in range(rng.integers(0, 4))]) for _ in range(n)]
    items = [
        maybe([maybe({"qty": maybe(int(rng.integers(0, 100))), "price": float(rng.random())}) for _ in range(rng.integers(0, 5))])
        for _ in range(n)
    ]
    attrs = [maybe([(f"k{j}", maybe(int(rng.integers(0, 9)))) for j in range(rng.integers(0, 3))]) for _ in range(n)]
    info = [maybe({"name": maybe(f"n{i}"), "scores": maybe([int(x) for x in rng.integers(0, 9, rng.integers(0, 3))])}) for i in range(n)]
    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "tags": pa.array(tags, pa.list_(pa.string())),
            "items": pa.array(items, pa.list_(pa.struct([("qty", pa.int32()), ("price", pa.float64())]))),
            "attrs": pa.array(attrs, pa.map_(pa.string(), pa.int32())),
            "info": pa.array(info, pa.struct([("name", pa.string()), ("scores", pa.list_(pa.int64()))])),
        }
    )
    path = tmp_path_factory.mktemp("nested") / "nested.parquet"
    pq.write_table(table, path, row_group_size=n // 2, data_page_size=2048)
    return path, pq.read_table(path)


def test_nested_columns_copied_back_equal_pyarrow(nested_file):
    path, expected = nested_file
    table = gdscan.read_parquet(path, device=0)
    got = table.to_arrow()
    assert got.num_rows == expected.num_rows
    same_table(got, expected)


def test_nested_device_capsule_through_pyarrow(nested_file):
    path, expected = nested_file
    batch0 = gdscan.read_parquet(path, device=0).batch(0)
    try:
        batch = pa.RecordBatch._import_from_c_device_capsule(*batch0.__arrow_c_device_array__())
    except (pa.ArrowException, NotImplementedError) as e:
        pytest.skip(f"this pyarrow cannot import CUDA device arrays (built without CUDA): {e}")
    assert batch.device_type == pa.DeviceAllocationType.CUDA
    host = batch.copy_to(pa.default_cpu_memory_manager())
    same_table(pa.Table.from_batches([host]), expected.slice(0, host.num_rows).combine_chunks())


def _layout(column):
    """A pylibcudf column's layout: type, size, null count, and its
    children's, recursively (list offsets included)."""
    return (column.type().id(), column.size(), column.null_count(), [_layout(c) for c in column.children()])


def test_pylibcudf_takes_nested_columns(nested_file):
    """pylibcudf imports nested columns (lists, a list of structs, a map, a
    struct of a list) through the C Device interface: every column and child has
    the type, length and null count cuDF's own reader gives the same row
    group, and the list columns hold pyarrow's values. The map column goes
    as cuDF reads a map (cuDF has no map type, and its import refuses
    Arrow's): `maps_as_lists()`, the list of its key-value structs."""
    plc = pytest.importorskip("pylibcudf", reason="pylibcudf is not installed")
    path, expected = nested_file
    names = ["id", "tags", "items", "attrs", "info"]
    table = gdscan.read_parquet(path, device=0, columns=names).batch(0).maps_as_lists()
    imported = plc.Table.from_arrow(table)
    options = plc.io.parquet.ParquetReaderOptions.builder(plc.io.types.SourceInfo([str(path)])).build()
    options.set_row_groups([[0]])
    options.set_columns(names)
    theirs = plc.io.parquet.read_parquet(options)
    assert imported.num_rows() == theirs.tbl.num_rows()
    for name, ours, cudf in zip(names, imported.columns(), theirs.tbl.columns()):
        assert _layout(ours) == _layout(cudf), name
    # Values of the columns without structs (cuDF names a struct's fields
    # only when given every level's names).
    flat = plc.Table([imported.columns()[0], imported.columns()[1]])
    got = pa.table(flat.to_arrow(metadata=names[:2]))
    want = expected.select(names[:2]).slice(0, imported.num_rows())
    for name in names[:2]:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name


@pytest.fixture(scope="module")
def null_file(tmp_path_factory):
    """All-None columns as pyarrow writes them (Parquet's UNKNOWN, arrow's
    null type): flat, in a list (null, empty and of nulls), in a list of
    lists, in a struct beside a value and alone, in a list of structs,
    beside columns of values; two row groups."""
    n = 1000

    def pick(i, *choices):
        return choices[i % len(choices)]

    table = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "nothing": pa.array([None] * n),
            "list": pa.array([pick(i, [None, None], None, [], [None]) for i in range(n)], pa.list_(pa.null())),
            "lists": pa.array([pick(i, [[None], []], None, [None, [None, None]]) for i in range(n)], pa.list_(pa.list_(pa.null()))),
            "beside": pa.array(
                [pick(i, {"n": None, "x": i}, None, {"n": None, "x": None}) for i in range(n)],
                pa.struct([("n", pa.null()), ("x", pa.int32())]),
            ),
            "alone": pa.array([pick(i, {"n": None}, None) for i in range(n)], pa.struct([("n", pa.null())])),
            "structs": pa.array(
                [pick(i, [{"s": "a", "n": None}, None], None, []) for i in range(n)],
                pa.list_(pa.struct([("s", pa.string()), ("n", pa.null())])),
            ),
            "name": pa.array([pick(i, "x", None, "a longer string value") for i in range(n)]),
        }
    )
    assert table.schema.field("nothing").type == pa.null()
    path = tmp_path_factory.mktemp("nulls") / "nulls.parquet"
    pq.write_table(table, path, row_group_size=n // 2, data_page_size=1024)
    return path, pq.read_table(path)


def test_null_columns_copied_back_equal_pyarrow(null_file):
    path, expected = null_file
    got = gdscan.read_parquet(path, device=0).to_arrow()
    assert got.num_rows == expected.num_rows
    assert got.schema.field("nothing").type == pa.null()
    assert got.schema.field("list").type.value_type == pa.null()
    same_table(got, expected)
    # Null columns alone, and beside values.
    for columns in (["nothing"], ["list", "alone"], ["id", "beside", "structs"]):
        got = gdscan.read_parquet(path, columns=columns, device=0).to_arrow()
        same_table(got, expected.select(columns))


def test_null_columns_device_capsule_through_pyarrow(null_file):
    path, expected = null_file
    batch0 = gdscan.read_parquet(path, device=0).batch(0)
    try:
        batch = pa.RecordBatch._import_from_c_device_capsule(*batch0.__arrow_c_device_array__())
    except (pa.ArrowException, NotImplementedError) as e:
        pytest.skip(f"this pyarrow cannot import CUDA device arrays (built without CUDA): {e}")
    host = batch.copy_to(pa.default_cpu_memory_manager())
    assert host.schema.field("nothing").type == pa.null()
    same_table(pa.Table.from_batches([host]), expected.slice(0, host.num_rows).combine_chunks())
