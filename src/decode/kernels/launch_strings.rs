//! The string walks' launches (`cuda/byte_array.cu`,
//! `cuda/byte_array_spread.cu`): dictionary views, the PLAIN byte-array
//! walk, both in one launch, or spread over a block per chunk.

use crate::cuda::Stream;

use super::args::{Args, Kernel, Queue};
use super::error::KernelError;
use super::launch;
use super::set::KernelSet;

/// Device addresses of a row group's spread-walk tables
/// ([`launch::SpreadTable`] gives their sizes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpreadLaunch {
    /// The item table: `n_dicts + n_tasks + 1` u32, each item's first chunk
    /// (dictionaries first, then the page tasks; the last entry is the
    /// number of chunks).
    pub first: u64,
    /// Chunks of every item.
    pub n_chunks: u32,
    /// [`launch::SPREAD_STATE_WORDS`] u32 per chunk.
    pub state: u64,
    /// A chunk's bitmap per chunk ([`launch::spread_bitmap_bytes`]).
    pub bits: u64,
}

/// `gds_dict_views(DictTask* dicts, u32 n_dicts)`.
pub(super) fn dict_views(q: &mut impl Queue, dicts: u64, n_dicts: u32) -> Result<(), KernelError> {
    let Some(config) = launch::dict_views_config(n_dicts) else {
        return Ok(());
    };
    q.queue(config, Args::new(Kernel::DictViews).ptr(dicts).u32(n_dicts))
}

/// `gds_byte_array_walk(PageTask* tasks, u32 n_tasks)`.
pub(super) fn byte_array_walk(
    q: &mut impl Queue,
    tasks: u64,
    n_tasks: u32,
) -> Result<(), KernelError> {
    let Some(config) = launch::byte_array_walk_config(n_tasks) else {
        return Ok(());
    };
    q.queue(
        config,
        Args::new(Kernel::ByteArrayWalk).ptr(tasks).u32(n_tasks),
    )
}

/// `gds_string_walks(DictTask* dicts, u32 n_dicts, PageTask* tasks, u32
/// n_tasks)`.
pub(super) fn string_walks(
    q: &mut impl Queue,
    dicts: u64,
    n_dicts: u32,
    tasks: u64,
    n_tasks: u32,
) -> Result<(), KernelError> {
    let Some(config) = launch::string_walks_config(n_dicts, n_tasks) else {
        return Ok(());
    };
    let args = Args::new(Kernel::StringWalks)
        .ptr(dicts)
        .u32(n_dicts)
        .ptr(tasks)
        .u32(n_tasks);
    q.queue(config, args)
}

/// The dictionaries and page tasks of a row group, for the spread walk.
#[derive(Debug, Clone, Copy)]
pub(super) struct SpreadItems {
    pub(super) dicts: u64,
    pub(super) n_dicts: u32,
    pub(super) tasks: u64,
    pub(super) n_tasks: u32,
}

/// `gds_spread_spec`, `gds_spread_join`, `gds_spread_emit`, each
/// `(DictTask* dicts, u32 n_dicts, PageTask* tasks, u32 n_tasks, const u32*
/// first, u32* state, u32* bits)`: a block per chunk, a thread per item, a
/// block per chunk.
pub(super) fn spread_walks(
    q: &mut impl Queue,
    items: SpreadItems,
    spread: &SpreadLaunch,
) -> Result<(), KernelError> {
    let Some(join) = launch::spread_join_config(items.n_dicts, items.n_tasks) else {
        return Ok(());
    };
    let chunks = launch::spread_chunks_config(spread.n_chunks);
    for (kernel, config) in [
        (Kernel::SpreadSpec, chunks),
        (Kernel::SpreadJoin, Some(join)),
        (Kernel::SpreadEmit, chunks),
    ] {
        let Some(config) = config else { continue };
        let args = Args::new(kernel)
            .ptr(items.dicts)
            .u32(items.n_dicts)
            .ptr(items.tasks)
            .u32(items.n_tasks)
            .ptr(spread.first)
            .ptr(spread.state)
            .ptr(spread.bits);
        q.queue(config, args)?;
    }
    Ok(())
}

impl KernelSet {
    /// Queues `gds_dict_views` over `n_dicts` dictionary tasks at `dicts`.
    ///
    /// # Safety
    /// `dicts` must hold `n_dicts` [`DictTask`](super::DictTask)s in device
    /// memory whose addresses and lengths describe live device allocations,
    /// all kept alive and unused by other work until the stream has passed
    /// this launch.
    pub unsafe fn dict_views(
        &self,
        stream: &Stream,
        dicts: u64,
        n_dicts: u32,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        dict_views(&mut q, dicts, n_dicts)
    }

    /// Queues `gds_byte_array_walk` over `n_tasks` page tasks at `tasks`
    /// (only PLAIN byte-array pages do work).
    ///
    /// # Safety
    /// As [`KernelSet::decode_pages`].
    pub unsafe fn byte_array_walk(
        &self,
        stream: &Stream,
        tasks: u64,
        n_tasks: u32,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        byte_array_walk(&mut q, tasks, n_tasks)
    }

    /// Queues `gds_string_walks`: [`KernelSet::dict_views`] over `n_dicts`
    /// dictionaries and [`KernelSet::byte_array_walk`] over `n_tasks` page
    /// tasks in one launch, a block each, so that the two run at once.
    ///
    /// # Safety
    /// As [`KernelSet::dict_views`] and [`KernelSet::byte_array_walk`].
    pub unsafe fn string_walks(
        &self,
        stream: &Stream,
        dicts: u64,
        n_dicts: u32,
        tasks: u64,
        n_tasks: u32,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        string_walks(&mut q, dicts, n_dicts, tasks, n_tasks)
    }
}
