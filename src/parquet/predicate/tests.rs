//! Tests of the filter language, its pruning and its evaluation.

use std::cmp::Ordering;
use std::sync::Arc;

use ::arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Date64Array, Decimal128Array,
    Decimal32Array, Float32Array, Float64Array, Int32Array, Int64Array, Int8Array,
    LargeStringArray, StringArray, StringViewArray, UInt64Array,
};
use ::arrow::buffer::NullBuffer;
use ::arrow::datatypes::DataType;
use ::arrow::record_batch::RecordBatch;
use ::parquet::file::page_index::column_index::ColumnIndexMetaData;

use super::ast::*;
use super::exact::*;
use super::prune::*;
use super::time::*;
use ::arrow::array::{DictionaryArray, StructArray};
use ::arrow::datatypes::{Field, Fields, Int32Type, Schema};
use ::parquet::arrow::ArrowWriter;
use ::parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
use ::parquet::file::properties::{EnabledStatistics, WriterProperties};

fn p(s: &str) -> Predicate {
    s.parse()
        .unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
}

fn term(column: &str, op: Op, value: Literal) -> Predicate {
    Predicate::cmp(column, op, value)
}

fn is_null(column: &str) -> Predicate {
    Predicate::term(column, Test::IsNull)
}

fn and(parts: Vec<Predicate>) -> Predicate {
    Predicate::And(parts)
}

fn parse_err(s: &str) -> (usize, String) {
    match s.parse::<Predicate>() {
        Err(PredicateError::Parse {
            input,
            position,
            reason,
        }) => {
            assert_eq!(input, s);
            (position, reason)
        }
        other => panic!("{s:?}: expected a parse error, got {other:?}"),
    }
}

// ----- parsing -----------------------------------------------------------

#[test]
fn parses_every_operator() {
    let cases = [
        ("a = 1", Op::Eq),
        ("a == 1", Op::Eq),
        ("a != 1", Op::NotEq),
        ("a <> 1", Op::NotEq),
        ("a < 1", Op::Lt),
        ("a <= 1", Op::LtEq),
        ("a > 1", Op::Gt),
        ("a >= 1", Op::GtEq),
    ];
    for (text, op) in cases {
        assert_eq!(p(text), term("a", op, Literal::Int(1)), "{text}");
    }
}

#[test]
fn parses_literals() {
    let lit = |s: &str| match p(&format!("x = {s}")) {
        Predicate::Term(Term {
            test: Test::Cmp(Op::Eq, v),
            ..
        }) => v,
        other => panic!("{s}: {other:?}"),
    };
    assert_eq!(lit("42"), Literal::Int(42));
    assert_eq!(lit("-7"), Literal::Int(-7));
    assert_eq!(lit("+7"), Literal::Int(7));
    assert_eq!(
        lit("0.07"),
        Literal::Decimal {
            digits: 7,
            scale: 2
        }
    );
    assert_eq!(
        lit("-1.50"),
        Literal::Decimal {
            digits: -150,
            scale: 2
        }
    );
    assert_eq!(
        lit("+3.0"),
        Literal::Decimal {
            digits: 30,
            scale: 1
        }
    );
    assert_eq!(
        lit("5."),
        Literal::Decimal {
            digits: 5,
            scale: 0
        }
    );
    assert_eq!(lit("1e3"), Literal::Float(1000.0));
    assert_eq!(lit("-2.5E-1"), Literal::Float(-0.25));
    assert_eq!(lit("1.5e+2"), Literal::Float(150.0));
    assert_eq!(lit("1e999"), Literal::Float(f64::INFINITY));
    assert_eq!(lit("'abc'"), Literal::Str("abc".into()));
    assert_eq!(lit("'it''s'"), Literal::Str("it's".into()));
    assert_eq!(lit("''"), Literal::Str(String::new()));
    assert_eq!(lit("'héllo wörld'"), Literal::Str("héllo wörld".into()));
    assert_eq!(lit("DATE '1970-01-01'"), Literal::Date(0));
    assert_eq!(lit("DATE '1994-01-01'"), Literal::Date(8766));
    assert_eq!(lit("date '1969-12-31'"), Literal::Date(-1));
    assert_eq!(lit("DATE '2000-02-29'"), Literal::Date(11016));
    assert_eq!(lit("DATE '2000-03-01'"), Literal::Date(11017));
    assert_eq!(lit("TRUE"), Literal::Bool(true));
    assert_eq!(lit("false"), Literal::Bool(false));
    assert_eq!(lit("X'0a1B'"), Literal::Binary(vec![0x0A, 0x1B]));
    assert_eq!(lit("x''"), Literal::Binary(vec![]));
    assert_eq!(
        lit("TIMESTAMP '1970-01-01 00:00:01'"),
        Literal::Timestamp(1_000_000_000)
    );
    assert_eq!(
        lit("timestamp '1994-01-01T12:30:00.000001'"),
        Literal::Timestamp(8766 * 86_400_000_000_000 + 45_000_000_000_000 + 1_000)
    );
    assert_eq!(
        lit("TIMESTAMP '1969-12-31 23:59:59.999999999'"),
        Literal::Timestamp(-1)
    );
    assert_eq!(
        lit("170141183460469231731687303715884105727"),
        Literal::Int(i128::MAX)
    );
}

#[test]
fn parses_null_tests_between_and_conjunctions() {
    assert_eq!(p("a IS NULL"), is_null("a"));
    assert_eq!(p("a is not null"), is_null("a").negate());
    let dec = |digits, scale| Literal::Decimal { digits, scale };
    assert_eq!(
        p("a BETWEEN 1 AND 2.5"),
        Predicate::term("a", Test::Between(Literal::Int(1), dec(25, 1)))
    );
    let q = p(
        "l_shipdate >= DATE '1994-01-01' and l_shipdate < date '1995-01-01' \
               AND l_discount between 0.05 and 0.07 AnD l_quantity < 24",
    );
    assert_eq!(
        q,
        and(vec![
            term("l_shipdate", Op::GtEq, Literal::Date(8766)),
            term("l_shipdate", Op::Lt, Literal::Date(9131)),
            Predicate::term("l_discount", Test::Between(dec(5, 2), dec(7, 2))),
            term("l_quantity", Op::Lt, Literal::Int(24)),
        ])
    );
    assert_eq!(q.columns(), vec!["l_shipdate", "l_discount", "l_quantity"]);
    // Whitespace does not matter.
    assert_eq!(p("a>=1AND b<'x'"), p("  a >=  1\n\tAND\r\nb < 'x'  "));
    assert_eq!(
        p("a>=1AND b<'x'"),
        and(vec![
            term("a", Op::GtEq, Literal::Int(1)),
            term("b", Op::Lt, Literal::Str("x".into())),
        ])
    );
}

