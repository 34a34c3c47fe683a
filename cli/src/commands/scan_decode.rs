//! `gdscan scan --decode`: the scan decoded on the GPU into Arrow columns in
//! device memory, a `--filter` applied there row-exactly; `--output`
//! copies them back and writes Arrow IPC, `--stats` adds the decoder's
//! report.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use arrow::datatypes::SchemaRef;
use arrow::ipc::writer::FileWriter;
use serde::Serialize;

use super::scan::ScanArgs;
use crate::error::{Error, Result};
use gdscan::cuda::Devices;
use gdscan::decode::array::DeviceBatch;
use gdscan::decode::scan::{
    decode, decode_plan, DecodeInput, DecodeOptions, DecodeReport, DeviceShare,
};

/// What `scan --decode` reports.
#[derive(Debug, Serialize)]
pub(crate) struct DecodeScanReport {
    /// The object scanned.
    pub path: String,
    /// The GPU (the first, with --devices).
    pub device: usize,
    /// The GPUs, with --devices.
    pub devices: Vec<usize>,
    /// What each GPU did, with --devices.
    pub shares: Vec<DeviceShare>,
    /// Row groups, rows, pages, bytes and times of the decoder.
    pub decoder: DecodeReport,
    /// Bytes read from the object.
    pub bytes_read: u64,
    /// Seconds from the first read to the last batch decoded.
    pub seconds: f64,
    /// Seconds from the process's start (the kernel's clock, 10 ms ticks)
    /// to the first decoded batch: what a fresh command waits for its first
    /// rows. None without a batch or without `/proc`.
    pub first_batch_since_process_start: Option<f64>,
    /// Where a fresh command's time to its first batch goes: seconds since
    /// the process started at each step (same clock). None without `/proc`.
    pub startup: Option<StartupAges>,
    /// Rows written to --output (after the filter), if asked.
    pub rows_written: Option<u64>,
}

/// Seconds from the process's start to each step of a decode's first
/// batch: what a one-file command waits for, step by step.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub(crate) struct StartupAges {
    /// The command began (the binary and its libraries loaded, arguments
    /// parsed).
    pub command: f64,
    /// The GPU opened: the driver initialised and the device's context
    /// made (nvCOMP and NVRTC opening on threads of their own meanwhile).
    pub gpu: f64,
    /// The footer read and the scan planned (with `--devices`, those GPUs
    /// opened first).
    pub planned: f64,
    /// The decoder ready: the GPU's context made, kernels loaded or
    /// compiled, nvCOMP opened, the fetch started.
    pub decoder_ready: f64,
    /// The first batch decoded (None: no batch).
    pub first_batch: Option<f64>,
}

/// Writes the decoded (and filtered) batches to `out` as Arrow IPC, each
/// copied back to the host; an empty file of `schema` when there is no
/// batch. Returns the rows written.
fn write_output(out: &Path, batches: &[DeviceBatch], schema: &SchemaRef) -> Result<u64> {
    let shown = out.display().to_string();
    let ipc = |e: arrow::error::ArrowError| {
        Error::from(gdscan::parquet::ScanError::Arrow {
            path: shown.clone(),
            source: e,
        })
    };
    let mut writer: Option<FileWriter<std::fs::File>> = None;
    let mut written = 0u64;
    for device_batch in batches {
        let batch = device_batch
            .to_host()
            .map_err(|e| Error::decode(e.into()))?;
        if writer.is_none() {
            let f = std::fs::File::create(out).map_err(|e| Error::io(&shown, "create", e))?;
            writer = Some(FileWriter::try_new(f, &batch.schema()).map_err(&ipc)?);
        }
        written += batch.num_rows() as u64;
        writer
            .as_mut()
            .expect("created")
            .write(&batch)
            .map_err(&ipc)?;
    }
    if let Some(mut w) = writer {
        w.finish().map_err(&ipc)?;
    } else {
        // No row group kept: an empty file with the decoded schema.
        let f = std::fs::File::create(out).map_err(|e| Error::io(&shown, "create", e))?;
        let mut w = FileWriter::try_new(f, schema).map_err(&ipc)?;
        w.finish().map_err(&ipc)?;
    }
    Ok(written)
}

