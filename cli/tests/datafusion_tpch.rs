//! DataFusion over gdscan's reader (feature `datafusion`): the 22 TPC-H
//! queries at SF 0.01 give the same answers through gdscan's provider as
//! through DataFusion's own Parquet tables, scans are counted in the
//! metrics, and bad inputs are errors carrying gdscan's cause.
//!
//! The data is generated once per test binary: three files per table
//! (nation and region one), row groups of 8 Ki rows and pages of 2 Ki rows,
//! so that files, row groups and pages are all pruned and partitioned.
//!
//! Answers are compared value by value, rendered by Arrow's formatter
//! (decimals exactly, with their scale; floats in their shortest exact
//! form). Every query's ORDER BY orders its rows totally on this data, so
//! rows are compared in order; the single-row queries need no order.

#![cfg(feature = "datafusion")]

mod common;
#[path = "datafusion_tpch/gpu_choice.rs"]
mod gpu_choice;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::util::display::{ArrayFormatter, FormatOptions};
use datafusion::error::DataFusionError;
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion::prelude::{SessionConfig, SessionContext};
use gdscan::datafusion::{register_parquet, scan_totals, GdsTableOptions, SqlError};
use gdscan::engine::IoError;
use gdscan::parquet::ScanError;
use gdscan::store::StoreError;
use gdscan::Error;
use gdscan_cli::tpch::{register_tpch, register_tpch_listing, tpch_query, TPCH_QUERY_COUNT};

fn data() -> &'static Path {
    static DATA: OnceLock<tempfile::TempDir> = OnceLock::new();
    DATA.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let mut gen = gdscan_cli::tpch::GenOptions::new(0.01, dir.path());
        gen.quiet = true;
        gen.parts = Some(3);
        gen.row_group_rows = 8 << 10;
        gen.page_rows = Some(2 << 10);
        gdscan_cli::tpch::generate(&gen).unwrap();
        dir
    })
    .path()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

/// A session with more partitions than files, so files are split.
fn context() -> SessionContext {
    SessionContext::new_with_config(SessionConfig::new().with_target_partitions(4))
}

/// Runs `sql`, returning the rows rendered and the executed plan.
async fn run(ctx: &SessionContext, sql: &str) -> (Vec<String>, Arc<dyn ExecutionPlan>) {
    let df = ctx.sql(sql).await.unwrap();
    let plan = df.create_physical_plan().await.unwrap();
    let batches = collect(plan.clone(), ctx.task_ctx()).await.unwrap();
    (render(&batches), plan)
}

fn render(batches: &[RecordBatch]) -> Vec<String> {
    let options = FormatOptions::default().with_null("NULL");
    let mut rows = Vec::new();
    for batch in batches {
        let formatters: Vec<ArrayFormatter> = batch
            .columns()
            .iter()
            .map(|c| ArrayFormatter::try_new(c.as_ref(), &options).unwrap())
            .collect();
        for row in 0..batch.num_rows() {
            let cells: Vec<String> = formatters
                .iter()
                .map(|f| f.value(row).to_string())
                .collect();
            rows.push(cells.join("|"));
        }
    }
    rows
}

fn check_query(n: usize) {
    let sql = tpch_query(n).unwrap();
    runtime().block_on(async {
        let gds = context();
        register_tpch(&gds, data(), GdsTableOptions::default()).unwrap();
        let listing = context();
        register_tpch_listing(&listing, data()).await.unwrap();
        let (ours, plan) = run(&gds, sql).await;
        let (theirs, _) = run(&listing, sql).await;
        assert_eq!(ours.len(), theirs.len(), "Q{n}: row counts differ");
        assert_eq!(ours, theirs, "Q{n}: answers differ");
        let gds_schema = gds.sql(sql).await.unwrap().schema().clone();
        let listing_schema = listing.sql(sql).await.unwrap().schema().clone();
        assert_eq!(gds_schema, listing_schema, "Q{n}: result types differ");
        let totals = scan_totals(plan.as_ref());
        assert!(totals.bytes_read > 0, "Q{n}: nothing came through gdscan");
        assert!(totals.bytes_read >= totals.bytes_needed);
        assert!(
            totals.paths.iter().map(|(_, b)| b).sum::<u64>() >= totals.bytes_read,
            "Q{n}: the engine's path counters hold every byte read: {totals:?}"
        );
    });
}

macro_rules! tpch_tests {
    ($($name:ident => $n:expr),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                check_query($n);
            }
        )*
        #[test]
        fn every_query_has_a_test() {
            let tested = [$($n),*];
            assert_eq!(tested.len(), TPCH_QUERY_COUNT);
            assert!(tpch_query(0).is_none() && tpch_query(TPCH_QUERY_COUNT + 1).is_none());
        }
    };
}

