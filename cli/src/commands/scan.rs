//! `gdscan plan` and `gdscan scan`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use super::args::{parse_size_arg, Destination, EngineArgs, StoreArgs};
use crate::error::Result;
use gdscan::cuda::{Device, Devices};
use gdscan::engine::{device_counters, Engine, IoPath};
use gdscan::parquet::coalesce::CoalesceOptions;
use gdscan::parquet::fetch::{
    fetch, ChunkSlice, DeviceAllocator, FetchOptions, FetchedRowGroup, HostAllocator, ReadBack,
    SourceScan,
};
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::plan::{plan, Projection, ScanPlan, ScanRequest};
use gdscan::parquet::predicate::Predicate;
use gdscan::parquet::ScanError;
use gdscan::store::{classify, open as open_location, LocalSource, Source, Target};

/// What to scan (shared by `plan` and `scan`).
#[derive(Debug, Clone, Args)]
pub struct ScanSpec {
    /// The Parquet file: a path, or a URL (file://, s3://, gs://, az://,
    /// http(s)://; S3 is configured from the AWS_* environment, e.g.
    /// AWS_ENDPOINT_URL and AWS_ALLOW_HTTP=true for a local server).
    pub file: String,
    /// Columns: top-level names or dotted leaf paths (default: all).
    #[arg(long, value_delimiter = ',')]
    pub columns: Vec<String>,
    /// Filter for pruning (and row-exact filtering with --output), e.g.
    /// "l_shipdate >= DATE '1994-01-01' AND l_discount BETWEEN 0.05 AND 0.07".
    #[arg(long)]
    pub filter: Option<String>,
    /// Row groups to consider (default: all).
    #[arg(long, value_delimiter = ',')]
    pub row_groups: Vec<usize>,
    /// Largest gap bridged when coalescing (default 1MiB).
    #[arg(long, value_parser = parse_size_arg)]
    pub max_gap: Option<u64>,
    /// Largest coalesced request (default 64MiB).
    #[arg(long, value_parser = parse_size_arg)]
    pub max_request: Option<u64>,
    /// Largest fraction of unneeded bytes a coalesced request may read (default 0.1).
    #[arg(long)]
    pub max_overread: Option<f64>,
    /// Engine settings.
    #[command(flatten)]
    pub engine: EngineArgs,
    /// Remote-store settings.
    #[command(flatten)]
    pub store: StoreArgs,
}

impl ScanSpec {
    fn request(&self, path: &str) -> Result<ScanRequest> {
        let predicate = match &self.filter {
            Some(text) => Some(
                text.parse::<Predicate>()
                    .map_err(|source| ScanError::Filter {
                        path: path.to_string(),
                        source,
                    })?,
            ),
            None => None,
        };
        let mut coalesce = CoalesceOptions::default();
        if let Some(g) = self.max_gap {
            coalesce.max_gap = g;
        }
        if let Some(m) = self.max_request {
            coalesce.max_request = m.max(1);
        }
        if let Some(f) = self.max_overread {
            coalesce.max_overread = f.max(0.0);
        }
        Ok(ScanRequest {
            projection: if self.columns.is_empty() {
                Projection::All
            } else {
                Projection::Columns(self.columns.clone())
            },
            row_groups: (!self.row_groups.is_empty()).then(|| self.row_groups.clone()),
            predicate,
            coalesce,
            rows: None,
        })
    }

    /// Opens the file (through the engine) or the remote object (through its store).
    fn open(&self) -> Result<Arc<dyn Source>> {
        let options = self.store.options()?;
        match classify(&self.file)? {
            Target::Local(path) => Ok(Arc::new(LocalSource::open(
                Engine::new(self.engine.settings()?)?,
                path,
            )?)),
            Target::Remote { .. } => Ok(open_location(&self.file, &options)?),
        }
    }

    /// Opens the object, reads its metadata and plans the scan.
    pub(crate) fn prepare(&self) -> Result<Prepared> {
        let source = self.open()?;
        let request = self.request(source.location())?;
        let metadata = load(
            &source,
            MetadataOptions {
                page_index: request.predicate.is_some(),
                ..Default::default()
            },
        )?;
        let plan = plan(&metadata, &request).map_err(|e| e.in_file(source.location()))?;
        Ok((source, metadata, request, plan))
    }
}

/// An opened object, its metadata, the request and its plan.
pub(crate) type Prepared = (
    Arc<dyn Source>,
    Arc<::parquet::file::metadata::ParquetMetaData>,
    ScanRequest,
    ScanPlan,
);

/// Arguments of `gdscan plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// What to plan.
    #[command(flatten)]
    pub spec: ScanSpec,
    /// Print the plan as JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `gdscan plan`: the plan, without reading data.
