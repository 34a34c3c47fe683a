//! Snappy raw streams: the checked walk over their elements, and where a
//! page's 64 KiB pieces start.

use super::{byte, le, CompressedError};

/// Checks a raw Snappy stream that must decompress to exactly `size` bytes.
///
/// A table-driven step with no data-dependent branches walks the stream's
/// elements up to its last few bytes; the exact walk takes over there, or
/// at the first element the fast step finds wrong, so the verdict (kind and
/// position) is always the exact walk's.
pub fn check_snappy(data: &[u8], size: usize) -> Result<(), CompressedError> {
    walk_snappy(data, size, &mut |_: Element| {})
}

/// The output block Snappy compressors work in: the reference
/// implementation and the `snap` crate compress their input in independent
/// 64 KiB fragments, so no copy reaches back across a multiple of it and
/// every fragment's first element starts exactly there.
pub const SNAPPY_BLOCK: usize = 1 << 16;

/// A Snappy page whose output splits into pieces that decompress alone
/// (found by [`snappy_pieces`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnappyPieces {
    /// Output bytes of every piece but the last.
    pub piece: usize,
    /// Where each piece's first element is in the page's stream (the
    /// first right after the preamble).
    pub starts: Vec<u32>,
}

impl SnappyPieces {
    /// Number of pieces.
    pub fn count(&self) -> usize {
        self.starts.len()
    }

    /// Output bytes of piece `i` of a page of `size` bytes.
    pub fn out_len(&self, i: usize, size: usize) -> usize {
        size.saturating_sub(i * self.piece).min(self.piece)
    }

    /// The stream bytes holding piece `i`'s elements, in a stream of
    /// `stream_len` bytes.
    pub fn elements(&self, i: usize, stream_len: usize) -> std::ops::Range<usize> {
        let start = self.starts[i] as usize;
        let end = self.starts.get(i + 1).map_or(stream_len, |&e| e as usize);
        start..end
    }
}

/// Checks a raw Snappy stream as [`check_snappy`] does and finds where
/// each `piece`-byte piece of its output starts in the stream, when the
/// pieces can be decompressed independently.
///
/// Returns the pieces when an element starts exactly at every multiple of
/// `piece` in the output and no copy reaches back past the start of its
/// piece: then piece `i`'s elements ([`SnappyPieces::elements`]),
/// preceded by the varint of its length, are a Snappy stream of their own
/// that decompresses to output bytes `i * piece..`. `None` when the stream
/// does not split so (a compressor that does not work in fragments of
/// `piece` or a divisor of it), or when `piece` is 0 or not less than
/// `size`. The verdict on the stream is [`check_snappy`]'s.
///
/// ```
/// use gdscan::decode::page::validate::{snappy_pieces, SNAPPY_BLOCK};
/// let raw: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8 ^ (i / 977) as u8).collect();
/// let stream = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
/// let pieces = snappy_pieces(&stream, raw.len(), SNAPPY_BLOCK).unwrap().unwrap();
/// assert_eq!(pieces.count(), raw.len().div_ceil(SNAPPY_BLOCK));
/// assert_eq!(pieces.out_len(3, raw.len()), raw.len() - 3 * SNAPPY_BLOCK);
/// ```
pub fn snappy_pieces(
    data: &[u8],
    size: usize,
    piece: usize,
) -> Result<Option<SnappyPieces>, CompressedError> {
    let mut finder = PieceFinder::new(data, size, piece);
    walk_snappy(data, size, &mut |e: Element| finder.visit(e))?;
    Ok(finder.finish())
}

/// What [`snappy_pieces`] gathers as the walk visits a stream's elements.
pub(super) struct PieceFinder {
    /// The piece's output bytes; 0 when the page is not split.
    piece: usize,
    size: usize,
    starts: Vec<u32>,
    /// Where the current piece starts and ends in the output.
    piece_start: usize,
    boundary: usize,
    /// An element runs across a piece's end or copies from before it.
    whole: bool,
}

