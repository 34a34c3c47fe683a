//! The decode plan of one row group: from the walked pages of each
//! projected column chunk to the arithmetic the GPU launches need: the
//! output Arrow type and value conversion of each column, each data page's
//! first output row and encoding class, where each page's bytes are (in the
//! fetched row-group buffer, or decompressed into a per-row-group scratch
//! buffer), the decompression jobs, and the sizes of scratch and output.
//!
//! Pure: no I/O, no GPU. Anything outside the decoder's coverage (nested
//! columns, DELTA_* and BYTE_STREAM_SPLIT encodings, INT96, BROTLI, legacy
//! LZ4, decimals wider than 38 digits, ...) is a typed
//! [`DecodePlanError::Unsupported`] before any kernel runs.

use arrow::datatypes::{DataType, TimeUnit};
use parquet::basic::{
    Compression, ConvertedType, Encoding, LogicalType, TimeUnit as ParquetTimeUnit,
    Type as PhysicalType,
};
use parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData};
use parquet::schema::types::ColumnDescriptor;

use crate::parquet::fetch::ChunkSlice;
use crate::parquet::plan::{PageRange, ScanPlan};

use super::header::PageKind;
use super::walk::{walk_chunk, PageInfo, WalkError};

/// Alignment of every region of the scratch buffer (decompressed pages,
/// dictionary offsets, per-page work areas).
pub const SCRATCH_ALIGN: usize = 16;

/// Why a row group cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodePlanError {
    /// The column uses something the GPU decoder does not cover.
    #[error("column {column}: unsupported by the GPU decoder: {what}")]
    Unsupported {
        /// Column path.
        column: String,
        /// What is not covered.
        what: String,
    },
    /// The chunk's pages could not be walked.
    #[error("column {column}, row group {row_group}: {source}")]
    Walk {
        /// Column path.
        column: String,
        /// Row group index in the file.
        row_group: usize,
        /// What went wrong.
        #[source]
        source: WalkError,
    },
    /// A page contradicts the format or the metadata.
    #[error("column {column}, row group {row_group}, page {page}: {what}")]
    BadPage {
        /// Column path.
        column: String,
        /// Row group index in the file.
        row_group: usize,
        /// Page index in the chunk's kept pages (the dictionary page is 0).
        page: usize,
        /// What is wrong.
        what: String,
    },
    /// A chunk contradicts the format, the metadata or the scan plan.
    #[error("column {column}, row group {row_group}: {what}")]
    BadChunk {
        /// Column path.
        column: String,
        /// Row group index in the file.
        row_group: usize,
        /// What is wrong.
        what: String,
    },
    /// The fetched row group does not fit the scan plan or the metadata.
    #[error("row group {row_group}: {what}")]
    BadRowGroup {
        /// Row group index in the file.
        row_group: usize,
        /// What is wrong.
        what: String,
    },
}

/// How a kernel turns a page's physical values into the output column.
/// The discriminants are the values the kernels' `PageTask::conversion`
/// uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Conversion {
    /// Copy `out_width` bytes per value (INT32, INT64, FLOAT, DOUBLE, DATE,
    /// TIME, TIMESTAMP, FIXED_LEN_BYTE_ARRAY without a decimal type).
    Copy = 0,
    /// INT32 narrowed to Int8.
    Int32ToInt8 = 1,
    /// INT32 narrowed to Int16.
    Int32ToInt16 = 2,
    /// INT32 narrowed to UInt8.
    Int32ToUInt8 = 3,
    /// INT32 narrowed to UInt16.
    Int32ToUInt16 = 4,
    /// INT32 sign-extended to a 16-byte Decimal128.
    Int32ToDecimal128 = 5,
    /// INT64 sign-extended to a 16-byte Decimal128.
    Int64ToDecimal128 = 6,
    /// FIXED_LEN_BYTE_ARRAY big-endian two's complement (1..=16 bytes) to a
    /// little-endian Decimal128.
    FlbaToDecimal128 = 7,
    /// BOOLEAN bits to Arrow's bitmap.
    Boolean = 8,
    /// BYTE_ARRAY to 16-byte views (Utf8View / BinaryView).
    ByteArrayView = 9,
}

/// The decoder's view of one column: physical input, Arrow output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnType {
    /// Parquet physical type.
    pub physical: PhysicalType,
    /// Arrow output type.
    pub data_type: DataType,
    /// Value conversion.
    pub conversion: Conversion,
    /// Bytes of one physical value (BOOLEAN: 0, a bit; BYTE_ARRAY: 0,
    /// variable).
    pub type_length: u32,
    /// Bytes of one output value (BOOLEAN: 0, a bit; views: 16).
    pub out_width: u32,
    /// Whether the column is optional (max definition level 1): output has
    /// a validity bitmap.
    pub nullable: bool,
}

fn unsupported(column: &ColumnDescriptor, what: impl Into<String>) -> DecodePlanError {
    DecodePlanError::Unsupported {
        column: column.path().string(),
        what: what.into(),
    }
}

fn decimal(
    column: &ColumnDescriptor,
    precision: i32,
    scale: i32,
) -> Result<DataType, DecodePlanError> {
    let p = u8::try_from(precision)
        .ok()
        .filter(|p| (1..=38).contains(p))
        .ok_or_else(|| {
            unsupported(
                column,
                format!("DECIMAL precision {precision} (Decimal128 holds 1..=38)"),
            )
        })?;
    let s =
        i8::try_from(scale).map_err(|_| unsupported(column, format!("DECIMAL scale {scale}")))?;
    Ok(DataType::Decimal128(p, s))
}