tpch_tests!(
    q01 => 1, q02 => 2, q03 => 3, q04 => 4, q05 => 5, q06 => 6, q07 => 7, q08 => 8,
    q09 => 9, q10 => 10, q11 => 11, q12 => 12, q13 => 13, q14 => 14, q15 => 15, q16 => 16,
    q17 => 17, q18 => 18, q19 => 19, q20 => 20, q21 => 21, q22 => 22,
);

/// The lineitem-like file of the other tests: sorted keys, row groups of
/// 4 000 rows, pages of 500.
fn sorted_file(dir: &Path) -> PathBuf {
    common::write_file(dir)
}

/// A session (see [`context`]) with `file` registered as `t` through
/// gdscan's provider.
fn gds_context(file: &Path) -> SessionContext {
    let ctx = context();
    register_parquet(
        &ctx,
        "t",
        file.to_str().unwrap(),
        GdsTableOptions::default(),
    )
    .unwrap();
    ctx
}

#[test]
fn a_filtered_scan_reads_fewer_bytes_than_an_unfiltered_one() {
    let dir = tempfile::tempdir().unwrap();
    let file = sorted_file(dir.path());
    runtime().block_on(async {
        let ctx = gds_context(&file);
        let (all, all_plan) =
            run(&ctx, "select sum(l_quantity) from t where l_orderkey >= 0").await;
        let (some, some_plan) =
            run(&ctx, "select sum(l_quantity) from t where l_orderkey < 900").await;
        assert_ne!(all, some);
        let all = scan_totals(all_plan.as_ref());
        let some = scan_totals(some_plan.as_ref());
        assert!(some.bytes_read > 0);
        assert!(
            some.bytes_read * 2 < all.bytes_read,
            "filtered {some:?} against unfiltered {all:?}"
        );
    });
}

#[test]
fn explain_analyze_shows_gdscan_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let file = sorted_file(dir.path());
    runtime().block_on(async {
        let ctx = gds_context(&file);
        let (rows, _) = run(
            &ctx,
            "explain analyze select count(*) from t where l_orderkey < 100",
        )
        .await;
        let text = rows.join("\n");
        for metric in [
            "gds_bytes_read=",
            "gds_bytes_needed=",
            "gds_requests=",
            "gds_ranges=",
            "gds_io_time=",
            "gds_path_posix_host_bytes=",
        ] {
            assert!(text.contains(metric), "{metric} missing from:\n{text}");
        }
    });
}

#[test]
fn projection_limit_and_single_file_match_datafusion() {
    let dir = tempfile::tempdir().unwrap();
    let file = sorted_file(dir.path());
    runtime().block_on(async {
        let gds = gds_context(&file);
        let listing = context();
        listing
            .register_parquet("t", file.to_str().unwrap(), Default::default())
            .await
            .unwrap();
        for sql in [
            "select l_comment, l_discount from t order by l_orderkey limit 7",
            "select * from t where l_returnflag = 'R' and l_discount > 0.05 order by l_orderkey",
            "select count(*), min(l_shipdate), max(l_comment) from t",
        ] {
            let (ours, _) = run(&gds, sql).await;
            let (theirs, _) = run(&listing, sql).await;
            assert!(!ours.is_empty());
            assert_eq!(ours, theirs, "{sql}");
        }
        let stats = gds.table_provider("t").await.unwrap().statistics().unwrap();
        assert_eq!(
            stats.num_rows.get_value().copied(),
            Some(common::ROWS),
            "the planner's row count comes from the footers"
        );
    });
}

/// The first of gdscan's errors in `e`'s chain of sources (its layer
/// errors, or the crate's), wrappers of DataFusion's own error left out.
fn gdscan_cause<'a>(
    e: &'a (dyn std::error::Error + 'static),
) -> Option<&'a (dyn std::error::Error + 'static)> {
    let mut next = Some(e);
    while let Some(err) = next {
        let ours = match (
            err.downcast_ref::<gdscan::Error>(),
            err.downcast_ref::<SqlError>(),
        ) {
            (Some(gdscan::Error::DataFusion(_)), _) | (_, Some(SqlError::Query(_))) => false,
            (Some(_), _) | (_, Some(_)) => true,
            _ => err.is::<ScanError>() || err.is::<StoreError>() || err.is::<IoError>(),
        };
        if ours {
            return Some(err);
        }
        next = err.source();
    }
    None
}

