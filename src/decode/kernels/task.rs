//! The structs the host fills for the kernels ([`PageTask`], [`DictTask`]),
//! the codes they carry, and the C header generated from them.
//!
//! Rust is the single source of truth: [`generated_header`] writes every
//! constant (kinds, encodings, conversions, flags, error codes, block sizes)
//! as a `#define`, and a `static_assert` on `sizeof` and on every field's
//! offset (`GDS_OFFSETOF`), taken from this file with [`std::mem::offset_of!`]. The C
//! structs in `cuda/common.cuh` are written by hand; every NVRTC compile
//! checks them against these asserts, so a layout drift fails the compile
//! (and CI), never a decode.

use std::mem::size_of;

use super::layout::{fields, FieldLayout};
use super::{launch, nest};
use crate::config::decode::KernelConfig;
pub use crate::decode::page::codes::{Conversion, Encoding, Kind};

/// [`PageTask::flags`] bit: DATA_PAGE v1 layout, the definition levels are
/// at the start of `data` behind their 4-byte little-endian length (used only
/// when `max_def > 0`). Without it, levels are at `def_levels` (v2).
pub const FLAG_V1_LEVELS: u32 = 1;

/// [`PageTask::flags`] bit, with [`FLAG_V1_LEVELS`]: a nested column's v1
/// page, whose repetition levels come first behind their own 4-byte length;
/// the kernel skips them to reach the definition levels (the leaf is then
/// decoded flat over its level entries).
pub const FLAG_V1_REP_LEVELS: u32 = 4;

/// [`PageTask::flags`] bit: only the page's rows `row_skip .. row_skip +
/// row_take` are written, at `out_row ..` (page pruning: a kept page may
/// reach past the rows the scan selected). Without it every row is written.
pub const FLAG_ROW_WINDOW: u32 = 2;

/// The error a kernel wrote for a page or dictionary (0 means none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
#[non_exhaustive]
pub enum PageErrorCode {
    /// A task field is inconsistent (a null pointer with a length, a
    /// misaligned output, an unknown kind, max_def above 65535).
    BadTask = 1,
    /// The encoding is not one the kind decodes.
    BadEncoding = 2,
    /// The conversion does not fit the input and output widths.
    BadConversion = 3,
    /// `out_row + num_values` passes `out_rows`.
    OutputRange = 4,
    /// The v1 definition-level length prefix is missing or passes the page.
    LevelsLength = 5,
    /// The definition (or repetition) levels end before `num_values` levels.
    LevelsOverrun = 6,
    /// A definition level is above `max_def`.
    BadLevel = 7,
    /// A bit width above the encoding's limit (dictionary indices and
    /// length streams: 32; DELTA_BINARY_PACKED values: 64).
    BitWidth = 8,
    /// The RLE boolean length prefix passes the page.
    ValuesLength = 9,
    /// The values end before the page's non-null count (PLAIN data too
    /// short, an index or boolean stream too short, fewer byte arrays).
    ValuesOverrun = 10,
    /// A dictionary index at or past the dictionary's end.
    DictIndex = 11,
    /// A byte-array dictionary holds fewer entries than its header says.
    DictOverrun = 12,
    /// A view's offset from its buffer base is negative or past 2^31-1.
    ViewOffset = 13,
    /// The page's scratch is missing, misaligned, too small, or was not
    /// written by `gds_byte_array_walk`.
    Scratch = 14,
    /// The kernel was launched with another block shape than it was built for.
    Launch = 15,
    /// A DELTA_BINARY_PACKED header or block is invalid (block size not a
    /// multiple of 128, miniblocks not multiples of 32 values, more values
    /// than the page's levels, a miniblock bit width above 64, a block past
    /// the page's end).
    DeltaHeader = 16,
    /// A DELTA_LENGTH_BYTE_ARRAY or DELTA_BYTE_ARRAY length stream is
    /// invalid: a negative length, lengths past the section, a length
    /// stream that ends past the page, prefix and suffix counts that
    /// differ, or a FIXED_LEN_BYTE_ARRAY value of another length.
    DeltaLength = 17,
    /// A DELTA_BYTE_ARRAY prefix length passes the previous value's length.
    DeltaPrefix = 18,
    /// A BYTE_ARRAY decimal of more than 16 bytes (Decimal128's).
    DecimalLength = 19,
    /// A repetition level above the column's maximum.
    RepLevel = 20,
    /// A nested column chunk's first level entry continues a record (its
    /// repetition level is not 0).
    FirstNotRecord = 21,
    /// A repetition level continues a list that has no element there (the
    /// entry before it, or the entry itself, is below the list's element
    /// definition level).
    BadContinuation = 22,
    /// A FixedSizeList with elements holds another number of them than
    /// its size.
    FixedSize = 23,
    /// A nesting level holds more slots than the decoder sized its buffers
    /// for (FixedSizeList padding past its bound or allowance).
    SlotCapacity = 24,
}

