"""read_parquet and scan into host memory (decoded on the CPU by arrow-rs
over gdscan's reader) against pyarrow.parquet.read_table; the Arrow
PyCapsule exports read back by pyarrow; DLPack host columns; error paths."""

import datetime
import decimal
import os
import shutil
import warnings

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import gdscan
from conftest import HAS_GPU, parquet_test_data


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """1000 rows, row groups of 100 rows, `id` ascending: ints, floats with
    nulls, strings, dates, decimals, booleans, timestamps."""
    n = 1000
    rng = np.random.default_rng(11)
    floats = rng.normal(size=n)
    table = pa.table({
        "id": pa.array(np.arange(n), pa.int64()),
        "small": pa.array(rng.integers(-100, 100, size=n), pa.int32()),
        "x": pa.array([None if i % 7 == 0 else floats[i] for i in range(n)], pa.float64()),
        "name": pa.array([None if i % 11 == 0 else f"name-{i}" * (i % 4) for i in range(n)], pa.string()),
        "day": pa.array([datetime.date(2000, 1, 1) + datetime.timedelta(days=i) for i in range(n)], pa.date32()),
        "price": pa.array([decimal.Decimal(i * 37) / 100 for i in range(n)], pa.decimal128(15, 2)),
        "flag": pa.array([i % 3 == 0 for i in range(n)], pa.bool_()),
        "ts": pa.array(np.arange(n) * 1_000_000, pa.timestamp("us")),
    })
    path = tmp_path_factory.mktemp("pq") / "generated.parquet"
    pq.write_table(table, path, row_group_size=100, write_page_index=True)
    return path, table


def read_host(path, **kw):
    return gdscan.read_parquet(path, device=None, **kw)


def test_generated_file_equals_pyarrow(generated):
    path, table = generated
    got = read_host(path)
    assert got.device is None
    assert got.num_rows == table.num_rows
    assert got.num_batches == 10
    arrow = got.to_arrow()
    assert arrow.equals(pq.read_table(path))
    assert arrow.equals(table)


def test_a_list_of_files_reads_as_one_table(generated, tmp_path):
    path, table = generated
    second = tmp_path / "second.parquet"
    shutil.copy(path, second)
    got = read_host([path, str(second)], columns=["id", "name"])
    assert got.num_batches == 20
    want = pa.concat_tables([table, table]).select(["id", "name"])
    assert got.to_arrow().equals(want.combine_chunks())
    scanned = [t.num_rows for t in gdscan.scan([path, second], device=None)]
    assert sum(scanned) == 2 * table.num_rows


def test_a_list_of_files_with_other_columns_is_refused(generated, tmp_path):
    path, _ = generated
    other = tmp_path / "other.parquet"
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int32())}), other)
    with pytest.raises(gdscan.ParquetError, match="same schema"):
        read_host([path, other])
    with pytest.raises(ValueError, match="empty"):
        read_host([])


def test_columns_in_the_order_asked(generated):
    path, table = generated
    got = read_host(path, columns=["name", "id", "price"]).to_arrow()
    assert got.column_names == ["name", "id", "price"]
    assert got.equals(pq.read_table(path, columns=["name", "id", "price"]))


def test_filter_prunes_row_groups_and_keeps_the_matching_rows(generated):
    path, table = generated
    got = read_host(path, filter="id >= 900").to_arrow()
    # Row groups of 100 sorted ids: only the last one can match, and all of it does.
    assert got.equals(table.slice(900, 100))
    # Exactly the matching rows, whatever the filter.
    got = read_host(path, filter="id < 150 AND small >= 0").to_arrow()
    expected = table.filter(pc.and_(pc.less(table["id"], 150), pc.greater_equal(table["small"], 0)))
    assert got.equals(expected.combine_chunks())


def test_filter_that_matches_nothing(generated):
    path, table = generated
    got = read_host(path, filter="id > 5000")
    assert got.num_rows == 0
    assert got.to_arrow().schema.equals(table.schema)


