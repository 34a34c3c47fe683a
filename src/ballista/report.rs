//! What gdscan's scans read on this process (an executor): each finished
//! scan partition's bytes, summed per process and handed to a reporter
//! (the `gdscan ballista executor` command prints them), so a user, and
//! the tests, see that the executors read through gdscan.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use ::datafusion::physical_plan::metrics::MetricsSet;

/// One scan partition's gdscan counters.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanReport {
    /// The scan's partition.
    pub partition: usize,
    /// Bytes gdscan's reader read (`gds_bytes_read`).
    pub bytes_read: u64,
    /// Bytes DataFusion asked for (`gds_bytes_needed`).
    pub bytes_needed: u64,
    /// Bytes per engine path (`gds_path_*_bytes`), by metric name.
    pub paths: Vec<(String, u64)>,
}

impl ScanReport {
    /// `partition`'s gdscan counters in a scan's `metrics`.
    pub fn from_metrics(metrics: &MetricsSet, partition: usize) -> Self {
        let mut report = ScanReport {
            partition,
            ..ScanReport::default()
        };
        for metric in metrics.iter() {
            if metric.partition() != Some(partition) {
                continue;
            }
            let value = metric.value();
            let name = value.name();
            let n = value.as_usize() as u64;
            if name == "gds_bytes_read" {
                report.bytes_read += n;
            } else if name == "gds_bytes_needed" {
                report.bytes_needed += n;
            } else if name.starts_with("gds_path_") {
                match report.paths.iter_mut().find(|(p, _)| p == name) {
                    Some((_, total)) => *total += n,
                    None => report.paths.push((name.to_string(), n)),
                }
            }
        }
        report
    }
}

static BYTES_READ: AtomicU64 = AtomicU64::new(0);
static BYTES_NEEDED: AtomicU64 = AtomicU64::new(0);
static SCANS: AtomicU64 = AtomicU64::new(0);
static REPORTER: OnceLock<fn(&ScanReport, &ProcessTotals)> = OnceLock::new();

/// What gdscan's scans read in this process so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProcessTotals {
    /// Scan partitions finished.
    pub scans: u64,
    /// Bytes read.
    pub bytes_read: u64,
    /// Bytes needed.
    pub bytes_needed: u64,
}

/// The totals so far.
pub fn process_totals() -> ProcessTotals {
    ProcessTotals {
        scans: SCANS.load(Ordering::Relaxed),
        bytes_read: BYTES_READ.load(Ordering::Relaxed),
        bytes_needed: BYTES_NEEDED.load(Ordering::Relaxed),
    }
}

/// Calls `reporter` after every scan partition of this process (the first
/// reporter set stays; returns false when one was already set).
pub fn set_scan_reporter(reporter: fn(&ScanReport, &ProcessTotals)) -> bool {
    REPORTER.set(reporter).is_ok()
}

/// Adds a finished scan partition to the totals and reports it.
pub(super) fn record(report: ScanReport) {
    SCANS.fetch_add(1, Ordering::Relaxed);
    BYTES_READ.fetch_add(report.bytes_read, Ordering::Relaxed);
    BYTES_NEEDED.fetch_add(report.bytes_needed, Ordering::Relaxed);
    if let Some(reporter) = REPORTER.get() {
        reporter(&report, &process_totals());
    }
}
