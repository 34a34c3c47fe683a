//! The one-pass filter of decoded batches: the predicate evaluated and each
//! batch compacted to the rows it selects with the host waiting twice (the
//! kept rows' counts, read back together with the evaluator's status
//! words, and the end of the gathers), not after every launch; for one
//! batch or for several at once (a decoded group's row groups).

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
        let mut one = self.select_many(predicate, &[(batch, output)])?;
        Ok(one.pop().flatten())
    }

    /// [`FilterGpu::select`] of several batches (e.g. the row groups of one
    /// decoded group), each `(batch, output)`, answered in order: every
    /// evaluation is queued first, then every compaction goes through its
    /// phases together, so that the host waits for the GPU twice for all
    /// of them rather than twice for each.
    pub fn select_many(
        &self,
        predicate: &GpuPredicate,
        work: &[(&DeviceBatch, &DeviceBatch)],
    ) -> Result<Vec<Option<DeviceBatch>>, FilterError> {
        let mut queued = Vec::with_capacity(work.len());
        for (batch, _) in work {
            queued.push(self.queue_evaluate(predicate, batch)?);
        }
        let compactions: Vec<_> = work
            .iter()
            .zip(&queued)
            .map(|((_, output), q)| (*output, q.mask(), q.status()))
            .collect();
        self.compact_many(&compactions)
    }
}
