//! DataFusion's filters as a gdscan [`Predicate`], for gdscan's row-group
//! and page pruning.
//!
//! Only what maps exactly onto gdscan's semantics is translated: each
//! top-level conjunct made of `column op literal` (either side), `column
//! [NOT] BETWEEN a AND b`, `column [NOT] IN (literals)`, `column IS [NOT]
//! NULL`, `column [NOT] LIKE 'pattern'` (case-sensitive, `%` and `_`
//! anywhere, a backslash only before `%`, `_` or a backslash) under
//! AND, OR and NOT, on integer, decimal, date, timestamp, string, binary and
//! boolean columns. Anything else (functions, casts, float columns, whose
//! NaN DataFusion orders above every number while Parquet statistics leave
//! it out) makes its conjunct left out of the predicate, which then only
//! prunes less: DataFusion evaluates such a filter itself. A filter all of
//! whose conjuncts translate can be taken exactly
//! ([`translates_exactly`]; the GPU choice does, `gpu::exact`).

use ::datafusion::arrow::datatypes::{DataType, Schema};
use ::datafusion::common::ScalarValue;
use ::datafusion::logical_expr::expr::InList;
use ::datafusion::logical_expr::utils::split_conjunction;
use ::datafusion::logical_expr::{Between, BinaryExpr, Expr, Like, Operator};

use crate::parquet::predicate::{like_test, Literal, Op, Predicate, Test};

/// The gdscan predicate of the conjuncts of `filters` that pruning can use
/// (see the module documentation); None when there are none.
pub fn predicate_from_filters(filters: &[Expr], schema: &Schema) -> Option<Predicate> {
    let mut parts: Vec<Predicate> = filters
        .iter()
        .flat_map(split_conjunction)
        .filter_map(|conjunct| translate(conjunct, schema))
        .collect();
    match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => Some(Predicate::And(parts)),
    }
}

/// Whether every conjunct of `filter` translates into gdscan's predicate
/// in full, so that a scan evaluating that predicate on every row yields
/// exactly the rows `filter` keeps. Filters on `UInt64` columns are left
/// out (their values above `i64::MAX` compare differently as Parquet's
/// signed INT64 words).
pub(crate) fn translates_exactly(filter: &Expr, schema: &Schema) -> bool {
    let unsigned_64 = filter.column_refs().iter().any(|c| {
        schema
            .field_with_name(&c.name)
            .is_ok_and(|f| f.data_type() == &DataType::UInt64)
    });
    !unsigned_64
        && split_conjunction(filter)
            .into_iter()
            .all(|conjunct| translate(conjunct, schema).is_some())
}

/// `p`, negated when `negated`.
fn negated_if(p: Predicate, negated: bool) -> Predicate {
    if negated {
        p.negate()
    } else {
        p
    }
}

/// The predicate `expr` stands for, exactly; None when any part of it is
/// not translatable.
fn translate(expr: &Expr, schema: &Schema) -> Option<Predicate> {
    match expr {
        Expr::BinaryExpr(BinaryExpr {
            left,
            op: op @ (Operator::And | Operator::Or),
            right,
        }) => {
            let parts = vec![translate(left, schema)?, translate(right, schema)?];
            Some(if *op == Operator::And {
                Predicate::And(parts)
            } else {
                Predicate::Or(parts)
            })
        }
        Expr::Not(inner) => Some(translate(inner, schema)?.negate()),
        Expr::BinaryExpr(BinaryExpr { left, op, right }) => {
            let (column, op, value) = match (column_of(left, schema), column_of(right, schema)) {
                (Some(c), None) => (c, *op, literal_of(right)?),
                (None, Some(c)) => (c, flipped(*op)?, literal_of(left)?),
                (Some(a), Some(b)) => return column_comparison(a, *op, b, schema),
                (None, None) => return None,
            };
            Some(Predicate::cmp(column, comparison(op)?, value))
        }
        Expr::Between(Between {
            expr,
            negated,
            low,
            high,
        }) => {
            let test = Test::Between(literal_of(low)?, literal_of(high)?);
            Some(negated_if(
                Predicate::term(column_of(expr, schema)?, test),
                *negated,
            ))
        }
        Expr::InList(InList {
            expr,
            list,
            negated,
        }) if !list.is_empty() => {
            let values = list.iter().map(literal_of).collect::<Option<Vec<_>>>()?;
            Some(negated_if(
                Predicate::term(column_of(expr, schema)?, Test::In(values)),
                *negated,
            ))
        }
        Expr::Like(Like {
            negated,
            expr,
            pattern,
            escape_char: None,
            case_insensitive: false,
        }) => {
            let Some(Literal::Str(pattern)) = literal_of(pattern) else {
                return None;
            };
            // DataFusion's LIKE reads a backslash as an escape, as gdscan's
            // does (a backslash before other characters is not taken).
            let test = like_test(&pattern).ok()?;
            let column = column_of(expr, schema)?;
            Some(negated_if(Predicate::term(column, test), *negated))
        }
        Expr::IsNull(inner) | Expr::IsNotNull(inner) => {
            let t = Predicate::term(column_of(inner, schema)?, Test::IsNull);
            Some(negated_if(t, matches!(expr, Expr::IsNotNull(_))))
        }
        _ => None,
    }
}

