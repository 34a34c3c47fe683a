//! Literals as Arrow scalars of a column's type, exactly: what a
//! comparison becomes on an Arrow column.

use std::sync::Arc;

use ::arrow::array::{
    ArrayRef, BinaryArray, BinaryViewArray, BooleanArray, Date32Array, Date64Array,
    Decimal128Array, Decimal32Array, Decimal64Array, Float32Array, Float64Array, Int16Array,
    Int32Array, Int64Array, Int8Array, LargeBinaryArray, LargeStringArray, Scalar, StringArray,
    StringViewArray, TimestampMicrosecondArray, TimestampMillisecondArray,
    TimestampNanosecondArray, TimestampSecondArray, UInt16Array, UInt32Array, UInt64Array,
    UInt8Array,
};
use ::arrow::datatypes::{DataType, TimeUnit};
use ::arrow::error::ArrowError;

use super::ast::*;
use super::exact::*;
use super::schema::*;

/// How a term is computed on an Arrow column.
pub(super) enum Plan {
    Cmp(Op, Scalar<ArrayRef>),
    /// True for every non-NULL value.
    AllNonNull,
    /// False for every row.
    Nothing,
}

/// An exact-number term against integers `lo..=hi` at `scale`.
pub(super) enum Norm {
    Cmp(Op, i128),
    All,
    Nothing,
}

pub(super) fn normalize_exact(op: Op, e: Exact, scale: i32, lo: i128, hi: i128) -> Norm {
    enum Pos {
        In(i128),
        High,
        Low,
    }
    let (op, scaled) = match rescale(e, scale) {
        Scaled::Between(f) => match op {
            Op::Eq => return Norm::Nothing,
            Op::NotEq => return Norm::All,
            Op::Lt | Op::LtEq => (Op::LtEq, Scaled::Exact(f)),
            _ => (Op::Gt, Scaled::Exact(f)),
        },
        s => (op, s),
    };
    let pos = match scaled {
        Scaled::Exact(k) if k > hi => Pos::High,
        Scaled::Exact(k) if k < lo => Pos::Low,
        Scaled::Exact(k) => Pos::In(k),
        Scaled::Above => Pos::High,
        Scaled::Below | Scaled::Between(_) => Pos::Low,
    };
    match (pos, op) {
        (Pos::In(k), op) => Norm::Cmp(op, k),
        (Pos::High, Op::NotEq | Op::Lt | Op::LtEq) | (Pos::Low, Op::NotEq | Op::Gt | Op::GtEq) => {
            Norm::All
        }
        _ => Norm::Nothing,
    }
}

pub(super) type MakeScalar<'a> = &'a dyn Fn(i128) -> Result<ArrayRef, ArrowError>;

