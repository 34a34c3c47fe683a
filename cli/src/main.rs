//! The `gdscan` command line: argument parsing and printing only; the work
//! lives in `gdscan_cli::commands`.

#![warn(clippy::undocumented_unsafe_blocks)]

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    // Before any thread or CUDA call (see the function's documentation).
    gdscan::cuda::driver::request_hardware_queues();
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = gdscan_cli::commands::Cli::parse();
    match gdscan_cli::commands::run(cli) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gdscan: error: {}", gdscan_cli::error::chain(&e));
            ExitCode::from(1)
        }
    }
}
