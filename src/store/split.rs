//! Splitting reads into store requests of bounded size (pure arithmetic).

use crate::engine::RangeRead;

/// Splits every read longer than `max_request` into the fewest pieces of at
/// most `max_request` bytes, their sizes differing by at most one byte (so no
/// request is a small tail), in order; each piece keeps its place in the
/// buffer. Empty reads are dropped.
pub(super) fn split_reads(reads: &[RangeRead], max_request: u64) -> Vec<RangeRead> {
    let max = max_request.max(1);
    let mut out = Vec::with_capacity(reads.len());
    for r in reads.iter().filter(|r| r.len > 0) {
        let len = r.len as u64;
        let pieces = len.div_ceil(max);
        let (base, extra) = (len / pieces, len % pieces);
        let mut at = 0u64;
        for i in 0..pieces {
            let n = base + u64::from(i < extra);
            out.push(RangeRead {
                file_offset: r.file_offset + at,
                buffer_offset: r.buffer_offset + at as usize,
                len: n as usize,
            });
            at += n;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(file_offset: u64, buffer_offset: usize, len: usize) -> RangeRead {
        RangeRead {
            file_offset,
            buffer_offset,
            len,
        }
    }

    #[test]
    fn pieces_cover_each_read_exactly_and_respect_the_cap() {
        for len in [1usize, 7, 100, 1000, 1023, 1024, 1025, 4096, 10_001] {
            for max in [1u64, 3, 100, 1024, 5000, 1 << 20] {
                let reads = [read(17, 5, len), read(50_000, 5 + len, 3)];
                let pieces = split_reads(&reads, max);
                for r in &reads {
                    let mine: Vec<_> = pieces
                        .iter()
                        .filter(|p| {
                            p.file_offset >= r.file_offset
                                && p.file_offset < r.file_offset + r.len as u64
                        })
                        .collect();
                    assert_eq!(mine.iter().map(|p| p.len).sum::<usize>(), r.len);
                    let mut at = r.file_offset;
                    for p in &mine {
                        assert_eq!(p.file_offset, at, "contiguous, in order");
                        assert_eq!(
                            p.buffer_offset - r.buffer_offset,
                            (p.file_offset - r.file_offset) as usize
                        );
                        assert!(p.len as u64 <= max && p.len > 0);
                        at += p.len as u64;
                    }
                    let expected = (r.len as u64).div_ceil(max) as usize;
                    assert_eq!(
                        mine.len(),
                        expected,
                        "fewest pieces for len {len} max {max}"
                    );
                    let (lo, hi) = mine.iter().fold((usize::MAX, 0), |(lo, hi), p| {
                        (lo.min(p.len), hi.max(p.len))
                    });
                    assert!(hi - lo <= 1, "balanced: {lo}..{hi}");
                }
            }
        }
    }

    #[test]
    fn empty_reads_vanish_and_zero_cap_means_one_byte() {
        assert!(split_reads(&[read(0, 0, 0)], 10).is_empty());
        assert_eq!(split_reads(&[read(0, 0, 3)], 0).len(), 3);
    }
}