impl PageErrorCode {
    /// Every code, in order.
    pub const ALL: [PageErrorCode; 24] = [
        PageErrorCode::BadTask,
        PageErrorCode::BadEncoding,
        PageErrorCode::BadConversion,
        PageErrorCode::OutputRange,
        PageErrorCode::LevelsLength,
        PageErrorCode::LevelsOverrun,
        PageErrorCode::BadLevel,
        PageErrorCode::BitWidth,
        PageErrorCode::ValuesLength,
        PageErrorCode::ValuesOverrun,
        PageErrorCode::DictIndex,
        PageErrorCode::DictOverrun,
        PageErrorCode::ViewOffset,
        PageErrorCode::Scratch,
        PageErrorCode::Launch,
        PageErrorCode::DeltaHeader,
        PageErrorCode::DeltaLength,
        PageErrorCode::DeltaPrefix,
        PageErrorCode::DecimalLength,
        PageErrorCode::RepLevel,
        PageErrorCode::FirstNotRecord,
        PageErrorCode::BadContinuation,
        PageErrorCode::FixedSize,
        PageErrorCode::SlotCapacity,
    ];

    /// The code a kernel wrote, `None` for 0 or a number no kernel writes.
    pub fn from_code(code: u32) -> Option<PageErrorCode> {
        Self::ALL.iter().copied().find(|c| *c as u32 == code)
    }

    /// The C name (`GDS_ERR_...`) of the code.
    pub fn c_name(self) -> &'static str {
        match self {
            PageErrorCode::BadTask => "GDS_ERR_BAD_TASK",
            PageErrorCode::BadEncoding => "GDS_ERR_BAD_ENCODING",
            PageErrorCode::BadConversion => "GDS_ERR_BAD_CONVERSION",
            PageErrorCode::OutputRange => "GDS_ERR_OUTPUT_RANGE",
            PageErrorCode::LevelsLength => "GDS_ERR_LEVELS_LENGTH",
            PageErrorCode::LevelsOverrun => "GDS_ERR_LEVELS_OVERRUN",
            PageErrorCode::BadLevel => "GDS_ERR_BAD_LEVEL",
            PageErrorCode::BitWidth => "GDS_ERR_BIT_WIDTH",
            PageErrorCode::ValuesLength => "GDS_ERR_VALUES_LENGTH",
            PageErrorCode::ValuesOverrun => "GDS_ERR_VALUES_OVERRUN",
            PageErrorCode::DictIndex => "GDS_ERR_DICT_INDEX",
            PageErrorCode::DictOverrun => "GDS_ERR_DICT_OVERRUN",
            PageErrorCode::ViewOffset => "GDS_ERR_VIEW_OFFSET",
            PageErrorCode::Scratch => "GDS_ERR_SCRATCH",
            PageErrorCode::Launch => "GDS_ERR_LAUNCH",
            PageErrorCode::DeltaHeader => "GDS_ERR_DELTA_HEADER",
            PageErrorCode::DeltaLength => "GDS_ERR_DELTA_LENGTH",
            PageErrorCode::DeltaPrefix => "GDS_ERR_DELTA_PREFIX",
            PageErrorCode::DecimalLength => "GDS_ERR_DECIMAL_LENGTH",
            PageErrorCode::RepLevel => "GDS_ERR_REP_LEVEL",
            PageErrorCode::FirstNotRecord => "GDS_ERR_FIRST_NOT_RECORD",
            PageErrorCode::BadContinuation => "GDS_ERR_BAD_CONTINUATION",
            PageErrorCode::FixedSize => "GDS_ERR_FIXED_SIZE",
            PageErrorCode::SlotCapacity => "GDS_ERR_SLOT_CAPACITY",
        }
    }

    /// What went wrong, in words.
    pub fn describe(self) -> &'static str {
        match self {
            PageErrorCode::BadTask => "inconsistent page task",
            PageErrorCode::BadEncoding => "encoding not supported for the column's type",
            PageErrorCode::BadConversion => "conversion does not fit the value widths",
            PageErrorCode::OutputRange => "page rows pass the output column's end",
            PageErrorCode::LevelsLength => "definition-level length passes the page",
            PageErrorCode::LevelsOverrun => "levels end before the page's values",
            PageErrorCode::BadLevel => "definition level above the column's maximum",
            PageErrorCode::BitWidth => {
                "bit width above the encoding's (dictionary indices and lengths: 32, deltas: 64)"
            }
            PageErrorCode::ValuesLength => {
                "RLE boolean length passes the page, or BYTE_STREAM_SPLIT values do not fill it"
            }
            PageErrorCode::ValuesOverrun => "values end before the page's non-null count",
            PageErrorCode::DictIndex => "dictionary index past the dictionary's end",
            PageErrorCode::DictOverrun => "dictionary holds fewer entries than announced",
            PageErrorCode::ViewOffset => "string view offset does not fit 31 bits",
            PageErrorCode::Scratch => "page scratch missing, too small or not prepared",
            PageErrorCode::Launch => "kernel launched with the wrong block shape",
            PageErrorCode::DeltaHeader => "DELTA_BINARY_PACKED header or block invalid",
            PageErrorCode::DeltaLength => {
                "DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY lengths negative, inconsistent or past the page"
            }
            PageErrorCode::DeltaPrefix => "DELTA_BYTE_ARRAY prefix longer than the previous value",
            PageErrorCode::DecimalLength => "BYTE_ARRAY decimal longer than 16 bytes",
            PageErrorCode::RepLevel => "repetition level above the column's maximum",
            PageErrorCode::FirstNotRecord => {
                "the column chunk starts mid-record (first repetition level not 0)"
            }
            PageErrorCode::BadContinuation => {
                "repetition level continues a list that has no element there"
            }
            PageErrorCode::FixedSize => {
                "a FixedSizeList holds another number of elements than its size"
            }
            PageErrorCode::SlotCapacity => {
                "a nesting level holds more slots than its buffers were sized for"
            }
        }
    }
}

