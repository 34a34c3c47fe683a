//! The Snappy scan's launches (`cuda/snappy_scan.cu`, then
//! `gds_snappy_pieces`): every page of a batch checked and split by
//! speculative walks, a thread per segment or per page.

use crate::cuda::module::LaunchConfig;
use crate::cuda::Stream;

use super::args::{Args, Kernel, Queue};
use super::error::KernelError;
use super::launch_snappy;
use super::set::KernelSet;
use super::{launch, snappy_scan};

/// Device addresses of the Snappy scan's arrays, for
/// [`KernelSet::snappy_scan`]; sizes from [`snappy_scan::ScanLayout`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnappyScan {
    /// The page table ([`snappy_scan::SCAN_PAGE_WORDS`] words a page).
    pub pages: u64,
    /// Pages.
    pub n_pages: u32,
    /// The page of each segment (u32).
    pub seg_page: u64,
    /// Segments.
    pub n_segs: u32,
    /// The bitmaps of the speculative walks (u32 words).
    pub bitmap: u64,
    /// Per segment, [`snappy_scan::SCAN_STARTS`] each (by default): where its
    /// speculative walks left it (u32; a later walk that stopped on walk
    /// 0's path: the top bit and where it stopped).
    pub exits: u64,
    /// Per speculative walk (as `exits`),
    /// [`snappy_scan::SCAN_RECORD_WORDS`] u32: its elements' output bytes,
    /// those of its first elements, its elements' copy margins.
    pub outputs: u64,
    /// The later walks left to walk whole: a count, then their numbers
    /// (u32, 1 + [`snappy_scan::ScanLayout::n_later_walks`]).
    pub rest: u64,
    /// Per segment: where the real chain enters it (u32).
    pub entries: u64,
    /// Per segment, 2 u32: where the real chain met a speculative walk
    /// (`u32::MAX` where none), and which.
    pub meets: u64,
    /// Per segment: its output bytes (u64).
    pub outs: u64,
    /// Per segment: the page's output bytes before it (u64).
    pub before: u64,
    /// Per segment: its first fault (4 u32).
    pub faults: u64,
    /// Piece starts (u32).
    pub starts: u64,
    /// Per page: [`snappy_scan::SCAN_RESULT_WORDS`] result words.
    pub verdicts: u64,
    /// The Snappy call's arrays: compressed pointers, sizes, output sizes.
    pub src: u64,
    /// See `src`.
    pub src_len: u64,
    /// See `src`.
    pub dst_len: u64,
    /// Per job, a task of `gds_snappy_pieces` ([`check::PIECE_WORDS`] u64).
    ///
    /// [`check::PIECE_WORDS`]: super::check::PIECE_WORDS
    pub tasks: u64,
    /// Jobs of the Snappy call the pages have.
    pub n_jobs: u32,
    /// A device byte holding 0: an empty Snappy stream.
    pub dummy: u64,
    /// Per segment, [`snappy_scan::SCAN_SEGMENT_WORDS`] u32: the real
    /// chain's element starts, for [`KernelSet::snappy_decode`]; 0 when
    /// nvCOMP decodes the pages (the scan then writes every job for it).
    pub real: u64,
}

/// A thread per item, for `n` items.
fn per(n: u32) -> LaunchConfig {
    LaunchConfig::linear(
        n.div_ceil(snappy_scan::SCAN_BLOCK)
            .clamp(1, launch::MAX_GRID),
        snappy_scan::SCAN_BLOCK,
    )
}

