//! `gdscan demo`: the README's first command. Generates a small TPC-H
//! lineitem in a temporary folder and scans TPC-H Q6's columns into GPU
//! memory (host memory when no GPU is present, saying so), with the path
//! report, then decodes the scan (on the GPU when there is one, with nvCOMP
//! and the NVRTC kernels; on the CPU otherwise, saying so) and counts the
//! rows Q6 keeps.

use clap::Args;

use super::args::{Destination, EngineArgs};
use super::scan::{run_scan, ScanArgs, ScanSpec};
use crate::bench::cases::Q6_FILTER;
use crate::error::{Error, Result};

/// Arguments of `gdscan demo`.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// TPC-H scale factor of the generated lineitem.
    #[arg(long, default_value = "0.1")]
    pub sf: f64,
    /// Engine settings.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Runs the demo.
pub(super) fn run(args: &DemoArgs) -> Result<String> {
    let dir = tempfile::tempdir().map_err(|e| Error::io("<temp dir>", "create", e))?;
    let file = dir.path().join("lineitem.parquet");
    crate::tpch::ensure_lineitem(args.sf, &file)?;
    let gpu = gdscan::cuda::driver::is_available();
    let mut out = format!(
        "generated TPC-H lineitem at SF {} in {}\n",
        args.sf,
        file.display()
    );
    if !gpu {
        let why = gdscan::cuda::driver::ensure()
            .err()
            .map(|e| e.to_string())
            .unwrap_or_else(|| "no CUDA device".into());
        out += &format!("no GPU here ({why}): scanning into host memory instead\n");
    }
    let scan = ScanArgs {
        spec: ScanSpec {
            file: file.to_string_lossy().into_owned(),
            columns: ["l_shipdate", "l_discount", "l_quantity", "l_extendedprice"]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            filter: Some(Q6_FILTER.to_string()),
            row_groups: vec![],
            max_gap: None,
            max_request: None,
            max_overread: None,
            engine: args.engine.clone(),
            store: Default::default(),
        },
        destination: Destination {
            host: !gpu,
            device: None,
        },
        devices: None,
        checksum: false,
        stats: true,
        json: false,
        output: (!gpu).then(|| dir.path().join("q6.arrow")),
        decode: false,
        filter_mode: gdscan::decode::scan::FilterMode::Exact,
    };
    out += &format!("TPC-H Q6 scan: {Q6_FILTER}\n");
    out += &run_scan(&scan)?;
    if gpu {
        out += "decoding the Q6 scan on the GPU (nvCOMP + NVRTC kernels), filter applied to the copied-back rows:\n";
        let decode = ScanArgs {
            output: Some(dir.path().join("q6.arrow")),
            decode: true,
            stats: true,
            ..scan
        };
        out += &super::scan_decode::run_decode(&decode)?;
    } else {
        out += "(decoded on the CPU by arrow-rs: no GPU)\n";
    }
    Ok(out)
}
