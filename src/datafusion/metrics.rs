//! gdscan's scan metrics in DataFusion's metrics set, so `EXPLAIN ANALYZE`
//! shows them on the `DataSourceExec`: bytes read and needed, requests,
//! time in I/O and bytes per engine path; [`scan_totals`] sums them over
//! a plan with the GPU path's (`metrics`).

use std::time::Duration;

use ::datafusion::physical_plan::metrics::{
    Count, ExecutionPlanMetricsSet, MetricBuilder, MetricCategory, MetricType, MetricValue,
    MetricsSet, Time,
};
use ::datafusion::physical_plan::ExecutionPlan;
use serde::Serialize;

use crate::engine::IoPath;

/// Bytes the reader read (needed plus the gaps that coalescing bridged).
pub(super) const BYTES_READ: &str = "gds_bytes_read";
/// Bytes DataFusion asked for.
pub(super) const BYTES_NEEDED: &str = "gds_bytes_needed";
/// Coalesced reads issued to the engine.
pub(super) const REQUESTS: &str = "gds_requests";
/// Byte ranges DataFusion asked for.
pub(super) const RANGES: &str = "gds_ranges";
/// Time spent waiting for reads.
pub(super) const IO_TIME: &str = "gds_io_time";
/// Row groups served from gdscan's read-ahead.
pub(super) const READ_AHEAD_HITS: &str = "gds_read_ahead_hits";
/// Bytes read ahead that the scan never asked for (its bytes are in
/// [`BYTES_READ`] too).
pub(super) const READ_AHEAD_WASTED: &str = "gds_read_ahead_wasted_bytes";
/// Files (or file ranges) decoded on the GPU.
pub(super) const GPU_FILES: &str = "gds_gpu_files";
/// Files of a GPU scan decoded on the host instead.
pub(super) const FALLBACK_FILES: &str = "gds_gpu_fallback_files";
/// Rows the GPU path produced (before DataFusion's filters).
pub(super) const GPU_ROWS: &str = "gds_gpu_rows";
/// Rows the host path produced for fallback files.
pub(super) const CPU_ROWS: &str = "gds_cpu_rows";
/// Time the partitions waited for the GPU decoder's next batch.
pub(super) const GPU_DECODE_TIME: &str = "gds_gpu_decode_time";
/// Bytes copied back to the host (the host arrays' buffers).
pub(super) const COPY_BACK_BYTES: &str = "gds_copy_back_bytes";
/// Time copying device batches back into Arrow record batches.
pub(super) const COPY_BACK_TIME: &str = "gds_copy_back_time";
/// One counter per file, labelled with the file, its path (`gpu` or
/// `cpu`) and, for `cpu`, the reason.
pub(super) const FILE_PATH: &str = "gds_file_decoded";

/// Prefix of the per-path byte counters (`gds_path_posix_host_bytes`, ...).
pub(super) const PATH_PREFIX: &str = "gds_path_";

/// The name of `path`'s byte counter.
pub(super) fn path_metric(path: IoPath) -> String {
    format!("{PATH_PREFIX}{}_bytes", path.name().replace('-', "_"))
}

/// One reader's metrics (registered per file range and partition; DataFusion
/// sums them by name for display).
#[derive(Debug, Clone)]
pub struct ReaderMetrics {
    set: ExecutionPlanMetricsSet,
    partition: usize,
    /// [`BYTES_READ`].
    pub bytes_read: Count,
    /// [`BYTES_NEEDED`].
    pub bytes_needed: Count,
    /// [`REQUESTS`].
    pub requests: Count,
    /// [`RANGES`].
    pub ranges: Count,
    /// [`IO_TIME`].
    pub io_time: Time,
    /// [`READ_AHEAD_HITS`].
    pub read_ahead_hits: Count,
    /// [`READ_AHEAD_WASTED`].
    pub read_ahead_wasted: Count,
}

fn builder(set: &ExecutionPlanMetricsSet) -> MetricBuilder<'_> {
    MetricBuilder::new(set).with_type(MetricType::Summary)
}

impl ReaderMetrics {
    /// Registers a reader's metrics for `partition` in `set`.
    pub fn new(set: &ExecutionPlanMetricsSet, partition: usize) -> Self {
        let bytes = |name: &'static str| {
            builder(set)
                .with_category(MetricCategory::Bytes)
                .counter(name, partition)
        };
        ReaderMetrics {
            set: set.clone(),
            partition,
            bytes_read: bytes(BYTES_READ),
            bytes_needed: bytes(BYTES_NEEDED),
            requests: builder(set).counter(REQUESTS, partition),
            ranges: builder(set).counter(RANGES, partition),
            io_time: builder(set).subset_time(IO_TIME, partition),
            read_ahead_hits: builder(set).counter(READ_AHEAD_HITS, partition),
            read_ahead_wasted: bytes(READ_AHEAD_WASTED),
        }
    }

    /// Adds the bytes that `path` carried (registered on first use, so only
    /// the paths taken show).
    pub fn add_path(&self, path: IoPath, bytes: u64) {
        if bytes == 0 {
            return;
        }
        builder(&self.set)
            .with_category(MetricCategory::Bytes)
            .counter(path_metric(path), self.partition)
            .add(bytes as usize);
    }
}

