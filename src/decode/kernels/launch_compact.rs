//! The compaction kernels' launches (`cuda/compact.cu`): a mask's kept
//! rows found by a scan, and columns gathered to them (values, bitmaps,
//! list offsets and their children's rows). What the host does with them
//! is `decode::filter`'s compaction.

use crate::cuda::module::LaunchConfig;
use crate::cuda::Stream;

use super::args::{Args, Kernel, Queue};
use super::error::KernelError;
use super::set::KernelSet;

/// Threads per block of every compaction kernel (`GDS_COMPACT_BLOCK`).
pub const COMPACT_BLOCK: u32 = 256;
/// Items per tile of the scans (`GDS_COMPACT_TILE`): one 8-byte sum per
/// tile in the scans' scratch.
pub const COMPACT_TILE: u64 = 4096;
/// Error bit: a list's offsets are negative, decreasing or past its child
/// (`GDS_COMPACT_BAD_OFFSETS`).
pub const COMPACT_BAD_OFFSETS: u32 = 1;
/// Error bit: a position past its source's end (`GDS_COMPACT_OUT_OF_RANGE`).
pub const COMPACT_OUT_OF_RANGE: u32 = 2;

/// The most blocks of a launch: the kernels loop with the grid's stride.
const MAX_BLOCKS: u64 = 8192;

/// Tiles of a scan over `n` items (its sums' count).
pub fn compact_tiles(n: u64) -> u64 {
    n.div_ceil(COMPACT_TILE)
}

/// A grid of at most [`MAX_BLOCKS`] blocks over `blocks` blocks of work;
/// `None` without work.
fn config(blocks: u64) -> Option<LaunchConfig> {
    (blocks > 0).then(|| LaunchConfig::linear(blocks.min(MAX_BLOCKS) as u32, COMPACT_BLOCK))
}

/// A grid over `items` items, a thread each.
fn per_item(items: u64) -> Option<LaunchConfig> {
    config(items.div_ceil(u64::from(COMPACT_BLOCK)))
}

/// A scan over `n` items (mask bytes or u32 values): its input, scratch
/// and total.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactScan {
    /// Device address of the items.
    pub values: u64,
    /// Items.
    pub n: u64,
    /// 1: mask bytes (a byte counts 1 when it is not 0); 4: u32 values.
    pub width: u32,
    /// Device address of [`compact_tiles`]`(n)` u64 sums (8-byte aligned).
    pub sums: u64,
    /// Device address of one u64: the sum of the items.
    pub total: u64,
}

/// Each kept list's length, its offsets checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactLengths {
    /// Device address of the list's offsets (i32 or i64).
    pub offsets: u64,
    /// 4 (i32 offsets) or 8 (i64).
    pub width: u32,
    /// Offsets the buffer holds.
    pub offsets_count: u64,
    /// The position of row 0 in the offsets.
    pub first: u64,
    /// Device address of the `k` kept rows (u32).
    pub rows: u64,
    /// Kept rows.
    pub k: u32,
    /// Values of the list's child (offsets past it are an error).
    pub child_len: u64,
    /// Device address of `k` u32 lengths (written).
    pub lengths: u64,
    /// Device address of the u32 error word (bits ORed in).
    pub error: u64,
}

/// The child rows of the kept lists, from their new offsets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactExpand {
    /// Device address of the `k + 1` new offsets (as `width`).
    pub new_offsets: u64,
    /// 4 or 8.
    pub width: u32,
    /// Kept rows.
    pub k: u32,
    /// Device address of the list's old offsets.
    pub offsets: u64,
    /// The position of row 0 in the old offsets.
    pub first: u64,
    /// Device address of the `k` kept rows (u32).
    pub rows: u64,
    /// Child values kept (the last new offset).
    pub total: u64,
    /// Device address of `total` u32 child rows (written).
    pub child_rows: u64,
}

/// One gather of fixed-width items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactGather {
    /// Device address of the source items.
    pub src: u64,
    /// The position of row 0 in the source.
    pub first: u64,
    /// Items the source holds.
    pub src_count: u64,
    /// Bytes per item.
    pub width: u32,
    /// Device address of the `k` kept rows (u32).
    pub rows: u64,
    /// Kept rows.
    pub k: u32,
    /// Device address of `k * width` bytes (written).
    pub dst: u64,
    /// Device address of the u32 error word.
    pub error: u64,
}

/// One gather of bits (a validity or boolean bitmap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactBits {
    /// Device address of the source bitmap.
    pub src: u64,
    /// The bit of row 0.
    pub first: u64,
    /// Bits the source holds.
    pub src_bits: u64,
    /// Device address of the `k` kept rows (u32).
    pub rows: u64,
    /// Kept rows.
    pub k: u32,
    /// Device address of `(k + 31) / 32` u32 words, 4-byte aligned (written).
    pub dst: u64,
    /// Device address of a u32 the unset bits are added to, or 0.
    pub unset: u64,
    /// Device address of the u32 error word.
    pub error: u64,
}

