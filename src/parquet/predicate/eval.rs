//! Row-exact evaluation on Arrow batches, under SQL's three-valued logic.

use std::sync::Arc;

use ::arrow::array::{
    make_array, Array, ArrayRef, ArrowPrimitiveType, AsArray, BooleanArray, PrimitiveArray,
};
use ::arrow::buffer::{BooleanBuffer, NullBuffer, ScalarBuffer};
use ::arrow::compute::kernels::boolean::{and_kleene, not, or_kleene};
use ::arrow::compute::kernels::cmp;
use ::arrow::compute::{cast, is_null};
use ::arrow::datatypes::{DataType, Float32Type, Float64Type};
use ::arrow::error::ArrowError;
use ::arrow::record_batch::RecordBatch;

use super::ast::*;
use super::like::{like_matches, like_parts};
use super::scalar::*;

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

/// A float array's comparison values (NaN becomes NULL, -0.0 becomes 0.0)
/// and where it holds NaN.
fn normalize_floats<T: ArrowPrimitiveType>(
    a: &PrimitiveArray<T>,
    is_nan: impl Fn(T::Native) -> bool,
    unzero: impl Fn(T::Native) -> T::Native,
) -> (PrimitiveArray<T>, BooleanBuffer) {
    let values: ScalarBuffer<T::Native> = a.values().iter().map(|v| unzero(*v)).collect();
    let nan = BooleanBuffer::collect_bool(a.len(), |i| {
        is_nan(a.values()[i]) && a.nulls().is_none_or(|n| n.is_valid(i))
    });
    let nulls = NullBuffer::union(a.nulls(), Some(&NullBuffer::new(!&nan)));
    (PrimitiveArray::new(values, nulls), nan)
}

/// The column as compared (floats normalized, dictionaries of floats
/// unpacked) and its NaN rows, if it holds floats.
fn comparable(col: &ArrayRef) -> Result<(ArrayRef, Option<BooleanBuffer>), ArrowError> {
    let col = match col.data_type() {
        DataType::Dictionary(_, v) if matches!(**v, DataType::Float32 | DataType::Float64) => {
            cast(col, v)?
        }
        _ => col.clone(),
    };
    Ok(match col.data_type() {
        DataType::Float32 => {
            let (a, nan) =
                normalize_floats(col.as_primitive::<Float32Type>(), f32::is_nan, |v| v + 0.0);
            (Arc::new(a), Some(nan))
        }
        DataType::Float64 => {
            let (a, nan) =
                normalize_floats(col.as_primitive::<Float64Type>(), f64::is_nan, |v| v + 0.0);
            (Arc::new(a), Some(nan))
        }
        _ => (col, None),
    })
}

