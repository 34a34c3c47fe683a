//! The reference every GPU decode is compared with: arrow-rs's CPU decode
//! of the same bytes, normalised to the types the GPU decoder produces
//! (strings and binaries as views, dictionary-typed columns as their values).

use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch};
use arrow::compute::{cast, concat_batches};
use arrow::datatypes::{DataType, Field, Schema};
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

/// Casts string and binary columns to views and unpacks dictionaries, so a
/// CPU batch compares with a GPU one value by value.
pub fn normalise(batch: &RecordBatch) -> RecordBatch {
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        let target = view_type(column.data_type());
        let column = if &target == column.data_type() {
            column.clone()
        } else {
            cast(column, &target).expect("cast to the GPU decoder's type")
        };
        fields.push(Field::new(field.name(), target, true));
        columns.push(column);
    }
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).expect("normalised batch")
}

fn view_type(t: &DataType) -> DataType {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 => DataType::Utf8View,
        DataType::Binary | DataType::LargeBinary => DataType::BinaryView,
        DataType::Dictionary(_, values) => view_type(values),
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
                "column {name} differs from arrow-rs first at row {first}"
            ));
        }
    }
    Ok(())
}

/// arrow-rs's decode of `file` (every column and row), or why it refused
/// it: an error, or a panic of its decoder (caught; the caller keeps the
/// panic hook quiet).
pub fn arrow_rs_try_decode(file: &Bytes) -> Result<RecordBatch, String> {
    let run = || -> Result<RecordBatch, String> {
        let reader = ParquetRecordBatchReaderBuilder::try_new(file.clone())
            .map_err(|e| e.to_string())?
            .with_batch_size(64 * 1024)
            .build()
            .map_err(|e| e.to_string())?;
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
