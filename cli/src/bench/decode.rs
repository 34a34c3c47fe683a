//! `gdscan bench decode`: TPC-H lineitem from a `gdscan tpch gen` folder,
//! file → decoded Arrow columns in GPU memory, beside the raw scan of the
//! same bytes (file → compressed pages in GPU memory), the decoder's own
//! fetch alone (the same bytes into pinned host memory, where its row
//! groups land before their page headers are walked) and the pinned
//! host→device copy ceiling, all in one run. Batches are released as they
//! are consumed, so the figures include the decoder's bounded memory.
//!
//! The cases ([`decode_case`]): `all` (every lineitem column), a lineitem
//! query's columns (`q1`, `q6`, `q14`, `q19`) and `nested`: every column of
//! the folder's `orders_nested` (orders with each order's lineitems as
//! `o_lineitems: list<struct<...>>`, `tpch gen --tables orders_nested`),
//! timed the same way. Until the decoder covers LIST and STRUCT columns the
//! nested case stops the run with [`BenchError::DecodeUnsupported`].

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::cases::lineitem_query;
use super::error::BenchError;
use super::tpch::table_files;
use crate::error::{Error, Result};
use crate::tpch::Table;
use gdscan::cuda::{Device, DeviceBuffer, Devices, PinnedBuffer, Stream};
use gdscan::decode::scan::{
    decode, decode_plan, DecodeError, DecodeInput, DecodeOptions, DecodeReport, DeviceShare,
};
use gdscan::engine::{Engine, FileHandle, OpenMode};
use gdscan::parquet::fetch::{
    fetch, Allocator, DeviceAllocator, FetchOptions, PinnedAllocator, SourceScan,
};
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::plan::{Projection, ScanPlan, ScanRequest};
use gdscan::store::LocalSource;

/// What to run.
#[derive(Debug, Clone)]
pub(crate) struct DecodeBenchOptions {
    /// A `gdscan tpch gen` folder.
    pub data: PathBuf,
    /// Cases: `all`, a lineitem query's columns (`q1`, `q6`, ...; the
    /// columns only, no filter, as cuDF's `read_parquet(columns=...)`), or
    /// `nested` (every column of orders_nested); see [`decode_case`].
    pub cases: Vec<String>,
    /// The GPU.
    pub device: usize,
    /// Several GPUs (overrides `device`): every case on the first alone,
    /// then spread over all of them, in the same run.
    pub devices: Option<Devices>,
    /// Timed iterations per case, after one warm-up.
    pub iterations: usize,
    /// Bytes of row groups decoded together (the decoder's default if None).
    pub group_bytes: Option<u64>,
    /// Groups queued on the GPU at once (the decoder's default if None).
    pub depth: Option<usize>,
    /// Where compressed pages are checked (the decoder's default if None).
    pub check: Option<gdscan::decode::scan::CompressedCheck>,
}

/// One case's figures (seconds are medians of the timed iterations).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DecodeCaseResult {
    /// Name.
    pub case: String,
    /// The table folder it read.
    pub table: Table,
    /// The GPUs (the scan spread over them by bytes when several).
    pub devices: Vec<usize>,
    /// What each GPU did in the median decode (several GPUs only).
    pub shares: Vec<DeviceShare>,
    /// Files.
    pub files: usize,
    /// Rows decoded.
    pub rows: u64,
    /// Bytes read from the files.
    pub bytes_read: u64,
    /// Bytes of decoded columns.
    pub output_bytes: u64,
    /// Raw scan (compressed pages into device memory), median seconds.
    pub raw_seconds: f64,
    /// The decoder's own fetch alone: the same bytes into pinned host
    /// memory from a pool (where the decoder's row groups land before
    /// their page headers are walked), nothing decoded, median seconds.
    pub pinned_fetch_seconds: f64,
    /// File → decoded device columns, median seconds.
    pub decode_seconds: f64,
    /// Best decode seconds.
    pub decode_best_seconds: f64,
    /// decode / raw.
    pub decode_over_raw: f64,
    /// Bytes read at the pinned copy ceiling, seconds (the PCIe floor; to
    /// all the case's GPUs at once when several).
    pub pcie_floor_seconds: f64,
    /// The decoder's own report of the median iteration.
    pub report: DecodeReport,
    /// Peak device memory used during the decode (bytes above the start).
    pub peak_device_bytes: u64,
    /// Every timed iteration, (raw, decode) seconds.
    pub iterations: Vec<(f64, f64)>,
    /// Every timed iteration's pinned fetch seconds.
    pub pinned_fetch_iterations: Vec<f64>,
}

