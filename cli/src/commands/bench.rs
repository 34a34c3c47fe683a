//! `gdscan bench ...`.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::args::{parse_size_arg, Destination, EngineArgs, StoreArgs};
use crate::bench::read::{render, run as run_read, BenchRoute, ReadBenchOptions};
use crate::error::Result;
use gdscan::config::decode::TableDecode;
use gdscan::cuda::Devices;

/// Benchmarks.
#[derive(Debug, Subcommand)]
pub enum BenchCommand {
    /// File into device memory: ours (per route and thread count) against the
    /// pinned H2D ceiling and a naive pread + copy, in one run.
    Read(BenchReadArgs),
    /// Parquet scans (all columns, Q1, Q6 of TPC-H lineitem) into device
    /// memory, against a whole-file read and object_store's get_ranges.
    Scan(BenchScanArgs),
    /// TPC-H from a `gdscan tpch gen` folder: `--engine scan` (default)
    /// scans every table and lineitem's Q1, Q6, Q14, Q19 column sets and
    /// filters into device (or host) memory; `--engine datafusion` runs the
    /// 22 queries through DataFusion over gdscan's provider and over
    /// DataFusion's own tables, with the ratio per query; with `--streams`,
    /// a load run of concurrent query streams over gdscan's provider instead.
    Tpch(BenchTpchArgs),
    /// TPC-H lineitem from a `gdscan tpch gen` folder decoded on the GPU
    /// (file → Arrow columns in device memory), beside the raw scan of the
    /// same bytes and the pinned copy ceiling, in one run; `--cases nested`
    /// decodes orders_nested (orders with their lineitems as a list of
    /// structs) the same way.
    Decode(BenchDecodeArgs),
    /// lineitem scans from an object store (S3: AWS_* environment) at several
    /// concurrencies, against object_store's get_ranges plus a copy.
    Store(BenchStoreArgs),
    /// The chart of a saved `bench decode --json` report (and cuDF's, from
    /// benches/anchors/cudf_decode.py --json) as SVG.
    Chart(BenchChartArgs),
}

/// Arguments of `gdscan bench chart`.
#[derive(Debug, Args)]
pub struct BenchChartArgs {
    /// A `gdscan bench decode --json` report.
    #[arg(long)]
    pub decode: PathBuf,
    /// cuDF's report on the same files (benches/anchors/cudf_decode.py --json).
    #[arg(long)]
    pub cudf: Option<PathBuf>,
    /// The SVG to write.
    #[arg(long)]
    pub out: PathBuf,
    /// The chart's title.
    #[arg(
        long,
        default_value = "gdscan bench decode: file to decoded GPU columns"
    )]
    pub title: String,
}

/// Arguments of `gdscan bench store`.
#[derive(Debug, Args)]
pub struct BenchStoreArgs {
    /// The lineitem object, e.g. s3://bucket/lineitem.parquet.
    #[arg(long)]
    pub url: String,
    /// Upload this local file to --url first.
    #[arg(long)]
    pub upload: Option<PathBuf>,
    /// Concurrencies to sweep.
    #[arg(long, value_delimiter = ',', default_value = "1,4,16,64")]
    pub concurrency: Vec<usize>,
    /// Scans: all (every column), q1, q6, q14, q19 (lineitem's columns and filters).
    #[arg(long, value_delimiter = ',', default_value = "all,q1,q6")]
    pub cases: Vec<String>,
    /// Host memory or a device.
    #[command(flatten)]
    pub destination: Destination,
    /// Timed runs per point, after one warm-up (medians are reported).
    #[arg(long, default_value = "3")]
    pub iterations: usize,
    /// Also write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Store settings (--store-concurrency is swept by --concurrency).
    #[command(flatten)]
    pub store: StoreArgs,
}

