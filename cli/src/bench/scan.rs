//! `gdscan bench scan`: Parquet scans into device memory against, in the
//! same run, a whole-file read of the same file (the engine's own rate) and
//! the naive path (object_store's `get_ranges`, then one copy per range).

use std::path::PathBuf;
use std::sync::Arc;

use object_store::local::LocalFileSystem;
use object_store::ObjectStore;
use parquet::file::metadata::ParquetMetaData;
use serde::Serialize;

use super::cases::ScanCase;
use super::stats::{time_runs, Timing};
use crate::error::{Error, Result};
use gdscan::config::Settings;
use gdscan::cuda::{Device, DeviceBuffer, Devices};
use gdscan::engine::{Engine, FileHandle, IoPath, OpenMode};
use gdscan::parquet::fetch::{fetch, DeviceAllocator, FetchOptions, SourceScan};
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::plan::ScanPlan;
use gdscan::store::{LocalSource, Source};

/// What to measure.
#[derive(Debug, Clone)]
pub(crate) struct ScanBenchOptions {
    /// The Parquet file.
    pub file: PathBuf,
    /// CUDA device.
    pub device: usize,
    /// Several GPUs (overrides `device`): every case on the first alone and
    /// then spread over all of them by bytes, in the same run.
    pub devices: Option<Devices>,
    /// Timed runs per case, after one warm-up.
    pub iterations: usize,
    /// Engine settings.
    pub settings: Settings,
    /// The cases.
    pub cases: Vec<ScanCase>,
}

/// One case's figures.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ScanCaseReport {
    /// Name.
    pub name: String,
    /// Bytes the scan needs.
    pub bytes_needed: u64,
    /// Bytes read (coalesced).
    pub bytes_read: u64,
    /// bytes_read / bytes_needed.
    pub read_amplification: f64,
    /// Rows of the kept row groups.
    pub rows_covered: i64,
    /// Row groups kept / considered.
    pub row_groups: (usize, usize),
    /// gdscan's plan + fetch into device memory (bytes = bytes read).
    pub gdscan: Timing,
    /// gdscan's GB/s over the whole-file read's GB/s.
    pub ratio_to_file_read: f64,
    /// object_store `get_ranges` of the needed ranges plus a copy per range.
    pub naive: Timing,
    /// gdscan's time over the naive time, inverted (> 1 = faster).
    pub speedup_over_naive: f64,
    /// Every landed chunk's bytes equal the file's.
    pub bytes_ok: bool,
    /// The same scan spread over every GPU (with several; bytes = bytes read).
    pub all_gpus: Option<Timing>,
    /// Bytes each GPU's share read in the proof run, and whether every
    /// landed chunk equals the file's (with several GPUs).
    pub all_gpus_bytes: Vec<u64>,
    /// Every chunk landed on the GPUs equals the file's (with several GPUs).
    pub all_gpus_bytes_ok: Option<bool>,
    /// Bytes per path in the last run.
    pub path_bytes: Vec<(IoPath, u64)>,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ScanBenchReport {
    /// GPU (every GPU, with several).
    pub device: String,
    /// The GPUs of the spread runs (empty with one).
    pub devices: Vec<usize>,
    /// The file.
    pub file: String,
    /// Its size.
    pub file_bytes: u64,
    /// Row groups.
    pub row_groups: usize,
    /// Whole-file read into device memory through the engine (the ceiling for scans).
    pub file_read: Timing,
    /// The cases.
    pub cases: Vec<ScanCaseReport>,
}

/// The file every case reads: its handle, its source, its metadata, its
/// bytes (the oracle the landed chunks are compared with) and the naive
/// path to it.
struct Subject {
    /// The engine's handle on the file.
    handle: Arc<FileHandle>,
    /// The handle as a source for fetch.
    source: Arc<dyn Source>,
    /// The file's bytes, read once.
    file: Vec<u8>,
    /// The path as shown in errors and the report.
    shown: String,
    /// The file's metadata.
    metadata: Arc<ParquetMetaData>,
    /// object_store's way to the same file.
    naive: Naive,
}

/// The naive path: object_store's local file system and the file's
/// location in it.
struct Naive {
    store: LocalFileSystem,
    location: object_store::path::Path,
}

impl Naive {
    fn new(file: &std::path::Path, shown: &str) -> Result<Self> {
        let location = object_store::path::Path::from_filesystem_path(file)
            .map_err(|e| Error::io(shown, "object_store path", std::io::Error::other(e)))?;
        Ok(Self {
            store: LocalFileSystem::new(),
            location,
        })
    }

