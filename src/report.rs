//! The path report: stage 1's decision, stage 2's prediction, and the
//! counters after the fact, joined into one verdict that says plainly
//! whether GPUDirect Storage carried the bytes.

use serde::Serialize;

use crate::config::ParamValue;
use crate::cufile::driver::{opened, predict_stage2};
use crate::cufile::params::{report as param_report, ConfigSource};
use crate::cufile::{CuFileError, CuFileStats};
use crate::engine::CuFileAvailability;
use crate::engine::{FileHandle, IoPath, PathCounters, RouteDecision};
use crate::store::{LocalSource, RemoteSource, Source};

/// One path's counters.
#[derive(Debug, Clone, Serialize)]
pub struct PathCount {
    /// The path.
    pub path: IoPath,
    /// Tasks.
    pub ops: u64,
    /// Bytes.
    pub bytes: u64,
    /// Seconds spent in those tasks, summed over workers.
    pub seconds: f64,
    /// Requests resent after a failed attempt (remote stores).
    pub retries: u64,
}

/// One GPU's counters, process-wide.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceCounts {
    /// The GPU (CUDA ordinal).
    pub device: usize,
    /// Its paths that moved bytes.
    pub counters: Vec<PathCount>,
}

/// Every GPU's process-wide counters, for the GPUs that received bytes.
pub fn per_device() -> Vec<DeviceCounts> {
    crate::engine::counted_devices()
        .into_iter()
        .map(|device| DeviceCounts {
            device,
            counters: path_counts(crate::engine::device_counters(device))
                .into_iter()
                .filter(|c| c.ops > 0)
                .collect(),
        })
        .filter(|d| !d.counters.is_empty())
        .collect()
}

/// A remote object's reads, for the report.
#[derive(Debug, Clone, Serialize)]
pub struct StoreReport {
    /// The object.
    pub object: String,
    /// The store, as it names itself.
    pub store: String,
    /// Requests in flight at most.
    pub concurrency: usize,
    /// Bytes per request at most.
    pub request_size: u64,
    /// Requests that completed.
    pub requests: u64,
    /// Their retries (attempts beyond the first).
    pub retries: u64,
    /// Bytes received.
    pub bytes: u64,
    /// Seconds spent in requests, summed over concurrent requests.
    pub seconds: f64,
    /// HTTP attempts of the whole store (all its sources, retries included),
    /// when its client counts them.
    pub http_attempts: Option<u64>,
}

/// Stage 2 as cuFile describes itself.
#[derive(Debug, Clone, Serialize)]
pub struct Stage2 {
    /// The library loaded.
    pub library: String,
    /// cuFile's version.
    pub version: Option<String>,
    /// nvidia-fs version, "0.0" when absent.
    pub nvfs_version: String,
    /// Whether real GDS is possible on this machine.
    pub gds_possible: bool,
    /// properties.allow_compat_mode as cuFile reports it.
    pub allow_compat_mode: Option<bool>,
    /// What cuFile will do.
    pub prediction: String,
}

/// The whole report for one file handle.
#[derive(Debug, Clone, Serialize)]
pub struct PathReport {
    /// KVIKIO_COMPAT_MODE in force.
    pub compat_mode: String,
    /// "ready", "disabled" or "unavailable".
    pub cufile: String,
    /// Why cuFile is unavailable, if so.
    pub cufile_reason: Option<String>,
    /// Stage 1: the last device request's route and reason.
    pub stage1: Option<RouteDecision>,
    /// Stage 2, when the cuFile driver is open.
    pub stage2: Option<Stage2>,
    /// Our own counters for this handle.
    pub counters: Vec<PathCount>,
    /// Bytes each GPU has received, process-wide (every handle and
    /// source), per path: the GPUs that received any.
    pub per_device: Vec<DeviceCounts>,
    /// cuFile's own counters, when read.
    pub cufile_stats: Option<CuFileStats>,
    /// A remote object's reads (absent for local files).
    pub store: Option<StoreReport>,
    /// One sentence: which path carried the bytes.
    pub verdict: String,
}

