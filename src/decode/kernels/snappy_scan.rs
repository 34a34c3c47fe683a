//! The GPU's check of Snappy pages, spread over segments of their streams
//! (`cuda/snappy_scan.cu`): the tables the host lays out for it, the
//! sizes of its device arrays, and what its results mean.
//!
//! One thread walks each [`SCAN_SEGMENT`]-byte segment of every page, so a
//! group's check lasts about as long as one segment's walk, not as long as
//! its longest page; the same walk finds where each [`SNAPPY_PIECE`] of a
//! page's output starts, so nvCOMP can take a long page as many jobs.

use std::ops::Range;

use super::check::snappy_check_error;
use crate::decode::page::validate::{CompressedError, SNAPPY_BLOCK};

/// Threads per block of the scan's kernels (a thread per segment or page).
pub const SCAN_BLOCK: u32 = 128;
/// Threads per block of `gds_snappy_decode` (`cuda/snappy_decode.cu`: a
/// warp per job).
pub const UNSNAP_BLOCK: u32 = 128;
/// Stream bytes each thread walks.
pub const SCAN_SEGMENT: usize = 2048;
/// Speculative walks per segment, begun at its first bytes one after the
/// other. With one, the real chain sometimes ran beside the speculative
/// one through the whole segment without meeting it (elements of two or
/// three bytes, the two chains out of step), and the one thread per page
/// that joins the segments then walked the whole segment itself: on SF 1
/// lineitem 631 such segments, up to 13 in one page (14 000 elements walked
/// in one thread, the scan's 10 ms per group on the H200). With two, 82;
/// three, 7; four, 4 in the whole file, none twice in a page. Three is the
/// default (`KernelConfig::scan_starts` sets another): a quarter less
/// walking than four for a few more segments joined the slow way
/// (BENCHMARKS.md). Walk 0 of every segment runs first (`gds_snappy_spec`);
/// the later ones (`gds_snappy_spec_later`) stop where they land on walk
/// 0's path, so they cost a few elements each unless out of step with it,
/// and those still out of step after a few dozen elements are walked whole
/// by `gds_snappy_spec_rest`, side by side.
pub const SCAN_STARTS: usize = crate::config::decode::KernelConfig::DEFAULT.scan_starts;

/// 32-bit words of one speculative walk's bitmap (a bit per stream byte of
/// its segment).
pub const SCAN_SEGMENT_WORDS: usize = SCAN_SEGMENT / 32;
/// Elements of a speculative walk whose figures its record keeps one by
/// one: the output bytes of its first 1, 2, ... elements (so the outs
/// kernel finds the walk's output from where the real chain meets it
/// without walking it again when that is among its first offsets), and
/// each of the first elements' copy margin (below). Where the real chain
/// enters a segment at a later walk's start, that walk stopped on walk 0's
/// path and the real chain meets walk 0 some elements in: the record must
/// reach that far for the verify kernel to prove the rest of the segment
/// without walking it (`benches/probe/snappy_walks.py`: with 8, 1 104 of
/// SF 0.2 lineitem's 16 558 segments unproved, walked in most of the
/// kernel's warps; with 32, 96).
pub const SCAN_WALK_WORDS: usize = 32;
/// 32-bit words of a speculative walk's record: its elements' output
/// bytes; the output bytes of its first 1 to [`SCAN_WALK_WORDS`] - 1
/// elements; the copy margin (an i32: a copy's offset less the walk's
/// output before it, `i32::MIN` for a literal, `i32::MAX` for an offset of
/// 0 or of 2^31 and more) of its first [`SCAN_WALK_WORDS`] elements; and
/// the largest margin of the others. From these the verify kernel proves a
/// segment sound without walking it again where the real chain met the
/// walk among its first elements (`gds_snappy_verify`).
pub const SCAN_RECORD_WORDS: usize = 2 * SCAN_WALK_WORDS + 1;
/// 64-bit words of a page's entry in the page table.
pub const SCAN_PAGE_WORDS: usize = 10;
/// 32-bit words of a page's result: `[code, at, a, b, crosses, split, 0, 0]`.
pub const SCAN_RESULT_WORDS: usize = 8;
/// Output bytes of a piece (the Snappy compressors' fragment).
pub const SNAPPY_PIECE: usize = SNAPPY_BLOCK;
/// Bytes a piece's stream may add to its elements: the varint of a
/// length up to [`SNAPPY_PIECE`].
pub const PIECE_HEAD: usize = 3;