fn timestamp_unit(unit: &ParquetTimeUnit) -> TimeUnit {
    match unit {
        ParquetTimeUnit::MILLIS => TimeUnit::Millisecond,
        ParquetTimeUnit::MICROS => TimeUnit::Microsecond,
        ParquetTimeUnit::NANOS => TimeUnit::Nanosecond,
    }
}

fn int32_type(c: &ColumnDescriptor) -> Result<(DataType, Conversion), DecodePlanError> {
    use Conversion as K;
    let other = |c: &ColumnDescriptor| {
        unsupported(
            c,
            format!(
                "INT32 with logical type {:?} / converted type {}",
                c.logical_type_ref(),
                c.converted_type()
            ),
        )
    };
    Ok(match (c.logical_type_ref(), c.converted_type()) {
        (None, ConvertedType::NONE) => (DataType::Int32, K::Copy),
        (Some(LogicalType::Integer(int)), _) => match (int.bit_width, int.is_signed) {
            (8, true) => (DataType::Int8, K::Int32ToInt8),
            (16, true) => (DataType::Int16, K::Int32ToInt16),
            (32, true) => (DataType::Int32, K::Copy),
            (8, false) => (DataType::UInt8, K::Int32ToUInt8),
            (16, false) => (DataType::UInt16, K::Int32ToUInt16),
            (32, false) => (DataType::UInt32, K::Copy),
            _ => return Err(other(c)),
        },
        (Some(LogicalType::Decimal(d)), _) => {
            (decimal(c, d.precision, d.scale)?, K::Int32ToDecimal128)
        }
        (Some(LogicalType::Date), _) => (DataType::Date32, K::Copy),
        (Some(LogicalType::Time(t)), _) if t.unit == ParquetTimeUnit::MILLIS => {
            (DataType::Time32(TimeUnit::Millisecond), K::Copy)
        }
        (None, ConvertedType::UINT_8) => (DataType::UInt8, K::Int32ToUInt8),
        (None, ConvertedType::UINT_16) => (DataType::UInt16, K::Int32ToUInt16),
        (None, ConvertedType::UINT_32) => (DataType::UInt32, K::Copy),
        (None, ConvertedType::INT_8) => (DataType::Int8, K::Int32ToInt8),
        (None, ConvertedType::INT_16) => (DataType::Int16, K::Int32ToInt16),
        (None, ConvertedType::INT_32) => (DataType::Int32, K::Copy),
        (None, ConvertedType::DATE) => (DataType::Date32, K::Copy),
        (None, ConvertedType::TIME_MILLIS) => (DataType::Time32(TimeUnit::Millisecond), K::Copy),
        (None, ConvertedType::DECIMAL) => (
            decimal(c, c.type_precision(), c.type_scale())?,
            K::Int32ToDecimal128,
        ),
        _ => return Err(other(c)),
    })
}

fn int64_type(c: &ColumnDescriptor) -> Result<(DataType, Conversion), DecodePlanError> {
    use Conversion as K;
    let other = |c: &ColumnDescriptor| {
        unsupported(
            c,
            format!(
                "INT64 with logical type {:?} / converted type {}",
                c.logical_type_ref(),
                c.converted_type()
            ),
        )
    };
    let utc = || Some("UTC".into());
    Ok(match (c.logical_type_ref(), c.converted_type()) {
        (None, ConvertedType::NONE) => (DataType::Int64, K::Copy),
        (Some(LogicalType::Integer(int)), _) if int.bit_width == 64 => {
            if int.is_signed {
                (DataType::Int64, K::Copy)
            } else {
                (DataType::UInt64, K::Copy)
            }
        }
        (Some(LogicalType::Time(t)), _) => match t.unit {
            ParquetTimeUnit::MICROS => (DataType::Time64(TimeUnit::Microsecond), K::Copy),
            ParquetTimeUnit::NANOS => (DataType::Time64(TimeUnit::Nanosecond), K::Copy),
            ParquetTimeUnit::MILLIS => return Err(other(c)),
        },
        (Some(LogicalType::Timestamp(t)), _) => (
            DataType::Timestamp(
                timestamp_unit(&t.unit),
                if t.is_adjusted_to_u_t_c { utc() } else { None },
            ),
            K::Copy,
        ),
        (None, ConvertedType::INT_64) => (DataType::Int64, K::Copy),
        (None, ConvertedType::UINT_64) => (DataType::UInt64, K::Copy),
        (None, ConvertedType::TIME_MICROS) => (DataType::Time64(TimeUnit::Microsecond), K::Copy),
        (None, ConvertedType::TIMESTAMP_MILLIS) => {
            (DataType::Timestamp(TimeUnit::Millisecond, utc()), K::Copy)
        }
        (None, ConvertedType::TIMESTAMP_MICROS) => {
            (DataType::Timestamp(TimeUnit::Microsecond, utc()), K::Copy)
        }
        (Some(LogicalType::Decimal(d)), _) => {
            (decimal(c, d.precision, d.scale)?, K::Int64ToDecimal128)
        }
        (None, ConvertedType::DECIMAL) => (
            decimal(c, c.type_precision(), c.type_scale())?,
            K::Int64ToDecimal128,
        ),
        _ => return Err(other(c)),
    })
}