pub(super) fn run_plan(args: &PlanArgs) -> Result<String> {
    let (source, _meta, _req, plan) = args.spec.prepare()?;
    if args.json {
        return Ok(serde_json::to_string_pretty(&plan).expect("plan serialises") + "\n");
    }
    let mut out = format!("plan for {}\n", source.location());
    for c in &plan.chunks {
        let pages = c
            .pages
            .as_ref()
            .map(|p| format!(" pages {}", p.len()))
            .unwrap_or_default();
        out += &format!(
            "chunk rg {} {:<24} offset {:>12} length {:>10} needed {:>10} {} {}{}\n",
            c.row_group,
            c.column,
            c.range.start,
            c.range.end - c.range.start,
            c.needed(),
            c.physical_type,
            c.codec,
            pages
        );
    }
    for r in &plan.requests {
        out += &format!(
            "request rg {} offset {:>12} length {:>10}\n",
            r.row_group,
            r.range.start,
            r.len()
        );
    }
    out += &render_totals(&plan);
    Ok(out)
}

fn render_totals(plan: &ScanPlan) -> String {
    let t = &plan.totals;
    format!(
        "totals: bytes needed {} read {} ({:.3}x), requests {}, chunks {}, row groups kept {} of {} (pruned: {} by statistics, {} by page index), pages kept {} of {}\n",
        t.bytes_needed,
        t.bytes_read,
        if t.bytes_needed > 0 { t.bytes_read as f64 / t.bytes_needed as f64 } else { 1.0 },
        t.requests,
        t.chunks,
        t.row_groups_kept,
        t.row_groups_considered,
        t.row_groups_pruned_by_statistics,
        t.row_groups_pruned_by_page_index,
        t.pages_kept,
        t.pages_total
    )
}

