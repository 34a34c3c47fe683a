//! gdscan's pruning and read-ahead under DataFusion (feature `datafusion`):
//! the filters DataFusion pushes into a `GdsTable` scan are planned by
//! gdscan (row groups and pages), and each reader reads its next planned
//! row group ahead, without changing any answer or reading a byte more.
//!
//! The file: 20 000 rows with sorted keys, row groups of 4 000 rows, pages
//! of 500 (see `common::write_file`).

use crate::common;

use std::path::Path;
use std::sync::Arc;

use datafusion::datasource::physical_plan::parquet::RowGroupAccess;
use datafusion::physical_plan::{collect, ExecutionPlan};
use datafusion::prelude::{col, lit, SessionConfig, SessionContext};
use gdscan::datafusion::plan_file;
use gdscan::datafusion::predicate_from_filters;
use gdscan::datafusion::ReadAheadPolicy;
use gdscan::datafusion::{register_parquet, scan_totals, GdsTableOptions, ScanTotals};
use gdscan::engine::FileHandle;
use gdscan::parquet::MetadataOptions;
use gdscan::store::{LocalSource, Source};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .build()
        .unwrap()
}

fn metadata(path: &Path) -> Arc<parquet::file::metadata::ParquetMetaData> {
    let handle = Arc::new(FileHandle::open(path, "r").unwrap());
    let source: Arc<dyn Source> = Arc::new(LocalSource::new(handle).unwrap());
    gdscan::parquet::load_metadata(&source, MetadataOptions::default()).unwrap()
}

/// The rows an access entry selects within a row group of `rows` rows.
fn selected(access: &RowGroupAccess, rows: usize) -> Vec<bool> {
    match access {
        RowGroupAccess::Skip => vec![false; rows],
        RowGroupAccess::Scan => vec![true; rows],
        RowGroupAccess::Selection(selection) => {
            let mut out = Vec::with_capacity(rows);
            for s in selection.iter() {
                out.extend(std::iter::repeat_n(!s.skip, s.row_count));
            }
            out.resize(rows, false);
            out
        }
    }
}

#[test]
fn gdscans_plan_keeps_every_matching_row_and_prunes_groups_and_pages() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    let meta = metadata(&path);
    let batch = common::batch();
    let schema = batch.schema();
    // Keys 5 000..=5 700: inside row group 1, pages 2 and 3 of it (keys
    // 5 000..5 999), and a date bound that every row of the range meets.
    let filter = col("l_orderkey")
        .gt_eq(lit(5_000i64))
        .and(col("l_orderkey").lt_eq(lit(5_700i64)))
        .and(col("l_shipdate").is_not_null());
    let predicate = predicate_from_filters(&[filter], &schema).expect("translatable");
    let columns = vec!["l_orderkey".to_string(), "l_quantity".to_string()];
    let (access, plan) = plan_file(&meta, Some(&columns), Some(&predicate), true).unwrap();
    assert_eq!(access.len(), meta.num_row_groups());
    assert_eq!(plan.row_groups.len(), 1, "{plan:?}");
    assert_eq!(plan.row_groups[0].index, 1);
    assert!(plan.row_groups[0].some_rows);
    assert_eq!(plan.row_groups[0].chunks.len(), 2);
    let mut kept = 0;
    for (rg, entry) in access.inner().iter().enumerate() {
        let rows = meta.row_group(rg).num_rows() as usize;
        let first = rg * 4_000;
        for (i, keep) in selected(entry, rows).into_iter().enumerate() {
            let key = (first + i) as i64;
            if (5_000..=5_700).contains(&key) {
                assert!(keep, "row with key {key} pruned");
            }
            kept += keep as usize;
        }
    }
    // Two pages of 500 rows, no more.
    assert_eq!(kept, 1_000);
}

#[test]
fn terms_the_file_cannot_answer_are_left_out_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    let meta = metadata(&path);
    // A column the file lacks next to one it has: the known term still
    // prunes; with only the unknown term, every row group is kept.
    let schema = datafusion::arrow::datatypes::Schema::new(vec![
        datafusion::arrow::datatypes::Field::new(
            "l_orderkey",
            datafusion::arrow::datatypes::DataType::Int64,
            false,
        ),
        datafusion::arrow::datatypes::Field::new(
            "extra",
            datafusion::arrow::datatypes::DataType::Int64,
            true,
        ),
    ]);
    let both = predicate_from_filters(
        &[col("extra")
            .eq(lit(1i64))
            .and(col("l_orderkey").lt(lit(100i64)))],
        &schema,
    )
    .unwrap();
    let (_, plan) = plan_file(&meta, None, Some(&both), true).unwrap();
    assert_eq!(
        plan.row_groups.iter().map(|r| r.index).collect::<Vec<_>>(),
        vec![0]
    );
    let unknown = predicate_from_filters(&[col("extra").eq(lit(1i64))], &schema).unwrap();
    let (access, plan) = plan_file(&meta, None, Some(&unknown), true).unwrap();
    assert_eq!(plan.row_groups.len(), meta.num_row_groups());
    assert!(access
        .inner()
        .iter()
        .all(|a| matches!(a, RowGroupAccess::Scan)));
}

