//! The type mapping: a Parquet column (physical and logical type) becomes
//! its Arrow output type and the codes the kernels decode it with
//! ([`Kind`], [`Conversion`]); a chunk's compression becomes the
//! [`ChunkCodec`] its pages are routed by (nvCOMP's [`Codec`] or the host's).

use arrow::datatypes::{DataType, IntervalUnit, TimeUnit};
use parquet::basic::{
    Compression, ConvertedType, LogicalType, Repetition, TimeUnit as ParquetTimeUnit,
    Type as PhysicalType,
};
use parquet::schema::types::ColumnDescriptor;

use super::codes::{Conversion, Kind};
use super::plan_error::DecodePlanError;
use crate::nvcomp::Codec;

/// The decoder's view of one column: physical input, Arrow output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnType {
    /// Parquet physical type.
    pub physical: PhysicalType,
    /// Arrow output type.
    pub data_type: DataType,
    /// What the kernels decode the column's pages as.
    pub kind: Kind,
    /// How a fixed-width value becomes its output ([`Kind::Fixed`], and
    /// [`Conversion::BeToDecimal128`] or [`Conversion::BeToDecimal256`]
    /// for BYTE_ARRAY decimals; [`Conversion::Copy`] otherwise).
    pub conversion: Conversion,
    /// Bytes of one physical value (BOOLEAN: 0, a bit; BYTE_ARRAY: 0,
    /// variable).
    pub type_length: u32,
    /// Bytes of one output value (BOOLEAN: 0, a bit; views: 16; BYTE_ARRAY
    /// decimals: 16 or 32).
    pub out_width: u32,
    /// Whether the column is optional (max definition level 1): output has
    /// a validity bitmap. From [`leaf_type`]: whether the leaf itself is
    /// OPTIONAL (its values, not its enclosing groups, may be null).
    pub nullable: bool,
}

impl ColumnType {
    /// Whether the column comes out as arrow's Null type (an UNKNOWN
    /// leaf): a Null array of its slots, no buffers, every slot null.
    pub fn is_null(&self) -> bool {
        self.data_type == DataType::Null
    }
}

pub(super) fn unsupported(column: &ColumnDescriptor, what: impl Into<String>) -> DecodePlanError {
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
    decimal_of(column, precision, scale, false)
}

/// Decimal256 (precision 1..=76), for decimals of 17 to 32 bytes.
fn decimal256(
    column: &ColumnDescriptor,
    precision: i32,
    scale: i32,
) -> Result<DataType, DecodePlanError> {
    decimal_of(column, precision, scale, true)
}

