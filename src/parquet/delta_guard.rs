//! A guard for arrow-rs's DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY
//! decoders, on the CPU path.
//!
//! arrow-rs 59 sizes a vector from the value count in a length stream's
//! header before it reads a single length (`DeltaByteArrayDecoder::new`,
//! `ByteArrayDecoderDeltaLength::new`, `ByteViewArrayDecoderDeltaLength::new`):
//! a corrupt count of 10^15 makes the allocation fail and the process
//! abort, which no `catch_unwind` stops (found by fuzzing the reader:
//! `fuzz/findings/reader-abort/`). So the reader reads those counts first,
//! in every column chunk it hands to arrow-rs whose column uses either
//! encoding, and refuses a page whose counts pass its values: a typed
//! error instead of an abort. Only such chunks pay for it (their pages
//! are decompressed once more); a chunk asked for in parts (pages picked
//! through the page index) is not checked.

use std::sync::Arc;

use ::parquet::basic::Encoding;
use ::parquet::column::page::{Page, PageReader};
use ::parquet::errors::ParquetError;
use ::parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use ::parquet::file::reader::{ChunkReader, Length};
use ::parquet::file::serialized_reader::SerializedPageReader;
use bytes::Bytes;

/// Bytes read at `base` in the file, as a [`ChunkReader`] that takes file
/// offsets.
struct Placed {
    base: u64,
    bytes: Bytes,
}

impl Placed {
    fn at(&self, start: u64) -> ::parquet::errors::Result<usize> {
        start
            .checked_sub(self.base)
            .map(|o| o as usize)
            .filter(|&o| o <= self.bytes.len())
            .ok_or_else(|| ParquetError::EOF(format!("offset {start} outside the chunk read")))
    }
}

impl Length for Placed {
    fn len(&self) -> u64 {
        self.base + self.bytes.len() as u64
    }
}

impl ChunkReader for Placed {
    type T = bytes::buf::Reader<Bytes>;

    fn get_read(&self, start: u64) -> ::parquet::errors::Result<Self::T> {
        use bytes::Buf;
        Ok(self.bytes.slice(self.at(start)?..).reader())
    }

    fn get_bytes(&self, start: u64, length: usize) -> ::parquet::errors::Result<Bytes> {
        let from = self.at(start)?;
        let to = from
            .checked_add(length)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                ParquetError::EOF(format!("{length} bytes at {start} past the chunk read"))
            })?;
        Ok(self.bytes.slice(from..to))
    }
}

/// Whether a column chunk's pages may hold either encoding.
fn uses_delta_lengths(chunk: &ColumnChunkMetaData) -> bool {
    chunk.encodings().any(|e| {
        matches!(
            e,
            Encoding::DELTA_LENGTH_BYTE_ARRAY | Encoding::DELTA_BYTE_ARRAY
        )
    })
}

/// Checks every column chunk of `meta` that `range` (read as `bytes`) is
/// exactly, if its column uses either encoding (see the module).
pub(crate) fn check_range(
    meta: &ParquetMetaData,
    range: &std::ops::Range<u64>,
    bytes: &Bytes,
) -> Result<(), ParquetError> {
    for rg in meta.row_groups() {
        for chunk in rg.columns() {
            let (start, len) = chunk.byte_range();
            if start == range.start
                && start.checked_add(len) == Some(range.end)
                && uses_delta_lengths(chunk)
            {
                let rows = usize::try_from(rg.num_rows()).unwrap_or(0);
                check_chunk(chunk, rows, range.start, bytes.clone())?;
            }
        }
    }
    Ok(())
}

/// Reads the length counts of every DELTA_LENGTH_BYTE_ARRAY and
/// DELTA_BYTE_ARRAY data page of one column chunk (`bytes`, read at
/// `base`).
fn check_chunk(
    chunk: &ColumnChunkMetaData,
    rows: usize,
    base: u64,
    bytes: Bytes,
) -> Result<(), ParquetError> {
    let descr = chunk.column_descr();
    let (max_rep, max_def) = (descr.max_rep_level(), descr.max_def_level());
    let mut pages = SerializedPageReader::new(Arc::new(Placed { base, bytes }), chunk, rows, None)?;
    while let Some(page) = pages.get_next_page()? {
        let (values, num_values, encoding) = match &page {
            Page::DataPage {
                buf,
                num_values,
                encoding,
                ..
            } => {
                // v1: the levels first, each behind its 4-byte length
                // (RLE, the only level encoding arrow-rs writes or reads
                // here; a page that lies about them fails in arrow-rs).
                let mut at = 0usize;
                for present in [max_rep > 0, max_def > 0] {
                    if present {
                        let Some(n) = buf.get(at..at + 4) else {
                            break;
                        };
                        let n = u32::from_le_bytes([n[0], n[1], n[2], n[3]]) as usize;
                        at = at.saturating_add(4).saturating_add(n);
                    }
                }
                (buf.slice(at.min(buf.len())..), *num_values, *encoding)
            }
            Page::DataPageV2 {
                buf,
                num_values,
                encoding,
                def_levels_byte_len,
                rep_levels_byte_len,
                ..
            } => {
                let at =
                    (*def_levels_byte_len as usize).saturating_add(*rep_levels_byte_len as usize);
                (buf.slice(at.min(buf.len())..), *num_values, *encoding)
            }
            Page::DictionaryPage { .. } => continue,
        };
        let streams = match encoding {
            Encoding::DELTA_LENGTH_BYTE_ARRAY => 1,
            Encoding::DELTA_BYTE_ARRAY => 2,
            _ => continue,
        };
        check_length_streams(&values, streams, u64::from(num_values)).map_err(|what| {
            ParquetError::General(format!(
                "corrupt {encoding} page in column {}: {what}",
                descr.path()
            ))
        })?;
    }
    Ok(())
}

