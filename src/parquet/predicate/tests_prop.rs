//! A property test: random predicate trees over a random file (NULLs, NaN,
//! decimals, strings, binary, dates, timestamps, booleans) evaluate as
//! arrow-rs's kernels say, and pruning never rules out a row group or page
//! holding a selected row.

use std::sync::Arc;

use ::arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Float64Array,
    Int32Array, Scalar, StringArray, TimestampMicrosecondArray,
};
use ::arrow::buffer::{BooleanBuffer, NullBuffer};
use ::arrow::compute::is_null;
use ::arrow::compute::kernels::boolean::{and_kleene, not, or_kleene};
use ::arrow::compute::kernels::cmp;
use ::arrow::compute::kernels::comparison::{like, starts_with};
use ::arrow::datatypes::{Field, Schema};
use ::arrow::record_batch::RecordBatch;
use ::parquet::file::metadata::ParquetMetaData;

use super::ast::*;
use super::like::like_test;
use super::tests::{page_ranges, row_group_ranges, write_parquet_with};

const ROWS: usize = 800;
const RG_ROWS: usize = 200;
const PAGE_ROWS: usize = 20;
const COLUMNS: [&str; 8] = ["i", "dec", "f", "s", "dt", "ts", "bl", "bin"];

/// splitmix64: a small seeded generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

/// Rows roughly sorted by row number (so that statistics prune), with NULLs.
fn random_batch(rng: &mut Rng) -> RecordBatch {
    let nul = |rng: &mut Rng, p| !rng.chance(p);
    let letters = |rng: &mut Rng, first: u8, n: usize| {
        let mut v = vec![first];
        v.extend((0..n).map(|_| b'a' + rng.below(3) as u8));
        v
    };
    let (mut i, mut dec, mut f, mut s, mut dt) = (vec![], vec![], vec![], vec![], vec![]);
    let (mut ts, mut bl, mut bin) = (vec![], vec![], vec![]);
    for row in 0..ROWS {
        let noise = rng.below(20) as i64 - 10;
        i.push(nul(rng, 10).then_some((row / 4) as i32 + noise as i32));
        dec.push(nul(rng, 10).then_some(row as i128 * 7 + rng.below(500) as i128 - 250));
        let x = match rng.below(100) {
            0..=2 => f64::NAN,
            3 => f64::INFINITY,
            4 => 0.0,
            _ => row as f64 * 0.5 + rng.below(100) as f64 / 100.0,
        };
        f.push(nul(rng, 8).then_some(x));
        let first = b'a' + (row * 4 / ROWS) as u8;
        let n = rng.below(4);
        let word = letters(rng, first, n);
        s.push(nul(rng, 10).then(|| String::from_utf8(word).unwrap()));
        dt.push(nul(rng, 10).then_some(8000 + (row / 3) as i32 + rng.below(5) as i32));
        let micros = 1_600_000_000_000_000 + row as i64 * 1_000_000 + rng.below(2_000_000) as i64;
        ts.push(nul(rng, 10).then_some(micros));
        bl.push(nul(rng, 10).then_some(row % 200 < 120 || rng.chance(30)));
        let n = rng.below(3);
        let word = letters(rng, b'a' + (row * 3 / ROWS) as u8, n);
        bin.push(nul(rng, 10).then_some(word));
    }
    let columns: Vec<ArrayRef> = vec![
        Arc::new(Int32Array::from(i)),
        Arc::new(
            Decimal128Array::from(dec)
                .with_precision_and_scale(9, 2)
                .unwrap(),
        ),
        Arc::new(Float64Array::from(f)),
        Arc::new(StringArray::from(s)),
        Arc::new(Date32Array::from(dt)),
        Arc::new(TimestampMicrosecondArray::from(ts)),
        Arc::new(BooleanArray::from(bl)),
        Arc::new(BinaryArray::from_iter(bin)),
    ];
    let fields: Vec<Field> = COLUMNS
        .iter()
        .zip(&columns)
        .map(|(n, c)| Field::new(*n, c.data_type().clone(), true))
        .collect();
    RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap()
}

