//! The reference every GPU decode is compared with: arrow-rs's CPU decode
//! of the same bytes, normalised to the types the GPU decoder produces
//! (strings and binaries as views, dictionary-typed columns as their values).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch};
use arrow::compute::{cast, concat_batches};
use arrow::datatypes::{DataType, Field, FieldRef, Schema};
use bytes::Bytes;
use parquet::arrow::arrow_reader::{ParquetRecordBatchReaderBuilder, RowSelection};
use parquet::arrow::ProjectionMask;

/// arrow-rs's decode of `file`: the leaves in `leaves` (all when `None`),
/// the rows in `selection` (all when `None`), as one batch with the GPU
/// decoder's types.
pub fn arrow_rs_decode(
    file: &Bytes,
    leaves: Option<&[usize]>,
    row_groups: Option<Vec<usize>>,
    selection: Option<RowSelection>,
) -> RecordBatch {
    let mut builder = ParquetRecordBatchReaderBuilder::try_new(file.clone())
        .expect("arrow-rs opens the file")
        .with_batch_size(64 * 1024);
    if let Some(leaves) = leaves {
        let mask = ProjectionMask::leaves(builder.parquet_schema(), leaves.iter().copied());
        builder = builder.with_projection(mask);
    }
    if let Some(rgs) = row_groups {
        builder = builder.with_row_groups(rgs);
    }
    if let Some(sel) = selection {
        builder = builder.with_row_selection(sel);
    }
    let reader = builder.build().expect("arrow-rs reader");
    let schema = arrow::record_batch::RecordBatchReader::schema(&reader);
    let batches: Vec<RecordBatch> = reader.map(|b| b.expect("arrow-rs decodes")).collect();
    normalise(&concat_batches(&schema, &batches).expect("concat"))
}

/// Casts string and binary columns to views and unpacks dictionaries, at
/// any depth (inside lists, maps and structs too), so a CPU batch compares
/// with a GPU one value by value.
pub fn normalise(batch: &RecordBatch) -> RecordBatch {
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let target = view_type(column.data_type());
        let column = if &target == column.data_type() {
            column.clone()
        } else {
            arrow::array::make_array(to_views(column.to_data()))
        };
        fields.push(Field::new(field.name(), target, true));
        columns.push(column);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("normalised batch")
}

/// `data` with the GPU decoder's types ([`view_type`]): leaves cast,
/// nested arrays rebuilt around their children as they are. Not through
/// arrow's cast of a struct, which refuses what arrow-rs's reader makes: a
/// non-nullable field with nulls where its nullable parent is null.
fn to_views(data: arrow::array::ArrayData) -> arrow::array::ArrayData {
    let target = view_type(data.data_type());
    if &target == data.data_type() {
        return data;
    }
    match data.data_type() {
        DataType::List(_)
        | DataType::LargeList(_)
        | DataType::FixedSizeList(..)
        | DataType::Map(..)
        | DataType::Struct(_) => {
            let children = data.child_data().iter().cloned().map(to_views).collect();
            let builder = data.into_builder().data_type(target).child_data(children);
            // SAFETY: the same buffers and offsets arrow-rs built, each
            // child of the same length in its new type; only the types of
            // strings and binaries below changed.
            unsafe { builder.build_unchecked() }
        }
        _ => cast(&arrow::array::make_array(data), &target)
            .expect("cast to the GPU decoder's type")
            .to_data(),
    }
}

/// The GPU decoder's type for arrow-rs's `t`: strings and binaries as
/// views and dictionaries as their values, at any depth (the fields of
/// lists, maps and structs keep their names, nullability and metadata).
fn view_type(t: &DataType) -> DataType {
    let field =
        |f: &FieldRef| Arc::new(f.as_ref().clone().with_data_type(view_type(f.data_type())));
    match t {
        DataType::Utf8 | DataType::LargeUtf8 => DataType::Utf8View,
        DataType::Binary | DataType::LargeBinary => DataType::BinaryView,
        DataType::Dictionary(_, values) => view_type(values),
        DataType::List(f) => DataType::List(field(f)),
        DataType::LargeList(f) => DataType::LargeList(field(f)),
        DataType::FixedSizeList(f, size) => DataType::FixedSizeList(field(f), *size),
        DataType::Map(f, sorted) => DataType::Map(field(f), *sorted),
        DataType::Struct(fields) => DataType::Struct(fields.iter().map(field).collect()),
        other => other.clone(),
    }
}

/// Asserts two batches hold the same values, nulls included, column by
/// column, and names the first difference.
pub fn assert_same_values(what: &str, expected: &RecordBatch, got: &RecordBatch) {
    if let Err(difference) = same_values(expected, got) {
        panic!("{what}: {difference}");
    }
}

