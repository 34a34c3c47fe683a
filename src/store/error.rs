//! The store layer's error: locations that lead nowhere, and object_store's
//! failures mapped to what a caller can act on.

/// A store failure, naming the location or object.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A location is neither a path nor a URL of a supported store.
    #[error("cannot open {location}: {reason}")]
    Location {
        /// The location as given.
        location: String,
        /// Why.
        reason: String,
    },

    /// The store for a URL cannot be configured from it and the environment.
    #[error("cannot open {location}: {source}")]
    Configure {
        /// The location as given.
        location: String,
        /// object_store's error.
        #[source]
        source: object_store::Error,
    },

    /// The object does not exist in its store (HTTP 404).
    #[error("{object}: no such object ({source})")]
    NotFound {
        /// The object (its URL, or the store and path).
        object: String,
        /// object_store's error.
        #[source]
        source: object_store::Error,
    },

    /// The store refused the credentials or the access (HTTP 401 or 403).
    #[error("{object}: access denied by the store ({source})")]
    AccessDenied {
        /// The object.
        object: String,
        /// object_store's error.
        #[source]
        source: object_store::Error,
    },

    /// The object changed while it was being read (its e-tag no longer
    /// matches the one seen when it was opened).
    #[error("{object}: the object changed while it was read ({source})")]
    Changed {
        /// The object.
        object: String,
        /// object_store's error.
        #[source]
        source: object_store::Error,
    },

    /// A store request failed: transport error, timeout, retries exhausted,
    /// an unexpected status or range.
    #[error("{object}: {op} failed: {source}")]
    Request {
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
    Truncated {
        /// The object.
        object: String,
        /// First byte of the requested range.
        offset: u64,
        /// Bytes requested.
        expected: usize,
        /// Bytes the body carried.
        got: usize,
    },

    /// A task of the store runtime panicked or was cancelled.
    #[error("join store task on <store runtime> failed: {0}")]
    Task(#[source] tokio::task::JoinError),

    /// A task of the store runtime ended without handing back its result.
    #[error("run store task on <store runtime> failed: the task ended without a result")]
    TaskLost,

    /// A local file: the engine could not open or read it.
    #[error(transparent)]
    Io(#[from] crate::engine::IoError),

    /// A CUDA call the store made failed (staging into device memory).
    #[error(transparent)]
    Cuda(#[from] crate::cuda::CudaError),

    /// A setting the store read is invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
}

/// Result of the store layer.
pub(crate) type Result<T, E = StoreError> = std::result::Result<T, E>;

impl StoreError {
    /// The CUDA failure behind this error, if a CUDA call failed (device
    /// memory for the bytes read).
    pub fn cuda(&self) -> Option<&crate::cuda::CudaError> {
        match self {
            StoreError::Cuda(e) => Some(e),
            StoreError::Io(e) => e.cuda(),
            _ => None,
        }
    }

    /// Maps `e`, raised by `op` on `object`, to the most specific variant.
    pub(crate) fn from_store(object: &str, op: impl Into<String>, e: object_store::Error) -> Self {
        let object = object.to_string();
        match e {
            object_store::Error::NotFound { .. } => StoreError::NotFound { object, source: e },
            object_store::Error::PermissionDenied { .. }
            | object_store::Error::Unauthenticated { .. } => {
                StoreError::AccessDenied { object, source: e }
            }
            object_store::Error::Precondition { .. } => StoreError::Changed { object, source: e },
            _ => StoreError::Request {
                object,
                op: op.into(),
                source: e,
            },
        }
    }
}