#[test]
fn parses_column_names() {
    let column = |q: &str| p(q).terms()[0].column.clone();
    assert_eq!(column("a.b.c = 1"), "a.b.c");
    assert_eq!(column("_x9 = 1"), "_x9");
    assert_eq!(column("\"my col\" = 1"), "my col");
    assert_eq!(column("\"say \"\"hi\"\"\" = 1"), "say \"hi\"");
    // Keywords are fine as column names.
    assert_eq!(
        p("date >= DATE '1994-01-01'"),
        term("date", Op::GtEq, Literal::Date(8766))
    );
    assert_eq!(p("not = 1"), term("not", Op::Eq, Literal::Int(1)));
    assert_eq!(p("not IS NULL"), is_null("not"));
    assert_eq!(p("x = 1"), term("x", Op::Eq, Literal::Int(1)));
}

#[test]
fn parse_errors_report_byte_positions() {
    let cases: [(&str, usize, &str); 34] = [
        ("", 0, "expected a column name"),
        ("   ", 3, "expected a column name"),
        ("a >", 3, "expected a literal"),
        ("a = 'abc", 4, "unterminated string"),
        ("\"abc = 1", 0, "unterminated quoted column name"),
        ("a ! 1", 2, "expected '='"),
        ("a = 1 b = 2", 6, "expected AND, OR"),
        ("(a = 1", 6, "expected ')'"),
        ("a = 1)", 5, "unmatched ')'"),
        ("a = 1 OR (b = 2 AND)", 19, "expected a column name"),
        ("NOT", 3, "expected a column name"),
        ("a IN 1", 5, "expected '(' after IN"),
        ("a IN ()", 6, "expected a literal"),
        ("a IN (1 2)", 8, "expected ',' or ')'"),
        ("a NOT 1", 6, "expected BETWEEN, IN or LIKE after NOT"),
        ("s LIKE 'a\\c%'", 7, "escapes only '%', '_' and '\\'"),
        ("s LIKE 'abc\\'", 7, "cannot end with '\\'"),
        ("a = X'0A1'", 4, "two hex digits"),
        (
            "a = TIMESTAMP '1994-01-01 24:00:00'",
            14,
            "invalid timestamp",
        ),
        ("a = 1 AND", 9, "expected a column name"),
        ("a = DATE '1994-13-01'", 9, "invalid date"),
        ("a = DATE '1995-02-29'", 9, "invalid date"),
        ("a = DATE 5", 9, "expected a quoted date"),
        ("a = NULL", 4, "IS NULL"),
        (
            "a = 170141183460469231731687303715884105728",
            4,
            "out of range",
        ),
        ("a BETWEEN 1 2", 12, "expected AND in BETWEEN"),
        ("1a = 3", 0, "expected a column name"),
        ("a IS 5", 5, "expected NULL or NOT NULL"),
        ("a IS NOT 5", 9, "expected NULL"),
        ("a 5", 2, "expected a comparison operator"),
        ("a LIKE 5", 7, "expected a quoted pattern"),
        ("a = - 5", 4, "expected a digit after the sign"),
        ("a = 1 AND b ~ 2", 12, "unexpected character '~'"),
        ("é = 1", 0, "unexpected character 'é'"),
    ];
    for (text, pos, reason) in cases {
        let (at, why) = parse_err(text);
        assert_eq!(at, pos, "{text:?}: {why}");
        assert!(why.contains(reason), "{text:?}: {why:?} lacks {reason:?}");
    }
    let err = "a = ".parse::<Predicate>().unwrap_err();
    assert_eq!(
        err.to_string(),
        "cannot parse filter \"a = \" at 4: expected a literal (number, 'string', \
         X'hex', DATE 'YYYY-MM-DD', TIMESTAMP 'YYYY-MM-DD HH:MM:SS', TRUE or FALSE)"
    );
}

#[test]
fn display_round_trips() {
    let q = p("l_shipdate >= DATE '1994-01-01' AND l_discount <= 0.07");
    assert_eq!(
        q.to_string(),
        "l_shipdate >= DATE '1994-01-01' AND l_discount <= 0.07"
    );
    let cases = [
        ("a == 1 AND b <> -2", "a = 1 AND b != -2"),
        ("x BETWEEN 0.05 AND 0.07", "x BETWEEN 0.05 AND 0.07"),
        ("x not between 1 and 2", "x NOT BETWEEN 1 AND 2"),
        ("x IN (1,2.5 , 'a')", "x IN (1, 2.5, 'a')"),
        ("x NOT IN (X'00FF')", "x NOT IN (X'00FF')"),
        ("s like 'it''s%'", "s LIKE 'it''s%'"),
        ("s NOT LIKE '%'", "s NOT LIKE '%'"),
        ("s LIKE '%a_c%%'", "s LIKE '%a_c%%'"),
        ("s LIKE 'a\\%\\_%'", "s LIKE 'a\\%\\_%'"),
        ("NOT a = 1", "NOT a = 1"),
        ("NOT NOT a IS NULL", "NOT a IS NOT NULL"),
        ("not (a = 1 or b = 2)", "NOT (a = 1 OR b = 2)"),
        ("a = 1 OR b = 2 AND c = 3", "a = 1 OR (b = 2 AND c = 3)"),
        ("(a = 1 OR b = 2) AND c = 3", "(a = 1 OR b = 2) AND c = 3"),
        ("((a = 1))", "a = 1"),
        ("(a = 1 AND b = 2) AND c = 3", "(a = 1 AND b = 2) AND c = 3"),
        (
            "t >= TIMESTAMP '2024-02-29 23:59:59.000500'",
            "t >= TIMESTAMP '2024-02-29 23:59:59.0005'",
        ),
        (
            "t < timestamp '1969-12-31 00:00:00'",
            "t < TIMESTAMP '1969-12-31 00:00:00'",
        ),
        ("x < -0.5", "x < -0.5"),
        ("x < -12.345", "x < -12.345"),
        ("x < 0.000", "x < 0.000"),
        ("x < 5.", "x < 5."),
        ("f > 1e3 AND g < -2.5E-1", "f > 1e3 AND g < -2.5e-1"),
        ("f > 1e999 AND g > -1e999", "f > 1e999 AND g > -1e999"),
        ("s = 'it''s'", "s = 'it''s'"),
        ("\"my col\" IS NULL", "\"my col\" IS NULL"),
        ("\"a\"\"b\" is not null", "\"a\"\"b\" IS NOT NULL"),
        ("b = true AND c != FALSE", "b = TRUE AND c != FALSE"),
        ("d < DATE '0001-01-01'", "d < DATE '0001-01-01'"),
        ("d > '1994-01-01'", "d > '1994-01-01'"),
        ("s.t.u >= 3", "s.t.u >= 3"),
        ("\"not\" IN (1)", "\"not\" IN (1)"),
        ("not IS NULL", "\"not\" IS NULL"),
    ];
    for (text, shown) in cases {
        let q = p(text);
        assert_eq!(q.to_string(), shown, "{text}");
        assert_eq!(p(&q.to_string()), q, "{text}");
    }
    // Values that do not come from parsing also round-trip.
    let q = and(vec![
        term(
            "x",
            Op::Lt,
            Literal::Decimal {
                digits: i128::MIN,
                scale: 38,
            },
        ),
        term("y", Op::Gt, Literal::Float(0.1)),
        term("z", Op::Eq, Literal::Date(2_932_896)),
        is_null(""),
    ]);
    assert_eq!(
        q.to_string(),
        "x < -1.70141183460469231731687303715884105728 AND y > 1e-1 \
         AND z = DATE '9999-12-31' AND \"\" IS NULL"
    );
    assert_eq!(p(&q.to_string()), q);
}