impl PieceFinder {
    /// A finder for a stream of `data` that makes `size` bytes, in pieces
    /// of `piece` (none when `piece` is 0 or not less than `size`, or the
    /// stream is too long for the starts' offsets).
    pub(super) fn new(data: &[u8], size: usize, piece: usize) -> PieceFinder {
        let piece = if piece == 0 || piece >= size || data.len() > u32::MAX as usize {
            0
        } else {
            piece
        };
        let mut starts = Vec::new();
        if piece > 0 {
            starts.reserve(size.div_ceil(piece));
            // The first piece starts after the preamble (checked again by
            // the walk).
            if let Ok(at) = snappy_preamble(data, size) {
                starts.push(at as u32);
            }
        }
        PieceFinder {
            piece,
            size,
            starts,
            piece_start: 0,
            boundary: piece,
            whole: false,
        }
    }

    #[inline(always)]
    pub(super) fn visit(&mut self, e: Element) {
        if self.piece == 0 {
            return;
        }
        // A copy from before its piece.
        self.whole |= e.offset > e.produced - self.piece_start;
        let end = e.produced + e.length;
        if end >= self.boundary {
            // The element ends its piece, or runs across its end.
            self.whole |= end > self.boundary;
            if end < self.size {
                self.starts.push(e.next as u32);
            }
            self.piece_start = self.boundary;
            self.boundary += self.piece;
        }
    }

    /// The pieces, when the stream splits (its walk having passed).
    pub(super) fn finish(self) -> Option<SnappyPieces> {
        let count = if self.piece == 0 {
            return None;
        } else {
            self.size.div_ceil(self.piece)
        };
        (!self.whole && self.starts.len() == count).then_some(SnappyPieces {
            piece: self.piece,
            starts: self.starts,
        })
    }
}

/// One element of a Snappy stream, as the walk sees it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Element {
    /// Output bytes before it.
    pub(super) produced: usize,
    /// Output bytes it makes.
    pub(super) length: usize,
    /// A copy's distance back (0 for a literal run).
    pub(super) offset: usize,
    /// Stream offset of the element after it.
    pub(super) next: usize,
}

/// The checked walk of [`check_snappy`], calling `visit` for every sound
/// element in stream order (the faulty one, if any, is not visited).
#[inline(always)]
pub(super) fn walk_snappy(
    data: &[u8],
    size: usize,
    visit: &mut impl FnMut(Element),
) -> Result<(), CompressedError> {
    let mut at = snappy_preamble(data, size)?;
    let mut produced = 0;
    while let Some((next, made, offset)) = snappy_fast_step(data, at, produced, size) {
        visit(Element {
            produced,
            length: made - produced,
            offset,
            next,
        });
        (at, produced) = (next, made);
    }
    snappy_walk_exact(data, at, produced, size, visit)
}

/// The preamble: the uncompressed length as a varint (at most 5 bytes),
/// which must be `size`. Returns the offset after it.
pub(super) fn snappy_preamble(data: &[u8], size: usize) -> Result<usize, CompressedError> {
    let mut at = 0usize;
    let mut declared = 0u64;
    for shift in (0..35).step_by(7) {
        let b = byte(data, at)?;
        at += 1;
        declared |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            break;
        }
        if shift == 28 {
            return Err(CompressedError::Truncated { at });
        }
    }
    if declared != size as u64 {
        return Err(CompressedError::LengthMismatch {
            stream: declared,
            header: size,
        });
    }
    Ok(at)
}

/// What a Snappy tag byte says about its element, laid out so that the
/// fast step needs one table load and no branch: a literal's length and
/// advance add the extra bytes' value under `literal_mask`, a copy's offset
/// under `offset_mask` (each 0 for the other kind).
#[derive(Clone, Copy)]
struct SnappyTag {
    /// Stream bytes the element takes before a literal's extra length:
    /// its header (the tag and its extra bytes), plus a literal's length
    /// when it is in the tag.
    advance: u16,
    /// Output bytes before a literal's extra length (a copy's whole length).
    length: u16,
    /// A one-byte-offset copy's high offset bits.
    offset_high: u16,
    /// A copy (else a literal run).
    copy: bool,
    /// Bits of the four bytes after the tag that count a literal's length
    /// minus one (those with extra bytes; 0 for the rest).
    literal_mask: u32,
    /// Bits of the four bytes after the tag that are a copy's offset.
    offset_mask: u32,
}