/// Whether two batches hold the same values, nulls included; else the
/// first difference, in words.
pub fn same_values(expected: &RecordBatch, got: &RecordBatch) -> Result<(), String> {
    let got = normalise(got);
    if expected.num_columns() != got.num_columns() {
        return Err(format!(
            "{} columns, arrow-rs has {}",
            got.num_columns(),
            expected.num_columns()
        ));
    }
    if expected.num_rows() != got.num_rows() {
        return Err(format!(
            "{} rows, arrow-rs has {}",
            got.num_rows(),
            expected.num_rows()
        ));
    }
    for (i, (e, g)) in expected.columns().iter().zip(got.columns()).enumerate() {
        let name = expected.schema().field(i).name().clone();
        if e.data_type() != g.data_type() {
            return Err(format!(
                "column {name}: type {} against {}",
                g.data_type(),
                e.data_type()
            ));
        }
        if e.null_count() != g.null_count() {
            return Err(format!(
                "column {name}: {} nulls against {}",
                g.null_count(),
                e.null_count()
            ));
        }
        if e.as_ref() != g.as_ref() {
            let first = first_difference(e, g);
            return Err(format!(
                "column {name} differs from arrow-rs first at row {first}: {}",
                row_pair(e, g, first)
            ));
        }
    }
    Ok(())
}

/// `batch`'s rows where `p` is TRUE under SQL's three-valued logic
/// (`Predicate::evaluate`, then arrow-rs's `filter_record_batch`), or why
/// the host refuses the predicate.
pub fn filter_on_host(
    batch: &RecordBatch,
    p: &gdscan::parquet::Predicate,
) -> Result<RecordBatch, String> {
    let mask = p.evaluate(batch).map_err(|e| e.to_string())?;
    arrow::compute::filter_record_batch(batch, &mask).map_err(|e| e.to_string())
}

/// `batch` cut to its top-level columns `names` in the batch's (the
/// file's) order, as the decoder hands a projection out; all of them when
/// `names` is `None`.
pub fn in_file_order(batch: &RecordBatch, names: Option<&[String]>) -> RecordBatch {
    let Some(names) = names else {
        return batch.clone();
    };
    let mut indices: Vec<usize> = names
        .iter()
        .map(|c| batch.schema().index_of(c).expect("a projected column"))
        .collect();
    indices.sort_unstable();
    batch.project(&indices).expect("project")
}

/// arrow-rs's decode of `file` (every column and row), or why it refused
/// it: an error, or a panic of its decoder (caught; the caller keeps the
/// panic hook quiet).
pub fn arrow_rs_try_decode(file: &Bytes) -> Result<RecordBatch, String> {
    arrow_rs_try_decode_rows(file, None, None)
}

/// [`arrow_rs_try_decode`] of the row groups `row_groups` (all when
/// `None`) and the rows `selection` keeps in them (all when `None`).
pub fn arrow_rs_try_decode_rows(
    file: &Bytes,
    row_groups: Option<Vec<usize>>,
    selection: Option<RowSelection>,
) -> Result<RecordBatch, String> {
    let run = || -> Result<RecordBatch, String> {
        let mut builder = ParquetRecordBatchReaderBuilder::try_new(file.clone())
            .map_err(|e| e.to_string())?
            .with_batch_size(64 * 1024);
        if let Some(rgs) = row_groups.clone() {
            builder = builder.with_row_groups(rgs);
        }
        if let Some(sel) = selection.clone() {
            builder = builder.with_row_selection(sel);
        }
        let reader = builder.build().map_err(|e| e.to_string())?;
        let schema = arrow::record_batch::RecordBatchReader::schema(&reader);
        let batches = reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let batch = concat_batches(&schema, &batches).map_err(|e| e.to_string())?;
        Ok(normalise(&batch))
    };
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
        .unwrap_or_else(|_| Err("arrow-rs panicked".to_string()))
}

fn first_difference(e: &ArrayRef, g: &ArrayRef) -> usize {
    (0..e.len())
        .find(|&i| e.slice(i, 1).as_ref() != g.slice(i, 1).as_ref())
        .unwrap_or(e.len())
}

/// Row `row` of both columns, shortened, for a difference's message (a
/// nested row shows its lists, structs and leaves).
fn row_pair(e: &ArrayRef, g: &ArrayRef, row: usize) -> String {
    let show = |a: &ArrayRef| {
        let text = format!(
            "{:?}",
            a.slice(row.min(a.len().saturating_sub(1)), 1.min(a.len()))
        );
        let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
        match text.char_indices().nth(600) {
            Some((cut, _)) => format!("{}...", &text[..cut]),
            None => text,
        }
    };
    format!("arrow-rs {} / GPU {}", show(e), show(g))
}

