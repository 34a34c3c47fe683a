//! The Snappy check kernel's results (`cuda/check.cu`): the codes it
//! writes, and the host's [`CompressedError`] they stand for, so a page the
//! GPU refuses reads exactly as one the host check refuses.

use crate::decode::page::validate::CompressedError;

/// Threads per block of `gds_check_snappy` (a warp per Snappy page).
pub const CHECK_BLOCK: u32 = 128;
/// 32-bit words per job of the check's results: `[code, at, a, b]`.
pub const CHECK_WORDS: u32 = 4;
/// Threads per block of `gds_snappy_pieces` (a block per piece).
pub const PIECES_BLOCK: u32 = 256;
/// 64-bit words per task of `gds_snappy_pieces`: `[src, dst, len, out_len]`.
pub const PIECE_WORDS: u32 = 4;
/// Alignment of each piece's stream in the buffer `gds_snappy_pieces` fills.
pub const PIECE_ALIGN: usize = 16;

/// Bytes of the varint `gds_snappy_pieces` writes before a piece's
/// elements: Snappy's preamble for `out_len` bytes of output.
pub fn varint_len(out_len: u64) -> usize {
    let mut n = 1;
    let mut rest = out_len >> 7;
    while rest != 0 {
        n += 1;
        rest >>= 7;
    }
    n
}

/// One piece of a split Snappy page as a stream of its own: what
/// `gds_snappy_pieces` copies and what nvCOMP then decompresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PieceStream {
    /// The piece's elements in the page's stream.
    pub elements: std::ops::Range<usize>,
    /// Where its stream goes in the pieces' buffer ([`PIECE_ALIGN`]-aligned).
    pub at: usize,
    /// The stream's length: the varint of `out_len`, then the elements.
    pub len: usize,
    /// Where its output goes in the page's output.
    pub out_at: usize,
    /// Output bytes.
    pub out_len: usize,
}

/// The pieces of a page (`stream_len` bytes decompressing to `size`) laid
/// out in the pieces' buffer from byte `*used` on, which moves past them.
pub fn piece_streams(
    pieces: &crate::decode::page::validate::SnappyPieces,
    stream_len: usize,
    size: usize,
    used: &mut usize,
) -> Vec<PieceStream> {
    (0..pieces.count())
        .map(|i| {
            let elements = pieces.elements(i, stream_len);
            let out_len = pieces.out_len(i, size);
            let len = varint_len(out_len as u64) + elements.len();
            let at = used.next_multiple_of(PIECE_ALIGN);
            *used = at + len;
            PieceStream {
                elements,
                at,
                len,
                out_at: i * pieces.piece,
                out_len,
            }
        })
        .collect()
}

/// What `gds_check_snappy` found in one page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum SnappyCheck {
    /// The stream is sound.
    Ok = 0,
    /// It ends inside an element (`at`).
    Truncated = 1,
    /// Its preamble declares another size (`a`, `b`: low and high words).
    LengthMismatch = 2,
    /// A copy reaches before the output's start (`at`, offset `a`, produced `b`).
    BadOffset = 3,
    /// An element writes past the declared size (`at`, size `a`).
    Overrun = 4,
    /// It produces fewer bytes than declared (produced `a`, size `b`).
    Short = 5,
}

impl SnappyCheck {
    /// Every code, for the generated header.
    pub const ALL: [SnappyCheck; 6] = [
        SnappyCheck::Ok,
        SnappyCheck::Truncated,
        SnappyCheck::LengthMismatch,
        SnappyCheck::BadOffset,
        SnappyCheck::Overrun,
        SnappyCheck::Short,
    ];

    /// The C name of the code (`GDS_SNAPPY_...`).
    pub fn c_name(self) -> &'static str {
        match self {
            SnappyCheck::Ok => "GDS_SNAPPY_OK",
            SnappyCheck::Truncated => "GDS_SNAPPY_TRUNCATED",
            SnappyCheck::LengthMismatch => "GDS_SNAPPY_LENGTH_MISMATCH",
            SnappyCheck::BadOffset => "GDS_SNAPPY_BAD_OFFSET",
            SnappyCheck::Overrun => "GDS_SNAPPY_OVERRUN",
            SnappyCheck::Short => "GDS_SNAPPY_SHORT",
        }
    }
}

