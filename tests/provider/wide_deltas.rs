//! DuckDB's full-range INT32 file (testdata/README.md) through gdscan's
//! DataFusion provider: arrow-rs, the CPU decoder DataFusion runs, refuses
//! the `wide` column's deltas; the query's error gives the same explanation
//! as `gdscan scan --host`, arrow-rs's error kept among its sources. The
//! columns whose deltas fit still decode (feature `datafusion`).

use datafusion::arrow::array::{Array, Int64Array};
use gdscan::datafusion::{context, register_parquet, run_sql, runtime, GdsTableOptions};
use gdscan::error::chain;

const FILE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/testdata/duckdb_wide_deltas.parquet"
);

/// Runs `sql` over the file registered as `t`, on two partitions.
fn query(sql: &str) -> Result<Vec<datafusion::arrow::record_batch::RecordBatch>, String> {
    let rt = runtime().unwrap();
    rt.block_on(async {
        let ctx = context(Some(2));
        register_parquet(&ctx, "t", FILE, GdsTableOptions::default()).unwrap();
        run_sql(&ctx, sql).await.map_err(|e| chain(&e))
    })
}

#[test]
fn wide_int32_deltas_in_sql_say_why_and_point_to_the_gpu() {
    let e = query("select sum(wide) from t").unwrap_err();
    assert!(e.contains("deltas wider than its 32-bit type"), "{e}");
    assert!(e.contains("--decode"), "{e}");
    assert!(e.contains("duckdb_wide_deltas.parquet"), "{e}");
    // arrow-rs's own words stay in the chain.
    assert!(e.contains("'min_delta' too large"), "{e}");
}

#[test]
fn the_columns_whose_deltas_fit_still_decode() {
    // `narrow` is i * 7 for i in 0..5000 (testdata/README.md).
    let batches = query("select sum(narrow) as s, count(*) as n from t").unwrap();
    let s = batches[0]
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap();
    let want: i64 = (0..5000i64).map(|i| i * 7).sum();
    assert_eq!(s.value(0), want);
    assert!(!s.is_null(0));
}
