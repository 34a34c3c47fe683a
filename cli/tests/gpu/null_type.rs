//! Columns of arrow's Null type (Parquet's UNKNOWN, always null, leaves) on
//! the GPU decoder, against arrow-rs's own reading: parquet-testing's
//! `null_list.parquet`, files written by arrow-rs's `ArrowWriter` with Null
//! columns flat and nested beside other columns, the Arrow C Device export
//! of such a batch and `gdscan scan --decode --output`. (The whole of
//! parquet-testing's `data/` is
//! `decode::parquet_testing_files_decode_like_arrow_rs_null_list_included`.)

use std::path::{Path, PathBuf};

use arrow::array::{Array, RecordBatch};
use arrow::compute::concat_batches;
use arrow::datatypes::DataType;
use bytes::Bytes;

use super::decode::{assert_gpu, gpu_decode, test_data};
use super::reference::{arrow_rs_decode, assert_same_values, normalise};
use gdscan::decode::array::DeviceBatch;
use gdscan::decode::ffi::{export_device_batch, import_device_batch};
use gdscan::decode::page::nesting::testing::{
    null_columns_schema, random_batch_of, write, writer_settings,
};
use gdscan::decode::scan::{decode, DecodeOptions};
use gdscan::parquet::{Projection, ScanRequest};

/// parquet-testing's `null_list.parquet`, or None (said) without
/// `PARQUET_TEST_DATA`.
fn null_list() -> Option<PathBuf> {
    let Some(dir) = test_data() else {
        eprintln!("SKIPPED: PARQUET_TEST_DATA is not set (parquet-testing's data/)");
        return None;
    };
    Some(dir.join("null_list.parquet"))
}

/// The file of [`null_columns_schema`] (random rows) written with the
/// writer setting `setting` of `writer_settings`, at `dir`.
fn null_columns_file(dir: &Path, setting: usize, rows: usize) -> (PathBuf, Bytes) {
    let schema = std::sync::Arc::new(null_columns_schema());
    let batch = random_batch_of(&schema, rows);
    let (_, props) = writer_settings().swap_remove(setting);
    let bytes = write(&batch, props);
    let path = dir.join(format!("nulls-{setting}.parquet"));
    std::fs::write(&path, &bytes).unwrap();
    (path, bytes)
}