#[test]
fn columns_are_distinct_in_order() {
    let q = p("b = 1 AND a = 2 AND b < 3 AND c IS NULL AND a > 0");
    assert_eq!(q.columns(), vec!["b", "a", "c"]);
    assert!(Predicate::all().columns().is_empty());
    let q = p("NOT (b IN (1, 2) OR a LIKE 'x%') AND (c BETWEEN 1 AND 2 OR d IS NULL OR b = 1)");
    assert_eq!(q.columns(), vec!["b", "a", "c", "d"]);
}

#[test]
fn serializes() {
    fn assert_serialize<T: serde::Serialize>(_: &T) {}
    assert_serialize(&p("a = 1"));
}

// ----- exact numbers -----------------------------------------------------

#[test]
fn rescaling_is_exact() {
    assert_eq!(rescale(Exact::Val(7, 2), 2), Scaled::Exact(7));
    assert_eq!(rescale(Exact::Val(7, 2), 4), Scaled::Exact(700));
    assert_eq!(rescale(Exact::Val(75, 3), 2), Scaled::Between(7));
    assert_eq!(rescale(Exact::Val(-75, 3), 2), Scaled::Between(-8));
    assert_eq!(rescale(Exact::Val(-70, 3), 2), Scaled::Exact(-7));
    assert_eq!(rescale(Exact::Val(1, 0), 40), Scaled::Above);
    assert_eq!(rescale(Exact::Val(-1, 0), 40), Scaled::Below);
    assert_eq!(rescale(Exact::Val(1, 60), 0), Scaled::Between(0));
    assert_eq!(rescale(Exact::Val(-1, 60), 0), Scaled::Between(-1));
    assert_eq!(rescale(Exact::Val(5, 0), -1), Scaled::Between(0));
    assert_eq!(rescale(Exact::Val(0, 200), 3), Scaled::Exact(0));
    assert_eq!(float_to_exact(1000.0), Some(Exact::Val(1000, 0)));
    assert_eq!(float_to_exact(-0.25), Some(Exact::Val(-25, 2)));
    assert_eq!(float_to_exact(1e300), Some(Exact::PosInf));
    assert_eq!(float_to_exact(f64::NEG_INFINITY), Some(Exact::NegInf));
    assert_eq!(float_to_exact(f64::NAN), None);
    assert_eq!(cmp_exact(7, Exact::Val(75, 3), 2), Ordering::Less);
    assert_eq!(cmp_exact(8, Exact::Val(75, 3), 2), Ordering::Greater);
    assert_eq!(cmp_exact(i128::MAX, Exact::PosInf, 0), Ordering::Less);
    assert_eq!(be_i128(&[0xFF, 0x85]), Some(-123));
    assert_eq!(be_i128(&[0x00, 0x85]), Some(133));
    assert_eq!(be_i128(&[]), None);
    for days in [-800_000i64, -1, 0, 59, 8766, 11016, 2_932_896] {
        let (y, m, d) = civil_from_days(days);
        assert_eq!(days_from_civil(y, m, d), days);
    }
}

// ----- evaluate ----------------------------------------------------------

fn batch_of(name: &str, array: ArrayRef) -> RecordBatch {
    let schema = Schema::new(vec![Field::new(name, array.data_type().clone(), true)]);
    RecordBatch::try_new(Arc::new(schema), vec![array]).unwrap()
}

fn mask(q: &str, batch: &RecordBatch) -> Vec<bool> {
    let m = p(q).evaluate(batch).unwrap_or_else(|e| panic!("{q}: {e}"));
    assert_eq!(m.null_count(), 0, "{q}");
    assert_eq!(m.len(), batch.num_rows(), "{q}");
    m.iter().map(|v| v.unwrap()).collect()
}

const T: bool = true;
const F: bool = false;

#[test]
fn evaluates_integers() {
    let b = batch_of(
        "x",
        Arc::new(Int32Array::from(vec![
            Some(1),
            None,
            Some(3),
            Some(-2),
            Some(5),
        ])),
    );
    assert_eq!(mask("x > 1", &b), [F, F, T, F, T]);
    assert_eq!(mask("x >= 3", &b), [F, F, T, F, T]);
    assert_eq!(mask("x = 3", &b), [F, F, T, F, F]);
    assert_eq!(mask("x != 3", &b), [T, F, F, T, T]);
    assert_eq!(mask("x < 1", &b), [F, F, F, T, F]);
    assert_eq!(mask("x <= 1", &b), [T, F, F, T, F]);
    assert_eq!(mask("x IS NULL", &b), [F, T, F, F, F]);
    assert_eq!(mask("x IS NOT NULL", &b), [T, F, T, T, T]);
    // Exact comparisons with non-integral literals.
    assert_eq!(mask("x < 1.5", &b), [T, F, F, T, F]);
    assert_eq!(mask("x <= 1.5", &b), [T, F, F, T, F]);
    assert_eq!(mask("x > -1.5", &b), [T, F, T, F, T]);
    assert_eq!(mask("x >= 2.5", &b), [F, F, T, F, T]);
    assert_eq!(mask("x = 1.5", &b), [F, F, F, F, F]);
    assert_eq!(mask("x != 1.5", &b), [T, F, T, T, T]);
    assert_eq!(mask("x = 3.000", &b), [F, F, T, F, F]);
    assert_eq!(mask("x = 3e0", &b), [F, F, T, F, F]);
    assert_eq!(mask("x BETWEEN 0 AND 4", &b), [T, F, T, F, F]);

    // Literals outside the column type's range.
    let b = batch_of(
        "x",
        Arc::new(Int8Array::from(vec![Some(-128), Some(127), None])),
    );
    assert_eq!(mask("x < 1000", &b), [T, T, F]);
    assert_eq!(mask("x <= 1e30", &b), [T, T, F]);
    assert_eq!(mask("x > 1000", &b), [F, F, F]);
    assert_eq!(mask("x = 300", &b), [F, F, F]);
    assert_eq!(mask("x != -1000", &b), [T, T, F]);
    assert_eq!(mask("x >= -1000", &b), [T, T, F]);
    assert_eq!(mask("x < -128", &b), [F, F, F]);
    assert_eq!(mask("x <= -128", &b), [T, F, F]);
    let b = batch_of("x", Arc::new(UInt64Array::from(vec![0, u64::MAX])));
    assert_eq!(mask("x > -1", &b), [T, T]);
    assert_eq!(mask("x = 18446744073709551615", &b), [F, T]);
    assert_eq!(mask("x < 0.5", &b), [T, F]);
}

