//! `gdscan bench tpch --engine datafusion`: the 22 TPC-H queries through
//! DataFusion twice in one run, over gdscan's provider and over DataFusion's
//! own `ListingTable`s of the same `gdscan tpch gen` folder; per query the
//! median time of each and their ratio, and the paired ratios' interval.
//!
//! The sides alternate within each iteration, and which goes first alternates
//! between iterations, so drift of the machine and the order of the two runs
//! weigh on both alike; each iteration's pair gives one ratio.

use std::path::PathBuf;
use std::time::Instant;

use ::datafusion::physical_plan::collect;
use ::datafusion::prelude::SessionContext;
use serde::Serialize;

use super::paired::{PairedRatio, Verdict};
use super::stats::process_cpu_seconds;
use super::tpch::table_files;
use super::tpch_sides::{available_cpus, median, SingleNode, TpchQueryOptions};
use crate::error::{Error, Result};
use crate::tpch::Table;
use gdscan::datafusion::{runtime, scan_totals, ScanTotals};
use gdscan::engine::{drop_from_cache, on_tmpfs};

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct SqlBenchOptions {
    /// The data, queries, iterations and sessions.
    pub common: TpchQueryOptions,
    /// Drop the tables' files from the page cache before every iteration.
    pub cold: bool,
}

/// One query's results.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SqlQueryResult {
    /// Query number.
    pub query: usize,
    /// Rows of the answer (gdscan's provider).
    pub rows: usize,
    /// Whether both sides gave as many rows.
    pub rows_match: bool,
    /// Seconds of each timed iteration over gdscan's provider.
    pub gdscan: Vec<f64>,
    /// Seconds of each timed iteration over DataFusion's `ListingTable`.
    pub datafusion: Vec<f64>,
    /// Median of `gdscan`.
    pub gdscan_median: f64,
    /// Median of `datafusion`.
    pub datafusion_median: f64,
    /// Host CPU seconds (user + system of the whole process, `getrusage`)
    /// of each timed iteration over gdscan's provider: what the query
    /// costs the host's cores, decoding included on the CPU path.
    pub gdscan_cpu: Vec<f64>,
    /// The same over DataFusion's `ListingTable`.
    pub datafusion_cpu: Vec<f64>,
    /// Median of `gdscan_cpu`.
    pub gdscan_cpu_median: f64,
    /// Median of `datafusion_cpu`.
    pub datafusion_cpu_median: f64,
    /// `datafusion_median / gdscan_median`: ≥ 1 when gdscan's provider is
    /// as fast or faster.
    pub ratio: f64,
    /// Each iteration's `datafusion / gdscan`: their median and its
    /// distribution-free interval (None without a timed pair).
    pub paired: Option<PairedRatio>,
    /// Where that interval lies against 1.
    pub verdict: Option<Verdict>,
    /// What gdscan's reader did in the last iteration.
    pub scan: ScanTotals,
}

/// The run's context.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SqlBenchContext {
    /// gdscan's version.
    pub gdscan_version: &'static str,
    /// DataFusion's version.
    pub datafusion_version: &'static str,
    /// Seconds since the Unix epoch at the start.
    pub start_time: u64,
    /// CPUs available.
    pub num_cpus: usize,
    /// Target partitions of both sessions.
    pub partitions: usize,
    /// Cold (page cache dropped) or warm.
    pub cold: bool,
    /// Why cold runs were not possible, if so.
    pub cold_note: Option<String>,
    /// The data folder.
    pub data: String,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct SqlBenchReport {
    /// Context.
    pub context: SqlBenchContext,
    /// Per query.
    pub queries: Vec<SqlQueryResult>,
}

/// One run of a query.
struct Run {
    /// Wall seconds of planning and execution.
    seconds: f64,
    /// Host CPU seconds of the process meanwhile.
    cpu_seconds: f64,
    /// Rows of the answer.
    rows: usize,
    /// What gdscan's reader did.
    scan: ScanTotals,
}