/// gdscan's metrics summed over a plan (every `DataSourceExec` in it),
/// after it ran.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ScanTotals {
    /// `BYTES_READ`.
    pub bytes_read: u64,
    /// `BYTES_NEEDED`.
    pub bytes_needed: u64,
    /// `REQUESTS`.
    pub requests: u64,
    /// `RANGES`.
    pub ranges: u64,
    /// `IO_TIME`.
    pub io_time: Duration,
    /// `READ_AHEAD_HITS`.
    pub read_ahead_hits: u64,
    /// `READ_AHEAD_WASTED`.
    pub read_ahead_wasted: u64,
    /// Bytes per engine path, for the paths taken.
    pub paths: Vec<(IoPath, u64)>,
    /// Where the pages were decoded (tables that decode on the GPU).
    pub decode: DecodeTotals,
}

/// What the GPU path of gdscan's scans did (all zero on the host path).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct DecodeTotals {
    /// Files (or file ranges) decoded on the GPU.
    pub gpu_files: u64,
    /// Files (or file ranges) of a GPU scan decoded on the host instead.
    pub fallback_files: u64,
    /// Rows decoded on the GPU (before DataFusion's filters).
    pub gpu_rows: u64,
    /// Rows of fallback files decoded on the host.
    pub cpu_rows: u64,
    /// Time the partitions waited for the GPU decoder.
    pub gpu_decode_time: Duration,
    /// Bytes copied back to the host (the host arrays' buffers).
    pub copy_back_bytes: u64,
    /// Time copying them back.
    pub copy_back_time: Duration,
    /// Each file once per path: where it was decoded and, on the host,
    /// why.
    pub files: Vec<FileDecoded>,
}

/// Where one file of a GPU scan was decoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileDecoded {
    /// The file (no credentials).
    pub file: String,
    /// `gpu` or `cpu`.
    pub path: String,
    /// Why not on the GPU (empty for `gpu`).
    pub reason: String,
}

fn time_of(metrics: &MetricsSet, name: &str) -> Duration {
    match metrics.sum_by_name(name) {
        Some(MetricValue::Time { time, .. }) => Duration::from_nanos(time.value() as u64),
        _ => Duration::ZERO,
    }
}

impl DecodeTotals {
    fn add(&mut self, metrics: &MetricsSet, count: impl Fn(&str) -> u64) {
        self.gpu_files += count(GPU_FILES);
        self.fallback_files += count(FALLBACK_FILES);
        self.gpu_rows += count(GPU_ROWS);
        self.cpu_rows += count(CPU_ROWS);
        self.copy_back_bytes += count(COPY_BACK_BYTES);
        self.gpu_decode_time += time_of(metrics, GPU_DECODE_TIME);
        self.copy_back_time += time_of(metrics, COPY_BACK_TIME);
        for m in metrics.iter().filter(|m| m.value().name() == FILE_PATH) {
            let label = |name: &str| {
                m.labels()
                    .iter()
                    .find(|l| l.name() == name)
                    .map(|l| l.value().to_string())
                    .unwrap_or_default()
            };
            let file = FileDecoded {
                file: label("file"),
                path: label("path"),
                reason: label("reason"),
            };
            if !self.files.contains(&file) {
                self.files.push(file);
            }
        }
    }
}

impl ScanTotals {
    fn add(&mut self, plan: &dyn ExecutionPlan) {
        if let Some(metrics) = plan.metrics() {
            let count = |name: &str| {
                metrics
                    .sum_by_name(name)
                    .map(|v| v.as_usize() as u64)
                    .unwrap_or(0)
            };
            self.bytes_read += count(BYTES_READ);
            self.bytes_needed += count(BYTES_NEEDED);
            self.requests += count(REQUESTS);
            self.ranges += count(RANGES);
            self.read_ahead_hits += count(READ_AHEAD_HITS);
            self.read_ahead_wasted += count(READ_AHEAD_WASTED);
            if let Some(MetricValue::Time { time, .. }) = metrics.sum_by_name(IO_TIME) {
                self.io_time += Duration::from_nanos(time.value() as u64);
            }
            self.decode.add(&metrics, count);
            for path in IoPath::ALL {
                let bytes = count(&path_metric(path));
                if bytes == 0 {
                    continue;
                }
                match self.paths.iter_mut().find(|(p, _)| *p == path) {
                    Some((_, total)) => *total += bytes,
                    None => self.paths.push((path, bytes)),
                }
            }
        }
        for child in plan.children() {
            self.add(child.as_ref());
        }
    }
}

/// Sums gdscan's metrics over `plan` and its children.
pub fn scan_totals(plan: &dyn ExecutionPlan) -> ScanTotals {
    let mut totals = ScanTotals::default();
    totals.add(plan);
    totals
}
