//! `gdscan bench read`: one file range into device memory, against the pinned
//! H2D ceiling and a naive baseline measured in the same run.

use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::data::{ensure_file, warm_and_checksum};
use super::stats::Timing;
use crate::checksum::crc32_device;
use crate::config::{CompatMode, DeviceReadPath, Settings};
use crate::cuda::{Device, DeviceBuffer, PinnedBuffer};
use crate::engine::{drop_from_cache, on_tmpfs, Engine, FileHandle, IoPath, OpenMode};
use crate::error::{Error, Result};
use crate::store::LocalSource;

/// What to measure.
#[derive(Debug, Clone)]
pub(crate) struct ReadBenchOptions {
    /// Files to read (created with pseudo-random bytes when missing or of another size).
    pub files: Vec<PathBuf>,
    /// Bytes per file.
    pub size: u64,
    /// Thread counts to sweep.
    pub threads: Vec<usize>,
    /// Routes to sweep.
    pub routes: Vec<BenchRoute>,
    /// CUDA device ordinal.
    pub device: usize,
    /// Timed runs per case (after one untimed warm-up run).
    pub repeats: usize,
    /// Base settings (task size, bounce size, ...); threads and route are swept.
    pub base: Settings,
    /// Also measure each route cold (page cache dropped with
    /// `posix_fadvise(DONTNEED)` before every run) at the largest thread count.
    pub cold: bool,
}

/// A route the benchmark can force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BenchRoute {
    /// Pinned bounce buffers (compat ON).
    Bounce,
    /// Registered page cache (compat ON).
    Mmap,
    /// cuFile (compat OFF: cuFile or an error).
    Cufile,
}

impl std::str::FromStr for BenchRoute {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "bounce" => Ok(BenchRoute::Bounce),
            "mmap" => Ok(BenchRoute::Mmap),
            "cufile" => Ok(BenchRoute::Cufile),
            other => Err(format!(
                "unknown route {other:?}: expected bounce, mmap or cufile"
            )),
        }
    }
}

impl std::fmt::Display for BenchRoute {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BenchRoute::Bounce => "bounce",
            BenchRoute::Mmap => "mmap",
            BenchRoute::Cufile => "cufile",
        })
    }
}

impl BenchRoute {
    fn apply(self, settings: &mut Settings) {
        match self {
            BenchRoute::Bounce => {
                settings.compat_mode = CompatMode::On;
                settings.device_read_path = DeviceReadPath::Bounce;
            }
            BenchRoute::Mmap => {
                settings.compat_mode = CompatMode::On;
                settings.device_read_path = DeviceReadPath::Mmap;
            }
            BenchRoute::Cufile => settings.compat_mode = CompatMode::Off,
        }
    }
}

/// One of our cases.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Case {
    /// The route setting.
    pub route: String,
    /// Worker threads.
    pub threads: usize,
    /// Timings.
    pub timing: Timing,
    /// Best rate over the pinned ceiling's best rate.
    pub ratio_to_pinned: f64,
    /// Best rate over the naive baseline's best rate.
    pub ratio_to_naive: f64,
    /// Bytes each path carried in the last run (proof of route).
    pub path_bytes: Vec<(IoPath, u64)>,
    /// Whether the device bytes' CRC-32 equals the file's.
    pub crc_ok: bool,
    /// Page cache dropped before every run.
    pub cold: bool,
    /// The path report's verdict for the proof run (stage 2 from cuFile's stats).
    pub verdict: String,
}

/// A case that could not run (e.g. cuFile unavailable under compat OFF).
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FailedCase {
    /// The route.
    pub route: String,
    /// Worker threads.
    pub threads: usize,
    /// The error.
    pub error: String,
}

