//! DataFusion's filters as a gdscan [`Predicate`], for gdscan's row-group
//! and page pruning.
//!
//! Only what pruning can decide soundly is translated: the conjuncts of the
//! form `column op literal` (either side), `column BETWEEN a AND b` and
//! `column IS [NOT] NULL`, on integer, decimal, date, string and boolean
//! columns. Anything else (OR, functions, casts, float columns, whose NaN
//! DataFusion orders above every number while Parquet statistics leave it
//! out) is left out of the predicate; DataFusion still evaluates every
//! filter on the rows, so leaving a conjunct out only prunes less.

use ::datafusion::arrow::datatypes::{DataType, Schema};
use ::datafusion::common::ScalarValue;
use ::datafusion::logical_expr::utils::split_conjunction;
use ::datafusion::logical_expr::{Between, BinaryExpr, Expr, Operator};

use crate::parquet::predicate::{Literal, Op, Predicate, Term};

/// The gdscan predicate of the conjuncts of `filters` that pruning can use
/// (see the module documentation); None when there are none.
pub fn predicate_from_filters(filters: &[Expr], schema: &Schema) -> Option<Predicate> {
    let mut terms = Vec::new();
    for filter in filters {
        for conjunct in split_conjunction(filter) {
            terms.extend(terms_of(conjunct, schema));
        }
    }
    (!terms.is_empty()).then_some(Predicate { terms })
}

/// The terms one conjunct stands for (none when it is not translatable).
fn terms_of(expr: &Expr, schema: &Schema) -> Vec<Term> {
    match expr {
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let (column, op, value) = match (column_of(left, schema), column_of(right, schema)) {
                (Some(c), None) => (c, *op, literal_of(right)),
                (None, Some(c)) => match flipped(*op) {
                    Some(op) => (c, op, literal_of(left)),
                    None => return vec![],
                },
                _ => return vec![],
            };
            match (comparison(op), value) {
                (Some(op), Some(value)) => vec![Term {
                    column,
                    op,
                    value: Some(value),
                }],
                _ => vec![],
            }
        }
        Expr::Between(Between {
            expr,
            negated: false,
            low,
            high,
        }) => match (column_of(expr, schema), literal_of(low), literal_of(high)) {
            (Some(column), Some(low), Some(high)) => vec![
                Term {
                    column: column.clone(),
                    op: Op::GtEq,
                    value: Some(low),
                },
                Term {
                    column,
                    op: Op::LtEq,
                    value: Some(high),
                },
            ],
            _ => vec![],
        },
        Expr::IsNull(inner) | Expr::IsNotNull(inner) => match column_of(inner, schema) {
            Some(column) => vec![Term {
                column,
                op: if matches!(expr, Expr::IsNull(_)) {
                    Op::IsNull
                } else {
                    Op::IsNotNull
                },
                value: None,
            }],
            None => vec![],
        },
        _ => vec![],
    }
}

/// The name of a plain column of a type pruning handles soundly.
fn column_of(expr: &Expr, schema: &Schema) -> Option<String> {
    let Expr::Column(column) = expr else {
        return None;
    };
    let field = schema.field_with_name(&column.name).ok()?;
    prunable(field.data_type()).then(|| column.name.clone())
}

fn prunable(data_type: &DataType) -> bool {
    use DataType::*;
    matches!(
        data_type,
        Int8 | Int16
            | Int32
            | Int64
            | UInt8
            | UInt16
            | UInt32
            | UInt64
            | Decimal32(..)
            | Decimal64(..)
            | Decimal128(..)
            | Date32
            | Utf8
            | LargeUtf8
            | Utf8View
            | Boolean
    )
}

/// A non-null literal gdscan's predicate can hold.
fn literal_of(expr: &Expr) -> Option<Literal> {
    let Expr::Literal(value, _) = expr else {
        return None;
    };
    use ScalarValue::*;
    Some(match value {
        Int8(Some(v)) => Literal::Int((*v).into()),
        Int16(Some(v)) => Literal::Int((*v).into()),
        Int32(Some(v)) => Literal::Int((*v).into()),
        Int64(Some(v)) => Literal::Int((*v).into()),
        UInt8(Some(v)) => Literal::Int((*v).into()),
        UInt16(Some(v)) => Literal::Int((*v).into()),
        UInt32(Some(v)) => Literal::Int((*v).into()),
        UInt64(Some(v)) => Literal::Int((*v).into()),
        Decimal32(Some(v), _, scale) => decimal((*v).into(), *scale)?,
        Decimal64(Some(v), _, scale) => decimal((*v).into(), *scale)?,
        Decimal128(Some(v), _, scale) => decimal(*v, *scale)?,
        Utf8(Some(s)) | LargeUtf8(Some(s)) | Utf8View(Some(s)) => Literal::Str(s.clone()),
        Date32(Some(days)) => Literal::Date(*days),
        Boolean(Some(b)) => Literal::Bool(*b),
        _ => return None,
    })
}

