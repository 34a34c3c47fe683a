//! `GpuPredicate::compile`: every column type gets a program, parts the
//! GPU does not evaluate are typed errors naming their term, deep trees
//! stay within the kernel's stack; the constants match `filter_eval.cu`.

use std::sync::Arc;

use arrow::datatypes::{DataType, Field, Fields, IntervalUnit, Schema, SchemaRef, TimeUnit};

use super::column_table::COLUMN_WORDS;
use super::filter_columns::{ValueKind, MAX_PATH};
use super::program::{op_code, step, MAX_NESTING, STACK_DEPTH};
use super::{FilterError, GpuPredicate};
use crate::decode::kernels::FILTER_BLOCK;
use crate::parquet::predicate::{Literal, Op, PredicateError, Test};
use crate::parquet::Predicate;

const SOURCE: &str = include_str!("../kernels/cuda/filter_eval.cu");

fn define(name: &str) -> u64 {
    let line = SOURCE
        .lines()
        .find(|l| l.starts_with(&format!("#define {name} ")))
        .unwrap_or_else(|| panic!("no #define {name}"));
    let v = line.split_whitespace().nth(2).unwrap();
    v.trim_end_matches('u').parse().unwrap()
}

#[test]
fn constants_are_the_kernels() {
    assert_eq!(define("GDS_FILTER_STACK"), STACK_DEPTH as u64);
    assert_eq!(define("GDS_FILTER_MAX_PATH"), MAX_PATH as u64);
    assert_eq!(define("GDS_FILTER_COLUMN_WORDS"), COLUMN_WORDS as u64);
    assert_eq!(define("GDS_FILTER_BLOCK"), u64::from(FILTER_BLOCK));
    for (name, code) in [
        ("TRUE", step::TRUE),
        ("FALSE", step::FALSE),
        ("CMP", step::CMP),
        ("IS_NULL", step::IS_NULL),
        ("STARTS_WITH", step::STARTS_WITH),
        ("VALID_TRUE", step::VALID_TRUE),
        ("VALID_FALSE", step::VALID_FALSE),
        ("AND", step::AND),
        ("OR", step::OR),
        ("NOT", step::NOT),
        ("CMP_COLUMN", step::CMP_COLUMN),
        ("LIKE", step::LIKE),
    ] {
        assert_eq!(define(&format!("GDS_FILTER_STEP_{name}")), u64::from(code));
    }
    for (name, kind) in [
        ("SIGNED", ValueKind::Signed),
        ("UNSIGNED", ValueKind::Unsigned),
        ("FLOAT", ValueKind::Float),
        ("BOOL", ValueKind::Bool),
        ("VIEW", ValueKind::View),
        ("OPAQUE", ValueKind::Opaque),
        ("NULL", ValueKind::Null),
    ] {
        assert_eq!(define(&format!("GDS_FILTER_KIND_{name}")), kind as u64);
    }
    for (name, op) in [
        ("EQ", Op::Eq),
        ("NE", Op::NotEq),
        ("LT", Op::Lt),
        ("LE", Op::LtEq),
        ("GT", Op::Gt),
        ("GE", Op::GtEq),
    ] {
        assert_eq!(
            define(&format!("GDS_FILTER_OP_{name}")),
            u64::from(op_code(op))
        );
    }
}

/// Every type the decoder outputs, one column each, named after it.
fn every_type() -> Vec<(DataType, Option<Literal>)> {
    use DataType::*;
    vec![
        (Int8, Some(Literal::Int(1))),
        (Int16, Some(Literal::Int(1))),
        (Int32, Some(Literal::Int(1))),
        (Int64, Some(Literal::Int(1))),
        (UInt8, Some(Literal::Int(1))),
        (UInt16, Some(Literal::Int(1))),
        (UInt32, Some(Literal::Int(1))),
        (UInt64, Some(Literal::Int(1))),
        (Float16, None),
        (Float32, Some(Literal::Float(1.5))),
        (
            Float64,
            Some(Literal::Decimal {
                digits: 15,
                scale: 1,
            }),
        ),
        (
            Decimal128(20, 2),
            Some(Literal::Decimal {
                digits: 15,
                scale: 1,
            }),
        ),
        (Decimal256(40, 2), None),
        (Date32, Some(Literal::Date(10))),
        (Time32(TimeUnit::Millisecond), None),
        (Time64(TimeUnit::Nanosecond), None),
        (
            Timestamp(TimeUnit::Second, None),
            Some(Literal::Timestamp(1)),
        ),
        (
            Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Some(Literal::Date(3)),
        ),
        (Boolean, Some(Literal::Bool(true))),
        (Utf8View, Some(Literal::Str("abc".into()))),
        (BinaryView, Some(Literal::Binary(vec![0, 255]))),
        (FixedSizeBinary(3), None),
        (Interval(IntervalUnit::DayTime), None),
        (Null, None),
    ]
}