const fn snappy_tags() -> [SnappyTag; 256] {
    let mut t = [SnappyTag {
        advance: 0,
        length: 0,
        offset_high: 0,
        copy: false,
        literal_mask: 0,
        offset_mask: 0,
    }; 256];
    const MASK: [u32; 5] = [0, 0xff, 0xffff, 0xff_ffff, 0xffff_ffff];
    let mut i = 0;
    while i < 256 {
        let tag = i as u8;
        let upper = (tag >> 2) as u16;
        t[i] = match tag & 3 {
            0 if upper < 60 => SnappyTag {
                advance: 1 + upper + 1,
                length: upper + 1,
                offset_high: 0,
                copy: false,
                literal_mask: 0,
                offset_mask: 0,
            },
            0 => {
                let extra = upper - 59;
                SnappyTag {
                    advance: 1 + extra + 1,
                    length: 1,
                    offset_high: 0,
                    copy: false,
                    literal_mask: MASK[extra as usize],
                    offset_mask: 0,
                }
            }
            1 => SnappyTag {
                advance: 2,
                length: 4 + (upper & 7),
                offset_high: ((tag >> 5) as u16) << 8,
                copy: true,
                literal_mask: 0,
                offset_mask: MASK[1],
            },
            2 => SnappyTag {
                advance: 3,
                length: upper + 1,
                offset_high: 0,
                copy: true,
                literal_mask: 0,
                offset_mask: MASK[2],
            },
            _ => SnappyTag {
                advance: 5,
                length: upper + 1,
                offset_high: 0,
                copy: true,
                literal_mask: 0,
                offset_mask: MASK[4],
            },
        };
        i += 1;
    }
    t
}

static SNAPPY_TAGS: [SnappyTag; 256] = snappy_tags();

/// One element by the fast step, when its header and the four bytes after
/// its tag are in the stream and it is sound: the offset after it, the
/// bytes produced through it and a copy's offset (0 for a literal). `None`
/// hands over to the exact walk (the stream's last few bytes, or a fault
/// to report exactly). The next element's offset depends on one load of
/// the stream and one of the table; everything else is off that chain.
#[inline(always)]
pub(super) fn snappy_fast_step(
    data: &[u8],
    at: usize,
    produced: usize,
    size: usize,
) -> Option<(usize, usize, usize)> {
    let next = data.get(at..at + 5)?;
    let tag = SNAPPY_TAGS[next[0] as usize];
    let word = u32::from_le_bytes([next[1], next[2], next[3], next[4]]);
    // A literal's length beyond what its tag says (a u32 plus one fits a
    // usize on the 64-bit targets this builds for).
    let extra = (word & tag.literal_mask) as usize;
    let advance = tag.advance as usize + extra;
    let made = produced + tag.length as usize + extra;
    let offset = tag.offset_high as usize + (word & tag.offset_mask) as usize;
    let bad_offset = tag.copy && (offset == 0 || offset > produced);
    if bad_offset || made > size || at + advance > data.len() {
        return None;
    }
    Some((at + advance, made, offset))
}

