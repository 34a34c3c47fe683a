//! The one-pass filter of a decoded batch: the predicate evaluated and the
//! batch compacted to the rows it selects with the host waiting twice (the
//! kept rows' count, read back together with the evaluator's status word,
//! and the end of the gathers), not after every launch.

use super::{FilterError, FilterGpu, GpuPredicate};
use crate::decode::array::DeviceBatch;

impl FilterGpu {
    /// The rows of `output` where `predicate`, evaluated over `batch`, is
    /// TRUE; `None` when it is TRUE nowhere. `output` holds the same rows
    /// as `batch` (e.g. some of its columns): the columns handed out need
    /// not be those the predicate reads. Equal to [`FilterGpu::evaluate`]
    /// then [`FilterGpu::compact`], with fewer waits.
    ///
    /// A predicate that does not fit `batch`, or rows that differ between
    /// the two batches, are [`FilterError::Batch`]; a corrupt program or
    /// column table found by the kernel fails before any column is
    /// gathered.
    pub fn select(
        &self,
        predicate: &GpuPredicate,
        batch: &DeviceBatch,
        output: &DeviceBatch,
    ) -> Result<Option<DeviceBatch>, FilterError> {
        let queued = self.queue_evaluate(predicate, batch)?;
        self.compact_checked(output, queued.mask(), queued.status())
    }
}
