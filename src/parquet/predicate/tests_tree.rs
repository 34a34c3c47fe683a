//! Tests of AND / OR / NOT, IN, BETWEEN, LIKE, binary and timestamp
//! literals, pruning over trees, fitting and DNF filters.

use std::sync::Arc;

use ::arrow::array::{
    Array, ArrayRef, BinaryArray, DictionaryArray, Int32Array, Int64Array, LargeStringArray,
    StringArray, StringViewArray, TimestampMicrosecondArray, TimestampMillisecondArray,
    TimestampNanosecondArray, TimestampSecondArray,
};
use ::arrow::datatypes::{Field, Int32Type, Schema};
use ::arrow::record_batch::RecordBatch;

use super::ast::*;
use super::dnf::*;
use super::tests::{keep_row_groups, test_batch, write_parquet};

const T: bool = true;
const F: bool = false;

fn p(s: &str) -> Predicate {
    s.parse()
        .unwrap_or_else(|e| panic!("{s:?} should parse: {e}"))
}

fn mask(q: &str, batch: &RecordBatch) -> Vec<bool> {
    let m = p(q).evaluate(batch).unwrap_or_else(|e| panic!("{q}: {e}"));
    assert_eq!(m.null_count(), 0, "{q}");
    m.iter().map(|v| v.unwrap()).collect()
}

fn batch(columns: Vec<(&str, ArrayRef)>) -> RecordBatch {
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), true))
        .collect();
    let arrays = columns.into_iter().map(|(_, a)| a).collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays).unwrap()
}

#[test]
fn parses_precedence_and_parentheses() {
    let t = |c: &str, v: i128| Predicate::cmp(c, Op::Eq, Literal::Int(v));
    assert_eq!(
        p("a = 1 OR b = 2 AND NOT c = 3"),
        Predicate::Or(vec![
            t("a", 1),
            Predicate::And(vec![t("b", 2), t("c", 3).negate()]),
        ])
    );
    assert_eq!(
        p("NOT a = 1 AND b = 2"),
        Predicate::And(vec![t("a", 1).negate(), t("b", 2)])
    );
    assert_eq!(
        p("NOT (a = 1 AND b = 2) OR c = 3 OR d = 4"),
        Predicate::Or(vec![
            Predicate::And(vec![t("a", 1), t("b", 2)]).negate(),
            t("c", 3),
            t("d", 4),
        ])
    );
    assert_eq!(
        p("x BETWEEN 1 AND 2 AND y = 3"),
        Predicate::And(vec![
            Predicate::term("x", Test::Between(Literal::Int(1), Literal::Int(2))),
            t("y", 3),
        ])
    );
    assert_eq!(
        p("x NOT IN (1) OR s NOT LIKE 'ab%'"),
        Predicate::Or(vec![
            Predicate::term("x", Test::In(vec![Literal::Int(1)])).negate(),
            Predicate::term("s", Test::StartsWith("ab".into())).negate(),
        ])
    );
}