/// `gds_compact_tile_sums(const u8* values, u64 n, u32 width, u64* sums)`
/// then `gds_compact_scan_sums(u64* sums, u32 n_tiles, u64* total)`.
pub(super) fn scan(q: &mut impl Queue, s: &CompactScan) -> Result<(), KernelError> {
    let n_tiles = compact_tiles(s.n);
    let tiles = u32::try_from(n_tiles).map_err(|_| KernelError::TooLarge {
        what: "items to scan",
        value: s.n,
    })?;
    if let Some(c) = config(n_tiles) {
        let args = Args::new(Kernel::CompactTileSums)
            .ptr(s.values)
            .u64(s.n)
            .u32(s.width)
            .ptr(s.sums);
        q.queue(c, args)?;
    }
    let args = Args::new(Kernel::CompactScanSums)
        .ptr(s.sums)
        .u32(tiles)
        .ptr(s.total);
    q.queue(LaunchConfig::linear(1, COMPACT_BLOCK), args)
}

/// `gds_compact_mask_rows(const u8* mask, u64 n, const u64* sums, u32* rows)`.
pub(super) fn mask_rows(
    q: &mut impl Queue,
    mask: u64,
    n: u64,
    sums: u64,
    rows: u64,
) -> Result<(), KernelError> {
    let Some(c) = config(compact_tiles(n)) else {
        return Ok(());
    };
    let args = Args::new(Kernel::CompactMaskRows)
        .ptr(mask)
        .u64(n)
        .ptr(sums)
        .ptr(rows);
    q.queue(c, args)
}

/// `gds_compact_scan_write(const u32* values, u64 n, const u64* sums, u32
/// width, u8* out)`.
pub(super) fn scan_write(
    q: &mut impl Queue,
    s: &CompactScan,
    out_width: u32,
    out: u64,
) -> Result<(), KernelError> {
    let Some(c) = config(compact_tiles(s.n)) else {
        return Ok(());
    };
    let args = Args::new(Kernel::CompactScanWrite)
        .ptr(s.values)
        .u64(s.n)
        .ptr(s.sums)
        .u32(out_width)
        .ptr(out);
    q.queue(c, args)
}

/// `gds_compact_list_lengths(const u8* offsets, u32 width, u64
/// offsets_count, u64 first, const u32* rows, u32 k, u64 child_len, u32*
/// lengths, u32* error)`.
pub(super) fn list_lengths(q: &mut impl Queue, l: &CompactLengths) -> Result<(), KernelError> {
    let Some(c) = per_item(u64::from(l.k)) else {
        return Ok(());
    };
    let args = Args::new(Kernel::CompactListLengths)
        .ptr(l.offsets)
        .u32(l.width)
        .u64(l.offsets_count)
        .u64(l.first)
        .ptr(l.rows)
        .u32(l.k)
        .u64(l.child_len)
        .ptr(l.lengths)
        .ptr(l.error);
    q.queue(c, args)
}

/// `gds_compact_expand(const u8* new_offsets, u32 width, u32 k, const u8*
/// offsets, u64 first, const u32* rows, u64 total, u32* child_rows)`.
pub(super) fn expand(q: &mut impl Queue, e: &CompactExpand) -> Result<(), KernelError> {
    let Some(c) = per_item(e.total) else {
        return Ok(());
    };
    let args = Args::new(Kernel::CompactExpand)
        .ptr(e.new_offsets)
        .u32(e.width)
        .u32(e.k)
        .ptr(e.offsets)
        .u64(e.first)
        .ptr(e.rows)
        .u64(e.total)
        .ptr(e.child_rows);
    q.queue(c, args)
}

/// `gds_compact_fixed_rows(const u32* rows, u32 k, u64 first, u32 size,
/// u32* child_rows)`.
pub(super) fn fixed_rows(
    q: &mut impl Queue,
    rows: u64,
    k: u32,
    first: u64,
    size: u32,
    child_rows: u64,
) -> Result<(), KernelError> {
    let Some(c) = per_item(u64::from(k) * u64::from(size)) else {
        return Ok(());
    };
    let args = Args::new(Kernel::CompactFixedRows)
        .ptr(rows)
        .u32(k)
        .u64(first)
        .u32(size)
        .ptr(child_rows);
    q.queue(c, args)
}

/// `gds_compact_gather(const u8* src, u64 first, u64 src_count, u32 width,
/// const u32* rows, u32 k, u8* dst, u32* error)`.
pub(super) fn gather(q: &mut impl Queue, g: &CompactGather) -> Result<(), KernelError> {
    let Some(c) = per_item(u64::from(g.k)) else {
        return Ok(());
    };
    let args = Args::new(Kernel::CompactGather)
        .ptr(g.src)
        .u64(g.first)
        .u64(g.src_count)
        .u32(g.width)
        .ptr(g.rows)
        .u32(g.k)
        .ptr(g.dst)
        .ptr(g.error);
    q.queue(c, args)
}

