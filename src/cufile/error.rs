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

/// Result of the cuFile layer.
pub(crate) type Result<T, E = CuFileError> = std::result::Result<T, E>;
