//! TPC-H data as Parquet, generated with tpchgen-arrow: `gdscan tpch gen`
//! ([`generate`]) writes any of the eight tables, and, only when named,
//! `orders_nested` (each order with its lineitems as a `list<struct>`
//! column, for the nested case of `gdscan bench decode`), and [`ensure_lineitem`]
//! writes lineitem as one file for the demo and the scan benchmark. The 22
//! queries ([`tpch_query`]) and, with DataFusion, the tables registered in
//! a session (`register_tpch`, `register_tpch_listing`) serve `gdscan sql`
//! and `gdscan bench tpch --engine datafusion`.
//!
//! # Layout
//!
//! As DataFusion's benchmarks lay them out: one folder per table,
//! `OUT/<table>/part-<i>.parquet` (`i` from 0; a table in one file is
//! `OUT/<table>/part-0.parquet`).
//!
//! # Defaults, and why
//!
//! - **Snappy**: cheap to decode on a GPU and on a CPU, and what most TPC-H
//!   Parquet in the wild uses; `zstd` gives smaller files for slower storage.
//! - **[`ROW_GROUP_ROWS`] (1 Mi) rows per row group**: a GPU scan moves one
//!   row group per allocation and one request per column chunk, so column
//!   chunks should be megabytes, not kilobytes (lineitem's chunks at 1 Mi
//!   rows are ~1–8 MB each), large enough to keep the I/O engine's tasks
//!   (4 MiB) full and to amortise per-chunk work, yet small enough that a
//!   scan streams with bounded device memory and a file still has several
//!   row groups to prune and to spread over workers. Pages keep the writer's
//!   default (20 000 rows or 1 MiB), with page statistics and the page index
//!   for page pruning.
//! - **Files per table** ([`default_parts`]): nation and region are one file
//!   (tpchgen does not partition them); every other table gets
//!   `ceil(rows / DEFAULT_PART_ROWS)` files, where [`DEFAULT_PART_ROWS`] is
//!   4 × [`ROW_GROUP_ROWS`], so each file holds about four full row groups
//!   (SF 1: lineitem 2 files, the others 1; SF 10: lineitem 15, orders 4,
//!   partsupp 2). `--parts K` sets K files for every partitioned table.
//! - **orders_nested as lineitem**: the same writer settings, the same
//!   files (its file `i` holds the orders of lineitem's file `i`), and row
//!   groups of `row_group_rows / 4` orders, about as many lineitems as a
//!   lineitem row group (the row group limit counts top-level rows).
//!
//! # Work and safety
//!
//! Files are written in parallel, one writer per file (up to as many as
//! rayon has threads); within a file, its rows are generated in slices on
//! rayon's pool, the next slices while the current ones are encoded, so a
//! single large file also uses several cores. Memory stays bounded: two
//! waves of slices per writer. Each file is written as
//! `part-<i>.parquet.partial`, synced, and renamed when complete; on any
//! error the partial file is removed, the other writers stop, the folders of
//! the tables left incomplete are removed, and the first error is returned,
//! naming the file.

mod encoding;
mod generate;
mod nested;
mod options;
mod queries;
#[cfg(feature = "datafusion")]
mod register;
mod report;
mod scan_filters;
mod table;

pub use encoding::GenEncoding;
pub use generate::{ensure_lineitem, generate};
pub use nested::LINEITEMS_COLUMN;
pub use options::{compression_name, default_parts, parse_compression, GenOptions};
pub use queries::{tpch_query, TPCH_QUERY_COUNT};
#[cfg(feature = "datafusion")]
pub use register::{register_tpch, register_tpch_listing};
pub use report::{FileReport, GenReport, TableReport};
pub use scan_filters::{scan_filter, ScanFilter, SCAN_FILTERS};
pub use table::Table;

/// Rows per row group of the generated files: about 1 M rows (roughly
/// 40–60 MB of compressed lineitem), large enough that a GPU scan moves big
/// contiguous chunks, small enough to stream with bounded memory.
pub const ROW_GROUP_ROWS: usize = 1 << 20;

/// Rows per file that the default file count aims at: four row groups of
/// [`ROW_GROUP_ROWS`] (see [`default_parts`]).
pub const DEFAULT_PART_ROWS: u64 = 4 * ROW_GROUP_ROWS as u64;

/// Rows in one slice of a file, the unit generated in parallel (and the
/// batch size handed to the writer).
pub(crate) const SLICE_ROWS: u64 = 64 * 1024;

/// Slices generated together: one wave is encoded while the next is
/// generated, so a writer holds at most two waves.
pub(crate) const WAVE_SLICES: usize = 4;

/// Most files per table that `--parts` may ask for.
pub const MAX_PARTS: usize = 100_000;