fn byte_array_type(c: &ColumnDescriptor) -> Result<DataType, DecodePlanError> {
    Ok(match (c.logical_type_ref(), c.converted_type()) {
        (Some(LogicalType::String | LogicalType::Json), _) => DataType::Utf8View,
        (
            Some(
                LogicalType::Bson
                | LogicalType::Enum
                | LogicalType::Geometry { .. }
                | LogicalType::Geography { .. }
                | LogicalType::_Unknown { .. },
            ),
            _,
        ) => DataType::BinaryView,
        (None, ConvertedType::UTF8 | ConvertedType::JSON) => DataType::Utf8View,
        (None, ConvertedType::NONE | ConvertedType::BSON | ConvertedType::ENUM) => {
            DataType::BinaryView
        }
        (Some(LogicalType::Decimal(_)), _) | (None, ConvertedType::DECIMAL) => {
            return Err(unsupported(c, "DECIMAL stored as BYTE_ARRAY"))
        }
        (l, conv) => {
            return Err(unsupported(
                c,
                format!("BYTE_ARRAY with logical type {l:?} / converted type {conv}"),
            ))
        }
    })
}

fn flba_type(c: &ColumnDescriptor, len: u32) -> Result<(DataType, Conversion), DecodePlanError> {
    let dec = match (c.logical_type_ref(), c.converted_type()) {
        (Some(LogicalType::Decimal(d)), _) => Some((d.precision, d.scale)),
        (None, ConvertedType::DECIMAL) => Some((c.type_precision(), c.type_scale())),
        _ => None,
    };
    if let Some((precision, scale)) = dec {
        if !(1..=16).contains(&len) {
            return Err(unsupported(
                c,
                format!(
                    "DECIMAL in a FIXED_LEN_BYTE_ARRAY of {len} bytes (Decimal128 holds 1..=16)"
                ),
            ));
        }
        return Ok((decimal(c, precision, scale)?, Conversion::FlbaToDecimal128));
    }
    match (c.logical_type_ref(), c.converted_type()) {
        (None, ConvertedType::INTERVAL) => Err(unsupported(c, "INTERVAL")),
        (Some(LogicalType::Float16), _) if len == 2 => Ok((DataType::Float16, Conversion::Copy)),
        (Some(LogicalType::Float16), _) => Err(unsupported(c, format!("FLOAT16 of {len} bytes"))),
        _ => Ok((DataType::FixedSizeBinary(len as i32), Conversion::Copy)),
    }
}

/// The output type of a column, and how its values are converted; the
/// Arrow type is arrow-rs's (`parquet_to_arrow_schema` without an embedded
/// Arrow schema) except that strings and binaries are Utf8View and
/// BinaryView. Nested or repeated columns, INT96, decimals that do not fit
/// Decimal128 and the other types outside the decoder's coverage are
/// [`DecodePlanError::Unsupported`].
pub fn column_type(column: &ColumnDescriptor) -> Result<ColumnType, DecodePlanError> {
    if column.max_rep_level() > 0 {
        return Err(unsupported(column, "repeated (nested) column"));
    }
    if column.max_def_level() > 1 || column.path().parts().len() > 1 {
        return Err(unsupported(column, "column inside a group (nested)"));
    }
    if matches!(column.logical_type_ref(), Some(LogicalType::Unknown)) {
        return Err(unsupported(column, "UNKNOWN (always null) logical type"));
    }
    let physical = column.physical_type();
    let (data_type, conversion, type_length) = match physical {
        PhysicalType::BOOLEAN => (DataType::Boolean, Conversion::Boolean, 0),
        PhysicalType::INT32 => {
            let (t, k) = int32_type(column)?;
            (t, k, 4)
        }
        PhysicalType::INT64 => {
            let (t, k) = int64_type(column)?;
            (t, k, 8)
        }
        PhysicalType::INT96 => return Err(unsupported(column, "INT96")),
        PhysicalType::FLOAT => (DataType::Float32, Conversion::Copy, 4),
        PhysicalType::DOUBLE => (DataType::Float64, Conversion::Copy, 8),
        PhysicalType::BYTE_ARRAY => (byte_array_type(column)?, Conversion::ByteArrayView, 0),
        PhysicalType::FIXED_LEN_BYTE_ARRAY => {
            let len = u32::try_from(column.type_length())
                .ok()
                .filter(|l| *l > 0)
                .ok_or_else(|| {
                    unsupported(
                        column,
                        format!("FIXED_LEN_BYTE_ARRAY of length {}", column.type_length()),
                    )
                })?;
            let (t, k) = flba_type(column, len)?;
            (t, k, len)
        }
    };
    let out_width = match &data_type {
        DataType::Boolean => 0,
        DataType::Utf8View | DataType::BinaryView => 16,
        DataType::Int8 | DataType::UInt8 => 1,
        DataType::Int16 | DataType::UInt16 | DataType::Float16 => 2,
        DataType::Decimal128(..) => 16,
        DataType::FixedSizeBinary(n) => *n as u32,
        _ => type_length,
    };
    Ok(ColumnType {
        physical,
        data_type,
        conversion,
        type_length,
        out_width,
        nullable: column.max_def_level() == 1,
    })
}

/// A codec the decompression jobs use (nvCOMP's batched codecs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PageCodec {
    /// SNAPPY (raw Snappy blocks).
    Snappy,
    /// ZSTD (zstd frames).
    Zstd,
    /// LZ4_RAW (raw LZ4 blocks).
    Lz4Raw,
    /// GZIP (gzip members).
    Gzip,
}