#[test]
fn evaluates_decimals_exactly() {
    let a = Decimal128Array::from(vec![Some(7), Some(8), Some(-7), None, Some(750)])
        .with_precision_and_scale(15, 2)
        .unwrap();
    let b = batch_of("x", Arc::new(a));
    assert_eq!(mask("x <= 0.07", &b), [T, F, T, F, F]);
    assert_eq!(mask("x = 0.070", &b), [T, F, F, F, F]);
    assert_eq!(mask("x = 0.07", &b), [T, F, F, F, F]);
    assert_eq!(mask("x < 0.075", &b), [T, F, T, F, F]);
    assert_eq!(mask("x <= 0.075", &b), [T, F, T, F, F]);
    assert_eq!(mask("x > 0.075", &b), [F, T, F, F, T]);
    assert_eq!(mask("x >= 0.075", &b), [F, T, F, F, T]);
    assert_eq!(mask("x = 0.075", &b), [F, F, F, F, F]);
    assert_eq!(mask("x != 0.075", &b), [T, T, T, F, T]);
    assert_eq!(mask("x >= -0.07", &b), [T, T, T, F, T]);
    assert_eq!(mask("x > -0.075", &b), [T, T, T, F, T]);
    assert_eq!(mask("x = 7.5", &b), [F, F, F, F, T]);
    assert_eq!(mask("x = 7", &b), [F, F, F, F, F]);
    assert_eq!(mask("x > 1e0", &b), [F, F, F, F, T]);
    assert_eq!(mask("x < 1e40", &b), [T, T, T, F, T]);
    let small = Decimal32Array::from(vec![Some(12), Some(-5)])
        .with_precision_and_scale(5, 1)
        .unwrap();
    assert_eq!(mask("x > 1.15", &batch_of("x", Arc::new(small))), [T, F]);
}

#[test]
fn evaluates_floats_with_nan_and_signed_zero() {
    let a = Float64Array::from(vec![
        Some(-0.0),
        Some(0.0),
        Some(f64::NAN),
        None,
        Some(2.5),
        Some(f64::INFINITY),
    ]);
    let b = batch_of("x", Arc::new(a));
    assert_eq!(mask("x = 0", &b), [T, T, F, F, F, F]);
    assert_eq!(mask("x = -0.0", &b), [T, T, F, F, F, F]);
    assert_eq!(mask("x < 0", &b), [F, F, F, F, F, F]);
    assert_eq!(mask("x <= 0", &b), [T, T, F, F, F, F]);
    assert_eq!(mask("x > 0", &b), [F, F, F, F, T, T]);
    // NaN makes `!=` TRUE (IEEE 754, as Arrow C++ compute).
    assert_eq!(mask("x != 0", &b), [F, F, T, F, T, T]);
    assert_eq!(mask("NOT x < 1", &b), [F, F, T, F, T, T]);
    assert_eq!(mask("x NOT IN (0, 2.5)", &b), [F, F, T, F, F, T]);
    assert_eq!(mask("x IN (0, 2.5)", &b), [T, T, F, F, T, F]);
    assert_eq!(mask("x >= 2.5", &b), [F, F, F, F, T, T]);
    assert_eq!(mask("x < 1e999", &b), [T, T, F, F, T, F]);
    assert_eq!(mask("x = 1e999", &b), [F, F, F, F, F, T]);
    assert_eq!(mask("x IS NULL", &b), [F, F, F, T, F, F]);
    assert_eq!(mask("x IS NOT NULL", &b), [T, T, T, F, T, T]);
    // Float32: the literal is rounded to f32.
    let b = batch_of(
        "x",
        Arc::new(Float32Array::from(vec![1.1f32, 0.1, f32::NAN])),
    );
    assert_eq!(mask("x = 1.1", &b), [T, F, F]);
    assert_eq!(mask("x > 0.1", &b), [T, F, F]);
    assert_eq!(mask("x >= 0.1", &b), [T, T, F]);
    // Dictionary-encoded floats get the same treatment.
    let dict = DictionaryArray::<Int32Type>::new(
        Int32Array::from(vec![0, 1, 0]),
        Arc::new(Float64Array::from(vec![f64::NAN, -0.0])),
    );
    let b = batch_of("x", Arc::new(dict));
    assert_eq!(mask("x = 0", &b), [F, T, F]);
    assert_eq!(mask("x > 0", &b), [F, F, F]);
}

