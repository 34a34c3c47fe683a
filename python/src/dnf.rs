//! `filters=` (pyarrow's and cuDF's disjunctive normal form) as a
//! [`Predicate`]. `gdscan/_filters.py` checks the terms' shape and tags
//! each Python value with its literal kind; this reads the tagged form:
//! an OR of ANDs of `(column, op, value)`, `value` being `None`, a
//! `(kind, payload)` pair, or a list of such pairs (`in` / `not in`).

use gdscan::parquet::predicate::{DnfTerm, DnfValue, Literal};
use gdscan::parquet::Predicate;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

/// One tagged term: column, operator, value.
pub(crate) type TaggedTerm<'py> = (String, String, Bound<'py, PyAny>);

/// The literal of a `(kind, payload)` pair.
fn literal(pair: &Bound<'_, PyAny>) -> PyResult<Literal> {
    let (kind, payload): (String, Bound<'_, PyAny>) = pair.extract()?;
    Ok(match kind.as_str() {
        "int" => Literal::Int(payload.extract()?),
        "float" => Literal::Float(payload.extract()?),
        "str" => Literal::Str(payload.extract()?),
        "bytes" => Literal::Binary(payload.cast::<PyBytes>()?.as_bytes().to_vec()),
        "bool" => Literal::Bool(payload.extract()?),
        "decimal" => {
            let (digits, scale): (i128, u8) = payload.extract()?;
            Literal::Decimal { digits, scale }
        }
        "date" => Literal::Date(payload.extract()?),
        "timestamp" => Literal::Timestamp(payload.extract()?),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown literal kind {other:?}"
            )))
        }
    })
}

/// The value of a tagged term.
fn value(v: &Bound<'_, PyAny>) -> PyResult<DnfValue> {
    if v.is_none() {
        return Ok(DnfValue::Null);
    }
    if let Ok(list) = v.cast::<PyList>() {
        let items = list.iter().map(|x| literal(&x)).collect::<PyResult<_>>()?;
        return Ok(DnfValue::List(items));
    }
    Ok(DnfValue::One(literal(v)?))
}

/// The predicate of tagged `filters` (a ValueError naming the term or the
/// reason when one does not convert).
pub(crate) fn predicate(filters: Vec<Vec<TaggedTerm<'_>>>) -> PyResult<Predicate> {
    let mut disjuncts = Vec::with_capacity(filters.len());
    for conjunction in filters {
        let mut terms = Vec::with_capacity(conjunction.len());
        for (column, op, v) in conjunction {
            let v = value(&v).map_err(|e| {
                let err =
                    PyValueError::new_err(format!("filters term ({column:?}, {op:?}, ...): {e}"));
                err.set_cause(v.py(), Some(e));
                err
            })?;
            terms.push(DnfTerm::new(column, op, v));
        }
        disjuncts.push(terms);
    }
    Predicate::from_dnf(&disjuncts).map_err(|e| PyValueError::new_err(crate::errors::chain(&e)))
}