/// Decimal128 (precision 1..=38) or, when `wide`, Decimal256 (1..=76).
fn decimal_of(
    column: &ColumnDescriptor,
    precision: i32,
    scale: i32,
    wide: bool,
) -> Result<DataType, DecodePlanError> {
    let (name, max) = if wide {
        ("Decimal256", 76)
    } else {
        ("Decimal128", 38)
    };
    let p = u8::try_from(precision)
        .ok()
        .filter(|p| (1..=max).contains(p))
        .ok_or_else(|| {
            unsupported(
                column,
                format!("DECIMAL precision {precision} ({name} holds 1..={max})"),
            )
        })?;
    let s =
        i8::try_from(scale).map_err(|_| unsupported(column, format!("DECIMAL scale {scale}")))?;
    Ok(if wide {
        DataType::Decimal256(p, s)
    } else {
        DataType::Decimal128(p, s)
    })
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
            (8, true) => (DataType::Int8, K::I32To8),
            (16, true) => (DataType::Int16, K::I32To16),
            (32, true) => (DataType::Int32, K::Copy),
            (8, false) => (DataType::UInt8, K::I32To8),
            (16, false) => (DataType::UInt16, K::I32To16),
            (32, false) => (DataType::UInt32, K::Copy),
            _ => return Err(other(c)),
        },
        (Some(LogicalType::Decimal(d)), _) => {
            (decimal(c, d.precision, d.scale)?, K::I32ToDecimal128)
        }
        (Some(LogicalType::Date), _) => (DataType::Date32, K::Copy),
        (Some(LogicalType::Time(t)), _) if t.unit == ParquetTimeUnit::MILLIS => {
            (DataType::Time32(TimeUnit::Millisecond), K::Copy)
        }
        (None, ConvertedType::UINT_8) => (DataType::UInt8, K::I32To8),
        (None, ConvertedType::UINT_16) => (DataType::UInt16, K::I32To16),
        (None, ConvertedType::UINT_32) => (DataType::UInt32, K::Copy),
        (None, ConvertedType::INT_8) => (DataType::Int8, K::I32To8),
        (None, ConvertedType::INT_16) => (DataType::Int16, K::I32To16),
        (None, ConvertedType::INT_32) => (DataType::Int32, K::Copy),
        (None, ConvertedType::DATE) => (DataType::Date32, K::Copy),
        (None, ConvertedType::TIME_MILLIS) => (DataType::Time32(TimeUnit::Millisecond), K::Copy),
        (None, ConvertedType::DECIMAL) => (
            decimal(c, c.type_precision(), c.type_scale())?,
            K::I32ToDecimal128,
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
            (decimal(c, d.precision, d.scale)?, K::I64ToDecimal128)
        }
        (None, ConvertedType::DECIMAL) => (
            decimal(c, c.type_precision(), c.type_scale())?,
            K::I64ToDecimal128,
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
        // Big-endian two's complement of any length; the kernels take 0 to
        // 16 bytes for a Decimal128, 0 to 32 for a Decimal256 (arrow-rs: an
        // empty value is 0, a longer one an error). As arrow-rs: precision
        // up to 38 to Decimal128, above to Decimal256.
        (Some(LogicalType::Decimal(d)), _) => byte_array_decimal(c, d.precision, d.scale)?,
        (None, ConvertedType::DECIMAL) => {
            byte_array_decimal(c, c.type_precision(), c.type_scale())?
        }
        (l, conv) => {
            return Err(unsupported(
                c,
                format!("BYTE_ARRAY with logical type {l:?} / converted type {conv}"),
            ))
        }
    })
}

/// A BYTE_ARRAY decimal's type: arrow-rs's choice by precision.
fn byte_array_decimal(
    c: &ColumnDescriptor,
    precision: i32,
    scale: i32,
) -> Result<DataType, DecodePlanError> {
    if precision > 38 {
        decimal256(c, precision, scale)
    } else {
        decimal(c, precision, scale)
    }
}

fn flba_type(c: &ColumnDescriptor, len: u32) -> Result<(DataType, Conversion), DecodePlanError> {
    let dec = match (c.logical_type_ref(), c.converted_type()) {
        (Some(LogicalType::Decimal(d)), _) => Some((d.precision, d.scale)),
        (None, ConvertedType::DECIMAL) => Some((c.type_precision(), c.type_scale())),
        _ => None,
    };
    if let Some((precision, scale)) = dec {
        // arrow-rs: 1..=16 bytes to Decimal128, 17..=32 to Decimal256.
        return match len {
            1..=16 => Ok((decimal(c, precision, scale)?, Conversion::BeToDecimal128)),
            17..=32 => Ok((decimal256(c, precision, scale)?, Conversion::BeToDecimal256)),
            _ => Err(unsupported(
                c,
                format!("DECIMAL in a FIXED_LEN_BYTE_ARRAY of {len} bytes (at most 32)"),
            )),
        };
    }
    match (c.logical_type_ref(), c.converted_type()) {
        (None, ConvertedType::INTERVAL) if len == 12 => Ok((
            DataType::Interval(IntervalUnit::DayTime),
            Conversion::IntervalDayTime,
        )),
        (None, ConvertedType::INTERVAL) => {
            Err(unsupported(c, format!("INTERVAL of {len} bytes (12)")))
        }
        (Some(LogicalType::Float16), _) if len == 2 => Ok((DataType::Float16, Conversion::Copy)),
        (Some(LogicalType::Float16), _) => Err(unsupported(c, format!("FLOAT16 of {len} bytes"))),
        _ => Ok((DataType::FixedSizeBinary(len as i32), Conversion::Copy)),
    }
}