/// The report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct DecodeBenchReport {
    /// The GPU's name.
    pub device: String,
    /// Pinned host→device copy rate measured in this run, GB/s.
    pub pinned_h2d_gbps: f64,
    /// The same to every GPU at once (several GPUs only), GB/s in all.
    pub pinned_h2d_all_gbps: Option<f64>,
    /// Per case.
    pub cases: Vec<DecodeCaseResult>,
}

struct File {
    source: Arc<dyn gdscan::store::Source>,
    metadata: Arc<::parquet::file::metadata::ParquetMetaData>,
    plan: Arc<ScanPlan>,
}

/// The pinned host→device copy rate (1 GiB, best of 5), GB/s.
pub(crate) fn pinned_h2d_gbps(device: Device) -> Result<f64> {
    let len = 1 << 30;
    let host = PinnedBuffer::new(device, len)?;
    let dev = DeviceBuffer::new(device, len)?;
    let stream = Stream::new(device)?;
    let mut best = f64::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        // SAFETY: both buffers outlive the synchronisation below.
        unsafe { stream.copy_to_device(dev.device_ptr(), host.as_ptr(), len)? };
        stream.synchronize()?;
        best = best.min(start.elapsed().as_secs_f64());
    }
    Ok(len as f64 / best / 1e9)
}

/// The pinned host→device copy rate to every device at once (1 GiB each
/// from its own pinned buffer, one thread per device, best of 5), GB/s in
/// all.
pub(crate) fn pinned_h2d_all_gbps(devices: &[Device]) -> Result<f64> {
    let len = 1usize << 30;
    let mut bufs = Vec::new();
    for &d in devices {
        bufs.push((
            PinnedBuffer::new(d, len)?,
            DeviceBuffer::new(d, len)?,
            Stream::new(d)?,
        ));
    }
    let mut best = f64::MAX;
    for _ in 0..5 {
        let start = Instant::now();
        std::thread::scope(|s| -> Result<()> {
            let handles: Vec<_> = bufs
                .iter_mut()
                .map(|(host, dev, stream)| {
                    let (host, dev) = (&*host, &*dev);
                    s.spawn(move || -> Result<()> {
                        // SAFETY: both buffers outlive the synchronisation below.
                        unsafe { stream.copy_to_device(dev.device_ptr(), host.as_ptr(), len)? };
                        Ok(stream.synchronize()?)
                    })
                })
                .collect();
            for h in handles {
                h.join().map_err(|_| {
                    Error::io(
                        "<bench>",
                        "thread",
                        std::io::Error::other("copy thread panicked"),
                    )
                })??;
            }
            Ok(())
        })?;
        best = best.min(start.elapsed().as_secs_f64());
    }
    Ok((len * devices.len()) as f64 / best / 1e9)
}

/// One case of the benchmark: the table folder it reads and its columns.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DecodeCase {
    /// The name `--cases` gives it.
    pub name: String,
    /// The table folder of the `tpch gen` folder it reads.
    pub table: Table,
    /// Its columns.
    pub projection: Projection,
    /// The exact filter the GPU applies (the `-exact` and `-late` cases).
    pub filter: Option<gdscan::parquet::Predicate>,
    /// How the filter runs: in one pass (`-exact`) or late materialized
    /// (`-late`).
    pub mode: gdscan::decode::scan::FilterMode,
}

impl DecodeCase {
    /// The decode request: the columns, and the filter if any.
    fn request(&self) -> ScanRequest {
        ScanRequest {
            projection: self.projection.clone(),
            predicate: self.filter.clone(),
            ..ScanRequest::default()
        }
    }
}

