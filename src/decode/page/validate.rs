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

fn byte(data: &[u8], at: usize) -> Result<u8, CompressedError> {
    data.get(at)
        .copied()
        .ok_or(CompressedError::Truncated { at })
}

fn le(data: &[u8], at: usize, n: usize) -> Result<usize, CompressedError> {
    let bytes = data
        .get(at..at + n)
        .ok_or(CompressedError::Truncated { at })?;
    Ok(bytes
        .iter()
        .rev()
        .fold(0usize, |acc, &b| (acc << 8) | b as usize))
}

/// Checks a raw Snappy stream that must decompress to exactly `size` bytes.
pub fn check_snappy(data: &[u8], size: usize) -> Result<(), CompressedError> {
    // Preamble: the uncompressed length as a varint (at most 5 bytes).
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
    let mut produced = 0usize;
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
        produced += len;
        if produced > size {
            return Err(CompressedError::Overrun { at: start, size });
        }
    }
    if produced != size {
        return Err(CompressedError::Short { produced, size });
    }
    Ok(())
}

/// Reads an LZ4 length extension (bytes of 255 continue it).
fn lz4_length(data: &[u8], at: &mut usize, base: usize) -> Result<usize, CompressedError> {
    let mut len = base;
    if base == 15 {
        loop {
            let b = byte(data, *at)?;
            *at += 1;
            len += b as usize;
            if b != 255 {
                break;
            }
        }
    }
    Ok(len)
}

/// Checks a raw LZ4 block (Parquet's LZ4_RAW) that must decompress to
/// exactly `size` bytes.
pub fn check_lz4_block(data: &[u8], size: usize) -> Result<(), CompressedError> {
    let mut at = 0usize;
    let mut produced = 0usize;
    if data.is_empty() {
        return if size == 0 {
            Ok(())
        } else {
            Err(CompressedError::Short { produced, size })
        };
    }
    loop {
        let start = at;
        let token = byte(data, at)?;
        at += 1;
        let literals = lz4_length(data, &mut at, (token >> 4) as usize)?;
        if at + literals > data.len() {
            return Err(CompressedError::Truncated { at: start });
        }
        at += literals;
        produced += literals;
        if produced > size {
            return Err(CompressedError::Overrun { at: start, size });
        }
        if at == data.len() {
            break; // the last sequence holds literals only
        }
        let offset = le(data, at, 2)?;
        at += 2;
        if offset == 0 || offset > produced {
            return Err(CompressedError::BadOffset {
                at: start,
                offset,
                produced,
            });
        }
        let len = lz4_length(data, &mut at, (token & 15) as usize)? + 4;
        produced += len;
        if produced > size {
            return Err(CompressedError::Overrun { at: start, size });
        }
    }
    if produced != size {
        return Err(CompressedError::Short { produced, size });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize, seed: u64) -> Vec<u8> {
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
