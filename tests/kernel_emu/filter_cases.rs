//! Random batches and predicates for the GPU filter's tests: every column
//! type the evaluator reads (nulls, NaN, -0.0, infinities, integer
//! extremes, empty, inline and long strings in views, a struct with
//! nulls), and predicate trees over them (comparisons, BETWEEN, IN,
//! IS NULL, LIKE 'prefix%' and other patterns, AND, OR, NOT). Shared by
//! `tests/kernel_emu.rs` (under CPU emulation) and the CLI's GPU tests.

#![allow(dead_code)]

use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryViewArray, BooleanArray, Date32Array, Decimal128Array,
    FixedSizeBinaryArray, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array,
    Int8Array, NullArray, StringViewBuilder, StructArray, Time64MicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, UInt16Array, UInt32Array, UInt64Array,
    UInt8Array,
};
use arrow::buffer::NullBuffer;
use arrow::datatypes::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};
use arrow::record_batch::RecordBatch;
use gdscan::parquet::predicate::{Literal, Op, Test};
use gdscan::parquet::Predicate;

/// A splitmix64 generator.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// True with probability `p` percent.
    pub fn pct(&mut self, p: u64) -> bool {
        self.next() % 100 < p
    }

    pub fn pick<T: Clone>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())].clone()
    }

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + (self.next() % (hi - lo + 1) as u64) as i64
    }
}

const FLOATS: [f64; 9] = [
    -0.0,
    0.0,
    1.5,
    -2.25,
    3.0,
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    1e30,
];

const STRINGS: [&str; 11] = [
    "",
    "a",
    "ab",
    "abc",
    "abd",
    "abcdefghijkl",
    "abcdefghijklm",
    "abcdefghijklmnopqrstuvwxyz, a long one",
    "abcdefghijklmnopqrstuvwxyz, a long two",
    "b",
    "\u{e9}t\u{e9}",
];

const BYTES: [&[u8]; 8] = [
    b"",
    b"\x00",
    b"\xff",
    b"\x80abc",
    b"\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00",
    b"\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6\xf5\xf4\xf3\xf2",
    b"\xff\xfe\xfd\xfc",
    b"abc",
];

/// The test schema: `c0`..`c19` then the struct `s { a: Int32, b: Utf8View }`.
pub fn schema() -> SchemaRef {
    use DataType::*;
    let types = [
        Int8,
        Int16,
        Int32,
        Int64,
        UInt8,
        UInt16,
        UInt32,
        UInt64,
        Float32,
        Float64,
        Decimal128(20, 2),
        Date32,
        Timestamp(TimeUnit::Millisecond, None),
        Timestamp(TimeUnit::Nanosecond, Some("UTC".into())),
        Time64(TimeUnit::Microsecond),
        Boolean,
        Utf8View,
        BinaryView,
        FixedSizeBinary(3),
        Null,
    ];
    let mut fields: Vec<Field> = types
        .iter()
        .enumerate()
        .map(|(i, t)| Field::new(format!("c{i}"), t.clone(), true))
        .collect();
    fields.push(Field::new("s", Struct(struct_fields()), true));
    Arc::new(Schema::new(fields))
}

pub fn struct_fields() -> Fields {
    Fields::from(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("b", DataType::Utf8View, true),
    ])
}

/// Random columns of `rows` rows: the flat ones of [`schema`], then the
/// struct's two children (the struct's own nulls come apart, see
/// [`Columns`]).
pub struct Columns {
    /// `c0`..`c19`, then `s.a` and `s.b`.
    pub arrays: Vec<ArrayRef>,
}

fn opt<T>(rng: &mut Rng, nulls: u64, v: impl FnOnce(&mut Rng) -> T) -> Option<T> {
    if rng.pct(nulls) {
        None
    } else {
        Some(v(rng))
    }
}

fn ints(
    rng: &mut Rng,
    rows: usize,
    nulls: u64,
    lo: i64,
    hi: i64,
    extremes: &[i64],
) -> Vec<Option<i64>> {
    (0..rows)
        .map(|_| {
            opt(rng, nulls, |r| {
                if r.pct(10) {
                    r.pick(extremes)
                } else {
                    r.range(lo, hi)
                }
            })
        })
        .collect()
}

fn views(rng: &mut Rng, rows: usize, nulls: u64, binary: bool) -> ArrayRef {
    if binary {
        let values: Vec<Option<&[u8]>> = (0..rows)
            .map(|_| opt(rng, nulls, |r| r.pick(&BYTES)))
            .collect();
        return Arc::new(BinaryViewArray::from(values));
    }
    // Small blocks: long strings spread over several data buffers.
    let mut b = StringViewBuilder::new().with_fixed_block_size(64);
    for _ in 0..rows {
        match opt(rng, nulls, |r| r.pick(&STRINGS)) {
            Some(s) => b.append_value(s),
            None => b.append_null(),
        }
    }
    Arc::new(b.finish())
}

