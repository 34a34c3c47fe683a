//! `gdscan bench read`: one file range into device memory, against the pinned
//! H2D ceiling and a naive baseline measured in the same run.

use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use serde::Serialize;

use super::data::{ensure_file, warm_and_checksum};
use super::stats::process_cpu_seconds;
use super::stats::Timing;
use crate::error::{Error, Result};
use gdscan::checksum::crc32_device;
use gdscan::config::{CompatMode, DeviceReadPath, Settings};
use gdscan::cuda::{Device, DeviceBuffer, Devices, NumaPlacement, PinnedBuffer};
use gdscan::engine::{
    device_counters, drop_from_cache, on_tmpfs, Engine, FileHandle, IoPath, OpenMode,
};
use gdscan::store::LocalSource;

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
    /// CUDA devices: with one, every case runs on it; with several, every
    /// case runs on the first alone and then on all of them at once (the
    /// file cut into one equal part per device, read concurrently).
    pub devices: Devices,
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
    /// The GPUs read into at once.
    pub devices: Vec<usize>,
    /// Timings.
    pub timing: Timing,
    /// CPU seconds (user + system, the whole process: `getrusage`) per GB
    /// moved, over the timed runs only (not the warm-up, the engine's start,
    /// the pinning of bounce buffers or the cold runs' cache drops).
    pub cpu_seconds_per_gb: f64,
    /// Best rate over the pinned ceiling's best rate.
    pub ratio_to_pinned: f64,
    /// Best rate over the naive baseline's best rate.
    pub ratio_to_naive: f64,
    /// Bytes each path carried in the last run (proof of route).
    pub path_bytes: Vec<(IoPath, u64)>,
    /// Bytes each GPU received in the last run (the engine's per-device
    /// counters).
    pub device_bytes: Vec<(usize, u64)>,
    /// Whether the device bytes' CRC-32 equals the file's (every part).
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

/// Results for one file on one set of GPUs.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct FileReport {
    /// The file.
    pub file: String,
    /// The GPUs it was read into at once (one equal part each).
    pub devices: Vec<usize>,
    /// Bytes read per run.
    pub bytes: u64,
    /// CRC-32 of the file.
    pub crc32: u32,
    /// One pinned buffer of the same size, one cuMemcpyHtoD (per GPU, all
    /// at once).
    pub pinned_ceiling: Timing,
    /// One pread into pageable memory, then one cuMemcpyHtoD from it (per
    /// GPU, all at once).
    pub naive: Timing,
    /// The host side alone: as many threads as the widest case pread the
    /// whole file, a task-sized slice at a time, into pinned buffers, with
    /// no copy to a GPU (what the page cache and the host's memory allow
    /// the bounce route).
    pub page_cache_copy: Timing,
    /// Ours.
    pub cases: Vec<Case>,
    /// Cases that could not run, with why.
    pub failed: Vec<FailedCase>,
}

/// One GPU against several, for one case.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Scaling {
    /// The file.
    pub file: String,
    /// The case (route, threads, cold).
    pub case: String,
    /// GPUs of the wider run.
    pub devices: Vec<usize>,
    /// Best GB/s on the first GPU alone.
    pub one_gbps: f64,
    /// Best GB/s on all of them.
    pub all_gbps: f64,
    /// `all_gbps / one_gbps`.
    pub speedup: f64,
    /// The pinned ceiling's speedup in the same run (what the links and the
    /// host's memory allow).
    pub ceiling_speedup: f64,
    /// The page-cache copy limit of the wider run (GB/s, no GPU).
    pub page_cache_copy_gbps: f64,
    /// `all_gbps / page_cache_copy_gbps`.
    pub of_page_cache_copy: f64,
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct ReadBenchReport {
    /// GPU names, in device order.
    pub device: String,
    /// Where each GPU sits (PCI bus id, NUMA node, the host's node count).
    pub numa: Vec<(usize, Option<NumaPlacement>)>,
    /// Per file and set of GPUs.
    pub files: Vec<FileReport>,
    /// One GPU against all, per case (with several GPUs).
    pub scaling: Vec<Scaling>,
}