/// The output type of a column, and how its values are converted; the
/// Arrow type is arrow-rs's (`parquet_to_arrow_schema` without an embedded
/// Arrow schema) except that strings and binaries are Utf8View and
/// BinaryView. Nested or repeated columns, decimals wider than 32 bytes
/// and the other types outside the decoder's coverage are
/// [`DecodePlanError::Unsupported`].
pub fn column_type(column: &ColumnDescriptor) -> Result<ColumnType, DecodePlanError> {
    if column.max_rep_level() > 0 {
        return Err(unsupported(column, "repeated (nested) column"));
    }
    if column.max_def_level() > 1 || column.path().parts().len() > 1 {
        return Err(unsupported(column, "column inside a group (nested)"));
    }
    let leaf = leaf_type(column)?;
    Ok(ColumnType {
        nullable: column.max_def_level() == 1,
        ..leaf
    })
}

/// Whether a leaf column is nested: inside a group, or under a list.
pub fn is_nested(column: &ColumnDescriptor) -> bool {
    column.max_rep_level() > 0 || column.max_def_level() > 1 || column.path().parts().len() > 1
}

/// Lists around a nested leaf the GPU decoder takes (the nesting kernels
/// keep eight levels: the records and seven lists).
pub const MAX_NESTED_LISTS: i16 = 7;

/// The type of a column chunk's values over its level entries: a flat
/// column's [`column_type`]; a nested leaf's [`leaf_type`], nullable when
/// its max definition level is above 0 (an entry without a value: a null
/// at some level, or an empty list), as the page kernel decodes it before
/// the nesting is built. A leaf under more than [`MAX_NESTED_LISTS`] lists
/// or with definition levels above 255 is [`DecodePlanError::Unsupported`].
pub fn chunk_type(column: &ColumnDescriptor) -> Result<ColumnType, DecodePlanError> {
    if !is_nested(column) {
        return column_type(column);
    }
    if column.max_rep_level() > MAX_NESTED_LISTS {
        return Err(unsupported(
            column,
            format!(
                "{} nested lists (at most {MAX_NESTED_LISTS})",
                column.max_rep_level()
            ),
        ));
    }
    if column.max_def_level() > 255 {
        return Err(unsupported(
            column,
            format!(
                "definition levels up to {} (at most 255)",
                column.max_def_level()
            ),
        ));
    }
    let leaf = leaf_type(column)?;
    Ok(ColumnType {
        nullable: column.max_def_level() > 0,
        ..leaf
    })
}

/// Whether the leaf field itself is declared OPTIONAL (a REPEATED or
/// REQUIRED leaf has no null values of its own).
fn leaf_is_optional(column: &ColumnDescriptor) -> bool {
    let info = column.self_type().get_basic_info();
    info.has_repetition() && info.repetition() == Repetition::OPTIONAL
}

/// The type mapping of a leaf column at any depth: [`column_type`] without
/// its refusal of nested and repeated columns. `nullable` says whether the
/// leaf itself is OPTIONAL (its enclosing groups and lists are the nesting
/// model's, [`super::nesting`]). An UNKNOWN (always null) leaf is
/// arrow-rs's Null type, its pages decoded as their physical type for the
/// levels alone. The same types as [`column_type`] are
/// [`DecodePlanError::Unsupported`].
pub fn leaf_type(column: &ColumnDescriptor) -> Result<ColumnType, DecodePlanError> {
    if matches!(column.logical_type_ref(), Some(LogicalType::Unknown)) {
        return null_type(column);
    }
    let physical = column.physical_type();
    let (data_type, conversion, type_length) = match physical {
        PhysicalType::BOOLEAN => (DataType::Boolean, Conversion::Copy, 0),
        PhysicalType::INT32 => {
            let (t, k) = int32_type(column)?;
            (t, k, 4)
        }
        PhysicalType::INT64 => {
            let (t, k) = int64_type(column)?;
            (t, k, 8)
        }
        // arrow-rs's default: nanoseconds, no time zone.
        PhysicalType::INT96 => (
            DataType::Timestamp(TimeUnit::Nanosecond, None),
            Conversion::Int96ToTimestampNs,
            12,
        ),
        PhysicalType::FLOAT => (DataType::Float32, Conversion::Copy, 4),
        PhysicalType::DOUBLE => (DataType::Float64, Conversion::Copy, 8),
        PhysicalType::BYTE_ARRAY => {
            let t = byte_array_type(column)?;
            let k = match t {
                DataType::Decimal128(..) => Conversion::BeToDecimal128,
                DataType::Decimal256(..) => Conversion::BeToDecimal256,
                _ => Conversion::Copy,
            };
            (t, k, 0)
        }
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
        DataType::Decimal256(..) => 32,
        DataType::Timestamp(..) | DataType::Interval(IntervalUnit::DayTime) => 8,
        DataType::FixedSizeBinary(n) => *n as u32,
        _ => type_length,
    };
    let kind = match physical {
        PhysicalType::BOOLEAN => Kind::Boolean,
        PhysicalType::BYTE_ARRAY => Kind::ByteArray,
        _ => Kind::Fixed,
    };
    Ok(ColumnType {
        physical,
        kind,
        data_type,
        conversion,
        type_length,
        out_width,
        nullable: leaf_is_optional(column),
    })
}