/// Random columns of `rows` rows.
pub fn columns(rng: &mut Rng, rows: usize) -> Columns {
    let nulls = rng.pick(&[0u64, 10, 40, 100]);
    let mut arrays: Vec<ArrayRef> = Vec::new();
    macro_rules! int_col {
        ($arr:ty, $t:ty, $lo:expr, $hi:expr) => {{
            let ext = [<$t>::MIN as i64, <$t>::MAX as i64, 0];
            let v = ints(rng, rows, nulls, $lo, $hi, &ext);
            Arc::new(<$arr>::from_iter(v.into_iter().map(|x| x.map(|x| x as $t)))) as ArrayRef
        }};
    }
    arrays.push(int_col!(Int8Array, i8, -5, 5));
    arrays.push(int_col!(Int16Array, i16, -5, 5));
    arrays.push(int_col!(Int32Array, i32, -5, 5));
    arrays.push(int_col!(Int64Array, i64, -5, 5));
    arrays.push(int_col!(UInt8Array, u8, 0, 10));
    arrays.push(int_col!(UInt16Array, u16, 0, 10));
    arrays.push(int_col!(UInt32Array, u32, 0, 10));
    let u64s: Vec<Option<u64>> = (0..rows)
        .map(|_| {
            opt(rng, nulls, |r| {
                if r.pct(10) {
                    u64::MAX - r.below(2) as u64
                } else {
                    r.below(11) as u64
                }
            })
        })
        .collect();
    arrays.push(Arc::new(UInt64Array::from(u64s)));
    let f: Vec<Option<f64>> = (0..rows)
        .map(|_| opt(rng, nulls, |r| r.pick(&FLOATS)))
        .collect();
    arrays.push(Arc::new(Float32Array::from_iter(
        f.iter().map(|x| x.map(|x| x as f32)),
    )));
    let f: Vec<Option<f64>> = (0..rows)
        .map(|_| opt(rng, nulls, |r| r.pick(&FLOATS)))
        .collect();
    arrays.push(Arc::new(Float64Array::from(f)));
    let big = 10i128.pow(20) - 1;
    let d: Vec<Option<i128>> = (0..rows)
        .map(|_| {
            opt(rng, nulls, |r| {
                if r.pct(10) {
                    r.pick(&[big, -big])
                } else {
                    r.range(-700, 700) as i128
                }
            })
        })
        .collect();
    arrays.push(Arc::new(
        Decimal128Array::from(d)
            .with_precision_and_scale(20, 2)
            .unwrap(),
    ));
    let v = ints(rng, rows, nulls, -3, 3, &[i32::MIN as i64, i32::MAX as i64]);
    arrays.push(Arc::new(Date32Array::from_iter(
        v.into_iter().map(|x| x.map(|x| x as i32)),
    )));
    let v = ints(rng, rows, nulls, -6, 6, &[i64::MIN, i64::MAX]);
    arrays.push(Arc::new(TimestampMillisecondArray::from_iter(
        v.into_iter()
            .map(|x| x.map(|x| if x.unsigned_abs() < 100 { x * 500 } else { x })),
    )));
    let v = ints(rng, rows, nulls, -5, 5, &[i64::MIN, i64::MAX]);
    arrays.push(Arc::new(
        TimestampNanosecondArray::from(v).with_timezone("UTC"),
    ));
    let v = ints(rng, rows, nulls, 0, 5, &[0]);
    arrays.push(Arc::new(Time64MicrosecondArray::from(v)));
    let b: Vec<Option<bool>> = (0..rows).map(|_| opt(rng, nulls, |r| r.pct(50))).collect();
    arrays.push(Arc::new(BooleanArray::from(b)));
    arrays.push(views(rng, rows, nulls, false));
    arrays.push(views(rng, rows, nulls, true));
    let fsb: Vec<Option<[u8; 3]>> = (0..rows)
        .map(|_| opt(rng, nulls, |r| [r.next() as u8; 3]))
        .collect();
    arrays.push(Arc::new(
        FixedSizeBinaryArray::try_from_sparse_iter_with_size(fsb.into_iter(), 3).unwrap(),
    ));
    arrays.push(Arc::new(NullArray::new(rows)));
    arrays.push(int_col!(Int32Array, i32, -5, 5));
    arrays.push(views(rng, rows, nulls, false));
    Columns { arrays }
}

/// The struct's nulls over `rows` rows.
pub fn struct_nulls(rng: &mut Rng, rows: usize) -> Option<NullBuffer> {
    let p = rng.pick(&[0u64, 20, 60]);
    if p == 0 {
        return None;
    }
    Some(NullBuffer::from_iter((0..rows).map(|_| !rng.pct(p))))
}

/// The batch of rows `offset..offset + rows` of `columns`, the struct
/// with `nulls` (of `rows` rows).
pub fn sliced_batch(
    c: &Columns,
    offset: usize,
    rows: usize,
    nulls: Option<NullBuffer>,
) -> RecordBatch {
    let mut arrays: Vec<ArrayRef> = c.arrays[..20]
        .iter()
        .map(|a| a.slice(offset, rows))
        .collect();
    let children: Vec<ArrayRef> = c.arrays[20..]
        .iter()
        .map(|a| a.slice(offset, rows))
        .collect();
    arrays.push(Arc::new(StructArray::new(struct_fields(), children, nulls)));
    RecordBatch::try_new(schema(), arrays).unwrap()
}