/// The report as text; `stats` adds the decoder's landing, nvCOMP and
/// codec lines.
fn render_decode(report: &DecodeScanReport, stats: bool, output: Option<&Path>) -> String {
    let d = &report.decoder;
    let gpus = if report.devices.is_empty() {
        format!("GPU {}", report.device)
    } else {
        let l: Vec<String> = report.devices.iter().map(|d| d.to_string()).collect();
        format!("GPUs {}", l.join(","))
    };
    let mut out = format!(
        "decoded {} on {gpus}: {} rows, {} row groups, {} pages in {:.4} s ({} bytes read, {} bytes of Arrow columns)\n",
        report.path, d.rows, d.row_groups, d.pages, report.seconds, report.bytes_read, d.output_bytes
    );
    if let (true, Some(age)) = (stats, report.first_batch_since_process_start) {
        out += &format!("first batch {age:.2} s after the process started\n");
    }
    if let (true, Some(a)) = (stats, report.startup) {
        out += &format!(
            "startup: command at {:.2} s, GPU opened at {:.2} s, scan planned at {:.2} s, decoder ready at {:.2} s (kernels, streams and pools {:.3} s; nvCOMP and NVRTC open beside them from the command's start)\n",
            a.command, a.gpu, a.planned, a.decoder_ready, d.resources_seconds
        );
    }
    let f = &d.filter;
    if f.batches_in > 0 {
        out += &format!(
            "filter on the GPU: {} of {} decoded rows selected ({} row groups without a selected row) in {:.4} s\n",
            f.rows_out, f.rows_in, f.batches_empty, f.seconds
        );
        if f.late_pages_skipped > 0 {
            out += &format!(
                "late materialization: {} payload pages ({} bytes) kept by the statistics held no selected row: not fetched\n",
                f.late_pages_skipped, f.late_bytes_skipped
            );
        }
    }
    for s in &report.shares {
        out += &format!(
            "GPU {}: {} row groups, {} bytes planned, {} bytes read, {} rows\n",
            s.device, s.row_groups, s.planned_bytes, s.report.bytes_read, s.report.rows
        );
    }
    if stats {
        out += match d.landing {
            Some(gdscan::decode::scan::Landing::Device) => {
                "row groups landed in device memory (page headers read from the file)\n"
            }
            Some(gdscan::decode::scan::Landing::Pinned) => {
                "row groups landed in pinned host memory (page bodies read on the host)\n"
            }
            None => "",
        };
        out += &format!(
            "decoder: pages decompressed by nvCOMP {} ({} of them in 64 KiB pieces, {} jobs in all); host {:.4} s, waiting for I/O {:.4} s, waiting for the GPU {:.4} s\n",
            d.pages_decompressed_nvcomp, d.pages_split, d.nvcomp_jobs, d.host_seconds, d.io_wait_seconds, d.gpu_wait_seconds
        );
        for c in &d.codecs {
            out += &format!(
                "codec {} on the {}: {} pages, {} bytes compressed, {} bytes decompressed\n",
                c.codec, c.place, c.pages, c.compressed_bytes, c.decompressed_bytes
            );
        }
    }
    if let (Some(rows), Some(path)) = (report.rows_written, output) {
        out += &format!("wrote {rows} rows to {}\n", path.display());
    }
    out
}

/// Runs `gdscan scan --decode`.
pub(crate) fn run_decode(args: &ScanArgs) -> Result<String> {
    // The decoder's settings are read and every GPU asked for is opened
    // before any read (the footer's included).
    let command_age = super::process_age::seconds_since_start();
    // nvCOMP and NVRTC open beside the GPU's context and the footer read
    // (waited for on return, whatever the outcome).
    let _libraries = gdscan::decode::scan::warm_up();
    let mut options = DecodeOptions::from_env()?;
    options.filter = args.filter_mode;
    let devices: Vec<usize> = match &args.devices {
        Some(d) => d.open()?.iter().map(|d| d.ordinal()).collect(),
        None => Vec::new(),
    };
    let device = devices
        .first()
        .copied()
        .unwrap_or(args.destination.device.unwrap_or(0));
    gdscan::cuda::Device::get(device)?;
    let gpu_age = super::process_age::seconds_since_start();
    let (source, metadata, request, scan_plan) = args.spec.prepare()?;
    let location = source.location().to_string();
    // The filter's columns are decoded too: the GPU evaluates it on them.
    let decode_plan = match &request.predicate {
        Some(_) => decode_plan(&metadata, &request, &options).map_err(|e| e.in_file(&location))?,
        None => scan_plan,
    };
    let bytes_read = decode_plan.totals.bytes_read;
    options.devices = match devices.len() {
        0 => Devices::one(device),
        _ => Devices::List(devices.clone()),
    };
    let inputs = vec![DecodeInput {
        source: source.clone(),
        metadata,
        plan: Arc::new(decode_plan),
    }];
    let planned_age = super::process_age::seconds_since_start();
    let start = Instant::now();
    let mut stream = decode(inputs, request.clone(), options).map_err(Error::decode)?;
    let ready_age = super::process_age::seconds_since_start();
    let mut batches = Vec::new();
    let mut first_batch_since_process_start = None;
    for batch in stream.by_ref() {
        let batch = batch.map_err(Error::decode)?;
        if first_batch_since_process_start.is_none() {
            first_batch_since_process_start = super::process_age::seconds_since_start();
        }
        if args.output.is_some() {
            batches.push(batch);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    let rows_written = match &args.output {
        Some(out) => Some(write_output(out, &batches, stream.schema())?),
        None => None,
    };
    // The shares are shown with --devices only.
    let shares = match devices.len() {
        0 => Vec::new(),
        _ => stream.shares(),
    };
    let report = DecodeScanReport {
        path: location,
        device,
        devices,
        shares,
        decoder: stream.report(),
        // Late materialization plans its own phases: the decoder's count.
        bytes_read: match stream.report().bytes_read {
            0 => bytes_read,
            read => read,
        },
        seconds,
        first_batch_since_process_start,
        startup: match (command_age, gpu_age, planned_age, ready_age) {
            (Some(command), Some(gpu), Some(planned), Some(decoder_ready)) => Some(StartupAges {
                command,
                gpu,
                planned,
                decoder_ready,
                first_batch: first_batch_since_process_start,
            }),
            _ => None,
        },
        rows_written,
    };
    if args.json {
        return Ok(serde_json::to_string_pretty(&report).expect("report serialises") + "\n");
    }
    Ok(render_decode(&report, args.stats, args.output.as_deref()))
}
