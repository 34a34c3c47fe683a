//! `gdscan ballista scheduler|executor`: the processes of a Ballista
//! cluster whose executors read through gdscan.

use std::net::SocketAddr;

use clap::{Args, Subcommand};

use crate::error::{Error, Result};
use gdscan::ballista::{
    run_executor, run_scheduler, set_scan_reporter, ExecutorOptions, ProcessTotals, ScanReport,
};

/// `gdscan ballista` commands.
#[derive(Debug, Subcommand)]
pub enum BallistaCommand {
    /// Run a Ballista scheduler with gdscan's codecs (until stopped).
    Scheduler(SchedulerArgs),
    /// Run a Ballista executor that reads through gdscan (until stopped).
    Executor(ExecutorArgs),
}

/// Arguments of `gdscan ballista scheduler`.
#[derive(Debug, Args)]
pub struct SchedulerArgs {
    /// Where it listens (executors and clients connect there).
    #[arg(long, default_value = "127.0.0.1:50050")]
    pub bind: SocketAddr,
    /// Seconds without a heartbeat after which an executor is taken as
    /// lost and its tasks run elsewhere (Ballista's default: 180).
    #[arg(long, default_value_t = 180)]
    pub executor_timeout: u64,
}

/// Arguments of `gdscan ballista executor`.
#[derive(Debug, Args)]
pub struct ExecutorArgs {
    /// The scheduler, HOST:PORT.
    #[arg(long)]
    pub scheduler: String,
    /// Where its Arrow Flight service listens (executors and clients fetch
    /// partitions there; the host is the address it advertises).
    #[arg(long, default_value = "127.0.0.1:50051")]
    pub bind: SocketAddr,
    /// The port of its gRPC service (default: the Flight port + 1).
    #[arg(long)]
    pub grpc_port: Option<u16>,
    /// Tasks it runs at once (default: the available CPUs).
    #[arg(long, default_value_t = 0)]
    pub concurrent_tasks: usize,
    /// Where it keeps shuffle files (default: a temporary folder).
    #[arg(long)]
    pub work_dir: Option<String>,
    /// Seconds between heartbeats to the scheduler (Ballista's default: 60;
    /// keep it well under the scheduler's --executor-timeout).
    #[arg(long, default_value_t = 60)]
    pub heartbeat_interval: u64,
}

/// One line per finished scan partition, on stderr.
fn print_scan(report: &ScanReport, totals: &ProcessTotals) {
    let paths: Vec<String> = report
        .paths
        .iter()
        .map(|(name, bytes)| format!("{name}:{bytes}"))
        .collect();
    eprintln!(
        "gdscan-scan partition={} bytes_read={} bytes_needed={} paths={} total_scans={} total_bytes_read={} total_bytes_needed={}",
        report.partition,
        report.bytes_read,
        report.bytes_needed,
        paths.join(","),
        totals.scans,
        totals.bytes_read,
        totals.bytes_needed
    );
}

/// Runs the process until it stops.
pub(super) fn run(cmd: BallistaCommand) -> Result<String> {
    let rt = gdscan::ballista::runtime().map_err(|e| Error::io("<tokio runtime>", "start", e))?;
    match cmd {
        BallistaCommand::Scheduler(args) => {
            eprintln!("gdscan ballista scheduler: listening on {}", args.bind);
            rt.block_on(run_scheduler(args.bind, args.executor_timeout))?;
            Ok(String::new())
        }
        BallistaCommand::Executor(args) => {
            set_scan_reporter(print_scan);
            let grpc_port = match args.grpc_port {
                Some(p) => p,
                None => args.bind.port().wrapping_add(1),
            };
            eprintln!(
                "gdscan ballista executor: flight on {}, grpc port {grpc_port}, scheduler {}",
                args.bind, args.scheduler
            );
            rt.block_on(run_executor(ExecutorOptions {
                scheduler: args.scheduler,
                bind: args.bind,
                grpc_port,
                concurrent_tasks: args.concurrent_tasks,
                work_dir: args.work_dir,
                heartbeat_interval_s: args.heartbeat_interval,
            }))?;
            Ok(String::new())
        }
    }
}
