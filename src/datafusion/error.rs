//! The DataFusion layer's error: tables that cannot be registered, queries
//! that fail, results that cannot be written.

use ::datafusion::error::DataFusionError;

/// A failure of a gdscan table or of a query over it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SqlError {
    /// DataFusion failed to plan or run a query (its error keeps gdscan's
    /// cause, when there is one, as its source).
    #[error("query failed: {0}")]
    Query(#[source] Box<DataFusionError>),

    /// A table's location holds no file (or object) with the extension.
    #[error("{location}: no {kind} ending with {extension:?}")]
    NoFiles {
        /// The location as given.
        location: String,
        /// "files" (a local folder) or "objects" (a remote prefix).
        kind: &'static str,
        /// The extension looked for.
        extension: String,
    },

    /// The files of a table have schemas that do not merge.
    #[error("<schema>: the files' schemas do not merge: {0}")]
    Schema(#[source] arrow::error::ArrowError),

    /// A file's (or the table's) statistics cannot be computed.
    #[error("{path}: statistics: {source}")]
    Statistics {
        /// The file or table.
        path: String,
        /// DataFusion's error.
        #[source]
        source: Box<DataFusionError>,
    },

    /// A query's result cannot be written in the format asked for.
    #[error("<output>: cannot write the result as {format}: {source}")]
    Output {
        /// The format, e.g. "CSV".
        format: &'static str,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// The task reading the next row group ahead panicked or was cancelled.
    #[error("<read-ahead>: the read-ahead task failed: {0}")]
    ReadAhead(#[source] tokio::task::JoinError),
}