/// Runs the benchmark.
pub(crate) fn run(opts: &ReadBenchOptions) -> Result<ReadBenchReport> {
    // Every device is opened before any file is written or read.
    let devices = opts.devices.open()?;
    let sets: Vec<Vec<Device>> = if devices.len() > 1 {
        vec![vec![devices[0]], devices.clone()]
    } else {
        vec![devices.clone()]
    };
    let mut files = Vec::new();
    for file in &opts.files {
        for set in &sets {
            files.push(run_file(opts, set, file)?);
        }
    }
    let names: Vec<String> = devices
        .iter()
        .map(|d| Ok(format!("{}: {}", d.ordinal(), d.name()?)))
        .collect::<Result<_>>()?;
    let scaling = scaling(&files);
    Ok(ReadBenchReport {
        device: names.join(", "),
        numa: devices
            .iter()
            .map(|d| (d.ordinal(), d.numa().ok()))
            .collect(),
        files,
        scaling,
    })
}

fn case_name(c: &Case) -> String {
    format!(
        "{} {} threads{}",
        c.route,
        c.threads,
        if c.cold { " cold" } else { "" }
    )
}

/// Pairs each case on one GPU with the same case on all of them.
fn scaling(files: &[FileReport]) -> Vec<Scaling> {
    let mut out = Vec::new();
    for one in files.iter().filter(|f| f.devices.len() == 1) {
        for all in files
            .iter()
            .filter(|f| f.file == one.file && f.devices.len() > 1)
        {
            for c1 in &one.cases {
                let Some(cn) = all.cases.iter().find(|c| case_name(c) == case_name(c1)) else {
                    continue;
                };
                out.push(Scaling {
                    file: one.file.clone(),
                    case: case_name(c1),
                    devices: all.devices.clone(),
                    one_gbps: c1.timing.best_gbps(),
                    all_gbps: cn.timing.best_gbps(),
                    speedup: cn.timing.best_gbps() / c1.timing.best_gbps(),
                    ceiling_speedup: all.pinned_ceiling.best_gbps()
                        / one.pinned_ceiling.best_gbps(),
                    page_cache_copy_gbps: all.page_cache_copy.best_gbps(),
                    of_page_cache_copy: cn.timing.best_gbps() / all.page_cache_copy.best_gbps(),
                });
            }
        }
    }
    out
}

/// The file cut into `n` parts, one per GPU: equal, on 2 MiB boundaries
/// (the last takes the rest), as (offset, length).
pub(crate) fn parts(size: u64, n: usize) -> Vec<(u64, usize)> {
    const ALIGN: u64 = 2 << 20;
    let n = n.max(1) as u64;
    let step = (size / n).div_ceil(ALIGN) * ALIGN;
    (0..n)
        .map(|i| {
            let start = (i * step).min(size);
            let end = if i + 1 == n {
                size
            } else {
                ((i + 1) * step).min(size)
            };
            (start, (end - start) as usize)
        })
        .collect()
}

/// Times of the timed runs and the CPU seconds they used.
struct Timed {
    seconds: Vec<f64>,
    cpu_seconds: f64,
}

fn time_runs(repeats: usize, f: impl FnMut() -> Result<()>) -> Result<Vec<f64>> {
    Ok(time_runs_with(repeats, || Ok(()), f)?.seconds)
}

/// Times `f` `repeats` times after one untimed warm-up, running `before`
/// (untimed, outside the CPU count too) ahead of each run.
fn time_runs_with(
    repeats: usize,
    mut before: impl FnMut() -> Result<()>,
    mut f: impl FnMut() -> Result<()>,
) -> Result<Timed> {
    before()?;
    f()?; // warm-up: first-use allocations, lanes, page faults
    let mut seconds = Vec::with_capacity(repeats);
    let mut cpu_seconds = 0.0;
    for _ in 0..repeats.max(1) {
        before()?;
        let cpu = process_cpu_seconds();
        let start = Instant::now();
        f()?;
        seconds.push(start.elapsed().as_secs_f64());
        cpu_seconds += process_cpu_seconds() - cpu;
    }
    Ok(Timed {
        seconds,
        cpu_seconds,
    })
}

/// Runs `f(i)` for every part at once, one thread each; the first error wins.
fn each_part<T: Send>(
    items: &mut [T],
    f: impl Fn(usize, &mut T) -> Result<()> + Sync,
) -> Result<()> {
    if items.len() == 1 {
        return f(0, &mut items[0]);
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .iter_mut()
            .enumerate()
            .map(|(i, item)| {
                let f = &f;
                s.spawn(move || f(i, item))
            })
            .collect();
        let mut first = Ok(());
        for h in handles {
            let r = h.join().unwrap_or_else(|_| {
                Err(Error::io(
                    "<bench read>",
                    "thread",
                    std::io::Error::other("a reader thread panicked"),
                ))
            });
            if first.is_ok() {
                first = r;
            }
        }
        first
    })
}