def test_scan_yields_one_table_per_row_group(generated):
    path, table = generated
    parts = list(gdscan.scan(path, columns=["id", "x"], device=None))
    assert len(parts) == 10
    assert all(p.num_rows == 100 and p.num_batches == 1 for p in parts)
    joined = pa.concat_tables([p.to_arrow() for p in parts])
    assert joined.equals(table.select(["id", "x"]))


def test_pyarrow_reads_the_capsules(generated):
    path, table = generated
    got = read_host(path, columns=["id", "x", "name"])
    expected = table.select(["id", "x", "name"])
    # __arrow_c_stream__
    assert pa.table(got).equals(expected)
    # __arrow_c_array__ (batches joined)
    assert pa.record_batch(got).equals(expected.combine_chunks().to_batches()[0])
    # __arrow_c_schema__
    assert pa.schema(got).equals(expected.schema)
    # __arrow_c_device_array__ on the CPU device, through pyarrow's C device import.
    schema_capsule, array_capsule = got.__arrow_c_device_array__()
    batch = pa.RecordBatch._import_from_c_device_capsule(schema_capsule, array_capsule)
    assert batch.equals(expected.combine_chunks().to_batches()[0])


def test_device_stream_capsule_on_the_cpu(generated):
    path, table = generated
    got = read_host(path, columns=["id", "price", "name"])
    capsule = got.__arrow_c_device_stream__()
    assert capsule is not None
    # pyarrow has no device-stream import; the capsule's name is checked by ctypes.
    import ctypes

    get_name = ctypes.pythonapi.PyCapsule_GetName
    get_name.restype = ctypes.c_char_p
    get_name.argtypes = [ctypes.py_object]
    assert get_name(capsule) == b"arrow_device_array_stream"


def test_dlpack_host_columns(generated):
    path, table = generated
    got = read_host(path)
    for name in ["id", "small", "day", "ts"]:
        col = got.column(name)
        assert len(col) == table.num_rows
        assert col.__dlpack_device__() == (1, 0)
        values = np.from_dlpack(col)
        expected = table[name].combine_chunks().view(
            {"day": pa.int32(), "ts": pa.int64()}.get(name, table[name].type)
        ).to_numpy()
        assert (values == expected).all(), name
    one = gdscan.read_parquet(path, columns=["id"], filter="id >= 900", device=None).column("id")
    assert (np.from_dlpack(one) == np.arange(900, 1000)).all()
    with pytest.raises(TypeError, match="nulls"):
        np.from_dlpack(got.column("x"))
    with pytest.raises(TypeError, match="fixed-width"):
        np.from_dlpack(got.column("name"))
    with pytest.raises(AttributeError):
        got.column("id").__cuda_array_interface__
    with pytest.raises(KeyError):
        got.column("nope")


def test_default_device_without_gpu_warns(generated):
    if HAS_GPU:
        pytest.skip("a GPU is present: the default call decodes on it")
    path, table = generated
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = gdscan.read_parquet(path, columns=["id"])
    assert any("no CUDA GPU" in str(w.message) for w in caught)
    assert got.device is None
    assert got.to_arrow().equals(table.select(["id"]))


def test_explicit_device_without_gpu_is_an_error(generated):
    if HAS_GPU:
        pytest.skip("a GPU is present")
    path, _ = generated
    with pytest.raises(gdscan.GdscanError):
        gdscan.read_parquet(path, device=0)


def test_bad_requests(generated):
    path, _ = generated
    with pytest.raises(gdscan.ParquetError, match="nope"):
        read_host(path, columns=["nope"])
    with pytest.raises(gdscan.ParquetError):
        read_host(path, filter="id >>>= 3")
    with pytest.raises(gdscan.ParquetError, match="nope"):
        read_host(path, filter="nope > 3")
    with pytest.raises(TypeError):
        read_host(path, columns="id")


