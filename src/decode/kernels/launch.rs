//! Launch arithmetic: block shapes, grids and buffer sizes for the kernels,
//! as pure functions (unit-tested without a GPU).
//!
//! | kernel | grid | block | shared |
//! |---|---|---|---|
//! | `gds_dict_views` | one block per dictionary | [`DICT_BLOCK`] | ≈ 22 KiB static (the walk's staging; ≈ 40 KiB with `GDSCAN_STRING_CHUNK=32768`) |
//! | `gds_byte_array_walk` | one block per page task | [`WALK_BLOCK`] | as `gds_dict_views` |
//! | `gds_string_walks` | one block per dictionary, then one per page task | [`DICT_BLOCK`] | as `gds_dict_views` |
//! | `gds_decode_pages` | one block per page task | [`DECODE_BLOCK`] | ≈ 30 KiB static (three run tables, read at once: definition levels, a nested page's repetition levels, dictionary indices or RLE booleans) |
//! | `gds_gather_status` | one thread per task | [`STATUS_BLOCK`] | none |
//!
//! Every kernel loops grid-stride over its tasks, so a grid smaller than
//! the task count is correct too ([`MAX_GRID`] caps it).

use crate::cuda::module::LaunchConfig;

use crate::decode::page::codes::{Encoding, Kind};

/// Threads per block of `gds_decode_pages` (8 warps).
pub const DECODE_BLOCK: u32 = 256;
/// Levels each thread of `gds_decode_pages` handles per tile.
pub const DECODE_ITEMS: u32 = 4;
/// Levels per tile of `gds_decode_pages` (its warp-0 scan covers
/// `DECODE_ITEMS × warps` = 32 counts).
pub const DECODE_TILE: u32 = DECODE_BLOCK * DECODE_ITEMS;
/// Threads per block of `gds_byte_array_walk` (one page per block: the
/// threads stage the values section in shared memory, one walks it).
pub const WALK_BLOCK: u32 = 128;
/// Threads per block of `gds_dict_views`.
pub const DICT_BLOCK: u32 = 256;
/// Threads per block of the spread walk's chunk kernels (`gds_spread_spec`,
/// `gds_spread_emit`): 64 bytes of a 16 KiB chunk each.
pub const SPREAD_BLOCK: u32 = 256;
/// Threads per block of `gds_spread_join` (a thread per walk item).
pub const SPREAD_JOIN_BLOCK: u32 = 128;
/// 4-byte words of one chunk's state in the spread walk.
pub const SPREAD_STATE_WORDS: u32 = 8;

/// Threads per block of `gds_gather_status`.
pub const STATUS_BLOCK: u32 = 256;
/// 32-bit words per task in the status array: `[error, error_index,
/// null_count, value_count]` for a page, `[error, 0, 0, found]` for a
/// dictionary.
pub const STATUS_WORDS: u32 = 4;
/// The largest grid the launches use (CUDA's x limit).
pub const MAX_GRID: u32 = i32::MAX as u32;
/// Bytes of one Utf8View/BinaryView view.
pub const VIEW_BYTES: u64 = 16;

const _: () = assert!(DECODE_ITEMS * (DECODE_BLOCK / 32) == 32);

fn blocks_for(items: u64, per_block: u32) -> u32 {
    items.div_ceil(per_block as u64).min(MAX_GRID as u64) as u32
}

/// `gds_decode_pages` over `n_tasks` pages; `None` when there is nothing to do.
pub fn decode_pages_config(n_tasks: u32) -> Option<LaunchConfig> {
    (n_tasks > 0).then(|| LaunchConfig::linear(n_tasks.min(MAX_GRID), DECODE_BLOCK))
}

/// `gds_byte_array_walk` over `n_tasks` page tasks (all of them: it skips
/// those that are not PLAIN byte arrays).
pub fn byte_array_walk_config(n_tasks: u32) -> Option<LaunchConfig> {
    (n_tasks > 0).then(|| LaunchConfig::linear(n_tasks.min(MAX_GRID), WALK_BLOCK))
}

/// `gds_dict_views` over `n_dicts` dictionaries.
pub fn dict_views_config(n_dicts: u32) -> Option<LaunchConfig> {
    (n_dicts > 0).then(|| LaunchConfig::linear(n_dicts.min(MAX_GRID), DICT_BLOCK))
}