fn schema_of(types: &[(DataType, Option<Literal>)]) -> SchemaRef {
    let fields: Vec<Field> = types
        .iter()
        .enumerate()
        .map(|(i, (t, _))| Field::new(format!("c{i}"), t.clone(), true))
        .collect();
    Arc::new(Schema::new(fields))
}

#[test]
fn every_column_type_gets_a_program() {
    let types = every_type();
    let schema = schema_of(&types);
    for (i, (t, lit)) in types.iter().enumerate() {
        let name = format!("c{i}");
        let p = GpuPredicate::compile(&Predicate::term(&name, Test::IsNull).negate(), &schema)
            .unwrap_or_else(|e| panic!("{t}: {e}"));
        assert_eq!(p.columns(), [i]);
        assert_eq!(p.steps(), 2);
        match lit {
            Some(lit) => {
                for op in [Op::Eq, Op::NotEq, Op::Lt, Op::LtEq, Op::Gt, Op::GtEq] {
                    let p = GpuPredicate::compile(&Predicate::cmp(&name, op, lit.clone()), &schema)
                        .unwrap_or_else(|e| panic!("{t} {op}: {e}"));
                    assert_eq!(p.steps(), 1);
                }
            }
            // The host evaluator has no comparison on these either: the
            // same typed error.
            None => {
                let e =
                    GpuPredicate::compile(&Predicate::cmp(&name, Op::Eq, Literal::Int(1)), &schema)
                        .unwrap_err();
                assert!(
                    matches!(&e, FilterError::Predicate(PredicateError::Type { column, .. }) if *column == name),
                    "{t}: {e}"
                );
            }
        }
    }
}