impl std::fmt::Display for PageErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.describe(), *self as u32)
    }
}

/// One data page for the kernels: the host fills one per page, uploads the
/// array, and the kernels write the output fields back into it.
///
/// Mirrored exactly by `struct PageTask` in `cuda/common.cuh` (checked by
/// every NVRTC compile, see [`generated_header`]). 184 bytes, no padding:
///
/// | offset | field | |
/// |---|---|---|
/// | 0 | `data` | u64 device address |
/// | 8 | `def_levels` | u64 device address |
/// | 16 | `dict` | u64 device address |
/// | 24 | `out_values` | u64 device address |
/// | 32 | `out_validity` | u64 device address |
/// | 40 | `scratch` | u64 device address |
/// | 48 | `view_buffer_base` | u64 device address |
/// | 56 | `rep_levels` | u64 device address |
/// | 64 | `out_rep` | u64 device address |
/// | 72 | `out_def` | u64 device address |
/// | 80.. | `data_len`, `def_len`, `num_values`, `dict_count`, `dict_len`, `out_row`, `out_rows`, `kind`, `encoding`, `flags`, `max_def`, `conversion`, `type_length`, `out_width`, `view_buffer_index`, `scratch_len` | u32 inputs (80 to 140) |
/// | 144.. | `error`, `error_index`, `null_count`, `value_count`, `plain_count` | u32, written by the kernels (144 to 160) |
/// | 164.. | `row_skip`, `row_take` | u32 inputs (164, 168) |
/// | 172 | `value_bytes` | u32, written by `gds_dba_sizes` |
/// | 176.. | `rep_len`, `max_rep` | u32 inputs (176, 180) |
///
/// Start from [`PageTask::default`] (all zero): the output fields must be 0
/// before the first launch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct PageTask {
    /// Device address of the page's decompressed values region. With
    /// [`FLAG_V1_LEVELS`] and `max_def > 0`: `[u32 def-level length][def
    /// levels][values]` (DATA_PAGE v1); otherwise the values section alone.
    pub data: u64,
    /// Device address of the DATA_PAGE v2 definition levels (RLE/bit-packed
    /// hybrid, no length prefix); 0 for v1 pages and required columns.
    pub def_levels: u64,
    /// Device address of the dictionary: its PLAIN values for
    /// [`Kind::Fixed`], or the 16-byte views written by `gds_dict_views` for
    /// [`Kind::ByteArray`]; 0 when the page is not dictionary-encoded.
    pub dict: u64,
    /// Device address of row 0 of the column's output values in this row
    /// group: `out_width` bytes per row, an Arrow bitmap for
    /// [`Kind::Boolean`] (zeroed, in 4-byte words), 16-byte views for
    /// [`Kind::ByteArray`]. 16-byte aligned. Unused by [`Kind::Levels`].
    pub out_values: u64,
    /// Device address of the column's validity bitmap (bit `out_row + i` for
    /// level `i`), zeroed before the launch, 4-byte aligned, its length a
    /// multiple of 4 bytes; 0 for none.
    pub out_validity: u64,
    /// Device address of the page's scratch (4-byte aligned,
    /// [`launch::scratch_bytes`] long): byte-array offsets for PLAIN
    /// [`Kind::ByteArray`], the row map for [`Kind::Levels`]; 0 otherwise.
    pub scratch: u64,
    /// The device address that byte-array view offsets count from (the start
    /// of the variadic buffer holding `data`).
    pub view_buffer_base: u64,
    /// Device address of a nested leaf's DATA_PAGE v2 repetition levels
    /// (RLE/bit-packed hybrid, no length prefix); 0 otherwise (v1 pages
    /// carry them in `data` behind [`FLAG_V1_REP_LEVELS`]).
    pub rep_levels: u64,
    /// Device address where `gds_decode_pages` writes the page's repetition
    /// levels, one byte per level (the chunk's array at the page's first
    /// entry), for the nesting kernels; 0: none written.
    pub out_rep: u64,
    /// As `out_rep` for the definition levels.
    pub out_def: u64,
    /// Bytes at `data`.
    pub data_len: u32,
    /// Bytes at `def_levels`.
    pub def_len: u32,
    /// Levels in the page: its rows, nulls included (flat columns).
    pub num_values: u32,
    /// Entries in the dictionary.
    pub dict_count: u32,
    /// Bytes at `dict` (for views: 16 × `dict_count`).
    pub dict_len: u32,
    /// The page's first row in the output (rows of the kept pages before it).
    pub out_row: u32,
    /// Rows the output buffers hold (`out_row + num_values` must fit).
    pub out_rows: u32,
    /// A [`Kind`] as `u32`.
    pub kind: u32,
    /// An [`Encoding`] as `u32`.
    pub encoding: u32,
    /// Bits: [`FLAG_V1_LEVELS`].
    pub flags: u32,
    /// The column's maximum definition level (0 required, 1 optional flat).
    pub max_def: u32,
    /// A [`Conversion`] as `u32` ([`Kind::Fixed`] only).
    pub conversion: u32,
    /// Input bytes per value: 4 or 8 for the physical types, the FLBA length.
    pub type_length: u32,
    /// Output bytes per value ([`Kind::Fixed`]).
    pub out_width: u32,
    /// The variadic buffer index views carry (the buffer holding `data`).
    pub view_buffer_index: u32,
    /// Bytes at `scratch`.
    pub scratch_len: u32,
    /// Written by the kernels: 0, or the first [`PageErrorCode`] found.
    pub error: u32,
    /// Written by the kernels: the level index where `error` was found.
    pub error_index: u32,
    /// Written by `gds_decode_pages`: null rows in the page.
    pub null_count: u32,
    /// Written by `gds_decode_pages`: non-null values decoded.
    pub value_count: u32,
    /// Written by `gds_byte_array_walk`: values its walk found (PLAIN
    /// byte arrays); by `gds_dba_sizes`: values of a DELTA_BYTE_ARRAY
    /// byte-array page.
    pub plain_count: u32,
    /// With [`FLAG_ROW_WINDOW`]: the page's first rows not written.
    pub row_skip: u32,
    /// With [`FLAG_ROW_WINDOW`]: rows written after `row_skip`.
    pub row_take: u32,
    /// Written by `gds_dba_sizes`: bytes of a DELTA_BYTE_ARRAY byte-array
    /// page's values (their materialized size); zero otherwise.
    pub value_bytes: u32,
    /// Bytes at `rep_levels`.
    pub rep_len: u32,
    /// The column's maximum repetition level (0 flat, lists around a nested
    /// leaf); read with a level output `out_rep` only.
    pub max_rep: u32,
}

