//! Benchmarks behind `gdscan bench`: measured against baselines in the same
//! run, reported as rates and ratios (never a lone absolute figure).

pub mod cases;
pub mod data;
pub mod error;
pub mod read;
pub mod scan;
pub mod stats;
pub mod store;
pub mod tpch;
#[cfg(feature = "datafusion")]
pub mod tpch_sql;

pub use error::BenchError;
