//! The decoder's bounded wait on the GPU: a row group the GPU has not
//! finished within `DecodeOptions::device_timeout` ends the scan with a
//! typed `DecodeError::DeviceTimeout` naming the file, row group and
//! columns, and the process stays usable.

use std::sync::Arc;
use std::time::Duration;

use arrow::array::{ArrayRef, Int64Array, RecordBatch, StringArray};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::file::properties::WriterProperties;

use super::decode::assert_gpu;
use super::reference::{arrow_rs_decode, assert_same_values};
use gdscan::decode::scan::{decode, DecodeError, DecodeOptions};
use gdscan::parquet::ScanRequest;

/// A file of two row groups of about 100 MB each: the GPU is still
/// copying the first when the decoder starts waiting for it (smaller row
/// groups can be done by then).
fn write_file(path: &std::path::Path) {
    let n = 4_000_000usize;
    let ints: ArrayRef = Arc::new(Int64Array::from_iter_values(
        (0..n as i64).map(|i| i * 7919),
    ));
    let strings: ArrayRef = Arc::new(StringArray::from_iter_values(
        (0..n).map(|i| format!("value {i} {}", "x".repeat(i % 29))),
    ));
    let batch = RecordBatch::try_from_iter([("i", ints), ("s", strings)]).unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(2_000_000))
        .set_dictionary_enabled(false)
        .build();
    let mut w = ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        batch.schema(),
        Some(props),
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn a_row_group_past_the_device_timeout_is_a_typed_error_and_the_process_goes_on() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.parquet");
    write_file(&path);
    let file = path.to_str().unwrap();

    // A limit no row group can meet, and one group on the GPU at a time so
    // that the first wait starts right after its launch: it times out.
    let options = DecodeOptions {
        device_timeout: Duration::from_nanos(1),
        depth: 1,
        ..DecodeOptions::from_env().unwrap()
    };
    let mut stream = decode(file, ScanRequest::default(), options).unwrap();
    let mut ok = 0;
    let error = loop {
        match stream.next() {
            Some(Ok(_)) => ok += 1,
            Some(Err(e)) => break e,
            None => panic!("every row group finished within 1 ns ({ok} batches)"),
        }
    };
    match &error {
        DecodeError::DeviceTimeout {
            file: f,
            first_column,
            columns,
            pages,
            limit,
            ..
        } => {
            assert_eq!(f, file);
            assert_eq!((first_column.as_str(), *columns), ("i", 2));
            assert!(*pages >= 2);
            assert_eq!(*limit, Duration::from_nanos(1));
        }
        other => panic!("expected a device timeout, got {other}"),
    }
    let text = error.to_string();
    assert!(
        text.contains("did not finish within") && text.contains("row group"),
        "{text}"
    );
    // Nothing after the error: never partial data.
    assert!(stream.next().is_none());
    drop(stream);

    // The process goes on: the same file decodes whole with the default limit.
    let options = DecodeOptions::from_env().unwrap();
    let mut batches = Vec::new();
    for batch in decode(file, ScanRequest::default(), options).unwrap() {
        batches.push(batch.unwrap().to_host().unwrap());
    }
    let got = arrow::compute::concat_batches(&batches[0].schema(), &batches).unwrap();
    let expected = arrow_rs_decode(
        &Bytes::from(std::fs::read(&path).unwrap()),
        None,
        None,
        None,
    );
    assert_same_values("after a timeout", &expected, &got);
    eprintln!("timed out after {ok} batch(es): {text}");
}
