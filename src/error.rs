//! The crate's error type: every failure is typed and names the file and the cause.

use crate::config::ConfigError;

/// Result alias used across the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in gdscan.
///
/// Messages name the file (where there is one) and the cause, so that a CLI
/// can print them as they are.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// An Arrow computation or IPC write failed.
    #[error("{path}: {source}")]
    Arrow {
        /// The file concerned.
        path: String,
        /// Arrow's error.
        #[source]
        source: arrow::error::ArrowError,
    },

    /// The GPU decoder failed (its error names file, column, row group and
    /// page where the input is at fault).
    #[error(transparent)]
    Decode(Box<crate::decode::scan::DecodeError>),

    /// A setting (environment variable or builder value) is invalid.
    #[error(transparent)]
    Config(#[from] ConfigError),

    /// The file does not exist.
    #[error("cannot open {path}: no such file")]
    NotFound {
        /// The path as given.
        path: String,
    },

    /// The process may not open the file in the requested mode.
    #[error("cannot open {path}: permission denied")]
    PermissionDenied {
        /// The path as given.
        path: String,
    },

    /// The path names a directory, not a regular file.
    #[error("cannot use {path}: it is a directory")]
    IsDirectory {
        /// The path as given.
        path: String,
    },

    /// An operating-system I/O call failed.
    #[error("{op} on {path} failed: {source}")]
    Io {
        /// The path as given.
        path: String,
        /// The operation, e.g. "pread" or "open".
        op: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// The open mode is not one of r, w, r+, w+.
    #[error("invalid open mode {0:?}: expected r, w, r+ or w+")]
    InvalidMode(String),

    /// The file was opened in a mode that does not allow this operation.
    #[error("{path} is open in mode {mode}, which does not allow {op}")]
    ModeNotAllowed {
        /// The path as given.
        path: String,
        /// The open mode.
        mode: &'static str,
        /// "reading" or "writing".
        op: &'static str,
    },

    /// A read starts at or beyond the end of the file.
    #[error("{path}: offset {offset} is at or past the end of the file ({file_size} bytes)")]
    OffsetPastEof {
        /// The path as given.
        path: String,
        /// The requested offset.
        offset: u64,
        /// The file's size when the request started.
        file_size: u64,
    },

    /// A request of zero bytes.
    #[error("{path}: empty request (size 0)")]
    EmptyRequest {
        /// The path as given.
        path: String,
    },

    /// The request's end lies beyond the largest file offset (2^63 - 1).
    #[error(
        "{path}: a request of {size} bytes at offset {offset} ends beyond the largest file offset"
    )]
    RangeOverflow {
        /// The path as given.
        path: String,
        /// The requested offset.
        offset: u64,
        /// The requested size.
        size: usize,
    },

    /// Fewer bytes arrived than the file held when the request started.
    #[error("{path}: short read at offset {offset}: expected {expected} bytes, got {got} (did the file shrink during the read?)")]
    ShortRead {
        /// The path as given.
        path: String,
        /// File offset of the short piece.
        offset: u64,
        /// Bytes expected.
        expected: usize,
        /// Bytes that arrived.
        got: usize,
    },

    /// The destination or source buffer is smaller than the request.
    #[error("{path}: buffer of {buffer} bytes is too small for a request of {requested} bytes")]
    BufferTooSmall {
        /// The file the request was for (or the buffer's kind when there is no file).
        path: String,
        /// The buffer's length.
        buffer: usize,
        /// The requested size.
        requested: usize,
    },

    /// The CUDA driver cannot be used: library missing, no GPU, init failure.
    #[error("CUDA is not available: {0}")]
    CudaUnavailable(String),

    /// The device ordinal does not exist.
    #[error("CUDA device {device} does not exist ({count} device(s) present)")]
    NoSuchDevice {
        /// The requested ordinal.
        device: usize,
        /// How many devices the driver reports.
        count: usize,
    },

    /// A device allocation failed for lack of memory.
    #[error(
        "CUDA device {device} is out of memory: {requested} bytes requested, {free} bytes free"
    )]
    DeviceOutOfMemory {
        /// The device ordinal.
        device: usize,
        /// Bytes requested.
        requested: usize,
        /// Bytes free on the device when the allocation failed.
        free: usize,
    },

    /// Pinned host memory could not be allocated or registered.
    #[error("cannot pin {bytes} bytes of host memory: {name} ({code})")]
    PinnedMemory {
        /// Bytes requested.
        bytes: usize,
        /// CUDA error name.
        name: String,
        /// CUDA error number.
        code: i32,
    },

    /// A CUDA driver call failed.
    #[error("CUDA call {call} failed: {name} ({code})")]
    Cuda {
        /// The driver function.
        call: &'static str,
        /// CUDA error name, e.g. CUDA_ERROR_INVALID_VALUE.
        name: String,
        /// CUDA error number.
        code: i32,
    },

    /// Compat mode OFF demands cuFile, and cuFile cannot serve the request.
    #[error("KVIKIO_COMPAT_MODE=OFF requires cuFile, which is not usable for {path}: {reason}")]
    CuFileRequired {
        /// The path as given.
        path: String,
        /// Why cuFile is not usable.
        reason: String,
    },

    /// cuFile cannot be used (library missing, driver open failed, ...).
    #[error("cuFile is not available: {0}")]
    CuFileUnavailable(String),

    /// A cuFile call failed.
    #[error("cuFile call {op} failed: {name} ({code}){}", if *cuda_code != 0 { format!(", CUDA error {cuda_code}") } else { String::new() })]
    CuFile {
        /// The cuFile function.
        op: &'static str,
        /// cuFile's code name, e.g. CU_FILE_HANDLE_NOT_REGISTERED.
        name: String,
        /// cuFile's code number.
        code: i32,
        /// The CUDA driver's code, when cuFile reports one (else 0).
        cuda_code: i32,
    },

    /// cuFile refused a parameter value gdscan was asked to set.
    #[error("cuFile parameter {key}={value} refused: {reason}")]
    CuFileParam {
        /// The cufile.json key.
        key: String,
        /// The value asked for.
        value: String,
        /// Why (bounds, or cuFile's code).
        reason: String,
    },

    /// The Parquet data is invalid, truncated or unsupported.
    #[error("{path}: {source}")]
    Parquet {
        /// The file.
        path: String,
        /// The parquet crate's error.
        #[source]
        source: ::parquet::errors::ParquetError,
    },

    /// A scan request does not fit the file (unknown column, row group, filter).
    #[error("{path}: {reason}")]
    Scan {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },

    /// A location is neither a path nor a URL of a supported store, or the
    /// store cannot be configured from it (and the environment).
    #[error("cannot open {location}: {reason}")]
    StoreLocation {
        /// The location as given.
        location: String,
        /// Why.
        reason: String,
    },

    /// The object does not exist in its store (HTTP 404).
    #[error("{object}: no such object ({source})")]
    ObjectNotFound {
        /// The object (its URL, or the store and path).
        object: String,
        /// object_store's error.
        #[source]
        source: object_store::Error,
    },

    /// The store refused the credentials or the access (HTTP 401 or 403).
    #[error("{object}: access denied by the store ({source})")]
    StoreAccessDenied {
        /// The object.
        object: String,
        /// object_store's error.
        #[source]
        source: object_store::Error,
    },

    /// The object changed while it was being read (its e-tag no longer
    /// matches the one seen when it was opened).
    #[error("{object}: the object changed while it was read ({source})")]
    ObjectChanged {
        /// The object.
        object: String,
        /// object_store's error.
        #[source]
        source: object_store::Error,
    },

    /// A store request failed: transport error, timeout, retries exhausted,
    /// an unexpected status or range.
    #[error("{object}: {op} failed: {source}")]
    Store {
        /// The object.
        object: String,
        /// The operation, e.g. "get bytes 0..4096".
        op: String,
        /// object_store's error.
        #[source]
        source: object_store::Error,
    },

    /// A response body ended before (or ran past) the requested range: the
    /// bytes are never handed on as complete.
    #[error("{object}: response for bytes {offset}..{end} carried {got} bytes, expected {expected}", end = offset + *expected as u64)]
    TruncatedResponse {
        /// The object.
        object: String,
        /// First byte of the requested range.
        offset: u64,
        /// Bytes requested.
        expected: usize,
        /// Bytes the body carried.
        got: usize,
    },

    /// The engine's worker pool has shut down.
    #[error("the I/O worker pool has stopped")]
    PoolStopped,

    /// DataFusion failed to plan or run a query (its error keeps gdscan's
    /// cause, when there is one, as its source).
    #[cfg(feature = "datafusion")]
    #[error("query failed: {0}")]
    DataFusion(#[source] Box<::datafusion::error::DataFusionError>),
}