/// The rows of the comparison's own test, as plain data: a
/// `list<struct<a: int32?, b: list<utf8?>?>?>?` column (outer lists of
/// struct entries, each entry with `a` and an inner list of strings) and a
/// `map<utf8, int64?>?` column.
#[derive(Clone)]
struct NestedSample {
    outer_lengths: Vec<usize>,
    outer_valid: Vec<bool>,
    entry_valid: Vec<bool>,
    a: Vec<Option<i32>>,
    inner_lengths: Vec<usize>,
    inner_valid: Vec<bool>,
    strings: Vec<Option<&'static str>>,
    map_lengths: Vec<usize>,
    map_valid: Vec<bool>,
    keys: Vec<&'static str>,
    values: Vec<Option<i64>>,
}

impl NestedSample {
    /// Four rows: two entries (one a null struct); an empty list; a null
    /// list; an entry of nulls and one with an empty inner list.
    fn base() -> Self {
        NestedSample {
            outer_lengths: vec![2, 0, 0, 2],
            outer_valid: vec![true, true, false, true],
            entry_valid: vec![true, false, true, true],
            a: vec![Some(1), None, None, Some(4)],
            inner_lengths: vec![2, 0, 0, 0],
            inner_valid: vec![true, false, false, true],
            strings: vec![Some("x"), None],
            map_lengths: vec![1, 0, 2, 0],
            map_valid: vec![true, true, true, false],
            keys: vec!["k", "k", "l"],
            values: vec![Some(7), None, Some(9)],
        }
    }

    /// The sample as a batch of arrow-rs's types (strings as `Utf8`).
    fn batch(&self) -> RecordBatch {
        use arrow::array::{Int32Array, Int64Array, ListArray, MapArray, StringArray, StructArray};
        use arrow::buffer::{NullBuffer, OffsetBuffer};
        let list_of = |item: Field, lengths: &[usize], valid: &[bool], values: ArrayRef| {
            ListArray::new(
                Arc::new(item),
                OffsetBuffer::from_lengths(lengths.iter().copied()),
                values,
                Some(NullBuffer::from(valid.to_vec())),
            )
        };
        let strings: ArrayRef = Arc::new(StringArray::from(self.strings.clone()));
        let inner = list_of(
            Field::new("item", DataType::Utf8, true),
            &self.inner_lengths,
            &self.inner_valid,
            strings,
        );
        let entry_fields = vec![
            Field::new("a", DataType::Int32, true),
            Field::new("b", inner.data_type().clone(), true),
        ];
        let entries = StructArray::new(
            entry_fields.into(),
            vec![Arc::new(Int32Array::from(self.a.clone())), Arc::new(inner)],
            Some(NullBuffer::from(self.entry_valid.clone())),
        );
        let outer = list_of(
            Field::new("item", entries.data_type().clone(), true),
            &self.outer_lengths,
            &self.outer_valid,
            Arc::new(entries),
        );
        let key_value = StructArray::new(
            vec![
                Field::new("keys", DataType::Utf8, false),
                Field::new("values", DataType::Int64, true),
            ]
            .into(),
            vec![
                Arc::new(StringArray::from(self.keys.clone())),
                Arc::new(Int64Array::from(self.values.clone())),
            ],
            None,
        );
        let map = MapArray::new(
            Arc::new(Field::new("entries", key_value.data_type().clone(), false)),
            OffsetBuffer::from_lengths(self.map_lengths.iter().copied()),
            key_value,
            Some(NullBuffer::from(self.map_valid.clone())),
            false,
        );
        RecordBatch::try_from_iter([
            ("l", Arc::new(outer) as ArrayRef),
            ("m", Arc::new(map) as ArrayRef),
        ])
        .expect("sample batch")
    }
}