/// The job codec of a chunk's compression: None for UNCOMPRESSED;
/// BROTLI, LZO and legacy (Hadoop-framed) LZ4 are unsupported.
pub fn page_codec(
    column: &ColumnDescriptor,
    compression: Compression,
) -> Result<Option<PageCodec>, DecodePlanError> {
    match compression {
        Compression::UNCOMPRESSED => Ok(None),
        Compression::SNAPPY => Ok(Some(PageCodec::Snappy)),
        Compression::ZSTD(_) => Ok(Some(PageCodec::Zstd)),
        Compression::LZ4_RAW => Ok(Some(PageCodec::Lz4Raw)),
        Compression::GZIP(_) => Ok(Some(PageCodec::Gzip)),
        Compression::BROTLI(_) => Err(unsupported(column, "BROTLI compression")),
        Compression::LZ4 => Err(unsupported(column, "legacy LZ4 compression (not LZ4_RAW)")),
        Compression::LZO => Err(unsupported(column, "LZO compression")),
    }
}

/// Which buffer a region lies in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BufferKind {
    /// The fetched row-group buffer (bytes as stored in the file).
    RowGroup,
    /// The per-row-group scratch buffer (decompressed pages, work areas).
    Scratch,
}

/// Bytes in one of the buffers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    /// Which buffer.
    pub buffer: BufferKind,
    /// Offset in it.
    pub offset: usize,
    /// Length.
    pub len: usize,
}

impl Region {
    fn row_group(offset: usize, len: usize) -> Self {
        Region {
            buffer: BufferKind::RowGroup,
            offset,
            len,
        }
    }
}

/// How a data page's values are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum EncodingClass {
    /// PLAIN.
    Plain = 0,
    /// PLAIN_DICTIONARY or RLE_DICTIONARY: a bit-width byte then indices in
    /// the RLE/bit-packed hybrid.
    Dictionary = 1,
    /// RLE booleans: a 4-byte length then the hybrid of bit width 1.
    Rle = 2,
}

/// Data page format version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageVersion {
    /// DATA_PAGE: levels and values compressed together; decompressed,
    /// `[u32 def length][def levels][values]` when nullable.
    V1,
    /// DATA_PAGE_V2: levels first and never compressed, then the values.
    V2,
}

/// One data page to decode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageDecode {
    /// Index in the chunk's walked pages (the dictionary page is 0).
    pub page: usize,
    /// Format version.
    pub version: PageVersion,
    /// The values' encoding as written.
    pub encoding: Encoding,
    /// Its class (what the kernels dispatch on).
    pub class: EncodingClass,
    /// Values, nulls included.
    pub num_values: u32,
    /// Rows (flat columns: equal to `num_values`).
    pub num_rows: u32,
    /// Nulls, when the header says (v2).
    pub num_nulls: Option<u32>,
    /// First output row: the rows of the column's earlier kept pages.
    pub out_row: u64,
    /// First row within the row group, from the offset index when the scan
    /// plan carries it (with page pruning it differs from `out_row`).
    pub first_row: Option<u64>,
    /// The decompressed body: v1 the whole page (levels and values), v2 the
    /// values only.
    pub data: Region,
    /// v2 definition levels (in the row-group buffer, never compressed);
    /// None for v1 pages and required columns.
    pub def_levels: Option<Region>,
    /// Work area in scratch for the kernels, see [`work_bytes`]; None when
    /// the page needs none.
    pub work: Option<Region>,
}

/// A chunk's dictionary page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DictionaryDecode {
    /// Index in the chunk's walked pages (always 0).
    pub page: usize,
    /// Entries.
    pub num_values: u32,
    /// The decompressed entries (PLAIN).
    pub data: Region,
    /// For BYTE_ARRAY: `u32 × (num_values + 1)` in scratch, each entry's
    /// offset in `data`, filled by a prep kernel.
    pub offsets: Option<Region>,
}

/// One decompression job: `src` of the row-group buffer decompressed into
/// `dst` of scratch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecompressJob {
    /// Codec.
    pub codec: PageCodec,
    /// Index into [`DecodePlan::columns`].
    pub column: usize,
    /// Page index in the chunk's walked pages.
    pub page: usize,
    /// Offset of the compressed bytes in the row-group buffer.
    pub src_offset: usize,
    /// Compressed bytes.
    pub src_len: usize,
    /// Offset of the output in scratch ([`SCRATCH_ALIGN`]-aligned).
    pub dst_offset: usize,
    /// Exact decompressed bytes.
    pub dst_len: usize,
}

/// The decode of one column chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnDecode {
    /// Leaf index in the schema.
    pub leaf: usize,
    /// Column path.
    pub column: String,
    /// Input and output types.
    pub ty: ColumnType,
    /// Job codec, None when uncompressed.
    pub codec: Option<PageCodec>,
    /// The dictionary page, if the chunk has one.
    pub dictionary: Option<DictionaryDecode>,
    /// The kept data pages in order.
    pub pages: Vec<PageDecode>,
    /// Output rows (sum over the kept pages).
    pub rows: u64,
    /// Output bytes of fixed-width values (BOOLEAN: the bitmap); 0 for
    /// views.
    pub value_bytes: u64,
    /// Output bytes of the validity bitmap (0 when required).
    pub validity_bytes: u64,
    /// Output bytes of 16-byte views (BYTE_ARRAY).
    pub view_bytes: u64,
}