/// The engine's error that `e` is or wraps (transparently), if any.
fn io_error<'a>(e: &'a (dyn std::error::Error + 'static)) -> Option<&'a IoError> {
    if let Some(io) = e.downcast_ref::<IoError>() {
        return Some(io);
    }
    match (
        e.downcast_ref::<gdscan::Error>(),
        e.downcast_ref::<SqlError>(),
        e.downcast_ref::<StoreError>(),
        e.downcast_ref::<ScanError>(),
    ) {
        (Some(gdscan::Error::Io(io)), ..)
        | (_, Some(SqlError::Io(io)), ..)
        | (_, _, Some(StoreError::Io(io)), _)
        | (.., Some(ScanError::Io(io))) => Some(io),
        (_, Some(SqlError::Store(store)), ..) => io_error(store.as_ref()),
        (_, Some(SqlError::Scan(scan)), ..) => io_error(scan.as_ref()),
        (.., Some(ScanError::Store(store))) => io_error(store.as_ref()),
        _ => None,
    }
}

#[test]
fn a_bad_path_is_an_error_naming_it() {
    let ctx = context();
    let err = register_parquet(
        &ctx,
        "t",
        "/no/such/table.parquet",
        GdsTableOptions::default(),
    )
    .map_err(Error::from)
    .unwrap_err();
    assert!(matches!(err, Error::Io(IoError::NotFound { .. })), "{err}");
    assert!(err.to_string().contains("/no/such/table.parquet"));
    let empty = tempfile::tempdir().unwrap();
    let err = register_parquet(
        &ctx,
        "t",
        empty.path().to_str().unwrap(),
        GdsTableOptions::default(),
    )
    .unwrap_err();
    assert!(err.to_string().contains("no files ending with"), "{err}");
}

#[test]
fn a_corrupt_file_is_an_error_at_registration() {
    let dir = tempfile::tempdir().unwrap();
    let file = sorted_file(dir.path());
    let bytes = std::fs::read(&file).unwrap();
    let truncated = dir.path().join("truncated.parquet");
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let ctx = context();
    let err = register_parquet(
        &ctx,
        "t",
        truncated.to_str().unwrap(),
        GdsTableOptions::default(),
    )
    .map_err(Error::from)
    .unwrap_err();
    assert!(
        matches!(err, Error::Parquet(ScanError::Format { .. })),
        "{err:?}"
    );
    assert!(err.to_string().contains("truncated.parquet"), "{err}");
}

/// A table whose file changes under it after registration: the query fails
/// with a DataFusion error whose source is gdscan's error, and no panic.
fn query_after(change: impl FnOnce(&Path)) -> DataFusionError {
    let dir = tempfile::tempdir().unwrap();
    let file = sorted_file(dir.path());
    runtime().block_on(async {
        let ctx = gds_context(&file);
        change(&file);
        let df = ctx.sql("select sum(l_quantity) from t").await.unwrap();
        df.collect().await.unwrap_err()
    })
}

#[test]
fn a_file_truncated_after_registration_fails_the_query_with_gdscans_cause() {
    let err = query_after(|file| {
        let bytes = std::fs::read(file).unwrap();
        std::fs::write(file, &bytes[..bytes.len() / 3]).unwrap();
    });
    let cause = gdscan_cause(&err).unwrap_or_else(|| panic!("no gdscan cause in {err:?}"));
    assert!(cause.to_string().contains("lineitem.parquet"), "{cause}");
    assert!(err.to_string().contains(&cause.to_string()), "{err}");
}

#[test]
fn a_file_removed_after_registration_fails_the_query_with_gdscans_cause() {
    let err = query_after(|file| std::fs::remove_file(file).unwrap());
    let cause = gdscan_cause(&err).unwrap_or_else(|| panic!("no gdscan cause in {err:?}"));
    assert!(
        matches!(io_error(cause), Some(IoError::NotFound { .. })),
        "{cause:?}"
    );
    let shown = cause.to_string();
    let ours = gdscan::Error::from(err);
    assert!(ours.to_string().contains(&shown), "{ours}");
    assert!(gdscan_cause(&ours).is_some(), "{ours:?}");
}

#[test]
fn an_object_behind_an_http_url_gives_the_local_files_answers() {
    let dir = tempfile::tempdir().unwrap();
    let file = sorted_file(dir.path());
    let server = common::range_server::RangeServer::start();
    server.put("lineitem.parquet", std::fs::read(&file).unwrap());
    let remote = context();
    let table = register_parquet(
        &remote,
        "t",
        &server.url("lineitem.parquet"),
        GdsTableOptions::default(),
    )
    .unwrap();
    assert_eq!(table.files().len(), 1);
    let local = context();
    register_parquet(
        &local,
        "t",
        file.to_str().unwrap(),
        GdsTableOptions::default(),
    )
    .unwrap();
    runtime().block_on(async {
        let sql = "select l_returnflag, count(*), sum(l_discount), max(l_comment) \
                   from t where l_orderkey >= 5000 group by l_returnflag order by 1";
        let (theirs, _) = run(&local, sql).await;
        let (ours, plan) = run(&remote, sql).await;
        assert!(!ours.is_empty());
        assert_eq!(ours, theirs);
        let totals = scan_totals(plan.as_ref());
        assert!(totals.bytes_read > 0, "{totals:?}");
        let names: Vec<&str> = totals.paths.iter().map(|(p, _)| p.name()).collect();
        assert_eq!(
            names,
            vec!["remote-store"],
            "every byte from the server: {totals:?}"
        );
    });
    assert!(server.gets() > 0);
}
