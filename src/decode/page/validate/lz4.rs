//! LZ4 raw blocks (Parquet's LZ4_RAW): the checked walk over their
//! sequences.

use super::{byte, le, CompressedError};

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