/// `gds_string_walks` over `n_dicts` dictionaries and `n_tasks` page
/// tasks: a block of [`DICT_BLOCK`] each; `None` when there are neither.
pub fn string_walks_config(n_dicts: u32, n_tasks: u32) -> Option<LaunchConfig> {
    let blocks = n_dicts as u64 + n_tasks as u64;
    (blocks > 0).then(|| LaunchConfig::linear(blocks.min(MAX_GRID as u64) as u32, DICT_BLOCK))
}

/// `gds_spread_spec` and `gds_spread_emit` over `n_chunks` chunks: a
/// block of [`SPREAD_BLOCK`] each; `None` when there are none.
pub fn spread_chunks_config(n_chunks: u32) -> Option<LaunchConfig> {
    (n_chunks > 0).then(|| LaunchConfig::linear(n_chunks.min(MAX_GRID), SPREAD_BLOCK))
}

/// `gds_spread_join` over `n_dicts + n_tasks` items, a thread each (it
/// runs even when no item has a chunk: an empty section still gets its
/// count and end); `None` when there are no items.
pub fn spread_join_config(n_dicts: u32, n_tasks: u32) -> Option<LaunchConfig> {
    let items = n_dicts as u64 + n_tasks as u64;
    (items > 0)
        .then(|| LaunchConfig::linear(blocks_for(items, SPREAD_JOIN_BLOCK), SPREAD_JOIN_BLOCK))
}

/// One item of the spread walk, as the host knows it before the kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpreadItem {
    /// A byte-array dictionary page of `data_len` bytes and `count`
    /// entries.
    Dict {
        /// Its bytes.
        data_len: u64,
        /// Its entries.
        count: u32,
    },
    /// A PLAIN byte-array data page of `data_len` bytes (its values
    /// section, or levels and values for v1: an upper bound of the
    /// section).
    PlainPage {
        /// Its bytes.
        data_len: u64,
    },
    /// Any other page task: nothing to walk.
    Other,
}

/// The spread walk's item table and chunk count.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SpreadTable {
    /// Per item its first chunk, then the total (items + 1 entries).
    pub first: Vec<u32>,
    /// Chunks of every item.
    pub n_chunks: u32,
}

impl SpreadTable {
    /// The table for `items` in launch order (dictionaries, then page
    /// tasks), with chunks of `chunk` bytes (`KernelConfig::string_chunk`):
    /// a section of `n` bytes has `ceil(n / chunk)` chunks; a dictionary
    /// with entries has one at least (its views are zeroed by it when the
    /// bytes hold fewer entries).
    ///
    /// ```
    /// use gdscan::decode::kernels::launch::{SpreadItem, SpreadTable};
    /// let t = SpreadTable::new(
    ///     [
    ///         SpreadItem::Dict { data_len: 0, count: 3 },
    ///         SpreadItem::Other,
    ///         SpreadItem::PlainPage { data_len: 40_000 },
    ///     ],
    ///     16384,
    /// );
    /// assert_eq!(t.first, [0, 1, 1, 4]);
    /// assert_eq!(t.n_chunks, 4);
    /// ```
    pub fn new(items: impl IntoIterator<Item = SpreadItem>, chunk: u32) -> SpreadTable {
        let mut first = Vec::new();
        let mut n = 0u32;
        for item in items {
            first.push(n);
            let chunks = match item {
                SpreadItem::Dict { data_len, count } => {
                    data_len.div_ceil(chunk as u64).max(u64::from(count > 0))
                }
                SpreadItem::PlainPage { data_len } => data_len.div_ceil(chunk as u64),
                SpreadItem::Other => 0,
            };
            // A row group's sections are under 4 GiB: far fewer chunks.
            n = n.saturating_add(u32::try_from(chunks).unwrap_or(u32::MAX));
        }
        first.push(n);
        SpreadTable { first, n_chunks: n }
    }

    /// Bytes of the chunks' state.
    pub fn state_bytes(&self) -> u64 {
        self.n_chunks as u64 * SPREAD_STATE_WORDS as u64 * 4
    }

    /// Bytes of the chunks' bitmaps, for chunks of `chunk` bytes.
    pub fn bitmap_bytes(&self, chunk: u32) -> u64 {
        self.n_chunks as u64 * spread_bitmap_bytes(chunk)
    }
}

/// Bytes of one chunk's bitmap in the spread walk: a bit per byte.
pub fn spread_bitmap_bytes(chunk: u32) -> u64 {
    chunk as u64 / 8
}