/// An UNKNOWN (always null) leaf, of any physical type: arrow-rs's Null
/// type. Its pages are decoded as their physical values copied as they
/// are (a carrier: the kernels walk the levels, a value present in spite
/// of the annotation lands in a scratch output nobody reads), and the
/// column comes out as a Null array of its slots, without buffers, as
/// arrow-rs reads it (values ignored, levels kept).
fn null_type(column: &ColumnDescriptor) -> Result<ColumnType, DecodePlanError> {
    let physical = column.physical_type();
    let (kind, type_length, out_width) = match physical {
        PhysicalType::BOOLEAN => (Kind::Boolean, 0, 0),
        PhysicalType::BYTE_ARRAY => (Kind::ByteArray, 0, 16),
        PhysicalType::INT32 | PhysicalType::FLOAT => (Kind::Fixed, 4, 4),
        PhysicalType::INT64 | PhysicalType::DOUBLE => (Kind::Fixed, 8, 8),
        PhysicalType::INT96 => (Kind::Fixed, 12, 12),
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
            (Kind::Fixed, len, len)
        }
    };
    Ok(ColumnType {
        physical,
        data_type: DataType::Null,
        kind,
        conversion: Conversion::Copy,
        type_length,
        out_width,
        nullable: leaf_is_optional(column),
    })
}

/// A chunk's compression as the planner routes its pages: to nvCOMP, to
/// the host ([`HostCodec`](super::host_codec::HostCodec)), or page by page
/// after a look at the page's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChunkCodec {
    /// SNAPPY, ZSTD, LZ4_RAW: every page to nvCOMP.
    Gpu(Codec),
    /// GZIP: nvCOMP when the page is one member, else the host.
    Gzip,
    /// Legacy LZ4: nvCOMP, one job per block, when the page is
    /// Hadoop-framed; else the host (an LZ4 frame or a raw block).
    Lz4Legacy,
    /// BROTLI: the host (nvCOMP has no Brotli).
    Brotli,
}

impl ChunkCodec {
    /// The compression's name in the Parquet format.
    pub fn name(self) -> &'static str {
        match self {
            ChunkCodec::Gpu(Codec::Snappy) => "SNAPPY",
            ChunkCodec::Gpu(Codec::Zstd) => "ZSTD",
            ChunkCodec::Gpu(Codec::Lz4) => "LZ4_RAW",
            ChunkCodec::Gpu(Codec::Gzip) | ChunkCodec::Gzip => "GZIP",
            ChunkCodec::Gpu(Codec::Deflate) => "DEFLATE",
            ChunkCodec::Lz4Legacy => "LZ4",
            ChunkCodec::Brotli => "BROTLI",
        }
    }
}

/// The codec of a chunk's compression: None for UNCOMPRESSED; LZO is
/// unsupported.
pub fn page_codec(
    column: &ColumnDescriptor,
    compression: Compression,
) -> Result<Option<ChunkCodec>, DecodePlanError> {
    match compression {
        Compression::UNCOMPRESSED => Ok(None),
        Compression::SNAPPY => Ok(Some(ChunkCodec::Gpu(Codec::Snappy))),
        Compression::ZSTD(_) => Ok(Some(ChunkCodec::Gpu(Codec::Zstd))),
        Compression::LZ4_RAW => Ok(Some(ChunkCodec::Gpu(Codec::Lz4))),
        Compression::GZIP(_) => Ok(Some(ChunkCodec::Gzip)),
        Compression::BROTLI(_) => Ok(Some(ChunkCodec::Brotli)),
        Compression::LZ4 => Ok(Some(ChunkCodec::Lz4Legacy)),
        Compression::LZO => Err(unsupported(column, "LZO compression")),
    }
}