/// CRC-32 of `len` bytes of `path` at `offset` (read from the page cache).
fn crc_of_part(path: &std::path::Path, offset: u64, len: usize) -> Result<u32> {
    let shown = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| Error::from_open(&shown, e))?;
    let mut buf = vec![0u8; (16 << 20).min(len.max(1))];
    let mut hasher = crc32fast::Hasher::new();
    let mut done = 0;
    while done < len {
        let n = buf.len().min(len - done);
        f.read_exact_at(&mut buf[..n], offset + done as u64)
            .map_err(|e| Error::io(&shown, "pread", e))?;
        hasher.update(&buf[..n]);
        done += n;
    }
    Ok(hasher.finalize())
}

fn run_file(opts: &ReadBenchOptions, devices: &[Device], path: &PathBuf) -> Result<FileReport> {
    let shown = path.display().to_string();
    if ensure_file(path, opts.size)? {
        tracing::info!(file = %shown, bytes = opts.size, "wrote benchmark file");
    }
    let crc = warm_and_checksum(path)?;
    let parts = parts(opts.size, devices.len());
    let part_crcs: Vec<u32> = if parts.len() == 1 {
        vec![crc]
    } else {
        parts
            .iter()
            .map(|&(off, len)| crc_of_part(path, off, len))
            .collect::<Result<_>>()?
    };
    let mut bufs: Vec<DeviceBuffer> = devices
        .iter()
        .zip(&parts)
        .map(|(&d, &(_, len))| DeviceBuffer::new(d, len.max(1)))
        .collect::<std::result::Result<_, _>>()?;

    let pinned_ceiling = {
        let f = std::fs::File::open(path).map_err(|e| Error::from_open(&shown, e))?;
        let mut pinned: Vec<(PinnedBuffer, &mut DeviceBuffer)> = Vec::new();
        for ((&d, &(off, len)), dev) in devices.iter().zip(&parts).zip(bufs.iter_mut()) {
            let mut p = PinnedBuffer::new(d, len.max(1))?;
            f.read_exact_at(&mut p.as_mut_slice()[..len], off)
                .map_err(|e| Error::io(&shown, "pread", e))?;
            pinned.push((p, dev));
        }
        let seconds = time_runs(opts.repeats, || {
            each_part(&mut pinned, |_, (p, dev)| {
                Ok(dev.copy_from_host(0, p.as_slice())?)
            })
        })?;
        Timing {
            bytes: opts.size,
            seconds,
        }
    };

    let naive = {
        let f = std::fs::File::open(path).map_err(|e| Error::from_open(&shown, e))?;
        let mut work: Vec<(Vec<u8>, &mut DeviceBuffer)> = parts
            .iter()
            .zip(bufs.iter_mut())
            .map(|(&(_, len), dev)| (vec![0u8; len], dev))
            .collect();
        let seconds = time_runs(opts.repeats, || {
            each_part(&mut work, |i, (host, dev)| {
                f.read_exact_at(host, parts[i].0)
                    .map_err(|e| Error::io(&shown, "pread", e))?;
                Ok(dev.copy_from_host(0, host)?)
            })
        })?;
        Timing {
            bytes: opts.size,
            seconds,
        }
    };

    let max_threads = opts.threads.iter().copied().max().unwrap_or(1);
    let page_cache_copy = page_cache_copy(opts, path, devices[0], max_threads)?;
    let mut cases = Vec::new();
    let mut failed = Vec::new();
    let can_drop = !on_tmpfs(path);
    let target = Target {
        path,
        parts: &parts,
        part_crcs: &part_crcs,
    };
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
                    &target,
                    &mut bufs,
                    route,
                    threads,
                    cold,
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
        devices: devices.iter().map(|d| d.ordinal()).collect(),
        bytes: opts.size,
        crc32: crc,
        pinned_ceiling,
        naive,
        page_cache_copy,
        cases,
        failed,
    })
}