/// Stage 2 from the open driver, if it is open.
pub(crate) fn stage2() -> Option<Stage2> {
    let info = opened()?;
    let allow = crate::cufile::library::api().ok().and_then(|api| {
        param_report(api, &info.applied, &ConfigSource::locate())
            .into_iter()
            .find(|p| p.key == "properties.allow_compat_mode")
            .and_then(|p| match p.value {
                Some(ParamValue::Bool(b)) => Some(b),
                _ => None,
            })
    });
    Some(Stage2 {
        library: info.library.clone(),
        version: info.version.clone(),
        nvfs_version: format!("{}.{}", info.nvfs_version.0, info.nvfs_version.1),
        gds_possible: crate::cufile::driver::gds_stage2(info).is_ok(),
        allow_compat_mode: allow,
        prediction: predict_stage2(info, allow),
    })
}

/// A span over which cuFile's own counters are measured: opened before the
/// I/O (starting cuFile's statistics when its driver is open), closed after
/// it into a report with the difference.
#[derive(Debug)]
pub struct StatsWindow {
    before: Option<CuFileStats>,
}

impl StatsWindow {
    /// Opens the window; cuFile's counters are read only when `wanted` and
    /// the driver is open. cuFile opens on a local file's first device
    /// request; when `wanted`, `source`'s cuFile state is settled first
    /// (driver opened, file registered), so that the counters cover the
    /// whole I/O.
    pub fn open(wanted: bool, source: &dyn Source) -> Result<StatsWindow, CuFileError> {
        if let Some(local) = LocalSource::of(source).filter(|_| wanted) {
            local.handle().cufile_settled();
        }
        let before = if wanted && crate::cufile::driver::opened().is_some() {
            crate::cufile::stats::start(true)?;
            Some(crate::cufile::stats::read()?)
        } else {
            None
        };
        Ok(StatsWindow { before })
    }

    /// The report for `source` (local or remote), with cuFile's counts
    /// since [`StatsWindow::open`].
    pub fn close(self, source: &dyn Source) -> Result<PathReport, CuFileError> {
        let stats = self.cufile_since()?;
        Ok(build(source, stats))
    }

    fn cufile_since(&self) -> Result<Option<CuFileStats>, CuFileError> {
        Ok(match &self.before {
            Some(before) => Some(crate::cufile::stats::read()?.since(before)),
            None => None,
        })
    }
}

fn path_counts(counters: &PathCounters) -> Vec<PathCount> {
    IoPath::ALL
        .iter()
        .map(|&path| {
            let t = counters.get(path);
            PathCount {
                path,
                ops: t.ops,
                bytes: t.bytes,
                seconds: t.nanos as f64 / 1e9,
                retries: t.retries,
            }
        })
        .collect()
}

/// Builds the report for `source`, with cuFile's counters when given. A
/// local file's shows stage 1 (its handle's cuFile state and last route);
/// a remote object's has no stage 1 (cuFile reads files, not HTTP bodies)
/// and adds its requests and retries.
pub fn build(source: &dyn Source, cufile_stats: Option<CuFileStats>) -> PathReport {
    if let Some(local) = LocalSource::of(source) {
        return build_local(local.handle(), cufile_stats);
    }
    let counters = path_counts(source.counters());
    let remote = source.counters().get(IoPath::RemoteStore);
    let (store, concurrency, request_size, http_attempts) = match RemoteSource::of(source) {
        Some(r) => (
            r.store().to_string(),
            r.options().concurrency,
            r.options().request_size,
            r.http_counts().map(|c| c.attempts()),
        ),
        None => ("unknown".to_string(), 0, 0, None),
    };
    let stage2 = stage2();
    let verdict = verdict(&counters, cufile_stats.as_ref(), stage2.as_ref());
    PathReport {
        compat_mode: "not applicable (remote object)".to_string(),
        cufile: "not used".to_string(),
        cufile_reason: Some("remote objects arrive over HTTP, not from a local file".to_string()),
        stage1: None,
        stage2,
        counters,
        per_device: per_device(),
        cufile_stats,
        store: Some(StoreReport {
            object: source.location().to_string(),
            store,
            concurrency,
            request_size,
            requests: remote.ops,
            retries: remote.retries,
            bytes: remote.bytes,
            seconds: remote.nanos as f64 / 1e9,
            http_attempts,
        }),
        verdict,
    }
}

