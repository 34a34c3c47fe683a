//! `gdscan bench ...`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::{parse_size_arg, Destination, EngineArgs};
use crate::bench::read::{render, run as run_read, BenchRoute, ReadBenchOptions};
use crate::error::Result;

/// Benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// File into device memory: ours (per route and thread count) against the
    /// pinned H2D ceiling and a naive pread + copy, in one run.
    Read(BenchReadArgs),
    /// Parquet scans (all columns, Q1, Q6 of TPC-H lineitem) into device
    /// memory, against a whole-file read and object_store's get_ranges.
    Scan(BenchScanArgs),
    /// TPC-H scans (every table; lineitem's Q1, Q6, Q14, Q19 column sets and
    /// filters) from a `gdscan tpch gen` folder into device (or host) memory.
    Tpch(BenchTpchArgs),
}

/// Arguments of `gdscan bench tpch`.
#[derive(Debug, Args)]
pub struct BenchTpchArgs {
    /// A `gdscan tpch gen` folder (generated at --sf when it has no lineitem).
    #[arg(long)]
    pub data: PathBuf,
    /// Scale factor to generate when --data is empty.
    #[arg(long)]
    pub sf: Option<f64>,
    /// Queries: scan, q1, q6, q14, q19.
    #[arg(long, value_delimiter = ',', default_value = "scan,q1,q6,q14,q19")]
    pub queries: Vec<String>,
    /// Host memory or a device.
    #[command(flatten)]
    pub destination: Destination,
    /// Timed iterations per query, after one warm-up (the median is reported).
    #[arg(long, default_value = "3")]
    pub iterations: usize,
    /// Drop the files from the page cache before every iteration.
    #[arg(long)]
    pub cold: bool,
    /// Also write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Engine settings.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Arguments of `gdscan bench scan`.
#[derive(Debug, Args)]
pub struct BenchScanArgs {
    /// A lineitem Parquet file (generated at --sf into --dir when absent).
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// TPC-H scale factor of the generated lineitem.
    #[arg(long, default_value = "1")]
    pub sf: f64,
    /// Folder for the generated file.
    #[arg(long, default_value = ".")]
    pub dir: PathBuf,
    /// CUDA device.
    #[arg(long, default_value = "0")]
    pub device: usize,
    /// Timed runs per case.
    #[arg(long, default_value = "3")]
    pub iterations: usize,
    /// Also write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Engine settings.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Arguments of `gdscan bench read`.
#[derive(Debug, Args)]
pub struct BenchReadArgs {
    /// Folders to place the benchmark file in (e.g. an ext4 folder and /dev/shm).
    #[arg(long = "dir", default_value = ".")]
    pub dirs: Vec<PathBuf>,
    /// File size.
    #[arg(long, default_value = "4GiB", value_parser = parse_size_arg)]
    pub size: u64,
    /// Thread counts to sweep.
    #[arg(long, value_delimiter = ',', default_value = "1,2,4,8,16")]
    pub threads_sweep: Vec<usize>,
    /// Routes to sweep: bounce, mmap, cufile.
    #[arg(long, value_delimiter = ',', default_value = "bounce,mmap,cufile")]
    pub routes: Vec<BenchRoute>,
    /// Also measure cold (page cache dropped before each run; not on tmpfs).
    #[arg(long)]
    pub cold: bool,
    /// CUDA device.
    #[arg(long, default_value = "0")]
    pub device: usize,
    /// Timed runs per case.
    #[arg(long, default_value = "3")]
    pub repeats: usize,
    /// Also write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Engine settings (threads and route are swept).
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Runs a bench command.
pub fn run(cmd: BenchCommand) -> Result<String> {
    match cmd {
        BenchCommand::Tpch(args) => {
            if let Some(sf) = args.sf {
                if !args.data.join("lineitem").is_dir() {
                    let mut gen = crate::tpch::GenOptions::new(sf, &args.data);
                    gen.quiet = true;
                    crate::tpch::generate(&gen)?;
                }
            }
            let opts = crate::bench::tpch::TpchBenchOptions {
                data: args.data.clone(),
                queries: args.queries.clone(),
                device: args.destination.device(),
                iterations: args.iterations,
                cold: args.cold,
                settings: args.engine.settings()?,
            };
            let report = crate::bench::tpch::run(&opts)?;
            if let Some(path) = &args.json {
                let text = serde_json::to_string_pretty(&report).expect("report serialises");
                std::fs::write(path, text)
                    .map_err(|e| crate::Error::io(&path.display().to_string(), "write", e))?;
            }
            Ok(crate::bench::tpch::render(&report))
        }
        BenchCommand::Scan(args) => {
            let file = match &args.file {
                Some(f) => f.clone(),
                None => {
                    let f = args.dir.join(format!("lineitem-sf{}.parquet", args.sf));
                    crate::tpch::ensure_lineitem(args.sf, &f)?;
                    f
                }
            };
            let opts = crate::bench::scan::ScanBenchOptions {
                file,
                device: args.device,
                iterations: args.iterations,
                settings: args.engine.settings()?,
                cases: crate::bench::scan::lineitem_cases(),
            };
            let report = crate::bench::scan::run(&opts)?;
            if let Some(path) = &args.json {
                let text = serde_json::to_string_pretty(&report).expect("report serialises");
                std::fs::write(path, text)
                    .map_err(|e| crate::Error::io(&path.display().to_string(), "write", e))?;
            }
            Ok(crate::bench::scan::render(&report))
        }
        BenchCommand::Read(args) => {
            let size_name = crate::bench::data::human(args.size);
            let opts = ReadBenchOptions {
                files: args
                    .dirs
                    .iter()
                    .map(|d| d.join(format!("gdscan-bench-{size_name}.bin")))
                    .collect(),
                size: args.size,
                threads: args.threads_sweep.clone(),
                routes: args.routes.clone(),
                device: args.device,
                repeats: args.repeats,
                base: args.engine.settings()?,
                cold: args.cold,
            };
            let report = run_read(&opts)?;
            if let Some(path) = &args.json {
                let text = serde_json::to_string_pretty(&report).expect("report serialises");
                std::fs::write(path, text)
                    .map_err(|e| crate::Error::io(&path.display().to_string(), "write", e))?;
            }
            Ok(render(&report))
        }
    }
}
