//! A row group's launches in order: the string walks, the pages, the
//! nesting, the status ([`KernelSet::decode_row_group`]).

use crate::cuda::Stream;

use super::args::Queue;
use super::error::KernelError;
use super::launch_nest::{self, NestLaunch};
use super::launch_pages;
use super::launch_strings::{self, SpreadItems, SpreadLaunch};
use super::set::KernelSet;
use super::StringWalks;

/// Device addresses and counts of one row group's kernel work, for
/// [`KernelSet::decode_row_group`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowGroupLaunch {
    /// Device address of `n_tasks` [`PageTask`](super::PageTask)s.
    pub tasks: u64,
    /// Page tasks.
    pub n_tasks: u32,
    /// Device address of `n_dicts` [`DictTask`](super::DictTask)s (0 when
    /// none).
    pub dicts: u64,
    /// Byte-array dictionary tasks.
    pub n_dicts: u32,
    /// Device address of the status array: [`launch::status_bytes`] bytes,
    /// 16-byte aligned.
    ///
    /// [`launch::status_bytes`]: super::launch::status_bytes
    pub status: u64,
    /// Whether any task is a PLAIN byte-array page (runs the walk).
    pub has_plain_byte_arrays: bool,
    /// How the string walks run.
    pub walks: StringWalks,
    /// The spread walk's tables ([`StringWalks::Spread`]; unused otherwise).
    pub spread: SpreadLaunch,
    /// The nesting kernels' work (none when the row group has no nested
    /// leaf).
    pub nest: NestLaunch,
}

/// The row group's dictionaries and page tasks, for the spread walk.
fn spread_items(work: &RowGroupLaunch) -> SpreadItems {
    SpreadItems {
        dicts: work.dicts,
        n_dicts: work.n_dicts,
        tasks: work.tasks,
        n_tasks: work.n_tasks,
    }
}

/// The row group's launches, `after(kernel)` called once each is queued.
pub(super) fn row_group(
    q: &mut impl Queue,
    work: &RowGroupLaunch,
    mut after: impl FnMut(&'static str) -> Result<(), KernelError>,
) -> Result<(), KernelError> {
    match work.walks {
        StringWalks::Together => {
            let walked = if work.has_plain_byte_arrays {
                work.n_tasks
            } else {
                0
            };
            launch_strings::string_walks(q, work.dicts, work.n_dicts, work.tasks, walked)?;
            after("string_walks")?;
        }
        StringWalks::Spread => {
            launch_strings::spread_walks(q, spread_items(work), &work.spread)?;
            after("string_walks")?;
        }
        StringWalks::Apart => {
            launch_strings::dict_views(q, work.dicts, work.n_dicts)?;
            after("dict_views")?;
            if work.has_plain_byte_arrays {
                launch_strings::byte_array_walk(q, work.tasks, work.n_tasks)?;
                after("byte_array_walk")?;
            }
        }
    }
    launch_pages::decode_pages(q, work.tasks, work.n_tasks)?;
    after("decode_pages")?;
    if work.nest.n_tasks > 0 {
        launch_nest::nest(q, &work.nest)?;
        after("nest")?;
    }
    launch_pages::gather_status(
        q,
        work.tasks,
        work.n_tasks,
        work.dicts,
        work.n_dicts,
        work.status,
    )?;
    after("gather_status")
}

impl KernelSet {
    /// Queues a row group's kernels in order: dictionary views, the walk
    /// (when there are PLAIN byte-array pages), the pages, the status.
    ///
    /// # Safety
    /// As each of the four launches.
    pub unsafe fn decode_row_group(
        &self,
        stream: &Stream,
        work: &RowGroupLaunch,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        row_group(&mut q, work, |_| Ok(()))
    }

    /// [`KernelSet::decode_row_group`], calling `after(kernel)` once each
    /// kernel is queued (with the kernel's name), so that a caller can
    /// record events between them (the decoder's trace does).
    ///
    /// # Safety
    /// As [`KernelSet::decode_row_group`].
    pub unsafe fn decode_row_group_marked(
        &self,
        stream: &Stream,
        work: &RowGroupLaunch,
        after: impl FnMut(&'static str) -> Result<(), KernelError>,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        row_group(&mut q, work, after)
    }

    /// Queues the spread walk (`cuda/byte_array_spread.cu`: a block per
    /// chunk, a thread per item, a block per chunk) over a row group's
    /// dictionaries and page tasks, with the tables of `work.spread`: the
    /// same results as [`KernelSet::dict_views`] and
    /// [`KernelSet::byte_array_walk`].
    ///
    /// # Safety
    /// As [`KernelSet::dict_views`] and [`KernelSet::byte_array_walk`];
    /// `work.spread`'s tables as [`SpreadLaunch`] says, the item table
    /// uploaded, all alive until the stream has passed the launches.
    pub unsafe fn spread_walks(
        &self,
        stream: &Stream,
        work: &RowGroupLaunch,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        launch_strings::spread_walks(&mut q, spread_items(work), &work.spread)
    }
}