#[test]
fn evaluates_strings_dates_and_booleans() {
    let strings = vec![Some("apple"), None, Some("banana"), Some("it's"), Some("é")];
    for array in [
        Arc::new(StringArray::from(strings.clone())) as ArrayRef,
        Arc::new(LargeStringArray::from(strings.clone())) as ArrayRef,
        Arc::new(StringViewArray::from(strings.clone())) as ArrayRef,
        Arc::new(
            strings
                .iter()
                .copied()
                .collect::<DictionaryArray<Int32Type>>(),
        ) as ArrayRef,
    ] {
        let b = batch_of("s", array);
        assert_eq!(mask("s = 'it''s'", &b), [F, F, F, T, F]);
        assert_eq!(mask("s > 'b'", &b), [F, F, T, T, T]);
        assert_eq!(mask("s < 'b'", &b), [T, F, F, F, F]);
        assert_eq!(mask("s >= 'banana'", &b), [F, F, T, T, T]);
        assert_eq!(mask("s != 'apple'", &b), [F, F, T, T, T]);
        assert_eq!(mask("s > 'z'", &b), [F, F, F, F, T]);
    }
    let bin = BinaryArray::from(vec![Some(&b"ab"[..]), None, Some(&[0xFF][..])]);
    let b = batch_of("s", Arc::new(bin));
    assert_eq!(mask("s >= 'ab'", &b), [T, F, T]);

    let b = batch_of(
        "d",
        Arc::new(Date32Array::from(vec![
            Some(8766),
            Some(8767),
            None,
            Some(9000),
        ])),
    );
    assert_eq!(mask("d >= DATE '1994-01-02'", &b), [F, T, F, T]);
    assert_eq!(mask("d = '1994-01-01'", &b), [T, F, F, F]);
    assert_eq!(
        mask("d BETWEEN '1994-01-01' AND DATE '1994-01-02'", &b),
        [T, T, F, F]
    );
    let b = batch_of("d", Arc::new(Date64Array::from(vec![8766 * 86_400_000, 0])));
    assert_eq!(mask("d = DATE '1994-01-01'", &b), [T, F]);
    assert_eq!(mask("d < '1994-01-01'", &b), [F, T]);

    let b = batch_of(
        "b",
        Arc::new(BooleanArray::from(vec![Some(true), Some(false), None])),
    );
    assert_eq!(mask("b = TRUE", &b), [T, F, F]);
    assert_eq!(mask("b != TRUE", &b), [F, T, F]);
    assert_eq!(mask("b > FALSE", &b), [T, F, F]);
}

#[test]
fn evaluates_conjunctions_and_reports_errors() {
    let schema = Schema::new(vec![
        Field::new("a", DataType::Int64, true),
        Field::new("s", DataType::Utf8, true),
    ]);
    let b = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int64Array::from(vec![Some(1), Some(2), None, Some(4)])),
            Arc::new(StringArray::from(vec![
                Some("x"),
                None,
                Some("x"),
                Some("y"),
            ])),
        ],
    )
    .unwrap();
    assert_eq!(mask("a >= 1 AND s = 'x'", &b), [T, F, F, F]);
    assert_eq!(mask("a > 1 AND s IS NULL", &b), [F, T, F, F]);
    assert_eq!(mask("a IS NULL AND s = 'x'", &b), [F, F, T, F]);
    assert_eq!(mask("a BETWEEN 2 AND 4 AND s != 'x'", &b), [F, F, F, T]);
    assert_eq!(
        Predicate::all()
            .evaluate(&b)
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        vec![Some(true); 4]
    );
    let err = |q: &str| p(q).evaluate(&b).unwrap_err().to_string();
    assert!(
        err("zz = 1").contains("\"zz\" is not in the batch"),
        "{}",
        err("zz = 1")
    );
    assert!(err("a = 'x'").contains("cannot compare Int64 values with string literal 'x'"));
    assert!(err("s = 1").contains("cannot compare Utf8 values with integer literal 1"));
    assert!(err("a = DATE '1994-01-01'").contains("filter on column \"a\""));
}

#[test]
fn evaluates_struct_fields_with_parent_nulls() {
    let x = Arc::new(Int32Array::from(vec![Some(1), Some(5), None, Some(7)])) as ArrayRef;
    let fields = Fields::from(vec![Field::new("x", DataType::Int32, true)]);
    let st = StructArray::new(
        fields,
        vec![x],
        Some(NullBuffer::from(vec![true, true, true, false])),
    );
    let b = batch_of("st", Arc::new(st));
    assert_eq!(mask("st.x > 2", &b), [F, T, F, F]);
    assert_eq!(mask("st.x IS NULL", &b), [F, F, T, T]);
    assert_eq!(mask("st IS NULL", &b), [F, F, F, T]);
    assert!(p("st.y = 1").evaluate(&b).is_err());
    assert!(p("st = 1").evaluate(&b).is_err());
}

// ----- Parquet files -----------------------------------------------------

const ROWS: usize = 1000;
const RG_ROWS: usize = 250;
const PAGE_ROWS: usize = 25;

fn lcg(state: &mut u64) -> u64 {
    *state = state
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    *state >> 33
}

/// 1000 rows in 4 row groups of 250 rows, each of 10 pages of 25 rows.
pub(super) fn test_batch() -> RecordBatch {
    let mut seed = 42u64;
    let mut r = || lcg(&mut seed);
    let (mut id, mut i32s, mut f64s, mut strs, mut dates) =
        (vec![], vec![], vec![], vec![], vec![]);
    let (mut decs, mut bigs, mut bools, mut nn) = (vec![], vec![], vec![], vec![]);
    for row in 0..ROWS {
        let g = (row / RG_ROWS) as i64;
        let j = row % RG_ROWS;
        id.push(row as i64);
        let v = (r() % 201) as i32 - 100 + (g as i32) * 300;
        let i32_null = g == 1 || row % 7 == 3 || (g == 2 && (25..50).contains(&j));
        i32s.push((!i32_null).then_some(v));
        let f = g as f64 * 100.0 + (r() % 10_000) as f64 / 100.0;
        f64s.push(match row {
            3 => Some(-0.0),
            4 => Some(0.0),
            _ if row % 11 == 5 => None,
            _ if row % 50 == 7 => Some(f64::NAN),
            _ => Some(f),
        });
        let n = r() % 1000;
        let s = match g {
            0 => format!("a{n:03}"),
            1 => format!("b{n:03}"),
            2 => format!("c{n:03}"),
            _ if n % 2 == 0 => format!("zz{n:03}"),
            _ => format!("é{n:03}"),
        };
        strs.push((row % 13 != 0).then_some(s));
        let d = 8766 + (row / 2) as i32 + (r() % 5) as i32;
        dates.push((row % 17 != 1).then_some(d));
        let cents = g as i128 * 100_000 - 50_000 + (r() % 100_000) as i128;
        decs.push((row % 19 != 2).then_some(cents));
        bigs.push((row % 23 != 4).then_some(cents * 10_000_000_000));
        bools.push(match g {
            0 => Some(true),
            1 => Some(false),
            2 => Some(row % 2 == 0),
            _ => (row % 3 != 0).then_some(true),
        });
        nn.push((row % 100) as i32);
    }
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("i32", DataType::Int32, true),
        Field::new("f64", DataType::Float64, true),
        Field::new("s", DataType::Utf8, true),
        Field::new("d", DataType::Date32, true),
        Field::new("dec", DataType::Decimal128(15, 2), true),
        Field::new("big", DataType::Decimal128(25, 2), true),
        Field::new("b", DataType::Boolean, true),
        Field::new("nn", DataType::Int32, false),
    ]);
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int64Array::from(id)),
        Arc::new(Int32Array::from(i32s)),
        Arc::new(Float64Array::from(f64s)),
        Arc::new(StringArray::from(strs)),
        Arc::new(Date32Array::from(dates)),
        Arc::new(
            Decimal128Array::from(decs)
                .with_precision_and_scale(15, 2)
                .unwrap(),
        ),
        Arc::new(
            Decimal128Array::from(bigs)
                .with_precision_and_scale(25, 2)
                .unwrap(),
        ),
        Arc::new(BooleanArray::from(bools)),
        Arc::new(Int32Array::from(nn)),
    ];
    RecordBatch::try_new(Arc::new(schema), columns).unwrap()
}