/// Runs `sql` once: plan and execution, timed, with the process's CPU
/// seconds meanwhile; rows and gdscan's totals.
async fn run_once(ctx: &SessionContext, sql: &str) -> Result<Run> {
    let cpu = process_cpu_seconds();
    let start = Instant::now();
    let plan = ctx.sql(sql).await?.create_physical_plan().await?;
    let batches = collect(plan.clone(), ctx.task_ctx()).await?;
    let seconds = start.elapsed().as_secs_f64();
    Ok(Run {
        seconds,
        cpu_seconds: process_cpu_seconds() - cpu,
        rows: batches.iter().map(|b| b.num_rows()).sum(),
        scan: scan_totals(plan.as_ref()),
    })
}

fn drop_all(files: &[PathBuf]) -> Result<()> {
    for f in files {
        drop_from_cache(f)?;
    }
    Ok(())
}

/// Runs one query: a warm-up on each side, then `iterations` pairs of
/// timed runs, the sides taking turns to go first; with `cold`, `files`
/// are dropped from the page cache before every run.
async fn measure(
    sides: &SingleNode,
    (query, sql): (usize, &str),
    iterations: usize,
    cold: bool,
    files: &[PathBuf],
) -> Result<SqlQueryResult> {
    let rows = run_once(&sides.gds, sql).await?.rows;
    let listing_rows = run_once(&sides.listing, sql).await?.rows;
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    let (mut ours_cpu, mut theirs_cpu) = (Vec::new(), Vec::new());
    let mut scan = ScanTotals::default();
    for i in 0..iterations.max(1) {
        for gdscan_turn in [i % 2 == 0, i % 2 == 1] {
            if cold {
                drop_all(files)?;
            }
            if gdscan_turn {
                let run = run_once(&sides.gds, sql).await?;
                ours.push(run.seconds);
                ours_cpu.push(run.cpu_seconds);
                scan = run.scan;
            } else {
                let run = run_once(&sides.listing, sql).await?;
                theirs.push(run.seconds);
                theirs_cpu.push(run.cpu_seconds);
            }
        }
    }
    let (gdscan_median, datafusion_median) = (median(&ours), median(&theirs));
    let paired = PairedRatio::new(&theirs, &ours);
    Ok(SqlQueryResult {
        query,
        rows,
        rows_match: rows == listing_rows,
        gdscan_cpu_median: median(&ours_cpu),
        datafusion_cpu_median: median(&theirs_cpu),
        gdscan: ours,
        datafusion: theirs,
        gdscan_cpu: ours_cpu,
        datafusion_cpu: theirs_cpu,
        gdscan_median,
        datafusion_median,
        ratio: datafusion_median / gdscan_median.max(f64::MIN_POSITIVE),
        verdict: paired.map(|p| p.verdict()),
        paired,
        scan,
    })
}

/// Runs the benchmark.
pub(crate) fn run(opts: &SqlBenchOptions) -> Result<SqlBenchReport> {
    let common = &opts.common;
    let queries = common.queries()?;
    let mut files = Vec::new();
    for t in Table::ALL {
        files.extend(table_files(&common.data, t)?);
    }
    let tmpfs = opts.cold && files.iter().any(|f| on_tmpfs(f));
    let cold = opts.cold && !tmpfs;
    let start_time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let sides = SingleNode::new(common, common.table_options()?)?;
    let results = runtime()?.block_on(async {
        sides.register_listing(&common.data).await?;
        let mut results = Vec::new();
        for &query in &queries {
            results.push(measure(&sides, query, common.iterations, cold, &files).await?);
        }
        Ok::<_, Error>(results)
    })?;
    Ok(SqlBenchReport {
        context: SqlBenchContext {
            gdscan_version: env!("CARGO_PKG_VERSION"),
            datafusion_version: ::datafusion::DATAFUSION_VERSION,
            start_time,
            num_cpus: available_cpus(),
            partitions: sides.partitions,
            cold,
            cold_note: tmpfs
                .then(|| "files on tmpfs cannot be dropped from memory: measured warm".into()),
            data: common.data.display().to_string(),
        },
        queries: results,
    })
}