/// One Snappy page to check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ScanInput {
    /// Device address of its stream.
    pub src: u64,
    /// Stream bytes.
    pub len: usize,
    /// The page header's uncompressed size.
    pub size: usize,
    /// Where its output goes (device address).
    pub dst: u64,
}

/// The host's tables and the device arrays' sizes for one scan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScanLayout {
    /// Speculative walks per segment (the kernels' `scan_starts`).
    walk_starts: usize,
    /// Per page: `[src, len, size, seg_first, n_segs, bitmap_first,
    /// job_first, n_pieces, region offset, starts_first]` (the region's
    /// device address is added by [`ScanLayout::page_table`]).
    pages: Vec<u64>,
    /// The page of each segment.
    pub seg_page: Vec<u32>,
    /// 32-bit words of the bitmaps of visited offsets
    /// ([`SCAN_SEGMENT_WORDS`] per speculative walk, [`SCAN_STARTS`] walks
    /// per segment).
    pub bitmap_words: usize,
    /// Piece starts (one per piece of a page that may split).
    pub starts: usize,
    /// Bytes of the pieces' streams.
    pub region_bytes: usize,
    /// Per page, its jobs in the Snappy call (from the `job_first` given).
    pub page_jobs: Vec<Range<usize>>,
    /// Per job: (dst, dst_len), the job's output as it is when the page
    /// splits (`gds_snappy_finish` makes the first job the whole page
    /// otherwise).
    pub job_outputs: Vec<(u64, usize)>,
}

impl Default for ScanLayout {
    fn default() -> Self {
        ScanLayout::empty(SCAN_STARTS)
    }
}

impl ScanLayout {
    /// An empty layout for kernels compiled with `walk_starts` walks per
    /// segment (`KernelConfig::scan_starts`).
    pub fn empty(walk_starts: usize) -> ScanLayout {
        ScanLayout {
            walk_starts,
            pages: Vec::new(),
            seg_page: Vec::new(),
            bitmap_words: 0,
            starts: 0,
            region_bytes: 0,
            page_jobs: Vec::new(),
            job_outputs: Vec::new(),
        }
    }

    /// Sets the speculative walks per segment of later layouts (the
    /// kernels' `KernelConfig::scan_starts`).
    pub fn set_walk_starts(&mut self, walk_starts: usize) {
        self.walk_starts = walk_starts;
    }

    /// Lays out `pages`, their jobs numbered from `job_first`; pages over
    /// [`SNAPPY_PIECE`] get one job per piece when `split` is on
    /// ([`SCAN_STARTS`] walks per segment).
    pub fn new(pages: &[ScanInput], split: bool, job_first: usize) -> ScanLayout {
        let mut l = ScanLayout::default();
        l.refill(pages, split, job_first);
        l
    }