/// One byte-array dictionary page for `gds_dict_views`, which turns its PLAIN
/// values into 16-byte views (one per entry) that pages then gather.
///
/// Mirrored by `struct DictTask` in `cuda/common.cuh`. 48 bytes: `data` 0,
/// `out_views` 8, `view_buffer_base` 16, `data_len` 24, `count` 28,
/// `view_buffer_index` 32, `error` 36, `found` 40, `conversion` 44.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[repr(C)]
pub struct DictTask {
    /// Device address of the decompressed dictionary page (PLAIN byte arrays).
    pub data: u64,
    /// Device address of the views: 16 × `count` bytes, 16-byte aligned.
    pub out_views: u64,
    /// The device address view offsets count from.
    pub view_buffer_base: u64,
    /// Bytes at `data`.
    pub data_len: u32,
    /// Entries the dictionary page header announces.
    pub count: u32,
    /// The variadic buffer index the views carry.
    pub view_buffer_index: u32,
    /// Written by the kernel: 0 or a [`PageErrorCode`].
    pub error: u32,
    /// Written by the kernel: entries found.
    pub found: u32,
    /// A [`Conversion`] as `u32`: [`Conversion::Copy`] makes views,
    /// [`Conversion::BeToDecimal128`] Decimal128 values (BYTE_ARRAY
    /// decimals).
    pub conversion: u32,
}

