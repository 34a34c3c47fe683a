//! Row-exact evaluation on Arrow batches.

use std::sync::Arc;

use ::arrow::array::{
    make_array, Array, ArrayRef, ArrowPrimitiveType, AsArray, BinaryArray, BinaryViewArray,
    BooleanArray, Date32Array, Date64Array, Decimal128Array, Decimal32Array, Decimal64Array,
    Float32Array, Float64Array, Int16Array, Int32Array, Int64Array, Int8Array, LargeBinaryArray,
    LargeStringArray, PrimitiveArray, Scalar, StringArray, StringViewArray, UInt16Array,
    UInt32Array, UInt64Array, UInt8Array,
};
use ::arrow::buffer::{BooleanBuffer, NullBuffer, ScalarBuffer};
use ::arrow::compute::kernels::cmp;
use ::arrow::compute::{and, cast, is_not_null, is_null};
use ::arrow::datatypes::{DataType, Float32Type, Float64Type};
use ::arrow::error::ArrowError;
use ::arrow::record_batch::RecordBatch;

use super::ast::*;
use super::exact::*;
use super::schema::*;

// ---------------------------------------------------------------------------
// Row-exact evaluation
// ---------------------------------------------------------------------------

/// Finds a column by top-level name, or by a dotted path through structs
/// (the leaf then carries its ancestors' NULLs).
pub(super) fn batch_column(batch: &RecordBatch, name: &str) -> Result<ArrayRef, ArrowError> {
    if let Some(c) = batch.column_by_name(name) {
        return Ok(c.clone());
    }
    let missing =
        || ArrowError::InvalidArgumentError(format!("filter column {name:?} is not in the batch"));
    let mut parts = name.split('.');
    let first = parts.next().ok_or_else(missing)?;
    let mut cur = batch.column_by_name(first).ok_or_else(missing)?.clone();
    let mut ancestors: Option<NullBuffer> = None;
    let mut descended = false;
    for part in parts {
        let s = cur.as_struct_opt().ok_or_else(missing)?;
        let child = s.column_by_name(part).ok_or_else(missing)?.clone();
        ancestors = NullBuffer::union(ancestors.as_ref(), s.nulls());
        cur = child;
        descended = true;
    }
    if !descended {
        return Err(missing());
    }
    match ancestors {
        Some(anc) if anc.null_count() > 0 => {
            let nulls = NullBuffer::union(Some(&anc), cur.nulls());
            let data = cur.to_data().into_builder().nulls(nulls).build()?;
            Ok(make_array(data))
        }
        _ => Ok(cur),
    }
}

/// Comparison values of a float array: NaN becomes NULL and -0.0 becomes 0.0.
pub(super) fn normalize_floats<T: ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    is_nan: impl Fn(T::Native) -> bool,
    unzero: impl Fn(T::Native) -> T::Native,
) -> PrimitiveArray<T> {
    let values: ScalarBuffer<T::Native> = a.values().iter().map(|v| unzero(*v)).collect();
    let not_nan = BooleanBuffer::collect_bool(a.len(), |i| !is_nan(a.values()[i]));
    let nulls = NullBuffer::union(a.nulls(), Some(&NullBuffer::new(not_nan)));
    PrimitiveArray::new(values, nulls)
}