/// The error one job's result words stand for (`None` for a sound page);
/// `size` is the page header's uncompressed size. An unknown code is
/// reported as a truncation at the position given.
pub fn snappy_check_error(words: [u32; 4], size: usize) -> Option<CompressedError> {
    let [code, at, a, b] = words;
    let at = at as usize;
    Some(match code {
        0 => return None,
        2 => CompressedError::LengthMismatch {
            stream: u64::from(a) | (u64::from(b) << 32),
            header: size,
        },
        3 => CompressedError::BadOffset {
            at,
            offset: a as usize,
            produced: b as usize,
        },
        4 => CompressedError::Overrun { at, size },
        5 => CompressedError::Short {
            produced: a as usize,
            size,
        },
        _ => CompressedError::Truncated { at },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::page::validate::{snappy_pieces, SNAPPY_BLOCK};

    /// The pieces, each prefixed with its varint as `gds_snappy_pieces`
    /// writes it (here on the host), decompress alone with the reference
    /// decoder, and their outputs laid side by side are the page.
    #[test]
    fn pieces_decompress_alone_to_the_page() {
        let words = ["quickly ", "final ", "deposits ", "furiously ", "x"];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for size in [65_537usize, 131_072, 200_001, 1 << 20] {
            let mut raw = Vec::with_capacity(size);
            while raw.len() < size {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                if seed % 5 == 0 {
                    raw.push(seed as u8);
                } else {
                    raw.extend_from_slice(words[(seed >> 8) as usize % words.len()].as_bytes());
                }
            }
            raw.truncate(size);
            let stream = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            let pieces = snappy_pieces(&stream, size, SNAPPY_BLOCK)
                .unwrap()
                .expect("the snap crate compresses in 64 KiB fragments");
            let mut used = 3;
            let laid = piece_streams(&pieces, stream.len(), size, &mut used);
            assert_eq!(laid.len(), size.div_ceil(SNAPPY_BLOCK));
            let mut buffer = vec![0u8; used];
            let mut out = vec![0u8; size];
            for p in &laid {
                assert_eq!(p.at % PIECE_ALIGN, 0);
                let mut v = p.out_len as u64;
                let mut head = Vec::new();
                loop {
                    let more = v >> 7 != 0;
                    head.push((v & 0x7f) as u8 | if more { 0x80 } else { 0 });
                    v >>= 7;
                    if !more {
                        break;
                    }
                }
                assert_eq!(head.len() + p.elements.len(), p.len);
                buffer[p.at..p.at + head.len()].copy_from_slice(&head);
                buffer[p.at + head.len()..p.at + p.len]
                    .copy_from_slice(&stream[p.elements.clone()]);
                let piece = snap::raw::Decoder::new()
                    .decompress_vec(&buffer[p.at..p.at + p.len])
                    .unwrap();
                assert_eq!(piece.len(), p.out_len);
                out[p.out_at..p.out_at + p.out_len].copy_from_slice(&piece);
            }
            assert_eq!(out, raw, "size {size}");
        }
    }

    #[test]
    fn varints_are_snappy_preambles() {
        for (n, len) in [
            (0u64, 1),
            (127, 1),
            (128, 2),
            (65_536, 3),
            (1 << 21, 4),
            (1 << 28, 5),
        ] {
            assert_eq!(varint_len(n), len, "{n}");
        }
    }

    #[test]
    fn codes_map_to_the_host_errors() {
        assert_eq!(snappy_check_error([0, 9, 9, 9], 10), None);
        assert_eq!(
            snappy_check_error([1, 7, 0, 0], 10),
            Some(CompressedError::Truncated { at: 7 })
        );
        assert_eq!(
            snappy_check_error([2, 0, 5, 1], 10),
            Some(CompressedError::LengthMismatch {
                stream: (1 << 32) | 5,
                header: 10
            })
        );
        assert_eq!(
            snappy_check_error([3, 4, 9, 2], 10),
            Some(CompressedError::BadOffset {
                at: 4,
                offset: 9,
                produced: 2
            })
        );
        assert_eq!(
            snappy_check_error([4, 3, 10, 0], 10),
            Some(CompressedError::Overrun { at: 3, size: 10 })
        );
        assert_eq!(
            snappy_check_error([5, 0, 6, 10], 10),
            Some(CompressedError::Short {
                produced: 6,
                size: 10
            })
        );
        for (i, c) in SnappyCheck::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
            assert!(c.c_name().starts_with("GDS_SNAPPY_"));
        }
    }
}
