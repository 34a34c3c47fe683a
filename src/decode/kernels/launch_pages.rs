//! The page kernels' launches (`cuda/decode.cu`, `cuda/status.cu`): the
//! pages decoded, DELTA_BYTE_ARRAY strings sized, the tasks' status
//! gathered.

use crate::cuda::Stream;

use super::args::{Args, Kernel, Queue};
use super::error::KernelError;
use super::launch;
use super::set::KernelSet;

/// `gds_decode_pages(PageTask* tasks, u32 n_tasks)`.
pub(super) fn decode_pages(
    q: &mut impl Queue,
    tasks: u64,
    n_tasks: u32,
) -> Result<(), KernelError> {
    let Some(config) = launch::decode_pages_config(n_tasks) else {
        return Ok(());
    };
    q.queue(
        config,
        Args::new(Kernel::DecodePages).ptr(tasks).u32(n_tasks),
    )
}

/// `gds_dba_sizes(PageTask* tasks, u32 n_tasks)`, shaped as
/// `gds_decode_pages`.
pub(super) fn dba_sizes(q: &mut impl Queue, tasks: u64, n_tasks: u32) -> Result<(), KernelError> {
    let Some(config) = launch::decode_pages_config(n_tasks) else {
        return Ok(());
    };
    q.queue(config, Args::new(Kernel::DbaSizes).ptr(tasks).u32(n_tasks))
}

/// `gds_gather_status(const PageTask* tasks, u32 n_tasks, const DictTask*
/// dicts, u32 n_dicts, uint4* out)`.
pub(super) fn gather_status(
    q: &mut impl Queue,
    tasks: u64,
    n_tasks: u32,
    dicts: u64,
    n_dicts: u32,
    out: u64,
) -> Result<(), KernelError> {
    let Some(config) = launch::gather_status_config(n_tasks, n_dicts) else {
        return Ok(());
    };
    let args = Args::new(Kernel::GatherStatus)
        .ptr(tasks)
        .u32(n_tasks)
        .ptr(dicts)
        .u32(n_dicts)
        .ptr(out);
    q.queue(config, args)
}

impl KernelSet {
    /// Queues `gds_decode_pages` over `n_tasks` page tasks at `tasks`. PLAIN
    /// byte-array pages need [`KernelSet::byte_array_walk`] queued before on
    /// the same stream, dictionary byte-array pages their dictionary's
    /// [`KernelSet::dict_views`].
    ///
    /// # Safety
    /// `tasks` must hold `n_tasks` [`PageTask`](super::PageTask)s in device
    /// memory whose addresses and lengths describe live device allocations
    /// (inputs readable, outputs writable and not used by other work), all
    /// kept alive until the stream has passed this launch.
    pub unsafe fn decode_pages(
        &self,
        stream: &Stream,
        tasks: u64,
        n_tasks: u32,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        decode_pages(&mut q, tasks, n_tasks)
    }

    /// Queues `gds_dba_sizes` over `n_tasks` page tasks at `tasks`: the
    /// lengths of every BYTE_ARRAY DELTA_BYTE_ARRAY page decoded into its
    /// scratch, its values' count and bytes written into its task
    /// (`plain_count`, `value_bytes`). The host reads them back and gives
    /// each such page its values' buffer (`dict`, `dict_len`) before
    /// [`KernelSet::decode_row_group`].
    ///
    /// # Safety
    /// As [`KernelSet::decode_pages`].
    pub unsafe fn dba_sizes(
        &self,
        stream: &Stream,
        tasks: u64,
        n_tasks: u32,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        dba_sizes(&mut q, tasks, n_tasks)
    }

    /// Queues `gds_gather_status`: [`launch::STATUS_WORDS`] words per page
    /// task then per dictionary task, into `out`.
    ///
    /// # Safety
    /// `tasks` and `dicts` as for the other launches; `out` a device
    /// allocation of [`launch::status_bytes`] bytes, 16-byte aligned, alive
    /// until the stream has passed this launch.
    pub unsafe fn gather_status(
        &self,
        stream: &Stream,
        tasks: u64,
        n_tasks: u32,
        dicts: u64,
        n_dicts: u32,
        out: u64,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        gather_status(&mut q, tasks, n_tasks, dicts, n_dicts, out)
    }
}