/// The bytes of a task array, as uploaded.
pub fn page_tasks_as_bytes(tasks: &[PageTask]) -> &[u8] {
    // SAFETY: PageTask is repr(C), made only of integers, with no padding
    // (checked by the tests), so every byte is initialised.
    unsafe { std::slice::from_raw_parts(tasks.as_ptr().cast(), std::mem::size_of_val(tasks)) }
}

/// The bytes of a task array, for copying the kernels' output fields back.
pub fn page_tasks_as_bytes_mut(tasks: &mut [PageTask]) -> &mut [u8] {
    // SAFETY: as above; every bit pattern is a valid PageTask.
    unsafe {
        std::slice::from_raw_parts_mut(tasks.as_mut_ptr().cast(), std::mem::size_of_val(tasks))
    }
}

/// The bytes of a dictionary task array, as uploaded.
pub fn dict_tasks_as_bytes(tasks: &[DictTask]) -> &[u8] {
    // SAFETY: DictTask is repr(C), integers only, no padding (tested).
    unsafe { std::slice::from_raw_parts(tasks.as_ptr().cast(), std::mem::size_of_val(tasks)) }
}

/// The bytes of a dictionary task array, for copying it back.
pub fn dict_tasks_as_bytes_mut(tasks: &mut [DictTask]) -> &mut [u8] {
    // SAFETY: as above; every bit pattern is a valid DictTask.
    unsafe {
        std::slice::from_raw_parts_mut(tasks.as_mut_ptr().cast(), std::mem::size_of_val(tasks))
    }
}

/// Every field of [`PageTask`], in order (name, offset, size).
pub fn page_task_fields() -> &'static [FieldLayout] {
    const FIELDS: &[FieldLayout] = fields!(PageTask;
        data, def_levels, dict, out_values, out_validity, scratch, view_buffer_base,
        rep_levels, out_rep, out_def, data_len, def_len, num_values, dict_count, dict_len, out_row, out_rows, kind,
        encoding, flags, max_def, conversion, type_length, out_width, view_buffer_index,
        scratch_len, error, error_index, null_count, value_count, plain_count, row_skip, row_take,
        value_bytes, rep_len, max_rep);
    FIELDS
}

/// Every field of [`DictTask`], in order (name, offset, size).
pub fn dict_task_fields() -> &'static [FieldLayout] {
    const FIELDS: &[FieldLayout] = fields!(DictTask;
        data, out_views, view_buffer_base, data_len, count, view_buffer_index, error, found,
        conversion);
    FIELDS
}

