//! DELTA_BINARY_PACKED INT32 pages whose deltas do not fit 32 bits, as
//! DuckDB writes them (testdata/duckdb_wide_deltas.parquet, described in
//! testdata/README.md): the format lets deltas and sums wrap, so the GPU
//! decoder reads them, where arrow-rs and pyarrow refuse the file. The
//! reference is the formulas DuckDB wrote the columns from.

use std::sync::Arc;

use arrow::array::{ArrayRef, Int32Array, Int64Array, RecordBatch};
use arrow::compute::concat_batches;

use super::decode::assert_gpu;
use super::reference::assert_same_values;
use gdscan::decode::scan::{decode, DecodeOptions};
use gdscan::parquet::ScanRequest;

fn expected() -> RecordBatch {
    let n = 5_000i64;
    let wide = (0..n).map(|i| {
        if i % 2 == 0 {
            i32::MIN + (i % 1000) as i32
        } else {
            i32::MAX - (i % 777) as i32
        }
    });
    let wide_nulls = (0..n).map(|i| {
        (i % 5 != 0).then_some(if i % 3 == 0 {
            2_147_483_000
        } else {
            -2_147_483_000
        })
    });
    let columns: Vec<(&str, ArrayRef)> = vec![
        ("i", Arc::new(Int64Array::from_iter_values(0..n))),
        ("wide", Arc::new(Int32Array::from_iter_values(wide))),
        (
            "narrow",
            Arc::new(Int32Array::from_iter_values((0..n).map(|i| (i * 7) as i32))),
        ),
        ("wide_nulls", Arc::new(wide_nulls.collect::<Int32Array>())),
        (
            "big",
            Arc::new(Int64Array::from_iter_values(
                (0..n).map(|i| i * 9_007_199_254_740),
            )),
        ),
    ];
    RecordBatch::try_from_iter(columns).unwrap()
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn duckdb_int32_deltas_wider_than_32_bits_decode_as_duckdb_wrote_them() {
    assert_gpu();
    let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../testdata/duckdb_wide_deltas.parquet");
    let stream = decode(
        file.to_str().unwrap(),
        ScanRequest::default(),
        DecodeOptions::from_env().unwrap(),
    )
    .unwrap();
    let mut host = Vec::new();
    for batch in stream {
        host.push(batch.unwrap().to_host().unwrap());
    }
    let got = concat_batches(&host[0].schema(), &host).unwrap();
    assert_same_values(
        "duckdb_wide_deltas.parquet",
        &super::reference::normalise(&expected()),
        &got,
    );
}