/// A literal for a column of `column`'s values.
fn literal(rng: &mut Rng, column: usize) -> Literal {
    let dec = |r: &mut Rng| Literal::Decimal {
        digits: r.range(-80, 80) as i128,
        scale: r.below(3) as u8,
    };
    match column {
        0..=7 | 20 => match rng.below(10) {
            0 => Literal::Int(rng.pick(&[
                128,
                -129,
                256,
                70000,
                -1,
                i64::MAX as i128,
                u64::MAX as i128,
                1 << 70,
            ])),
            1 | 2 => dec(rng),
            _ => Literal::Int(rng.range(-6, 11) as i128),
        },
        8 | 9 => match rng.below(4) {
            0 => Literal::Int(rng.range(-3, 3) as i128),
            1 => dec(rng),
            _ => Literal::Float(rng.pick(&[
                -0.0,
                0.0,
                1.5,
                -2.25,
                3.0,
                f64::INFINITY,
                f64::NEG_INFINITY,
                1e30,
                1e40,
            ])),
        },
        10 => match rng.below(3) {
            0 => Literal::Int(rng.range(-8, 8) as i128),
            _ => Literal::Decimal {
                digits: rng.range(-8000, 8000) as i128,
                scale: rng.below(4) as u8,
            },
        },
        11 => Literal::Date(rng.range(-4, 4) as i32),
        12 => match rng.below(3) {
            0 => Literal::Date(rng.range(-1, 0) as i32),
            _ => {
                Literal::Timestamp(rng.range(-14, 14) as i128 * 250_000_000 + rng.pick(&[0, 0, 1]))
            }
        },
        13 => Literal::Timestamp(rng.range(-6, 6) as i128),
        15 => Literal::Bool(rng.pct(50)),
        16 | 21 => match rng.below(5) {
            0 => Literal::Binary(rng.pick(&BYTES).to_vec()),
            _ => Literal::Str(rng.pick(&STRINGS).to_string()),
        },
        17 => match rng.below(3) {
            0 => Literal::Str(rng.pick(&STRINGS).to_string()),
            _ => Literal::Binary(rng.pick(&BYTES).to_vec()),
        },
        // Columns without comparisons: the host's error, and compile's.
        _ => Literal::Int(1),
    }
}

/// The name of test column `i` (`s.a`, `s.b` for 20, 21).
pub fn name(i: usize) -> String {
    match i {
        20 => "s.a".to_string(),
        21 => "s.b".to_string(),
        22 => "s".to_string(),
        i => format!("c{i}"),
    }
}

/// A random term.
fn term(rng: &mut Rng) -> Predicate {
    let col = rng.below(23);
    let comparable = !matches!(col, 14 | 18 | 19 | 22) || rng.pct(5);
    let view = matches!(col, 16 | 17 | 21);
    let test = match rng.below(10) {
        _ if !comparable => Test::IsNull,
        0 => Test::IsNull,
        1 if view => Test::StartsWith(
            rng.pick(&[
                "",
                "a",
                "ab",
                "abcdefghijklm",
                "\u{e9}",
                "abcdefghijklmnopqrstuvwxyz, a long",
            ])
            .to_string(),
        ),
        5 if view => Test::Like(
            rng.pick(&[
                "%a%", "a_c%", "%b", "_", "%\u{e9}%", "a%m", "%long", "ab%_%z%", "%%", "\\%%",
                "%_\\_", "a", "", "__%__",
            ])
            .to_string(),
        ),
        2 => Test::Between(literal(rng, col), literal(rng, col)),
        // Two columns of one type (or a column with itself: NaN, NULL).
        4 if rng.pct(50) && !matches!(col, 14 | 18 | 19 | 22) => {
            let op = rng.pick(&[Op::Eq, Op::NotEq, Op::Lt, Op::LtEq, Op::Gt, Op::GtEq]);
            let other = match col {
                2 => 20,
                20 => 2,
                16 => 21,
                21 => 16,
                same => same,
            };
            Test::CmpColumn(op, name(other))
        }
        3 => Test::In((0..1 + rng.below(3)).map(|_| literal(rng, col)).collect()),
        _ => {
            let op = rng.pick(&[Op::Eq, Op::NotEq, Op::Lt, Op::LtEq, Op::Gt, Op::GtEq]);
            Test::Cmp(op, literal(rng, col))
        }
    };
    Predicate::term(name(col), test)
}

/// A random predicate tree at most `depth` deep.
pub fn predicate(rng: &mut Rng, depth: usize) -> Predicate {
    if depth == 0 || rng.pct(35) {
        return term(rng);
    }
    match rng.below(3) {
        0 => Predicate::And(
            (0..rng.below(4))
                .map(|_| predicate(rng, depth - 1))
                .collect(),
        ),
        1 => Predicate::Or(
            (0..rng.below(4))
                .map(|_| predicate(rng, depth - 1))
                .collect(),
        ),
        _ => predicate(rng, depth - 1).negate(),
    }
}