/// The scan's launches, `after(kernel)` called once each of its steps is
/// queued: `scan_spec` after the three speculative launches, `scan_chain`,
/// `scan_outs`, `scan_prefix`, `scan_verify`, `scan_finish`,
/// `scan_pieces`.
pub(super) fn scan(
    q: &mut impl Queue,
    a: &SnappyScan,
    mut after: impl FnMut(&'static str) -> Result<(), KernelError>,
) -> Result<(), KernelError> {
    if a.n_pages == 0 {
        return Ok(());
    }
    spec(q, a)?;
    after("scan_spec")?;
    // `gds_snappy_chain(const u64* pages, u32 n_pages, const u32* bitmap,
    // const u32* exits, const u32* outputs, u32* entries, u32* meets, u64*
    // outs, u32* verdicts)`.
    let chain = Args::new(Kernel::SnappyChain)
        .ptr(a.pages)
        .u32(a.n_pages)
        .ptr(a.bitmap)
        .ptr(a.exits)
        .ptr(a.outputs)
        .ptr(a.entries)
        .ptr(a.meets)
        .ptr(a.outs)
        .ptr(a.verdicts);
    q.queue(per(a.n_pages), chain)?;
    after("scan_chain")?;
    if a.n_segs > 0 {
        // `gds_snappy_outs(const u64* pages, const u32* seg_page, u32
        // n_segs, const u32* bitmap, const u32* outputs, const u32* meets,
        // u64* outs)`.
        let outs = Args::new(Kernel::SnappyOuts)
            .ptr(a.pages)
            .ptr(a.seg_page)
            .u32(a.n_segs)
            .ptr(a.bitmap)
            .ptr(a.outputs)
            .ptr(a.meets)
            .ptr(a.outs);
        q.queue(per(a.n_segs), outs)?;
    }
    after("scan_outs")?;
    // `gds_snappy_prefix(const u64* pages, u32 n_pages, const u64* outs,
    // u64* before)`.
    let prefix = Args::new(Kernel::SnappyPrefix)
        .ptr(a.pages)
        .u32(a.n_pages)
        .ptr(a.outs)
        .ptr(a.before);
    q.queue(per(a.n_pages), prefix)?;
    after("scan_prefix")?;
    if a.n_segs > 0 {
        q.queue(per(a.n_segs), verify_args(a))?;
    }
    after("scan_verify")?;
    q.queue(per(a.n_pages), finish_args(a))?;
    after("scan_finish")?;
    launch_snappy::snappy_pieces(q, a.tasks, a.n_jobs)?;
    after("scan_pieces")
}

/// Walk 0 of every segment, then the later walks, which stop on walk 0's
/// path, then those still out of step after a few elements, packed into
/// full warps (snappy_scan.cu); each `(const u64* pages, const u32*
/// seg_page, u32 n_segs, u32* bitmap, u32* exits, u32* outputs, u32*
/// rest)`.
fn spec(q: &mut impl Queue, a: &SnappyScan) -> Result<(), KernelError> {
    let later_per_seg = (q.config().scan_starts as u32).saturating_sub(1);
    let later = a.n_segs.saturating_mul(later_per_seg);
    for (kernel, threads) in [
        (Kernel::SnappySpec, a.n_segs),
        (Kernel::SnappySpecLater, later),
        (Kernel::SnappySpecRest, later),
    ] {
        if threads == 0 {
            continue;
        }
        let args = Args::new(kernel)
            .ptr(a.pages)
            .ptr(a.seg_page)
            .u32(a.n_segs)
            .ptr(a.bitmap)
            .ptr(a.exits)
            .ptr(a.outputs)
            .ptr(a.rest);
        q.queue(per(threads), args)?;
    }
    Ok(())
}

/// `gds_snappy_verify(const u64* pages, const u32* seg_page, u32 n_segs,
/// const u32* entries, const u64* before, const u32* bitmap, const u32*
/// exits, const u32* outputs, const u32* meets, u32* faults, u32* starts,
/// u32* verdicts, u32* real)`.
fn verify_args(a: &SnappyScan) -> Args {
    Args::new(Kernel::SnappyVerify)
        .ptr(a.pages)
        .ptr(a.seg_page)
        .u32(a.n_segs)
        .ptr(a.entries)
        .ptr(a.before)
        .ptr(a.bitmap)
        .ptr(a.exits)
        .ptr(a.outputs)
        .ptr(a.meets)
        .ptr(a.faults)
        .ptr(a.starts)
        .ptr(a.verdicts)
        .ptr(a.real)
}

/// `gds_snappy_finish(const u64* pages, u32 n_pages, const u32* faults,
/// const u64* before, const u64* outs, const u32* starts, u32* verdicts,
/// u64* src, u64* src_len, u64* dst_len, u64* tasks, u64 dummy, u32
/// own_decoder)`; `own_decoder` is 1 when `gds_snappy_decode` decodes the
/// pages (`real` set).
fn finish_args(a: &SnappyScan) -> Args {
    Args::new(Kernel::SnappyFinish)
        .ptr(a.pages)
        .u32(a.n_pages)
        .ptr(a.faults)
        .ptr(a.before)
        .ptr(a.outs)
        .ptr(a.starts)
        .ptr(a.verdicts)
        .ptr(a.src)
        .ptr(a.src_len)
        .ptr(a.dst_len)
        .ptr(a.tasks)
        .u64(a.dummy)
        .u32(u32::from(a.real != 0))
}

impl KernelSet {
    /// Queues the Snappy scan (`cuda/snappy_scan.cu`: six kernels, a thread
    /// per segment or per page) and then `gds_snappy_pieces` over its
    /// tasks: every page checked, its verdict and split in `verdicts`, its
    /// jobs in the Snappy call's arrays rewritten (refused pages pointed at
    /// `dummy`) and split pages' pieces written as streams of their own.
    ///
    /// # Safety
    /// Every address must be live device memory of the sizes
    /// [`snappy_scan::ScanLayout`] gives, the page table and segment table
    /// uploaded, the pages' streams and the pieces' buffer valid, all kept
    /// alive and unused by other work until the stream has passed the
    /// launches.
    pub unsafe fn snappy_scan(&self, stream: &Stream, a: &SnappyScan) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        scan(&mut q, a, |_| Ok(()))
    }

    /// [`KernelSet::snappy_scan`], calling `after(kernel)` once each of its
    /// kernels is queued (`scan_spec` after the three speculative launches,
    /// `scan_chain`, `scan_outs`, `scan_prefix`, `scan_verify`,
    /// `scan_finish`, `scan_pieces`), so that the decoder's trace can time
    /// them one by one.
    ///
    /// # Safety
    /// As [`KernelSet::snappy_scan`].
    pub unsafe fn snappy_scan_marked(
        &self,
        stream: &Stream,
        a: &SnappyScan,
        after: impl FnMut(&'static str) -> Result<(), KernelError>,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        scan(&mut q, a, after)
    }
}