/// The nested comparison is strict: every deliberate change of a nested
/// sample (a leaf value, a leaf null, a list length, an empty list made
/// null, a struct made null, a map key or value) is reported; the same
/// values with list offsets that start elsewhere, and strings as views,
/// are not. (A CPU test: this binary runs it without a GPU.)
#[test]
fn nested_comparison_reports_every_difference() {
    let base = NestedSample::base();
    let expected = normalise(&base.batch());
    assert_eq!(same_values(&expected, &base.batch()), Ok(()));
    // The same rows after a row of other values, sliced off: the lists'
    // offsets no longer start at 0.
    let mut longer = base.clone();
    longer.outer_lengths.insert(0, 1);
    longer.outer_valid.insert(0, true);
    longer.entry_valid.insert(0, true);
    longer.a.insert(0, Some(-3));
    longer.inner_lengths.insert(0, 1);
    longer.inner_valid.insert(0, true);
    longer.strings.insert(0, Some("before"));
    longer.map_lengths.insert(0, 1);
    longer.map_valid.insert(0, true);
    longer.keys.insert(0, "z");
    longer.values.insert(0, Some(-1));
    let shifted = longer.batch().slice(1, 4);
    assert_eq!(same_values(&expected, &shifted), Ok(()), "shifted offsets");

    type Change = fn(&mut NestedSample);
    let changes: [(&str, Change); 9] = [
        ("a leaf value", |s| s.strings[0] = Some("y")),
        ("a leaf null", |s| s.strings[1] = Some("")),
        ("a struct field null", |s| s.a[3] = None),
        ("an empty list made null", |s| s.outer_valid[1] = false),
        ("an empty inner list made null", |s| {
            s.inner_valid[3] = false
        }),
        ("a null struct made a struct of nulls", |s| {
            s.entry_valid[1] = true
        }),
        ("an element moved to the next list", |s| {
            s.outer_lengths = vec![1, 1, 0, 2]
        }),
        ("a map key", |s| s.keys[2] = "m"),
        ("a map value made null", |s| s.values[2] = None),
    ];
    for (what, change) in changes {
        let mut changed = base.clone();
        change(&mut changed);
        let verdict = same_values(&expected, &changed.batch());
        assert!(verdict.is_err(), "{what}: not reported");
        eprintln!("{what}: {}", verdict.unwrap_err());
    }
}

/// pyarrow's decode of the file at `path` (every column and row), cast to
/// the types of `like` (the GPU decoder's batch: pyarrow names map fields
/// and types strings its own way), or why it refused it; None when there
/// is no `python3` with pyarrow here (the GPU machine has both). The second
/// reader, independent of arrow-rs, for the pages arrow-rs refuses while
/// the format allows them.
pub fn pyarrow_try_decode(
    path: &std::path::Path,
    like: &RecordBatch,
) -> Option<Result<RecordBatch, String>> {
    let out = path.with_extension("pyarrow.arrow");
    let script = "import sys, pyarrow as pa, pyarrow.parquet as pq\n\
                  try:\n    t = pq.read_table(sys.argv[1])\n\
                  except Exception as e:\n    print(e); sys.exit(3)\n\
                  t = t.combine_chunks()\n\
                  with pa.ipc.new_file(sys.argv[2], t.schema) as w:\n    w.write_table(t)\n";
    let run = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .arg(&out)
        .output()
        .ok()?;
    match run.status.code() {
        Some(0) => {}
        Some(3) => return Some(Err(String::from_utf8_lossy(&run.stdout).trim().to_string())),
        // No pyarrow (an import error) or no python: no second reader.
        _ => return None,
    }
    let read = || -> Result<RecordBatch, String> {
        let file = std::fs::File::open(&out).map_err(|e| e.to_string())?;
        let reader =
            arrow::ipc::reader::FileReader::try_new(file, None).map_err(|e| e.to_string())?;
        let schema = reader.schema();
        let batches = reader
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| e.to_string())?;
        let batch = concat_batches(&schema, &batches).map_err(|e| e.to_string())?;
        let like = normalise(like);
        let batch = normalise(&batch);
        let columns = batch
            .columns()
            .iter()
            .zip(like.columns())
            .map(|(c, l)| cast(c, l.data_type()).map_err(|e| e.to_string()))
            .collect::<Result<Vec<ArrayRef>, _>>()?;
        RecordBatch::try_new(like.schema(), columns).map_err(|e| e.to_string())
    };
    Some(read())
}

/// pyarrow, the second reader, reads a nested sample written by arrow-rs
/// to the same values (cast to the GPU decoder's types), and reports a
/// file it cannot read as its refusal. Skipped, visibly, where there is no
/// pyarrow (the GPU machine and CI have it). (A CPU test.)
#[test]
fn pyarrow_reads_what_arrow_rs_writes() {
    let batch = NestedSample::base().batch();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sample.parquet");
    let mut out = Vec::new();
    let mut writer = parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), None).unwrap();
    writer.write(&batch).unwrap();
    writer.close().unwrap();
    std::fs::write(&path, &out).unwrap();
    let Some(theirs) = pyarrow_try_decode(&path, &batch) else {
        eprintln!("skipped: no python3 with pyarrow here");
        return;
    };
    let theirs = theirs.expect("pyarrow reads the sample");
    assert_eq!(same_values(&theirs, &batch), Ok(()));
    std::fs::write(&path, &out[..out.len() / 2]).unwrap();
    assert!(matches!(pyarrow_try_decode(&path, &batch), Some(Err(_))));
}