pub(super) fn write_parquet(batch: &RecordBatch) -> ParquetMetaData {
    write_parquet_with(batch, RG_ROWS, PAGE_ROWS)
}

/// `batch` written with page statistics and a page index, in row groups of
/// `rg_rows` rows and pages of `page_rows`, and its metadata read back.
pub(super) fn write_parquet_with(
    batch: &RecordBatch,
    rg_rows: usize,
    page_rows: usize,
) -> ParquetMetaData {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(rg_rows))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_data_page_row_count_limit(page_rows)
        .set_write_batch_size(page_rows)
        .build();
    let mut buf = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
    ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Required)
        .parse_and_finish(&bytes::Bytes::from(buf))
        .unwrap()
}

fn any_match(q: &Predicate, batch: &RecordBatch) -> bool {
    q.evaluate(batch).unwrap().true_count() > 0
}

/// Row ranges (within the file) of every row group.
pub(super) fn row_group_ranges(meta: &ParquetMetaData) -> Vec<(usize, usize)> {
    let mut start = 0;
    meta.row_groups()
        .iter()
        .map(|rg| {
            let len = rg.num_rows() as usize;
            start += len;
            (start - len, len)
        })
        .collect()
}

/// Row ranges (within the row group) of the pages of one column chunk.
pub(super) fn page_ranges(meta: &ParquetMetaData, rg: usize, leaf: usize) -> Vec<(usize, usize)> {
    let locs = meta.offset_index().unwrap()[rg][leaf].page_locations();
    let rows = meta.row_group(rg).num_rows();
    (0..locs.len())
        .map(|i| {
            let a = locs[i].first_row_index;
            let b = locs.get(i + 1).map_or(rows, |l| l.first_row_index);
            (a as usize, (b - a) as usize)
        })
        .collect()
}

pub(super) fn leaf_of(meta: &ParquetMetaData, name: &str) -> usize {
    meta.file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .position(|c| c.name() == name)
        .unwrap()
}

pub(super) fn keep_row_groups(q: &str, meta: &ParquetMetaData) -> Vec<bool> {
    let q = p(q);
    meta.row_groups()
        .iter()
        .map(|rg| q.row_group_may_match(rg))
        .collect()
}

fn keep_pages(q: &str, meta: &ParquetMetaData, rg: usize, column: &str) -> Option<Vec<bool>> {
    let leaf = leaf_of(meta, column);
    p(q).pages_may_match(
        meta.row_group(rg),
        leaf,
        &meta.column_index().unwrap()[rg][leaf],
    )
}

#[test]
fn test_file_has_the_expected_layout() {
    let batch = test_batch();
    let meta = write_parquet(&batch);
    assert_eq!(meta.num_row_groups(), 4);
    for (rg, (start, len)) in row_group_ranges(&meta).into_iter().enumerate() {
        assert_eq!((start, len), (rg * RG_ROWS, RG_ROWS));
        for leaf in 0..batch.num_columns() {
            let pages = page_ranges(&meta, rg, leaf);
            assert_eq!(pages.len(), RG_ROWS / PAGE_ROWS, "rg {rg} leaf {leaf}");
            assert!(pages.iter().all(|&(_, n)| n == PAGE_ROWS));
            assert!(!matches!(
                meta.column_index().unwrap()[rg][leaf],
                ColumnIndexMetaData::NONE
            ));
        }
    }
    // The i32 column has a page of NULLs in row group 2.
    let ci = &meta.column_index().unwrap()[2][leaf_of(&meta, "i32")];
    assert!(ci.is_null_page(1));
    assert!(!ci.is_null_page(0));
}

#[test]
fn prunes_row_groups_with_statistics() {
    let meta = write_parquet(&test_batch());
    let cases: [(&str, [bool; 4]); 33] = [
        ("id < 250", [T, F, F, F]),
        ("id <= 250", [T, T, F, F]),
        ("id = 500", [F, F, T, F]),
        ("id = 499.5", [F, F, F, F]),
        ("id != 5", [T, T, T, T]),
        ("id BETWEEN 300 AND 400", [F, T, F, F]),
        ("id > 999", [F, F, F, F]),
        ("id >= 1e3", [F, F, F, F]),
        ("id >= 2.5e2 AND id < 500", [F, T, F, F]),
        ("id < 100 AND id > 200", [T, F, F, F]),
        ("i32 IS NOT NULL", [T, F, T, T]),
        ("i32 IS NULL", [T, T, T, T]),
        ("i32 = 0", [T, F, F, F]),
        ("i32 > 150", [F, F, T, T]),
        ("i32 >= 750", [F, F, F, T]),
        ("nn IS NULL", [F, F, F, F]),
        ("nn IS NOT NULL", [T, T, T, T]),
        ("nn != 5", [T, T, T, T]),
        ("f64 >= 300", [F, F, F, T]),
        ("f64 < 0", [F, F, F, F]),
        ("f64 <= 0", [T, F, F, F]),
        ("f64 = -0.0", [T, F, F, F]),
        ("s >= 'b' AND s < 'c'", [F, T, F, F]),
        ("s > 'zz'", [F, F, F, T]),
        ("s < 'a'", [F, F, F, F]),
        ("d < '1994-01-01'", [F, F, F, F]),
        ("d >= DATE '1995-01-01'", [F, F, T, T]),
        ("dec < -500", [F, F, F, F]),
        ("dec > 3499.99", [F, F, F, F]),
        ("dec >= 2500", [F, F, F, T]),
        ("b = FALSE", [F, T, T, F]),
        ("b != TRUE", [F, T, T, F]),
        ("big < 0", [T, F, F, F]),
    ];
    for (q, want) in cases {
        assert_eq!(keep_row_groups(q, &meta), want, "{q}");
    }
    // Terms on unknown columns or with mismatched literals do not prune.
    assert_eq!(
        keep_row_groups("nope = 1 AND id > 1000", &meta),
        [F, F, F, F]
    );
    assert_eq!(keep_row_groups("nope = 1", &meta), [T, T, T, T]);
    assert_eq!(keep_row_groups("id = 'x'", &meta), [T, T, T, T]);
}