/// Arguments of `gdscan bench decode`.
#[derive(Debug, Args)]
pub struct BenchDecodeArgs {
    /// A `gdscan tpch gen` folder (with --sf, the tables the cases read
    /// are generated in it when missing).
    #[arg(long)]
    pub data: PathBuf,
    /// Scale factor to generate the cases' tables at when --data lacks them.
    #[arg(long)]
    pub sf: Option<f64>,
    /// Cases: all (every lineitem column), a query's lineitem columns (q1,
    /// q6, q14, q19), nested (every column of orders_nested: the orders
    /// columns and each order's lineitems as list<struct>, from `tpch gen
    /// --tables orders_nested`), or lineitem columns joined by +
    /// (l_returnflag+l_linestatus).
    #[arg(long, value_delimiter = ',', default_value = "all,q1,q6")]
    pub cases: Vec<String>,
    /// The GPU.
    #[arg(long, default_value = "0")]
    pub device: usize,
    /// GPUs, e.g. 0,1 or all: every case on the first alone, then spread
    /// over all of them by bytes (raw scan and decode), in the same run.
    #[arg(long, conflicts_with = "device")]
    pub devices: Option<Devices>,
    /// Timed runs per case, after one warm-up (medians are reported).
    #[arg(long, default_value = "5")]
    pub iterations: usize,
    /// Stored MiB of row groups decoded together (one nvCOMP batch); the
    /// decoder's default when not given.
    #[arg(long)]
    pub group_mib: Option<u64>,
    /// Groups of row groups queued on the GPU at once; the decoder's
    /// default when not given.
    #[arg(long)]
    pub depth: Option<usize>,
    /// Where Snappy and LZ4 pages are checked before nvCOMP: host, gpu,
    /// scan or off (default: GDSCAN_DECODE_CHECK, else scan: every Snappy
    /// page by the GPU's Snappy scan, LZ4 on the host; gpu: short Snappy
    /// pages a warp each on the GPU, long ones and LZ4 on the host).
    #[arg(long)]
    pub check: Option<gdscan::decode::scan::CompressedCheck>,
    /// Also write the report as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also draw the one-GPU cases as an SVG chart (time per stage beside
    /// the PCIe floor; with --cudf, cuDF's total).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// cuDF's report on the same files for the chart
    /// (benches/anchors/cudf_decode.py --json).
    #[arg(long, requires = "plot")]
    pub cudf: Option<PathBuf>,
}

/// What `gdscan bench tpch` measures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum TpchEngine {
    /// gdscan's raw scans (plan and fetch) into device or host memory.
    #[default]
    Scan,
    /// The 22 TPC-H queries through DataFusion: gdscan's provider against
    /// DataFusion's `ListingTable` (needs the `datafusion` feature).
    Datafusion,
    /// The 22 TPC-H queries on a Ballista cluster on this host (a scheduler
    /// and `--executors` executors reading through gdscan) against
    /// single-node gdscan and DataFusion (needs the `ballista` feature).
    Ballista,
}

impl TpchEngine {
    /// The engine as `--engine` names it.
    pub fn name(self) -> &'static str {
        match self {
            TpchEngine::Scan => "scan",
            TpchEngine::Datafusion => "datafusion",
            TpchEngine::Ballista => "ballista",
        }
    }
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
    /// What to measure: scan (raw scans) or datafusion (the 22 queries).
    #[arg(long = "engine", value_enum, default_value = "scan")]
    pub kind: TpchEngine,
    /// Scans of `--engine scan`: scan, q1, q6, q14, q19.
    #[arg(long, value_delimiter = ',', default_value = "scan,q1,q6,q14,q19")]
    pub queries: Vec<String>,
    /// Queries of `--engine datafusion`, 1 to 22 (repeatable or
    /// comma-separated; default all).
    #[arg(long = "query", value_delimiter = ',')]
    pub query: Vec<usize>,
    /// DataFusion's target partitions for `--engine datafusion` (default:
    /// the available CPUs).
    #[arg(long)]
    pub partitions: Option<usize>,
    /// `--engine datafusion` only: a load (soak) run instead of the paired
    /// benchmark: this many query streams at once over gdscan's provider,
    /// each running the `--query` queries once per round, every stream in
    /// its own order; per round its time, failures, the process's RSS and
    /// what gdscan's memory pools hold. Fails if a query fails or a row
    /// count differs from round 1's.
    #[arg(
        long,
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..),
        conflicts_with_all = ["cold", "listing_pushdown"]
    )]
    pub streams: Option<usize>,
    /// Rounds of `--streams` (each round runs every stream to its end).
    #[arg(
        long,
        default_value_t = 1,
        requires = "streams",
        value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..)
    )]
    pub rounds: usize,
    /// Executors of `--engine ballista`.
    #[arg(long, default_value_t = 2)]
    pub executors: usize,
    /// Tasks each executor of `--engine ballista` runs at once (default:
    /// the available CPUs / executors).
    #[arg(long)]
    pub concurrent_tasks: Option<usize>,
    /// Host memory or a device.
    #[command(flatten)]
    pub destination: Destination,
    /// GPUs, e.g. 0,1 or all (`--engine scan`): every query on the first
    /// alone, then spread over all of them by bytes, in the same run.
    #[arg(long, conflicts_with_all = ["device", "host"])]
    pub devices: Option<Devices>,
    /// Timed iterations per query, after one warm-up (the median is reported).
    #[arg(long, default_value = "3")]
    pub iterations: usize,
    /// Drop the files from the page cache before every iteration.
    #[arg(long)]
    pub cold: bool,
    /// `--engine scan`: `--decode` (or `--decode gpu`) decodes on the GPU
    /// (nvCOMP and the kernels) into Arrow columns instead of landing the
    /// raw bytes. `--engine datafusion` and `ballista`: where gdscan's
    /// provider decodes pages, cpu, gpu or auto (default:
    /// GDSCAN_DATAFUSION_DECODE, else cpu; files the GPU cannot take fall
    /// back to the CPU and the report says why).
    #[arg(
        long,
        value_name = "cpu|gpu|auto",
        num_args = 0..=1,
        default_missing_value = "gpu"
    )]
    pub decode: Option<TableDecode>,
    /// `--engine datafusion` and `ballista`: DataFusion's own tables read
    /// with its row filters on (`pushdown_filters`, `reorder_filters`)
    /// rather than its defaults (off), to compare with its reader at its
    /// better setting.
    #[arg(long)]
    pub listing_pushdown: bool,
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
    /// GPUs, e.g. 0,1 or all: every case on the first alone, then spread
    /// over all of them by bytes, in the same run.
    #[arg(long, conflicts_with = "device")]
    pub devices: Option<Devices>,
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
    /// GPUs, e.g. 0,1 or all: every case on the first alone, then on all at
    /// once (the file cut into one part per GPU), in the same run.
    #[arg(long, conflicts_with = "device")]
    pub devices: Option<Devices>,
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