/// The decode plan of one row group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodePlan {
    /// Row group index in the file.
    pub row_group: usize,
    /// The projected columns, in order.
    pub columns: Vec<ColumnDecode>,
    /// Every decompression job.
    pub jobs: Vec<DecompressJob>,
    /// Bytes of the scratch buffer.
    pub scratch_bytes: usize,
}

/// Counts of one codec's jobs: what nvCOMP's scratch sizing needs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JobStats {
    /// Jobs.
    pub count: usize,
    /// Largest decompressed size.
    pub max_dst: usize,
    /// Total decompressed bytes.
    pub total_dst: usize,
    /// Total compressed bytes.
    pub total_src: usize,
}

impl DecodePlan {
    /// The statistics of one codec's jobs.
    pub fn job_stats(&self, codec: PageCodec) -> JobStats {
        self.jobs
            .iter()
            .filter(|j| j.codec == codec)
            .fold(JobStats::default(), |s, j| JobStats {
                count: s.count + 1,
                max_dst: s.max_dst.max(j.dst_len),
                total_dst: s.total_dst + j.dst_len,
                total_src: s.total_src + j.src_len,
            })
    }

    /// Output rows, when every column has the same (always, unless page
    /// pruning kept different pages in different columns).
    pub fn rows(&self) -> Option<u64> {
        let first = self.columns.first()?.rows;
        self.columns
            .iter()
            .all(|c| c.rows == first)
            .then_some(first)
    }

    /// Output bytes of all columns (values, validity, views).
    pub fn output_bytes(&self) -> u64 {
        self.columns
            .iter()
            .map(|c| c.value_bytes + c.validity_bytes + c.view_bytes)
            .sum()
    }
}

/// Bytes of a data page's work area in scratch: a `u32` row index per
/// value when the column is nullable (value → row map), then a `u32` byte
/// offset per value for PLAIN BYTE_ARRAY pages (value starts).
pub fn work_bytes(ty: &ColumnType, class: EncodingClass, num_values: u32) -> usize {
    let per_value = usize::from(ty.nullable)
        + usize::from(ty.physical == PhysicalType::BYTE_ARRAY && class == EncodingClass::Plain);
    per_value * 4 * num_values as usize
}

/// One column chunk's input to the plan.
#[derive(Debug, Clone, Copy)]
pub struct ColumnInput<'a> {
    /// Leaf index in the schema.
    pub leaf: usize,
    /// The leaf's descriptor.
    pub descr: &'a ColumnDescriptor,
    /// The chunk's metadata.
    pub meta: &'a ColumnChunkMetaData,
    /// Its pages as walked from the fetched buffer.
    pub pages: &'a [PageInfo],
    /// Its kept data pages from the offset index (the scan plan's
    /// [`ChunkPlan::pages`](crate::parquet::plan::ChunkPlan::pages)), when known.
    pub page_ranges: Option<&'a [PageRange]>,
}

/// Hands out aligned regions of scratch.
struct Scratch {
    len: usize,
    row_group: usize,
}

impl Scratch {
    fn take(&mut self, len: usize, column: &str) -> Result<Region, DecodePlanError> {
        let too_big = || DecodePlanError::BadChunk {
            column: column.to_string(),
            row_group: self.row_group,
            what: "scratch size overflows".into(),
        };
        let offset = self
            .len
            .checked_next_multiple_of(SCRATCH_ALIGN)
            .ok_or_else(too_big)?;
        self.len = offset.checked_add(len).ok_or_else(too_big)?;
        Ok(Region {
            buffer: BufferKind::Scratch,
            offset,
            len,
        })
    }
}

/// A part of a page body: `src_len` stored bytes at `src_offset` of the
/// row-group buffer holding `len` bytes once decompressed (when
/// `compressed` and the chunk has a codec).
struct BodyPart {
    page: usize,
    compressed: bool,
    src_offset: usize,
    src_len: usize,
    len: usize,
}

struct ColumnPlanner<'a, 'b> {
    input: &'b ColumnInput<'a>,
    column: String,
    row_group: usize,
    index: usize,
    codec: Option<PageCodec>,
}

impl ColumnPlanner<'_, '_> {
    fn bad_page(&self, page: usize, what: impl Into<String>) -> DecodePlanError {
        DecodePlanError::BadPage {
            column: self.column.clone(),
            row_group: self.row_group,
            page,
            what: what.into(),
        }
    }

    fn bad_chunk(&self, what: impl Into<String>) -> DecodePlanError {
        DecodePlanError::BadChunk {
            column: self.column.clone(),
            row_group: self.row_group,
            what: what.into(),
        }
    }

    fn unsupported_page(&self, page: usize, what: impl std::fmt::Display) -> DecodePlanError {
        DecodePlanError::Unsupported {
            column: self.column.clone(),
            what: format!("page {page} of row group {}: {what}", self.row_group),
        }
    }

    /// The region holding `len` decompressed bytes of a body part that
    /// starts at `src_offset` and is stored in `src_len` bytes, and the job
    /// producing it when it is compressed.
    fn body(
        &self,
        part: BodyPart,
        scratch: &mut Scratch,
        jobs: &mut Vec<DecompressJob>,
    ) -> Result<Region, DecodePlanError> {
        let BodyPart {
            page,
            compressed,
            src_offset,
            src_len,
            len,
        } = part;
        match self.codec.filter(|_| compressed) {
            None => {
                if src_len != len {
                    return Err(self.bad_page(
                        page,
                        format!("uncompressed page stores {src_len} bytes but says it holds {len}"),
                    ));
                }
                Ok(Region::row_group(src_offset, len))
            }
            // A page of nulls only may have no values at all.
            Some(_) if len == 0 => Ok(Region::row_group(src_offset, 0)),
            Some(codec) => {
                if src_len == 0 {
                    return Err(self.bad_page(
                        page,
                        format!("compressed body is empty but should hold {len} bytes"),
                    ));
                }
                let dst = scratch.take(len, &self.column)?;
                jobs.push(DecompressJob {
                    codec,
                    column: self.index,
                    page,
                    src_offset,
                    src_len,
                    dst_offset: dst.offset,
                    dst_len: len,
                });
                Ok(dst)
            }
        }
    }
}

