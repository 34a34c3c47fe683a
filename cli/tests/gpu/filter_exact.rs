//! The exact filter through the decoder (`decode` with a predicate): the
//! batches hold exactly the rows where the predicate is TRUE, in file
//! order, with the projected columns only, compared value by value with
//! arrow-rs's decode of the whole file filtered on the host by arrow-rs's
//! compute kernels (`Predicate::evaluate`, `filter_record_batch`): TPC-H
//! lineitem with the lineitem predicates of Q1, Q6, Q12, Q14 and Q19 (in
//! small row groups and pages, so that statistics prune some and the GPU
//! filters the rest), and parquet-testing's files with predicates on every
//! flat type beside flat and nested payload columns; each in one pass
//! (`FilterMode::Exact`) and late materialized (`FilterMode::Late`).

use std::path::Path;

use arrow::array::RecordBatch;
use arrow::compute::concat_batches;
use bytes::Bytes;

use super::decode::{assert_gpu, test_data};
use super::reference::{arrow_rs_decode, assert_same_values, filter_on_host, in_file_order};
use gdscan::decode::scan::{decode, DecodeError, DecodeOptions, DecodeReport, FilterMode};
use gdscan::parquet::{Predicate, Projection, ScanRequest};
use gdscan_cli::tpch::{generate, GenOptions, Table, SCAN_FILTERS};

/// The decode of `path` with `request` filtered in `mode`: the batches
/// copied back, concatenated, the decoder's report and how many batches
/// it handed out (none of them empty); or the decoder's typed error.
pub(super) fn try_gpu_filtered(
    path: &Path,
    request: ScanRequest,
    mode: FilterMode,
) -> Result<(RecordBatch, DecodeReport, usize), DecodeError> {
    let options = DecodeOptions {
        filter: mode,
        ..DecodeOptions::from_env().expect("decode options")
    };
    let mut stream = decode(path.to_str().expect("utf-8 path"), request, options)?;
    let schema = stream.schema().clone();
    let mut host = Vec::new();
    for batch in stream.by_ref() {
        let batch = batch?;
        assert!(batch.num_rows() > 0, "an empty batch was handed out");
        host.push(batch.to_host().expect("copy back"));
    }
    let batches = host.len();
    let all = match host.first() {
        Some(first) => concat_batches(&first.schema(), &host).expect("concat"),
        None => RecordBatch::new_empty(schema),
    };
    Ok((all, stream.report(), batches))
}

/// The columns `columns` of a test (all when empty).
fn projection(columns: &[&str]) -> Option<Vec<String>> {
    (!columns.is_empty()).then(|| columns.iter().map(|s| s.to_string()).collect())
}

/// Decodes `path` with `columns` (all when empty) and `filter`: as
/// [`try_gpu_filtered`], an error failing the test.
fn gpu_filtered(
    path: &Path,
    columns: &[&str],
    filter: &str,
    mode: FilterMode,
) -> (RecordBatch, DecodeReport, usize) {
    let request = ScanRequest {
        projection: projection(columns).map_or(Projection::All, Projection::Columns),
        predicate: Some(filter.parse().unwrap()),
        ..ScanRequest::default()
    };
    try_gpu_filtered(path, request, mode)
        .unwrap_or_else(|e| panic!("{}: {filter}: {e}", path.display()))
}

/// arrow-rs's rows of `file` where `filter` is TRUE, cut to `columns`'
/// top-level fields (all when empty) in the file's order, as the decoder
/// hands them out.
fn host_filtered(file: &Bytes, columns: &[&str], filter: &str) -> RecordBatch {
    let all = arrow_rs_decode(file, None, None, None);
    let predicate: Predicate = filter.parse().unwrap();
    let kept = filter_on_host(&all, &predicate).unwrap();
    in_file_order(&kept, projection(columns).as_deref())
}

/// `filter` on `path` in one pass and late materialized: both exactly
/// arrow-rs's rows, and the report's counts agree with them.
fn check(path: &Path, columns: &[&str], filter: &str) {
    let what = format!("{} [{}] WHERE {filter}", path.display(), columns.join(","));
    let file = Bytes::from(std::fs::read(path).unwrap());
    let expected = host_filtered(&file, columns, filter);
    for mode in [FilterMode::Exact, FilterMode::Late] {
        let what = format!("{what} ({mode:?})");
        let (got, report, batches) = gpu_filtered(path, columns, filter, mode);
        assert_same_values(&what, &expected, &got);
        let f = &report.filter;
        assert_eq!(f.rows_out, expected.num_rows() as u64, "{what}");
        assert_eq!(f.batches_in - f.batches_empty, batches, "{what}");
        assert!(f.rows_in >= f.rows_out, "{what}");
        eprintln!(
            "{what}: {} of {} decoded rows kept, {} of {} row groups empty, {} payload pages ({} bytes) skipped",
            f.rows_out, f.rows_in, f.batches_empty, f.batches_in, f.late_pages_skipped, f.late_bytes_skipped
        );
    }
}