/// `gds_gather_status` over `n_tasks` pages and `n_dicts` dictionaries.
pub fn gather_status_config(n_tasks: u32, n_dicts: u32) -> Option<LaunchConfig> {
    let total = n_tasks as u64 + n_dicts as u64;
    (total > 0).then(|| LaunchConfig::linear(blocks_for(total, STATUS_BLOCK), STATUS_BLOCK))
}

/// Tiles `gds_decode_pages` walks for a page of `num_values` levels (its
/// loop count; every tile has at most two or three block barriers).
pub fn tiles(num_values: u32) -> u32 {
    num_values.div_ceil(DECODE_TILE)
}

/// Scratch bytes one page needs: `(values + 1) × 4` for PLAIN byte arrays
/// (the walk's offsets; `num_values` bounds the non-null count) and
/// DELTA_LENGTH_BYTE_ARRAY pages (offsets from the lengths), `values × 4`
/// for the row map of [`Kind::Levels`], `values × type_length` for
/// DELTA_BINARY_PACKED pages (their values, decoded as PLAIN), for
/// DELTA_BYTE_ARRAY pages the layouts of `cuda/delta_strings.cuh`
/// (byte arrays: prefix lengths, suffix and value offsets, the suffixes'
/// start; FLBA: the values as PLAIN, prefix lengths, suffix offsets), 0
/// otherwise.
pub fn scratch_bytes(kind: Kind, encoding: Encoding, num_values: u32, type_length: u32) -> u64 {
    let n = num_values as u64;
    match (kind, encoding) {
        (Kind::ByteArray, Encoding::Plain | Encoding::DeltaLengthByteArray) => (n + 1) * 4,
        (Kind::ByteArray, Encoding::DeltaByteArray) => (3 * n + 3) * 4,
        (Kind::Levels, _) => n * 4,
        (Kind::Fixed, Encoding::DeltaBinaryPacked) => n * type_length as u64,
        (Kind::Fixed, Encoding::DeltaByteArray) => {
            (n * type_length as u64).next_multiple_of(4) + (2 * n + 1) * 4
        }
        _ => 0,
    }
}

/// Alignment of each page's scratch inside a shared scratch buffer.
pub const SCRATCH_ALIGN: u64 = 16;

/// Packs the scratch of several pages into one buffer: the offset of each
/// page's scratch (16-byte aligned; equal offsets for pages without
/// scratch) and the total bytes.
pub fn scratch_layout(needs: impl IntoIterator<Item = u64>) -> (Vec<u64>, u64) {
    let mut offsets = Vec::new();
    let mut end = 0u64;
    for bytes in needs {
        offsets.push(end);
        end = (end + bytes).next_multiple_of(SCRATCH_ALIGN);
    }
    (offsets, end)
}

/// Bytes of a bitmap of `rows` bits as the kernels write it: whole 4-byte
/// words (validity, and BOOLEAN values). Arrow needs `ceil(rows / 8)`;
/// the extra bytes stay zero.
pub fn bitmap_bytes(rows: u64) -> u64 {
    rows.div_ceil(32) * 4
}

/// Bytes of the slots made for a byte-array dictionary of `count` entries,
/// `slot_width` bytes each: [`VIEW_BYTES`] for views and Decimal128 values,
/// 32 for Decimal256 values (the column's output width).
pub fn dict_view_bytes(count: u32, slot_width: u32) -> u64 {
    count as u64 * u64::from(slot_width)
}