fn page_class(
    planner: &ColumnPlanner<'_, '_>,
    ty: &ColumnType,
    page: usize,
    encoding: Encoding,
    has_dictionary: bool,
) -> Result<EncodingClass, DecodePlanError> {
    match encoding {
        Encoding::PLAIN => Ok(EncodingClass::Plain),
        Encoding::PLAIN_DICTIONARY | Encoding::RLE_DICTIONARY => {
            if ty.physical == PhysicalType::BOOLEAN {
                Err(planner.unsupported_page(page, "dictionary-encoded BOOLEAN"))
            } else if !has_dictionary {
                Err(planner.bad_page(page, "dictionary-encoded page without a dictionary page"))
            } else {
                Ok(EncodingClass::Dictionary)
            }
        }
        Encoding::RLE if ty.physical == PhysicalType::BOOLEAN => Ok(EncodingClass::Rle),
        other => Err(planner.unsupported_page(page, format!("{other} encoding"))),
    }
}

/// Checks that `present` PLAIN values can fit in `len` bytes (a lying
/// value count would otherwise size scratch and launches): fixed-width
/// values take their width, booleans a bit, byte arrays at least their
/// 4-byte length.
fn check_values_fit(
    planner: &ColumnPlanner<'_, '_>,
    ty: &ColumnType,
    page: usize,
    class: EncodingClass,
    present: u32,
    len: usize,
) -> Result<(), DecodePlanError> {
    if class != EncodingClass::Plain {
        return Ok(());
    }
    let n = u64::from(present);
    let min = match ty.physical {
        PhysicalType::BOOLEAN => n.div_ceil(8),
        PhysicalType::BYTE_ARRAY => n * 4,
        _ => n * u64::from(ty.type_length),
    };
    if min > len as u64 {
        return Err(planner.bad_page(
            page,
            format!("{present} PLAIN values need at least {min} bytes but the page holds {len}"),
        ));
    }
    Ok(())
}

/// Checks what the chunk's metadata says before any byte is read: the
/// column's type and codec, and the encodings the chunk lists (DELTA_* and
/// BYTE_STREAM_SPLIT are outside the decoder's coverage). Pages are checked
/// again when planned: the list may be incomplete.
pub fn check_chunk(meta: &ColumnChunkMetaData) -> Result<ColumnType, DecodePlanError> {
    let descr = meta.column_descr();
    let ty = column_type(descr)?;
    page_codec(descr, meta.compression())?;
    for e in meta.encodings() {
        match e {
            Encoding::PLAIN
            | Encoding::PLAIN_DICTIONARY
            | Encoding::RLE_DICTIONARY
            | Encoding::RLE => {}
            // Legacy levels: only a problem if a page of an optional column
            // uses them, checked per page.
            #[allow(deprecated)]
            Encoding::BIT_PACKED => {}
            other => return Err(unsupported(descr, format!("{other} encoding"))),
        }
    }
    Ok(ty)
}