/// A string column as binary (for binary literals), else the column.
fn as_bytes_for(lit: &Literal, col: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let value_type = match col.data_type() {
        DataType::Dictionary(_, v) => v.as_ref(),
        t => t,
    };
    let to = match value_type {
        DataType::Utf8 => DataType::Binary,
        DataType::LargeUtf8 => DataType::LargeBinary,
        DataType::Utf8View => DataType::BinaryView,
        _ => return Ok(col.clone()),
    };
    match lit {
        Literal::Binary(_) => cast(col, &to),
        _ => Ok(col.clone()),
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

fn type_err(term: &Term, source: TermError) -> ArrowError {
    ArrowError::ExternalError(Box::new(PredicateError::Type {
        column: term.column.clone(),
        source,
    }))
}

/// `col op lit`: unknown (NULL) for NULL values; for NaN, FALSE (TRUE
/// for `!=`).
fn eval_cmp(
    term: &Term,
    op: Op,
    lit: &Literal,
    col: &ArrayRef,
) -> Result<BooleanArray, ArrowError> {
    let (col, nan) = comparable(&as_bytes_for(lit, col)?)?;
    let plan = plan_for(col.data_type(), op, lit).map_err(|e| type_err(term, e))?;
    let r = match plan {
        Plan::Nothing => {
            BooleanArray::new(BooleanBuffer::new_unset(col.len()), col.logical_nulls())
        }
        Plan::AllNonNull => {
            BooleanArray::new(BooleanBuffer::new_set(col.len()), col.logical_nulls())
        }
        Plan::Cmp(op, scalar) => match op {
            Op::Eq => cmp::eq(&col, &scalar)?,
            Op::NotEq => cmp::neq(&col, &scalar)?,
            Op::Lt => cmp::lt(&col, &scalar)?,
            Op::LtEq => cmp::lt_eq(&col, &scalar)?,
            Op::Gt => cmp::gt(&col, &scalar)?,
            Op::GtEq => cmp::gt_eq(&col, &scalar)?,
        },
    };
    let Some(nan) = nan else {
        return Ok(r);
    };
    let values = if op == Op::NotEq {
        r.values() | &nan
    } else {
        r.values() & &!&nan
    };
    let nulls = r.nulls().map(|n| NullBuffer::new(n.inner() | &nan));
    Ok(BooleanArray::new(values, nulls))
}

/// `test(value, utf8)` of every value of a string or binary column
/// (`utf8`: a string's), unknown where NULL; LIKE of another type is an
/// error naming it.
fn eval_bytes(
    term: &Term,
    col: &ArrayRef,
    test: impl Fn(&[u8], bool) -> bool,
) -> Result<BooleanArray, ArrowError> {
    let col = match col.data_type() {
        DataType::Dictionary(_, v) => cast(col, v)?,
        _ => col.clone(),
    };
    fn mask<'a>(
        values: impl Iterator<Item = Option<&'a [u8]>>,
        utf8: bool,
        test: &impl Fn(&[u8], bool) -> bool,
    ) -> BooleanArray {
        values.map(|v| v.map(|b| test(b, utf8))).collect()
    }
    Ok(match col.data_type() {
        DataType::Utf8 => mask(
            col.as_string::<i32>().iter().map(|v| v.map(str::as_bytes)),
            true,
            &test,
        ),
        DataType::LargeUtf8 => mask(
            col.as_string::<i64>().iter().map(|v| v.map(str::as_bytes)),
            true,
            &test,
        ),
        DataType::Utf8View => mask(
            col.as_string_view().iter().map(|v| v.map(str::as_bytes)),
            true,
            &test,
        ),
        DataType::Binary => mask(col.as_binary::<i32>().iter(), false, &test),
        DataType::LargeBinary => mask(col.as_binary::<i64>().iter(), false, &test),
        DataType::BinaryView => mask(col.as_binary_view().iter(), false, &test),
        other => {
            return Err(type_err(
                term,
                TermError::Like {
                    column_type: format!("{other} values"),
                },
            ))
        }
    })
}

/// `col op other` row by row, both of one type: unknown where either is
/// NULL; a NaN on either side makes the comparison FALSE (`!=` TRUE).
fn eval_cmp_columns(
    term: &Term,
    op: Op,
    col: &ArrayRef,
    other: &ArrayRef,
) -> Result<BooleanArray, ArrowError> {
    let (left, left_nan) = comparable(col)?;
    let (right, right_nan) = comparable(other)?;
    if left.data_type() != right.data_type() {
        return Err(type_err(
            term,
            TermError::Mismatch {
                column: format!("{} values", left.data_type()),
                literal: format!("{} values", right.data_type()),
            },
        ));
    }
    let r = match op {
        Op::Eq => cmp::eq(&left, &right)?,
        Op::NotEq => cmp::neq(&left, &right)?,
        Op::Lt => cmp::lt(&left, &right)?,
        Op::LtEq => cmp::lt_eq(&left, &right)?,
        Op::Gt => cmp::gt(&left, &right)?,
        Op::GtEq => cmp::gt_eq(&left, &right)?,
    };
    let nan = match (left_nan, right_nan) {
        (Some(a), Some(b)) => &a | &b,
        _ => return Ok(r),
    };
    // A NaN row is NULL in the normalized arrays; it is known (FALSE, or
    // TRUE for `!=`) unless the other side is a real NULL.
    let real_nulls =
        NullBuffer::union(col.logical_nulls().as_ref(), other.logical_nulls().as_ref());
    let values = if op == Op::NotEq {
        r.values() | &nan
    } else {
        r.values() & &!&nan
    };
    let compared = r
        .nulls()
        .map_or_else(|| BooleanBuffer::new_set(r.len()), |v| v.inner().clone());
    let known = &compared | &nan;
    let known = match &real_nulls {
        Some(n) => &known & n.inner(),
        None => known,
    };
    Ok(BooleanArray::new(values, Some(NullBuffer::new(known))))
}

/// The term's value per row: TRUE, FALSE or unknown (NULL).
fn eval_term(term: &Term, col: &ArrayRef, batch: &RecordBatch) -> Result<BooleanArray, ArrowError> {
    match &term.test {
        Test::CmpColumn(op, other) => {
            eval_cmp_columns(term, *op, col, &batch_column(batch, other)?)
        }
        Test::IsNull => is_null(col.as_ref()),
        Test::Cmp(op, lit) => eval_cmp(term, *op, lit, col),
        Test::Between(lo, hi) => and_kleene(
            &eval_cmp(term, Op::GtEq, lo, col)?,
            &eval_cmp(term, Op::LtEq, hi, col)?,
        ),
        Test::In(values) => {
            let mut acc = BooleanArray::new(BooleanBuffer::new_unset(col.len()), None);
            for v in values {
                acc = or_kleene(&acc, &eval_cmp(term, Op::Eq, v, col)?)?;
            }
            Ok(acc)
        }
        Test::StartsWith(prefix) => {
            eval_bytes(term, col, |value, _| value.starts_with(prefix.as_bytes()))
        }
        Test::Like(pattern) => {
            let parts =
                like_parts(pattern).map_err(|(_, why)| type_err(term, TermError::Pattern(why)))?;
            eval_bytes(term, col, |value, utf8| like_matches(&parts, value, utf8))
        }
    }
}

/// The predicate's value per row, three-valued (NULL = unknown).
fn eval_tree(p: &Predicate, batch: &RecordBatch) -> Result<BooleanArray, ArrowError> {
    let rows = batch.num_rows();
    match p {
        Predicate::Term(t) => eval_term(t, &batch_column(batch, &t.column)?, batch),
        Predicate::Not(c) => not(&eval_tree(c, batch)?),
        Predicate::And(cs) => cs.iter().try_fold(
            BooleanArray::new(BooleanBuffer::new_set(rows), None),
            |acc, c| and_kleene(&acc, &eval_tree(c, batch)?),
        ),
        Predicate::Or(cs) => cs.iter().try_fold(
            BooleanArray::new(BooleanBuffer::new_unset(rows), None),
            |acc, c| or_kleene(&acc, &eval_tree(c, batch)?),
        ),
    }
}

impl Predicate {
    /// Row-exact evaluation on a decoded batch containing (at least) the
    /// predicate's columns (top-level fields by name, or dotted paths into
    /// struct fields): the rows where the predicate is TRUE under SQL's
    /// three-valued logic (a test of NULL is unknown, NOT unknown is
    /// unknown), so the result has no NULLs.
    ///
    /// Literals are cast to the column's Arrow type: integers (all widths),
    /// Decimal32/64/128 (exact rescaling: `x < 0.075` on scale 2 is
    /// `x <= 0.07`), Float32/64 (NaN makes a comparison FALSE, `!=` TRUE;
    /// `-0.0 = 0.0`), Date32/Date64 (DATE literals or 'YYYY-MM-DD' strings),
    /// Timestamp of any unit and zone (TIMESTAMP or DATE literals, exactly),
    /// Utf8/LargeUtf8/Utf8View and Binary/LargeBinary/BinaryView (string or
    /// binary literals, byte-wise), Boolean, and dictionaries of those. An
    /// empty AND selects every row.
    pub fn evaluate(&self, batch: &RecordBatch) -> Result<BooleanArray, ArrowError> {
        Ok(null_to_false(eval_tree(self, batch)?))
    }
}
