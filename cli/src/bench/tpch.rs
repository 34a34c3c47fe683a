//! `gdscan bench tpch`: TPC-H scans (every table, and lineitem's column sets
//! and filters of Q1, Q6, Q14 and Q19) planned and fetched into device (or
//! host) memory from a `gdscan tpch gen` folder; JSON in the spirit of
//! DataFusion's dfbench output (context + per-query iterations).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::cases::{lineitem_query, ScanCase};
use super::error::BenchError;
use crate::error::{Error, Result};
use crate::tpch::Table;
use gdscan::config::Settings;
use gdscan::cuda::{Device, Devices};
use gdscan::engine::Engine;
use gdscan::engine::{drop_from_cache, on_tmpfs};
use gdscan::parquet::fetch::{
    fetch, Allocator, DeviceAllocator, FetchOptions, HostAllocator, SourceScan,
};
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::plan::{Projection, ScanPlan, ScanRequest};
use gdscan::store::{LocalSource, Source};

/// The query cases by name: `scan` (every table, all columns) and the
/// lineitem queries of [`lineitem_query`].
pub(crate) fn cases(queries: &[String]) -> Result<Vec<(String, Table, ScanCase)>> {
    let mut out = Vec::new();
    for q in queries {
        match q.as_str() {
            "scan" => {
                for t in Table::ALL {
                    out.push((
                        format!("scan_{}", t.name()),
                        t,
                        ScanCase {
                            name: format!("scan_{}", t.name()),
                            projection: Projection::All,
                            filter: None,
                        },
                    ));
                }
            }
            q if lineitem_query(q).is_some() => out.push((
                q.to_string(),
                Table::LineItem,
                lineitem_query(q).expect("checked"),
            )),
            other => return Err(BenchError::UnknownCase(other.to_string()).into()),
        }
    }
    Ok(out)
}

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct TpchBenchOptions {
    /// A `gdscan tpch gen` folder.
    pub data: PathBuf,
    /// Query names (see [`cases`]).
    pub queries: Vec<String>,
    /// CUDA device, or None for host memory.
    pub device: Option<usize>,
    /// Several GPUs (overrides `device`): every query on the first alone,
    /// then spread over all of them (row groups by bytes), back to back.
    pub devices: Option<Devices>,
    /// Timed iterations per query, after one warm-up.
    pub iterations: usize,
    /// Drop the files from the page cache before every iteration.
    pub cold: bool,
    /// Decode on the GPU (file → Arrow columns in GPU memory) instead of
    /// landing the raw bytes.
    pub decode: bool,
    /// Engine settings.
    pub settings: Settings,
}

/// One timed iteration.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Iteration {
    /// Seconds.
    pub elapsed: f64,
    /// Rows in the kept row groups.
    pub row_count: i64,
    /// Bytes landed.
    pub bytes_read: u64,
    /// Bytes each GPU's share landed (one entry per GPU; empty for host
    /// memory).
    pub device_bytes: Vec<u64>,
}

/// One query's results.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct QueryResult {
    /// Name.
    pub query: String,
    /// The GPUs it landed on (empty: host memory).
    pub devices: Vec<usize>,
    /// Files scanned.
    pub files: usize,
    /// Bytes the scan needs.
    pub bytes_needed: u64,
    /// Bytes it reads.
    pub bytes_read: u64,
    /// Median iteration's GB/s of bytes read.
    pub median_gbps: f64,
    /// The timed iterations.
    pub iterations: Vec<Iteration>,
    /// The path report's verdict after the last iteration.
    pub verdict: String,
}

/// The run's context (dfbench-style).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Context {
    /// gdscan's version.
    pub gdscan_version: &'static str,
    /// Seconds since the Unix epoch at the start.
    pub start_time: u64,
    /// CPUs available.
    pub num_cpus: usize,
    /// "host" or the GPU's name.
    pub destination: String,
    /// Cold (page cache dropped) or warm.
    pub cold: bool,
    /// Decoded on the GPU (else the raw bytes landed).
    pub decode: bool,
    /// Why cold runs were not possible for some files, if so.
    pub cold_note: Option<String>,
    /// The settings.
    pub settings: Settings,
    /// The data folder.
    pub data: String,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct TpchBenchReport {
    /// Context.
    pub context: Context,
    /// Per query.
    pub queries: Vec<QueryResult>,
}