/// `threads` threads pread all of `path`, one task-sized slice after
/// another (taken in turn), each into its own pinned buffer on `device`'s
/// context: the bounce route's host side without its copies to the GPU.
fn page_cache_copy(
    opts: &ReadBenchOptions,
    path: &PathBuf,
    device: Device,
    threads: usize,
) -> Result<Timing> {
    use std::sync::atomic::{AtomicU64, Ordering};
    let shown = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| Error::from_open(&shown, e))?;
    let slice = opts.base.task_size.clamp(1 << 20, 64 << 20) as u64;
    let mut buffers: Vec<PinnedBuffer> = (0..threads.max(1))
        .map(|_| PinnedBuffer::new(device, slice as usize))
        .collect::<std::result::Result<_, _>>()?;
    let next = AtomicU64::new(0);
    let seconds = time_runs(opts.repeats, || {
        next.store(0, Ordering::Relaxed);
        each_part(&mut buffers, |_, buf| loop {
            let off = next.fetch_add(slice, Ordering::Relaxed);
            if off >= opts.size {
                return Ok(());
            }
            let len = slice.min(opts.size - off) as usize;
            f.read_exact_at(&mut buf.as_mut_slice()[..len], off)
                .map_err(|e| Error::io(&shown, "pread", e))?;
        })
    })?;
    Ok(Timing {
        bytes: opts.size,
        seconds,
    })
}

/// The file and how it is cut between the GPUs.
struct Target<'a> {
    path: &'a std::path::Path,
    parts: &'a [(u64, usize)],
    part_crcs: &'a [u32],
}

#[allow(clippy::too_many_arguments)]
fn run_case(
    opts: &ReadBenchOptions,
    target: &Target<'_>,
    bufs: &mut [DeviceBuffer],
    route: BenchRoute,
    threads: usize,
    cold: bool,
    pinned_ceiling: &Timing,
    naive: &Timing,
) -> Result<Case> {
    let path = target.path;
    let mut settings = opts.base.clone();
    settings.num_threads = threads;
    route.apply(&mut settings);
    let engine = Engine::new(settings)?;
    let handle = Arc::new(FileHandle::open_with(engine, path, OpenMode::Read)?);
    let source = LocalSource::new(handle.clone())?;
    let before = || -> Result<()> {
        if cold {
            drop_from_cache(path)?;
        }
        Ok(())
    };
    // Every part at once, each into its own GPU's buffer, through one engine.
    let read_all = |bufs: &mut [DeviceBuffer]| {
        each_part(bufs, |i, dev| {
            let (off, len) = target.parts[i];
            handle.pread(dev, len, off)?;
            Ok(())
        })
    };
    let timed = time_runs_with(opts.repeats, before, || read_all(bufs))?;
    // Proof of route and of bytes: one more run into cleared buffers, with
    // cuFile's own counters when cuFile is open.
    for dev in bufs.iter_mut() {
        dev.fill(0xA5)?;
    }
    handle.counters().reset();
    let ordinals: Vec<usize> = bufs.iter().map(|b| b.device().ordinal()).collect();
    let per_device = |o: &usize| {
        let c = device_counters(*o);
        IoPath::ALL.iter().map(|&p| c.get(p).bytes).sum::<u64>()
    };
    let device_before: Vec<u64> = ordinals.iter().map(per_device).collect();
    let window = gdscan::report::StatsWindow::open(true, &source)?;
    read_all(bufs)?;
    let verdict = window.close(&source)?.verdict;
    let device_bytes = ordinals
        .iter()
        .zip(&device_before)
        .map(|(o, b)| (*o, per_device(o) - b))
        .collect();
    let path_bytes = handle.counters().nonzero();
    let mut crc_ok = true;
    for (i, dev) in bufs.iter().enumerate() {
        crc_ok &= crc32_device(dev, 0, target.parts[i].1)? == target.part_crcs[i];
    }
    let timing = Timing {
        bytes: opts.size,
        seconds: timed.seconds,
    };
    let moved_gb = opts.size as f64 * timing.seconds.len() as f64 / 1e9;
    Ok(Case {
        route: route.to_string(),
        threads,
        devices: ordinals,
        ratio_to_pinned: timing.best_gbps() / pinned_ceiling.best_gbps(),
        ratio_to_naive: timing.best_gbps() / naive.best_gbps(),
        cpu_seconds_per_gb: timed.cpu_seconds / moved_gb,
        timing,
        path_bytes,
        device_bytes,
        crc_ok,
        cold,
        verdict,
    })
}

/// Each GPU's PCI address and NUMA node, and where its bounce buffers are
/// pinned.
fn render_numa(out: &mut String, report: &ReadBenchReport) {
    use std::fmt::Write;
    for (d, numa) in &report.numa {
        match numa {
            Some(p) => {
                let _ = writeln!(
                    out,
                    "GPU {d}: PCI {} NUMA node {} of {} node(s){}",
                    p.pci_bus_id,
                    p.node.map_or("unknown".to_string(), |n| n.to_string()),
                    p.host_nodes,
                    match p.preferred_node() {
                        Some(n) => format!(": bounce buffers pinned on node {n}"),
                        None => ": one node, no placement needed".to_string(),
                    }
                );
            }
            None => {
                let _ = writeln!(out, "GPU {d}: NUMA placement unknown");
            }
        }
    }
}