/// The report as a table.
pub(crate) fn render(r: &SqlBenchReport) -> String {
    let mut out = format!(
        "gdscan bench tpch --engine datafusion: {} ({}, {} partitions){}\n\
         ratio = DataFusion ListingTable median / gdscan provider median (>= 1: gdscan as fast or faster)\n\
         paired = median of the per-iteration ratios [interval, coverage]: faster / slower when the whole interval is above / below 1\n\
         cpu s = the process's host CPU seconds during the query (user + system), median\n\
         {:<6} {:>8} {:>12} {:>14} {:>7} {:>30} {:>8} {:>12} {:>14} {:>14} {:>14}\n",
        r.context.data,
        if r.context.cold { "cold" } else { "warm" },
        r.context.partitions,
        r.context
            .cold_note
            .as_deref()
            .map(|n| format!(" — {n}"))
            .unwrap_or_default(),
        "query",
        "rows",
        "gdscan s",
        "datafusion s",
        "ratio",
        "paired [interval]",
        "verdict",
        "gdscan cpu s",
        "datafusion cpu s",
        "bytes read",
        "bytes needed"
    );
    for q in &r.queries {
        out += &format!(
            "{:<6} {:>8} {:>12.4} {:>14.4} {:>7.3} {:>30} {:>8} {:>12.3} {:>14.3} {:>14} {:>14}{}\n",
            format!("q{}", q.query),
            q.rows,
            q.gdscan_median,
            q.datafusion_median,
            q.ratio,
            q.paired
                .map(|p| format!(
                    "{:.3} [{:.3}, {:.3}] {:.0}%",
                    p.median,
                    p.low,
                    p.high,
                    p.coverage * 100.0
                ))
                .unwrap_or_default(),
            q.verdict.map(Verdict::name).unwrap_or(""),
            q.gdscan_cpu_median,
            q.datafusion_cpu_median,
            q.scan.bytes_read,
            q.scan.bytes_needed,
            if q.rows_match {
                ""
            } else {
                "  (row counts differ!)"
            }
        );
    }
    let ours: f64 = r.queries.iter().map(|q| q.gdscan_median).sum();
    let theirs: f64 = r.queries.iter().map(|q| q.datafusion_median).sum();
    let ours_cpu: f64 = r.queries.iter().map(|q| q.gdscan_cpu_median).sum();
    let theirs_cpu: f64 = r.queries.iter().map(|q| q.datafusion_cpu_median).sum();
    out += &format!(
        "{:<6} {:>8} {:>12.4} {:>14.4} {:>7.3} {:>30} {:>8} {:>12.3} {:>14.3}\n",
        "total",
        "",
        ours,
        theirs,
        theirs / ours.max(f64::MIN_POSITIVE),
        "",
        "",
        ours_cpu,
        theirs_cpu
    );
    let count = |v: Verdict| r.queries.iter().filter(|q| q.verdict == Some(v)).count();
    out += &format!(
        "verdicts: {} faster, {} even, {} slower\n",
        count(Verdict::Faster),
        count(Verdict::Even),
        count(Verdict::Slower)
    );
    out + &render_decode(r)
}

/// Where gdscan's provider decoded (with `--decode gpu|auto`): per query,
/// files and rows per path, the GPU's and the copy back's time, then each
/// reason a file fell back to the CPU for; empty on the CPU path.
fn render_decode(r: &SqlBenchReport) -> String {
    if r.queries.iter().all(|q| q.scan.decode.files.is_empty()) {
        return String::new();
    }
    let mut out = format!(
        "decode (gdscan provider, last iteration):
{:<6} {:>9} {:>9} {:>12} {:>12} {:>10} {:>14} {:>12}
",
        "query",
        "gpu files",
        "cpu files",
        "gpu rows",
        "cpu rows",
        "gpu wait s",
        "copy back B",
        "copy back s"
    );
    let mut reasons: Vec<String> = Vec::new();
    for q in &r.queries {
        let d = &q.scan.decode;
        out += &format!(
            "{:<6} {:>9} {:>9} {:>12} {:>12} {:>10.4} {:>14} {:>12.4}\n",
            format!("q{}", q.query),
            d.gpu_files,
            d.fallback_files,
            d.gpu_rows,
            d.cpu_rows,
            d.gpu_decode_time.as_secs_f64(),
            d.copy_back_bytes,
            d.copy_back_time.as_secs_f64()
        );
        for f in d.files.iter().filter(|f| f.path == "cpu") {
            if !reasons.contains(&f.reason) {
                reasons.push(f.reason.clone());
            }
        }
    }
    for reason in reasons {
        out += &format!("on the CPU because: {reason}\n");
    }
    out
}
