//! # gdscan-cli
//!
//! The `gdscan` command line on the [`gdscan`] library: argument parsing
//! and the commands ([`commands`]), the benchmarks ([`bench`](mod@bench)), TPC-H data
//! through tpchgen ([`tpch`]) and the machine check behind `gdscan doctor`.
//! Every failure is an [`Error`]: the library's [`gdscan::Error`], a
//! benchmark that cannot run as asked, or a usage error.
//!
//! Features: `datafusion` (default: `gdscan sql`, `gdscan bench tpch
//! --engine datafusion`) and `ballista` (`gdscan ballista`, `gdscan sql
//! --ballista`, `gdscan bench tpch --engine ballista`).

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]
#![warn(unreachable_pub)]

pub mod bench;
pub mod commands;
mod doctor;
pub mod error;
pub mod tpch;

pub use error::{Error, Result};