/// The case `name`: `all` (every lineitem column), a lineitem query's
/// columns (`q1`, `q6`, `q14`, `q19`), `nested` (every column of
/// orders_nested: the nine orders columns and `o_lineitems`, a
/// `list<struct>` of the order's lineitems), or lineitem columns named
/// and joined by `+` (`l_returnflag+l_linestatus`: to see what some
/// columns cost; a name lineitem lacks fails when the case is planned),
/// or a query's scan with its filter applied exactly on the GPU
/// (`q1-exact`, `q6-exact`, `q12-exact`, `q14-exact`, `q19-exact`:
/// [`crate::tpch::SCAN_FILTERS`]; the query's own columns are handed out,
/// its filter's decoded for it), or late materialized (`q6-late`, ...).
pub(crate) fn decode_case(name: &str) -> Result<DecodeCase> {
    let case = |table, projection| DecodeCase {
        name: name.to_string(),
        table,
        projection,
        filter: None,
        mode: gdscan::decode::scan::FilterMode::Exact,
    };
    let (query, mode) = match (name.strip_suffix("-exact"), name.strip_suffix("-late")) {
        (Some(q), _) => (Some(q), gdscan::decode::scan::FilterMode::Exact),
        (_, Some(q)) => (Some(q), gdscan::decode::scan::FilterMode::Late),
        _ => (None, gdscan::decode::scan::FilterMode::Exact),
    };
    if let Some(scan) = query.and_then(crate::tpch::scan_filter) {
        let columns = scan.columns.iter().map(|c| c.to_string()).collect();
        let filter = scan
            .filter
            .parse()
            .map_err(|source| gdscan::parquet::ScanError::Filter {
                path: name.to_string(),
                source,
            })?;
        return Ok(DecodeCase {
            filter: Some(filter),
            mode,
            ..case(Table::LineItem, Projection::Columns(columns))
        });
    }
    match name {
        "all" => Ok(case(Table::LineItem, Projection::All)),
        "nested" => Ok(case(Table::OrdersNested, Projection::All)),
        columns if columns.starts_with("l_") => Ok(case(
            Table::LineItem,
            Projection::Columns(columns.split('+').map(str::to_string).collect()),
        )),
        query => lineitem_query(query)
            .map(|q| case(Table::LineItem, q.projection))
            .ok_or_else(|| {
                Error::from(gdscan::config::ConfigError::Invalid {
                    name: "--cases".into(),
                    value: name.into(),
                    reason:
                        "expected all, q1, q6, q14, q19, nested, lineitem columns joined by +, \
                             or q1, q6, q12, q14, q19 with -exact or -late"
                            .into(),
                })
            }),
    }
}

/// The cases `names`, all checked before anything runs.
pub(crate) fn decode_cases(names: &[String]) -> Result<Vec<DecodeCase>> {
    names.iter().map(|n| decode_case(n)).collect()
}

/// The table folders the cases `names` read, each once, in order.
pub(crate) fn case_tables(names: &[String]) -> Result<Vec<Table>> {
    let mut tables = Vec::new();
    for case in decode_cases(names)? {
        if !tables.contains(&case.table) {
            tables.push(case.table);
        }
    }
    Ok(tables)
}

/// A decoder error of case `case`: a column outside the decoder's coverage
/// (the nested case's, until it decodes LIST and STRUCT columns) as
/// [`BenchError::DecodeUnsupported`] naming the case, others as they are.
fn decode_error(case: &str, e: DecodeError) -> Error {
    match e {
        DecodeError::Unsupported { .. } => BenchError::DecodeUnsupported {
            case: case.to_string(),
            source: Box::new(e),
        }
        .into(),
        other => Error::decode(other),
    }
}

