//! `gdscan bench tpch --engine ballista --executors N`: the 22 TPC-H
//! queries on a Ballista cluster on this host (a scheduler and N executors,
//! each a `gdscan ballista` process on 127.0.0.1), against single-node
//! gdscan (DataFusion over gdscan's provider) and single-node DataFusion
//! (its own `ListingTable`s), in the same run. The three sides rotate
//! within each iteration. On one host this measures Ballista's overhead
//! (planning, scheduling, shuffles through Arrow Flight), not speed-up.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use ::datafusion::prelude::SessionContext;
use serde::Serialize;

use super::error::LocalClusterError;
use super::tpch_sides::{available_cpus, median, SingleNode, TpchQueryOptions};
use crate::error::{Error, Result};
use crate::tpch::register_tpch;
use gdscan::datafusion::{format_batches, OutputFormat};

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct BallistaBenchOptions {
    /// The data, queries, iterations and single-node sessions.
    pub common: TpchQueryOptions,
    /// Executors of the cluster.
    pub executors: usize,
    /// Tasks each executor runs at once (0: the available CPUs).
    pub concurrent_tasks: usize,
}

/// One query's results.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BallistaQueryResult {
    /// Query number.
    pub query: usize,
    /// Rows of the answer.
    pub rows: usize,
    /// Whether the cluster's answer equals single-node gdscan's (as CSV).
    pub answers_match: bool,
    /// Median seconds: single-node gdscan, single-node DataFusion, cluster.
    pub gdscan_median: f64,
    /// See `gdscan_median`.
    pub datafusion_median: f64,
    /// See `gdscan_median`.
    pub ballista_median: f64,
    /// `ballista_median / gdscan_median`: the cluster's overhead factor.
    pub overhead: f64,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct BallistaBenchReport {
    /// The data folder.
    pub data: String,
    /// Executors and tasks per executor.
    pub executors: usize,
    /// See [`BallistaBenchOptions::concurrent_tasks`].
    pub concurrent_tasks: usize,
    /// Target partitions.
    pub partitions: usize,
    /// CPUs available.
    pub num_cpus: usize,
    /// Seconds from starting the processes to the cluster's first answer.
    pub startup_s: f64,
    /// Per query.
    pub queries: Vec<BallistaQueryResult>,
}

/// How long a cluster process may take to listen on its port.
const LISTEN_DEADLINE_S: u64 = 60;

/// A free loopback port (bound, then let go).
fn free_port() -> Result<u16> {
    let listener = TcpListener::bind("127.0.0.1:0").map_err(LocalClusterError::Port)?;
    Ok(listener
        .local_addr()
        .map_err(LocalClusterError::Port)?
        .port())
}

/// The cluster's processes, killed when dropped.
struct Processes(Vec<Child>);