/// The report for a local file's handle.
fn build_local(handle: &FileHandle, cufile_stats: Option<CuFileStats>) -> PathReport {
    let counters = path_counts(handle.counters());
    let (cufile, cufile_reason) = match handle.cufile() {
        CuFileAvailability::Ready => ("ready", None),
        CuFileAvailability::Disabled => ("disabled", None),
        CuFileAvailability::Unavailable(why) => ("unavailable", Some(why.clone())),
        CuFileAvailability::CompatPathOnly(why) => ("compat-path-only", Some(why.clone())),
    };
    let stage2 = stage2();
    let verdict = verdict(&counters, cufile_stats.as_ref(), stage2.as_ref());
    PathReport {
        compat_mode: handle.engine().settings().compat_mode.to_string(),
        cufile: cufile.to_string(),
        cufile_reason,
        stage1: handle.last_route(),
        stage2,
        counters,
        per_device: per_device(),
        cufile_stats,
        store: None,
        verdict,
    }
}

/// The verdict sentence from the counters.
pub fn verdict(
    counters: &[PathCount],
    stats: Option<&CuFileStats>,
    stage2: Option<&Stage2>,
) -> String {
    let cufile_bytes: u64 = counters
        .iter()
        .filter(|c| c.path == IoPath::CuFile)
        .map(|c| c.bytes)
        .sum();
    let others: Vec<String> = counters
        .iter()
        .filter(|c| c.path != IoPath::CuFile && c.bytes > 0)
        .map(|c| format!("{} {}", c.bytes, c.path))
        .collect();
    if cufile_bytes == 0 {
        return if others.is_empty() {
            "no bytes moved yet".to_string()
        } else {
            format!("cuFile not used; GDS: no; bytes via {}", others.join(", "))
        };
    }
    let prediction = stage2.map(|s| s.prediction.as_str()).unwrap_or("unknown");
    match stats {
        Some(s) if s.level >= 3 && !s.gpus.is_empty() => {
            let (total, nvfs, posix) = s.read_split();
            if total == 0 {
                format!(
                    "cuFile reached ({cufile_bytes} bytes), but its stats counted no reads; stage 2 predicted: {prediction}"
                )
            } else if nvfs == 0 {
                format!(
                    "cuFile reached, GDS not used: bytes via nvfs: 0; via cuFile POSIX: {cufile_bytes} ({posix} of {total} cuFile reads were POSIX, 0 nvfs)"
                )
            } else if posix == 0 {
                format!("GDS used: {nvfs} of {total} cuFile reads went through nvidia-fs ({cufile_bytes} bytes)")
            } else {
                format!(
                    "GDS partly used: {nvfs} nvfs reads and {posix} POSIX reads of {total} ({cufile_bytes} bytes through cuFile)"
                )
            }
        }
        Some(s) => format!(
            "cuFile reached ({cufile_bytes} bytes); stage 2 not measured (cuFile stats level {}, 3 needed); predicted: {prediction}",
            s.level
        ),
        None => format!(
            "cuFile reached ({cufile_bytes} bytes); stage 2 not measured (ask with --stats); predicted: {prediction}"
        ),
    }
}