/// Opens and plans the files of `case` under `data` (its table's folder).
fn prepare_files(
    engine: &Arc<Engine>,
    data: &std::path::Path,
    case: &DecodeCase,
) -> Result<Vec<File>> {
    let request = case.request();
    let mut files = Vec::new();
    for path in table_files(data, case.table)? {
        let handle = Arc::new(FileHandle::open_with(
            engine.clone(),
            &path,
            OpenMode::Read,
        )?);
        let source: Arc<dyn gdscan::store::Source> = Arc::new(LocalSource::new(handle.clone())?);
        let metadata = load(&source, MetadataOptions::default())?;
        // With a filter, its columns are planned beside the projection.
        let plan = decode_plan(&metadata, &request, &DecodeOptions::default())
            .map_err(|e| e.in_file(handle.path()))?;
        files.push(File {
            source,
            metadata,
            plan: Arc::new(plan),
        });
    }
    Ok(files)
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

/// Runs the benchmark.
pub(crate) fn run(opts: &DecodeBenchOptions) -> Result<DecodeBenchReport> {
    let decode_cases = decode_cases(&opts.cases)?;
    let all = match &opts.devices {
        Some(d) => d.open()?,
        None => vec![Device::get(opts.device)?],
    };
    let device = all[0];
    let pinned = pinned_h2d_gbps(device)?;
    let pinned_all = if all.len() > 1 {
        Some(pinned_h2d_all_gbps(&all)?)
    } else {
        None
    };
    let engine = Engine::new(gdscan::config::Settings::from_env()?)?;
    let allocs: Vec<DeviceAllocator> = all.iter().map(|&d| DeviceAllocator::new(d)).collect();
    let hosts: Vec<PinnedAllocator> = all
        .iter()
        .map(|&d| PinnedAllocator::new(d, PINNED_FETCH_CACHE))
        .collect();
    let mut cases = Vec::new();
    for case in &decode_cases {
        let files = prepare_files(&engine, &opts.data, case)?;
        let one = Targets {
            devices: &all[..1],
            allocs: &allocs[..1],
            hosts: &hosts[..1],
        };
        cases.push(run_case(case, &files, one, pinned, opts)?);
        if let Some(p) = pinned_all {
            let every = Targets {
                devices: &all,
                allocs: &allocs,
                hosts: &hosts,
            };
            cases.push(run_case(case, &files, every, p, opts)?);
        }
    }
    Ok(DecodeBenchReport {
        device: all
            .iter()
            .map(|d| Ok(format!("{}: {}", d.ordinal(), d.name()?)))
            .collect::<Result<Vec<_>>>()?
            .join(", "),
        pinned_h2d_gbps: pinned,
        pinned_h2d_all_gbps: pinned_all,
        cases,
    })
}

/// Idle pinned host memory the pinned fetch's pool keeps per device: as
/// much as the decoder's, so that neither pins anew in a timed run.
const PINNED_FETCH_CACHE: usize = 4 << 30;

/// Where a case runs: its GPUs, and per GPU the raw scan's device
/// allocator and the pinned fetch's host allocator.
#[derive(Clone, Copy)]
struct Targets<'a> {
    devices: &'a [Device],
    allocs: &'a [DeviceAllocator],
    hosts: &'a [PinnedAllocator],
}

/// Seconds to fetch `scans` into `allocs`' buffers (each row group dropped
/// as it arrives, as the raw scan and the decoder's pipeline free them).
fn time_fetch<A: Allocator + Clone>(scans: Vec<SourceScan>, allocs: &[A]) -> Result<f64> {
    let start = Instant::now();
    for rg in fetch(scans, allocs.to_vec(), FetchOptions::default()) {
        rg?;
    }
    Ok(start.elapsed().as_secs_f64())
}

/// What one decode run gave: seconds, the report, per-GPU shares, rows and
/// the peak device memory used (the largest over the GPUs).
type DecodeRun = (f64, DecodeReport, Vec<DeviceShare>, u64, u64);

/// The raw scans of `files`: each file's source with its plan.
fn scans(files: &[File]) -> Vec<SourceScan> {
    files
        .iter()
        .map(|f| SourceScan {
            source: f.source.clone(),
            plan: f.plan.clone(),
        })
        .collect()
}

/// The decoder's options for a run on `devices`: the environment's, with
/// the group size, depth and check the bench was given.
fn decode_options(devices: &[Device], opts: &DecodeBenchOptions) -> Result<DecodeOptions> {
    let defaults = DecodeOptions::from_env()?;
    let base = DecodeOptions {
        group_bytes: opts.group_bytes.unwrap_or(defaults.group_bytes),
        depth: opts.depth.unwrap_or(defaults.depth),
        check: opts.check.unwrap_or(defaults.check),
        ..defaults
    };
    Ok(DecodeOptions {
        devices: Devices::List(devices.iter().map(|d| d.ordinal()).collect()),
        ..base
    })
}