/// Results for one file.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FileReport {
    /// The file.
    pub file: String,
    /// Bytes read per run.
    pub bytes: u64,
    /// CRC-32 of the file.
    pub crc32: u32,
    /// One pinned buffer of the same size, one cuMemcpyHtoD.
    pub pinned_ceiling: Timing,
    /// One pread into pageable memory, then one cuMemcpyHtoD from it.
    pub naive: Timing,
    /// Ours.
    pub cases: Vec<Case>,
    /// Cases that could not run, with why.
    pub failed: Vec<FailedCase>,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ReadBenchReport {
    /// GPU name.
    pub device: String,
    /// Per file.
    pub files: Vec<FileReport>,
}

/// Runs the benchmark.
pub(crate) fn run(opts: &ReadBenchOptions) -> Result<ReadBenchReport> {
    let device = Device::get(opts.device)?;
    let mut files = Vec::new();
    for file in &opts.files {
        files.push(run_file(opts, device, file)?);
    }
    Ok(ReadBenchReport {
        device: device.name()?,
        files,
    })
}

fn time_runs(repeats: usize, f: impl FnMut() -> Result<()>) -> Result<Vec<f64>> {
    time_runs_with(repeats, || Ok(()), f)
}

/// Times `f` `repeats` times after one untimed warm-up, running `before`
/// (untimed) ahead of each run.
fn time_runs_with(
    repeats: usize,
    mut before: impl FnMut() -> Result<()>,
    mut f: impl FnMut() -> Result<()>,
) -> Result<Vec<f64>> {
    before()?;
    f()?; // warm-up: first-use allocations, lanes, page faults
    let mut out = Vec::with_capacity(repeats);
    for _ in 0..repeats.max(1) {
        before()?;
        let start = Instant::now();
        f()?;
        out.push(start.elapsed().as_secs_f64());
    }
    Ok(out)
}

fn run_file(opts: &ReadBenchOptions, device: Device, path: &PathBuf) -> Result<FileReport> {
    let shown = path.display().to_string();
    if ensure_file(path, opts.size)? {
        tracing::info!(file = %shown, bytes = opts.size, "wrote benchmark file");
    }
    let crc = warm_and_checksum(path)?;
    let len = opts.size as usize;
    let mut dev = DeviceBuffer::new(device, len)?;

    let pinned_ceiling = {
        let mut pinned = PinnedBuffer::new(device, len)?;
        let f = std::fs::File::open(path).map_err(|e| Error::from_open(&shown, e))?;
        f.read_exact_at(pinned.as_mut_slice(), 0)
            .map_err(|e| Error::io(&shown, "pread", e))?;
        let seconds = time_runs(opts.repeats, || {
            Ok(dev.copy_from_host(0, pinned.as_slice())?)
        })?;
        Timing {
            bytes: opts.size,
            seconds,
        }
    };

    let naive = {
        let f = std::fs::File::open(path).map_err(|e| Error::from_open(&shown, e))?;
        let mut host = vec![0u8; len];
        let seconds = time_runs(opts.repeats, || {
            f.read_exact_at(&mut host, 0)
                .map_err(|e| Error::io(&shown, "pread", e))?;
            Ok(dev.copy_from_host(0, &host)?)
        })?;
        Timing {
            bytes: opts.size,
            seconds,
        }
    };

    let mut cases = Vec::new();
    let mut failed = Vec::new();
    let max_threads = opts.threads.iter().copied().max().unwrap_or(1);
    let can_drop = !on_tmpfs(path);
    for &route in &opts.routes {
        for &threads in &opts.threads {
            let colds: &[bool] = if opts.cold && can_drop && threads == max_threads {
                &[false, true]
            } else {
                &[false]
            };
            for &cold in colds {
                match run_case(
                    opts,
                    path,
                    &mut dev,
                    route,
                    threads,
                    cold,
                    crc,
                    &pinned_ceiling,
                    &naive,
                ) {
                    Ok(case) => cases.push(case),
                    Err(e) => failed.push(FailedCase {
                        route: route.to_string(),
                        threads,
                        error: e.to_string(),
                    }),
                }
            }
        }
    }
    Ok(FileReport {
        file: shown,
        bytes: opts.size,
        crc32: crc,
        pinned_ceiling,
        naive,
        cases,
        failed,
    })
}

