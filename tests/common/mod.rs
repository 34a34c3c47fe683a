//! Files the tests write themselves.

#![allow(dead_code)]

use std::sync::Arc;

use arrow::array::{ArrayRef, Date32Array, Decimal128Array, Float64Array, Int64Array, StringArray};
use arrow::datatypes::{DataType, Field, Schema};
use arrow::record_batch::RecordBatch;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::{EnabledStatistics, WriterProperties};

pub const ROWS: usize = 20_000;

/// A lineitem-like table: sorted keys (so statistics prune), dates, decimals, strings.
pub fn batch() -> RecordBatch {
    let key: Int64Array = (0..ROWS as i64).collect();
    let qty: Float64Array = (0..ROWS).map(|i| (i % 50) as f64 + 1.0).collect();
    let disc = Decimal128Array::from((0..ROWS).map(|i| (i % 11) as i128).collect::<Vec<_>>())
        .with_precision_and_scale(15, 2)
        .unwrap();
    let date = Date32Array::from(
        (0..ROWS)
            .map(|i| 8000 + (i / 10) as i32)
            .collect::<Vec<_>>(),
    );
    let flag: StringArray = (0..ROWS).map(|i| Some(["A", "N", "R"][i % 3])).collect();
    let comment: StringArray = (0..ROWS)
        .map(|i| {
            if i % 7 == 0 {
                None
            } else {
                Some(format!("comment number {i}"))
            }
        })
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("l_orderkey", DataType::Int64, false),
        Field::new("l_quantity", DataType::Float64, false),
        Field::new("l_discount", DataType::Decimal128(15, 2), false),
        Field::new("l_shipdate", DataType::Date32, false),
        Field::new("l_returnflag", DataType::Utf8, false),
        Field::new("l_comment", DataType::Utf8, true),
    ]));
    let cols: Vec<ArrayRef> = vec![
        Arc::new(key),
        Arc::new(qty),
        Arc::new(disc),
        Arc::new(date),
        Arc::new(flag),
        Arc::new(comment),
    ];
    RecordBatch::try_new(schema, cols).unwrap()
}

pub fn write_file(dir: &std::path::Path) -> std::path::PathBuf {
    let path = dir.join("lineitem.parquet");
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(4_000))
        .set_data_page_row_count_limit(500)
        .set_write_batch_size(500)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_compression(Compression::SNAPPY)
        .build();
    let file = std::fs::File::create(&path).unwrap();
    let mut w = ArrowWriter::try_new(file, batch().schema(), Some(props)).unwrap();
    w.write(&batch()).unwrap();
    w.close().unwrap();
    path
}

/// Drops `path` from the page cache: its dirty pages written first, then
/// the kernel advised to forget them (on a disk-backed file system; tmpfs
/// keeps them).
pub fn evict(path: &std::path::Path) {
    std::fs::File::open(path).unwrap().sync_all().unwrap();
    gdscan::engine::drop_from_cache(path).unwrap();
}
