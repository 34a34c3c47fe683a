//! CPU reference of the RLE/bit-packed hybrid encoding (definition levels,
//! dictionary indices, RLE booleans) and the level-section arithmetic of
//! data pages: the reference the GPU kernels are checked against, and the
//! host's checks on small sections.

/// Largest bit width of the hybrid encoding (dictionary indices are u32).
pub const MAX_BIT_WIDTH: u8 = 32;

/// Why a level or index section could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LevelError {
    /// A bit width past [`MAX_BIT_WIDTH`].
    #[error("bit width {0} is more than 32")]
    BadBitWidth(u8),
    /// The data ends before the values asked for.
    #[error("RLE/bit-packed data ends at byte {at} after {decoded} of {wanted} values")]
    Truncated {
        /// Where more bytes were needed.
        at: usize,
        /// Values decoded so far.
        decoded: usize,
        /// Values asked for.
        wanted: usize,
    },
    /// A run header's varint is too long.
    #[error("run header at byte {at} is too long")]
    BadRunHeader {
        /// Where it starts.
        at: usize,
    },
    /// A 4-byte length prefix is missing or larger than the data.
    #[error("length prefix says {len} bytes but {available} follow it")]
    BadLengthPrefix {
        /// The length read (0 when the prefix itself is cut).
        len: u64,
        /// Bytes after the prefix.
        available: usize,
    },
    /// The section is empty where a bit width byte was expected.
    #[error("dictionary-encoded data has no bit width byte")]
    MissingBitWidth,
}

/// Bits needed to store `max_value` (0 for 0): the bit width of levels
/// whose maximum is `max_value`.
pub fn bit_width(max_value: u32) -> u8 {
    (32 - max_value.leading_zeros()) as u8
}

fn read_run_header(data: &[u8], at: &mut usize) -> Result<u32, LevelError> {
    let start = *at;
    let mut value = 0u64;
    for i in 0..5 {
        let Some(&b) = data.get(*at) else {
            return Err(LevelError::BadRunHeader { at: start });
        };
        *at += 1;
        value |= u64::from(b & 0x7f) << (7 * i);
        if b & 0x80 == 0 {
            return u32::try_from(value).map_err(|_| LevelError::BadRunHeader { at: start });
        }
    }
    Err(LevelError::BadRunHeader { at: start })
}

/// Reads `bit_width` bits starting at bit `bit` of `data`, LSB first; the
/// caller has checked the bytes exist.
fn unpack(data: &[u8], bit: usize, bit_width: u8) -> u32 {
    let mut value = 0u64;
    let first = bit / 8;
    let shift = bit % 8;
    let bytes = (shift + usize::from(bit_width)).div_ceil(8);
    for (i, &b) in data[first..first + bytes].iter().enumerate() {
        value |= u64::from(b) << (8 * i);
    }
    let mask = if bit_width == 32 {
        u64::from(u32::MAX)
    } else {
        (1u64 << bit_width) - 1
    };
    ((value >> shift) & mask) as u32
}

/// Decodes `count` values of the RLE/bit-packed hybrid encoding of
/// `bit_width` bits (0..=32) from `data`, appending them to `out`; returns
/// the bytes consumed. Never yields more than `count` values: a final
/// bit-packed run's padding is skipped, and only the bytes of the values
/// actually needed must be present. Runs out of data before `count`: an
/// error.
pub fn decode_hybrid_into(
    data: &[u8],
    bit_width: u8,
    count: usize,
    out: &mut Vec<u32>,
) -> Result<usize, LevelError> {
    if bit_width > MAX_BIT_WIDTH {
        return Err(LevelError::BadBitWidth(bit_width));
    }
    let start_len = out.len();
    let mut at = 0usize;
    let value_bytes = usize::from(bit_width).div_ceil(8);
    while out.len() - start_len < count {
        let decoded = out.len() - start_len;
        let remaining = count - decoded;
        if at >= data.len() {
            return Err(LevelError::Truncated {
                at,
                decoded,
                wanted: count,
            });
        }
        let header = read_run_header(data, &mut at)?;
        if header == 0 {
            // An empty RLE run ends the stream, as arrow-rs reads it.
            return Err(LevelError::Truncated {
                at: at - 1,
                decoded,
                wanted: count,
            });
        }
        let run = (header >> 1) as usize;
        if header & 1 == 1 {
            // Bit-packed: `run` groups of 8 values.
            let values = run * 8;
            let take = values.min(remaining);
            let run_bytes = run * usize::from(bit_width);
            let needed = (take * usize::from(bit_width)).div_ceil(8);
            if at + needed > data.len() {
                return Err(LevelError::Truncated {
                    at: data.len(),
                    decoded,
                    wanted: count,
                });
            }
            let packed = &data[at..];
            out.extend((0..take).map(|i| {
                if bit_width == 0 {
                    0
                } else {
                    unpack(packed, i * usize::from(bit_width), bit_width)
                }
            }));
            at += run_bytes.min(data.len() - at);
        } else {
            // RLE: one value repeated `run` times.
            if at + value_bytes > data.len() {
                return Err(LevelError::Truncated {
                    at: data.len(),
                    decoded,
                    wanted: count,
                });
            }
            let mut value = 0u32;
            for (i, &b) in data[at..at + value_bytes].iter().enumerate() {
                value |= u32::from(b) << (8 * i);
            }
            at += value_bytes;
            let take = run.min(remaining);
            out.extend(std::iter::repeat_n(value, take));
        }
    }
    Ok(at)
}

