"""Exact filters: `read_parquet` and `scan` with `filters=` (pyarrow's DNF)
and `filter=` (gdscan's text) against pyarrow's own evaluation of the same
condition (`Table.filter` with a pyarrow expression under SQL's three-valued
logic, and `pq.read_table(filters=...)` where its semantics are the same).

The file has small row groups and pages and the page index, nulls in every
filter column, NaN in floats, decimals, dates, naive and zoned timestamps,
strings, binary, booleans and nested payload columns. Each case runs on the
CPU (device=None) and on GPU 0 (marker `gpu`: skipped without a GPU)."""

import datetime
import decimal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import gdscan

N = 3000
ROW_GROUP = 250
DEVICES = [pytest.param(None, id="cpu"), pytest.param(0, id="gpu", marks=pytest.mark.gpu)]
D = decimal.Decimal
UTC = datetime.timezone.utc
PLUS5 = datetime.timezone(datetime.timedelta(hours=5))


def _table():
    rng = np.random.default_rng(58)
    ids = np.arange(N)

    def nulls(values, every):
        return [None if i % every == 3 else v for i, v in enumerate(values)]

    floats = rng.normal(size=N)
    floats[::13] = np.nan
    floats[5] = -0.0
    vocab = ["a", "b", "c", "d", "e", "f"]
    blobs = [b"\x00", b"\x01\x02", b"\x7f", b"\x80", b"\xff\x00"]
    start = datetime.datetime(2020, 1, 1)
    lists = [None if i % 23 == 0 else list(range(i % 4)) for i in range(N)]
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "i32": pa.array(nulls(rng.integers(-100, 100, size=N).tolist(), 10), pa.int32()),
        "f64": pa.array(nulls(floats.tolist(), 17), pa.float64()),
        "s": pa.array(nulls([vocab[v] for v in rng.integers(0, 6, size=N)], 11), pa.string()),
        "b": pa.array(nulls([blobs[v] for v in rng.integers(0, 5, size=N)], 9), pa.binary()),
        "dec": pa.array(nulls([D(int(v)) / 1000 for v in rng.integers(-50000, 50000, size=N)], 8),
                        pa.decimal128(12, 3)),
        "day": pa.array(nulls([datetime.date(2000, 1, 1) + datetime.timedelta(days=i // 2)
                               for i in range(N)], 12), pa.date32()),
        "ts": pa.array(nulls([start + datetime.timedelta(minutes=7 * i, microseconds=i)
                              for i in range(N)], 14), pa.timestamp("us")),
        "tsz": pa.array(nulls([(start + datetime.timedelta(hours=i)).replace(tzinfo=UTC)
                               for i in range(N)], 15), pa.timestamp("ms", tz="Europe/Paris")),
        "flag": pa.array(nulls([i % 3 == 0 for i in range(N)], 16), pa.bool_()),
        "payload": pa.array(lists, pa.list_(pa.int32())),
        "st": pa.array([None if i % 19 == 0 else {"a": int(i % 50), "b": vocab[i % 6]}
                        for i in range(N)],
                       pa.struct([("a", pa.int32()), ("b", pa.string())])),
    })


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The file (row groups of 250 rows, small pages, page index) and the
    table pyarrow reads back from it."""
    path = tmp_path_factory.mktemp("filters") / "filters.parquet"
    pq.write_table(_table(), path, row_group_size=ROW_GROUP, data_page_size=512,
                   write_batch_size=50, write_page_index=True)
    return path, pq.read_table(path)


# --- the reference: pyarrow's expression for a DNF, under SQL's logic ---

def _scalar(value, type_):
    try:
        return pa.scalar(value, type=type_)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError):
        return pa.scalar(value)


def _field(column):
    return pc.field(*column.split("."))


def _column_type(table, column):
    type_ = table.schema.field(column.split(".")[0]).type
    for part in column.split(".")[1:]:
        type_ = type_.field(part).type
    return type_


def _term(table, column, op, value):
    f = _field(column)
    op = " ".join(op.lower().split())
    if op == "is":
        return f.is_null()
    if op == "is not":
        return f.is_valid()
    type_ = _column_type(table, column)
    if op in ("in", "not in"):
        values = pa.array([_scalar(v, type_).as_py() for v in value], type=type_)
        found = f.isin(values)
        # SQL: NULL NOT IN (...) is unknown, so not kept (pyarrow's is).
        return found if op == "in" else ~found & f.is_valid()
    s = _scalar(value, type_)
    return {"=": f == s, "==": f == s, "!=": f != s, "<": f < s, "<=": f <= s,
            ">": f > s, ">=": f >= s}[op]


def reference(table, filters, columns=None):
    """pyarrow's rows of `table` where the DNF `filters` is TRUE."""
    disjuncts = filters if isinstance(filters[0], list) else [filters]
    expr = None
    for conjunction in disjuncts:
        ands = None
        for column, op, value in conjunction:
            t = _term(table, column, op, value)
            ands = t if ands is None else ands & t
        expr = ands if expr is None else expr | ands
    got = table.filter(expr)
    return got.select(columns) if columns is not None else got


