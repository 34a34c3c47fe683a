//! The CLI's arguments (clap) and commands. Each command returns the text to
//! print, so the binary only prints and sets the exit code.

mod args;
#[cfg(feature = "ballista")]
mod ballista;
mod bench;
mod demo;
mod doctor;
mod error;
mod process_age;
mod read;
mod scan;
mod scan_decode;
#[cfg(feature = "datafusion")]
mod sql;
#[cfg(feature = "datafusion")]
mod sql_stats;
mod tpch;

pub use error::CliError;

use clap::{Parser, Subcommand};

use crate::error::Result;

/// gdscan: Parquet and file ranges from storage into NVIDIA GPU memory.
#[derive(Debug, Parser)]
#[command(name = "gdscan", version, about)]
pub struct Cli {
    /// The command.
    #[command(subcommand)]
    pub command: Command,
}

/// Commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Read a file range into device (or host) memory and report rate and path.
    Read(read::ReadArgs),
    /// Plan a Parquet scan (no data read): chunks, coalesced requests, totals.
    Plan(scan::PlanArgs),
    /// Scan a Parquet file's column chunks into device (or host) memory.
    Scan(scan::ScanArgs),
    /// Benchmarks against baselines measured in the same run.
    #[command(subcommand)]
    Bench(bench::BenchCommand),
    /// Will my reads use GDS? GPU, driver, cuFile, nvidia-fs, cufile.json, and stage 1 for PATH.
    Doctor(doctor::DoctorArgs),
    /// Generate a file in a temporary folder and read it (GPU if present, else host).
    Demo(demo::DemoArgs),
    /// TPC-H data: `tpch gen` writes the eight tables as Parquet.
    #[command(subcommand)]
    Tpch(tpch::TpchCommand),
    /// Run one SQL statement (DataFusion) over Parquet tables read through gdscan.
    #[cfg(feature = "datafusion")]
    Sql(sql::SqlArgs),
    /// A Ballista cluster whose executors read through gdscan: `ballista
    /// scheduler`, `ballista executor`.
    #[cfg(feature = "ballista")]
    #[command(subcommand)]
    Ballista(ballista::BallistaCommand),
}

/// Runs a parsed command line and returns what to print.
pub fn run(cli: Cli) -> Result<String> {
    match cli.command {
        Command::Read(args) => read::run(&args),
        Command::Bench(cmd) => bench::run(cmd),
        Command::Demo(args) => demo::run(&args),
        Command::Doctor(args) => doctor::run(&args),
        Command::Plan(args) => scan::run_plan(&args),
        Command::Scan(args) if args.decode => scan_decode::run_decode(&args),
        Command::Scan(args) => scan::run_scan(&args),
        Command::Tpch(cmd) => tpch::run(cmd),
        #[cfg(feature = "datafusion")]
        Command::Sql(args) => sql::run(&args),
        #[cfg(feature = "ballista")]
        Command::Ballista(cmd) => ballista::run(cmd),
    }
}
