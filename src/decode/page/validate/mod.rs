//! Structural checks of compressed pages before they reach nvCOMP.
//!
//! nvCOMP documents corrupt input as undefined behaviour: on the H200 a
//! Snappy page with a flipped bit made its kernel read 1.3 GB past its
//! buffer, and the fault poisons the whole CUDA context. Snappy and LZ4
//! raw blocks can be checked without decompressing: a walk over their
//! elements (literal runs skipped whole, each copy's offset and length
//! checked against the bytes produced so far and the page's declared size)
//! proves every read and write of the decompressor stays inside its page,
//! at a cost of one read per element on the host.
//!
//! Zstd and Gzip pages are not walked here (their structure is entropy
//! coded); see docs/gpu-decode.md for what is known of nvCOMP on them.

mod lz4;
mod snappy;
mod snappy_walk;

pub use lz4::check_lz4_block;
pub use snappy::{SnappyPieces, SNAPPY_BLOCK};
pub use snappy_walk::{check_snappy, snappy_pieces, snappy_pieces_batch, LANES};

/// Why a compressed page was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompressedError {
    /// The stream ends inside an element.
    #[error("compressed stream truncated at byte {at}")]
    Truncated {
        /// Offset in the compressed page.
        at: usize,
    },
    /// The Snappy preamble's length differs from the page header's.
    #[error("stream says {stream} bytes uncompressed, the page header {header}")]
    LengthMismatch {
        /// From the stream.
        stream: u64,
        /// From the page header.
        header: usize,
    },
    /// A back-reference reaches before the start of the output.
    #[error("copy at byte {at} reaches {offset} bytes back with only {produced} produced")]
    BadOffset {
        /// Offset in the compressed page.
        at: usize,
        /// The copy's offset.
        offset: usize,
        /// Bytes produced before it.
        produced: usize,
    },
    /// The output would pass the declared size.
    #[error("element at byte {at} writes past the {size} declared bytes")]
    Overrun {
        /// Offset in the compressed page.
        at: usize,
        /// Declared uncompressed size.
        size: usize,
    },
    /// The stream produces fewer bytes than declared.
    #[error("stream produces {produced} bytes, the page header says {size}")]
    Short {
        /// Bytes the stream produces.
        produced: usize,
        /// Declared size.
        size: usize,
    },
}

pub(super) fn byte(data: &[u8], at: usize) -> Result<u8, CompressedError> {
    data.get(at)
        .copied()
        .ok_or(CompressedError::Truncated { at })
}

pub(super) fn le(data: &[u8], at: usize, n: usize) -> Result<usize, CompressedError> {
    let bytes = data
        .get(at..at + n)
        .ok_or(CompressedError::Truncated { at })?;
    Ok(bytes
        .iter()
        .rev()
        .fold(0usize, |acc, &b| (acc << 8) | b as usize))
}
#[cfg(test)]
pub(super) mod tests {
    use super::*;

    pub(super) fn sample(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Repetitive enough for copies, varied enough for literals.
                if i % 97 < 60 {
                    (i % 13) as u8
                } else {
                    x as u8
                }
            })
            .collect()
    }

    #[test]
    fn real_streams_pass() {
        for n in [0usize, 1, 5, 64, 1000, 70_000, 300_000] {
            let raw = sample(n, n as u64 + 3);
            let snappy = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
            check_snappy(&snappy, n).unwrap_or_else(|e| panic!("snappy {n}: {e}"));
            let lz4 = lz4_flex::block::compress(&raw);
            check_lz4_block(&lz4, n).unwrap_or_else(|e| panic!("lz4 {n}: {e}"));
            if n > 0 {
                assert!(check_snappy(&snappy, n - 1).is_err());
                assert!(check_lz4_block(&lz4, n + 1).is_err());
            }
        }
    }

    /// Every corruption either fails the check, or the stream still
    /// decompresses (by the reference crate) to exactly `size` bytes without
    /// error: the check never passes a stream that would read or write out
    /// of bounds.
    #[test]
    fn corruptions_are_caught_or_harmless() {
        let raw = sample(50_000, 11);
        let snappy = snap::raw::Encoder::new().compress_vec(&raw).unwrap();
        let lz4 = lz4_flex::block::compress(&raw);
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let (mut caught, mut passed) = (0, 0);
        for case in 0..4000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let (stream, is_snappy) = if case % 2 == 0 {
                (&snappy, true)
            } else {
                (&lz4, false)
            };
            let mut bad = stream.clone();
            let at = (x as usize) % bad.len();
            match case % 3 {
                0 => bad[at] ^= 1 << ((x >> 32) % 8),
                1 => bad[at] = (x >> 40) as u8,
                _ => bad.truncate(at),
            }
            let checked = if is_snappy {
                check_snappy(&bad, raw.len())
            } else {
                check_lz4_block(&bad, raw.len())
            };
            if checked.is_ok() {
                passed += 1;
                let out = if is_snappy {
                    snap::raw::Decoder::new().decompress_vec(&bad).ok()
                } else {
                    lz4_flex::block::decompress(&bad, raw.len()).ok()
                };
                let out = out.unwrap_or_else(|| {
                    panic!("case {case}: passed the check, fails to decompress")
                });
                assert_eq!(out.len(), raw.len(), "case {case}");
            } else {
                caught += 1;
            }
        }
        assert!(
            caught > 1000 && passed > 100,
            "caught {caught}, passed {passed}"
        );
    }
}