#[test]
fn evaluates_three_valued_logic() {
    let b = batch(vec![
        (
            "x",
            Arc::new(Int64Array::from(vec![Some(1), None, Some(7), Some(3)])),
        ),
        (
            "y",
            Arc::new(StringArray::from(vec![None, None, Some("a"), Some("b")])),
        ),
    ]);
    assert_eq!(mask("NOT (x > 5)", &b), [T, F, F, T]);
    assert_eq!(mask("NOT x > 5", &b), [T, F, F, T]);
    assert_eq!(mask("x > 5 OR y IS NULL", &b), [T, T, T, F]);
    assert_eq!(mask("x > 5 AND y IS NULL", &b), [F, F, F, F]);
    assert_eq!(mask("NOT (x > 5 AND y = 'a')", &b), [T, F, F, T]);
    assert_eq!(mask("NOT (x > 5 OR y = 'b')", &b), [F, F, F, F]);
    assert_eq!(mask("NOT NOT (x > 5 OR y = 'b')", &b), [F, F, T, T]);
    assert_eq!(mask("x IN (1, 3)", &b), [T, F, F, T]);
    assert_eq!(mask("x NOT IN (1, 3)", &b), [F, F, T, F]);
    assert_eq!(mask("x NOT IN (1, 1.5)", &b), [F, F, T, T]);
    assert_eq!(mask("x NOT BETWEEN 2 AND 5", &b), [T, F, T, F]);
    assert_eq!(mask("x NOT BETWEEN 2.5 AND 3", &b), [T, F, T, F]);
    assert_eq!(mask("x IS NOT NULL AND NOT x = 3", &b), [T, F, T, F]);
    // Exactly false for every non-NULL value: NOT keeps the NULL out.
    assert_eq!(mask("NOT x = 1.5", &b), [T, F, T, T]);
    assert_eq!(mask("NOT x > 1e30", &b), [T, F, T, T]);
    assert_eq!(
        mask("(x < 2 OR x > 5) AND (y = 'a' OR y IS NULL)", &b),
        [T, F, T, F]
    );
    assert_eq!(mask("y IN ('b', 'c') OR x IN (1)", &b), [T, F, F, T]);
}

#[test]
fn evaluates_like_prefixes() {
    let strings = vec![
        Some("apple"),
        None,
        Some("apricot"),
        Some("banana"),
        Some("ap"),
        Some("a"),
    ];
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
        Arc::new(BinaryArray::from(
            strings
                .iter()
                .map(|s| s.map(str::as_bytes))
                .collect::<Vec<_>>(),
        )) as ArrayRef,
    ] {
        let b = batch(vec![("s", array)]);
        assert_eq!(mask("s LIKE 'ap%'", &b), [T, F, T, F, T, F]);
        assert_eq!(mask("s NOT LIKE 'ap%'", &b), [F, F, F, T, F, T]);
        assert_eq!(mask("s LIKE '%'", &b), [T, F, T, T, T, T]);
        assert_eq!(mask("s LIKE 'apple pie%'", &b), [F; 6]);
    }
    let b = batch(vec![("x", Arc::new(Int32Array::from(vec![1])) as ArrayRef)]);
    let err = p("x LIKE '1%'").evaluate(&b).unwrap_err().to_string();
    assert!(
        err.contains("LIKE needs a string or binary column"),
        "{err}"
    );
}

#[test]
fn evaluates_binary_literals() {
    let bin = BinaryArray::from(vec![
        Some(&[0x00u8, 0xFF][..]),
        Some(&[0x0A, 0x1B][..]),
        None,
    ]);
    let b = batch(vec![
        ("b", Arc::new(bin) as ArrayRef),
        (
            "s",
            Arc::new(StringArray::from(vec![Some("a"), Some("b"), None])),
        ),
    ]);
    assert_eq!(mask("b = X'0A1B'", &b), [F, T, F]);
    assert_eq!(mask("b < X'0A'", &b), [T, F, F]);
    assert_eq!(mask("b IN (X'00FF', X'01')", &b), [T, F, F]);
    assert_eq!(mask("s = X'61'", &b), [T, F, F]);
    assert_eq!(mask("s > X'61FF'", &b), [F, T, F]);
}