    /// As [`ScanLayout::new`], into this layout's tables (their memory
    /// kept from one group to the next: fresh tables of a group of SF 10
    /// lineitem's columns, about 0.7 MB, cost the decoder's thread more in
    /// page faults than in filling them).
    pub fn refill(&mut self, pages: &[ScanInput], split: bool, job_first: usize) {
        let n_pieces_of = |p: &ScanInput| {
            if split && p.size > SNAPPY_PIECE {
                p.size.div_ceil(SNAPPY_PIECE)
            } else {
                1
            }
        };
        let (total_segs, total_jobs) = pages.iter().fold((0, 0), |(s, j), p| {
            (s + p.len.div_ceil(SCAN_SEGMENT), j + n_pieces_of(p))
        });
        let l = self;
        l.pages.clear();
        l.seg_page.clear();
        l.page_jobs.clear();
        l.job_outputs.clear();
        l.bitmap_words = 0;
        l.starts = 0;
        l.region_bytes = 0;
        l.pages.reserve(SCAN_PAGE_WORDS * pages.len());
        l.seg_page.reserve(total_segs);
        l.page_jobs.reserve(pages.len());
        l.job_outputs.reserve(total_jobs);
        let mut job = job_first;
        let mut segs = 0usize;
        let starts = l.walk_starts;
        for (i, p) in pages.iter().enumerate() {
            let n_segs = p.len.div_ceil(SCAN_SEGMENT);
            let n_pieces = n_pieces_of(p);
            let region = if n_pieces > 1 {
                let at = l.region_bytes;
                l.region_bytes += (p.len + PIECE_HEAD * n_pieces).next_multiple_of(16);
                at
            } else {
                0
            };
            l.pages.extend([
                p.src,
                p.len as u64,
                p.size as u64,
                segs as u64,
                n_segs as u64,
                l.bitmap_words as u64,
                job as u64,
                n_pieces as u64,
                region as u64,
                l.starts as u64,
            ]);
            l.seg_page.extend(std::iter::repeat_n(i as u32, n_segs));
            segs += n_segs;
            l.bitmap_words += n_segs * starts * SCAN_SEGMENT_WORDS;
            if n_pieces > 1 {
                l.starts += n_pieces;
            }
            l.page_jobs.push(job..job + n_pieces);
            for j in 0..n_pieces {
                let out = if n_pieces == 1 {
                    p.size
                } else {
                    (p.size - j * SNAPPY_PIECE).min(SNAPPY_PIECE)
                };
                l.job_outputs.push((p.dst + (j * SNAPPY_PIECE) as u64, out));
            }
            job += n_pieces;
        }
    }

    /// Pages laid out.
    pub fn n_pages(&self) -> usize {
        self.page_jobs.len()
    }

    /// Segments (threads of the per-segment kernels).
    pub fn n_segs(&self) -> usize {
        self.seg_page.len()
    }

    /// Speculative walks (threads of `gds_snappy_spec`, and the entries of
    /// its `exits` array): the kernels' `scan_starts` per segment.
    pub fn n_walks(&self) -> usize {
        self.n_segs() * self.walk_starts
    }

    /// Later speculative walks (all but walk 0 of each segment): the
    /// entries of the list of those left to `gds_snappy_spec_rest`.
    pub fn n_later_walks(&self) -> usize {
        self.n_segs() * self.walk_starts.saturating_sub(1)
    }

    /// Jobs of the pages, in order.
    pub fn n_jobs(&self) -> usize {
        self.job_outputs.len()
    }

    /// The page table with the pieces' buffer at `region_base`.
    pub fn page_table(&self, region_base: u64) -> Vec<u64> {
        let mut t = Vec::with_capacity(self.pages.len());
        self.extend_page_table(&mut t, region_base);
        t
    }

    /// Appends [`ScanLayout::page_table`] to `words`.
    pub fn extend_page_table(&self, words: &mut Vec<u64>, region_base: u64) {
        words.extend(self.pages.chunks_exact(SCAN_PAGE_WORDS).flat_map(|page| {
            let mut entry = [0u64; SCAN_PAGE_WORDS];
            entry.copy_from_slice(page);
            entry[8] = if entry[7] > 1 {
                entry[8] + region_base
            } else {
                0
            };
            entry
        }));
    }

    /// Appends the page of each segment to `words`, two to a word (the
    /// first in the low half).
    pub fn extend_seg_pages(&self, words: &mut Vec<u64>) {
        words.extend(
            self.seg_page
                .chunks(2)
                .map(|c| u64::from(c[0]) | (u64::from(*c.get(1).unwrap_or(&0)) << 32)),
        );
    }
}