impl Drop for Processes {
    fn drop(&mut self) {
        for child in &mut self.0 {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Processes {
    fn spawn(&mut self, args: &[String]) -> Result<()> {
        let exe = std::env::current_exe().map_err(LocalClusterError::Binary)?;
        let child = Command::new(exe)
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(LocalClusterError::Spawn)?;
        self.0.push(child);
        Ok(())
    }

    fn wait_listening(&mut self, port: u16) -> Result<()> {
        let addr: SocketAddr = ([127, 0, 0, 1], port).into();
        let deadline = Instant::now() + Duration::from_secs(LISTEN_DEADLINE_S);
        while TcpStream::connect_timeout(&addr, Duration::from_millis(200)).is_err() {
            for child in &mut self.0 {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(LocalClusterError::Exited(status).into());
                }
            }
            if Instant::now() > deadline {
                return Err(LocalClusterError::NotListening {
                    port,
                    seconds: LISTEN_DEADLINE_S,
                }
                .into());
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(())
    }
}

/// Runs `sql` once: seconds, rows and the answer as CSV.
async fn run_once(ctx: &SessionContext, sql: &str) -> Result<(f64, usize, String)> {
    let start = Instant::now();
    let df = ctx.sql(sql).await?;
    let schema = df.schema().inner().clone();
    let batches = df.collect().await?;
    let elapsed = start.elapsed().as_secs_f64();
    let rows = batches.iter().map(|b| b.num_rows()).sum();
    Ok((
        elapsed,
        rows,
        format_batches(&schema, &batches, OutputFormat::Csv)?,
    ))
}

/// Starts the local cluster: a scheduler, then `executors` executors
/// (at least one), each listening before the next starts. Returns the
/// processes and the scheduler's address.
fn start_cluster(executors: usize, concurrent_tasks: usize) -> Result<(Processes, String)> {
    let mut processes = Processes(Vec::new());
    let scheduler_port = free_port()?;
    let scheduler = format!("127.0.0.1:{scheduler_port}");
    processes.spawn(&[
        "ballista".into(),
        "scheduler".into(),
        "--bind".into(),
        scheduler.clone(),
    ])?;
    processes.wait_listening(scheduler_port)?;
    for _ in 0..executors.max(1) {
        let flight = free_port()?;
        let grpc = free_port()?;
        processes.spawn(&[
            "ballista".into(),
            "executor".into(),
            "--scheduler".into(),
            scheduler.clone(),
            "--bind".into(),
            format!("127.0.0.1:{flight}"),
            "--grpc-port".into(),
            grpc.to_string(),
            "--concurrent-tasks".into(),
            concurrent_tasks.to_string(),
        ])?;
        processes.wait_listening(flight)?;
    }
    Ok((processes, scheduler))
}

/// One warm-up run of `sql` on each side: the rows of single-node gdscan's
/// answer and whether the cluster's answer equals it.
async fn warm_up(sides: &SingleNode, cluster: &SessionContext, sql: &str) -> Result<(usize, bool)> {
    let (_, rows, ours) = run_once(&sides.gds, sql).await?;
    run_once(&sides.listing, sql).await?;
    let (_, _, theirs) = run_once(cluster, sql).await?;
    Ok((rows, ours == theirs))
}

/// `iterations` rounds of one timed run of `sql` per side, the side that
/// goes first rotating: the median seconds of single-node gdscan,
/// single-node DataFusion and the cluster.
async fn time_sides(
    sides: &SingleNode,
    cluster: &SessionContext,
    sql: &str,
    iterations: usize,
) -> Result<[f64; 3]> {
    let mut times = [Vec::new(), Vec::new(), Vec::new()];
    for i in 0..iterations.max(1) {
        for k in 0..3 {
            let side = (i + k) % 3;
            let ctx = [&sides.gds, &sides.listing, cluster][side];
            times[side].push(run_once(ctx, sql).await?.0);
        }
    }
    Ok(times.map(|t| median(&t)))
}

/// Runs the benchmark.
pub(crate) fn run(opts: &BallistaBenchOptions) -> Result<BallistaBenchReport> {
    let common = &opts.common;
    let queries = common.queries()?;
    let options = common.table_options()?;
    let started = Instant::now();
    let (processes, scheduler) = start_cluster(opts.executors, opts.concurrent_tasks)?;
    let sides = SingleNode::new(common, options.clone())?;
    let rt = gdscan::ballista::runtime().map_err(LocalClusterError::Runtime)?;
    let (startup_s, results) = rt.block_on(async {
        sides.register_listing(&common.data).await?;
        let cluster = gdscan::ballista::remote(&scheduler, Some(sides.partitions)).await?;
        register_tpch(&cluster, &common.data, options)?;
        let mut startup_s = 0.0;
        let mut results = Vec::new();
        for &(query, sql) in &queries {
            let (rows, answers_match) = warm_up(&sides, &cluster, sql).await?;
            if results.is_empty() {
                startup_s = started.elapsed().as_secs_f64();
            }
            let [g, d, b] = time_sides(&sides, &cluster, sql, common.iterations).await?;
            results.push(BallistaQueryResult {
                query,
                rows,
                answers_match,
                gdscan_median: g,
                datafusion_median: d,
                ballista_median: b,
                overhead: b / g.max(f64::MIN_POSITIVE),
            });
        }
        Ok::<_, Error>((startup_s, results))
    })?;
    drop(processes);
    Ok(BallistaBenchReport {
        data: common.data.display().to_string(),
        executors: opts.executors.max(1),
        concurrent_tasks: opts.concurrent_tasks,
        partitions: sides.partitions,
        num_cpus: available_cpus(),
        startup_s,
        queries: results,
    })
}

/// The report as a table.
pub(crate) fn render(r: &BallistaBenchReport) -> String {
    let mut out = format!(
        "gdscan bench tpch --engine ballista: {} ({} executors x {} tasks, {} partitions, {} CPUs; cluster up and first answer in {:.1} s)\n\
         overhead = ballista median / single-node gdscan median\n\
         {:<6} {:>8} {:>10} {:>12} {:>10} {:>9} {:>8}\n",
        r.data,
        r.executors,
        r.concurrent_tasks,
        r.partitions,
        r.num_cpus,
        r.startup_s,
        "query",
        "rows",
        "gdscan s",
        "datafusion s",
        "ballista s",
        "overhead",
        "answers"
    );
    for q in &r.queries {
        out += &format!(
            "{:<6} {:>8} {:>10.4} {:>12.4} {:>10.4} {:>9.2} {:>8}\n",
            format!("q{}", q.query),
            q.rows,
            q.gdscan_median,
            q.datafusion_median,
            q.ballista_median,
            q.overhead,
            if q.answers_match { "equal" } else { "DIFFER" }
        );
    }
    let sum = |f: fn(&BallistaQueryResult) -> f64| r.queries.iter().map(f).sum::<f64>();
    let (g, d, b) = (
        sum(|q| q.gdscan_median),
        sum(|q| q.datafusion_median),
        sum(|q| q.ballista_median),
    );
    out += &format!(
        "{:<6} {:>8} {:>10.4} {:>12.4} {:>10.4} {:>9.2}\n",
        "total",
        "",
        g,
        d,
        b,
        b / g.max(f64::MIN_POSITIVE)
    );
    out
}
