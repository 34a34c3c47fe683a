//! Snappy raw streams: the preamble, what each tag byte says, the exact
//! walk over the elements, and where a page's 64 KiB pieces start (the
//! fast walk built on them is in `snappy_walk.rs`).

use super::{byte, le, CompressedError};

/// The output block Snappy compressors work in: the reference
/// implementation and the `snap` crate compress their input in independent
/// 64 KiB fragments, so no copy reaches back across a multiple of it and
/// every fragment's first element starts exactly there.
pub const SNAPPY_BLOCK: usize = 1 << 16;

/// A Snappy page whose output splits into pieces that decompress alone
/// (found by [`super::snappy_pieces`]).
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

/// What [`super::snappy_pieces`] gathers as the walk visits a stream's elements.
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
            // Never reached without pieces.
            boundary: if piece == 0 { usize::MAX } else { piece },
            whole: false,
        }
    }

    #[inline(always)]
    pub(super) fn visit(&mut self, e: Element) {
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
        if self.piece == 0 {
            return None;
        }
        let count = self.size.div_ceil(self.piece);
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
pub(super) struct SnappyTag {
    /// Stream bytes the element takes before a literal's extra length:
    /// its header (the tag and its extra bytes), plus a literal's length
    /// when it is in the tag.
    pub(super) advance: u16,
    /// Output bytes before a literal's extra length (a copy's whole length).
    pub(super) length: u16,
    /// A one-byte-offset copy's high offset bits.
    pub(super) offset_high: u16,
    /// A copy (else a literal run).
    pub(super) copy: bool,
    /// Bits of the four bytes after the tag that count a literal's length
    /// minus one (those with extra bytes; 0 for the rest).
    pub(super) literal_mask: u32,
    /// Bits of the four bytes after the tag that are a copy's offset.
    pub(super) offset_mask: u32,
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

pub(super) static SNAPPY_TAGS: [SnappyTag; 256] = snappy_tags();

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