/// Whether `t` is, or holds at any depth, arrow's Null type.
fn holds_null(t: &DataType) -> bool {
    match t {
        DataType::Null => true,
        DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => {
            holds_null(f.data_type())
        }
        DataType::Struct(fields) => fields.iter().any(|f| holds_null(f.data_type())),
        _ => false,
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn null_list_parquet_decodes_like_arrow_rs() {
    assert_gpu();
    let Some(path) = null_list() else {
        return;
    };
    let bytes = Bytes::from(std::fs::read(&path).unwrap());
    let expected = arrow_rs_decode(&bytes, None, None, None);
    assert!(
        matches!(expected.schema().field(0).data_type(),
            DataType::List(f) if f.data_type() == &DataType::Null),
        "arrow-rs reads a list of Null: {:?}",
        expected.schema()
    );
    let got = gpu_decode(&path, ScanRequest::default()).expect("the GPU decodes null_list");
    assert_eq!(
        got.schema().field(0).data_type(),
        expected.schema().field(0).data_type()
    );
    assert_same_values("null_list.parquet", &expected, &got);
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn null_columns_written_by_arrow_rs_decode_like_arrow_rs() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    for setting in 0..writer_settings().len() {
        let (path, bytes) = null_columns_file(dir.path(), setting, 500);
        let expected = arrow_rs_decode(&bytes, None, None, None);
        let label = format!(
            "Null columns, writer setting {}",
            writer_settings()[setting].0
        );
        let got =
            gpu_decode(&path, ScanRequest::default()).unwrap_or_else(|e| panic!("{label}: {e}"));
        assert!(
            got.schema()
                .fields()
                .iter()
                .filter(|f| holds_null(f.data_type()))
                .count()
                >= 7,
            "{label}: {:?}",
            got.schema()
        );
        assert_same_values(&label, &expected, &got);
        // Projections: Null columns beside values, Null columns alone, a
        // flat Null column alone (no nesting at all).
        for (columns, leaves) in [
            (vec!["id", "list", "beside"], vec![0, 2, 4, 5]),
            (vec!["flat", "lists", "alone"], vec![1, 3, 6]),
            (vec!["flat"], vec![1]),
            (vec!["structs", "values"], vec![7, 8, 9, 10]),
        ] {
            let request = ScanRequest {
                projection: Projection::Columns(columns.iter().map(|c| c.to_string()).collect()),
                ..ScanRequest::default()
            };
            let expected = arrow_rs_decode(&bytes, Some(&leaves), None, None);
            let got =
                gpu_decode(&path, request).unwrap_or_else(|e| panic!("{label} {columns:?}: {e}"));
            assert_same_values(&format!("{label}, {columns:?}"), &expected, &got);
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn null_columns_cross_the_c_device_interface() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let (path, bytes) = null_columns_file(dir.path(), 0, 300);
    let stream = decode(
        path.to_str().unwrap(),
        ScanRequest::default(),
        DecodeOptions::from_env().unwrap(),
    )
    .unwrap();
    let batches: Vec<DeviceBatch> = stream.map(|b| b.unwrap()).collect();
    assert!(!batches.is_empty());
    let mut host = Vec::new();
    for batch in &batches {
        let (schema, array) = export_device_batch(batch).unwrap();
        let top = &array.array;
        let flat = top.child(1);
        // A Null array in the C Data Interface: no buffers, every value null.
        assert_eq!(flat.num_buffers(), 0);
        assert_eq!(
            (flat.len(), flat.null_count()),
            (batch.num_rows(), batch.num_rows())
        );
        // In a list: the list's offsets and validity, the Null child's none.
        let list = top.child(2);
        assert_eq!(list.num_buffers(), 2);
        let item = list.child(0);
        assert_eq!((item.num_buffers(), item.null_count()), (0, item.len()));
        let imported = unsafe { import_device_batch(&schema, array) }.unwrap();
        host.push(imported.to_host().unwrap());
    }
    let got = concat_batches(&host[0].schema(), &host).unwrap();
    assert_same_values(
        "through the C Device interface",
        &arrow_rs_decode(&bytes, None, None, None),
        &got,
    );
}

/// Reads an Arrow IPC file as one batch.
fn read_ipc(path: &Path) -> RecordBatch {
    let file = std::fs::File::open(path).unwrap();
    let reader = arrow::ipc::reader::FileReader::try_new(file, None).unwrap();
    let schema = reader.schema();
    let batches: Vec<RecordBatch> = reader.map(|b| b.unwrap()).collect();
    normalise(&concat_batches(&schema, &batches).unwrap())
}

/// The `gdscan` binary: `GDSCAN_BIN` where the tests run from carried
/// binaries (the GPU machine has no build tree), else the one cargo built
/// beside this test. Missing either way is a failure, not a skip.
fn gdscan_binary() -> std::path::PathBuf {
    let path = std::env::var_os("GDSCAN_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_gdscan").into());
    assert!(
        path.is_file(),
        "no gdscan binary at {} (set GDSCAN_BIN)",
        path.display()
    );
    path
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn null_columns_through_gdscan_scan_decode_output() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let mut files = vec![null_columns_file(dir.path(), 1, 400)];
    if let Some(path) = null_list() {
        files.push((path.clone(), Bytes::from(std::fs::read(&path).unwrap())));
    }
    for (path, bytes) in files {
        let out = dir.path().join("out.arrow");
        let run = std::process::Command::new(gdscan_binary())
            .arg("scan")
            .arg(&path)
            .args(["--decode", "--device", "0", "--output"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}: {}",
            path.display(),
            String::from_utf8_lossy(&run.stderr)
        );
        let got = read_ipc(&out);
        assert!(got
            .schema()
            .fields()
            .iter()
            .any(|f| holds_null(f.data_type())));
        let expected = arrow_rs_decode(&bytes, None, None, None);
        assert_same_values(&path.display().to_string(), &expected, &got);
        assert!(got.columns().iter().all(|c| c.len() == expected.num_rows()));
    }
}