    /// Times `get_ranges` of the plan's needed ranges plus one copy per
    /// range into device memory.
    fn time(
        &self,
        plan: &ScanPlan,
        device: Device,
        shown: &str,
        iterations: usize,
    ) -> Result<Timing> {
        let ranges = plan.needed_ranges();
        let needed = plan.totals.bytes_needed;
        let mut staging = DeviceBuffer::new(device, needed.max(1) as usize)?;
        let seconds = time_runs(iterations, || {
            let parts = futures::executor::block_on(self.store.get_ranges(&self.location, &ranges))
                .map_err(|e| {
                    Error::io(shown, "object_store get_ranges", std::io::Error::other(e))
                })?;
            let mut at = 0;
            for part in parts {
                staging.copy_from_host(at, &part)?;
                at += part.len();
            }
            Ok(())
        })?;
        Ok(Timing {
            bytes: needed,
            seconds,
        })
    }
}

/// Times the whole file read into device memory through the engine.
fn time_file_read(
    handle: &FileHandle,
    file_bytes: u64,
    device: Device,
    iterations: usize,
) -> Result<Timing> {
    let mut whole = DeviceBuffer::new(device, file_bytes as usize)?;
    Ok(Timing {
        bytes: file_bytes,
        seconds: time_runs(iterations, || {
            handle.pread(&mut whole, file_bytes as usize, 0)?;
            Ok(())
        })?,
    })
}

/// Times the plan fetched into device memory with `alloc`.
fn time_fetch(
    subject: &Subject,
    plan: &Arc<ScanPlan>,
    alloc: &DeviceAllocator,
    iterations: usize,
) -> Result<Timing> {
    let seconds = time_runs(iterations, || {
        for rg in fetch(
            [SourceScan::new(subject.source.clone(), plan.clone())],
            [alloc.clone()],
            FetchOptions::default(),
        ) {
            rg?;
        }
        Ok(())
    })?;
    Ok(Timing {
        bytes: plan.totals.bytes_read,
        seconds,
    })
}

/// Proof: the fetch again, every landed piece compared with the file.
/// Returns whether all were equal and the bytes per path of that run.
fn prove(
    subject: &Subject,
    plan: &Arc<ScanPlan>,
    alloc: &DeviceAllocator,
) -> Result<(bool, Vec<(IoPath, u64)>)> {
    subject.handle.counters().reset();
    let mut bytes_ok = true;
    for rg in fetch(
        [SourceScan::new(subject.source.clone(), plan.clone())],
        [alloc.clone()],
        FetchOptions::default(),
    ) {
        let rg = rg?;
        for slice in &rg.chunks {
            let landed = rg.chunk_bytes(slice)?;
            bytes_ok &= slice.file_bytes(&subject.file) == Some(landed);
        }
    }
    Ok((bytes_ok, subject.handle.counters().nonzero()))
}

/// The scan spread over every GPU: its timing, then a proof run's bytes
/// per GPU and whether every landed chunk equals the file's.
fn spread(
    subject: &Subject,
    plan: &Arc<ScanPlan>,
    all: &[Device],
    iterations: usize,
) -> Result<(Timing, Vec<u64>, bool)> {
    let allocs: Vec<DeviceAllocator> = all.iter().map(|&d| DeviceAllocator::new(d)).collect();
    let scans = [SourceScan::new(subject.source.clone(), plan.clone())];
    let seconds = time_runs(iterations, || {
        for rg in fetch(scans.clone(), allocs.clone(), FetchOptions::default()) {
            rg?;
        }
        Ok(())
    })?;
    let mut ok = true;
    let mut proof_bytes = vec![0; allocs.len()];
    for rg in fetch(scans.clone(), allocs.clone(), FetchOptions::default()) {
        let rg = rg?;
        proof_bytes[rg.share] += rg.bytes_read;
        for slice in &rg.chunks {
            ok &= slice.file_bytes(&subject.file) == Some(rg.chunk_bytes(slice)?);
        }
    }
    let timing = Timing {
        bytes: plan.totals.bytes_read,
        seconds,
    };
    Ok((timing, proof_bytes, ok))
}

/// One case: gdscan's fetch timed and proved, spread over every GPU when
/// there are several, and the naive path timed.
fn run_case(
    case: &ScanCase,
    subject: &Subject,
    all: &[Device],
    alloc: &DeviceAllocator,
    file_read: &Timing,
    iterations: usize,
) -> Result<ScanCaseReport> {
    let plan: Arc<ScanPlan> = Arc::new(case.plan(&subject.shown, &subject.metadata)?);
    let gdscan = time_fetch(subject, &plan, alloc, iterations)?;
    let (bytes_ok, path_bytes) = prove(subject, &plan, alloc)?;
    let (all_gpus, all_gpus_bytes, all_gpus_bytes_ok) = if all.len() > 1 {
        let (timing, bytes, ok) = spread(subject, &plan, all, iterations)?;
        (Some(timing), bytes, Some(ok))
    } else {
        (None, Vec::new(), None)
    };
    let naive = subject
        .naive
        .time(&plan, all[0], &subject.shown, iterations)?;
    let needed = plan.totals.bytes_needed;
    Ok(ScanCaseReport {
        name: case.name.clone(),
        bytes_needed: needed,
        bytes_read: plan.totals.bytes_read,
        read_amplification: plan.totals.bytes_read as f64 / needed.max(1) as f64,
        rows_covered: plan.row_groups.iter().map(|r| r.num_rows).sum(),
        row_groups: (
            plan.totals.row_groups_kept,
            plan.totals.row_groups_considered,
        ),
        ratio_to_file_read: gdscan.best_gbps() / file_read.best_gbps(),
        speedup_over_naive: naive.best() / gdscan.best(),
        gdscan,
        naive,
        bytes_ok,
        all_gpus,
        all_gpus_bytes,
        all_gpus_bytes_ok,
        path_bytes,
    })
}