/// The nesting kernels' constants (`nest.cu`).
fn nest_defines() -> [(&'static str, u32); 10] {
    [
        ("GDS_NEST_LEVELS", nest::NEST_LEVELS as u32),
        ("GDS_NEST_BLOCK", nest::NEST_BLOCK),
        ("GDS_NEST_ITEMS", nest::NEST_ITEMS),
        ("GDS_NEST_STATUS_WORDS", nest::NEST_STATUS_WORDS as u32),
        ("GDS_NEST_COUNT_FIRST", nest::NEST_COUNT_FIRST as u32),
        ("GDS_NEST_OFFSETS", nest::NEST_OFFSETS),
        ("GDS_NEST_VALIDITY", nest::NEST_VALIDITY),
        ("GDS_NEST_VALUES", nest::NEST_VALUES),
        ("GDS_NEST_BITS", nest::NEST_BITS),
        ("GDS_NEST_IF_MOVED", nest::NEST_IF_MOVED),
    ]
}

/// The Snappy scan's and decoder's compiled-in sizes (snappy_scan.rs).
fn snappy_defines(config: KernelConfig) -> [(&'static str, usize); 10] {
    use super::snappy_scan as s;
    [
        ("GDS_SCAN_BLOCK", s::SCAN_BLOCK as usize),
        ("GDS_UNSNAP_BLOCK", s::UNSNAP_BLOCK as usize),
        ("GDS_SCAN_SEGMENT", s::SCAN_SEGMENT),
        ("GDS_SCAN_STARTS", config.scan_starts),
        ("GDS_SCAN_WALK_WORDS", s::SCAN_WALK_WORDS),
        ("GDS_SCAN_RECORD_WORDS", s::SCAN_RECORD_WORDS),
        ("GDS_SCAN_PAGE_WORDS", s::SCAN_PAGE_WORDS),
        ("GDS_SCAN_RESULT_WORDS", s::SCAN_RESULT_WORDS),
        ("GDS_SNAPPY_PIECE", s::SNAPPY_PIECE),
        ("GDS_PIECE_HEAD", s::PIECE_HEAD),
    ]
}

/// The header `gdscan_generated.cuh` the kernel sources include: every
/// constant from Rust (and the values of `config`), and asserts that the C
/// structs match the Rust layout.
pub fn generated_header(config: KernelConfig) -> String {
    use std::fmt::Write;
    let mut h = String::new();
    h.push_str("// Generated by gdscan (src/decode/kernels/task.rs): do not edit.\n#ifndef GDSCAN_GENERATED_CUH\n#define GDSCAN_GENERATED_CUH\n\n");
    for (name, value) in decode_defines().iter().chain(&nest_defines()) {
        let _ = writeln!(h, "#define {name} {value}u");
    }
    for code in PageErrorCode::ALL {
        let _ = writeln!(h, "#define {} {}u", code.c_name(), code as u32);
    }
    let _ = writeln!(h, "#define GDS_CHECK_BLOCK {}u", super::check::CHECK_BLOCK);
    let _ = writeln!(
        h,
        "#define GDS_PIECES_BLOCK {}u",
        super::check::PIECES_BLOCK
    );
    let _ = writeln!(h, "#define GDS_PIECE_WORDS {}u", super::check::PIECE_WORDS);
    for (name, value) in snappy_defines(config) {
        let _ = writeln!(h, "#define {name} {value}u");
    }
    for code in super::check::SnappyCheck::ALL {
        let _ = writeln!(h, "#define {} {}u", code.c_name(), code as u32);
    }
    // The page kernel's blocks an SM (`__launch_bounds__`), which caps its
    // registers a thread (`KernelConfig::decode_min_blocks`).
    let _ = writeln!(h, "#define GDS_MIN_BLOCKS {}u", config.decode_min_blocks);
    // The nesting kernels' blocks an SM, 0 for the compiler's choice
    // (`KernelConfig::nest_min_blocks`).
    let _ = writeln!(h, "#define GDS_NEST_MIN_BLOCKS {}u", config.nest_min_blocks);
    // The string walk (byte_array.cu): block-parallel, or one thread per
    // page (`KernelConfig::string_walk_parallel`).
    let parallel = config.string_walk_parallel;
    let _ = writeln!(
        h,
        "#ifndef GDS_WALK_PARALLEL\n#define GDS_WALK_PARALLEL {}\n#endif",
        u32::from(parallel)
    );
    // Bytes the string walk stages in shared memory at a time.
    let _ = writeln!(
        h,
        "#ifndef GDS_WALK_CHUNK\n#define GDS_WALK_CHUNK {}u\n#endif",
        config.string_chunk
    );
    h.push('\n');
    layout_asserts(&mut h);
    h.push_str("\n#endif  // GDSCAN_GENERATED_CUH\n");
    h
}

/// The decoder's `#define`s: block shapes, kinds, encodings, conversions
/// and flags (the first of [`generated_header`]'s).
fn decode_defines() -> Vec<(&'static str, u32)> {
    vec![
        ("GDS_BLOCK", launch::DECODE_BLOCK),
        ("GDS_ITEMS", launch::DECODE_ITEMS),
        ("GDS_WALK_BLOCK", launch::WALK_BLOCK),
        ("GDS_DICT_BLOCK", launch::DICT_BLOCK),
        ("GDS_SPREAD_BLOCK", launch::SPREAD_BLOCK),
        ("GDS_SPREAD_JOIN_BLOCK", launch::SPREAD_JOIN_BLOCK),
        ("GDS_SPREAD_STATE_WORDS", launch::SPREAD_STATE_WORDS),
        ("GDS_STATUS_BLOCK", launch::STATUS_BLOCK),
        ("GDS_STATUS_WORDS", launch::STATUS_WORDS),
        ("GDS_KIND_FIXED", Kind::Fixed as u32),
        ("GDS_KIND_BOOLEAN", Kind::Boolean as u32),
        ("GDS_KIND_BYTE_ARRAY", Kind::ByteArray as u32),
        ("GDS_KIND_LEVELS", Kind::Levels as u32),
        ("GDS_ENC_PLAIN", Encoding::Plain as u32),
        ("GDS_ENC_DICTIONARY", Encoding::Dictionary as u32),
        ("GDS_ENC_RLE", Encoding::Rle as u32),
        (
            "GDS_ENC_BYTE_STREAM_SPLIT",
            Encoding::ByteStreamSplit as u32,
        ),
        (
            "GDS_ENC_DELTA_BINARY_PACKED",
            Encoding::DeltaBinaryPacked as u32,
        ),
        (
            "GDS_ENC_DELTA_LENGTH_BYTE_ARRAY",
            Encoding::DeltaLengthByteArray as u32,
        ),
        ("GDS_ENC_DELTA_BYTE_ARRAY", Encoding::DeltaByteArray as u32),
        ("GDS_CONV_COPY", Conversion::Copy as u32),
        ("GDS_CONV_I32_TO_8", Conversion::I32To8 as u32),
        ("GDS_CONV_I32_TO_16", Conversion::I32To16 as u32),
        (
            "GDS_CONV_I32_TO_DECIMAL128",
            Conversion::I32ToDecimal128 as u32,
        ),
        (
            "GDS_CONV_I64_TO_DECIMAL128",
            Conversion::I64ToDecimal128 as u32,
        ),
        (
            "GDS_CONV_BE_TO_DECIMAL128",
            Conversion::BeToDecimal128 as u32,
        ),
        (
            "GDS_CONV_INT96_TO_TIMESTAMP_NS",
            Conversion::Int96ToTimestampNs as u32,
        ),
        (
            "GDS_CONV_BE_TO_DECIMAL256",
            Conversion::BeToDecimal256 as u32,
        ),
        (
            "GDS_CONV_INTERVAL_DAY_TIME",
            Conversion::IntervalDayTime as u32,
        ),
        ("GDS_FLAG_V1_LEVELS", FLAG_V1_LEVELS),
        ("GDS_FLAG_ROW_WINDOW", FLAG_ROW_WINDOW),
        ("GDS_FLAG_V1_REP_LEVELS", FLAG_V1_REP_LEVELS),
    ]
}

/// A `static_assert` of every struct's size and every field's offset the
/// kernels share with Rust (the last of [`generated_header`]'s lines).
fn layout_asserts(h: &mut String) {
    use std::fmt::Write;
    for (ty, size, fields) in [
        ("PageTask", size_of::<PageTask>(), page_task_fields()),
        ("DictTask", size_of::<DictTask>(), dict_task_fields()),
        (
            "NestTask",
            size_of::<nest::NestTask>(),
            nest::nest_task_fields(),
        ),
        (
            "NestOutput",
            size_of::<nest::NestOutput>(),
            nest::nest_output_fields(),
        ),
    ] {
        let _ = writeln!(
            h,
            "static_assert(sizeof({ty}) == {size}, \"sizeof({ty}) differs from the Rust struct ({size})\");"
        );
        for (field, offset, _) in fields {
            let _ = writeln!(
                h,
                "static_assert(GDS_OFFSETOF({ty}, {field}) == {offset}, \"{ty}.{field} is not at the Rust offset {offset}\");"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::offset_of;

    #[test]
    fn page_task_layout() {
        assert_eq!(size_of::<PageTask>(), 184);
        assert_eq!(std::mem::align_of::<PageTask>(), 8);
        let expected: &[(&str, usize)] = &[
            ("data", 0),
            ("def_levels", 8),
            ("dict", 16),
            ("out_values", 24),
            ("out_validity", 32),
            ("scratch", 40),
            ("view_buffer_base", 48),
            ("rep_levels", 56),
            ("out_rep", 64),
            ("out_def", 72),
            ("data_len", 80),
            ("def_len", 84),
            ("num_values", 88),
            ("dict_count", 92),
            ("dict_len", 96),
            ("out_row", 100),
            ("out_rows", 104),
            ("kind", 108),
            ("encoding", 112),
            ("flags", 116),
            ("max_def", 120),
            ("conversion", 124),
            ("type_length", 128),
            ("out_width", 132),
            ("view_buffer_index", 136),
            ("scratch_len", 140),
            ("error", 144),
            ("error_index", 148),
            ("null_count", 152),
            ("value_count", 156),
            ("plain_count", 160),
            ("row_skip", 164),
            ("row_take", 168),
            ("value_bytes", 172),
            ("rep_len", 176),
            ("max_rep", 180),
        ];
        let got: Vec<(&str, usize)> = page_task_fields().iter().map(|f| (f.0, f.1)).collect();
        assert_eq!(got, expected);
        // A few directly with offset_of!, as the C side asserts them.
        assert_eq!(offset_of!(PageTask, view_buffer_base), 48);
        assert_eq!(offset_of!(PageTask, error), 144);
        assert_eq!(offset_of!(PageTask, value_bytes), 172);
    }

    #[test]
    fn dict_task_layout() {
        assert_eq!(size_of::<DictTask>(), 48);
        let got: Vec<(&str, usize)> = dict_task_fields().iter().map(|f| (f.0, f.1)).collect();
        assert_eq!(
            got,
            [
                ("data", 0),
                ("out_views", 8),
                ("view_buffer_base", 16),
                ("data_len", 24),
                ("count", 28),
                ("view_buffer_index", 32),
                ("error", 36),
                ("found", 40),
                ("conversion", 44),
            ]
        );
    }

    /// The field lists are complete and the structs have no padding: the
    /// fields tile the struct exactly, in order (so the byte views are sound
    /// and the C asserts cover every byte).
    #[test]
    fn fields_tile_the_structs() {
        for (size, fields) in [
            (size_of::<PageTask>(), page_task_fields()),
            (size_of::<DictTask>(), dict_task_fields()),
            (size_of::<nest::NestTask>(), nest::nest_task_fields()),
            (size_of::<nest::NestOutput>(), nest::nest_output_fields()),
        ] {
            let mut end = 0;
            for (name, offset, len) in fields {
                assert_eq!(*offset, end, "gap or overlap before {name}");
                end = offset + len;
            }
            assert_eq!(end, size);
        }
    }

    #[test]
    fn header_asserts_every_field_and_constant() {
        let h = generated_header(KernelConfig::DEFAULT);
        for (name, offset, _) in page_task_fields() {
            assert!(h.contains(&format!("GDS_OFFSETOF(PageTask, {name}) == {offset}")));
        }
        for (name, offset, _) in dict_task_fields() {
            assert!(h.contains(&format!("GDS_OFFSETOF(DictTask, {name}) == {offset}")));
        }
        assert!(h.contains("sizeof(PageTask) == 184"));
        assert!(h.contains("#define GDS_BLOCK 256u"));
        assert!(h.contains("#define GDS_ERR_DICT_INDEX 11u"));
        // Every define once.
        let mut names: Vec<&str> = h
            .lines()
            .filter_map(|l| l.strip_prefix("#define "))
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n);
        // The order the sources rely on: the guard, every constant, then
        // the layout asserts, then the guard's end.
        assert!(h.starts_with(
            "// Generated by gdscan (src/decode/kernels/task.rs): do not edit.\n\
             #ifndef GDSCAN_GENERATED_CUH\n#define GDSCAN_GENERATED_CUH\n\n#define GDS_BLOCK 256u\n"
        ));
        let last_define = h.rfind("#define GDS_").unwrap();
        let first_assert = h.find("static_assert(").unwrap();
        assert!(last_define < first_assert);
        assert!(h.contains(
            "#define GDS_WALK_CHUNK 16384u\n#endif\n\nstatic_assert(sizeof(PageTask) == 184"
        ));
        assert!(h.ends_with("\");\n\n#endif  // GDSCAN_GENERATED_CUH\n"));
    }

    #[test]
    fn error_codes_round_trip() {
        assert_eq!(PageErrorCode::from_code(0), None);
        for (i, code) in PageErrorCode::ALL.iter().enumerate() {
            assert_eq!(*code as u32, i as u32 + 1);
            assert_eq!(PageErrorCode::from_code(*code as u32), Some(*code));
            assert!(code.c_name().starts_with("GDS_ERR_"));
            assert!(!code.describe().is_empty());
        }
        assert_eq!(
            PageErrorCode::from_code(PageErrorCode::ALL.len() as u32 + 1),
            None
        );
        assert_eq!(
            PageErrorCode::DictIndex.to_string(),
            "dictionary index past the dictionary's end (11)"
        );
    }

    #[test]
    fn conversions_accept_their_widths() {
        assert!(Conversion::Copy.accepts(4, 4));
        assert!(Conversion::Copy.accepts(3, 3));
        assert!(!Conversion::Copy.accepts(4, 8));
        assert!(!Conversion::Copy.accepts(0, 0));
        assert!(Conversion::I32To8.accepts(4, 1));
        assert!(!Conversion::I32To8.accepts(8, 1));
        assert!(Conversion::I32To16.accepts(4, 2));
        assert!(Conversion::I32ToDecimal128.accepts(4, 16));
        assert!(Conversion::I64ToDecimal128.accepts(8, 16));
        assert!(!Conversion::I64ToDecimal128.accepts(4, 16));
        assert!(Conversion::BeToDecimal128.accepts(1, 16));
        assert!(Conversion::BeToDecimal128.accepts(16, 16));
        assert!(!Conversion::BeToDecimal128.accepts(17, 16));
        assert!(!Conversion::BeToDecimal128.accepts(0, 16));
    }

    #[test]
    fn byte_views_cover_the_array() {
        let mut tasks = vec![PageTask::default(); 3];
        tasks[1].num_values = 0x0403_0201;
        let bytes = page_tasks_as_bytes(&tasks);
        assert_eq!(bytes.len(), 3 * 184);
        assert_eq!(&bytes[184 + 88..184 + 92], &[1, 2, 3, 4]);
        page_tasks_as_bytes_mut(&mut tasks)[2 * 184 + 144] = 11;
        assert_eq!(tasks[2].error, 11);
        let dicts = [DictTask::default(); 2];
        assert_eq!(dict_tasks_as_bytes(&dicts).len(), 96);
    }
}
