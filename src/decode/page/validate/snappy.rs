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
    if piece == 0 || piece >= size || data.len() > u32::MAX as usize {
        return check_snappy(data, size).map(|_| None);
    }
    let count = size.div_ceil(piece);
    let mut starts: Vec<u32> = Vec::with_capacity(count);
    // The first piece starts after the preamble (checked again by the walk).
    if let Ok(at) = snappy_preamble(data, size) {
        starts.push(at as u32);
    }
    let (mut piece_start, mut boundary) = (0usize, piece);
    let mut whole = false;
    walk_snappy(data, size, &mut |e: Element| {
        // A copy from before its piece.
        whole |= e.offset > e.produced - piece_start;
        let end = e.produced + e.length;
        if end >= boundary {
            // The element ends its piece, or runs across its end.
            whole |= end > boundary;
            if end < size {
                starts.push(e.next as u32);
            }
            piece_start = boundary;
            boundary += piece;
        }
    })?;
    Ok((!whole && starts.len() == count).then_some(SnappyPieces { piece, starts }))
}

/// One element of a Snappy stream, as the walk sees it.
#[derive(Debug, Clone, Copy)]
struct Element {
    /// Output bytes before it.
    produced: usize,
    /// Output bytes it makes.
    length: usize,
    /// A copy's distance back (0 for a literal run).
    offset: usize,
    /// Stream offset of the element after it.
    next: usize,
}

/// The checked walk of [`check_snappy`], calling `visit` for every sound
/// element in stream order (the faulty one, if any, is not visited).
#[inline(always)]
fn walk_snappy(
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
fn snappy_preamble(data: &[u8], size: usize) -> Result<usize, CompressedError> {
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

/// What a Snappy tag byte says about its element.
#[derive(Clone, Copy)]
struct SnappyTag {
    /// Bytes of the element's header (the tag and its extra bytes).
    header: u8,
    /// A literal run (else a copy).
    literal: bool,
    /// Extra bytes after the tag that are read as a little-endian number:
    /// a literal's length minus one, or a copy's offset (low bits).
    extra: u8,
    /// The length (a literal's when `extra` is 0; 1 when it has extra
    /// bytes, which add to it).
    length: u16,
    /// A one-byte-offset copy's high offset bits.
    offset_high: u16,
}

const fn snappy_tags() -> [SnappyTag; 256] {
    let mut t = [SnappyTag {
        header: 0,
        literal: false,
        extra: 0,
        length: 0,
        offset_high: 0,
    }; 256];
    let mut i = 0;
    while i < 256 {
        let tag = i as u8;
        let upper = (tag >> 2) as u16;
        t[i] = match tag & 3 {
            0 if upper < 60 => SnappyTag {
                header: 1,
                literal: true,
                extra: 0,
                length: upper + 1,
                offset_high: 0,
            },
            0 => SnappyTag {
                header: 1 + (upper - 59) as u8,
                literal: true,
                extra: (upper - 59) as u8,
                length: 1,
                offset_high: 0,
            },
            1 => SnappyTag {
                header: 2,
                literal: false,
                extra: 1,
                length: 4 + (upper & 7),
                offset_high: ((tag >> 5) as u16) << 8,
            },
            2 => SnappyTag {
                header: 3,
                literal: false,
                extra: 2,
                length: upper + 1,
                offset_high: 0,
            },
            _ => SnappyTag {
                header: 5,
                literal: false,
                extra: 4,
                length: upper + 1,
                offset_high: 0,
            },
        };
        i += 1;
    }
    t
}

static SNAPPY_TAGS: [SnappyTag; 256] = snappy_tags();
const EXTRA_MASK: [u32; 5] = [0, 0xff, 0xffff, 0xff_ffff, 0xffff_ffff];

/// One element by the fast step, when its header and the four bytes after
/// its tag are in the stream and it is sound: the offset after it, the
/// bytes produced through it and a copy's offset (0 for a literal). `None` hands over to the exact walk (the
/// stream's last few bytes, or a fault to report exactly).
#[inline(always)]
fn snappy_fast_step(
    data: &[u8],
    at: usize,
    produced: usize,
    size: usize,
) -> Option<(usize, usize, usize)> {
    let next = data.get(at..at + 5)?;
    let tag = SNAPPY_TAGS[next[0] as usize];
    let word = u32::from_le_bytes([next[1], next[2], next[3], next[4]]);
    let value = (word & EXTRA_MASK[tag.extra as usize]) as usize;
    let (length, advance) = if tag.literal {
        let length = tag.length as usize + value;
        (length, tag.header as usize + length)
    } else {
        (tag.length as usize, tag.header as usize)
    };
    let offset = tag.offset_high as usize + value;
    let bad_offset = !tag.literal && (offset == 0 || offset > produced);
    let produced = produced + length;
    if bad_offset || produced > size || at + advance > data.len() {
        return None;
    }
    Some((at + advance, produced, if tag.literal { 0 } else { offset }))
}

/// The exact walk from element offset `at` with `produced` bytes made by
/// the elements before it: every element read with bounds checks, the
/// first fault reported with its position.
fn snappy_walk_exact(
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