fn write(batch: &RecordBatch) -> ParquetMetaData {
    write_parquet_with(batch, RG_ROWS, PAGE_ROWS)
}

/// A literal from a random row of the column (another row if NULL or NaN).
fn literal(batch: &RecordBatch, c: usize, rng: &mut Rng) -> Literal {
    let col = batch.column(c);
    for _ in 0..100 {
        let r = rng.below(ROWS);
        if col.is_null(r) {
            continue;
        }
        let lit = match c {
            0 => Literal::Int(
                col.as_any()
                    .downcast_ref::<Int32Array>()
                    .unwrap()
                    .value(r)
                    .into(),
            ),
            1 => Literal::Decimal {
                digits: col
                    .as_any()
                    .downcast_ref::<Decimal128Array>()
                    .unwrap()
                    .value(r),
                scale: 2,
            },
            2 => {
                let v = col
                    .as_any()
                    .downcast_ref::<Float64Array>()
                    .unwrap()
                    .value(r);
                if v.is_nan() {
                    continue;
                }
                Literal::Float(v)
            }
            3 => Literal::Str(
                col.as_any()
                    .downcast_ref::<StringArray>()
                    .unwrap()
                    .value(r)
                    .into(),
            ),
            4 => Literal::Date(col.as_any().downcast_ref::<Date32Array>().unwrap().value(r)),
            5 => {
                let a = col.as_any().downcast_ref::<TimestampMicrosecondArray>();
                Literal::Timestamp(i128::from(a.unwrap().value(r)) * 1000)
            }
            6 => Literal::Bool(
                col.as_any()
                    .downcast_ref::<BooleanArray>()
                    .unwrap()
                    .value(r),
            ),
            _ => Literal::Binary(
                col.as_any()
                    .downcast_ref::<BinaryArray>()
                    .unwrap()
                    .value(r)
                    .to_vec(),
            ),
        };
        return lit;
    }
    panic!("column {c} has no value");
}

/// The literal as a one-value array of column `c`'s type (literals come
/// from the column, so no rescaling is involved).
fn scalar(c: usize, lit: &Literal) -> Scalar<ArrayRef> {
    let a: ArrayRef = match (c, lit) {
        (0, Literal::Int(v)) => Arc::new(Int32Array::from(vec![*v as i32])),
        (1, Literal::Decimal { digits, .. }) => Arc::new(
            Decimal128Array::from(vec![*digits])
                .with_precision_and_scale(9, 2)
                .unwrap(),
        ),
        (2, Literal::Float(v)) => Arc::new(Float64Array::from(vec![*v])),
        (3, Literal::Str(s)) => Arc::new(StringArray::from(vec![s.as_str()])),
        (4, Literal::Date(d)) => Arc::new(Date32Array::from(vec![*d])),
        (5, Literal::Timestamp(n)) => {
            Arc::new(TimestampMicrosecondArray::from(vec![(*n / 1000) as i64]))
        }
        (6, Literal::Bool(b)) => Arc::new(BooleanArray::from(vec![*b])),
        (7, Literal::Binary(b)) => Arc::new(BinaryArray::from(vec![b.as_slice()])),
        other => panic!("no scalar for {other:?}"),
    };
    Scalar::new(a)
}

fn random_term(batch: &RecordBatch, rng: &mut Rng) -> Predicate {
    let c = rng.below(COLUMNS.len());
    let column = COLUMNS[c];
    let ops = [Op::Eq, Op::NotEq, Op::Lt, Op::LtEq, Op::Gt, Op::GtEq];
    let choices = match c {
        3 => 7,
        7 => 6,
        _ => 5,
    };
    let test = match rng.below(choices) {
        0 | 1 => Test::Cmp(ops[rng.below(6)], literal(batch, c, rng)),
        2 => Test::Between(literal(batch, c, rng), literal(batch, c, rng)),
        3 => Test::In(
            (0..1 + rng.below(3))
                .map(|_| literal(batch, c, rng))
                .collect(),
        ),
        4 => Test::IsNull,
        6 => match literal(batch, c, rng) {
            // The parser's form: a plain prefix and '%' is StartsWith.
            Literal::Str(s) => like_test(&random_pattern(&s, rng)).unwrap(),
            other => panic!("{other:?}"),
        },
        _ => {
            let prefix: String = match literal(batch, c, rng) {
                Literal::Str(s) => s,
                Literal::Binary(b) => String::from_utf8(b).unwrap(),
                other => panic!("{other:?}"),
            };
            let keep = rng.below(prefix.len() + 1);
            Test::StartsWith(prefix[..keep].to_string())
        }
    };
    Predicate::term(column, test)
}