/// Lineitem (SF 0.1, row groups of 50 000 rows, pages of 5 000) with each
/// query's lineitem predicate: exactly arrow-rs's rows; with pruning only,
/// the decoder hands out every row the statistics keep (a superset).
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn tpch_lineitem_scans_keep_exactly_their_filters_rows() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let options = GenOptions {
        tables: vec![Table::LineItem],
        row_group_rows: 50_000,
        page_rows: Some(5_000),
        parts: Some(1),
        quiet: true,
        ..GenOptions::new(0.1, dir.path())
    };
    generate(&options).unwrap();
    let path = std::fs::read_dir(dir.path().join(Table::LineItem.name()))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "parquet"))
        .unwrap();
    for scan in SCAN_FILTERS {
        check(&path, scan.columns, scan.filter);
        let (pruned, report, _) =
            gpu_filtered(&path, scan.columns, scan.filter, FilterMode::PruneOnly);
        assert_eq!(
            report.filter.batches_in, 0,
            "{}: no filter with PruneOnly",
            scan.query
        );
        let exact = host_filtered(
            &Bytes::from(std::fs::read(&path).unwrap()),
            scan.columns,
            scan.filter,
        );
        assert!(pruned.num_rows() >= exact.num_rows(), "{}", scan.query);
    }
}

/// parquet-testing's files: predicates on every flat type (integers of
/// every width, booleans, floats, strings by value and prefix, INT96
/// timestamps, decimals), filter columns projected or not, and nested
/// payload columns (lists of lists, maps, structs) kept whole.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn parquet_testing_files_filter_like_arrow_rs() {
    assert_gpu();
    let Some(data) = test_data() else {
        panic!("PARQUET_TEST_DATA is not set: the GPU run needs parquet-testing's data/");
    };
    let cases: &[(&str, &[&str], &str)] = &[
        (
            "alltypes_tiny_pages.parquet",
            &[],
            "id >= 100 AND id < 2000 AND bool_col = TRUE",
        ),
        (
            "alltypes_tiny_pages.parquet",
            &["id", "string_col"],
            "tinyint_col IN (1, 3, 5) OR double_col > 50.5",
        ),
        (
            "alltypes_tiny_pages.parquet",
            &["bigint_col", "float_col"],
            "string_col = '3' AND NOT int_col BETWEEN 1 AND 2",
        ),
        (
            "alltypes_tiny_pages.parquet",
            &["id"],
            "date_string_col LIKE '01/0%'",
        ),
        (
            "alltypes_tiny_pages.parquet",
            &["smallint_col"],
            "float_col < 3.5 AND month = 7 AND smallint_col != 4",
        ),
        ("alltypes_tiny_pages.parquet", &["id"], "int_col > id"),
        ("alltypes_tiny_pages.parquet", &["id"], "id < 0"),
        ("nullable.impala.parquet", &[], "id IN (2, 5, 7)"),
        (
            "nullable.impala.parquet",
            &["nested_struct", "id"],
            "NOT id = 3",
        ),
        ("nested_lists.snappy.parquet", &[], "b = 1"),
        ("nested_lists.snappy.parquet", &[], "b != 1"),
        ("nested_maps.snappy.parquet", &["a"], "b = 1 AND c >= 1.0"),
        ("int32_decimal.parquet", &[], "value >= 10.5"),
        (
            "byte_array_decimal.parquet",
            &[],
            "value < 12 OR value = 20.00",
        ),
        (
            "data_index_bloom_encoding_stats.parquet",
            &[],
            "String LIKE 'H%' OR String IS NULL",
        ),
    ];
    for (file, columns, filter) in cases {
        check(&data.join(file), columns, filter);
    }
}

/// A predicate the GPU cannot evaluate fails the decode before any batch,
/// with the part named; an unknown column is the planner's typed error.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn unsupported_and_unknown_predicates_are_typed_errors() {
    assert_gpu();
    let Some(data) = test_data() else {
        panic!("PARQUET_TEST_DATA is not set: the GPU run needs parquet-testing's data/");
    };
    let path = data.join("alltypes_tiny_pages.parquet");
    let request = |filter: &str| ScanRequest {
        projection: Projection::Columns(vec!["id".into()]),
        predicate: Some(filter.parse().unwrap()),
        ..ScanRequest::default()
    };
    let options = || DecodeOptions::from_env().unwrap();
    let e = decode(path.to_str().unwrap(), request("missing = 1"), options()).unwrap_err();
    assert!(e.to_string().contains("missing"), "{e}");
    // A string compared with a number is refused with the column named.
    let e = decode(path.to_str().unwrap(), request("string_col < 3"), options()).unwrap_err();
    assert!(e.to_string().contains("string_col"), "{e}");
    // INT96 timestamps are not compared (their statistics order is
    // undefined): the planner's typed error, naming the column.
    let e = decode(
        path.to_str().unwrap(),
        request("timestamp_col >= TIMESTAMP '2010-03-01 00:00:00'"),
        options(),
    )
    .unwrap_err();
    assert!(e.to_string().contains("timestamp_col"), "{e}");
}
