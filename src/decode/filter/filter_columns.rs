//! The columns a GPU filter program reads: a term's column name resolved
//! in a schema (a top-level field, or a dotted path through structs), and
//! what the evaluator kernel reads it as ([`ValueKind`]).

use arrow::datatypes::{DataType, Fields, SchemaRef};

use super::FilterError;
use crate::parquet::predicate::PredicateError;

/// The most validity bitmaps on a column's path (its own and its struct
/// ancestors'); the kernel's column table has room for this many.
pub(crate) const MAX_PATH: usize = 4;

/// How the evaluator kernel reads a column's values (`GDS_FILTER_KIND_*`
/// in `filter_eval.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum ValueKind {
    /// Two's complement integers of the width, little-endian (integers,
    /// dates, times, timestamps, decimals).
    Signed = 1,
    /// Unsigned integers of the width.
    Unsigned = 2,
    /// IEEE 754 binary32 or binary64.
    Float = 3,
    /// A bitmap, one bit per value.
    Bool = 4,
    /// 16-byte Utf8View/BinaryView views over data buffers.
    View = 5,
    /// Only the validity is read (IS NULL of any other type).
    Opaque = 6,
    /// Arrow's Null type: every value is NULL.
    Null = 7,
}

/// A column the program reads.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ProgramColumn {
    /// The name as the predicate wrote it.
    pub(crate) name: String,
    /// The top-level field index, then the child index at each struct.
    pub(crate) path: Vec<usize>,
    /// The leaf's type.
    pub(crate) data_type: DataType,
    /// How the kernel reads it.
    pub(crate) kind: ValueKind,
    /// Bytes per value (fixed-width kinds), else 0.
    pub(crate) width: u32,
}

/// The kernel's reading of a value of type `dt`, and its width.
pub(crate) fn value_kind(dt: &DataType) -> (ValueKind, u32) {
    use DataType::*;
    match dt {
        Int8 => (ValueKind::Signed, 1),
        Int16 => (ValueKind::Signed, 2),
        Int32 | Date32 | Time32(_) | Decimal32(..) => (ValueKind::Signed, 4),
        Int64 | Date64 | Time64(_) | Timestamp(..) | Duration(_) | Decimal64(..) => {
            (ValueKind::Signed, 8)
        }
        Decimal128(..) => (ValueKind::Signed, 16),
        UInt8 => (ValueKind::Unsigned, 1),
        UInt16 => (ValueKind::Unsigned, 2),
        UInt32 => (ValueKind::Unsigned, 4),
        UInt64 => (ValueKind::Unsigned, 8),
        Float32 => (ValueKind::Float, 4),
        Float64 => (ValueKind::Float, 8),
        Boolean => (ValueKind::Bool, 0),
        Utf8View | BinaryView => (ValueKind::View, 0),
        Null => (ValueKind::Null, 0),
        _ => (ValueKind::Opaque, 0),
    }
}

/// `name` in `schema`: a top-level field of that name, else a dotted path
/// through struct fields (as the host evaluator looks it up).
pub(crate) fn resolve(schema: &SchemaRef, name: &str) -> Result<ProgramColumn, FilterError> {
    let unknown = || FilterError::Predicate(PredicateError::UnknownColumn(name.to_string()));
    let (path, data_type) = match schema.index_of(name) {
        Ok(i) => (vec![i], schema.field(i).data_type().clone()),
        Err(_) => {
            let mut parts = name.split('.');
            let first = parts.next().ok_or_else(unknown)?;
            let top = schema.index_of(first).map_err(|_| unknown())?;
            let mut path = vec![top];
            let mut dt = schema.field(top).data_type().clone();
            let mut descended = false;
            for part in parts {
                let DataType::Struct(fields) = &dt else {
                    return Err(unknown());
                };
                let (i, child) = find(fields, part).ok_or_else(unknown)?;
                path.push(i);
                dt = child;
                descended = true;
            }
            if !descended {
                return Err(unknown());
            }
            (path, dt)
        }
    };
    if path.len() > MAX_PATH {
        return Err(FilterError::Unsupported {
            part: format!("column {name:?}"),
            why: format!("struct paths deeper than {MAX_PATH} levels"),
        });
    }
    let (kind, width) = value_kind(&data_type);
    Ok(ProgramColumn {
        name: name.to_string(),
        path,
        data_type,
        kind,
        width,
    })
}

fn find(fields: &Fields, name: &str) -> Option<(usize, DataType)> {
    fields
        .iter()
        .position(|f| f.name() == name)
        .map(|i| (i, fields[i].data_type().clone()))
}