/// `gds_compact_bits(const u8* src, u64 first, u64 src_bits, const u32*
/// rows, u32 k, u32* dst, u32* unset, u32* error)`: a thread per output word.
pub(super) fn bits(q: &mut impl Queue, b: &CompactBits) -> Result<(), KernelError> {
    let Some(c) = per_item(u64::from(b.k).div_ceil(32)) else {
        return Ok(());
    };
    let args = Args::new(Kernel::CompactBits)
        .ptr(b.src)
        .u64(b.first)
        .u64(b.src_bits)
        .ptr(b.rows)
        .u32(b.k)
        .ptr(b.dst)
        .ptr(b.unset)
        .ptr(b.error);
    q.queue(c, args)
}

impl KernelSet {
    /// Queues the scan of `s.n` items: their tiles' sums at `s.sums` turned
    /// into the tiles' exclusive prefix, and their total at `s.total`.
    ///
    /// # Safety
    /// Every address of `s` a live device allocation of the size
    /// [`CompactScan`] says, on `stream`'s device, not used by other work
    /// and kept alive until the stream has passed the launches.
    pub unsafe fn compact_scan(&self, stream: &Stream, s: &CompactScan) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        scan(&mut q, s)
    }

    /// Queues the kept rows of a mask of `n` bytes at `mask` into `rows`
    /// (u32, as many as the mask's scan counted), after
    /// [`KernelSet::compact_scan`] of the mask (width 1) into `sums`.
    ///
    /// # Safety
    /// As [`KernelSet::compact_scan`]; `rows` holds the scan's total u32s.
    pub unsafe fn compact_mask_rows(
        &self,
        stream: &Stream,
        mask: u64,
        n: u64,
        sums: u64,
        rows: u64,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        mask_rows(&mut q, mask, n, sums, rows)
    }

    /// Queues the exclusive prefix of `s`'s u32 values and their sum, `n +
    /// 1` values of `out_width` bytes (4 or 8) at `out`, after
    /// [`KernelSet::compact_scan`] of `s`.
    ///
    /// # Safety
    /// As [`KernelSet::compact_scan`]; `out` holds `(n + 1) * out_width`
    /// bytes, aligned to `out_width`, and the sum fits it.
    pub unsafe fn compact_scan_write(
        &self,
        stream: &Stream,
        s: &CompactScan,
        out_width: u32,
        out: u64,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        scan_write(&mut q, s, out_width, out)
    }

    /// Queues the kept lists' lengths ([`CompactLengths`]).
    ///
    /// # Safety
    /// As [`KernelSet::compact_scan`], for the addresses of `l`.
    pub unsafe fn compact_list_lengths(
        &self,
        stream: &Stream,
        l: &CompactLengths,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        list_lengths(&mut q, l)
    }

    /// Queues the kept lists' child rows ([`CompactExpand`]).
    ///
    /// # Safety
    /// As [`KernelSet::compact_scan`], for the addresses of `e`; the old
    /// offsets at the kept rows checked by
    /// [`KernelSet::compact_list_lengths`] (no error).
    pub unsafe fn compact_expand(
        &self,
        stream: &Stream,
        e: &CompactExpand,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        expand(&mut q, e)
    }

    /// Queues the child rows of `k` kept fixed-size lists of `size` values
    /// (`k * size` u32 at `child_rows`, fitting u32).
    ///
    /// # Safety
    /// As [`KernelSet::compact_scan`], for `rows` (`k` u32) and `child_rows`.
    pub unsafe fn compact_fixed_rows(
        &self,
        stream: &Stream,
        rows: u64,
        k: u32,
        first: u64,
        size: u32,
        child_rows: u64,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        fixed_rows(&mut q, rows, k, first, size, child_rows)
    }

    /// Queues a gather of fixed-width items ([`CompactGather`]).
    ///
    /// # Safety
    /// As [`KernelSet::compact_scan`], for the addresses of `g` (the source
    /// holding `src_count` items).
    pub unsafe fn compact_gather(
        &self,
        stream: &Stream,
        g: &CompactGather,
    ) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        gather(&mut q, g)
    }

    /// Queues a gather of bits ([`CompactBits`]).
    ///
    /// # Safety
    /// As [`KernelSet::compact_scan`], for the addresses of `b` (the source
    /// holding `src_bits` bits).
    pub unsafe fn compact_bits(&self, stream: &Stream, b: &CompactBits) -> Result<(), KernelError> {
        // SAFETY: the caller answers for the addresses (this function's contract).
        let mut q = unsafe { self.on(stream) };
        bits(&mut q, b)
    }
}
