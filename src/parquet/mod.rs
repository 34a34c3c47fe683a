//! Parquet: from the footer to the column-chunk bytes a scan needs, in
//! device or host memory.
//!
//! Flow: [`metadata`] (footer and page index through the engine, cached) →
//! [`plan`](mod@plan) (no I/O: projection, row-group and page pruning with
//! [`predicate`], coalescing with [`coalesce`]) → [`fetch`](mod@fetch) (each row group
//! into one allocation with a chunk table, streamed); [`spread`](mod@spread)
//! divides a scan's row groups between GPUs by bytes. A late materialized
//! scan plans explicit rows ([`selection`]) for its payload columns from a
//! first phase's row masks ([`late`], [`payload`]). [`reader`] offers the
//! same I/O to arrow-rs as an `AsyncFileReader`.

pub mod coalesce;
mod delta_guard;
pub mod error;
pub mod fetch;
pub mod ipc_export;
pub mod late;
pub mod metadata;
pub mod payload;
pub mod plan;
mod plan_error;
pub mod predicate;
pub mod reader;
pub mod sanity;
pub mod selection;
pub mod spread;

pub use coalesce::CoalesceOptions;
pub use error::ScanError;
pub use fetch::{fetch, DeviceAllocator, FetchOptions, FetchedRowGroup, HostAllocator, SourceScan};
pub use metadata::{load as load_metadata, load_async as load_metadata_async, MetadataOptions};
pub use plan::{plan, Projection, ScanPlan, ScanRequest};
pub use predicate::Predicate;
pub use reader::GdsParquetReader;
pub use selection::RowSelections;
pub use spread::{spread, Placement, Spread};

#[cfg(test)]
mod late_tests;
#[cfg(test)]
mod plan_rows_tests;
#[cfg(test)]
mod selection_tests;