/// A LIKE pattern made from `value`: characters kept (escaped where they
/// are wildcards), turned into `_`, or runs of them into `%`.
fn random_pattern(value: &str, rng: &mut Rng) -> String {
    let mut out = String::new();
    if rng.chance(30) {
        out.push('%');
    }
    for ch in value.chars() {
        match rng.below(10) {
            0 | 1 => out.push('_'),
            2 => out.push('%'),
            3 => {}
            _ => {
                if matches!(ch, '%' | '_' | '\\') {
                    out.push('\\');
                }
                out.push(ch);
            }
        }
    }
    if rng.chance(30) {
        out.push('%');
    }
    out
}

fn random_tree(batch: &RecordBatch, rng: &mut Rng, depth: usize) -> Predicate {
    let node = if depth == 0 || rng.chance(35) {
        random_term(batch, rng)
    } else {
        let parts = (0..2 + rng.below(2))
            .map(|_| random_tree(batch, rng, depth - 1))
            .collect();
        if rng.chance(50) {
            Predicate::And(parts)
        } else {
            Predicate::Or(parts)
        }
    };
    if rng.chance(25) {
        node.negate()
    } else {
        node
    }
}

/// IEEE 754 for NaN (arrow-rs orders NaN above every number): FALSE for
/// every comparison but `!=`, TRUE for `!=`.
fn ieee(col: &ArrayRef, r: BooleanArray, neq: bool) -> BooleanArray {
    let Some(f) = col.as_any().downcast_ref::<Float64Array>() else {
        return r;
    };
    let values = (0..r.len())
        .map(|i| {
            let nan = f.is_valid(i) && f.value(i).is_nan();
            if nan {
                neq
            } else {
                r.values().value(i)
            }
        })
        .collect::<BooleanBuffer>();
    BooleanArray::new(values, r.nulls().cloned())
}

fn reference_cmp(col: &ArrayRef, c: usize, op: Op, lit: &Literal) -> BooleanArray {
    let s = scalar(c, lit);
    let r = match op {
        Op::Eq => cmp::eq(col, &s),
        Op::NotEq => cmp::neq(col, &s),
        Op::Lt => cmp::lt(col, &s),
        Op::LtEq => cmp::lt_eq(col, &s),
        Op::Gt => cmp::gt(col, &s),
        Op::GtEq => cmp::gt_eq(col, &s),
    };
    ieee(col, r.unwrap(), op == Op::NotEq)
}

