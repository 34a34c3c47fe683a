//! gdscan's scan metrics in DataFusion's metrics set, so `EXPLAIN ANALYZE`
//! shows them on the `DataSourceExec`: bytes read and needed, requests,
//! time in I/O and bytes per engine path.

use std::time::Duration;

use ::datafusion::physical_plan::metrics::{
    Count, ExecutionPlanMetricsSet, MetricBuilder, MetricCategory, MetricType, MetricValue, Time,
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