/// `a op b` of two columns of one type (TPC-H Q12's `l_commitdate <
/// l_receiptdate`): unknown where either is NULL, as in SQL; statistics do
/// not prune on it, the GPU evaluates it.
fn column_comparison(a: String, op: Operator, b: String, schema: &Schema) -> Option<Predicate> {
    let type_of = |c: &str| {
        schema
            .field_with_name(c)
            .ok()
            .map(|f| f.data_type().clone())
    };
    if type_of(&a)? != type_of(&b)? {
        return None;
    }
    Some(Predicate::term(a, Test::CmpColumn(comparison(op)?, b)))
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
            | Timestamp(..)
            | Binary
            | LargeBinary
            | BinaryView
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
        Binary(Some(b)) | LargeBinary(Some(b)) | BinaryView(Some(b)) => Literal::Binary(b.clone()),
        Date32(Some(days)) => Literal::Date(*days),
        TimestampSecond(Some(v), _) => Literal::Timestamp(i128::from(*v) * 1_000_000_000),
        TimestampMillisecond(Some(v), _) => Literal::Timestamp(i128::from(*v) * 1_000_000),
        TimestampMicrosecond(Some(v), _) => Literal::Timestamp(i128::from(*v) * 1_000),
        TimestampNanosecond(Some(v), _) => Literal::Timestamp(i128::from(*v)),
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
    use ::datafusion::arrow::datatypes::{Field, TimeUnit};
    use ::datafusion::logical_expr::{col, lit, not};

    fn schema() -> Schema {
        Schema::new(vec![
            Field::new("qty", DataType::Int64, true),
            Field::new("price", DataType::Decimal128(15, 2), true),
            Field::new("day", DataType::Date32, true),
            Field::new("flag", DataType::Utf8View, true),
            Field::new("ratio", DataType::Float64, true),
            Field::new("at", DataType::Timestamp(TimeUnit::Millisecond, None), true),
        ])
    }

    fn parse(text: &str) -> Predicate {
        text.parse().expect("a valid filter")
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
            p,
            parse("qty < 24 AND price >= 0.05 AND flag = 'R' AND day IS NOT NULL")
        );
    }

    #[test]
    fn between_in_like_or_and_not_translate() {
        let day = |d: i32| lit(ScalarValue::Date32(Some(d)));
        let filter = col("day").between(day(8766), day(9130));
        let p = predicate_from_filters(&[filter], &schema()).expect("a predicate");
        assert_eq!(
            p,
            parse("day BETWEEN DATE '1994-01-01' AND DATE '1994-12-31'")
        );
        let filters = [
            col("qty")
                .lt(lit(1i64))
                .or(col("qty").gt(lit(5i64)).and(col("flag").like(lit("AB%")))),
            col("qty").not_between(lit(1i64), lit(2i64)),
            col("flag").in_list(vec![lit("A"), lit("B")], true),
            Expr::Not(Box::new(col("flag").not_like(lit("x%")))),
            col("at").gt_eq(lit(ScalarValue::TimestampMillisecond(Some(1500), None))),
        ];
        let p = predicate_from_filters(&filters, &schema()).expect("a predicate");
        assert_eq!(
            p,
            parse(
                "(qty < 1 OR (qty > 5 AND flag LIKE 'AB%')) AND qty NOT BETWEEN 1 AND 2 \
                 AND flag NOT IN ('A', 'B') AND NOT flag NOT LIKE 'x%' \
                 AND at >= TIMESTAMP '1970-01-01 00:00:01.5'"
            )
        );
    }

    #[test]
    fn like_patterns_with_wildcards_anywhere_translate() {
        let filters = [
            col("flag").not_like(lit("%special%requests%")),
            col("flag").like(lit("a_b%")),
            col("flag").like(lit("a\\%%")),
        ];
        let p = predicate_from_filters(&filters, &schema()).expect("a predicate");
        assert_eq!(
            p,
            parse("flag NOT LIKE '%special%requests%' AND flag LIKE 'a_b%' AND flag LIKE 'a\\%%'")
        );
        // The escaped '%' is a plain prefix: statistics prune on it.
        let Predicate::And(parts) = &p else {
            panic!("{p:?}")
        };
        assert_eq!(
            parts[2],
            Predicate::term("flag", Test::StartsWith("a%".into()))
        );
    }

    #[test]
    fn columns_of_one_type_compared_translate_whole() {
        let schema = Schema::new(vec![
            Field::new("shipped", DataType::Date32, true),
            Field::new("received", DataType::Date32, true),
        ]);
        let filter = col("shipped").lt(col("received"));
        let p = predicate_from_filters(std::slice::from_ref(&filter), &schema);
        assert_eq!(p, Some(parse("shipped < received")));
        assert!(translates_exactly(&filter, &schema));
        let both = col("received")
            .gt_eq(col("shipped"))
            .and(col("shipped").is_not_null());
        assert!(translates_exactly(&both, &schema));
    }

    #[test]
    fn what_pruning_cannot_decide_is_left_out() {
        let filters = [
            // An OR with an untranslatable side.
            col("qty").lt(lit(1i64)).or(col("ratio").gt(lit(5f64))),
            // Float column: NaN orders differently in DataFusion.
            col("ratio").gt(lit(0.5f64)),
            // Columns of two types, a null literal, NULL in an IN list.
            col("qty").eq(col("price")),
            col("qty").eq(lit(ScalarValue::Int64(None))),
            col("qty").in_list(vec![lit(1i64), lit(ScalarValue::Int64(None))], false),
            // LIKE patterns with a backslash before a plain character,
            // ILIKE.
            col("flag").like(lit("a\\b%")),
            col("flag").ilike(lit("a%")),
            // NOT of something untranslatable; an unknown column.
            not(col("ratio").gt(lit(0.5f64))),
            col("missing").eq(lit(1i64)),
        ];
        assert_eq!(predicate_from_filters(&filters, &schema()), None);
        // A translatable conjunct next to an untranslatable one still counts.
        let mixed = col("ratio")
            .gt(lit(0.5f64))
            .and(col("qty").gt_eq(lit(3i64)));
        let p = predicate_from_filters(&[mixed], &schema()).expect("a predicate");
        assert_eq!(p, parse("qty >= 3"));
    }
}
