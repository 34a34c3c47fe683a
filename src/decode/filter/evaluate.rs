//! The program run on the GPU into a row mask.
//! OWNED BY THE EVALUATOR'S HELPER: replace this file.

use super::{DeviceMask, FilterError, FilterGpu, GpuPredicate};
use crate::decode::array::DeviceBatch;

impl FilterGpu {
    /// `predicate`'s value per row of `batch`, as a mask.
    pub fn evaluate(
        &self,
        predicate: &GpuPredicate,
        batch: &DeviceBatch,
    ) -> Result<DeviceMask, FilterError> {
        Err(FilterError::Unsupported {
            part: format!("{} columns", predicate.schema().fields().len()),
            why: format!("not built yet ({} rows)", batch.num_rows()),
        })
    }
}
