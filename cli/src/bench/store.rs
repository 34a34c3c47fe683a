//! `gdscan bench store`: lineitem scans from an object store (S3, or any
//! URL the store layer opens) at several concurrencies, against object_store's
//! default `get_ranges` of the same chunk ranges plus a copy to the same
//! destination, in the same run; MB/s and requests per scan for each.

use std::ops::Range;
use std::sync::Arc;

use object_store::{ObjectStore, ObjectStoreExt};
use serde::Serialize;

use super::cases::ScanCase;
use super::stats::{time_runs, Timing};
use crate::error::{Error, Result};
use gdscan::cuda::{Device, DeviceBuffer};
use gdscan::parquet::fetch::{
    fetch, Allocator, DeviceAllocator, FetchOptions, HostAllocator, SourceScan,
};
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::plan::ScanPlan;
use gdscan::store::StoreError;
use gdscan::store::{
    build_store, classify, HttpCounts, RemoteSource, Source, StoreOptions, Target,
};

/// What to measure.
#[derive(Debug, Clone)]
pub(crate) struct StoreBenchOptions {
    /// The object's URL (e.g. `s3://bucket/lineitem.parquet`).
    pub url: String,
    /// A local file to upload to the URL first.
    pub upload: Option<std::path::PathBuf>,
    /// CUDA device, or None for host memory.
    pub device: Option<usize>,
    /// Concurrencies to sweep.
    pub concurrency: Vec<usize>,
    /// Options for everything else (request size, timeouts, retries).
    pub store: StoreOptions,
    /// Timed runs per point, after one warm-up.
    pub iterations: usize,
    /// The scans.
    pub cases: Vec<ScanCase>,
}

/// One concurrency's figures.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Point {
    /// Requests in flight at most.
    pub concurrency: usize,
    /// Runs (bytes = bytes read).
    pub timing: Timing,
    /// Median MB/s (1e6 bytes per second).
    pub mbps: f64,
    /// Store requests per scan.
    pub requests: f64,
    /// Retries over all runs.
    pub retries: u64,
    /// This point's median MB/s over the baseline's.
    pub ratio_to_get_ranges: f64,
}

/// One scan's figures.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StoreCaseReport {
    /// Name.
    pub name: String,
    /// Bytes the scan needs.
    pub bytes_needed: u64,
    /// Bytes gdscan reads (coalesced).
    pub bytes_read: u64,
    /// object_store's `get_ranges` of the needed ranges plus a copy to the
    /// destination (bytes = bytes needed).
    pub get_ranges: Timing,
    /// Its median MB/s.
    pub get_ranges_mbps: f64,
    /// Its HTTP requests per scan.
    pub get_ranges_requests: f64,
    /// gdscan at each concurrency.
    pub points: Vec<Point>,
    /// Every chunk landed by gdscan equals the baseline's bytes.
    pub bytes_ok: bool,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct StoreBenchReport {
    /// The object.
    pub url: String,
    /// Its store.
    pub store: String,
    /// Its size.
    pub object_bytes: u64,
    /// "host" or the device's name.
    pub destination: String,
    /// Bytes per request at most.
    pub request_size: u64,
    /// The scans.
    pub cases: Vec<StoreCaseReport>,
}

enum Dest {
    Host,
    /// A device, with one allocator for every scan (row-group buffers reused).
    Device(Device, DeviceAllocator),
}

fn mbps(bytes: u64, seconds: f64) -> f64 {
    bytes as f64 / seconds.max(1e-12) / 1e6
}

/// Scans `plan` once; returns every chunk's CRC-32, in plan order, when asked.
fn scan(
    source: &Arc<dyn Source>,
    plan: &Arc<ScanPlan>,
    dest: &Dest,
    crc: bool,
) -> Result<Vec<u32>> {
    match dest {
        Dest::Host => scan_into(source, plan, HostAllocator, crc),
        Dest::Device(_, alloc) => scan_into(source, plan, alloc.clone(), crc),
    }
}

/// [`scan`] into the buffers of `alloc`.
fn scan_into<A: Allocator>(
    source: &Arc<dyn Source>,
    plan: &Arc<ScanPlan>,
    alloc: A,
    crc: bool,
) -> Result<Vec<u32>> {
    let mut crcs = vec![0u32; if crc { plan.chunks.len() } else { 0 }];
    for rg in fetch(
        [SourceScan::new(source.clone(), plan.clone())],
        [alloc],
        FetchOptions::default(),
    ) {
        let rg = rg?;
        if crc {
            for slice in &rg.chunks {
                crcs[slice.chunk] = crc32fast::hash(&rg.chunk_bytes(slice)?);
            }
        }
    }
    Ok(crcs)
}