fn read_json(path: &std::path::Path) -> Result<serde_json::Value> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|e| crate::Error::from_open(&shown, e))?;
    serde_json::from_str(&text)
        .map_err(|e| crate::Error::io(&shown, "parse JSON", std::io::Error::other(e)))
}

/// Draws the decode chart of `report` (with cuDF's medians from `cudf`).
fn draw_chart(
    report: &serde_json::Value,
    cudf: Option<&std::path::Path>,
    out: &std::path::Path,
    title: &str,
) -> Result<()> {
    let cudf = cudf.map(read_json).transpose()?;
    let cases = crate::bench::chart::cases_from_json(report, cudf.as_ref())?;
    crate::bench::chart::write(&cases, title, out)
}

/// Writes `report` as JSON to `path`, when given.
fn write_json(path: Option<&std::path::Path>, report: &impl serde::Serialize) -> Result<()> {
    if let Some(path) = path {
        let text = serde_json::to_string_pretty(report).expect("report serialises");
        std::fs::write(path, text)
            .map_err(|e| crate::Error::io(&path.display().to_string(), "write", e))?;
    }
    Ok(())
}

/// What `bench tpch --engine datafusion` and `--engine ballista` share.
#[cfg(feature = "datafusion")]
fn query_options(args: &BenchTpchArgs) -> Result<crate::bench::tpch_sides::TpchQueryOptions> {
    Ok(crate::bench::tpch_sides::TpchQueryOptions {
        data: args.data.clone(),
        queries: args.query.clone(),
        iterations: args.iterations,
        partitions: args.partitions,
        settings: args.engine.settings()?,
        task_size: args.engine.table_task_size()?,
        decode: args.decode,
        listing_pushdown: args.listing_pushdown,
    })
}

/// `bench tpch --engine datafusion`.
#[cfg(feature = "datafusion")]
fn run_sql_bench(args: &BenchTpchArgs) -> Result<String> {
    let opts = crate::bench::tpch_sql::SqlBenchOptions {
        common: query_options(args)?,
        cold: args.cold,
    };
    let report = crate::bench::tpch_sql::run(&opts)?;
    write_json(args.json.as_deref(), &report)?;
    Ok(crate::bench::tpch_sql::render(&report))
}

/// `bench tpch --engine datafusion` in a build without DataFusion.
#[cfg(not(feature = "datafusion"))]
fn run_sql_bench(_args: &BenchTpchArgs) -> Result<String> {
    Err(super::error::CliError::NoDataFusion.into())
}

