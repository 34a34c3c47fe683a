//! `gdscan demo`: the README's first command. Generates a file in a temporary
//! folder and reads it into GPU memory, or host memory when no GPU is present
//! (saying so).

use clap::Args;

use super::read::{read, render, ReadArgs};
use super::{parse_size_arg, EngineArgs};
use crate::bench::data::ensure_file;
use crate::error::{Error, Result};

/// Arguments of `gdscan demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Size of the generated file.
    #[arg(long, default_value = "256MiB", value_parser = parse_size_arg)]
    pub size: u64,
    /// Engine settings.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// "256MiB"-style name of a size.
pub fn human(bytes: u64) -> String {
    const UNITS: [(&str, u64); 4] = [
        ("TiB", 1 << 40),
        ("GiB", 1 << 30),
        ("MiB", 1 << 20),
        ("KiB", 1 << 10),
    ];
    for (name, unit) in UNITS {
        if bytes >= unit && bytes % unit == 0 {
            return format!("{}{name}", bytes / unit);
        }
    }
    format!("{bytes}B")
}

/// Runs the demo.
pub fn run(args: &DemoArgs) -> Result<String> {
    let dir = tempfile::tempdir().map_err(|e| Error::io("<temp dir>", "create", e))?;
    let path = dir
        .path()
        .join(format!("gdscan-demo-{}.bin", human(args.size)));
    ensure_file(&path, args.size)?;
    let gpu = crate::cuda::driver::is_available();
    let mut out = String::new();
    if !gpu {
        let why = crate::cuda::driver::ensure()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_else(|| "no CUDA device".into());
        out += &format!("no GPU here ({why}): reading into host memory instead\n");
    }
    let read_args = ReadArgs {
        path: path.clone(),
        offset: 0,
        size: None,
        host: !gpu,
        device: None,
        checksum: true,
        json: false,
        stats: true,
        engine: args.engine.clone(),
    };
    let report = read(&read_args)?;
    out += &render(&report);
    let expected = format!("{:08x}", crate::bench::data::warm_and_checksum(&path)?);
    out += &format!(
        "file crc32: {expected} ({})\n",
        if report.crc32.as_deref() == Some(expected.as_str()) {
            "matches the bytes read"
        } else {
            "MISMATCH"
        }
    );
    Ok(out)
}