def same(got, expected):
    """Equal tables; the GPU's view types (Utf8View, BinaryView, nested)
    cast to pyarrow's types first."""
    assert got.column_names == expected.column_names
    assert got.num_rows == expected.num_rows
    for name in expected.column_names:
        g = got[name]
        e = expected[name]
        if g.type != e.type:
            g = g.cast(e.type)
        if pa.types.is_floating(e.type):
            # NaN equals NaN here: same places, then the other values.
            assert pc.is_nan(g).equals(pc.is_nan(e)), name
            g, e = (pc.if_else(pc.is_nan(x), pa.scalar(0.0, e.type), x) for x in (g, e))
        assert g.equals(e), name


def read(path, device, **kw):
    return gdscan.read_parquet(path, device=device, **kw).to_arrow()


# --- cases: (filters, columns) ---

CASES = {
    "int_lt": ([("id", "<", 250)], None),
    "int_and_nulls": ([("i32", ">=", 0), ("i32", "<", 50)], ["id", "i32"]),
    "int_ne": ([("i32", "!=", 7)], ["id", "i32"]),
    "int_eq_double": ([("i32", "==", 7)], ["i32", "s"]),
    "int_eq_single": ([("i32", "=", -3), ("id", ">=", 1000)], ["id"]),
    "float_gt_nan": ([("f64", ">", 0.5)], ["id", "f64"]),
    "float_ne_nan": ([("f64", "!=", 0.0)], ["id", "f64"]),
    "float_int_literal": ([("f64", "<=", -1)], ["f64"]),
    "str_in": ([("s", "in", ["a", "c"])], ["id", "s"]),
    "str_not_in": ([("s", "not in", ["a", "c"])], ["id", "s"]),
    "str_is_null": ([("s", "is", None)], ["id", "s"]),
    "str_is_not_null": ([("s", "is not", None), ("id", ">", 1500)], ["s"]),
    "str_lt": ([("s", "<", "c")], ["id", "s", "b"]),
    "binary_eq": ([("b", "=", b"\x01\x02")], ["id", "b"]),
    "binary_ge": ([("b", ">=", b"\x80")], ["b", "id"]),
    "decimal_gt": ([("dec", ">", D("12.345"))], ["id", "dec"]),
    "decimal_le": ([("dec", "<=", D("-3.5"))], ["dec"]),
    "decimal_in": ([("dec", "not in", [D("0"), D("1.5")]), ("id", "<", 300)], ["dec", "id"]),
    "date_range": ([("day", ">=", datetime.date(2001, 1, 1)),
                    ("day", "<", datetime.date(2001, 3, 1))], ["id", "day"]),
    "date_in": ([("day", "in", [datetime.date(2000, 1, 1), datetime.date(2001, 7, 4)])],
                ["day"]),
    "timestamp_naive": ([("ts", ">", datetime.datetime(2020, 1, 3, 12, 0, 0, 123))],
                        ["id", "ts"]),
    "timestamp_zoned": ([("tsz", "<", datetime.datetime(2020, 1, 9, 3, tzinfo=PLUS5))],
                        ["id", "tsz"]),
    "bool_eq": ([("flag", "=", True), ("id", "<", 2000)], ["id", "flag"]),
    "bool_ne": ([("flag", "!=", True)], ["flag"]),
    "or_of_ands": ([[("id", "<", 100), ("s", "=", "a")],
                    [("id", ">=", 2900)],
                    [("f64", "is", None), ("flag", "=", False)]], ["id", "s", "f64", "flag"]),
    "nested_payload": ([("i32", ">", 80)], ["payload", "st"]),
    "nested_payload_with_id": ([[("id", "<", 30)], [("id", ">=", 2990)]], ["id", "payload", "st"]),
    "list_is_null": ([("payload", "is", None)], ["id", "payload"]),
    "struct_is_not_null": ([("st", "is not", None), ("id", "<", 400)], ["id"]),
    "struct_leaf": ([("st.a", ">=", 45)], ["id", "st"]),
    "all_columns": ([("i32", "<", -90)], None),
    "not_stats_prunable": ([("s", "=", "b0")], ["id", "s"]),
    "no_match_pruned": ([("id", ">", 10**6)], ["s", "f64"]),
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", sorted(CASES))
def test_filters_keep_exactly_the_matching_rows(data, device, name):
    path, table = data
    filters, columns = CASES[name]
    got = read(path, device, columns=columns, filters=filters)
    expected = reference(table, filters, columns)
    same(got, expected)
    if columns is not None:
        assert got.column_names == columns


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", ["int_and_nulls", "float_gt_nan", "str_in", "decimal_gt",
                                  "date_range", "timestamp_naive", "binary_eq", "bool_eq",
                                  "nested_payload_with_id"])
