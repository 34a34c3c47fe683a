//! The engine's error: opening files and reading or writing their ranges.

/// A file or request failure, naming the file and the cause.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum IoError {
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

    /// The path names something whose bytes are not a file's contents at
    /// fixed offsets: a FIFO, a socket, a character device (`/dev/zero`), a
    /// `/proc` or `/sys` pseudo-file. Refused before any read, so that
    /// nothing blocks waiting for a writer. Regular files and block devices
    /// are served.
    #[error("cannot use {path}: it is a {kind}, not a regular file or a block device")]
    NotAFile {
        /// The path as given.
        path: String,
        /// What it is, in words ("FIFO", "socket", "character device",
        /// "procfs/sysfs pseudo-file").
        kind: &'static str,
    },

    /// An operating-system I/O call failed.
    #[error("{op} on {path} failed: {source}")]
    Os {
        /// The path as given.
        path: String,
        /// The operation, e.g. "pread" or "open".
        op: &'static str,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },

    /// A `pread` or `pwrite` of a request's piece failed: the file, the
    /// offset of the failing call and the piece's length.
    #[error("{op} on {path} at offset {offset} (piece of {len} bytes) failed: {source}")]
    Transfer {
        /// The path as given.
        path: String,
        /// "pread" or "pwrite".
        op: &'static str,
        /// File offset of the system call that failed.
        offset: u64,
        /// Length of the piece being transferred.
        len: usize,
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

    /// A copy between a bounce buffer and the device failed, failing every
    /// request whose bytes it carried.
    #[error("device copy on {path} failed: {source}")]
    DeviceCopy {
        /// The path as given.
        path: String,
        /// The CUDA failure.
        #[source]
        source: crate::cuda::CudaError,
    },

    /// Compat mode OFF demands cuFile, and cuFile cannot serve the request.
    #[error("KVIKIO_COMPAT_MODE=OFF requires cuFile, which is not usable for {path}: {reason}")]
    CuFileRequired {
        /// The path as given.
        path: String,
        /// Why cuFile is not usable.
        reason: String,
    },

    /// The engine's worker pool has shut down.
    #[error("the I/O worker pool has stopped")]
    PoolStopped,

    /// A CUDA call the engine made failed (a bounce buffer, a stream).
    #[error(transparent)]
    Cuda(#[from] crate::cuda::CudaError),

    /// A cuFile call the engine made failed, or cuFile refused a parameter.
    #[error(transparent)]
    CuFile(#[from] crate::cufile::CuFileError),

    /// A setting the engine read is invalid.
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
}

/// Result of the engine.
pub(crate) type Result<T, E = IoError> = std::result::Result<T, E>;

impl IoError {
    /// The CUDA failure behind this error, if a CUDA call failed (a device
    /// copy or allocation).
    pub fn cuda(&self) -> Option<&crate::cuda::CudaError> {
        match self {
            IoError::Cuda(e) | IoError::DeviceCopy { source: e, .. } => Some(e),
            _ => None,
        }
    }

    /// Builds an [`IoError::Os`] for `op` on `path`.
    pub(crate) fn os(path: &str, op: &'static str, source: std::io::Error) -> Self {
        IoError::Os {
            path: path.to_string(),
            op,
            source,
        }
    }

    /// Maps an `open(2)` failure to the most specific variant.
    pub(crate) fn from_open(path: &str, source: std::io::Error) -> Self {
        let path = path.to_string();
        match source.kind() {
            std::io::ErrorKind::NotFound => IoError::NotFound { path },
            std::io::ErrorKind::PermissionDenied => IoError::PermissionDenied { path },
            _ if source.raw_os_error() == Some(libc::EISDIR) => IoError::IsDirectory { path },
            _ => IoError::os(&path, "open", source),
        }
    }
}
