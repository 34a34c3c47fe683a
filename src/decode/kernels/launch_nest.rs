//! The nesting kernels' launches (`cuda/nest.cu`): a row group's nest
//! tasks counted, scanned and written, after its pages.

use crate::cuda::Stream;

use super::args::{Args, Kernel, Queue};
use super::error::KernelError;
use super::nest;
use super::set::KernelSet;

/// Device addresses and counts of a row group's nesting work
/// ([`nest`]'s kernels, after the pages).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NestLaunch {
    /// Device address of `n_tasks` [`nest::NestTask`]s.
    pub tasks: u64,
    /// Nest tasks.
    pub n_tasks: u32,
    /// The most entries of a task (the tiles' grid).
    pub max_entries: u32,
}

/// `gds_nest_count`, `gds_nest_scan`, `gds_nest_write`, each `(const
/// NestTask* tasks, u32 n_tasks)`: over the tiles, a block per task, over
/// the tiles.
pub(super) fn nest(q: &mut impl Queue, work: &NestLaunch) -> Result<(), KernelError> {
    let (Some(tiles), Some(scan)) = (
        nest::nest_tiles_config(work.n_tasks, work.max_entries),
        nest::nest_scan_config(work.n_tasks),
    ) else {
        return Ok(());
    };
    for (kernel, config) in [
        (Kernel::NestCount, tiles),
        (Kernel::NestScan, scan),
        (Kernel::NestWrite, tiles),
    ] {
        q.queue(config, Args::new(kernel).ptr(work.tasks).u32(work.n_tasks))?;
    }
    Ok(())
}

impl KernelSet {
    /// Queues the nesting kernels of a row group ([`nest`]): the count,
    /// scan and write of `work`'s nest tasks, over the level bytes
    /// `gds_decode_pages` wrote for the page tasks with level outputs.
    ///
    /// # Safety
    /// The nest tasks, their level bytes, outputs, tiles and status live
    /// device memory of the sizes [`nest`] says (status and bitmaps
    /// zeroed), queued after the pages' decode on `stream`, all kept alive
    /// until the stream has passed these launches.
    pub unsafe fn nest(&self, stream: &Stream, work: &NestLaunch) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        nest(&mut q, work)
    }
}