/// Decodes `files` once on `devices`, timed, watching each GPU's free
/// memory as the batches arrive.
fn decode_once(
    case: &DecodeCase,
    files: &[File],
    devices: &[Device],
    opts: &DecodeBenchOptions,
) -> Result<DecodeRun> {
    let inputs: Vec<DecodeInput> = files
        .iter()
        .map(|f| DecodeInput {
            source: f.source.clone(),
            metadata: f.metadata.clone(),
            plan: f.plan.clone(),
        })
        .collect();
    let free_before: Vec<usize> = devices
        .iter()
        .map(|d| Ok(d.memory_info()?.0))
        .collect::<Result<_>>()?;
    let mut min_free = free_before.clone();
    let mut rows = 0u64;
    let mut track = |batch: &gdscan::decode::array::DeviceBatch| -> Result<()> {
        rows += batch.num_rows() as u64;
        let at = devices
            .iter()
            .position(|d| Some(d.ordinal()) == batch.device_ordinal())
            .unwrap_or(0);
        min_free[at] = min_free[at].min(devices[at].memory_info()?.0);
        Ok(())
    };
    let options = DecodeOptions {
        filter: case.mode,
        ..decode_options(devices, opts)?
    };
    let start = Instant::now();
    let mut stream =
        decode(inputs, case.request(), options).map_err(|e| decode_error(&case.name, e))?;
    for batch in stream.by_ref() {
        track(&batch.map_err(|e| decode_error(&case.name, e))?)?;
    }
    // The shares are reported for a scan over several GPUs only.
    let shares = match devices.len() {
        1 => Vec::new(),
        _ => stream.shares(),
    };
    let report = stream.report();
    let seconds = start.elapsed().as_secs_f64();
    // New device memory taken during the scan, or (the decoder's pool
    // outlives a scan, so a later scan takes little new memory) the
    // most its pool had handed out at once, whichever is larger.
    let peak = free_before
        .iter()
        .zip(&min_free)
        .map(|(b, m)| (b - m) as u64)
        .max()
        .unwrap_or(0)
        .max(report.device_pool.peak_in_use_bytes);
    Ok((seconds, report, shares, rows, peak))
}

/// Times `case` over `files` on `devices`: one warm-up, then
/// `opts.iterations` runs of the raw scan and the decode, back to back.
fn run_case(
    case: &DecodeCase,
    files: &[File],
    targets: Targets<'_>,
    pinned: f64,
    opts: &DecodeBenchOptions,
) -> Result<DecodeCaseResult> {
    let Targets {
        devices,
        allocs,
        hosts,
    } = targets;
    let raw_once = || time_fetch(scans(files), allocs);
    let pinned_once = || time_fetch(scans(files), hosts);
    let decode_once = || decode_once(case, files, devices, opts);
    raw_once()?;
    pinned_once()?;
    decode_once()?;
    let mut iterations_out = Vec::new();
    let mut pinned_out = Vec::new();
    let mut reports = Vec::new();
    let mut peak = 0;
    let mut rows = 0;
    for _ in 0..opts.iterations.max(1) {
        let raw = raw_once()?;
        pinned_out.push(pinned_once()?);
        let (dec, report, shares, r, p) = decode_once()?;
        iterations_out.push((raw, dec));
        reports.push((dec, report, shares));
        peak = peak.max(p);
        rows = r;
    }
    let mut raw: Vec<f64> = iterations_out.iter().map(|i| i.0).collect();
    let mut dec: Vec<f64> = iterations_out.iter().map(|i| i.1).collect();
    let (raw_m, dec_m) = (median(&mut raw), median(&mut dec));
    let pinned_m = median(&mut pinned_out.clone());
    reports.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (_, report, shares) = reports[reports.len() / 2].clone();
    let bytes_read: u64 = files.iter().map(|f| f.plan.totals.bytes_read).sum();
    Ok(DecodeCaseResult {
        case: case.name.clone(),
        table: case.table,
        devices: devices.iter().map(|d| d.ordinal()).collect(),
        shares,
        files: files.len(),
        rows,
        bytes_read,
        output_bytes: report.output_bytes,
        raw_seconds: raw_m,
        pinned_fetch_seconds: pinned_m,
        decode_seconds: dec_m,
        decode_best_seconds: dec[0],
        decode_over_raw: dec_m / raw_m,
        pcie_floor_seconds: bytes_read as f64 / (pinned * 1e9),
        report,
        peak_device_bytes: peak,
        iterations: iterations_out,
        pinned_fetch_iterations: pinned_out,
    })
}