def test_filters_agree_with_pyarrow_read_table(data, device, name):
    """pyarrow reading with the same filters (cases without `is` / `not in`,
    whose meaning differs, see the next test)."""
    path, _ = data
    filters, columns = CASES[name]
    got = read(path, device, columns=columns, filters=filters)
    same(got, pq.read_table(path, columns=columns, filters=filters))


@pytest.mark.parametrize("device", DEVICES)
def test_not_in_keeps_no_null_unlike_pyarrow(data, device):
    path, table = data
    filters = [("s", "not in", ["a", "c"])]
    got = read(path, device, columns=["id", "s"], filters=filters)
    theirs = pq.read_table(path, columns=["id", "s"], filters=filters)
    assert theirs["s"].null_count > 0
    same(got, theirs.filter(pc.is_valid(theirs["s"])))


@pytest.mark.parametrize("device", DEVICES)
def test_no_match_is_an_empty_table_with_the_schema(data, device):
    path, table = data
    for filters in ([("id", ">", 10**6)], [("s", "=", "b0")], [("i32", "is", None), ("i32", ">", 0)]):
        got = gdscan.read_parquet(path, columns=["s", "dec", "payload"], filters=filters,
                                  device=device)
        assert got.num_rows == 0
        arrow = got.to_arrow()
        assert arrow.column_names == ["s", "dec", "payload"]
        if device is None:
            assert arrow.schema.equals(table.select(["s", "dec", "payload"]).schema)
        assert list(gdscan.scan(path, columns=["s"], filters=filters, device=device)) == []


TEXT_CASES = {
    "i32 >= 0 AND i32 < 50 OR s IS NULL":
        [[("i32", ">=", 0), ("i32", "<", 50)], [("s", "is", None)]],
    "s NOT IN ('a', 'c') AND id < 1000": [("s", "not in", ["a", "c"]), ("id", "<", 1000)],
    "day >= DATE '2001-01-01' AND day < DATE '2001-03-01'":
        CASES["date_range"][0],
    "ts > TIMESTAMP '2020-01-03 12:00:00.000123'": CASES["timestamp_naive"][0],
    "dec > 12.345": CASES["decimal_gt"][0],
    "f64 != 0.0": CASES["float_ne_nan"][0],
}


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("text", sorted(TEXT_CASES))
def test_filter_text_keeps_exactly_the_matching_rows(data, device, text):
    path, table = data
    columns = ["id", "payload"]
    got = read(path, device, columns=columns, filter=text)
    same(got, reference(table, TEXT_CASES[text], columns))
    # The same condition as filters=.
    same(got, read(path, device, columns=columns, filters=TEXT_CASES[text]))


