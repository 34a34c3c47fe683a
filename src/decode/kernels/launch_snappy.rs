//! The Snappy launches outside the scan (`cuda/check.cu`,
//! `cuda/snappy_decode.cu`): a batch checked a warp per job, pieces
//! written as streams of their own, scanned pages decompressed.

use crate::cuda::module::LaunchConfig;
use crate::cuda::Stream;

use super::args::{Args, Kernel, Queue};
use super::error::KernelError;
use super::set::KernelSet;
use super::{check, launch, snappy_scan};

/// Device addresses of a Snappy batch's arrays, for
/// [`KernelSet::check_snappy`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnappyJobs {
    /// `n_jobs` compressed pointers (rewritten for refused jobs).
    pub src: u64,
    /// `n_jobs` compressed sizes (rewritten for refused jobs).
    pub src_len: u64,
    /// `n_jobs` uncompressed sizes (the page headers').
    pub dst_len: u64,
    /// Jobs.
    pub n_jobs: u32,
    /// `n_jobs` × [`check::CHECK_WORDS`] words of results.
    pub results: u64,
    /// A device byte holding 0: an empty Snappy stream.
    pub dummy: u64,
    /// Jobs with longer streams are left alone (reported sound): the
    /// caller has checked them elsewhere.
    pub max_len: u64,
}

/// Device addresses of a scanned Snappy batch's arrays, for
/// [`KernelSet::snappy_decode`]: the scan's (as
/// [`SnappyScan`](super::SnappyScan)) and the Snappy call's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnappyDecode {
    /// The scan's page table.
    pub pages: u64,
    /// Pages.
    pub n_pages: u32,
    /// Jobs of the pages (numbered from the first page's).
    pub n_jobs: u32,
    /// The scan's `entries`, `starts`, `verdicts` and `real`.
    pub entries: u64,
    /// See `entries`.
    pub starts: u64,
    /// See `entries`.
    pub verdicts: u64,
    /// See `entries`.
    pub real: u64,
    /// The Snappy call's output pointers (u64 a job).
    pub dst: u64,
    /// The Snappy call's output bytes (u64 a job), written.
    pub actual: u64,
    /// The Snappy call's statuses (i32 a job, nvCOMP's codes), written.
    pub statuses: u64,
}

/// `gds_check_snappy(u64* src, u64* src_len, const u64* dst_len, u32
/// n_jobs, u32* results, u64 dummy, u64 max_len)`, a warp per job.
pub(super) fn check_snappy(q: &mut impl Queue, jobs: &SnappyJobs) -> Result<(), KernelError> {
    if jobs.n_jobs == 0 {
        return Ok(());
    }
    let blocks = jobs.n_jobs.div_ceil(check::CHECK_BLOCK / 32);
    let config = LaunchConfig::linear(blocks.min(launch::MAX_GRID), check::CHECK_BLOCK);
    let args = Args::new(Kernel::CheckSnappy)
        .ptr(jobs.src)
        .ptr(jobs.src_len)
        .ptr(jobs.dst_len)
        .u32(jobs.n_jobs)
        .ptr(jobs.results)
        .u64(jobs.dummy)
        .u64(jobs.max_len);
    q.queue(config, args)
}

/// `gds_snappy_pieces(const u64* tasks, u32 n_tasks)`, a block per task.
pub(super) fn snappy_pieces(
    q: &mut impl Queue,
    tasks: u64,
    n_tasks: u32,
) -> Result<(), KernelError> {
    if n_tasks == 0 {
        return Ok(());
    }
    let config = LaunchConfig::linear(n_tasks.min(launch::MAX_GRID), check::PIECES_BLOCK);
    q.queue(
        config,
        Args::new(Kernel::SnappyPieces).ptr(tasks).u32(n_tasks),
    )
}

/// `gds_snappy_decode(const u64* pages, u32 n_pages, u32 n_jobs, const
/// u32* entries, const u32* starts, const u32* verdicts, const u32* real,
/// const u64* dst, u64* actual, u32* statuses)`, a warp per job.
pub(super) fn snappy_decode(q: &mut impl Queue, a: &SnappyDecode) -> Result<(), KernelError> {
    if a.n_pages == 0 || a.n_jobs == 0 {
        return Ok(());
    }
    let warps = snappy_scan::UNSNAP_BLOCK / 32;
    let config = LaunchConfig::linear(
        a.n_jobs.div_ceil(warps).clamp(1, launch::MAX_GRID),
        snappy_scan::UNSNAP_BLOCK,
    );
    let args = Args::new(Kernel::SnappyDecode)
        .ptr(a.pages)
        .u32(a.n_pages)
        .u32(a.n_jobs)
        .ptr(a.entries)
        .ptr(a.starts)
        .ptr(a.verdicts)
        .ptr(a.real)
        .ptr(a.dst)
        .ptr(a.actual)
        .ptr(a.statuses);
    q.queue(config, args)
}

impl KernelSet {
    /// Queues `gds_check_snappy` over the `n_jobs` jobs of a Snappy batch
    /// (nvCOMP's arrays: compressed pointers and sizes, uncompressed sizes,
    /// each `n_jobs` 8-byte words). A refused job's pointer and size are
    /// rewritten to `dummy`, a one-byte empty stream; `results` receives
    /// [`check::CHECK_WORDS`] words per job ([`check::snappy_check_error`]).
    ///
    /// # Safety
    /// Every address must be live device memory of the sizes said, each
    /// compressed pointer valid for its size, kept alive and unused by
    /// other work until the stream has passed this launch.
    pub unsafe fn check_snappy(
        &self,
        stream: &Stream,
        jobs: SnappyJobs,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        check_snappy(&mut q, &jobs)
    }

    /// Queues `gds_snappy_decode` (`cuda/snappy_decode.cu`, a warp per
    /// job) over the jobs of a scan queued with `real` set: every page the
    /// scan found sound decompressed into the Snappy call's output
    /// pointers, each job's output bytes and status (nvCOMP's codes)
    /// written to the call's arrays, as nvCOMP writes them.
    ///
    /// # Safety
    /// The scan's arrays as [`KernelSet::snappy_scan`] asks, that scan
    /// queued before on this stream (or waited for), and the Snappy call's
    /// arrays and every output buffer live device memory of the sizes the
    /// layout gives, kept alive and unused by other work until the stream
    /// has passed the launch.
    pub unsafe fn snappy_decode(
        &self,
        stream: &Stream,
        a: &SnappyDecode,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        snappy_decode(&mut q, a)
    }

    /// Queues `gds_snappy_pieces` over `n_tasks` tasks at `tasks`
    /// ([`check::PIECE_WORDS`] words each: the piece's elements, where its
    /// stream goes, their length, its output length; see
    /// [`check::piece_streams`]).
    ///
    /// # Safety
    /// Every address must be live device memory of the sizes said (the
    /// destination [`check::varint_len`] bytes longer than the elements),
    /// kept alive and unused by other work until the stream has passed
    /// this launch.
    pub unsafe fn snappy_pieces(
        &self,
        stream: &Stream,
        tasks: u64,
        n_tasks: u32,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        snappy_pieces(&mut q, tasks, n_tasks)
    }
}