/// The report as a table.
pub(crate) fn render(r: &DecodeBenchReport) -> String {
    let mut s = format!(
        "gdscan bench decode on {} (pinned H2D {:.1} GB/s in this run{})\n",
        r.device,
        r.pinned_h2d_gbps,
        r.pinned_h2d_all_gbps
            .map(|g| format!(", {g:.1} GB/s to all GPUs at once"))
            .unwrap_or_default()
    );
    s.push_str(&format!(
        "{:<6} {:>5} {:>10} {:>10} {:>10} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>9}\n",
        "case",
        "gpus",
        "rows",
        "read MB",
        "out MB",
        "raw s",
        "pinned s",
        "decode s",
        "dec/raw",
        "io wait",
        "gpu wait",
        "peak MB"
    ));
    let mut one: Option<&DecodeCaseResult> = None;
    for c in &r.cases {
        let gpus: Vec<String> = c.devices.iter().map(|d| d.to_string()).collect();
        s.push_str(&format!(
            "{:<6} {:>5} {:>10} {:>10.1} {:>10.1} {:>9.4} {:>9.4} {:>9.4} {:>8.2} {:>8.4} {:>8.4} {:>9.0}\n",
            c.case,
            gpus.join(","),
            c.rows,
            c.bytes_read as f64 / 1e6,
            c.output_bytes as f64 / 1e6,
            c.raw_seconds,
            c.pinned_fetch_seconds,
            c.decode_seconds,
            c.decode_over_raw,
            c.report.io_wait_seconds,
            c.report.gpu_wait_seconds,
            c.peak_device_bytes as f64 / 1e6,
        ));
        for sh in &c.shares {
            s.push_str(&format!(
                "       GPU {}: {} row groups, {} bytes planned, {} read, {} rows\n",
                sh.device, sh.row_groups, sh.planned_bytes, sh.report.bytes_read, sh.report.rows
            ));
        }
        match one {
            Some(o) if o.case == c.case && c.devices.len() > 1 => s.push_str(&format!(
                "       {} GPUs over 1: raw x{:.2}, decode x{:.2}\n",
                c.devices.len(),
                o.raw_seconds / c.raw_seconds,
                o.decode_seconds / c.decode_seconds
            )),
            _ => one = Some(c),
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn cases_name_their_table_and_columns() {
        let cases = decode_cases(&names(&["all", "q1", "nested"])).unwrap();
        let tables: Vec<Table> = cases.iter().map(|c| c.table).collect();
        assert_eq!(
            tables,
            [Table::LineItem, Table::LineItem, Table::OrdersNested]
        );
        assert_eq!(cases[0].projection, Projection::All);
        assert_eq!(cases[2].projection, Projection::All);
        let Projection::Columns(q1) = &cases[1].projection else {
            panic!("q1 reads some columns: {:?}", cases[1].projection)
        };
        assert!(q1.iter().all(|c| c.starts_with("l_")), "{q1:?}");
        assert_eq!(cases[2].name, "nested");
    }

    #[test]
    fn lineitem_columns_joined_by_plus_are_a_case_of_their_own() {
        let cases = decode_cases(&names(&["l_returnflag+l_linestatus", "l_tax"])).unwrap();
        assert_eq!(cases[0].table, Table::LineItem);
        assert_eq!(
            cases[0].projection,
            Projection::Columns(names(&["l_returnflag", "l_linestatus"]))
        );
        assert_eq!(cases[1].projection, Projection::Columns(names(&["l_tax"])));
        assert_eq!(cases[0].name, "l_returnflag+l_linestatus");
    }

    #[test]
    fn case_tables_are_listed_once_in_order() {
        let tables = case_tables(&names(&["nested", "all", "q6", "nested"])).unwrap();
        assert_eq!(tables, [Table::OrdersNested, Table::LineItem]);
    }

    #[test]
    fn an_unknown_case_is_a_typed_error_naming_the_choices() {
        for bad in ["q2", "Nested", "orders_nested", ""] {
            let e = decode_cases(&names(&["all", bad])).unwrap_err();
            assert!(
                matches!(
                    &e,
                    Error::Gdscan(gdscan::Error::Config(
                        gdscan::config::ConfigError::Invalid { .. }
                    ))
                ),
                "{e:?}"
            );
            let text = e.to_string();
            assert!(
                text.contains("--cases") && text.contains("nested"),
                "{text}"
            );
        }
    }

    #[test]
    fn an_unsupported_column_names_the_case() {
        let e = decode_error(
            "nested",
            DecodeError::Unsupported {
                file: "/d/orders_nested/part-0.parquet".into(),
                column: "o_lineitems.list.item.l_partkey".into(),
                what: "repeated (nested) column".into(),
            },
        );
        assert!(
            matches!(&e, Error::Bench(BenchError::DecodeUnsupported { case, .. }) if case == "nested"),
            "{e:?}"
        );
        let text = crate::error::chain(&e);
        assert!(
            text.contains("case nested") && text.contains("o_lineitems.list.item.l_partkey"),
            "{text}"
        );
    }
}