async fn run(ctx: &SessionContext, sql: &str) -> (Vec<String>, ScanTotals) {
    let df = ctx.sql(sql).await.unwrap();
    let plan: Arc<dyn ExecutionPlan> = df.create_physical_plan().await.unwrap();
    let batches = collect(plan.clone(), ctx.task_ctx()).await.unwrap();
    let rows = datafusion::arrow::util::pretty::pretty_format_batches(&batches)
        .unwrap()
        .to_string()
        .lines()
        .map(str::to_string)
        .collect();
    (rows, scan_totals(plan.as_ref()))
}

fn table(partitions: usize, path: &Path, read_ahead: ReadAheadPolicy) -> SessionContext {
    let ctx =
        SessionContext::new_with_config(SessionConfig::new().with_target_partitions(partitions));
    let options = GdsTableOptions {
        read_ahead,
        ..Default::default()
    };
    register_parquet(&ctx, "t", path.to_str().unwrap(), options).unwrap();
    ctx
}

#[test]
fn gdscans_pruning_alone_narrows_the_scan() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    runtime().block_on(async {
        let ctx = table(2, &path, ReadAheadPolicy::Always);
        // DataFusion's own pruning off: only gdscan's plan prunes.
        ctx.sql("set datafusion.execution.parquet.pruning = false")
            .await
            .unwrap();
        ctx.sql("set datafusion.execution.parquet.enable_page_index = false")
            .await
            .unwrap();
        let sql = |cond: &str| format!("select count(*), sum(l_quantity) from t where {cond}");
        let (all_rows, all) = run(&ctx, &sql("l_orderkey >= 0")).await;
        let (some_rows, some) = run(&ctx, &sql("l_orderkey between 5000 and 5700")).await;
        assert!(all_rows.iter().any(|l| l.contains("20000")), "{all_rows:?}");
        assert!(some_rows.iter().any(|l| l.contains("701")), "{some_rows:?}");
        // One row group of five (a fifth of the bytes), and of it only the
        // dictionaries and two pages of eight.
        assert!(
            some.bytes_needed * 5 < all.bytes_needed,
            "filtered {some:?} against unfiltered {all:?}"
        );
    });
}

/// Drops the file from the page cache (the test folder is on a disk, under
/// the target folder, where the advice works).
/// The kernel may keep pages it is still writing back or reading ahead,
/// so the advice is given again a few times before the test gives up (a
/// CI run once saw the file stay cached after one).
fn evict(path: &Path) {
    let handle = FileHandle::open(path, "r").unwrap();
    let len = std::fs::metadata(path).unwrap().len();
    for _ in 0..20 {
        common::evict(path);
        if handle
            .cached_pages(0, len)
            .is_some_and(|(cached, _)| cached == 0)
        {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    panic!("the file stayed cached after 20 evictions");
}

#[test]
fn read_ahead_serves_every_row_group_and_changes_no_answer() {
    // On a disk (under the target folder), where eviction works.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = common::write_file(dir.path());
    let queries = [
        "select l_returnflag, count(*), sum(l_quantity), sum(l_discount), min(l_comment) \
         from t group by l_returnflag order by l_returnflag",
        "select count(*), max(l_shipdate) from t where l_orderkey < 9000",
    ];
    runtime().block_on(async {
        for partitions in [1, 3] {
            let on = table(partitions, &path, ReadAheadPolicy::Always);
            let off = table(partitions, &path, ReadAheadPolicy::Off);
            for sql in queries {
                let (rows_on, with) = run(&on, sql).await;
                let (rows_off, without) = run(&off, sql).await;
                assert_eq!(rows_on, rows_off, "{sql}");
                // Row groups after a reader's first came from the
                // read-ahead; no byte was read twice or for nothing.
                assert!(with.read_ahead_hits > 0, "{sql}: {with:?}");
                assert_eq!(with.read_ahead_wasted, 0, "{sql}: {with:?}");
                assert_eq!(with.bytes_read, without.bytes_read, "{sql}");
                assert_eq!(without.read_ahead_hits, 0);
            }
        }
        // Five row groups in one range: the four after the first.
        let (_, totals) = run(&table(1, &path, ReadAheadPolicy::Always), queries[0]).await;
        assert_eq!(totals.read_ahead_hits, 4, "{totals:?}");
        // The default reads ahead only what the page cache lacks: nothing
        // of a cached file, and row groups of an evicted one (the kernel's
        // own read-ahead may bring some in first).
        let uncached = table(1, &path, ReadAheadPolicy::Uncached);
        let (_, cached) = run(&uncached, queries[0]).await;
        assert_eq!(cached.read_ahead_hits, 0, "{cached:?}");
        assert_eq!(cached.bytes_read, totals.bytes_read);
        evict(&path);
        let (_, cold) = run(&uncached, queries[0]).await;
        assert_eq!(cold.read_ahead_wasted, 0, "{cold:?}");
        assert_eq!(cold.bytes_read, totals.bytes_read);
    });
}

#[test]
fn a_limit_reads_nothing_ahead() {
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    runtime().block_on(async {
        let ctx = table(1, &path, ReadAheadPolicy::Always);
        let (rows, totals) = run(&ctx, "select l_orderkey from t limit 3").await;
        assert_eq!(rows.len(), 3 + 4, "{rows:?}");
        assert_eq!(totals.read_ahead_hits, 0);
        assert_eq!(totals.read_ahead_wasted, 0);
    });
}
