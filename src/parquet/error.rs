//! The Parquet layer's error: a file that cannot be read as Parquet, a scan
//! that does not fit it, or a decode step that failed, each naming the file.

use super::plan::PlanError;
use super::predicate::PredicateError;

/// A Parquet failure for one file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScanError {
    /// The Parquet data is invalid, truncated or unsupported.
    #[error("{path}: {source}")]
    Format {
        /// The file.
        path: String,
        /// The parquet crate's error.
        #[source]
        source: ::parquet::errors::ParquetError,
    },

    /// The scan request does not fit the file (unknown column or row
    /// group, a filter on a column it cannot compare).
    #[error("{path}: {source}")]
    Plan {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: PlanError,
    },

    /// The filter's text does not parse, or it does not fit the file.
    #[error("{path}: {source}")]
    Filter {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: PredicateError,
    },

    /// Decoded batches could not be filtered or projected.
    #[error("{path}: {source}")]
    Arrow {
        /// The file.
        path: String,
        /// arrow-rs's error.
        #[source]
        source: arrow::error::ArrowError,
    },
}