@pytest.mark.parametrize("device", DEVICES)
def test_scan_yields_only_tables_with_matching_rows(data, device):
    path, table = data
    # Rows in row groups 0, 4 and 11 only, some of them all filtered out
    # row by row (i32 > 98 is rare): never an empty table.
    filters = [[("id", "<", 250), ("i32", ">", 98)], [("id", ">=", 1000), ("id", "<", 1010)],
               [("id", ">=", 2900)]]
    parts = list(gdscan.scan(path, columns=["id", "s"], filters=filters, device=device))
    assert parts and all(p.num_rows > 0 and p.num_batches == 1 for p in parts)
    assert len(parts) <= 3
    joined = pa.concat_tables([p.to_arrow() for p in parts])
    same(joined, reference(table, filters, ["id", "s"]))


@pytest.mark.parametrize("device", DEVICES)
def test_numpy_scalars(data, device):
    path, table = data
    filters = [("id", "<", np.int64(2000)), ("f64", ">", np.float64(-0.5)),
               ("ts", ">", np.datetime64("2020-01-02T06:00")),
               ("day", "<", np.datetime64("2001-06-01")), ("flag", "!=", np.bool_(True))]
    plain = [("id", "<", 2000), ("f64", ">", -0.5), ("ts", ">", datetime.datetime(2020, 1, 2, 6)),
             ("day", "<", datetime.date(2001, 6, 1)), ("flag", "!=", True)]
    got = read(path, device, columns=["id"], filters=filters)
    assert got.num_rows > 0
    same(got, reference(table, plain, ["id"]))


def test_filter_and_filters_together_is_a_type_error(data):
    path, _ = data
    with pytest.raises(TypeError, match="not both"):
        gdscan.read_parquet(path, filter="id > 1", filters=[("id", ">", 1)], device=None)
    with pytest.raises(TypeError, match="not both"):
        gdscan.scan(path, filter="id > 1", filters=[("id", ">", 1)], device=None)


@pytest.mark.parametrize("filters, match", [
    ([("id", ">")], r"\('id', '>'\): expected a \(column, op, value\) tuple"),
    ([("id", "~", 1)], r"\('id', '~', 1\): unknown operator"),
    ([("id", "=", None)], r"\('id', '=', None\): compare with None"),
    ([("id", "is", 3)], r"\('id', 'is', 3\): 'is' takes None"),
    ([("id", "in", [])], r"\('id', 'in', \[\]\): 'in' takes a non-empty list"),
    ([("s", "in", "abc")], r"\('s', 'in', 'abc'\): 'in' takes a list"),
    ([("s", "in", ["a", None])], r"None in a list"),
    ([("id", "=", object())], r"\('id', '=', <object.*not supported"),
    ([("dec", "=", D("NaN"))], r"not a finite decimal"),
    ([(1, "=", 1)], r"column and op must be strings"),
    ([], r"filters is empty"),
    ([[("id", "=", 1)], []], r"conjunction 1 is empty"),
    ("id = 1", r"a list of \(column, op, value\) tuples"),
])
def test_bad_filters_are_value_errors_naming_the_term(data, filters, match):
    path, _ = data
    with pytest.raises(ValueError, match=match):
        gdscan.read_parquet(path, filters=filters, device=None)


def test_filters_on_a_missing_column_or_a_bad_type_are_parquet_errors(data):
    path, _ = data
    with pytest.raises(gdscan.ParquetError, match="nope"):
        gdscan.read_parquet(path, filters=[("nope", ">", 1)], device=None)
    with pytest.raises(gdscan.ParquetError, match="day"):
        gdscan.read_parquet(path, filters=[("day", ">", b"\x01")], device=None)


def test_python_values_become_exact_literals(data):
    """Values at the edges of their conversion: a datetime's microseconds,
    an aware datetime in another zone, a Decimal with a positive exponent,
    lists given as tuples and ops in other cases and spacing."""
    path, table = data
    cases = [
        [("ts", "=", datetime.datetime(2020, 1, 1, 0, 7, 0, 1))],
        [("tsz", "=", datetime.datetime(2020, 1, 1, 10, tzinfo=PLUS5))],
        [("dec", ">", D("4E+1"))],
        [("i32", "IN", (1, 2, 3))],
        [("s", "NOT   IN", ("a",)), ("id", "<", 50)],
        [("s", "IS NOT", None), ("id", "<", 50)],
    ]
    for filters in cases:
        got = read(path, None, columns=["id"], filters=filters)
        norm = [(c, " ".join(op.lower().split()), v) for c, op, v in filters]
        expected = reference(table, norm, ["id"])
        assert expected.num_rows > 0, filters
        same(got, expected)