/// The baseline: `get_ranges` of every needed range, each part copied to
/// the destination; returns the parts.
fn baseline(
    store: &Arc<dyn ObjectStore>,
    source: &RemoteSource,
    ranges: &[Range<u64>],
    dest: &Dest,
    staging: &mut Option<DeviceBuffer>,
    host: &mut [u8],
) -> Result<Vec<bytes::Bytes>> {
    let (store, path, wanted) = (store.clone(), source.path().clone(), ranges.to_vec());
    let parts = gdscan::store::block_on(async move { store.get_ranges(&path, &wanted).await })?
        .map_err(|e| StoreError::Request {
            object: source.location().to_string(),
            op: "object_store get_ranges".into(),
            source: e,
        })?;
    let mut at = 0;
    for part in &parts {
        match (dest, staging.as_mut()) {
            (Dest::Device(..), Some(buf)) => buf.copy_from_host(at, part)?,
            _ => host[at..at + part.len()].copy_from_slice(part),
        }
        at += part.len();
    }
    Ok(parts)
}

/// The object in its store, with the store's request counts and where
/// the scans land.
struct Object<'a> {
    opts: &'a StoreBenchOptions,
    store: Arc<dyn ObjectStore>,
    counts: Arc<HttpCounts>,
    path: object_store::path::Path,
    dest: Dest,
}

impl<'a> Object<'a> {
    /// The store of `opts.url` (a remote URL, not a local path), the
    /// object uploaded first when asked.
    fn connect(opts: &'a StoreBenchOptions) -> Result<Self> {
        let Target::Remote { url, scheme, path } = classify(&opts.url)? else {
            return Err(StoreError::Location {
                location: opts.url.clone(),
                reason: "bench store needs a store URL (s3://, http://, ...), not a local path"
                    .into(),
            }
            .into());
        };
        let (store, counts): (Arc<dyn ObjectStore>, Arc<HttpCounts>) =
            build_store(&url, scheme, &opts.store, &[])?;
        if let Some(file) = &opts.upload {
            let shown = file.display().to_string();
            let data = std::fs::read(file).map_err(|e| Error::io(&shown, "read", e))?;
            let (s, p) = (store.clone(), path.clone());
            gdscan::store::block_on(async move { s.put(&p, data.into()).await })?.map_err(|e| {
                StoreError::Request {
                    object: opts.url.clone(),
                    op: "upload".into(),
                    source: e,
                }
            })?;
        }
        let dest = match opts.device {
            Some(d) => {
                let device = Device::get(d)?;
                Dest::Device(device, DeviceAllocator::new(device))
            }
            None => Dest::Host,
        };
        Ok(Self {
            opts,
            store,
            counts,
            path,
            dest,
        })
    }

    /// The object as a source with `concurrency` requests in flight at
    /// most, prepared for the destination's device.
    fn open(&self, concurrency: usize) -> Result<RemoteSource> {
        let o = StoreOptions {
            concurrency,
            ..self.opts.store.clone()
        };
        let source = RemoteSource::open(
            self.store.clone(),
            self.path.clone(),
            &self.opts.url,
            o,
            Some(self.counts.clone()),
        )?;
        if let Dest::Device(d, _) = &self.dest {
            source.prepare_device(*d)?;
        }
        Ok(source)
    }
}

/// The baseline's figures for one scan.
struct Baseline {
    /// Its runs (bytes = bytes needed).
    timing: Timing,
    /// Its median MB/s.
    mbps: f64,
    /// Its HTTP requests per scan.
    requests: f64,
    /// Each chunk's CRC-32 of the bytes it fetched, in plan order.
    crcs: Vec<u32>,
}

/// Times the baseline on `plan` through `first`, and keeps the CRC-32 of
/// each chunk's bytes to check gdscan's against.
fn time_baseline(object: &Object, first: &RemoteSource, plan: &ScanPlan) -> Result<Baseline> {
    let iterations = object.opts.iterations;
    let ranges = plan.needed_ranges();
    let needed = plan.totals.bytes_needed;
    let mut staging = match &object.dest {
        Dest::Device(d, _) => Some(DeviceBuffer::new(*d, needed.max(1) as usize)?),
        Dest::Host => None,
    };
    let mut host = vec![
        0u8;
        if staging.is_some() {
            0
        } else {
            needed as usize
        }
    ];
    let before = object.counts.unattributed();
    let mut parts = Vec::new();
    let seconds = time_runs(iterations, || {
        parts = baseline(
            &object.store,
            first,
            &ranges,
            &object.dest,
            &mut staging,
            &mut host,
        )?;
        Ok(())
    })?;
    let runs = (iterations.max(1) + 1) as f64;
    let timing = Timing {
        bytes: needed,
        seconds,
    };
    // The baseline's bytes, per chunk, to check gdscan's against.
    let mut crcs = Vec::new();
    let mut at = parts.iter();
    for c in &plan.chunks {
        let mut bytes = Vec::new();
        for _ in &c.ranges {
            bytes.extend_from_slice(at.next().map(|b| &b[..]).unwrap_or_default());
        }
        crcs.push(crc32fast::hash(&bytes));
    }
    Ok(Baseline {
        mbps: mbps(needed, timing.median()),
        requests: (object.counts.unattributed() - before) as f64 / runs,
        timing,
        crcs,
    })
}

