//! A batch cut to its mask's rows on the GPU.
//! OWNED BY THE COMPACTION HELPER: replace this file.

use super::{DeviceMask, FilterError, FilterGpu};
use crate::decode::array::DeviceBatch;

impl FilterGpu {
    /// `batch` with only the rows `mask` keeps, in order; `None` when it
    /// keeps none.
    pub fn compact(
        &self,
        batch: &DeviceBatch,
        mask: &DeviceMask,
    ) -> Result<Option<DeviceBatch>, FilterError> {
        Err(FilterError::Unsupported {
            part: format!("{} rows", mask.len()),
            why: format!("not built yet ({} rows)", batch.num_rows()),
        })
    }
}