/// The report as text.
pub fn render(r: &PathReport) -> String {
    let mut out = String::new();
    out += &format!("compat mode: {}\n", r.compat_mode);
    out += &format!(
        "cuFile: {}{}\n",
        r.cufile,
        r.cufile_reason
            .as_deref()
            .map(|w| format!(" ({w})"))
            .unwrap_or_default()
    );
    if let Some(s1) = &r.stage1 {
        out += &format!("stage 1: {:?}: {}\n", s1.route, s1.reason);
    }
    match &r.stage2 {
        Some(s2) => {
            out += &format!(
                "stage 2: {} {}, nvidia-fs {}, allow_compat_mode {}: {}\n",
                s2.library,
                s2.version.as_deref().unwrap_or("?"),
                s2.nvfs_version,
                s2.allow_compat_mode
                    .map(|b| b.to_string())
                    .unwrap_or("?".into()),
                s2.prediction
            );
        }
        None => out += "stage 2: cuFile driver not open\n",
    }
    for c in r.counters.iter().filter(|c| c.ops > 0 || c.retries > 0) {
        out += &format!(
            "  {:<20} {:>14} bytes {:>8} ops {:>9.4} s{}\n",
            c.path.name(),
            c.bytes,
            c.ops,
            c.seconds,
            if c.path == IoPath::RemoteStore {
                format!(" {:>6} retries", c.retries)
            } else {
                String::new()
            }
        );
    }
    for d in &r.per_device {
        let paths: Vec<String> = d
            .counters
            .iter()
            .map(|c| format!("{}={}", c.path.name(), c.bytes))
            .collect();
        out += &format!("  GPU {} (process-wide): {}\n", d.device, paths.join(" "));
    }
    if let Some(s) = &r.store {
        out += &format!(
            "store: {} from {}: {} requests, {} retries, {} bytes, {:.4} s in requests (concurrency {}, request size {}){}\n",
            s.object,
            s.store,
            s.requests,
            s.retries,
            s.bytes,
            s.seconds,
            s.concurrency,
            s.request_size,
            s.http_attempts
                .map(|a| format!("; HTTP attempts by the store: {a}"))
                .unwrap_or_default()
        );
    }
    if let Some(s) = &r.cufile_stats {
        out += &format!(
            "cuFile stats (level {}): read ops {} ({} errors), read bytes {}\n",
            s.level, s.read_ops, s.read_errors, s.read_bytes
        );
        for g in &s.gpus {
            out += &format!(
                "  gpu {}: n_total_reads {} n_nvfs_reads {} n_posix_reads {} n_p2p_reads {} n_unaligned_reads {}\n",
                g.index, g.n_total_reads, g.n_nvfs_reads, g.n_posix_reads, g.n_p2p_reads, g.n_unaligned_reads
            );
        }
    }
    out += &format!("verdict: {}\n", r.verdict);
    out
}

/// Rate in GB/s (1e9 bytes per second).
pub fn gbps(bytes: u64, seconds: f64) -> f64 {
    if seconds > 0.0 {
        bytes as f64 / seconds / 1e9
    } else {
        f64::NAN
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cufile::stats::GpuStats;

    fn counts(cufile: u64, bounce: u64) -> Vec<PathCount> {
        vec![
            PathCount {
                path: IoPath::PosixDeviceBounce,
                ops: 1,
                bytes: bounce,
                seconds: 0.0,
                retries: 0,
            },
            PathCount {
                path: IoPath::CuFile,
                ops: 1,
                bytes: cufile,
                seconds: 0.0,
                retries: 0,
            },
        ]
    }

    fn stats(nvfs: u64, posix: u64) -> CuFileStats {
        CuFileStats {
            level: 3,
            gpus: vec![GpuStats {
                n_total_reads: nvfs + posix,
                n_nvfs_reads: nvfs,
                n_posix_reads: posix,
                ..Default::default()
            }],
            ..Default::default()
        }
    }

    #[test]
    fn posix_only_says_cufile_not_used() {
        let v = verdict(&counts(0, 100), None, None);
        assert_eq!(
            v,
            "cuFile not used; GDS: no; bytes via 100 posix-device-bounce"
        );
    }

    #[test]
    fn compat_path_is_stated_plainly() {
        let v = verdict(&counts(4096, 0), Some(&stats(0, 3)), None);
        assert!(
            v.starts_with(
                "cuFile reached, GDS not used: bytes via nvfs: 0; via cuFile POSIX: 4096"
            ),
            "{v}"
        );
    }

    #[test]
    fn real_gds_and_mixed_and_unmeasured() {
        assert!(verdict(&counts(10, 0), Some(&stats(2, 0)), None).starts_with("GDS used"));
        assert!(verdict(&counts(10, 0), Some(&stats(2, 1)), None).starts_with("GDS partly used"));
        let low = CuFileStats {
            level: 1,
            ..Default::default()
        };
        assert!(verdict(&counts(10, 0), Some(&low), None).contains("stats level 1"));
        assert!(verdict(&counts(10, 0), None, None).contains("--stats"));
    }
}