/// Arguments of `gdscan scan`.
#[derive(Debug, Args)]
pub struct ScanArgs {
    /// What to scan.
    #[command(flatten)]
    pub spec: ScanSpec,
    /// Host memory or a device.
    #[command(flatten)]
    pub destination: Destination,
    /// Several GPUs, e.g. 0,1 or all: the row groups spread over them by
    /// bytes, each landed (and with --decode decoded) on its GPU.
    #[arg(long, conflicts_with_all = ["device", "host"])]
    pub devices: Option<Devices>,
    /// Print each chunk's CRC-32 (as zlib.crc32) of the bytes where they landed.
    #[arg(long)]
    pub checksum: bool,
    /// Print the path report.
    #[arg(long)]
    pub stats: bool,
    /// Print one JSON object.
    #[arg(long)]
    pub json: bool,
    /// Decode the scanned columns (CPU, arrow-rs over gdscan's reader), apply
    /// the filter row-exactly and write an Arrow IPC file.
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Decode on the GPU into Arrow columns in device memory (nvCOMP and
    /// NVRTC kernels), the --filter applied there row-exactly; with
    /// --output the decoded columns are copied back.
    #[arg(long)]
    pub decode: bool,
    /// With --decode and --filter: `exact` (default: the filter's columns
    /// decoded beside the others, the rows cut on the GPU), `late` (late
    /// materialization: the filter's columns first, then only the payload
    /// pages holding a selected row) or `prune` (statistics only: the rows
    /// of the pages kept, a superset).
    #[arg(long, value_parser = parse_filter_mode, default_value = "exact", requires = "decode")]
    pub filter_mode: gdscan::decode::scan::FilterMode,
}

/// `--filter-mode`'s value.
fn parse_filter_mode(s: &str) -> std::result::Result<gdscan::decode::scan::FilterMode, String> {
    use gdscan::decode::scan::FilterMode;
    match s {
        "exact" => Ok(FilterMode::Exact),
        "late" => Ok(FilterMode::Late),
        "prune" => Ok(FilterMode::PruneOnly),
        other => Err(format!("{other:?}: expected exact, late or prune")),
    }
}

/// One chunk's checksum.
#[derive(Debug, Serialize)]
pub(super) struct ChunkChecksum {
    /// Row group.
    pub row_group: usize,
    /// Column path.
    pub column: String,
    /// Bytes.
    pub bytes: u64,
    /// CRC-32 of the chunk's needed bytes, in file order.
    pub crc32: String,
}

/// The outcome of a scan.
#[derive(Debug, Serialize)]
pub(super) struct ScanReport {
    /// The file.
    pub path: String,
    /// "host" or "device N".
    pub destination: String,
    /// Plan totals.
    pub totals: gdscan::parquet::plan::PlanTotals,
    /// Bytes that landed.
    pub bytes_read: u64,
    /// Seconds from the first request to the last byte in place.
    pub seconds: f64,
    /// GB/s of bytes landed.
    pub gbps: f64,
    /// Bytes per path.
    pub paths: Vec<(IoPath, u64)>,
    /// Bytes each GPU received (the engine's per-device counters; with
    /// --devices).
    pub device_bytes: Vec<(usize, u64)>,
    /// Requests to a remote store (0 for a local file), the footer's included.
    pub store_requests: u64,
    /// Their retries.
    pub store_retries: u64,
    /// Per-chunk checksums, when asked.
    pub checksums: Vec<ChunkChecksum>,
    /// Rows written to --output.
    pub rows_written: Option<u64>,
    /// The path report, when asked.
    pub report: Option<gdscan::report::PathReport>,
}

fn crc_of<B: ReadBack>(
    rg: &FetchedRowGroup<B>,
    slice: &ChunkSlice,
) -> Result<(u64, u32), gdscan::parquet::ScanError> {
    let bytes = rg.chunk_bytes(slice)?;
    Ok((bytes.len() as u64, crc32fast::hash(&bytes)))
}

/// Each landed chunk's index, bytes and CRC-32.
type ChunkSums = Vec<(usize, u64, u32)>;

/// What a scan landed: where, how fast, and each chunk's checksum when
/// asked (chunk index, bytes, CRC-32).
struct Landed {
    /// "host", "device N" or "devices N,M".
    destination: String,
    /// Seconds from the first request to the last byte in place.
    seconds: f64,
    /// Bytes that landed.
    bytes_read: u64,
    /// Per chunk, in chunk order, when asked.
    sums: ChunkSums,
    /// Bytes each GPU received (with --devices).
    device_bytes: Vec<(usize, u64)>,
}

/// The bytes the engine has moved to `d` so far, over every path.
fn device_total(d: &Device) -> u64 {
    let c = device_counters(d.ordinal());
    IoPath::ALL.iter().map(|&p| c.get(p).bytes).sum()
}

/// Fetches the plan into the GPUs of `allocs`, timed: seconds, bytes
/// landed and, when asked, each chunk's (index, bytes, CRC-32) taken as
/// its row group lands.
fn fetch_to_devices(
    source: &Arc<dyn Source>,
    plan: &Arc<ScanPlan>,
    allocs: Vec<DeviceAllocator>,
    checksum: bool,
) -> Result<(f64, u64, ChunkSums)> {
    let mut sums = Vec::new();
    let mut bytes_read = 0u64;
    let start = Instant::now();
    let scans = [SourceScan::new(source.clone(), plan.clone())];
    for rg in fetch(scans, allocs, FetchOptions::default()) {
        let rg = rg?;
        bytes_read += rg.bytes_read;
        if checksum {
            for slice in &rg.chunks {
                let (bytes, crc) = crc_of(&rg, slice)?;
                sums.push((slice.chunk, bytes, crc));
            }
        }
    }
    Ok((start.elapsed().as_secs_f64(), bytes_read, sums))
}

/// Lands the plan's row groups spread over several GPUs.
fn land_on_devices(
    source: &Arc<dyn Source>,
    plan: &Arc<ScanPlan>,
    devices: &[Device],
    checksum: bool,
) -> Result<Landed> {
    let before: Vec<u64> = devices.iter().map(device_total).collect();
    for &d in devices {
        source.prepare_device(d)?;
    }
    let allocs: Vec<DeviceAllocator> = devices.iter().map(|&d| DeviceAllocator::new(d)).collect();
    let (seconds, bytes_read, mut sums) = fetch_to_devices(source, plan, allocs, checksum)?;
    sums.sort_by_key(|&(chunk, _, _)| chunk);
    let device_bytes = devices
        .iter()
        .zip(&before)
        .map(|(d, b)| (d.ordinal(), device_total(d) - b))
        .collect();
    let names: Vec<String> = devices.iter().map(|d| d.ordinal().to_string()).collect();
    Ok(Landed {
        destination: format!("devices {}", names.join(",")),
        seconds,
        bytes_read,
        sums,
        device_bytes,
    })
}

/// Lands the plan's row groups in host memory; the checksums are taken
/// after the clock stops.
fn land_on_host(source: &Arc<dyn Source>, plan: &Arc<ScanPlan>, checksum: bool) -> Result<Landed> {
    let start = Instant::now();
    let mut bytes_read = 0u64;
    let mut held = Vec::new();
    for rg in fetch(
        [SourceScan::new(source.clone(), plan.clone())],
        [HostAllocator],
        FetchOptions::default(),
    ) {
        let rg = rg?;
        bytes_read += rg.bytes_read;
        held.push(rg);
    }
    let seconds = start.elapsed().as_secs_f64();
    let mut sums = Vec::new();
    if checksum {
        for rg in &held {
            for slice in &rg.chunks {
                let (bytes, crc) = crc_of(rg, slice)?;
                sums.push((slice.chunk, bytes, crc));
            }
        }
    }
    Ok(Landed {
        destination: "host".to_string(),
        seconds,
        bytes_read,
        sums,
        device_bytes: Vec::new(),
    })
}

/// Lands the plan's row groups on one GPU.
fn land_on_device(
    source: &Arc<dyn Source>,
    plan: &Arc<ScanPlan>,
    ordinal: usize,
    checksum: bool,
) -> Result<Landed> {
    let device = Device::get(ordinal)?;
    source.prepare_device(device)?;
    let allocs = vec![DeviceAllocator::new(device)];
    let (seconds, bytes_read, sums) = fetch_to_devices(source, plan, allocs, checksum)?;
    Ok(Landed {
        destination: format!("device {ordinal}"),
        seconds,
        bytes_read,
        sums,
        device_bytes: Vec::new(),
    })
}

/// The scan report as text.
fn render_scan(result: &ScanReport, plan: &ScanPlan, output: Option<&std::path::Path>) -> String {
    let mut out = format!(
        "scanned {} into {}: {} bytes in {:.4} s, {:.2} GB/s\n",
        result.path, result.destination, result.bytes_read, result.seconds, result.gbps
    );
    out += &render_totals(plan);
    let paths: Vec<String> = result
        .paths
        .iter()
        .map(|(p, b)| format!("{p}={b}"))
        .collect();
    out += &format!("path: {}\n", paths.join(" "));
    if !result.device_bytes.is_empty() {
        let per: Vec<String> = result
            .device_bytes
            .iter()
            .map(|(d, b)| format!("gpu{d}={b}"))
            .collect();
        out += &format!("per GPU: {}\n", per.join(" "));
    }
    if result.store_requests > 0 {
        out += &format!(
            "store: {} requests, {} retries\n",
            result.store_requests, result.store_retries
        );
    }
    for c in &result.checksums {
        out += &format!(
            "crc32 rg {} {} {} bytes: {}\n",
            c.row_group, c.column, c.bytes, c.crc32
        );
    }
    if let (Some(rows), Some(path)) = (result.rows_written, output) {
        out += &format!("wrote {rows} rows to {}\n", path.display());
    }
    if let Some(r) = &result.report {
        out += &gdscan::report::render(r);
    }
    out
}

/// Runs `gdscan scan`.
pub(super) fn run_scan(args: &ScanArgs) -> Result<String> {
    // Every GPU asked for is opened before any read (the footer's included).
    let devices = match &args.devices {
        Some(d) => d.open()?,
        None => Vec::new(),
    };
    let (source, metadata, request, plan) = args.spec.prepare()?;
    let plan = Arc::new(plan);
    let window = gdscan::report::StatsWindow::open(args.stats, source.as_ref())?;
    let landed = if !devices.is_empty() {
        land_on_devices(&source, &plan, &devices, args.checksum)?
    } else if args.destination.host {
        land_on_host(&source, &plan, args.checksum)?
    } else {
        let ordinal = args.destination.device.unwrap_or(0);
        land_on_device(&source, &plan, ordinal, args.checksum)?
    };
    let checksums = landed
        .sums
        .iter()
        .map(|&(c, bytes, crc)| ChunkChecksum {
            row_group: plan.chunks[c].row_group,
            column: plan.chunks[c].column.clone(),
            bytes,
            crc32: format!("{crc:08x}"),
        })
        .collect();
    let rows_written = match &args.output {
        Some(out) => Some(gdscan::parquet::ipc_export::write_ipc(
            source.clone(),
            metadata.clone(),
            &plan,
            &request.projection,
            request.predicate.as_ref(),
            out,
        )?),
        None => None,
    };
    let report = if args.stats {
        Some(window.close(source.as_ref())?)
    } else {
        None
    };
    let paths = source.counters().nonzero();
    let remote = source.counters().get(IoPath::RemoteStore);
    let result = ScanReport {
        path: source.location().to_string(),
        destination: landed.destination,
        totals: plan.totals.clone(),
        bytes_read: landed.bytes_read,
        seconds: landed.seconds,
        gbps: gdscan::report::gbps(landed.bytes_read, landed.seconds),
        paths,
        device_bytes: landed.device_bytes,
        store_requests: remote.ops,
        store_retries: remote.retries,
        checksums,
        rows_written,
        report,
    };
    if args.json {
        return Ok(serde_json::to_string_pretty(&result).expect("report serialises") + "\n");
    }
    Ok(render_scan(&result, &plan, args.output.as_deref()))
}
