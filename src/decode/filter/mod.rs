//! Exact filters on the GPU: a [`Predicate`](crate::parquet::Predicate)
//! compiled against a batch's schema ([`GpuPredicate`]), evaluated over the
//! decoded columns into a row mask ([`DeviceMask`]: SQL's three-valued
//! logic, a row is kept only where the predicate is TRUE), and batches
//! compacted to the kept rows (every column kind, nested included: a kept
//! row keeps its whole list, struct or map value).
//!
//! | file | what it does |
//! |---|---|
//! | `program` | the predicate as a program of typed column tests and boolean steps the evaluator kernel runs (host, pure) |
//! | `filter_columns` | the columns a program reads: names resolved in the schema, how the kernel reads each |
//! | `column_table` | where a program's columns are in a batch, as the kernel reads it |
//! | `evaluate` | the program run on the GPU over a batch into a [`DeviceMask`] |
//! | `compact` | a batch cut to its mask's rows on the GPU: the device work (scans, counters, read backs) |
//! | `compact_column` | one column of it: values, bitmaps, views, offsets, children |
//! | `compact_phases` | one batch's compaction in phases, several batches through each phase together |
//! | `select` | evaluation and compaction in one pass over decoded batches, the host waiting twice for all of them |
//! | `mask` | [`DeviceMask`] |
//! | `mask_transfer` | masks read back to the host and uploaded from it |
//! | `filter_gpu` | [`FilterGpu`]: the kernels, stream and pool filtering uses on one GPU |
//! | `filter_error` | [`FilterError`] |

#[cfg(feature = "internals")]
pub mod column_table;
#[cfg(not(feature = "internals"))]
#[allow(unreachable_pub, dead_code)]
mod column_table;
mod compact;
mod compact_column;
mod compact_phases;
mod evaluate;
mod filter_columns;
mod filter_error;
mod filter_gpu;
mod mask;
mod mask_transfer;
mod program;
#[cfg(test)]
mod program_tests;
mod select;

pub use filter_error::FilterError;
pub use filter_gpu::FilterGpu;
pub use mask::DeviceMask;
pub use program::GpuPredicate;