/// `bench tpch --engine datafusion --streams`: the load run, its report
/// written; when a query failed or a row count differed, the report is
/// printed and the run is an error (so that a script sees it).
#[cfg(feature = "datafusion")]
fn run_load_bench(args: &BenchTpchArgs, streams: usize) -> Result<String> {
    use crate::bench::{tpch_load, tpch_load_report};
    let opts = tpch_load::LoadBenchOptions {
        common: query_options(args)?,
        streams,
        rounds: args.rounds,
    };
    let report = tpch_load::run(&opts)?;
    write_json(args.json.as_deref(), &report)?;
    let text = tpch_load_report::render(&report);
    if report.verdict.passed {
        return Ok(text);
    }
    print!("{text}");
    Err(crate::bench::BenchError::LoadFailed {
        failed: report.verdict.failures,
        mismatches: report.verdict.row_mismatches,
        first_error: report.rounds.iter().find_map(|r| r.first_error.clone()),
    }
    .into())
}

/// `bench tpch --streams` in a build without DataFusion.
#[cfg(not(feature = "datafusion"))]
fn run_load_bench(_args: &BenchTpchArgs, _streams: usize) -> Result<String> {
    Err(super::error::CliError::NoDataFusion.into())
}

/// `bench tpch --engine ballista`.
#[cfg(feature = "ballista")]
fn run_ballista_bench(args: &BenchTpchArgs) -> Result<String> {
    let cpus = crate::bench::tpch_sides::available_cpus();
    let executors = args.executors.max(1);
    let opts = crate::bench::tpch_ballista::BallistaBenchOptions {
        common: query_options(args)?,
        executors,
        concurrent_tasks: args
            .concurrent_tasks
            .unwrap_or_else(|| (cpus / executors).max(1)),
    };
    let report = crate::bench::tpch_ballista::run(&opts)?;
    write_json(args.json.as_deref(), &report)?;
    Ok(crate::bench::tpch_ballista::render(&report))
}

/// `bench tpch --engine ballista` in a build without Ballista.
#[cfg(not(feature = "ballista"))]
fn run_ballista_bench(_args: &BenchTpchArgs) -> Result<String> {
    Err(super::error::CliError::NoBallista.into())
}

/// Generates at `sf` the `tables` that `data` has no folder for (the
/// folders already there are left alone).
fn generate_missing(data: &std::path::Path, sf: f64, tables: &[crate::tpch::Table]) -> Result<()> {
    let missing: Vec<crate::tpch::Table> = tables
        .iter()
        .copied()
        .filter(|t| !data.join(t.name()).is_dir())
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let gen = crate::tpch::GenOptions {
        tables: missing,
        quiet: true,
        // Only the missing tables' folders are written.
        force: true,
        ..crate::tpch::GenOptions::new(sf, data)
    };
    crate::tpch::generate(&gen)?;
    Ok(())
}

/// `bench decode`: the cases checked, the GPUs opened, the cases' tables
/// generated at `--sf` when missing, then the benchmark.
fn run_decode_bench(args: &BenchDecodeArgs) -> Result<String> {
    // An unknown case fails before a GPU is opened or data written.
    let tables = crate::bench::decode::case_tables(&args.cases)?;
    if let Some(d) = &args.devices {
        d.open()?;
    }
    if let Some(sf) = args.sf {
        generate_missing(&args.data, sf, &tables)?;
    }
    let opts = crate::bench::decode::DecodeBenchOptions {
        data: args.data.clone(),
        cases: args.cases.clone(),
        device: args.device,
        devices: args.devices.clone(),
        iterations: args.iterations,
        group_bytes: args.group_mib.map(|m| m << 20),
        depth: args.depth,
        check: args.check,
    };
    let report = crate::bench::decode::run(&opts)?;
    write_json(args.json.as_deref(), &report)?;
    if let Some(plot) = &args.plot {
        let value = serde_json::to_value(&report).expect("report serialises");
        draw_chart(&value, args.cudf.as_deref(), plot, "gdscan bench decode")?;
    }
    Ok(crate::bench::decode::render(&report))
}

