//! Opportunistic O_DIRECT: which part of a range may bypass the page cache
//! (pure arithmetic, no I/O).
//!
//! O_DIRECT needs the file offset, the length and the memory address all
//! aligned (4 KiB is safe on every Linux file system). A range is cut into an
//! unaligned head (buffered), an aligned middle (direct) and a tail (buffered).

/// Alignment required for O_DIRECT transfers.
pub(super) const DIRECT_ALIGN: usize = 4096;

/// One piece of a range and whether it may go through O_DIRECT.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Segment {
    /// Offset of the piece relative to the start of the range.
    pub start: usize,
    /// Length of the piece.
    pub len: usize,
    /// Whether this piece is aligned for O_DIRECT.
    pub direct: bool,
}

/// Cuts `len` bytes at `file_offset`, landing at memory address `addr`, into
/// at most three segments (head, middle, tail). The middle is direct only when
/// the memory address at its start is aligned as well; otherwise the whole
/// range is one buffered segment.
pub(super) fn split_for_direct(
    file_offset: u64,
    addr: usize,
    len: usize,
    align: usize,
) -> Vec<Segment> {
    let whole = vec![Segment {
        start: 0,
        len,
        direct: false,
    }];
    if len == 0 || align == 0 {
        return whole;
    }
    let misalign = (file_offset % align as u64) as usize;
    let head = if misalign == 0 { 0 } else { align - misalign };
    if head >= len {
        return whole;
    }
    let middle = (len - head) / align * align;
    if middle == 0 || (addr + head) % align != 0 {
        return whole;
    }
    let tail = len - head - middle;
    let mut out = Vec::with_capacity(3);
    if head > 0 {
        out.push(Segment {
            start: 0,
            len: head,
            direct: false,
        });
    }
    out.push(Segment {
        start: head,
        len: middle,
        direct: true,
    });
    if tail > 0 {
        out.push(Segment {
            start: head + middle,
            len: tail,
            direct: false,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fully_aligned_range_is_one_direct_segment() {
        let s = split_for_direct(8192, 4096 * 10, 8192, 4096);
        assert_eq!(
            s,
            vec![Segment {
                start: 0,
                len: 8192,
                direct: true
            }]
        );
    }

    #[test]
    fn head_middle_tail() {
        // file offset 100: head of 3996 bytes, then aligned middle, then tail
        let addr = 4096 * 4 - 3996; // so that addr + head is aligned
        let s = split_for_direct(100, addr, 3996 + 8192 + 10, 4096);
        assert_eq!(s.len(), 3);
        assert_eq!((s[0].start, s[0].len, s[0].direct), (0, 3996, false));
        assert_eq!((s[1].start, s[1].len, s[1].direct), (3996, 8192, true));
        assert_eq!(
            (s[2].start, s[2].len, s[2].direct),
            (3996 + 8192, 10, false)
        );
    }

    #[test]
    fn misaligned_memory_falls_back_to_buffered() {
        let s = split_for_direct(0, 4096 + 1, 8192, 4096);
        assert_eq!(s.len(), 1);
        assert!(!s[0].direct);
    }

    #[test]
    fn short_ranges_stay_buffered() {
        assert!(!split_for_direct(0, 0, 100, 4096)[0].direct);
        assert!(!split_for_direct(10, 0, 4000, 4096)[0].direct);
        assert!(!split_for_direct(0, 0, 0, 4096)[0].direct);
    }

    #[test]
    fn segments_cover_the_range() {
        for off in [0u64, 1, 4095, 4096, 5000] {
            for len in [1usize, 4096, 4097, 20_000] {
                let addr = 4096 * 8 - (off % 4096) as usize;
                let segs = split_for_direct(off, addr, len, 4096);
                let mut pos = 0;
                for s in &segs {
                    assert_eq!(s.start, pos);
                    if s.direct {
                        assert_eq!((off + s.start as u64) % 4096, 0);
                        assert_eq!(s.len % 4096, 0);
                        assert_eq!((addr + s.start) % 4096, 0);
                    }
                    pos += s.len;
                }
                assert_eq!(pos, len);
            }
        }
    }
}
