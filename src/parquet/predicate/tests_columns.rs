//! Column-to-column comparisons (`a < b`): parsing, display, validation
//! against a file's schema, and row-exact evaluation against plain loops
//! under SQL's three-valued logic.

use std::sync::Arc;

use ::arrow::array::{ArrayRef, Date32Array, Float64Array, Int32Array, Int64Array};
use ::arrow::datatypes::{DataType, Field, Schema};
use ::arrow::record_batch::RecordBatch;
use ::parquet::arrow::ArrowWriter;
use ::parquet::file::metadata::ParquetMetaDataReader;

use super::ast::*;

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

fn selected(q: &str, b: &RecordBatch) -> Vec<bool> {
    let p: Predicate = q.parse().unwrap();
    p.evaluate(b).unwrap().iter().map(|v| v.unwrap()).collect()
}

#[test]
fn parses_and_displays_a_column_on_the_right() {
    let p: Predicate = "l_commitdate < l_receiptdate".parse().unwrap();
    assert_eq!(
        p,
        Predicate::term(
            "l_commitdate",
            Test::CmpColumn(Op::Lt, "l_receiptdate".into())
        )
    );
    assert_eq!(p.columns(), vec!["l_commitdate", "l_receiptdate"]);
    for q in [
        "a < b",
        "a >= \"b c\"",
        "NOT a = b AND c != d",
        "x = TRUE",
        "d >= DATE '1994-01-01'",
    ] {
        let p: Predicate = q.parse().unwrap();
        let again: Predicate = p.to_string().parse().unwrap();
        assert_eq!(p, again, "{q}");
    }
    // Keywords on the right stay literals.
    assert!(matches!(
        "x = TRUE".parse::<Predicate>().unwrap(),
        Predicate::Term(Term {
            test: Test::Cmp(..),
            ..
        })
    ));
}

/// Every operator on integers with NULLs on either side, against a loop.
#[test]
fn integers_compare_row_by_row_with_nulls_unknown() {
    let a = vec![Some(1), Some(5), None, Some(3), Some(-2), Some(7)];
    let b = vec![Some(2), Some(5), Some(1), None, Some(-3), Some(7)];
    let rb = batch(vec![
        ("a", Arc::new(Int32Array::from(a.clone())) as ArrayRef),
        ("b", Arc::new(Int32Array::from(b.clone()))),
    ]);
    type Compare = fn(i32, i32) -> bool;
    let ops: [(&str, Compare); 6] = [
        ("=", |x, y| x == y),
        ("!=", |x, y| x != y),
        ("<", |x, y| x < y),
        ("<=", |x, y| x <= y),
        (">", |x, y| x > y),
        (">=", |x, y| x >= y),
    ];
    for (op, f) in ops {
        let want: Vec<bool> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| matches!((x, y), (Some(x), Some(y)) if f(*x, *y)))
            .collect();
        assert_eq!(selected(&format!("a {op} b"), &rb), want, "a {op} b");
        // NOT of an unknown is unknown: NULL rows are kept by neither.
        let not: Vec<bool> = a
            .iter()
            .zip(&b)
            .map(|(x, y)| matches!((x, y), (Some(x), Some(y)) if !f(*x, *y)))
            .collect();
        assert_eq!(selected(&format!("NOT a {op} b"), &rb), not, "NOT a {op} b");
    }
}

/// NaN on either side: FALSE, `!=` TRUE, and NOT of those; a NULL beside
/// a NaN stays unknown.
#[test]
fn floats_with_nan_compare_like_literals_do() {
    let a = vec![
        Some(1.0),
        Some(f64::NAN),
        Some(2.0),
        Some(f64::NAN),
        None,
        Some(-0.0),
    ];
    let b = vec![
        Some(2.0),
        Some(1.0),
        Some(f64::NAN),
        Some(f64::NAN),
        Some(f64::NAN),
        Some(0.0),
    ];
    let rb = batch(vec![
        ("a", Arc::new(Float64Array::from(a)) as ArrayRef),
        ("b", Arc::new(Float64Array::from(b))),
    ]);
    assert_eq!(
        selected("a < b", &rb),
        [true, false, false, false, false, false]
    );
    assert_eq!(
        selected("a != b", &rb),
        [true, true, true, true, false, false]
    );
    assert_eq!(
        selected("NOT a < b", &rb),
        [false, true, true, true, false, true]
    );
    assert_eq!(
        selected("a = b", &rb),
        [false, false, false, false, false, true]
    );
}

#[test]
fn dates_compare_and_mixed_types_are_typed_errors() {
    let rb = batch(vec![
        (
            "c",
            Arc::new(Date32Array::from(vec![10, 20, 30])) as ArrayRef,
        ),
        ("r", Arc::new(Date32Array::from(vec![11, 20, 29]))),
        ("i", Arc::new(Int64Array::from(vec![1, 2, 3]))),
    ]);
    assert_eq!(selected("c < r", &rb), [true, false, false]);
    let p: Predicate = "c < i".parse().unwrap();
    assert!(p.evaluate(&rb).is_err());
}

/// Against a file's schema: the right column must exist and be of the
/// left one's kind; statistics never prune on a column comparison.
#[test]
fn validates_against_a_file_and_never_prunes() {
    let rb = batch(vec![
        ("a", Arc::new(Int32Array::from(vec![1, 2, 3])) as ArrayRef),
        ("b", Arc::new(Int32Array::from(vec![10, 20, 30]))),
        (
            "s",
            Arc::new(::arrow::array::StringArray::from(vec!["x", "y", "z"])),
        ),
    ]);
    let mut bytes = Vec::new();
    let mut w = ArrowWriter::try_new(&mut bytes, rb.schema(), None).unwrap();
    w.write(&rb).unwrap();
    w.close().unwrap();
    let meta = ParquetMetaDataReader::new()
        .parse_and_finish(&bytes::Bytes::from(bytes))
        .unwrap();
    let schema = meta.file_metadata().schema_descr();
    let ok: Predicate = "a < b".parse().unwrap();
    ok.validate(schema).unwrap();
    // Every a is below every b: statistics would prune `a > b` if they
    // were (wrongly) used; they are not.
    let never: Predicate = "a > b".parse().unwrap();
    assert!(never.row_group_may_match(meta.row_group(0)));
    for bad in ["a < missing", "a < s"] {
        let p: Predicate = bad.parse().unwrap();
        assert!(p.validate(schema).is_err(), "{bad}");
    }
    assert_eq!(DataType::Int32, *rb.column(0).data_type());
}
