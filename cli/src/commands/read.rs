//! `gdscan read`.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use super::args::{parse_size_arg, Destination, EngineArgs};
use crate::error::Result;
use gdscan::checksum::{crc32_device, crc32_host};
use gdscan::cuda::{Device, DeviceBuffer};
use gdscan::engine::IoError;
use gdscan::engine::{Engine, FileHandle, IoPath, OpenMode};
use gdscan::store::LocalSource;

/// Arguments of `gdscan read`.
#[derive(Debug, Args)]
pub struct ReadArgs {
    /// The file.
    pub path: PathBuf,
    /// Byte offset to start at.
    #[arg(long, default_value = "0", value_parser = parse_size_arg)]
    pub offset: u64,
    /// Bytes to read (default: to the end of the file), e.g. 1GiB.
    #[arg(long, value_parser = parse_size_arg)]
    pub size: Option<u64>,
    /// Host memory or a device.
    #[command(flatten)]
    pub destination: Destination,
    /// Print the CRC-32 (as zlib.crc32) of the bytes where they landed.
    #[arg(long)]
    pub checksum: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print the path report: stage 1, stage 2 and the counters (cuFile's
    /// stats at level 3 unless CUFILE_STATS_LEVEL says otherwise).
    #[arg(long)]
    pub stats: bool,
    /// Engine settings.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// The outcome of one read, as printed.
#[derive(Debug, Serialize)]
pub(super) struct ReadReport {
    /// The file.
    pub path: String,
    /// Offset read from.
    pub offset: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Wall-clock seconds of the read (request to last byte in place).
    pub seconds: f64,
    /// GB/s (1e9 bytes per second).
    pub gbps: f64,
    /// "host" or "device N".
    pub destination: String,
    /// Bytes per path, from the handle's counters.
    pub paths: Vec<(IoPath, u64)>,
    /// Route decision for device reads, with its reason.
    pub route: Option<gdscan::engine::RouteDecision>,
    /// Worker threads.
    pub threads: usize,
    /// CRC-32 of the bytes as they landed, when asked.
    pub crc32: Option<String>,
    /// The path report, when asked with --stats.
    pub report: Option<gdscan::report::PathReport>,
}

/// Runs `gdscan read`.
pub(super) fn run(args: &ReadArgs) -> Result<String> {
    let report = read(args)?;
    if args.json {
        return Ok(serde_json::to_string_pretty(&report).expect("report serialises") + "\n");
    }
    Ok(render(&report))
}

/// Performs the read and returns the report.
pub(super) fn read(args: &ReadArgs) -> Result<ReadReport> {
    let engine = Engine::new(args.engine.settings()?)?;
    let threads = engine.threads();
    let handle = FileHandle::open_with(engine, &args.path, OpenMode::Read)?;
    let file_size = handle.file_size()?;
    if args.offset >= file_size {
        return Err(IoError::OffsetPastEof {
            path: handle.path().to_string(),
            offset: args.offset,
            file_size,
        }
        .into());
    }
    let size = args.size.unwrap_or(file_size - args.offset);
    if size == 0 {
        return Err(IoError::EmptyRequest {
            path: handle.path().to_string(),
        }
        .into());
    }
    let len = size.min(file_size - args.offset) as usize;
    let handle = Arc::new(handle);
    let source = LocalSource::new(handle.clone())?;
    let window = gdscan::report::StatsWindow::open(args.stats, &source)?;
    let (bytes, seconds, destination, route, crc) = if args.destination.host {
        let mut buf = vec![0u8; len];
        let start = Instant::now();
        let n = handle.pread(&mut buf, len, args.offset)?;
        let seconds = start.elapsed().as_secs_f64();
        let crc = args.checksum.then(|| crc32_host(&buf[..n]));
        (n, seconds, "host".to_string(), None, crc)
    } else {
        let ordinal = args.destination.device.unwrap_or(0);
        let device = Device::get(ordinal)?;
        let mut buf = DeviceBuffer::new(device, len)?;
        // Pinning is a once-per-process cost: pay it before the clock starts.
        if handle.device_route(len, args.offset)?.route == gdscan::engine::DeviceRoute::Bounce {
            handle.engine().preallocate_bounce_buffers(device)?;
        }
        let start = Instant::now();
        let n = handle.pread(&mut buf, len, args.offset)?;
        let seconds = start.elapsed().as_secs_f64();
        let crc = if args.checksum {
            Some(crc32_device(&buf, 0, n)?)
        } else {
            None
        };
        (
            n,
            seconds,
            format!("device {ordinal}"),
            handle.last_route(),
            crc,
        )
    };
    let report = if args.stats {
        Some(window.close(&source)?)
    } else {
        None
    };
    let paths = handle.counters().nonzero();
    Ok(ReadReport {
        path: handle.path().to_string(),
        offset: args.offset,
        bytes: bytes as u64,
        seconds,
        gbps: gdscan::report::gbps(bytes as u64, seconds),
        destination,
        paths,
        route,
        threads,
        crc32: crc.map(|c| format!("{c:08x}")),
        report,
    })
}

/// The report as text.
pub(super) fn render(r: &ReadReport) -> String {
    let paths: Vec<String> = r.paths.iter().map(|(p, b)| format!("{p}={b}")).collect();
    let mut out = format!(
        "read {} bytes of {} at offset {} into {} in {:.4} s: {:.2} GB/s ({} threads)\npath: {}\n",
        r.bytes,
        r.path,
        r.offset,
        r.destination,
        r.seconds,
        r.gbps,
        r.threads,
        paths.join(" ")
    );
    if let Some(route) = &r.route {
        out += &format!("route: {:?} ({})\n", route.route, route.reason);
    }
    if let Some(crc) = &r.crc32 {
        out += &format!("crc32: {crc}\n");
    }
    if let Some(report) = &r.report {
        out += &gdscan::report::render(report);
    }
    out
}
