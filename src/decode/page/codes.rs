//! The codes a page task carries, shared by the page plan that picks them
//! and the kernels that act on them: what a page decodes ([`Kind`]), how its
//! values are encoded ([`Encoding`]) and how a fixed-width value becomes its
//! output ([`Conversion`]). The discriminants are the values of the C
//! header's `#define`s (`kernels::task::generated_header`).

/// What a page task decodes: picks the branch of `gds_decode_pages`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Kind {
    /// Fixed-width values (INT32, INT64, FLOAT, DOUBLE, FIXED_LEN_BYTE_ARRAY),
    /// PLAIN or dictionary, through a [`Conversion`].
    Fixed = 0,
    /// BOOLEAN, PLAIN (bit-packed) or RLE, into an Arrow bitmap.
    Boolean = 1,
    /// BYTE_ARRAY into 16-byte Utf8View/BinaryView views: PLAIN (after
    /// `gds_byte_array_walk`) or dictionary (gathering the views that
    /// `gds_dict_views` made of the dictionary).
    ByteArray = 2,
    /// Definition levels only: validity bits, and the row of every value
    /// (the row map) into the task's scratch when it has one.
    Levels = 3,
}

/// How a page's values are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Encoding {
    /// PLAIN.
    Plain = 0,
    /// PLAIN_DICTIONARY or RLE_DICTIONARY: one bit-width byte, then the
    /// indices as an RLE/bit-packed hybrid stream.
    Dictionary = 1,
    /// RLE booleans: a 4-byte length, then a hybrid stream of bit width 1.
    Rle = 2,
    /// BYTE_STREAM_SPLIT (fixed-width values only): byte `b` of value `i`
    /// of the page's `n` values is at `b * n + i`.
    ByteStreamSplit = 3,
    /// DELTA_BINARY_PACKED (INT32 and INT64): a header, then blocks of
    /// bit-packed miniblocks of deltas; sums wrap in the physical width.
    /// The kernel first writes the page's values into the task's scratch
    /// as PLAIN.
    DeltaBinaryPacked = 4,
    /// DELTA_LENGTH_BYTE_ARRAY (BYTE_ARRAY): the values' lengths as
    /// DELTA_BINARY_PACKED INT32, then their bytes back to back. The kernel
    /// decodes the lengths into the task's scratch and scans them into
    /// offsets (a PLAIN page's walk, without length prefixes).
    DeltaLengthByteArray = 5,
    /// DELTA_BYTE_ARRAY (BYTE_ARRAY, FIXED_LEN_BYTE_ARRAY): prefix lengths
    /// and suffix lengths (both DELTA_BINARY_PACKED INT32), then the
    /// suffixes' bytes; value `i` is the first `prefix[i]` bytes of value
    /// `i - 1`, then suffix `i`. The values are materialized: FLBA pages
    /// into the task's scratch as PLAIN; BYTE_ARRAY pages into a buffer
    /// sized by `gds_dba_sizes` and exported with the column (see
    /// `decode::scan::s5_delta_string_buffers`).
    DeltaByteArray = 6,
}

/// How a fixed-width value becomes its output ([`Kind::Fixed`] only).
///
/// `type_length` is the input width, `out_width` the output width; the
/// kernel refuses other pairs with `BadConversion` (`kernels::PageErrorCode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum Conversion {
    /// Copy `type_length` bytes (`out_width == type_length`): INT32, INT64,
    /// FLOAT, DOUBLE, DATE, TIMESTAMP, UINT32/64, FLBA without decimal.
    Copy = 0,
    /// INT32 to 1 byte (INT_8 / UINT_8): the low byte, as arrow-rs casts.
    I32To8 = 1,
    /// INT32 to 2 bytes (INT_16 / UINT_16): the low half.
    I32To16 = 2,
    /// INT32 decimal to Decimal128 (sign-extended to 16 bytes).
    I32ToDecimal128 = 3,
    /// INT64 decimal to Decimal128 (sign-extended to 16 bytes).
    I64ToDecimal128 = 4,
    /// FIXED_LEN_BYTE_ARRAY decimal (big-endian two's complement, 1 to 16
    /// bytes) to little-endian Decimal128.
    BeToDecimal128 = 5,
    /// INT96 (8 bytes of nanoseconds in the day, then a 4-byte Julian day,
    /// little-endian) to nanoseconds since the Unix epoch, in i64 with
    /// wrapping arithmetic, as arrow-rs converts it.
    Int96ToTimestampNs = 6,
    /// FIXED_LEN_BYTE_ARRAY decimal of 17 to 32 bytes (big-endian two's
    /// complement) to little-endian Decimal256, sign-extended.
    BeToDecimal256 = 7,
    /// INTERVAL (12 bytes: months, days, milliseconds as little-endian u32)
    /// to Arrow's IntervalDayTime (days, milliseconds): arrow-rs's mapping,
    /// which drops the months.
    IntervalDayTime = 8,
}

impl Conversion {
    /// Whether the kernel accepts this conversion from `type_length` input
    /// bytes to `out_width` output bytes (the same rule as the kernel's).
    pub fn accepts(self, type_length: u32, out_width: u32) -> bool {
        match self {
            Conversion::Copy => type_length >= 1 && type_length == out_width,
            Conversion::I32To8 => type_length == 4 && out_width == 1,
            Conversion::I32To16 => type_length == 4 && out_width == 2,
            Conversion::I32ToDecimal128 => type_length == 4 && out_width == 16,
            Conversion::I64ToDecimal128 => type_length == 8 && out_width == 16,
            Conversion::BeToDecimal128 => (1..=16).contains(&type_length) && out_width == 16,
            Conversion::Int96ToTimestampNs => type_length == 12 && out_width == 8,
            Conversion::BeToDecimal256 => (1..=32).contains(&type_length) && out_width == 32,
            Conversion::IntervalDayTime => type_length == 12 && out_width == 8,
        }
    }
}
