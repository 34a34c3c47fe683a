//! The DataFusion layer's error: tables that cannot be registered, queries
//! that fail, results that cannot be written, and the lower layers' errors
//! met on the way (a file's bytes, its Parquet, a setting).

use ::datafusion::error::DataFusionError;

use crate::config::ConfigError;
use crate::cuda::CudaError;
use crate::engine::IoError;
use crate::parquet::ScanError;
use crate::store::StoreError;

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

    /// A file is not valid Parquet, or a scan does not fit it (boxed: the
    /// Parquet layer's error is large).
    #[error(transparent)]
    Scan(Box<ScanError>),

    /// A location leads nowhere, or a store request failed (boxed: the
    /// store's error is large).
    #[error(transparent)]
    Store(Box<StoreError>),

    /// The engine could not open, list or read a local file.
    #[error(transparent)]
    Io(#[from] IoError),

    /// A CUDA call failed.
    #[error(transparent)]
    Cuda(#[from] CudaError),

    /// A setting is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),

    /// The GPU decode of a partition's files failed after it had sent
    /// batches (before, the files fall back to the host instead).
    #[error("{files}: GPU decode failed after rows were sent: {source}")]
    GpuDecode {
        /// The partition's files.
        files: String,
        /// The decoder's error.
        #[source]
        source: Box<crate::decode::scan::DecodeError>,
    },

    /// A device batch could not be copied back to the host after the
    /// partition had sent batches.
    #[error("{files}: copying a GPU batch back failed after rows were sent: {source}")]
    GpuCopyBack {
        /// The partition's files.
        files: String,
        /// The copy's error.
        #[source]
        source: crate::decode::array::DeviceArrayError,
    },

    /// A copied-back batch could not be put in the scan's shape after the
    /// partition had sent batches.
    #[error("{files}: shaping a GPU batch failed after rows were sent: {source}")]
    GpuShape {
        /// The partition's files.
        files: String,
        /// DataFusion's or arrow's error.
        #[source]
        source: Box<DataFusionError>,
    },

    /// A scan whose filters were pushed down exactly carries no predicate
    /// to apply on the host (a plan put together by hand, or one that lost
    /// its predicate on the way): refused rather than answered with rows
    /// the filters would drop.
    #[error(
        "{files}: the scan's filters were pushed down exactly but it has no predicate to apply"
    )]
    ExactWithoutPredicate {
        /// The partition's files.
        files: String,
    },

    /// The thread of a partition's GPU decode could not start, or
    /// panicked.
    #[error("{files}: the GPU scan thread failed: {source}")]
    GpuThread {
        /// The partition's files.
        files: String,
        /// Why.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

/// Result of the DataFusion layer.
pub(crate) type Result<T, E = SqlError> = std::result::Result<T, E>;

impl From<ScanError> for SqlError {
    fn from(e: ScanError) -> Self {
        SqlError::Scan(Box::new(e))
    }
}

impl From<StoreError> for SqlError {
    fn from(e: StoreError) -> Self {
        SqlError::Store(Box::new(e))
    }
}

impl From<DataFusionError> for SqlError {
    /// Unwraps an error of this layer or of a lower one that travelled
    /// through DataFusion as `External`; anything else is
    /// [`SqlError::Query`].
    fn from(e: DataFusionError) -> Self {
        let inner = match e {
            DataFusionError::External(inner) => inner,
            other => return SqlError::Query(Box::new(other)),
        };
        let inner = match inner.downcast::<SqlError>() {
            Ok(ours) => return *ours,
            Err(other) => other,
        };
        let inner = match inner.downcast::<ScanError>() {
            Ok(e) => return SqlError::Scan(e),
            Err(other) => other,
        };
        let inner = match inner.downcast::<StoreError>() {
            Ok(e) => return SqlError::Store(e),
            Err(other) => other,
        };
        let inner = match inner.downcast::<IoError>() {
            Ok(e) => return SqlError::Io(*e),
            Err(other) => other,
        };
        let inner = match inner.downcast::<CudaError>() {
            Ok(e) => return SqlError::Cuda(*e),
            Err(other) => other,
        };
        match inner.downcast::<ConfigError>() {
            Ok(e) => SqlError::Config(*e),
            Err(other) => SqlError::Query(Box::new(DataFusionError::External(other))),
        }
    }
}

impl From<SqlError> for DataFusionError {
    /// The error as DataFusion's `External`; [`SqlError::from`] (and the
    /// crate's error) unwrap it again.
    fn from(e: SqlError) -> Self {
        DataFusionError::External(Box::new(e))
    }
}