/// Reads `streams` DELTA_BINARY_PACKED length streams one after another at
/// the start of `values`: each count must be at most `max` (the page's
/// values). A stream that cannot be walked is left to arrow-rs (it fails
/// with an error, not an abort, once the counts are bounded).
fn check_length_streams(values: &[u8], streams: usize, max: u64) -> Result<(), String> {
    let mut at = 0usize;
    for k in 0..streams {
        let Some((count, end)) = delta_stream(values, at, max) else {
            return Ok(());
        };
        if count > max {
            let which = if streams == 2 && k == 0 {
                "prefix"
            } else {
                "length"
            };
            return Err(format!(
                "its {which} stream counts {count} values, the page holds {max}"
            ));
        }
        at = end;
    }
    Ok(())
}

/// ULEB128 at `*at`.
fn uleb(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// The count of the DELTA_BINARY_PACKED stream at `at` and, when the count
/// is at most `max`, where the stream ends (its blocks walked); `None`
/// where the header or a block cannot be read.
fn delta_stream(b: &[u8], at: usize, max: u64) -> Option<(u64, usize)> {
    let mut at = at;
    let block = uleb(b, &mut at)?;
    let minis = uleb(b, &mut at)?;
    let count = uleb(b, &mut at)?;
    uleb(b, &mut at)?; // first value
    if count > max {
        return Some((count, at));
    }
    if block == 0 || minis == 0 || block % minis != 0 || (block / minis) % 8 != 0 {
        return None;
    }
    let per_mini = block / minis;
    let mut left = count.saturating_sub(1);
    while left > 0 {
        uleb(b, &mut at)?; // min delta
        let widths = b.get(at..at.checked_add(minis as usize)?)?;
        at += minis as usize;
        for &w in widths {
            if left == 0 {
                break;
            }
            at = at.checked_add((u64::from(w) * per_mini / 8) as usize)?;
            left = left.saturating_sub(per_mini);
        }
    }
    (at <= b.len()).then_some((count, at))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uleb_bytes(mut v: u64, out: &mut Vec<u8>) {
        loop {
            let byte = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                out.push(byte);
                return;
            }
            out.push(byte | 0x80);
        }
    }

    /// A stream header (block 128, 4 miniblocks) claiming `count` values,
    /// all deltas zero (bit width 0 in every miniblock).
    fn zero_stream(count: u64) -> Vec<u8> {
        let mut s = Vec::new();
        for v in [128, 4, count, 0] {
            uleb_bytes(v, &mut s);
        }
        let blocks = count.saturating_sub(1).div_ceil(128);
        for _ in 0..blocks {
            s.push(0); // min delta
            s.extend([0u8; 4]);
        }
        s
    }

    #[test]
    fn counts_within_the_page_pass_and_larger_ones_are_refused() {
        let ok = zero_stream(300);
        assert_eq!(delta_stream(&ok, 0, 300), Some((300, ok.len())));
        assert_eq!(check_length_streams(&ok, 1, 300), Ok(()));
        let mut two = zero_stream(5);
        two.extend(zero_stream(5));
        assert_eq!(check_length_streams(&two, 2, 5), Ok(()));
        // The fuzzer's case: a count near 10^15 in the first stream.
        let empty = zero_stream(0);
        let mut lie = Vec::new();
        for v in [128, 4, 1_000_000_000_000_000u64, 0] {
            uleb_bytes(v, &mut lie);
        }
        assert!(check_length_streams(&lie, 2, 100)
            .unwrap_err()
            .contains("prefix stream counts"));
        assert_eq!(check_length_streams(&empty, 1, 100), Ok(()));
        // The second stream lying.
        let mut second = zero_stream(5);
        second.extend(zero_stream(6));
        assert!(check_length_streams(&second, 2, 5)
            .unwrap_err()
            .contains("length stream counts 6"));
    }

    #[test]
    fn unreadable_streams_are_left_to_arrow_rs() {
        assert_eq!(check_length_streams(&[], 1, 10), Ok(()));
        assert_eq!(check_length_streams(&[0x80, 0x80], 2, 10), Ok(()));
        // Block size not a multiple of 32 values per miniblock group.
        let mut bad = Vec::new();
        for v in [100, 3, 5, 0] {
            uleb_bytes(v, &mut bad);
        }
        assert_eq!(delta_stream(&bad, 0, 10), None);
    }
}