/// Plans one column chunk: `index` is its place in the row group's plan,
/// jobs and scratch regions are appended.
fn plan_column(
    row_group: usize,
    index: usize,
    input: &ColumnInput<'_>,
    scratch: &mut Scratch,
    jobs: &mut Vec<DecompressJob>,
) -> Result<ColumnDecode, DecodePlanError> {
    let ty = column_type(input.descr)?;
    let codec = page_codec(input.descr, input.meta.compression())?;
    let planner = ColumnPlanner {
        input,
        column: input.descr.path().string(),
        row_group,
        index,
        codec,
    };
    let pages = input.pages;
    let mut dictionary = None;
    let mut decoded = Vec::with_capacity(pages.len());
    let mut rows = 0u64;
    let mut values_total = 0u64;
    for (i, p) in pages.iter().enumerate() {
        let h = &p.header;
        match h.kind {
            PageKind::Index => {}
            PageKind::Dictionary(d) => {
                // The walk puts a dictionary page first only.
                if !matches!(d.encoding, Encoding::PLAIN | Encoding::PLAIN_DICTIONARY) {
                    return Err(
                        planner.unsupported_page(i, format!("{} dictionary page", d.encoding))
                    );
                }
                if ty.physical == PhysicalType::BOOLEAN {
                    return Err(planner.unsupported_page(i, "dictionary page of a BOOLEAN column"));
                }
                let data = planner.body(
                    BodyPart {
                        page: i,
                        compressed: true,
                        src_offset: p.body_offset,
                        src_len: p.body_len,
                        len: h.uncompressed_size as usize,
                    },
                    scratch,
                    jobs,
                )?;
                check_values_fit(
                    &planner,
                    &ty,
                    i,
                    EncodingClass::Plain,
                    d.num_values,
                    data.len,
                )?;
                let offsets = if ty.physical == PhysicalType::BYTE_ARRAY {
                    let n = (d.num_values as usize + 1) * 4;
                    Some(scratch.take(n, &planner.column)?)
                } else {
                    None
                };
                dictionary = Some(DictionaryDecode {
                    page: i,
                    num_values: d.num_values,
                    data,
                    offsets,
                });
            }
            PageKind::Data(d) => {
                let class = page_class(&planner, &ty, i, d.encoding, dictionary.is_some())?;
                if ty.nullable && d.def_level_encoding != Encoding::RLE {
                    return Err(planner.unsupported_page(
                        i,
                        format!("{} definition levels", d.def_level_encoding),
                    ));
                }
                let data = planner.body(
                    BodyPart {
                        page: i,
                        compressed: true,
                        src_offset: p.body_offset,
                        src_len: p.body_len,
                        len: h.uncompressed_size as usize,
                    },
                    scratch,
                    jobs,
                )?;
                // Without nulls every value is in the page.
                let present = if ty.nullable { 0 } else { d.num_values };
                check_values_fit(&planner, &ty, i, class, present, data.len)?;
                let need = work_bytes(&ty, class, d.num_values);
                let work = if need > 0 {
                    Some(scratch.take(need, &planner.column)?)
                } else {
                    None
                };
                decoded.push(PageDecode {
                    page: i,
                    version: PageVersion::V1,
                    encoding: d.encoding,
                    class,
                    num_values: d.num_values,
                    num_rows: d.num_values,
                    num_nulls: None,
                    out_row: rows,
                    first_row: None,
                    data,
                    def_levels: None,
                    work,
                });
                rows += u64::from(d.num_values);
                values_total += u64::from(d.num_values);
            }
            PageKind::DataV2(d) => {
                let class = page_class(&planner, &ty, i, d.encoding, dictionary.is_some())?;
                // A flat column's repetition levels are all 0 whatever a
                // writer stored: they are skipped (arrow-rs does the same).
                if !ty.nullable && d.def_levels_len != 0 {
                    return Err(planner.bad_page(
                        i,
                        format!(
                            "required column page has {} bytes of definition levels",
                            d.def_levels_len
                        ),
                    ));
                }
                if d.num_values != d.num_rows {
                    return Err(planner.bad_page(
                        i,
                        format!(
                            "flat column page has {} values but {} rows",
                            d.num_values, d.num_rows
                        ),
                    ));
                }
                if d.num_nulls > d.num_values || (!ty.nullable && d.num_nulls != 0) {
                    return Err(planner.bad_page(
                        i,
                        format!("{} nulls in a page of {} values", d.num_nulls, d.num_values),
                    ));
                }
                let levels = d.levels_len() as usize;
                let (Some(src_len), Some(len)) = (
                    p.body_len.checked_sub(levels),
                    (h.uncompressed_size as usize).checked_sub(levels),
                ) else {
                    return Err(planner
                        .bad_page(i, format!("{levels} bytes of levels do not fit the page")));
                };
                let def_levels = ty.nullable.then(|| {
                    Region::row_group(
                        p.body_offset + d.rep_levels_len as usize,
                        d.def_levels_len as usize,
                    )
                });
                let data = planner.body(
                    BodyPart {
                        page: i,
                        compressed: d.is_compressed,
                        src_offset: p.body_offset + levels,
                        src_len,
                        len,
                    },
                    scratch,
                    jobs,
                )?;
                check_values_fit(
                    &planner,
                    &ty,
                    i,
                    class,
                    d.num_values - d.num_nulls,
                    data.len,
                )?;
                let need = work_bytes(&ty, class, d.num_values);
                let work = if need > 0 {
                    Some(scratch.take(need, &planner.column)?)
                } else {
                    None
                };
                decoded.push(PageDecode {
                    page: i,
                    version: PageVersion::V2,
                    encoding: d.encoding,
                    class,
                    num_values: d.num_values,
                    num_rows: d.num_rows,
                    num_nulls: Some(d.num_nulls),
                    out_row: rows,
                    first_row: None,
                    data,
                    def_levels,
                    work,
                });
                rows += u64::from(d.num_rows);
                values_total += u64::from(d.num_values);
            }
        }
    }
    if rows > u64::from(u32::MAX) {
        return Err(planner.bad_chunk(format!("{rows} rows do not fit 32-bit row indices")));
    }
    check_page_ranges(&planner, &mut decoded)?;
    check_whole_chunk(&planner, values_total)?;
    let bitmap = rows.div_ceil(8);
    let (value_bytes, view_bytes) = match ty.conversion {
        Conversion::Boolean => (bitmap, 0),
        Conversion::ByteArrayView => (0, rows * 16),
        _ => (rows * u64::from(ty.out_width), 0),
    };
    Ok(ColumnDecode {
        leaf: input.leaf,
        column: planner.column.clone(),
        validity_bytes: if ty.nullable { bitmap } else { 0 },
        ty,
        codec,
        dictionary,
        pages: decoded,
        rows,
        value_bytes,
        view_bytes,
    })
}