/// `bench tpch`: the GPUs checked and lineitem generated at `--sf` when
/// missing, then the engine asked for.
fn run_tpch_bench(args: &BenchTpchArgs) -> Result<String> {
    if args.streams.is_some() && args.kind != TpchEngine::Datafusion {
        return Err(super::error::CliError::StreamsNeedDataFusion(args.kind.name()).into());
    }
    // A GPU that does not exist fails before any data is generated or read.
    if let Some(d) = &args.devices {
        d.open()?;
    }
    if let Some(sf) = args.sf {
        if !args.data.join("lineitem").is_dir() {
            let mut gen = crate::tpch::GenOptions::new(sf, &args.data);
            gen.quiet = true;
            crate::tpch::generate(&gen)?;
        }
    }
    if let (TpchEngine::Datafusion, Some(streams)) = (args.kind, args.streams) {
        return run_load_bench(args, streams);
    }
    if args.kind == TpchEngine::Datafusion {
        return run_sql_bench(args);
    }
    if args.kind == TpchEngine::Ballista {
        return run_ballista_bench(args);
    }
    let opts = crate::bench::tpch::TpchBenchOptions {
        data: args.data.clone(),
        queries: args.queries.clone(),
        device: args.destination.device(),
        devices: args.devices.clone(),
        iterations: args.iterations,
        cold: args.cold,
        decode: args.decode.is_some_and(|d| d != TableDecode::Cpu),
        settings: args.engine.settings()?,
    };
    let report = crate::bench::tpch::run(&opts)?;
    write_json(args.json.as_deref(), &report)?;
    Ok(crate::bench::tpch::render(&report))
}

/// `bench chart`: a saved decode report (and cuDF's) drawn as SVG.
fn run_chart(args: &BenchChartArgs) -> Result<String> {
    let value = read_json(&args.decode)?;
    draw_chart(&value, args.cudf.as_deref(), &args.out, &args.title)?;
    Ok(format!("wrote {}", args.out.display()))
}

/// `bench scan`: the GPUs checked, the file (lineitem at `--sf` when none
/// is given, generated when missing), then the benchmark.
fn run_scan_bench(args: &BenchScanArgs) -> Result<String> {
    if let Some(d) = &args.devices {
        d.open()?;
    }
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
        devices: args.devices.clone(),
        iterations: args.iterations,
        settings: args.engine.settings()?,
        cases: crate::bench::cases::lineitem_cases(),
    };
    let report = crate::bench::scan::run(&opts)?;
    write_json(args.json.as_deref(), &report)?;
    Ok(crate::bench::scan::render(&report))
}

/// `bench store`: the cases named (`all` or a query), then the benchmark.
fn run_store_bench(args: &BenchStoreArgs) -> Result<String> {
    let mut cases = Vec::new();
    for name in &args.cases {
        let case = match name.as_str() {
            "all" => crate::bench::cases::lineitem_cases().into_iter().next(),
            q => crate::bench::cases::lineitem_query(q),
        };
        cases.push(case.ok_or_else(|| super::error::CliError::UnknownCase {
            url: args.url.clone(),
            name: name.clone(),
        })?);
    }
    let opts = crate::bench::store::StoreBenchOptions {
        url: args.url.clone(),
        upload: args.upload.clone(),
        device: args.destination.device(),
        concurrency: args.concurrency.iter().map(|&c| c.max(1)).collect(),
        store: args.store.options()?,
        iterations: args.iterations,
        cases,
    };
    let report = crate::bench::store::run(&opts)?;
    write_json(args.json.as_deref(), &report)?;
    Ok(crate::bench::store::render(&report))
}

/// `bench read`: one file of `--size` per folder, then the benchmark.
fn run_read_bench(args: &BenchReadArgs) -> Result<String> {
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
        devices: args
            .devices
            .clone()
            .unwrap_or_else(|| Devices::one(args.device)),
        repeats: args.repeats,
        base: args.engine.settings()?,
        cold: args.cold,
    };
    let report = run_read(&opts)?;
    write_json(args.json.as_deref(), &report)?;
    Ok(render(&report))
}

/// Runs a bench command.
pub(super) fn run(cmd: BenchCommand) -> Result<String> {
    match cmd {
        BenchCommand::Tpch(args) => run_tpch_bench(&args),
        BenchCommand::Decode(args) => run_decode_bench(&args),
        BenchCommand::Chart(args) => run_chart(&args),
        BenchCommand::Scan(args) => run_scan_bench(&args),
        BenchCommand::Store(args) => run_store_bench(&args),
        BenchCommand::Read(args) => run_read_bench(&args),
    }
}
