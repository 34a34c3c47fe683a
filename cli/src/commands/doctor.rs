//! `gdscan doctor`.

use std::path::PathBuf;

use clap::Args;

use super::args::EngineArgs;
use crate::doctor::{diagnose, render};
use crate::error::Result;

/// Arguments of `gdscan doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// A file to decide stage 1 for.
    pub path: Option<PathBuf>,
    /// The GPU reads would go to.
    #[arg(long, default_value = "0")]
    pub device: usize,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Engine settings.
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Runs `gdscan doctor`: always succeeds, saying what is missing.
pub(super) fn run(args: &DoctorArgs) -> Result<String> {
    let report = diagnose(args.engine.settings(), args.path.as_deref(), args.device);
    if args.json {
        Ok(serde_json::to_string_pretty(&report).expect("report serialises") + "\n")
    } else {
        Ok(render(&report))
    }
}
