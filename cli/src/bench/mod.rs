//! Benchmarks behind `gdscan bench`: measured against baselines in the same
//! run, reported as rates and ratios (never a lone absolute figure).

pub(crate) mod cases;
pub(crate) mod chart;
pub mod data;
pub(crate) mod decode;
mod error;
#[cfg(feature = "datafusion")]
pub(crate) mod paired;
#[cfg(feature = "datafusion")]
pub(crate) mod process_memory;
pub(crate) mod read;
pub(crate) mod scan;
pub(crate) mod stats;
pub(crate) mod store;
pub(crate) mod tpch;
#[cfg(feature = "ballista")]
pub(crate) mod tpch_ballista;
#[cfg(feature = "datafusion")]
pub(crate) mod tpch_load;
#[cfg(feature = "datafusion")]
pub(crate) mod tpch_load_report;
#[cfg(feature = "datafusion")]
pub(crate) mod tpch_sides;
#[cfg(feature = "datafusion")]
pub(crate) mod tpch_sql;

pub use error::{BenchError, LocalClusterError};
