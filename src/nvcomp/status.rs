//! nvCOMP status codes (`nvcompStatus_t`) and the module's error type.

use super::names::{RawStatus, LIBRARY_ENV, PIP_REQUIREMENT, WHEEL_LIBRARY_PATH};
use super::Codec;

macro_rules! statuses {
    ($( $(#[$doc:meta])* $variant:ident = $code:literal => $name:literal, )*) => {
        /// An `nvcompStatus_t` (nvCOMP 6, `nvcomp/shared_types.h`). Codes this
        /// crate does not know are kept as [`NvcompStatus::Unknown`] with their number.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        #[non_exhaustive]
        pub enum NvcompStatus {
            $( $(#[$doc])* $variant, )*
            /// A code not in nvCOMP 6's headers.
            Unknown(i32),
        }

        impl NvcompStatus {
            /// The status for a raw code.
            pub fn from_code(code: RawStatus) -> NvcompStatus {
                match code {
                    $( $code => NvcompStatus::$variant, )*
                    other => NvcompStatus::Unknown(other),
                }
            }

            /// The raw code.
            pub fn code(self) -> i32 {
                match self {
                    $( NvcompStatus::$variant => $code, )*
                    NvcompStatus::Unknown(c) => c,
                }
            }

            /// The header's name, e.g. `nvcompErrorCannotDecompress`; `None` for unknown codes.
            pub fn name(self) -> Option<&'static str> {
                match self {
                    $( NvcompStatus::$variant => Some($name), )*
                    NvcompStatus::Unknown(_) => None,
                }
            }
        }
    };
}

statuses! {
    /// `nvcompSuccess`.
    Success = 0 => "nvcompSuccess",
    /// `nvcompErrorInvalidValue`.
    InvalidValue = 10 => "nvcompErrorInvalidValue",
    /// `nvcompErrorNotSupported`.
    NotSupported = 11 => "nvcompErrorNotSupported",
    /// `nvcompErrorCannotDecompress`: corrupt input or an output buffer too small.
    CannotDecompress = 12 => "nvcompErrorCannotDecompress",
    /// `nvcompErrorBadChecksum`.
    BadChecksum = 13 => "nvcompErrorBadChecksum",
    /// `nvcompErrorCannotVerifyChecksums`.
    CannotVerifyChecksums = 14 => "nvcompErrorCannotVerifyChecksums",
    /// `nvcompErrorOutputBufferTooSmall`.
    OutputBufferTooSmall = 15 => "nvcompErrorOutputBufferTooSmall",
    /// `nvcompErrorWrongHeaderLength`.
    WrongHeaderLength = 16 => "nvcompErrorWrongHeaderLength",
    /// `nvcompErrorAlignment`.
    Alignment = 17 => "nvcompErrorAlignment",
    /// `nvcompErrorChunkSizeTooLarge`.
    ChunkSizeTooLarge = 18 => "nvcompErrorChunkSizeTooLarge",
    /// `nvcompErrorCannotCompress`.
    CannotCompress = 19 => "nvcompErrorCannotCompress",
    /// `nvcompErrorWrongInputLength`.
    WrongInputLength = 20 => "nvcompErrorWrongInputLength",
    /// `nvcompErrorBatchSizeTooLarge`.
    BatchSizeTooLarge = 21 => "nvcompErrorBatchSizeTooLarge",
    /// `nvcompErrorSubChunkCountTooLarge`.
    SubChunkCountTooLarge = 22 => "nvcompErrorSubChunkCountTooLarge",
    /// `nvcompErrorSubChunkCountTooSmall`.
    SubChunkCountTooSmall = 23 => "nvcompErrorSubChunkCountTooSmall",
    /// `nvcompErrorOutputBufferAlignmentTooSmall`.
    OutputBufferAlignmentTooSmall = 24 => "nvcompErrorOutputBufferAlignmentTooSmall",
    /// `nvcompErrorCudaError`: a CUDA runtime or device error inside nvCOMP.
    CudaError = 1000 => "nvcompErrorCudaError",
    /// `nvcompErrorInternal`.
    Internal = 10000 => "nvcompErrorInternal",
}

impl NvcompStatus {
    /// Whether this is `nvcompSuccess`.
    pub fn is_success(self) -> bool {
        self == NvcompStatus::Success
    }
}

impl std::fmt::Display for NvcompStatus {
    /// `nvcompErrorCannotDecompress (12)`, or `unknown nvcompStatus_t (42)`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.name() {
            Some(name) => write!(f, "{name} ({})", self.code()),
            None => write!(f, "unknown nvcompStatus_t ({})", self.code()),
        }
    }
}

/// `Ok` for `nvcompSuccess`, else [`NvcompError::Call`] naming the call.
pub fn check(op: &'static str, code: RawStatus) -> Result<(), NvcompError> {
    match NvcompStatus::from_code(code) {
        NvcompStatus::Success => Ok(()),
        status => Err(NvcompError::Call { op, status }),
    }
}

/// Checks the per-chunk statuses a batched decompression wrote (copied back
/// to the host): `Ok` when all are `nvcompSuccess`, else
/// [`NvcompError::ChunkFailed`] for the first chunk that failed, with the
/// number of failed chunks.
pub fn check_chunk_statuses(codec: Codec, statuses: &[RawStatus]) -> Result<(), NvcompError> {
    let mut failed = statuses.iter().enumerate().filter(|(_, s)| **s != 0);
    match failed.next() {
        None => Ok(()),
        Some((chunk, code)) => Err(NvcompError::ChunkFailed {
            codec,
            chunk,
            status: NvcompStatus::from_code(*code),
            failed: 1 + failed.count(),
        }),
    }
}

/// What went wrong with nvCOMP.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum NvcompError {
    /// No candidate library could be opened.
    #[error(
        "nvCOMP is not available ({tried}). GPU decompression needs libnvcomp.so.6: \
         `pip install {PIP_REQUIREMENT}` and set {LIBRARY_ENV} to \
         <site-packages>/{WHEEL_LIBRARY_PATH} (or put its directory on LD_LIBRARY_PATH)"
    )]
    LibraryNotFound {
        /// Each candidate tried, with the loader's reason.
        tried: String,
    },

    /// The library loaded but lacks a symbol every nvCOMP has.
    #[error("{library} is not a usable nvCOMP: it lacks {symbol} ({source}); gdscan needs {PIP_REQUIREMENT}")]
    MissingSymbol {
        /// The library's path or name.
        library: String,
        /// The missing symbol.
        symbol: &'static str,
        /// The loader's error (shared: the error is `Clone`, the loader's is not).
        #[source]
        source: std::sync::Arc<libloading::Error>,
    },

    /// The library lacks one of the entry points of a codec that was asked for.
    #[error(
        "{library} cannot decompress {codec}: it lacks {symbol}; gdscan needs {PIP_REQUIREMENT}"
    )]
    CodecUnavailable {
        /// The codec.
        codec: Codec,
        /// The library's path or name.
        library: String,
        /// The first missing symbol of that codec.
        symbol: &'static str,
    },

    /// An nvCOMP call returned an error status.
    #[error("{op} failed: {status}")]
    Call {
        /// The nvCOMP function.
        op: &'static str,
        /// Its status.
        status: NvcompStatus,
    },

    /// A chunk of a batch did not decompress (its status, copied back).
    #[error("{codec} decompression of chunk {chunk} failed: {status} ({failed} chunk(s) of the batch failed)")]
    ChunkFailed {
        /// The codec.
        codec: Codec,
        /// Index of the first failed chunk in the batch.
        chunk: usize,
        /// Its status.
        status: NvcompStatus,
        /// How many chunks of the batch failed.
        failed: usize,
    },

    /// An argument that cannot be right (checked on the host before calling nvCOMP).
    #[error("{op}: {what}")]
    InvalidArgument {
        /// The operation.
        op: &'static str,
        /// What is wrong.
        what: String,
    },

    /// A chunk is larger than the codec's decompressor accepts.
    #[error(
        "{codec} chunk {chunk} is {bytes} bytes; nvCOMP decompresses at most {max} bytes a chunk"
    )]
    ChunkTooLarge {
        /// The codec.
        codec: Codec,
        /// Index of the chunk.
        chunk: usize,
        /// Its (uncompressed) size.
        bytes: usize,
        /// The codec's limit.
        max: usize,
    },

    /// A CUDA driver call around nvCOMP failed (binding the stream's context).
    #[error("{op}: {source}")]
    Cuda {
        /// What was being done.
        op: &'static str,
        /// The driver's error.
        #[source]
        source: crate::cuda::CudaError,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_code_round_trips_with_its_header_name() {
        let known = [
            (0, "nvcompSuccess"),
            (10, "nvcompErrorInvalidValue"),
            (11, "nvcompErrorNotSupported"),
            (12, "nvcompErrorCannotDecompress"),
            (13, "nvcompErrorBadChecksum"),
            (14, "nvcompErrorCannotVerifyChecksums"),
            (15, "nvcompErrorOutputBufferTooSmall"),
            (16, "nvcompErrorWrongHeaderLength"),
            (17, "nvcompErrorAlignment"),
            (18, "nvcompErrorChunkSizeTooLarge"),
            (19, "nvcompErrorCannotCompress"),
            (20, "nvcompErrorWrongInputLength"),
            (21, "nvcompErrorBatchSizeTooLarge"),
            (22, "nvcompErrorSubChunkCountTooLarge"),
            (23, "nvcompErrorSubChunkCountTooSmall"),
            (24, "nvcompErrorOutputBufferAlignmentTooSmall"),
            (1000, "nvcompErrorCudaError"),
            (10000, "nvcompErrorInternal"),
        ];
        for (code, name) in known {
            let s = NvcompStatus::from_code(code);
            assert_eq!(s.code(), code);
            assert_eq!(s.name(), Some(name));
            assert!(!matches!(s, NvcompStatus::Unknown(_)));
            assert_eq!(s.to_string(), format!("{name} ({code})"));
        }
        assert!(NvcompStatus::from_code(0).is_success());
        assert_eq!(NvcompStatus::from_code(12), NvcompStatus::CannotDecompress);
    }

    #[test]
    fn unknown_codes_keep_their_number() {
        for code in [1, 9, 25, 999, 1001, 9999, 10001, -1, i32::MAX, i32::MIN] {
            let s = NvcompStatus::from_code(code);
            assert_eq!(s, NvcompStatus::Unknown(code));
            assert_eq!(s.code(), code);
            assert_eq!(s.name(), None);
            assert!(!s.is_success());
            assert_eq!(s.to_string(), format!("unknown nvcompStatus_t ({code})"));
        }
    }

    #[test]
    fn check_names_the_call_and_the_status() {
        assert!(check("nvcompBatchedZstdDecompressAsync", 0).is_ok());
        let e = check("nvcompBatchedZstdDecompressAsync", 10).unwrap_err();
        assert!(matches!(
            e,
            NvcompError::Call {
                op: "nvcompBatchedZstdDecompressAsync",
                status: NvcompStatus::InvalidValue
            }
        ));
        assert_eq!(
            e.to_string(),
            "nvcompBatchedZstdDecompressAsync failed: nvcompErrorInvalidValue (10)"
        );
        let e = check("x", 4242).unwrap_err();
        assert!(e.to_string().contains("unknown nvcompStatus_t (4242)"));
    }

    #[test]
    fn chunk_statuses_report_the_first_failure_and_the_count() {
        assert!(check_chunk_statuses(Codec::Snappy, &[]).is_ok());
        assert!(check_chunk_statuses(Codec::Snappy, &[0, 0, 0]).is_ok());
        let e = check_chunk_statuses(Codec::Zstd, &[0, 0, 12, 0, 77]).unwrap_err();
        match &e {
            NvcompError::ChunkFailed {
                codec,
                chunk,
                status,
                failed,
            } => {
                assert_eq!(*codec, Codec::Zstd);
                assert_eq!(*chunk, 2);
                assert_eq!(*status, NvcompStatus::CannotDecompress);
                assert_eq!(*failed, 2);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(e.to_string().contains("chunk 2"));
        assert!(e.to_string().contains("nvcompErrorCannotDecompress (12)"));
    }
}