#[test]
fn evaluates_timestamps_of_every_unit_exactly() {
    let secs = [Some(1i64), Some(2), None, Some(-1)];
    let scaled = |k: i64| {
        secs.iter()
            .map(|v| v.map(|s| s * k + 1))
            .collect::<Vec<_>>()
    };
    // Values are one unit past a whole second: 1 s + 1 unit, 2 s + 1 unit, NULL, -1 s + 1 unit.
    let columns: Vec<ArrayRef> = vec![
        Arc::new(TimestampSecondArray::from(secs.to_vec())),
        Arc::new(TimestampMillisecondArray::from(scaled(1_000)).with_timezone("UTC")),
        Arc::new(TimestampMicrosecondArray::from(scaled(1_000_000)).with_timezone("+02:00")),
        Arc::new(TimestampNanosecondArray::from(scaled(1_000_000_000))),
    ];
    for (i, col) in columns.into_iter().enumerate() {
        let b = batch(vec![("t", col)]);
        let seconds = i == 0;
        let at = |q: &str| mask(q, &b);
        assert_eq!(
            at("t > TIMESTAMP '1970-01-01 00:00:01'"),
            [!seconds, T, F, F],
            "{i}"
        );
        assert_eq!(
            at("t >= TIMESTAMP '1970-01-01 00:00:01'"),
            [T, T, F, F],
            "{i}"
        );
        assert_eq!(at("t = '1970-01-01 00:00:02'"), [F, seconds, F, F], "{i}");
        assert_eq!(at("t < DATE '1970-01-01'"), [F, F, F, T], "{i}");
        assert_eq!(at("t >= '1970-01-01'"), [T, T, F, F], "{i}");
        // Between two stored values of every unit but nanoseconds.
        let half = "TIMESTAMP '1970-01-01 00:00:01.0000000005'";
        assert!(
            format!("t = {half}").parse::<Predicate>().is_err(),
            "ten digits"
        );
        let tiny = "TIMESTAMP '1970-01-01 00:00:01.000000001'";
        let nanos = i == 3;
        assert_eq!(at(&format!("t = {tiny}")), [nanos, F, F, F], "{i}");
        assert_eq!(
            at(&format!("t < {tiny}")),
            [!nanos && seconds, F, F, T],
            "{i}"
        );
        assert_eq!(
            at(&format!("NOT t > {tiny}")),
            [nanos || seconds, F, F, T],
            "{i}"
        );
        assert_eq!(at(&format!("t != {tiny}")), [!nanos, T, F, T], "{i}");
    }
    let b = batch(vec![(
        "t",
        Arc::new(TimestampSecondArray::from(vec![0])) as ArrayRef,
    )]);
    let err = p("t = 5").evaluate(&b).unwrap_err().to_string();
    assert!(err.contains("cannot compare Timestamp"), "{err}");
    let err = p("t = 'noon'").evaluate(&b).unwrap_err().to_string();
    assert!(err.contains("is not a timestamp"), "{err}");
}

#[test]
fn prunes_row_groups_of_trees() {
    let meta = write_parquet(&test_batch());
    let cases: [(&str, [bool; 4]); 16] = [
        ("id < 100 OR id > 900", [T, F, F, T]),
        ("NOT (id >= 250)", [T, F, F, F]),
        ("NOT id < 250", [F, T, T, T]),
        ("id IN (5, 600)", [T, F, T, F]),
        ("id IN (5.5, 600)", [F, F, T, F]),
        ("id NOT IN (5)", [T, T, T, T]),
        ("NOT id BETWEEN 0 AND 499", [F, F, T, T]),
        ("id NOT BETWEEN 0 AND 999", [F, F, F, F]),
        ("s LIKE 'b%'", [F, T, F, F]),
        ("s LIKE 'zz%' OR s LIKE 'a1%'", [T, F, F, T]),
        ("NOT s NOT LIKE 'c%'", [F, F, T, F]),
        // NaN could make it TRUE; statistics cannot rule NaN out.
        ("NOT (f64 < 1000)", [T, T, T, T]),
        ("f64 != 1e9", [T, T, T, T]),
        ("(id < 100 AND i32 > 150) OR nn IS NULL", [F, F, F, F]),
        ("NOT (nn IS NOT NULL)", [F, F, F, F]),
        ("NOT (nope = 1 OR id > 300)", [T, T, F, F]),
    ];
    for (q, want) in cases {
        assert_eq!(keep_row_groups(q, &meta), want, "{q}");
    }
}

