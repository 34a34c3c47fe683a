//! The `gdscan` command line: argument parsing and printing only; the work
//! lives in the library (`gdscan::cli` holds the commands).

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let cli = gdscan::cli::Cli::parse();
    let outcome = gdscan::cli::run(cli);
    // Every handle and buffer is dropped by now: close cuFile explicitly.
    gdscan::cufile::driver::shutdown();
    match outcome {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("gdscan: error: {e}");
            ExitCode::from(1)
        }
    }
}