#[cfg(feature = "datafusion")]
impl From<::datafusion::error::DataFusionError> for Error {
    /// Unwraps one of gdscan's errors that travelled through DataFusion
    /// (a failed registration or read); anything else stays DataFusion's.
    fn from(e: ::datafusion::error::DataFusionError) -> Self {
        match e {
            ::datafusion::error::DataFusionError::External(inner) => {
                match inner.downcast::<Error>() {
                    Ok(ours) => *ours,
                    Err(other) => Error::DataFusion(Box::new(
                        ::datafusion::error::DataFusionError::External(other),
                    )),
                }
            }
            other => Error::DataFusion(Box::new(other)),
        }
    }
}

impl Error {
    /// Builds an [`Error::Io`] for `op` on `path`.
    pub(crate) fn io(path: &str, op: &'static str, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_string(),
            op,
            source,
        }
    }

    /// Wraps a parquet crate error for `path`, unwrapping one of ours that
    /// travelled through the parquet crate (e.g. a short read).
    pub(crate) fn from_parquet(path: &str, source: ::parquet::errors::ParquetError) -> Self {
        match source {
            ::parquet::errors::ParquetError::External(inner) => match inner.downcast::<Error>() {
                Ok(ours) => *ours,
                Err(other) => Error::Parquet {
                    path: path.to_string(),
                    source: ::parquet::errors::ParquetError::External(other),
                },
            },
            other => Error::Parquet {
                path: path.to_string(),
                source: other,
            },
        }
    }

    /// Wraps a GPU decoder error.
    pub fn decode(e: crate::decode::scan::DecodeError) -> Self {
        match e {
            crate::decode::scan::DecodeError::Io(inner) => *inner,
            other => Error::Decode(Box::new(other)),
        }
    }

    /// Maps an `open(2)` failure to the most specific variant.
    pub(crate) fn from_open(path: &str, source: std::io::Error) -> Self {
        match source.kind() {
            std::io::ErrorKind::NotFound => Error::NotFound {
                path: path.to_string(),
            },
            std::io::ErrorKind::PermissionDenied => Error::PermissionDenied {
                path: path.to_string(),
            },
            _ if source.raw_os_error() == Some(libc::EISDIR) => Error::IsDirectory {
                path: path.to_string(),
            },
            _ => Error::io(path, "open", source),
        }
    }
}