/// What the scan found in one page, from its result words: the fault, if
/// any (as the host check reports it), and whether the page was split.
pub fn scan_result(words: &[u32], size: usize) -> (Option<CompressedError>, bool) {
    let fault = snappy_check_error([words[0], words[1], words[2], words[3]], size);
    (fault, words[5] == 1)
}

/// Output bytes job `j` of a page of `size` bytes makes: its piece when
/// the page was split, else the whole page in the first job and nothing in
/// the others.
pub fn job_output(j: usize, size: usize, split: bool) -> usize {
    match (split, j) {
        (true, _) => size.saturating_sub(j * SNAPPY_PIECE).min(SNAPPY_PIECE),
        (false, 0) => size,
        (false, _) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_and_pieces_cover_every_page() {
        let pages = [
            ScanInput {
                src: 0x1000,
                len: 10,
                size: 100,
                dst: 0x9000,
            },
            ScanInput {
                src: 0x2000,
                len: 5000,
                size: 200_000,
                dst: 0x10_0000,
            },
            ScanInput {
                src: 0x4000,
                len: 0,
                size: 0,
                dst: 0x20_0000,
            },
            ScanInput {
                src: 0x5000,
                len: 2048,
                size: 65_536,
                dst: 0x30_0000,
            },
        ];
        let l = ScanLayout::new(&pages, true, 7);
        assert_eq!(l.n_pages(), 4);
        assert_eq!(l.seg_page, vec![0, 1, 1, 1, 3]);
        assert_eq!(l.n_walks(), 5 * SCAN_STARTS);
        // Walks 1.. of each segment: the list gds_snappy_spec_rest takes.
        assert_eq!(l.n_later_walks(), 5 * (SCAN_STARTS - 1));
        let mut one = ScanLayout::empty(1);
        one.refill(&pages, true, 7);
        assert_eq!(one.n_later_walks(), 0);
        assert_eq!(l.bitmap_words, 5 * SCAN_STARTS * SCAN_SEGMENT / 32);
        assert_eq!(l.page_jobs, vec![7..8, 8..12, 12..13, 13..14]);
        assert_eq!(l.n_jobs(), 7);
        assert_eq!(l.starts, 4);
        assert_eq!(l.region_bytes, (5000 + 3 * 4usize).next_multiple_of(16));
        assert_eq!(
            l.job_outputs[1..5],
            [
                (0x10_0000, 65_536),
                (0x10_0000 + 65_536, 65_536),
                (0x10_0000 + 131_072, 65_536),
                (0x10_0000 + 196_608, 200_000 - 196_608)
            ]
        );
        let t = l.page_table(0xa000_0000);
        assert_eq!(t.len(), 4 * SCAN_PAGE_WORDS);
        assert_eq!(
            &t[10..20],
            &[
                0x2000,
                5000,
                200_000,
                1,
                3,
                (SCAN_STARTS * SCAN_SEGMENT_WORDS) as u64,
                8,
                4,
                0xa000_0000,
                0
            ]
        );
        assert_eq!(t[8], 0);
        // Without splitting every page is one job.
        let whole = ScanLayout::new(&pages, false, 0);
        assert_eq!(whole.n_jobs(), 4);
        assert_eq!(whole.region_bytes, 0);
    }

    #[test]
    fn job_outputs_follow_the_split() {
        assert_eq!(job_output(0, 200_000, true), 65_536);
        assert_eq!(job_output(3, 200_000, true), 200_000 - 3 * 65_536);
        assert_eq!(job_output(0, 200_000, false), 200_000);
        assert_eq!(job_output(2, 200_000, false), 0);
        assert_eq!(job_output(0, 100, false), 100);
        let ok = [0u32, 0, 0, 0, 0, 1, 0, 0];
        assert_eq!(scan_result(&ok, 10), (None, true));
        let short = [5u32, 0, 6, 10, 0, 0, 0, 0];
        assert_eq!(
            scan_result(&short, 10),
            (
                Some(CompressedError::Short {
                    produced: 6,
                    size: 10
                }),
                false
            )
        );
    }
}