/// One file's table: the ceiling, the baseline and the host-side copy,
/// then each case and the cases that could not run.
fn render_file(out: &mut String, f: &FileReport) {
    use std::fmt::Write;
    let devices: Vec<String> = f.devices.iter().map(|d| d.to_string()).collect();
    let _ = writeln!(
        out,
        "\nfile: {} ({} bytes, crc32 {:08x}) into GPU{} {}",
        f.file,
        f.bytes,
        f.crc32,
        if f.devices.len() > 1 { "s" } else { "" },
        devices.join(",")
    );
    let _ = writeln!(
        out,
        "{:<28} {:>7} {:>9} {:>9} {:>8} {:>8} {:>8}  bytes by path [per GPU] / check",
        "case", "threads", "best GB/s", "med GB/s", "x pinned", "x naive", "CPU s/GB",
    );
    let base = |name: &str, t: &Timing| {
        format!(
            "{:<28} {:>7} {:>9.2} {:>9.2} {:>8.2} {:>8.2} {:>8}",
            name,
            "-",
            t.best_gbps(),
            t.median_gbps(),
            t.best_gbps() / f.pinned_ceiling.best_gbps(),
            t.best_gbps() / f.naive.best_gbps(),
            "-"
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
    let _ = writeln!(
        out,
        "{}  host side alone: preads into pinned memory, no GPU",
        base("page cache -> pinned", &f.page_cache_copy)
    );
    for c in &f.cases {
        let paths: Vec<String> = c
            .path_bytes
            .iter()
            .map(|(p, b)| format!("{p}={b}"))
            .collect();
        let per_gpu: Vec<String> = c
            .device_bytes
            .iter()
            .map(|(d, b)| format!("gpu{d}={b}"))
            .collect();
        let _ = writeln!(
            out,
            "{:<28} {:>7} {:>9.2} {:>9.2} {:>8.2} {:>8.2} {:>8.3}  {} [{}] crc {} | {}",
            format!("gdscan {}{}", c.route, if c.cold { " cold" } else { "" }),
            c.threads,
            c.timing.best_gbps(),
            c.timing.median_gbps(),
            c.ratio_to_pinned,
            c.ratio_to_naive,
            c.cpu_seconds_per_gb,
            paths.join(" "),
            per_gpu.join(" "),
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

/// One GPU against all, per file and case (with several GPUs).
fn render_scaling(out: &mut String, report: &ReadBenchReport) {
    use std::fmt::Write;
    if !report.scaling.is_empty() {
        let _ = writeln!(
            out,
            "\none GPU against all (best GB/s; the pinned ceiling's own speedup beside it)"
        );
        for s in &report.scaling {
            let _ = writeln!(
                out,
                "{} {:<24} 1 GPU {:>7.2}  {} GPUs {:>7.2}  x{:.2} (ceiling x{:.2}, {:.2} of it; page-cache copy limit {:.2} GB/s, {:.2} of it)",
                s.file,
                s.case,
                s.one_gbps,
                s.devices.len(),
                s.all_gbps,
                s.speedup,
                s.ceiling_speedup,
                s.speedup / s.ceiling_speedup,
                s.page_cache_copy_gbps,
                s.of_page_cache_copy
            );
        }
    }
}

/// The report as a text table.
pub(crate) fn render(report: &ReadBenchReport) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(out, "device: {}", report.device);
    render_numa(&mut out, report);
    for f in &report.files {
        render_file(&mut out, f);
    }
    render_scaling(&mut out, report);
    out
}

#[cfg(test)]
mod tests {
    use super::parts;

    #[test]
    fn parts_cover_the_file_once_on_2_mib_boundaries() {
        for (size, n) in [
            (4u64 << 30, 2),
            (4 << 30, 3),
            (5 << 20, 2),
            (1 << 20, 4),
            (0, 2),
            (7, 1),
        ] {
            let p = parts(size, n);
            assert_eq!(p.len(), n);
            let mut at = 0;
            for (i, &(off, len)) in p.iter().enumerate() {
                assert_eq!(off, at);
                if i + 1 < n && len > 0 {
                    assert_eq!(off % (2 << 20), 0);
                }
                at += len as u64;
            }
            assert_eq!(at, size);
        }
        let even = parts(4 << 30, 2);
        assert_eq!(even[0].1, even[1].1);
    }
}