fn decimal(digits: i128, scale: i8) -> Option<Literal> {
    Some(Literal::Decimal {
        digits,
        scale: u8::try_from(scale).ok()?,
    })
}

/// `a op b` as `b op' a`.
fn flipped(op: Operator) -> Option<Operator> {
    Some(match op {
        Operator::Eq | Operator::NotEq => op,
        Operator::Lt => Operator::Gt,
        Operator::LtEq => Operator::GtEq,
        Operator::Gt => Operator::Lt,
        Operator::GtEq => Operator::LtEq,
        _ => return None,
    })
}

fn comparison(op: Operator) -> Option<Op> {
    Some(match op {
        Operator::Eq => Op::Eq,
        Operator::NotEq => Op::NotEq,
        Operator::Lt => Op::Lt,
        Operator::LtEq => Op::LtEq,
        Operator::Gt => Op::Gt,
        Operator::GtEq => Op::GtEq,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::datafusion::arrow::datatypes::Field;
    use ::datafusion::logical_expr::{col, lit};

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("qty", DataType::Int64, true),
            Field::new("price", DataType::Decimal128(15, 2), true),
            Field::new("day", DataType::Date32, true),
            Field::new("flag", DataType::Utf8View, true),
            Field::new("ratio", DataType::Float64, true),
        ])
    }

    fn term(column: &str, op: Op, value: Option<Literal>) -> Term {
        Term {
            column: column.into(),
            op,
            value,
        }
    }

    #[test]
    fn conjunctions_of_comparisons_become_terms() {
        let filter = col("qty")
            .lt(lit(24i64))
            .and(lit(ScalarValue::Decimal128(Some(5), 15, 2)).lt_eq(col("price")))
            .and(col("flag").eq(lit("R")))
            .and(col("day").is_not_null());
        let p = predicate_from_filters(&[filter], &schema()).expect("a predicate");
        assert_eq!(
            p.terms,
            vec![
                term("qty", Op::Lt, Some(Literal::Int(24))),
                term(
                    "price",
                    Op::GtEq,
                    Some(Literal::Decimal {
                        digits: 5,
                        scale: 2
                    })
                ),
                term("flag", Op::Eq, Some(Literal::Str("R".into()))),
                term("day", Op::IsNotNull, None),
            ]
        );
    }

    #[test]
    fn between_gives_two_bounds() {
        let filter = col("day").between(
            lit(ScalarValue::Date32(Some(8766))),
            lit(ScalarValue::Date32(Some(9130))),
        );
        let p = predicate_from_filters(&[filter], &schema()).expect("a predicate");
        assert_eq!(
            p.terms,
            vec![
                term("day", Op::GtEq, Some(Literal::Date(8766))),
                term("day", Op::LtEq, Some(Literal::Date(9130))),
            ]
        );
    }

    #[test]
    fn what_pruning_cannot_decide_is_left_out() {
        let filters = [
            // OR: not a conjunction of terms.
            col("qty").lt(lit(1i64)).or(col("qty").gt(lit(5i64))),
            // Float column: NaN orders differently in DataFusion.
            col("ratio").gt(lit(0.5f64)),
            // NOT BETWEEN, column against column, a null literal.
            col("qty").not_between(lit(1i64), lit(2i64)),
            col("qty").eq(col("qty")),
            col("qty").eq(lit(ScalarValue::Int64(None))),
            // An unknown column.
            col("missing").eq(lit(1i64)),
        ];
        assert_eq!(predicate_from_filters(&filters, &schema()), None);
        // A translatable conjunct next to an untranslatable one still counts.
        let mixed = col("ratio")
            .gt(lit(0.5f64))
            .and(col("qty").gt_eq(lit(3i64)));
        let p = predicate_from_filters(&[mixed], &schema()).expect("a predicate");
        assert_eq!(p.terms, vec![term("qty", Op::GtEq, Some(Literal::Int(3)))]);
    }
}