#[allow(clippy::too_many_arguments)]
fn run_case(
    opts: &ReadBenchOptions,
    path: &std::path::Path,
    dev: &mut DeviceBuffer,
    route: BenchRoute,
    threads: usize,
    cold: bool,
    crc: u32,
    pinned_ceiling: &Timing,
    naive: &Timing,
) -> Result<Case> {
    let len = opts.size as usize;
    let mut settings = opts.base.clone();
    settings.num_threads = threads;
    route.apply(&mut settings);
    let engine = Engine::new(settings)?;
    let handle = Arc::new(FileHandle::open_with(engine, path, OpenMode::Read)?);
    let source = LocalSource::new(handle.clone())?;
    let before = || if cold { drop_from_cache(path) } else { Ok(()) };
    let seconds = time_runs_with(opts.repeats, before, || {
        handle.pread(dev, len, 0).map(|_| ())
    })?;
    // Proof of route and of bytes: one more run into a cleared buffer, with
    // cuFile's own counters when cuFile is open.
    dev.fill(0xA5)?;
    handle.counters().reset();
    let window = crate::report::StatsWindow::open(true, &source)?;
    handle.pread(dev, len, 0)?;
    let verdict = window.close(&source)?.verdict;
    let path_bytes = handle.counters().nonzero();
    let crc_ok = crc32_device(dev, 0, len)? == crc;
    let timing = Timing {
        bytes: opts.size,
        seconds,
    };
    Ok(Case {
        route: route.to_string(),
        threads,
        ratio_to_pinned: timing.best_gbps() / pinned_ceiling.best_gbps(),
        ratio_to_naive: timing.best_gbps() / naive.best_gbps(),
        timing,
        path_bytes,
        crc_ok,
        cold,
        verdict,
    })
}

/// The report as a text table.
pub(crate) fn render(report: &ReadBenchReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "device: {}", report.device);
    for f in &report.files {
        let _ = writeln!(
            out,
            "\nfile: {} ({} bytes, crc32 {:08x})",
            f.file, f.bytes, f.crc32
        );
        let _ = writeln!(
            out,
            "{:<28} {:>7} {:>9} {:>9} {:>8} {:>8}  bytes by path / check",
            "case", "threads", "best GB/s", "med GB/s", "x pinned", "x naive",
        );
        let base = |name: &str, t: &Timing| {
            format!(
                "{:<28} {:>7} {:>9.2} {:>9.2} {:>8.2} {:>8.2}",
                name,
                "-",
                t.best_gbps(),
                t.median_gbps(),
                t.best_gbps() / f.pinned_ceiling.best_gbps(),
                t.best_gbps() / f.naive.best_gbps()
            )
        };
        let _ = writeln!(
            out,
            "{}  ceiling: 1 pinned buffer, 1 copy",
            base("pinned H2D", &f.pinned_ceiling)
        );
        let _ = writeln!(
            out,
            "{}  baseline: 1 pread, 1 pageable copy",
            base("naive", &f.naive)
        );
        for c in &f.cases {
            let paths: Vec<String> = c
                .path_bytes
                .iter()
                .map(|(p, b)| format!("{p}={b}"))
                .collect();
            let _ = writeln!(
                out,
                "{:<28} {:>7} {:>9.2} {:>9.2} {:>8.2} {:>8.2}  {} crc {} | {}",
                format!("gdscan {}{}", c.route, if c.cold { " cold" } else { "" }),
                c.threads,
                c.timing.best_gbps(),
                c.timing.median_gbps(),
                c.ratio_to_pinned,
                c.ratio_to_naive,
                paths.join(" "),
                if c.crc_ok { "ok" } else { "MISMATCH" },
                c.verdict
            );
        }
        for f in &f.failed {
            let _ = writeln!(
                out,
                "gdscan {} threads {}: not run: {}",
                f.route, f.threads, f.error
            );
        }
    }
    out
}