#[test]
fn prunes_pages_with_the_column_index() {
    let meta = write_parquet(&test_batch());
    let page = |v: &[usize]| (0..10).map(|i| v.contains(&i)).collect::<Vec<_>>();
    // Row group 1 holds ids 250..500, 25 per page.
    assert_eq!(
        keep_pages("id BETWEEN 300 AND 320", &meta, 1, "id"),
        Some(page(&[2]))
    );
    assert_eq!(
        keep_pages("id >= 300 AND id <= 325 AND i32 = 1", &meta, 1, "id"),
        Some(page(&[2, 3]))
    );
    assert_eq!(keep_pages("id < 0", &meta, 0, "id"), Some(page(&[])));
    assert_eq!(
        keep_pages("id != 3", &meta, 0, "id"),
        Some(page(&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]))
    );
    // No term on the column, or no column index: None.
    assert_eq!(keep_pages("i32 = 1", &meta, 1, "id"), None);
    let rg = meta.row_group(0);
    assert_eq!(
        p("id = 1").pages_may_match(rg, 0, &ColumnIndexMetaData::NONE),
        None
    );
    // A page of NULLs only matches IS NULL.
    let all_but_1 = page(&[0, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert_eq!(
        keep_pages("i32 IS NOT NULL", &meta, 2, "i32"),
        Some(all_but_1)
    );
    assert_eq!(
        keep_pages("i32 > -1000", &meta, 2, "i32"),
        Some(page(&[0, 2, 3, 4, 5, 6, 7, 8, 9]))
    );
    assert_eq!(
        keep_pages("i32 IS NULL", &meta, 2, "i32").map(|v| v[1]),
        Some(true)
    );
    assert_eq!(keep_pages("nn IS NULL", &meta, 0, "nn"), Some(page(&[])));
}

#[test]
fn validates_against_the_schema() {
    let meta = write_parquet(&test_batch());
    let schema = meta.file_metadata().schema_descr();
    let ok = [
        "id > 1 AND i32 < 2.5 AND f64 >= 1e3 AND s = 'x' AND d < DATE '1994-01-01'",
        "d < '1994-01-01' AND dec <= 0.075 AND big = -1 AND b = TRUE AND nn IS NULL",
        "s IS NOT NULL AND f64 = 1",
    ];
    for q in ok {
        assert_eq!(p(q).validate(schema), Ok(()), "{q}");
    }
    assert_eq!(
        p("id > 1 AND nope = 2").validate(schema),
        Err(PredicateError::UnknownColumn("nope".into()))
    );
    let type_err = |q: &str| match p(q).validate(schema) {
        Err(PredicateError::Type { column, source }) => (column, source.to_string()),
        other => panic!("{q}: expected a type error, got {other:?}"),
    };
    let cases = [
        (
            "id = 'x'",
            "id",
            "cannot compare an integer column with string literal 'x'",
        ),
        (
            "s = 1",
            "s",
            "cannot compare a string column with integer literal 1",
        ),
        ("b = 1", "b", "cannot compare a BOOLEAN column"),
        ("i32 = TRUE", "i32", "boolean literal TRUE"),
        (
            "d = 8766",
            "d",
            "cannot compare a DATE column with integer literal",
        ),
        ("d = 'soon'", "d", "\"soon\" is not a date"),
        (
            "dec = DATE '1994-01-01'",
            "dec",
            "cannot compare a DECIMAL column",
        ),
        ("f64 = 'x'", "f64", "floating-point"),
    ];
    for (q, col, reason) in cases {
        let (c, r) = type_err(q);
        assert_eq!(c, col, "{q}");
        assert!(r.contains(reason), "{q}: {r:?} lacks {reason:?}");
    }
    let e = p("s = 1").validate(schema).unwrap_err();
    assert_eq!(
        e.to_string(),
        "filter on column \"s\": cannot compare a string column with integer literal 1"
    );
}

#[test]
fn nested_columns_validate_and_stay_conservative() {
    let x = Arc::new(Int32Array::from_iter_values(0..100)) as ArrayRef;
    let fields = Fields::from(vec![Field::new("x", DataType::Int32, true)]);
    let st = StructArray::new(fields, vec![x], None);
    let batch = batch_of("st", Arc::new(st));
    let meta = write_parquet(&batch);
    let schema = meta.file_metadata().schema_descr();
    assert_eq!(p("st.x > 1 AND st IS NOT NULL").validate(schema), Ok(()));
    assert!(matches!(
        p("st > 1").validate(schema),
        Err(PredicateError::Type { .. })
    ));
    assert_eq!(
        p("st.y > 1").validate(schema),
        Err(PredicateError::UnknownColumn("st.y".into()))
    );
    // Pruning on nested leaves is conservative, evaluation is exact.
    assert_eq!(keep_row_groups("st.x > 1000", &meta), [T]);
    let pages = keep_pages("st.x > 1000", &meta, 0, "x").unwrap();
    assert!(pages.iter().all(|k| *k));
    assert_eq!(p("st.x >= 98").evaluate(&batch).unwrap().true_count(), 2);
}

/// Literal texts per column for the exhaustive checks; `true` marks
/// literals that no value of the column can equal exactly.
fn literal_cases() -> Vec<(&'static str, Vec<(&'static str, bool)>)> {
    let exact = |v: &[&'static str]| v.iter().map(|s| (*s, false)).collect::<Vec<_>>();
    vec![
        ("id", {
            let mut v = exact(&[
                "-1", "0", "1", "249", "250", "251", "500", "999", "1000", "1e3", "2.5e2",
            ]);
            v.push(("499.5", true));
            v
        }),
        ("i32", {
            let mut v = exact(&[
                "-101", "-100", "0", "100", "101", "499", "500", "650", "1000", "1001",
            ]);
            v.push(("0.5", true));
            v.push(("-99.99", true));
            v
        }),
        (
            "f64",
            exact(&[
                "-1", "0", "0.0", "-0.0", "50.5", "99.99", "100", "250", "399.99", "400", "1e9",
                "-1e999",
            ]),
        ),
        (
            "s",
            exact(&[
                "'a000'", "'a500'", "'b'", "'b999'", "'c'", "'c5'", "'zz'", "'zz500'", "'é'",
                "'é500'", "''",
            ]),
        ),
        (
            "d",
            exact(&[
                "DATE '1994-01-01'",
                "'1994-01-02'",
                "DATE '1994-06-01'",
                "DATE '1995-05-15'",
                "DATE '1995-05-20'",
                "DATE '2000-01-01'",
                "DATE '1993-12-31'",
            ]),
        ),
        ("dec", {
            let mut v = exact(&[
                "-500", "-500.00", "0.07", "0", "499.99", "500", "1499.99", "2500", "1e3", "-1e40",
            ]);
            v.push(("-499.995", true));
            v.push(("1000.005", true));
            v
        }),
        ("big", {
            let mut v = exact(&[
                "0",
                "-500000000000000",
                "1e15",
                "-1e14",
                "2500000000000000",
                "12345678901234.56",
            ]);
            v.push(("250000000000000.005", true));
            v
        }),
        ("b", exact(&["TRUE", "FALSE"])),
        ("nn", exact(&["0", "50", "99", "100"])),
    ]
}

/// For every single-term predicate: a row group or page is kept exactly
/// when min/max say a value may match, which (with exact statistics) is
/// exactly when the oracle finds a matching row, except for `=`, kept
/// when min <= v <= max.
#[test]
fn single_terms_prune_exactly_and_soundly() {
    let batch = test_batch();
    let meta = write_parquet(&batch);
    let rgs = row_group_ranges(&meta);
    let mut pruned = (0usize, 0usize);
    for (column, literals) in literal_cases() {
        let leaf = leaf_of(&meta, column);
        // (filter, literal never equal, `>=` and `<=` filters for `=`)
        type Query = (String, bool, Option<(String, String)>);
        let mut queries: Vec<Query> = vec![
            (format!("{column} IS NULL"), false, None),
            (format!("{column} IS NOT NULL"), false, None),
        ];
        for (lit, inexact) in &literals {
            for op in ["=", "!=", "<", "<=", ">", ">="] {
                let bounds = (op == "=")
                    .then(|| (format!("{column} >= {lit}"), format!("{column} <= {lit}")));
                queries.push((format!("{column} {op} {lit}"), *inexact, bounds));
            }
        }
        for (q, inexact, eq_bounds) in &queries {
            let pred = p(q);
            let expect = |slice: &RecordBatch| match eq_bounds {
                Some((ge, le)) => !inexact && any_match(&p(ge), slice) && any_match(&p(le), slice),
                None => any_match(&pred, slice),
            };
            for (rg, &(start, len)) in rgs.iter().enumerate() {
                let slice = batch.slice(start, len);
                let keep = pred.row_group_may_match(meta.row_group(rg));
                let found = any_match(&pred, &slice);
                assert!(keep || !found, "{q}: row group {rg} pruned but has a match");
                assert_eq!(keep, expect(&slice), "{q}: row group {rg}");
                pruned.0 += usize::from(!keep);
                let pages = pred
                    .pages_may_match(
                        meta.row_group(rg),
                        leaf,
                        &meta.column_index().unwrap()[rg][leaf],
                    )
                    .unwrap_or_else(|| panic!("{q}: no page answer"));
                let ranges = page_ranges(&meta, rg, leaf);
                assert_eq!(pages.len(), ranges.len(), "{q}");
                for (i, (&keep, &(a, n))) in pages.iter().zip(&ranges).enumerate() {
                    let slice = batch.slice(start + a, n);
                    let found = any_match(&pred, &slice);
                    assert!(
                        keep || !found,
                        "{q}: rg {rg} page {i} pruned but has a match"
                    );
                    assert_eq!(keep, expect(&slice), "{q}: rg {rg} page {i}");
                    pruned.1 += usize::from(!keep);
                }
            }
        }
    }
    // The checks above did prune a lot.
    assert!(pruned.0 > 300 && pruned.1 > 3000, "pruned {pruned:?}");
}

/// Conjunctions over several columns: never prune a row group or page
/// holding a matching row.
#[test]
fn conjunctions_never_prune_matching_rows() {
    let batch = test_batch();
    let meta = write_parquet(&batch);
    let rgs = row_group_ranges(&meta);
    let queries = [
        "id >= 200 AND i32 < 0",
        "f64 BETWEEN 50 AND 150 AND s >= 'b'",
        "d BETWEEN DATE '1994-03-01' AND '1994-04-01' AND dec > 0",
        "dec <= 0.07 AND dec > -1 AND b = TRUE",
        "i32 IS NULL AND id > 600",
        "s IS NOT NULL AND s < 'b5' AND f64 != 0",
        "big >= 0 AND big < 1e15 AND nn = 7",
        "b != FALSE AND i32 BETWEEN 650 AND 700",
        "id BETWEEN 10 AND 990 AND d > '1994-05-01' AND s > 'é'",
        "f64 = 0 AND i32 IS NOT NULL",
    ];
    let schema = meta.file_metadata().schema_descr();
    let mut kept = 0;
    for q in queries {
        let pred = p(q);
        assert_eq!(pred.validate(schema), Ok(()), "{q}");
        for (rg, &(start, len)) in rgs.iter().enumerate() {
            let rg_meta = meta.row_group(rg);
            let slice = batch.slice(start, len);
            let found = any_match(&pred, &slice);
            let keep = pred.row_group_may_match(rg_meta);
            assert!(keep || !found, "{q}: row group {rg} pruned but has a match");
            kept += usize::from(keep);
            for column in pred.columns() {
                let leaf = leaf_of(&meta, column);
                let Predicate::And(parts) = &pred else {
                    panic!("{q}: a conjunction");
                };
                let sub = Predicate::And(
                    parts
                        .iter()
                        .filter(|c| c.columns() == [column])
                        .cloned()
                        .collect(),
                );
                let pages = pred
                    .pages_may_match(rg_meta, leaf, &meta.column_index().unwrap()[rg][leaf])
                    .unwrap();
                for (i, (&keep, &(a, n))) in
                    pages.iter().zip(&page_ranges(&meta, rg, leaf)).enumerate()
                {
                    let page = batch.slice(start + a, n);
                    assert!(
                        keep || !any_match(&sub, &page),
                        "{q}: rg {rg} page {i} ({column})"
                    );
                    // Rows matching the whole predicate lie in kept pages.
                    if !keep {
                        assert!(!any_match(&pred, &page), "{q}: rg {rg} page {i}");
                    }
                }
            }
        }
    }
    assert!(kept > 0 && kept < queries.len() * rgs.len(), "kept {kept}");
}