/// gdscan's scan of `plan` at each concurrency, timed, then once more with
/// every chunk's CRC-32 compared with the baseline's; returns the points
/// and whether every chunk matched.
fn sweep(object: &Object, plan: &Arc<ScanPlan>, base: &Baseline) -> Result<(Vec<Point>, bool)> {
    let iterations = object.opts.iterations;
    let runs = (iterations.max(1) + 1) as f64;
    let mut points = Vec::new();
    let mut bytes_ok = true;
    for &concurrency in &object.opts.concurrency {
        let source: Arc<dyn Source> = Arc::new(object.open(concurrency)?);
        let before = source.counters().get(gdscan::IoPath::RemoteStore);
        let seconds = time_runs(iterations, || {
            scan(&source, plan, &object.dest, false).map(|_| ())
        })?;
        let after = source.counters().get(gdscan::IoPath::RemoteStore);
        let timing = Timing {
            bytes: plan.totals.bytes_read,
            seconds,
        };
        let m = mbps(timing.bytes, timing.median());
        bytes_ok &= scan(&source, plan, &object.dest, true)? == base.crcs;
        points.push(Point {
            concurrency,
            requests: (after.ops - before.ops) as f64 / runs,
            retries: after.retries - before.retries,
            ratio_to_get_ranges: m / base.mbps,
            mbps: m,
            timing,
        });
    }
    Ok((points, bytes_ok))
}

/// One scan: its plan from the object's metadata, the baseline, then
/// gdscan at each concurrency.
fn run_case(object: &Object, first: &RemoteSource, case: &ScanCase) -> Result<StoreCaseReport> {
    let shared: Arc<dyn Source> = Arc::new(first.clone());
    let meta = load(
        &shared,
        MetadataOptions {
            page_index: case.filter.is_some(),
            ..Default::default()
        },
    )?;
    let plan = Arc::new(case.plan(&object.opts.url, &meta)?);
    let base = time_baseline(object, first, &plan)?;
    let (points, bytes_ok) = sweep(object, &plan, &base)?;
    Ok(StoreCaseReport {
        name: case.name.clone(),
        bytes_needed: plan.totals.bytes_needed,
        bytes_read: plan.totals.bytes_read,
        get_ranges: base.timing,
        get_ranges_mbps: base.mbps,
        get_ranges_requests: base.requests,
        points,
        bytes_ok,
    })
}

/// Runs the benchmark.
pub(crate) fn run(opts: &StoreBenchOptions) -> Result<StoreBenchReport> {
    let object = Object::connect(opts)?;
    let first = object.open(opts.concurrency.first().copied().unwrap_or(16))?;
    let object_bytes = first.size();
    let cases = opts
        .cases
        .iter()
        .map(|case| run_case(&object, &first, case))
        .collect::<Result<Vec<_>>>()?;
    Ok(StoreBenchReport {
        url: opts.url.clone(),
        store: object.store.to_string(),
        object_bytes,
        destination: match &object.dest {
            Dest::Host => "host".into(),
            Dest::Device(d, _) => d.name()?,
        },
        request_size: opts.store.request_size,
        cases,
    })
}

/// The report as a table.
pub(crate) fn render(r: &StoreBenchReport) -> String {
    let mut out = format!(
        "object: {} ({} bytes) in {}\ndestination: {}; request size {} bytes; medians\n",
        r.url, r.object_bytes, r.store, r.destination, r.request_size
    );
    out += &format!(
        "{:<5} {:>11} {:>11} {:>9} {:>9} {:>9} {:>8}  bytes\n",
        "case", "needed", "read", "conc", "MB/s", "requests", "x base"
    );
    for c in &r.cases {
        out += &format!(
            "{:<5} {:>11} {:>11} {:>9} {:>9.1} {:>9.1} {:>8}  get_ranges + copy\n",
            c.name,
            c.bytes_needed,
            c.bytes_read,
            "-",
            c.get_ranges_mbps,
            c.get_ranges_requests,
            "1.00"
        );
        for p in &c.points {
            out += &format!(
                "{:<5} {:>11} {:>11} {:>9} {:>9.1} {:>9.1} {:>8.2}  {}{}\n",
                c.name,
                "",
                "",
                p.concurrency,
                p.mbps,
                p.requests,
                p.ratio_to_get_ranges,
                if c.bytes_ok { "ok" } else { "MISMATCH" },
                if p.retries > 0 {
                    format!(" ({} retries)", p.retries)
                } else {
                    String::new()
                }
            );
        }
    }
    out
}