/// The exact walk from element offset `at` with `produced` bytes made by
/// the elements before it: every element read with bounds checks, the
/// first fault reported with its position.
pub(super) fn snappy_walk_exact(
    data: &[u8],
    mut at: usize,
    mut produced: usize,
    size: usize,
    visit: &mut impl FnMut(Element),
) -> Result<(), CompressedError> {
    while at < data.len() {
        let start = at;
        let tag = data[at];
        at += 1;
        let (len, offset) = match tag & 3 {
            0 => {
                let mut len = (tag >> 2) as usize;
                if len >= 60 {
                    let n = len - 59;
                    len = le(data, at, n)?;
                    at += n;
                }
                let len = len + 1;
                if at + len > data.len() {
                    return Err(CompressedError::Truncated { at: start });
                }
                at += len;
                (len, None)
            }
            1 => {
                let len = 4 + ((tag >> 2) & 7) as usize;
                let offset = (((tag >> 5) as usize) << 8) | byte(data, at)? as usize;
                at += 1;
                (len, Some(offset))
            }
            2 => {
                let offset = le(data, at, 2)?;
                at += 2;
                (((tag >> 2) as usize) + 1, Some(offset))
            }
            _ => {
                let offset = le(data, at, 4)?;
                at += 4;
                (((tag >> 2) as usize) + 1, Some(offset))
            }
        };
        if let Some(offset) = offset {
            if offset == 0 || offset > produced {
                return Err(CompressedError::BadOffset {
                    at: start,
                    offset,
                    produced,
                });
            }
        }
        if produced + len > size {
            return Err(CompressedError::Overrun { at: start, size });
        }
        visit(Element {
            produced,
            length: len,
            offset: offset.unwrap_or(0),
            next: at,
        });
        produced += len;
    }
    if produced != size {
        return Err(CompressedError::Short { produced, size });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::tests::sample;
    use super::*;

    /// The exact walk alone, from the preamble.
    fn exact_only(data: &[u8], size: usize) -> Result<(), CompressedError> {
        let at = snappy_preamble(data, size)?;
        snappy_walk_exact(data, at, 0, size, &mut |_| {})
    }

    /// The fast walk changes nothing but speed: on sound streams and on
    /// thousands of corrupted ones (flips, random bytes, cuts, wrong
    /// sizes) the verdict and its position equal the exact walk's.
    #[test]
    fn the_fast_walk_gives_the_exact_verdicts() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let (mut errors, mut cases) = (0, 0);
        for n in [0usize, 3, 64, 5_000, 70_000] {
            let raw = sample(n, n as u64 + 5);
            let snappy = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            for case in 0..600 {
                let mut bad = snappy.clone();
                let at = (next() as usize) % bad.len();
                let size = match case % 5 {
                    0 => {
                        bad[at] ^= 1 << (next() % 8);
                        n
                    }
                    1 => {
                        bad[at] = next() as u8;
                        n
                    }
                    2 => {
                        bad.truncate(at);
                        n
                    }
                    3 => n + 1 + (next() % 3) as usize,
                    _ => n.saturating_sub(1),
                };
                let fast = check_snappy(&bad, size);
                assert_eq!(fast, exact_only(&bad, size), "n {n} case {case}");
                errors += usize::from(fast.is_err());
                cases += 1;
            }
        }
        assert!(errors > cases / 2, "{errors} errors in {cases} cases");
    }

    /// A stream whose copies run across a 64 KiB boundary of the output
    /// is sound but does not split; its verdict is still the check's.
    #[test]
    fn streams_not_in_fragments_stay_whole() {
        let size = 131_072usize;
        let mut stream = vec![0x80, 0x80, 0x08]; // varint 131072
        stream.extend([60 << 2, 99]); // a literal of 100 bytes
        stream.extend((0..100u8).map(|i| i.wrapping_mul(7)));
        let mut produced = 100;
        while produced < size {
            let len = (size - produced).min(64);
            stream.extend([(((len - 1) << 2) | 2) as u8, 100, 0]); // copy 100 back
            produced += len;
        }
        assert_eq!(check_snappy(&stream, size), Ok(()));
        assert_eq!(snappy_pieces(&stream, size, SNAPPY_BLOCK), Ok(None));
        // Whole when the piece is not shorter than the page.
        assert_eq!(snappy_pieces(&stream, size, size), Ok(None));
        assert_eq!(snappy_pieces(&stream, size, 0), Ok(None));
    }

    /// The pieces' walk gives the check's verdict on corrupted streams.
    #[test]
    fn pieces_keep_the_checks_verdicts() {
        let raw = sample(200_000, 9);
        let stream = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
        let pieces = snappy_pieces(&stream, raw.len(), SNAPPY_BLOCK)
            .unwrap()
            .unwrap();
        assert_eq!(pieces.count(), 4);
        assert_eq!(pieces.starts[0], 3);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for case in 0..2000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut bad = stream.clone();
            let at = (x as usize) % bad.len();
            if case % 2 == 0 {
                bad[at] ^= 1 << ((x >> 32) % 8);
            } else {
                bad.truncate(at);
            }
            let verdict = check_snappy(&bad, raw.len());
            let split = snappy_pieces(&bad, raw.len(), SNAPPY_BLOCK);
            assert_eq!(split.as_ref().err(), verdict.as_ref().err(), "case {case}");
            if let Ok(Some(p)) = split {
                // Pieces of a stream that still passes must still cover it.
                assert_eq!(p.count(), 4, "case {case}");
            }
        }
    }
}