pub(super) fn plan_for(dt: &DataType, op: Op, lit: &Literal) -> Result<Plan, TermError> {
    if nan_literal(lit) {
        return Err(TermError::NanLiteral);
    }
    let mismatch = || TermError::Mismatch {
        column: format!("{dt} values"),
        literal: describe(lit),
    };
    let exact = || exact_of(lit).ok_or_else(mismatch);
    let int = |e: Exact, lo: i128, hi: i128, scale: i32, mk: MakeScalar<'_>| {
        Ok(match normalize_exact(op, e, scale, lo, hi) {
            Norm::Cmp(op, k) => Plan::Cmp(op, Scalar::new(mk(k).map_err(TermError::Scalar)?)),
            Norm::All => Plan::AllNonNull,
            Norm::Nothing => Plan::Nothing,
        })
    };
    let date = || {
        date_of(lit)
            .map(i128::from)
            .map_err(|e| e.unwrap_or_else(mismatch))
    };
    let nanos = || timestamp_of(lit).map_err(|e| e.unwrap_or_else(mismatch));
    macro_rules! timestamps {
        ($arr:ty, $scale:expr, $tz:expr) => {
            int(
                Exact::Val(nanos()?, 9),
                i128::from(i64::MIN),
                i128::from(i64::MAX),
                $scale,
                &|k| {
                    Ok(
                        Arc::new(<$arr>::from(vec![k as i64]).with_timezone_opt($tz.clone()))
                            as ArrayRef,
                    )
                },
            )
        };
    }
    macro_rules! ints {
        ($arr:ty, $native:ty) => {
            int(
                exact()?,
                i128::from(<$native>::MIN),
                i128::from(<$native>::MAX),
                0,
                &|k| Ok(Arc::new(<$arr>::from(vec![k as $native])) as ArrayRef),
            )
        };
    }
    macro_rules! decimals {
        ($arr:ty, $native:ty, $p:expr, $s:expr) => {{
            let (p, s) = (*$p, *$s);
            int(
                exact()?,
                i128::from(<$native>::MIN),
                i128::from(<$native>::MAX),
                i32::from(s),
                &|k| {
                    Ok(
                        Arc::new(<$arr>::from(vec![k as $native]).with_precision_and_scale(p, s)?)
                            as ArrayRef,
                    )
                },
            )
        }};
    }
    match dt {
        DataType::Dictionary(_, v) => plan_for(v, op, lit),
        DataType::Int8 => ints!(Int8Array, i8),
        DataType::Int16 => ints!(Int16Array, i16),
        DataType::Int32 => ints!(Int32Array, i32),
        DataType::Int64 => ints!(Int64Array, i64),
        DataType::UInt8 => ints!(UInt8Array, u8),
        DataType::UInt16 => ints!(UInt16Array, u16),
        DataType::UInt32 => ints!(UInt32Array, u32),
        DataType::UInt64 => ints!(UInt64Array, u64),
        DataType::Decimal32(p, s) => decimals!(Decimal32Array, i32, p, s),
        DataType::Decimal64(p, s) => decimals!(Decimal64Array, i64, p, s),
        DataType::Decimal128(p, s) => decimals!(Decimal128Array, i128, p, s),
        DataType::Date32 => int(
            Exact::Val(date()?, 0),
            i128::from(i32::MIN),
            i128::from(i32::MAX),
            0,
            &|k| Ok(Arc::new(Date32Array::from(vec![k as i32])) as ArrayRef),
        ),
        DataType::Date64 => int(
            Exact::Val(date()? * 86_400_000, 0),
            i128::from(i64::MIN),
            i128::from(i64::MAX),
            0,
            &|k| Ok(Arc::new(Date64Array::from(vec![k as i64])) as ArrayRef),
        ),
        DataType::Timestamp(TimeUnit::Second, tz) => timestamps!(TimestampSecondArray, 0, tz),
        DataType::Timestamp(TimeUnit::Millisecond, tz) => {
            timestamps!(TimestampMillisecondArray, 3, tz)
        }
        DataType::Timestamp(TimeUnit::Microsecond, tz) => {
            timestamps!(TimestampMicrosecondArray, 6, tz)
        }
        DataType::Timestamp(TimeUnit::Nanosecond, tz) => {
            timestamps!(TimestampNanosecondArray, 9, tz)
        }
        _ => direct_plan(dt, op, lit),
    }
}

/// Types compared with the literal as it is (after rounding floats):
/// floats, booleans, strings and binary.
fn direct_plan(dt: &DataType, op: Op, lit: &Literal) -> Result<Plan, TermError> {
    let mismatch = || TermError::Mismatch {
        column: format!("{dt} values"),
        literal: describe(lit),
    };
    let one = |a: ArrayRef| Ok(Plan::Cmp(op, Scalar::new(a)));
    match dt {
        DataType::Float32 => {
            let v = lit_f32(lit).ok_or_else(mismatch)?;
            one(Arc::new(Float32Array::from(vec![v + 0.0])))
        }
        DataType::Float64 => {
            let v = lit_f64(lit).ok_or_else(mismatch)?;
            one(Arc::new(Float64Array::from(vec![v + 0.0])))
        }
        DataType::Boolean => match lit {
            Literal::Bool(b) => one(Arc::new(BooleanArray::from(vec![*b]))),
            _ => Err(mismatch()),
        },
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => {
            let Literal::Str(s) = lit else {
                return Err(mismatch());
            };
            let s = s.as_str();
            one(match dt {
                DataType::Utf8 => Arc::new(StringArray::from(vec![s])),
                DataType::LargeUtf8 => Arc::new(LargeStringArray::from(vec![s])),
                _ => Arc::new(StringViewArray::from(vec![s])),
            })
        }
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView => {
            let b: &[u8] = match lit {
                Literal::Str(s) => s.as_bytes(),
                Literal::Binary(b) => b,
                _ => return Err(mismatch()),
            };
            one(match dt {
                DataType::Binary => Arc::new(BinaryArray::from(vec![b])),
                DataType::LargeBinary => Arc::new(LargeBinaryArray::from(vec![b])),
                _ => Arc::new(BinaryViewArray::from(vec![b])),
            })
        }
        _ => Err(TermError::Unsupported {
            column_type: dt.to_string(),
        }),
    }
}