/// Decodes `count` values of the RLE/bit-packed hybrid encoding (see
/// [`decode_hybrid_into`]).
pub fn decode_hybrid(data: &[u8], bit_width: u8, count: usize) -> Result<Vec<u32>, LevelError> {
    let mut out = Vec::with_capacity(count.min(data.len().saturating_mul(8).max(64)));
    decode_hybrid_into(data, bit_width, count, &mut out)?;
    Ok(out)
}

/// Splits a section that starts with a 4-byte little-endian length (a v1
/// data page's definition levels, an RLE boolean page's values): the
/// section's bytes and the offset of what follows it.
pub fn split_length_prefixed(data: &[u8]) -> Result<(&[u8], usize), LevelError> {
    let Some(prefix) = data.get(..4) else {
        return Err(LevelError::BadLengthPrefix {
            len: 0,
            available: data.len(),
        });
    };
    let len = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]);
    let rest = &data[4..];
    match usize::try_from(len).ok().and_then(|n| rest.get(..n)) {
        Some(section) => Ok((section, 4 + section.len())),
        None => Err(LevelError::BadLengthPrefix {
            len: u64::from(len),
            available: rest.len(),
        }),
    }
}

/// The layout of a decompressed v1 data page body of a flat column:
/// `[u32 length][definition levels][values]` when `max_def > 0`, values
/// alone otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct V1Layout {
    /// Offset of the definition levels (after the length prefix).
    pub def_offset: usize,
    /// Bytes of definition levels.
    pub def_len: usize,
    /// Offset of the values.
    pub values_offset: usize,
}

/// Where the definition levels and the values of a decompressed v1 page of
/// a flat column are (`max_def` 0 or 1; repetition levels absent).
pub fn v1_layout(body: &[u8], max_def: i16) -> Result<V1Layout, LevelError> {
    if max_def <= 0 {
        return Ok(V1Layout {
            def_offset: 0,
            def_len: 0,
            values_offset: 0,
        });
    }
    let (levels, values_offset) = split_length_prefixed(body)?;
    Ok(V1Layout {
        def_offset: 4,
        def_len: levels.len(),
        values_offset,
    })
}

/// The bit width of dictionary indices: the first byte of a dictionary-
/// encoded data page's values.
pub fn dictionary_bit_width(values: &[u8]) -> Result<u8, LevelError> {
    let &w = values.first().ok_or(LevelError::MissingBitWidth)?;
    if w > MAX_BIT_WIDTH {
        return Err(LevelError::BadBitWidth(w));
    }
    Ok(w)
}

/// Decodes `count` dictionary indices (bit width byte, then the hybrid).
pub fn decode_dictionary_indices(values: &[u8], count: usize) -> Result<Vec<u32>, LevelError> {
    let w = dictionary_bit_width(values)?;
    decode_hybrid(&values[1..], w, count)
}

/// Decodes `count` RLE-encoded booleans (4-byte length, then the hybrid of
/// bit width 1), as data page v2 writes them.
pub fn decode_rle_booleans(values: &[u8], count: usize) -> Result<Vec<bool>, LevelError> {
    let (section, _) = split_length_prefixed(values)?;
    Ok(decode_hybrid(section, 1, count)?
        .into_iter()
        .map(|v| v != 0)
        .collect())
}