/// Three-valued reference evaluation with arrow-rs's kernels.
fn reference(p: &Predicate, batch: &RecordBatch) -> BooleanArray {
    match p {
        Predicate::Term(t) => {
            let c = COLUMNS.iter().position(|n| *n == t.column).unwrap();
            let col = batch.column(c);
            match &t.test {
                Test::Cmp(op, lit) => reference_cmp(col, c, *op, lit),
                Test::Between(lo, hi) => and_kleene(
                    &reference_cmp(col, c, Op::GtEq, lo),
                    &reference_cmp(col, c, Op::LtEq, hi),
                )
                .unwrap(),
                Test::In(vs) => vs
                    .iter()
                    .map(|v| reference_cmp(col, c, Op::Eq, v))
                    .reduce(|a, b| or_kleene(&a, &b).unwrap())
                    .unwrap(),
                Test::IsNull => is_null(col).unwrap(),
                Test::Like(pattern) => {
                    let s: ArrayRef = Arc::new(StringArray::from(vec![pattern.as_str()]));
                    like(col, &Scalar::new(s)).unwrap()
                }
                Test::StartsWith(prefix) => {
                    let s: ArrayRef = if c == 3 {
                        Arc::new(StringArray::from(vec![prefix.as_str()]))
                    } else {
                        Arc::new(BinaryArray::from(vec![prefix.as_bytes()]))
                    };
                    starts_with(col, &Scalar::new(s)).unwrap()
                }
                // The property test generates no column comparison
                // (tests_columns.rs covers them).
                Test::CmpColumn(..) => unreachable!("not generated"),
            }
        }
        Predicate::Not(inner) => not(&reference(inner, batch)).unwrap(),
        Predicate::And(cs) => cs
            .iter()
            .map(|c| reference(c, batch))
            .reduce(|a, b| and_kleene(&a, &b).unwrap())
            .unwrap(),
        Predicate::Or(cs) => cs
            .iter()
            .map(|c| reference(c, batch))
            .reduce(|a, b| or_kleene(&a, &b).unwrap())
            .unwrap(),
    }
}

/// The rows the reference selects (TRUE, not NULL).
fn selected(p: &Predicate, batch: &RecordBatch) -> Vec<bool> {
    let r = reference(p, batch);
    let nulls = r
        .nulls()
        .cloned()
        .unwrap_or_else(|| NullBuffer::new_valid(r.len()));
    (0..r.len())
        .map(|i| nulls.is_valid(i) && r.value(i))
        .collect()
}

#[test]
fn random_trees_match_arrow_kernels_and_prune_soundly() {
    let mut rng = Rng(0x5EED_2026);
    let batch = random_batch(&mut rng);
    let meta = write(&batch);
    let schema = meta.file_metadata().schema_descr();
    let rgs = row_group_ranges(&meta);
    assert_eq!(rgs.len(), ROWS / RG_ROWS);
    let (mut rg_pruned, mut pages_pruned, mut some_selected) = (0, 0, 0);
    for n in 0..600 {
        let tree = random_tree(&batch, &mut rng, 3);
        assert_eq!(tree.validate(schema), Ok(()), "{tree}");
        assert_eq!(
            tree.to_string().parse::<Predicate>().as_ref(),
            Ok(&tree),
            "{n}: {tree}"
        );
        let want = selected(&tree, &batch);
        let got: Vec<bool> = tree
            .evaluate(&batch)
            .unwrap()
            .iter()
            .map(|v| v.unwrap())
            .collect();
        assert_eq!(got, want, "{n}: {tree}");
        some_selected += usize::from(want.iter().any(|s| *s));
        for (rg, &(start, len)) in rgs.iter().enumerate() {
            let rg_meta = meta.row_group(rg);
            let any = want[start..start + len].iter().any(|s| *s);
            if !tree.row_group_may_match(rg_meta) {
                assert!(
                    !any,
                    "{n}: {tree}: row group {rg} pruned but has a selected row"
                );
                rg_pruned += 1;
            }
            for leaf in 0..COLUMNS.len() {
                let index = &meta.column_index().unwrap()[rg][leaf];
                let Some(pages) = tree.pages_may_match(rg_meta, leaf, index) else {
                    continue;
                };
                for (keep, (a, len)) in pages.into_iter().zip(page_ranges(&meta, rg, leaf)) {
                    if !keep {
                        let rows = &want[start + a..start + a + len];
                        assert!(
                            !rows.iter().any(|s| *s),
                            "{n}: {tree}: rg {rg} leaf {leaf} page at {a} pruned"
                        );
                        pages_pruned += 1;
                    }
                }
            }
        }
    }
    // Not vacuous: trees selected rows, and pruning ruled out a fair share.
    assert!(some_selected > 200, "{some_selected}");
    assert!(
        rg_pruned > 100 && pages_pruned > 1000,
        "{rg_pruned} {pages_pruned}"
    );
}
