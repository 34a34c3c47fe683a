//! DataFusion on gdscan's reader (cargo feature `datafusion`).
//!
//! A [`GdsTable`] is a DataFusion [`TableProvider`](::datafusion::catalog::TableProvider)
//! over one Parquet file or a folder of them. Its scan is DataFusion's own
//! Parquet scan (a `DataSourceExec` of a `ParquetSource`: projection,
//! pruning by statistics, page index and bloom filters, filter pushdown,
//! limit, files and byte ranges spread over the session's target
//! partitions) whose reader factory is gdscan's ([`GdsReaderFactory`]):
//! every byte comes through [`GdsParquetReader`](crate::parquet::GdsParquetReader)
//! and the engine (coalesced reads on the worker pool, the footer and page
//! index from gdscan's metadata cache, counted per path). DataFusion's
//! `ListingTable` would replace any reader factory with its own cached one,
//! hence a provider of our own.
//!
//! Flow: `location` (the one place that turns a location into files and
//! readers) → `table` (schema and statistics from gdscan's metadata at
//! registration; the scan plan, with `pushdown` turning the filters into
//! gdscan's predicate and `file_plan` planning each file: the access plan
//! DataFusion gets and the row groups to read ahead) → `factory` (a
//! reader per file range) → `metered` (the reader with `metrics` for
//! `EXPLAIN ANALYZE` and `read_ahead` of the next planned row group).
//! With `GdsTableOptions::decode` on the GPU, `BorderExec` runs each
//! partition through `gpu` instead (gdscan's GPU decoder, files it
//! refuses on the host path above). `register` has the one-call helper, `session` and `output` what
//! `gdscan sql` needs (TPC-H's tables and queries are in `crate::tpch`,
//! with the CLI).

mod border;
mod error;
mod estimate;
mod factory;
mod file_plan;
mod gpu;
mod location;
mod metered;
mod metrics;
mod options;
mod output;
mod pushdown;
mod read_ahead;
mod register;
mod session;
mod table;

pub use border::BorderExec;
pub use error::SqlError;
pub use factory::{GdsLocation, GdsReaderFactory};
pub use file_plan::{plan_file, FileScanPlan, PlannedRowGroup};
pub use gpu::PushedPredicate;
pub use location::{list_files, open_reader, TableFile};
pub use metered::MeteredReader;
pub use metrics::{scan_totals, DecodeTotals, FileDecoded, ScanTotals};
pub use options::{GdsTableOptions, TableDecode, GPU_SCANS, PINNED_COPY_BACK, TABLE_TASK_SIZE};
pub use output::{format_batches, OutputFormat};
pub use pushdown::predicate_from_filters;
pub use read_ahead::ReadAheadPolicy;
pub use register::register_parquet;
pub use session::{context, run_sql, runtime};
pub use table::GdsTable;

use ::datafusion::error::DataFusionError;

/// gdscan's error as a DataFusion error; the original stays reachable as
/// its source (and [`SqlError::from`] and `crate::Error::from` unwrap it
/// again).
pub fn to_datafusion(e: impl Into<SqlError>) -> DataFusionError {
    DataFusionError::External(Box::new(e.into()))
}