/// Bytes of the status array `gds_gather_status` writes.
pub fn status_bytes(n_tasks: u32, n_dicts: u32) -> u64 {
    (n_tasks as u64 + n_dicts as u64) * STATUS_WORDS as u64 * 4
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_pages_is_one_block_per_page() {
        assert_eq!(decode_pages_config(0), None);
        let c = decode_pages_config(1234).unwrap();
        assert_eq!(c.grid, (1234, 1, 1));
        assert_eq!(c.block, (256, 1, 1));
        assert_eq!(c.shared_bytes, 0);
        assert!(c.validate().is_ok());
        assert_eq!(decode_pages_config(u32::MAX).unwrap().grid.0, MAX_GRID);
        assert!(decode_pages_config(u32::MAX).unwrap().validate().is_ok());
    }

    #[test]
    fn walk_is_one_block_per_task_and_status_one_thread() {
        assert_eq!(byte_array_walk_config(0), None);
        assert_eq!(byte_array_walk_config(1).unwrap().grid.0, 1);
        assert_eq!(byte_array_walk_config(128).unwrap().grid.0, 128);
        assert_eq!(byte_array_walk_config(129).unwrap().grid.0, 129);
        assert_eq!(byte_array_walk_config(129).unwrap().block.0, WALK_BLOCK);
        assert_eq!(byte_array_walk_config(u32::MAX).unwrap().grid.0, MAX_GRID);
        assert_eq!(gather_status_config(0, 0), None);
        assert_eq!(gather_status_config(0, 1).unwrap().grid.0, 1);
        assert_eq!(gather_status_config(256, 1).unwrap().grid.0, 2);
        assert_eq!(
            gather_status_config(u32::MAX, u32::MAX).unwrap().grid.0,
            ((2 * u32::MAX as u64).div_ceil(256)) as u32
        );
        assert_eq!(dict_views_config(0), None);
        assert_eq!(dict_views_config(7).unwrap().grid.0, 7);
        assert_eq!(dict_views_config(7).unwrap().block.0, DICT_BLOCK);
        assert!(string_walks_config(0, 0).is_none());
        let both = string_walks_config(3, 40).unwrap();
        assert_eq!((both.grid.0, both.block.0), (43, DICT_BLOCK));
        assert_eq!(
            string_walks_config(u32::MAX, u32::MAX).unwrap().grid.0,
            MAX_GRID
        );
    }

    #[test]
    fn tiles_cover_pages() {
        assert_eq!(DECODE_TILE, 1024);
        assert_eq!(tiles(0), 0);
        assert_eq!(tiles(1), 1);
        assert_eq!(tiles(1024), 1);
        assert_eq!(tiles(1025), 2);
        assert_eq!(tiles(20_000), 20);
        assert_eq!(tiles(u32::MAX), 4_194_304);
    }

    #[test]
    fn scratch_sizes() {
        assert_eq!(scratch_bytes(Kind::ByteArray, Encoding::Plain, 0, 0), 4);
        assert_eq!(
            scratch_bytes(Kind::ByteArray, Encoding::Plain, 20_000, 0),
            80_004
        );
        assert_eq!(
            scratch_bytes(Kind::ByteArray, Encoding::Dictionary, 20_000, 0),
            0
        );
        assert_eq!(scratch_bytes(Kind::Levels, Encoding::Plain, 10, 0), 40);
        assert_eq!(scratch_bytes(Kind::Fixed, Encoding::Plain, 10, 8), 0);
        assert_eq!(
            scratch_bytes(Kind::Fixed, Encoding::DeltaBinaryPacked, 10, 8),
            80
        );
        assert_eq!(
            scratch_bytes(Kind::Fixed, Encoding::DeltaBinaryPacked, 10, 4),
            40
        );
        assert_eq!(scratch_bytes(Kind::Boolean, Encoding::Rle, 10, 0), 0);
        assert_eq!(
            scratch_bytes(Kind::ByteArray, Encoding::DeltaLengthByteArray, 10, 0),
            44
        );
        assert_eq!(
            scratch_bytes(Kind::ByteArray, Encoding::DeltaByteArray, 10, 0),
            132
        );
        // 10 values of 3 bytes (32 bytes, whole words), 10 prefixes, 11 offsets.
        assert_eq!(
            scratch_bytes(Kind::Fixed, Encoding::DeltaByteArray, 10, 3),
            32 + 84
        );
        assert_eq!(
            scratch_bytes(Kind::ByteArray, Encoding::Plain, u32::MAX, 0),
            (u32::MAX as u64 + 1) * 4
        );
        let (offsets, total) = scratch_layout([4, 0, 80_004, 40]);
        assert_eq!(offsets, vec![0, 16, 16, 80_032]);
        assert_eq!(total, 80_080);
        assert!(offsets.iter().all(|o| o % SCRATCH_ALIGN == 0));
        assert_eq!(scratch_layout([]), (vec![], 0));
    }

    #[test]
    fn buffer_sizes() {
        assert_eq!(bitmap_bytes(0), 0);
        assert_eq!(bitmap_bytes(1), 4);
        assert_eq!(bitmap_bytes(32), 4);
        assert_eq!(bitmap_bytes(33), 8);
        assert!(bitmap_bytes(1_000_001) >= 1_000_001u64.div_ceil(8));
        assert_eq!(dict_view_bytes(3, VIEW_BYTES as u32), 48);
        assert_eq!(dict_view_bytes(3, 32), 96);
        assert_eq!(status_bytes(10, 2), 192);
    }
}
