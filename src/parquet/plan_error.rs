//! Why a scan request does not fit a file (the planner's error, without the
//! file's name: [`ScanError::Plan`](super::ScanError::Plan) adds it).

use super::predicate::PredicateError;

/// A planning failure: the request does not fit the file.
#[derive(Debug, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum PlanError {
    /// A projected column is not in the file.
    #[error("column {0:?} is not in the file")]
    UnknownColumn(String),
    /// A row group index is out of range.
    #[error("row group {index} does not exist (the file has {count})")]
    UnknownRowGroup {
        /// The index asked for.
        index: usize,
        /// How many there are.
        count: usize,
    },
    /// The filter does not fit the schema.
    #[error(transparent)]
    Predicate(#[from] PredicateError),
    /// An explicit row range reaches outside its row group.
    #[error("rows {}..{} of row group {row_group} are outside its {num_rows} rows", rows.start, rows.end)]
    RowsOutOfRange {
        /// Row group.
        row_group: usize,
        /// The range asked for.
        rows: std::ops::Range<i64>,
        /// Rows in the row group.
        num_rows: i64,
    },
    /// A phase-1 mask names a row group its plan does not hold.
    #[error("row group {row_group} is not in the phase-1 plan")]
    NotInPlan {
        /// Row group.
        row_group: usize,
    },
    /// The metadata holds an impossible range.
    #[error("column chunk {column} of row group {row_group} has an invalid byte range")]
    BadRange {
        /// Row group.
        row_group: usize,
        /// Column path.
        column: String,
    },
}