#[test]
fn fitting_keeps_a_superset() {
    let meta = write_parquet(&test_batch());
    let schema = meta.file_metadata().schema_descr();
    let fit = |q: &str| p(q).fitting(schema).map(|f| f.to_string());
    assert_eq!(fit("nope = 1 AND id = 1").as_deref(), Some("id = 1"));
    assert_eq!(fit("nope = 1 OR id = 1"), None);
    assert_eq!(fit("NOT (nope = 1 AND id = 1)"), None);
    assert_eq!(
        fit("NOT (nope = 1 OR id = 1)").as_deref(),
        Some("NOT id = 1")
    );
    assert_eq!(
        fit("(id = 'x' OR id = 2) AND s LIKE 'a%' AND b = 1").as_deref(),
        Some("s LIKE 'a%'")
    );
    assert_eq!(fit("id LIKE 'a%'"), None);
    assert!(matches!(
        p("id LIKE 'a%'").validate(schema),
        Err(PredicateError::Type {
            source: TermError::Like { .. },
            ..
        })
    ));
    assert_eq!(
        p("NOT (id IN (1, 2) OR s NOT LIKE 'x%') AND d > TIMESTAMP '1994-01-01 00:00:00'")
            .validate(schema)
            .map_err(|e| e.to_string()),
        Err(
            "filter on column \"d\": cannot compare a DATE column with timestamp literal \
             TIMESTAMP '1994-01-01 00:00:00'"
                .to_string()
        )
    );
}

#[test]
fn dnf_filters_build_trees() {
    let one = |v: i128| DnfValue::One(Literal::Int(v));
    let q = Predicate::from_dnf(&[
        vec![
            DnfTerm::new("a", "==", one(1)),
            DnfTerm::new(
                "b",
                "not in",
                DnfValue::List(vec![Literal::Str("x".into())]),
            ),
        ],
        vec![DnfTerm::new("c", "IS NOT", DnfValue::Null)],
        vec![DnfTerm::new(
            "d",
            "in",
            DnfValue::List(vec![Literal::Int(1), Literal::Int(2)]),
        )],
    ])
    .unwrap();
    assert_eq!(
        q,
        p("(a = 1 AND b NOT IN ('x')) OR c IS NOT NULL OR d IN (1, 2)")
    );
    let flat = Predicate::from_dnf(&[vec![
        DnfTerm::new("a", ">=", one(1)),
        DnfTerm::new("a", "<", one(5)),
        DnfTerm::new("n", "is", DnfValue::Null),
    ]])
    .unwrap();
    assert_eq!(flat, p("a >= 1 AND a < 5 AND n IS NULL"));
    assert_eq!(
        Predicate::from_dnf(&[vec![DnfTerm::new("a", "!=", one(1))]]).unwrap(),
        p("a != 1")
    );
    let err = |t: DnfTerm| match Predicate::from_dnf(&[vec![t]]) {
        Err(PredicateError::Dnf(why)) => why,
        other => panic!("expected a DNF error, got {other:?}"),
    };
    assert!(err(DnfTerm::new("a", "=", DnfValue::Null)).contains("'is'"));
    assert!(err(DnfTerm::new("a", "in", DnfValue::List(vec![]))).contains("non-empty"));
    assert!(err(DnfTerm::new("a", "in", one(1))).contains("non-empty"));
    assert!(err(DnfTerm::new("a", "<", DnfValue::List(vec![]))).contains("'in'"));
    assert!(err(DnfTerm::new("a", "is", one(1))).contains("take None"));
    assert!(err(DnfTerm::new("a", "like", one(1))).contains("unknown operator"));
    assert!(matches!(
        Predicate::from_dnf(&[]),
        Err(PredicateError::Dnf(_))
    ));
    assert!(matches!(
        Predicate::from_dnf(&[vec![]]),
        Err(PredicateError::Dnf(_))
    ));
}