pub(super) fn comparable(col: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let col = match col.data_type() {
        DataType::Dictionary(_, v) if matches!(**v, DataType::Float32 | DataType::Float64) => {
            cast(col, v)?
        }
        _ => col.clone(),
    };
    Ok(match col.data_type() {
        DataType::Float32 => Arc::new(normalize_floats(
            col.as_primitive::<Float32Type>(),
            f32::is_nan,
            |v| v + 0.0,
        )),
        DataType::Float64 => Arc::new(normalize_floats(
            col.as_primitive::<Float64Type>(),
            f64::is_nan,
            |v| v + 0.0,
        )),
        _ => col,
    })
}

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
    let one = |a: ArrayRef| Ok(Plan::Cmp(op, Scalar::new(a)));
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
        DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Binary
        | DataType::LargeBinary
        | DataType::BinaryView => {
            let Literal::Str(s) = lit else {
                return Err(mismatch());
            };
            let s = s.as_str();
            one(match dt {
                DataType::Utf8 => Arc::new(StringArray::from(vec![s])),
                DataType::LargeUtf8 => Arc::new(LargeStringArray::from(vec![s])),
                DataType::Utf8View => Arc::new(StringViewArray::from(vec![s])),
                DataType::Binary => Arc::new(BinaryArray::from(vec![s.as_bytes()])),
                DataType::LargeBinary => Arc::new(LargeBinaryArray::from(vec![s.as_bytes()])),
                _ => Arc::new(BinaryViewArray::from(vec![s.as_bytes()])),
            })
        }
        _ => Err(TermError::Unsupported {
            column_type: dt.to_string(),
        }),
    }
}

/// A boolean array with NULLs turned into false.
pub(super) fn null_to_false(b: BooleanArray) -> BooleanArray {
    match b.nulls() {
        Some(n) => {
            let values = b.values() & n.inner();
            BooleanArray::new(values, None)
        }
        None => b,
    }
}

pub(super) fn eval_term(term: &Term, col: &ArrayRef) -> Result<BooleanArray, ArrowError> {
    match term.op {
        Op::IsNull => return is_null(col.as_ref()),
        Op::IsNotNull => return is_not_null(col.as_ref()),
        _ => {}
    }
    let type_err = |source: TermError| {
        ArrowError::ExternalError(Box::new(PredicateError::Type {
            column: term.column.clone(),
            source,
        }))
    };
    let lit = term
        .value
        .as_ref()
        .ok_or_else(|| type_err(TermError::NeedsLiteral { op: term.op }))?;
    let col = comparable(col)?;
    let plan = plan_for(col.data_type(), term.op, lit).map_err(type_err)?;
    let out = match plan {
        Plan::Nothing => BooleanArray::new(BooleanBuffer::new_unset(col.len()), None),
        Plan::AllNonNull => is_not_null(col.as_ref())?,
        Plan::Cmp(op, scalar) => {
            let r = match op {
                Op::Eq => cmp::eq(&col, &scalar)?,
                Op::NotEq => cmp::neq(&col, &scalar)?,
                Op::Lt => cmp::lt(&col, &scalar)?,
                Op::LtEq => cmp::lt_eq(&col, &scalar)?,
                Op::Gt => cmp::gt(&col, &scalar)?,
                Op::GtEq => cmp::gt_eq(&col, &scalar)?,
                Op::IsNull | Op::IsNotNull => unreachable!("handled above"),
            };
            null_to_false(r)
        }
    };
    Ok(out)
}

impl Predicate {
    /// Row-exact evaluation on a decoded batch containing (at least) the
    /// predicate's columns (top-level fields by name, or dotted paths into
    /// struct fields); NULL comparisons are false (SQL semantics), so the
    /// result has no NULLs.
    ///
    /// Literals are cast to the column's Arrow type: integers (all widths),
    /// Decimal32/64/128 (exact rescaling: `x < 0.075` on scale 2 is
    /// `x <= 0.07`), Float32/64 (NaN matches no comparison, `-0.0 = 0.0`),
    /// Date32/Date64 (DATE literals or 'YYYY-MM-DD' strings),
    /// Utf8/LargeUtf8/Utf8View and Binary/LargeBinary/BinaryView (string
    /// literals), Boolean, and dictionaries of those. An empty predicate
    /// selects every row.
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<BooleanArray, ArrowError> {
        let mut acc: Option<BooleanArray> = None;
        for term in &self.terms {
            let col = batch_column(batch, &term.column)?;
            let mask = eval_term(term, &col)?;
            acc = Some(match acc {
                None => mask,
                Some(prev) => and(&prev, &mask)?,
            });
        }
        Ok(
            acc.unwrap_or_else(|| {
                BooleanArray::new(BooleanBuffer::new_set(batch.num_rows()), None)
            }),
        )
    }
}