#[test]
fn steps_and_literals_are_laid_out_for_the_kernel() {
    let schema: SchemaRef = Arc::new(Schema::new(vec![
        Field::new("a", DataType::Int16, true),
        Field::new("s", DataType::Utf8View, true),
    ]));
    let p = Predicate::And(vec![
        Predicate::term("a", Test::In(vec![Literal::Int(3), Literal::Int(-2)])),
        Predicate::term("s", Test::StartsWith("ab".into())),
        Predicate::cmp("a", Op::Lt, Literal::Int(100_000)),
    ]);
    let g = GpuPredicate::compile(&p, &schema).unwrap();
    assert_eq!(g.columns(), [0, 1]);
    let words: Vec<u32> = g
        .program_le()
        .chunks(4)
        .map(|c| u32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    // IN first (it needs two values of the stack), then LIKE, AND, the
    // comparison every Int16 passes, AND.
    let eq = step::CMP | op_code(Op::Eq) << 8;
    assert_eq!(
        words,
        [
            eq,
            0,
            0,
            2,
            eq,
            0,
            2,
            2,
            step::OR,
            0,
            0,
            0,
            step::STARTS_WITH | 1 << 8,
            1,
            4,
            2,
            step::AND,
            0,
            0,
            0,
            step::VALID_TRUE,
            0,
            0,
            0,
            step::AND,
            0,
            0,
            0
        ]
    );
    assert_eq!(g.literals(), [3, 0, 0xfe, 0xff, b'a', b'b']);
    assert_eq!(g.stack_depth(), 2);
}

#[test]
fn unsupported_parts_are_typed_errors_naming_the_term() {
    let schema: SchemaRef = Arc::new(Schema::new(vec![
        Field::new("u", DataType::Utf8, true),
        Field::new("i", DataType::Int32, true),
    ]));
    let e = GpuPredicate::compile(
        &Predicate::And(vec![
            Predicate::cmp("i", Op::Eq, Literal::Int(1)),
            Predicate::cmp("u", Op::Eq, Literal::Str("x".into())),
        ]),
        &schema,
    )
    .unwrap_err();
    match e {
        FilterError::Unsupported { part, .. } => assert_eq!(part, "u = 'x'"),
        e => panic!("{e}"),
    }
    let e = GpuPredicate::compile(&Predicate::term("u", Test::StartsWith("x".into())), &schema)
        .unwrap_err();
    assert!(
        matches!(&e, FilterError::Unsupported { part, .. } if part.contains("LIKE")),
        "{e}"
    );
    // IS NULL reads only the validity: fine on any column.
    GpuPredicate::compile(&Predicate::term("u", Test::IsNull), &schema).unwrap();
    let e = GpuPredicate::compile(&Predicate::term("i", Test::StartsWith("x".into())), &schema)
        .unwrap_err();
    assert!(
        matches!(e, FilterError::Predicate(PredicateError::Type { .. })),
        "{e}"
    );
    let e = GpuPredicate::compile(&Predicate::cmp("nope", Op::Eq, Literal::Int(1)), &schema)
        .unwrap_err();
    assert!(matches!(e, FilterError::Predicate(PredicateError::UnknownColumn(c)) if c == "nope"));
}

#[test]
fn struct_paths_resolve_and_deep_ones_are_refused() {
    let leaf = Field::new("x", DataType::Int64, true);
    let mut dt = DataType::Struct(Fields::from(vec![leaf]));
    let mut path = "x".to_string();
    for depth in 1..=MAX_PATH + 1 {
        let schema: SchemaRef = Arc::new(Schema::new(vec![Field::new("s", dt.clone(), true)]));
        let name = format!("s.{path}");
        let r = GpuPredicate::compile(&Predicate::cmp(&name, Op::Gt, Literal::Int(0)), &schema);
        if depth < MAX_PATH {
            assert_eq!(r.unwrap().columns(), [0], "{name}");
        } else {
            assert!(
                matches!(&r, Err(FilterError::Unsupported { part, .. }) if part.contains(&name)),
                "{name}: {r:?}"
            );
        }
        dt = DataType::Struct(Fields::from(vec![Field::new("t", dt, true)]));
        path = format!("t.{path}");
    }
}

#[test]
fn deep_trees_stay_within_the_stack_or_are_refused() {
    let schema: SchemaRef = Arc::new(Schema::new(vec![Field::new("a", DataType::Int32, true)]));
    let leaf = |k: i128| Predicate::cmp("a", Op::Gt, Literal::Int(k));
    // Chains of any length, nested either way, need two values.
    let mut right = leaf(0);
    let mut left = leaf(0);
    for k in 1..80 {
        right = Predicate::And(vec![leaf(k), Predicate::Or(vec![leaf(k), right]).negate()]);
        left = Predicate::Or(vec![Predicate::And(vec![left, leaf(k)]), leaf(k)]);
    }
    for p in [right, left] {
        let g = GpuPredicate::compile(&p, &schema).unwrap();
        assert!(g.stack_depth() <= 2, "{}", g.stack_depth());
    }
    // A balanced tree of depth d needs d + 1 values.
    fn balanced(d: usize, leaf: &dyn Fn(i128) -> Predicate) -> Predicate {
        if d == 0 {
            return leaf(d as i128);
        }
        let c = || balanced(d - 1, leaf);
        if d % 2 == 0 {
            Predicate::And(vec![c(), c()])
        } else {
            Predicate::Or(vec![c(), c()])
        }
    }
    let g = GpuPredicate::compile(&balanced(12, &leaf), &schema).unwrap();
    assert_eq!(g.stack_depth(), 13);
    assert!(g.stack_depth() <= STACK_DEPTH);
    // Nesting past the limit is refused, not a stack overflow.
    let mut deep = leaf(0);
    for _ in 0..MAX_NESTING + 5 {
        deep = deep.negate();
    }
    let e = GpuPredicate::compile(&deep, &schema).unwrap_err();
    assert!(matches!(e, FilterError::Unsupported { .. }), "{e}");
}

#[test]
fn the_column_table_follows_struct_and_child_offsets() {
    use crate::decode::array::{DeviceBatch, DeviceBytes, DeviceColumn, MemoryLocation};
    let fields = Fields::from(vec![Field::new("x", DataType::Int32, true)]);
    let schema: SchemaRef = Arc::new(Schema::new(vec![Field::new(
        "s",
        DataType::Struct(fields.clone()),
        true,
    )]));
    // The child's rows start 1 value into its buffers, the struct's 2 rows
    // into the child's: row 0 of `s.x` is value 3 and bit 3 of the
    // child's bitmap, bit 2 of the struct's.
    let child = DeviceColumn::with_offset(
        DataType::Int32,
        1,
        6,
        None,
        Some(DeviceBytes::host(&[0xff])),
        vec![DeviceBytes::host(&[0u8; 28])],
    )
    .unwrap();
    let s = DeviceColumn::with_children_at(
        DataType::Struct(fields),
        2,
        4,
        None,
        Some(DeviceBytes::host(&[0xff])),
        vec![],
        vec![child],
    )
    .unwrap();
    let batch =
        DeviceBatch::try_new(schema.clone(), 4, vec![s], MemoryLocation::CPU, None).unwrap();
    let g =
        GpuPredicate::compile(&Predicate::cmp("s.x", Op::Eq, Literal::Int(1)), &schema).unwrap();
    let table = g.table(&batch).unwrap();
    let slot = &table.columns[0];
    assert_eq!(slot.value_offset, 3);
    assert_eq!(
        slot.validity
            .iter()
            .map(|v| v.bit_offset)
            .collect::<Vec<_>>(),
        [2, 3]
    );
    assert_eq!(slot.kind, ValueKind::Signed as u32);
    assert_eq!(slot.width, 4);
    assert_eq!(slot.values_len, 28);
    assert_eq!(table.column_bytes().len(), 8 * COLUMN_WORDS);
    // Another schema is refused.
    let other: SchemaRef = Arc::new(Schema::new(vec![Field::new("s", DataType::Int32, true)]));
    let int = DeviceColumn::new(
        DataType::Int32,
        4,
        None,
        None,
        vec![DeviceBytes::host(&[0u8; 16])],
    )
    .unwrap();
    let batch = DeviceBatch::try_new(other, 4, vec![int], MemoryLocation::CPU, None).unwrap();
    assert!(matches!(g.table(&batch), Err(FilterError::Batch(_))));
}
