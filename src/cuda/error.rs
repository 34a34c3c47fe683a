//! The CUDA layer's error: what the driver said, or why it cannot be used.

/// A CUDA failure. Every variant is cheap to clone, so one failure can fail
/// every request that waited on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CudaError {
    /// The CUDA driver cannot be used: library missing, no GPU, init failure.
    #[error("CUDA is not available: {0}")]
    Unavailable(String),

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
    OutOfMemory {
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

    /// A copy out of or into a buffer reaches past its end.
    #[error(
        "{buffer_kind}: buffer of {buffer} bytes is too small for a request of {requested} bytes"
    )]
    OutOfRange {
        /// Which kind of buffer, e.g. `"<device buffer>"`.
        buffer_kind: &'static str,
        /// The buffer's length.
        buffer: usize,
        /// The end of the requested range.
        requested: usize,
    },

    /// A CUDA driver call failed.
    #[error("CUDA call {call} failed: {name} ({code})")]
    Call {
        /// The driver function.
        call: &'static str,
        /// CUDA error name, e.g. CUDA_ERROR_INVALID_VALUE.
        name: String,
        /// CUDA error number.
        code: i32,
    },
}

/// Result of the CUDA layer.
pub(super) type Result<T, E = CudaError> = std::result::Result<T, E>;
