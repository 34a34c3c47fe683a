//! The filter evaluator's launch (`cuda/filter_eval.cu`): a predicate's
//! program run over a batch's columns into a row mask.

use crate::cuda::module::LaunchConfig;
use crate::cuda::Stream;

use super::args::{Args, Kernel, Queue};
use super::error::KernelError;
use super::set::KernelSet;

/// Threads per block of `gds_filter_eval` (`GDS_FILTER_BLOCK`).
pub const FILTER_BLOCK: u32 = 256;

/// The most blocks of one launch (the threads stride over the rest).
const MAX_BLOCKS: u32 = 65_535;

/// Device addresses and counts of one evaluation (see
/// `decode::filter`'s `program.rs` and `column_table.rs` for the layouts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FilterLaunch {
    /// `n_steps` steps of four `u32`s.
    pub program: u64,
    /// Steps.
    pub n_steps: u32,
    /// `n_columns` columns of the column table.
    pub columns: u64,
    /// Columns.
    pub n_columns: u32,
    /// `n_buffers` (address, length) pairs of `u64`s.
    pub buffers: u64,
    /// Data buffers.
    pub n_buffers: u32,
    /// The literal pool.
    pub literals: u64,
    /// Its bytes.
    pub literals_len: u32,
    /// Rows.
    pub n_rows: u32,
    /// `n_rows` bytes, written.
    pub mask: u64,
    /// One `u32`, zeroed; `GDS_FILTER_BAD` is or-ed in on a corrupt
    /// program (0: not written).
    pub status: u64,
}

/// The grid of `n_rows` rows: a thread per row up to [`MAX_BLOCKS`]
/// blocks; `None` without rows.
pub(super) fn filter_eval_config(n_rows: u32) -> Option<LaunchConfig> {
    if n_rows == 0 {
        return None;
    }
    let blocks = n_rows.div_ceil(FILTER_BLOCK).min(MAX_BLOCKS);
    Some(LaunchConfig {
        grid: (blocks, 1, 1),
        block: (FILTER_BLOCK, 1, 1),
        shared_bytes: 0,
    })
}

/// `gds_filter_eval(const u32* program, u32 n_steps, const u64* columns,
/// u32 n_columns, const u64* buffers, u32 n_buffers, const u8* literals,
/// u32 literals_len, u32 n_rows, u8* mask, u32* status)`.
pub(super) fn filter_eval(q: &mut impl Queue, work: &FilterLaunch) -> Result<(), KernelError> {
    let Some(config) = filter_eval_config(work.n_rows) else {
        return Ok(());
    };
    let args = Args::new(Kernel::FilterEval)
        .ptr(work.program)
        .u32(work.n_steps)
        .ptr(work.columns)
        .u32(work.n_columns)
        .ptr(work.buffers)
        .u32(work.n_buffers)
        .ptr(work.literals)
        .u32(work.literals_len)
        .u32(work.n_rows)
        .ptr(work.mask)
        .ptr(work.status);
    q.queue(config, args)
}

impl KernelSet {
    /// Queues `gds_filter_eval`: `work.n_rows` mask bytes, 1 where the
    /// program is TRUE for the row.
    ///
    /// # Safety
    /// Every address of `work` must be live device memory of the size its
    /// count says (the column table's addresses too, with the lengths it
    /// gives), `mask` and `status` writable and not used by other work, all
    /// kept alive until `stream` has passed this launch.
    pub unsafe fn filter_eval(
        &self,
        stream: &Stream,
        work: &FilterLaunch,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        filter_eval(&mut q, work)
    }
}