/// Runs the benchmark.
pub(crate) fn run(opts: &ScanBenchOptions) -> Result<ScanBenchReport> {
    let all = match &opts.devices {
        Some(d) => d.open()?,
        None => vec![Device::get(opts.device)?],
    };
    let device = all[0];
    let engine = Engine::new(opts.settings.clone())?;
    for &d in &all {
        engine.preallocate_bounce_buffers(d)?;
    }
    let handle = Arc::new(FileHandle::open_with(engine, &opts.file, OpenMode::Read)?);
    let shown = handle.path().to_string();
    let file_bytes = handle.file_size()?;
    let file = std::fs::read(&opts.file).map_err(|e| Error::io(&shown, "read", e))?; // warms the cache, and the oracle
    let source: Arc<dyn Source> = Arc::new(LocalSource::new(handle.clone())?);
    let metadata = load(&source, MetadataOptions::default())?;
    let file_read = time_file_read(&handle, file_bytes, device, opts.iterations)?;
    let naive = Naive::new(&opts.file, &shown)?;
    let subject = Subject {
        handle,
        source,
        file,
        shown,
        metadata,
        naive,
    };
    // One allocator for every scan: steady-state scans reuse row-group buffers.
    let alloc = DeviceAllocator::new(device);
    let cases = opts
        .cases
        .iter()
        .map(|case| run_case(case, &subject, &all, &alloc, &file_read, opts.iterations))
        .collect::<Result<Vec<_>>>()?;
    Ok(ScanBenchReport {
        device: all
            .iter()
            .map(|d| Ok(format!("{}: {}", d.ordinal(), d.name()?)))
            .collect::<Result<Vec<_>>>()?
            .join(", "),
        devices: if all.len() > 1 {
            all.iter().map(|d| d.ordinal()).collect()
        } else {
            Vec::new()
        },
        file: subject.shown,
        file_bytes,
        row_groups: subject.metadata.num_row_groups(),
        file_read,
        cases,
    })
}

/// The report as a table.
pub(crate) fn render(r: &ScanBenchReport) -> String {
    let mut out = format!(
        "device: {}\nfile: {} ({} bytes, {} row groups)\nwhole-file read into device memory: {:.2} GB/s best, {:.2} median\n",
        r.device,
        r.file,
        r.file_bytes,
        r.row_groups,
        r.file_read.best_gbps(),
        r.file_read.median_gbps()
    );
    out += &format!(
        "{:<6} {:>13} {:>13} {:>6} {:>10} {:>9} {:>9} {:>8} {:>11} {:>8}  bytes\n",
        "case", "needed", "read", "r/n", "rows", "GB/s", "x file", "naive", "x vs naive", "rgs"
    );
    for c in &r.cases {
        out += &format!(
            "{:<6} {:>13} {:>13} {:>6.3} {:>10} {:>9.2} {:>9.2} {:>8.2} {:>11.2} {:>4}/{:<3}  {}\n",
            c.name,
            c.bytes_needed,
            c.bytes_read,
            c.read_amplification,
            c.rows_covered,
            c.gdscan.best_gbps(),
            c.ratio_to_file_read,
            c.naive.best_gbps(),
            c.speedup_over_naive,
            c.row_groups.0,
            c.row_groups.1,
            if c.bytes_ok { "ok" } else { "MISMATCH" }
        );
        if let Some(t) = &c.all_gpus {
            let per: Vec<String> = c.all_gpus_bytes.iter().map(|b| b.to_string()).collect();
            out += &format!(
                "{:<6} on {} GPUs: {:.2} GB/s best, x{:.2} over 1 GPU, bytes per GPU {}  {}\n",
                "",
                r.devices.len(),
                t.best_gbps(),
                t.best_gbps() / c.gdscan.best_gbps(),
                per.join("/"),
                if c.all_gpus_bytes_ok == Some(true) {
                    "ok"
                } else {
                    "MISMATCH"
                }
            );
        }
    }
    out
}
