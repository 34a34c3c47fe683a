//! The cuFile layer's error.

/// A cuFile failure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CuFileError {
    /// cuFile cannot be used (library missing, driver open failed, ...).
    #[error("cuFile is not available: {0}")]
    Unavailable(String),

    /// cuFile cannot be used because CUDA cannot.
    #[error("cuFile is not available: {0}")]
    NoCuda(#[source] crate::cuda::CudaError),

    /// cuFile cannot be used because one of its calls failed while it was
    /// being set up (opening the driver, starting its statistics).
    #[error("cuFile is not available: {0}")]
    Unusable(#[source] Box<CuFileError>),

    /// A CUDA call made for cuFile failed (binding a buffer's device).
    #[error(transparent)]
    Cuda(#[from] crate::cuda::CudaError),

    /// A cuFile call failed.
    #[error("cuFile call {op} failed: {name} ({code}){}", if *cuda_code != 0 { format!(", CUDA error {cuda_code}") } else { String::new() })]
    Call {
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
    ParamRefused {
        /// The cufile.json key.
        key: String,
        /// The value asked for.
        value: String,
        /// Why.
        #[source]
        reason: ParamRefusal,
    },
}

/// Why cuFile refused a parameter value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamRefusal {
    /// Outside cuFile's own bounds (`cuFileGetParameterMinMaxValue`).
    #[error("cuFile accepts {min}..={max}")]
    OutOfBounds {
        /// The smallest value cuFile accepts.
        min: usize,
        /// The largest.
        max: usize,
    },
    /// A text value holding a NUL byte.
    #[error(transparent)]
    Nul(#[from] std::ffi::NulError),
    /// `cuFileSetParameter*` failed.
    #[error(transparent)]
    Call(Box<CuFileError>),
}

/// Why cufile.json cannot be used: its message is the cause's own, and the
/// cause is its source (the `io::Error` or `serde_json::Error` itself, for
/// downcasting). Shared, so that reports stay cloneable.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum ConfigFileError {
    /// The file cannot be read.
    Read(std::sync::Arc<std::io::Error>),
    /// The file is not JSON (after removing `//` comments).
    Parse(std::sync::Arc<serde_json::Error>),
}

impl std::fmt::Display for ConfigFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigFileError::Read(e) => e.fmt(f),
            ConfigFileError::Parse(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ConfigFileError {
    // Not thiserror's `#[source]`: that would give the `Arc`, which
    // neither downcasts to the cause nor shows it in a chain.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConfigFileError::Read(e) => Some(e.as_ref()),
            ConfigFileError::Parse(e) => Some(e.as_ref()),
        }
    }
}

/// Reports show the error as its message.
impl serde::Serialize for ConfigFileError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Result of the cuFile layer.
pub(crate) type Result<T, E = CuFileError> = std::result::Result<T, E>;