def test_missing_file(tmp_path):
    with pytest.raises(gdscan.IoError, match="missing.parquet"):
        read_host(tmp_path / "missing.parquet")


def test_bad_urls(monkeypatch):
    monkeypatch.setenv("GDSCAN_STORE_RETRIES", "0")
    monkeypatch.setenv("GDSCAN_STORE_TIMEOUT", "5")
    for url in ["ftp://example.com/x.parquet", "s3://", "http://127.0.0.1:9/x.parquet"]:
        with pytest.raises(gdscan.GdscanError) as info:
            read_host(url)
        assert str(info.value), url


def test_corrupt_files(tmp_path, generated):
    path, _ = generated
    data = path.read_bytes()
    for name, content in {
        "empty.parquet": b"",
        "not-parquet.parquet": b"hello world, not parquet" * 10,
        "truncated.parquet": data[: len(data) // 2],
        "no-footer.parquet": data[:-8],
    }.items():
        bad = tmp_path / name
        bad.write_bytes(content)
        with pytest.raises(gdscan.GdscanError) as info:
            read_host(bad)
        assert name in str(info.value) or "Parquet" in str(info.value), (name, info.value)
    # A file cut after its footer was read: the column chunks are gone.
    cut = tmp_path / "cut.parquet"
    shutil.copy(path, cut)
    scanner = gdscan.scan(cut, device=None)
    with open(cut, "r+b") as f:
        f.truncate(len(data) // 3)
    with pytest.raises(gdscan.GdscanError):
        for _ in scanner:
            pass


def data_files():
    root = parquet_test_data()
    if root is None:
        return []
    return sorted(f for f in os.listdir(root) if f.endswith(".parquet"))


def bad_files():
    root = parquet_test_data()
    if root is None:
        return []
    bad = os.path.join(os.path.dirname(root.rstrip("/")), "bad_data")
    if not os.path.isdir(bad):
        return []
    return sorted(os.path.join(bad, f) for f in os.listdir(bad) if f.endswith(".parquet"))


needs_testing = pytest.mark.skipif(parquet_test_data() is None, reason="PARQUET_TEST_DATA not set")


def same_values(a, b):
    """Equal, NaN equal to NaN (pyarrow's equals says NaN != NaN)."""
    import math

    if isinstance(a, float) and isinstance(b, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_values(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_values(x, y) for x, y in zip(a, b))
    return a == b


def tables_match(got, expected):
    if got.equals(expected):
        return True
    if not got.schema.equals(expected.schema):
        return False
    try:
        return same_values(got.to_pylist(), expected.to_pylist())
    except ValueError:  # values Python cannot hold (nanoseconds past datetime's range)
        return False


# Files where arrow-rs and pyarrow disagree by design, not by a gdscan fault.
KNOWN_DIFFERENCES = {
    "int96_from_spark.parquet": "an INT96 value outside the nanosecond range wraps differently in arrow-rs and pyarrow",
}


@needs_testing
@pytest.mark.parametrize("name", data_files() or ["<none>"])
def test_parquet_testing_file(name):
    path = os.path.join(parquet_test_data(), name)
    try:
        expected = pq.read_table(path)
    except Exception as e:  # noqa: BLE001 - pyarrow is the reference
        pytest.skip(f"pyarrow cannot read it either: {e}")
    try:
        got = read_host(path).to_arrow()
    except gdscan.GdscanError as e:
        # arrow-rs does not read every file pyarrow does; an error is the
        # honest outcome (never a crash), and it names the file.
        assert name in str(e), e
        pytest.xfail(f"arrow-rs cannot read it: {e}")
    assert got.num_rows == expected.num_rows
    if name in KNOWN_DIFFERENCES:
        if tables_match(got, expected):
            return
        pytest.xfail(KNOWN_DIFFERENCES[name])
    if not tables_match(got, expected):
        # The same values under arrow-rs's and pyarrow's type choices.
        try:
            cast = got.cast(expected.schema)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, ValueError) as e:
            pytest.xfail(f"types differ beyond a cast: {got.schema} vs {expected.schema}: {e}")
        assert tables_match(cast, expected), name


@needs_testing
@pytest.mark.parametrize("path", bad_files() or ["<none>"])
def test_bad_data_files_raise_or_match_pyarrow(path):
    """Never a crash: a typed error, or (where arrow-rs reads the file) the
    values pyarrow reads."""
    try:
        expected = pq.read_table(path)
    except Exception as e:  # noqa: BLE001 - pyarrow is the reference
        expected = e
    try:
        got = read_host(path).to_arrow()
    except gdscan.GdscanError as e:
        assert os.path.basename(path) in str(e), e
        return
    if isinstance(expected, Exception):
        pytest.xfail(f"arrow-rs reads it, pyarrow does not ({expected})")
    assert tables_match(got, expected)


def test_maps_as_lists_hold_the_maps_entries(tmp_path):
    """maps_as_lists() gives every map (at the top and inside a list) as the
    list of its key-value structs, with the map's nulls: what pyarrow builds
    from the offsets, keys and items of its own read of the file; other
    columns are unchanged."""
    maps = [[("a", 1), ("b", None)], None, [], [("c", 3)]]
    nested = [[[("x", 1)], None], None, [], [[("y", 2), ("z", 3)]]]
    table = pa.table({
        "id": pa.array([1, 2, 3, 4], pa.int64()),
        "m": pa.array(maps, pa.map_(pa.string(), pa.int32())),
        "lm": pa.array(nested, pa.list_(pa.map_(pa.string(), pa.int32()))),
    })
    path = tmp_path / "maps.parquet"
    pq.write_table(table, path)
    got = read_host(path).maps_as_lists().to_arrow()
    want = pq.read_table(path)

    def as_list(m):
        fields = [m.type.key_field, m.type.item_field]
        entries = pa.StructArray.from_arrays([m.keys, m.items], fields=fields)
        return pa.ListArray.from_arrays(m.offsets, entries, mask=m.is_null())

    m = got.column("m").combine_chunks()
    assert pa.types.is_list(m.type) and pa.types.is_struct(m.type.value_type)
    assert m.to_pylist() == as_list(want.column("m").combine_chunks()).to_pylist()
    lm, want_lm = got.column("lm").combine_chunks(), want.column("lm").combine_chunks()
    assert pa.types.is_list(lm.type.value_type)
    assert lm.is_null().to_pylist() == want_lm.is_null().to_pylist()
    assert lm.offsets.to_pylist() == want_lm.offsets.to_pylist()
    assert lm.values.to_pylist() == as_list(want_lm.values).to_pylist()
    assert got.column("id").to_pylist() == [1, 2, 3, 4]


# DuckDB's full-range INT32 file (testdata/README.md): arrow-rs, the CPU
# decoder, refuses the deltas of `wide`; the error says why and where the
# file decodes, as `gdscan scan --host` does, with arrow-rs's own words.
WIDE_DELTAS = os.path.join(
    os.path.dirname(__file__), "..", "..", "testdata", "duckdb_wide_deltas.parquet"
)


def test_wide_int32_deltas_on_the_cpu_say_why_and_point_to_the_gpu():
    with pytest.raises(gdscan.ParquetError) as info:
        read_host(WIDE_DELTAS, columns=["wide"])
    text = str(info.value)
    assert "duckdb_wide_deltas.parquet" in text
    assert "deltas wider than its 32-bit type" in text
    assert "device=0" in text
    assert "'min_delta' too large" in text


def test_the_columns_whose_deltas_fit_still_decode():
    got = read_host(WIDE_DELTAS, columns=["i", "narrow"]).to_arrow()
    assert got.column("i").to_pylist() == list(range(5000))
    assert got.column("narrow").to_pylist() == [i * 7 for i in range(5000)]