/// The Parquet files of `table` in a `tpch gen` folder, sorted.
pub(crate) fn table_files(data: &Path, table: Table) -> Result<Vec<PathBuf>> {
    let dir = data.join(table.name());
    let shown = dir.display().to_string();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map_err(|e| Error::from_open(&shown, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    files.sort();
    if files.is_empty() {
        return Err(BenchError::NoData(shown).into());
    }
    Ok(files)
}

struct Prepared {
    source: Arc<dyn Source>,
    metadata: Arc<::parquet::file::metadata::ParquetMetaData>,
    plan: Arc<ScanPlan>,
    path: PathBuf,
}

fn run_once<A: Allocator + Clone>(
    files: &[Prepared],
    allocs: &[A],
    cold: bool,
    decode_on: Option<&[usize]>,
) -> Result<Iteration> {
    if cold {
        for f in files {
            drop_from_cache(&f.path)?;
        }
    }
    if let Some(devices) = decode_on {
        return decode_once(files, devices);
    }
    let scans: Vec<SourceScan> = files
        .iter()
        .map(|f| SourceScan::new(f.source.clone(), f.plan.clone()))
        .collect();
    let start = Instant::now();
    let mut device_bytes = vec![0; allocs.len()];
    for rg in fetch(scans, allocs.to_vec(), FetchOptions::default()) {
        let rg = rg?;
        device_bytes[rg.share] += rg.bytes_read;
    }
    let bytes_read = device_bytes.iter().sum();
    Ok(Iteration {
        elapsed: start.elapsed().as_secs_f64(),
        row_count: files
            .iter()
            .flat_map(|f| f.plan.row_groups.iter())
            .map(|r| r.num_rows)
            .sum(),
        bytes_read,
        device_bytes,
    })
}

/// One decode of `files` on `devices` (spread by bytes when several):
/// every batch consumed and dropped.
fn decode_once(files: &[Prepared], devices: &[usize]) -> Result<Iteration> {
    use gdscan::decode::scan::{decode, DecodeInput, DecodeOptions};
    let inputs: Vec<DecodeInput> = files
        .iter()
        .map(|f| DecodeInput {
            source: f.source.clone(),
            metadata: f.metadata.clone(),
            plan: f.plan.clone(),
        })
        .collect();
    let start = Instant::now();
    let mut rows = 0i64;
    let options = DecodeOptions {
        devices: Devices::List(devices.to_vec()),
        ..DecodeOptions::from_env()?
    };
    let mut stream = decode(inputs, ScanRequest::default(), options).map_err(Error::decode)?;
    for batch in stream.by_ref() {
        rows += batch.map_err(Error::decode)?.num_rows() as i64;
    }
    let shares = stream.shares();
    let (bytes_read, device_bytes) = (
        shares.iter().map(|s| s.report.bytes_read).sum(),
        shares.iter().map(|s| s.report.bytes_read).collect(),
    );
    Ok(Iteration {
        elapsed: start.elapsed().as_secs_f64(),
        row_count: rows,
        bytes_read,
        device_bytes,
    })
}

fn run_query<A: Allocator + Clone>(
    opts: &TpchBenchOptions,
    engine: &Arc<Engine>,
    table: Table,
    case: &ScanCase,
    allocs: &[A],
    devices: &[usize],
) -> Result<QueryResult> {
    let mut prepared = Vec::new();
    for path in table_files(&opts.data, table)? {
        let source: Arc<dyn Source> = Arc::new(LocalSource::open(engine.clone(), &path)?);
        let metadata = load(&source, MetadataOptions::default())?;
        let plan = case.plan(source.location(), &metadata)?;
        prepared.push(Prepared {
            source,
            metadata,
            plan: Arc::new(plan),
            path,
        });
    }
    let cold = opts.cold && !prepared.iter().any(|p| on_tmpfs(&p.path));
    let decode_on = opts.decode.then_some(devices);
    run_once(&prepared, allocs, cold, decode_on)?; // warm-up
    let mut iterations = Vec::new();
    for _ in 0..opts.iterations.max(1) {
        let mut it = run_once(&prepared, allocs, cold, decode_on)?;
        if devices.is_empty() {
            it.device_bytes.clear(); // host memory: no GPU's share
        }
        iterations.push(it);
    }
    let mut times: Vec<f64> = iterations.iter().map(|i| i.elapsed).collect();
    times.sort_by(|a, b| a.total_cmp(b));
    let bytes_read: u64 = prepared.iter().map(|p| p.plan.totals.bytes_read).sum();
    let verdict = prepared
        .first()
        .map(|p| gdscan::report::build(p.source.as_ref(), None).verdict)
        .unwrap_or_default();
    Ok(QueryResult {
        query: case.name.clone(),
        devices: devices.to_vec(),
        files: prepared.len(),
        bytes_needed: prepared.iter().map(|p| p.plan.totals.bytes_needed).sum(),
        bytes_read,
        median_gbps: gdscan::report::gbps(bytes_read, times[times.len() / 2]),
        iterations,
        verdict,
    })
}

/// Runs the benchmark.
pub(crate) fn run(opts: &TpchBenchOptions) -> Result<TpchBenchReport> {
    let engine = Engine::new(opts.settings.clone())?;
    let cases = cases(&opts.queries)?;
    let start_time = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let mut queries = Vec::new();
    let multi = match &opts.devices {
        Some(d) => d.open()?,
        None => Vec::new(),
    };
    let destination = if multi.len() > 1 {
        let mut names = Vec::new();
        for &device in &multi {
            engine.preallocate_bounce_buffers(device)?;
            names.push(format!("{}: {}", device.ordinal(), device.name()?));
        }
        let ordinals: Vec<usize> = multi.iter().map(|d| d.ordinal()).collect();
        let one = [DeviceAllocator::new(multi[0])];
        let all: Vec<DeviceAllocator> = multi.iter().map(|&d| DeviceAllocator::new(d)).collect();
        for (_, table, case) in &cases {
            queries.push(run_query(
                opts,
                &engine,
                *table,
                case,
                &one,
                &ordinals[..1],
            )?);
            queries.push(run_query(opts, &engine, *table, case, &all, &ordinals)?);
        }
        names.join(", ")
    } else {
        match multi.first().map(|d| d.ordinal()).or(opts.device) {
            Some(ordinal) => {
                let device = Device::get(ordinal)?;
                engine.preallocate_bounce_buffers(device)?;
                let alloc = [DeviceAllocator::new(device)];
                for (_, table, case) in &cases {
                    queries.push(run_query(opts, &engine, *table, case, &alloc, &[ordinal])?);
                }
                device.name()?
            }
            None => {
                if opts.decode {
                    return Err(BenchError::DecodeNeedsGpu.into());
                }
                for (_, table, case) in &cases {
                    queries.push(run_query(
                        opts,
                        &engine,
                        *table,
                        case,
                        &[HostAllocator],
                        &[],
                    )?);
                }
                "host".to_string()
            }
        }
    };
    let tmpfs = opts.cold
        && Table::ALL
            .iter()
            .filter_map(|t| table_files(&opts.data, *t).ok())
            .flatten()
            .any(|p| on_tmpfs(&p));
    Ok(TpchBenchReport {
        context: Context {
            gdscan_version: env!("CARGO_PKG_VERSION"),
            start_time,
            num_cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            destination,
            cold: opts.cold,
            decode: opts.decode,
            cold_note: tmpfs
                .then(|| "files on tmpfs cannot be dropped from memory: measured warm".to_string()),
            settings: opts.settings.clone(),
            data: opts.data.display().to_string(),
        },
        queries,
    })
}

/// The report as a table.
pub(crate) fn render(r: &TpchBenchReport) -> String {
    let mut out = format!(
        "gdscan bench tpch: {} into {} ({}{}){}\n{:<16} {:>5} {:>5} {:>14} {:>14} {:>6} {:>10} {:>10} {:>9}  bytes per GPU\n",
        r.context.data,
        r.context.destination,
        if r.context.cold { "cold" } else { "warm" },
        if r.context.decode {
            ", decoded on the GPU: rows are the rows decoded"
        } else {
            ""
        },
        r.context.cold_note.as_deref().map(|n| format!(" — {n}")).unwrap_or_default(),
        "query",
        "gpus",
        "files",
        "needed",
        "read",
        "r/n",
        "rows",
        "median s",
        "GB/s"
    );
    let mut one_gpu: Option<&QueryResult> = None;
    for q in &r.queries {
        let mut t: Vec<f64> = q.iterations.iter().map(|i| i.elapsed).collect();
        t.sort_by(|a, b| a.total_cmp(b));
        let gpus: Vec<String> = q.devices.iter().map(|d| d.to_string()).collect();
        let per_gpu: Vec<String> = q
            .iterations
            .last()
            .map(|i| i.device_bytes.iter().map(|b| b.to_string()).collect())
            .unwrap_or_default();
        let speedup = match one_gpu {
            Some(one) if one.query == q.query && q.devices.len() > 1 => {
                format!("  x{:.2} over 1 GPU", q.median_gbps / one.median_gbps)
            }
            _ => String::new(),
        };
        if q.devices.len() == 1 {
            one_gpu = Some(q);
        }
        out += &format!(
            "{:<16} {:>5} {:>5} {:>14} {:>14} {:>6.3} {:>10} {:>10.4} {:>9.2}  {}{}\n",
            q.query,
            if gpus.is_empty() {
                "host".to_string()
            } else {
                gpus.join(",")
            },
            q.files,
            q.bytes_needed,
            q.bytes_read,
            q.bytes_read as f64 / q.bytes_needed.max(1) as f64,
            q.iterations.first().map(|i| i.row_count).unwrap_or(0),
            t[t.len() / 2],
            q.median_gbps,
            per_gpu.join("/"),
            speedup
        );
    }
    out
}