/// Matches the data pages with the offset index's kept pages: same file
/// offsets and lengths, in order; records each page's first row in the row
/// group; and where two kept pages are neighbours in the file, checks the
/// first one's rows against the offset index.
fn check_page_ranges(
    planner: &ColumnPlanner<'_, '_>,
    decoded: &mut [PageDecode],
) -> Result<(), DecodePlanError> {
    let Some(ranges) = planner.input.page_ranges else {
        return Ok(());
    };
    let pages = planner.input.pages;
    if ranges.len() != decoded.len() {
        return Err(planner.bad_chunk(format!(
            "{} data pages walked but the offset index keeps {}",
            decoded.len(),
            ranges.len()
        )));
    }
    for (k, (d, r)) in decoded.iter_mut().zip(ranges).enumerate() {
        let p = &pages[d.page];
        if p.file_offset != r.range.start || p.len() as u64 != r.range.end - r.range.start {
            return Err(planner.bad_page(
                d.page,
                format!(
                    "page at file offset {} of {} bytes, but the offset index says offset {} and {} bytes",
                    p.file_offset,
                    p.len(),
                    r.range.start,
                    r.range.end - r.range.start
                ),
            ));
        }
        let first = u64::try_from(r.first_row).map_err(|_| {
            planner.bad_page(d.page, format!("offset index first row {}", r.first_row))
        })?;
        d.first_row = Some(first);
        if let Some(next) = ranges.get(k + 1) {
            let next_first = u64::try_from(next.first_row).unwrap_or(0);
            if p.file_end() == next.range.start
                && next_first.checked_sub(first) != Some(u64::from(d.num_rows))
            {
                return Err(planner.bad_page(
                    d.page,
                    format!(
                        "page holds {} rows but the offset index puts the next page {} rows later",
                        d.num_rows,
                        next_first as i128 - first as i128
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// When the pages tile the whole chunk (no page pruning), their values
/// must add up to the chunk's.
fn check_whole_chunk(planner: &ColumnPlanner<'_, '_>, values: u64) -> Result<(), DecodePlanError> {
    let pages = planner.input.pages;
    let Some((start, len)) = crate::parquet::plan::chunk_byte_range(planner.input.meta) else {
        return Err(planner.bad_chunk("the chunk's offset or length is negative".to_string()));
    };
    let whole = match (pages.first(), pages.last()) {
        (Some(first), Some(last)) => {
            first.file_offset == start
                && Some(last.file_end()) == start.checked_add(len)
                && pages
                    .windows(2)
                    .all(|w| w[0].file_end() == w[1].file_offset)
        }
        _ => false,
    };
    let expected = planner.input.meta.num_values();
    if whole && i64::try_from(values).ok() != Some(expected) {
        return Err(planner.bad_chunk(format!(
            "pages hold {values} values but the chunk's metadata says {expected}"
        )));
    }
    Ok(())
}

/// Plans a row group from each projected chunk's walked pages.
pub fn plan_row_group(
    row_group: usize,
    columns: &[ColumnInput<'_>],
) -> Result<DecodePlan, DecodePlanError> {
    let mut scratch = Scratch { len: 0, row_group };
    let mut jobs = Vec::new();
    let mut out = Vec::with_capacity(columns.len());
    for (index, input) in columns.iter().enumerate() {
        out.push(plan_column(
            row_group,
            index,
            input,
            &mut scratch,
            &mut jobs,
        )?);
    }
    Ok(DecodePlan {
        row_group,
        columns: out,
        jobs,
        scratch_bytes: scratch.len,
    })
}

/// Plans a fetched row group: walks every chunk of `chunks` (its chunk
/// table) in `buffer` (its bytes, on the host) and plans them, with the
/// scan plan's kept pages as the offset index.
pub fn plan_fetched(
    metadata: &ParquetMetaData,
    scan: &ScanPlan,
    row_group: usize,
    buffer: &[u8],
    chunks: &[ChunkSlice],
) -> Result<DecodePlan, DecodePlanError> {
    let bad = |what: String| DecodePlanError::BadRowGroup { row_group, what };
    if row_group >= metadata.num_row_groups() {
        return Err(bad(format!(
            "not in the file ({} row groups)",
            metadata.num_row_groups()
        )));
    }
    let rg = metadata.row_group(row_group);
    let schema = metadata.file_metadata().schema_descr();
    let mut walked = Vec::with_capacity(chunks.len());
    for slice in chunks {
        let plan = scan
            .chunks
            .get(slice.chunk)
            .ok_or_else(|| bad(format!("chunk {} is not in the scan plan", slice.chunk)))?;
        if plan.row_group != row_group
            || plan.leaf >= schema.num_columns()
            || plan.leaf >= rg.num_columns()
        {
            return Err(bad(format!(
                "chunk {} is leaf {} of row group {}",
                slice.chunk, plan.leaf, plan.row_group
            )));
        }
        let pages = walk_chunk(buffer, slice).map_err(|source| DecodePlanError::Walk {
            column: plan.column.clone(),
            row_group,
            source,
        })?;
        // Pages that carry a CRC-32 (of the page as stored, after its
        // header) are checked: corruption of such a page is an error, never
        // a value.
        for (i, p) in pages.iter().enumerate() {
            if let Some(crc) = p.header.crc {
                let body = &buffer[p.body_offset..p.body_offset + p.body_len];
                let got = crc32fast::hash(body);
                if got != crc {
                    return Err(DecodePlanError::BadPage {
                        column: plan.column.clone(),
                        row_group,
                        page: i,
                        what: format!("page CRC-32 {got:08x}, the header says {crc:08x}"),
                    });
                }
            }
        }
        walked.push((plan, pages));
    }
    let inputs: Vec<ColumnInput<'_>> = walked
        .iter()
        .map(|(plan, pages)| ColumnInput {
            leaf: plan.leaf,
            descr: rg.column(plan.leaf).column_descr(),
            meta: rg.column(plan.leaf),
            pages,
            page_ranges: plan.pages.as_deref(),
        })
        .collect();
    plan_row_group(row_group, &inputs)
}
