//! Why a filter cannot run on the GPU, or failed there.

use crate::cuda::CudaError;
use crate::decode::array::DeviceArrayError;
use crate::decode::kernels::KernelError;
use crate::parquet::predicate::PredicateError;

/// Why a predicate cannot be evaluated on the GPU, or a filter failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilterError {
    /// A part of the predicate the GPU evaluator does not take (a column
    /// type, a test): named, so that the caller can filter on the host.
    #[error("the GPU filter does not evaluate {part}: {why}")]
    Unsupported {
        /// The part of the predicate (e.g. `l_comment LIKE 'a%'`).
        part: String,
        /// Why.
        why: String,
    },
    /// The predicate does not fit the batch's schema (unknown column,
    /// literal of the wrong type).
    #[error(transparent)]
    Predicate(#[from] PredicateError),
    /// The batch is not one the filter was compiled for, or its columns
    /// do not hold what their types say.
    #[error("filter: {0}")]
    Batch(#[from] DeviceArrayError),
    /// The filter's kernels could not be compiled, loaded or launched.
    #[error(transparent)]
    Kernel(Box<KernelError>),
    /// A CUDA call failed (device memory, a copy, a stream).
    #[error(transparent)]
    Cuda(#[from] CudaError),
}

impl From<KernelError> for FilterError {
    fn from(e: KernelError) -> Self {
        FilterError::Kernel(Box::new(e))
    }
}
