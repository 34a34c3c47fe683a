//! Random arrow arrays of every type device batches hold (fixed width of
//! every size, booleans, views, offsets and bytes, Null, lists, maps,
//! fixed-size lists and structs nested in each other), nulls at every
//! nullable level: the inputs of the compaction tests (this crate's CPU
//! emulation, and `cli/tests/gpu/compact.rs` on the GPU).

use std::sync::Arc;

use arrow::array::{
    make_array, Array, ArrayDataBuilder, ArrayRef, BinaryArray, BinaryViewArray, BooleanArray,
    FixedSizeListArray, Float64Array, LargeBinaryArray, LargeListArray, LargeStringArray,
    ListArray, MapArray, NullArray, StringArray, StringViewArray, StructArray,
};
use arrow::buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer};
use arrow::datatypes::{DataType, Field, Fields, IntervalUnit, TimeUnit};

/// A xorshift generator.
pub struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    /// True `percent` times in 100.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

fn field(name: &str, data_type: DataType, nullable: bool) -> Field {
    Field::new(name, data_type, nullable)
}

/// The fields of the tests' batches: every type, nested ones included.
pub fn every_field() -> Vec<Field> {
    let item = |t: DataType| Arc::new(field("item", t, true));
    let entries = Fields::from(vec![
        field("key", DataType::Utf8View, false),
        field("value", DataType::Int64, true),
    ]);
    let pair = Fields::from(vec![
        field("a", DataType::Int16, true),
        field("b", DataType::List(item(DataType::Boolean)), true),
    ]);
    let inner = Fields::from(vec![field("w", DataType::Boolean, true)]);
    let deep = Fields::from(vec![
        field("x", DataType::Float64, true),
        field("y", DataType::FixedSizeBinary(5), false),
        field("z", DataType::Struct(inner), true),
        field(
            "v",
            DataType::FixedSizeList(item(DataType::Utf8View), 2),
            true,
        ),
    ]);
    vec![
        field("i8", DataType::Int8, true),
        field("i16", DataType::Int16, true),
        field("i32", DataType::Int32, false),
        field("i64", DataType::Int64, true),
        field("f64", DataType::Float64, true),
        field("date", DataType::Date32, true),
        field(
            "ts",
            DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            true,
        ),
        field("dec128", DataType::Decimal128(38, 4), true),
        field("dec256", DataType::Decimal256(50, 2), true),
        field(
            "interval",
            DataType::Interval(IntervalUnit::MonthDayNano),
            true,
        ),
        field("fsb3", DataType::FixedSizeBinary(3), true),
        field("fsb16", DataType::FixedSizeBinary(16), true),
        field("bool", DataType::Boolean, true),
        field("utf8view", DataType::Utf8View, true),
        field("binview", DataType::BinaryView, true),
        field("utf8", DataType::Utf8, true),
        field("largebin", DataType::LargeBinary, true),
        field("null", DataType::Null, true),
        field("list_i32", DataType::List(item(DataType::Int32)), true),
        field(
            "large_list_str",
            DataType::LargeList(item(DataType::Utf8View)),
            true,
        ),
        field(
            "list_struct",
            DataType::List(item(DataType::Struct(pair))),
            true,
        ),
        field(
            "list_list",
            DataType::List(item(DataType::List(item(DataType::Int8)))),
            true,
        ),
        field(
            "map",
            DataType::Map(
                Arc::new(field("entries", DataType::Struct(entries), false)),
                false,
            ),
            true,
        ),
        field(
            "fixed_list",
            DataType::FixedSizeList(item(DataType::Int32), 3),
            true,
        ),
        field("deep", DataType::Struct(deep), true),
    ]
}

/// A validity of `len` rows: none (sometimes, and always when not
/// `nullable`), all null (sometimes), else about one null in five.
fn nulls(rng: &mut Rng, len: usize, nullable: bool) -> Option<NullBuffer> {
    if !nullable || rng.chance(20) {
        return None;
    }
    let all_null = rng.chance(5);
    let bits: Vec<bool> = (0..len).map(|_| !all_null && !rng.chance(20)).collect();
    Some(NullBuffer::from(bits))
}

fn text(rng: &mut Rng) -> String {
    // Past 12 bytes a view points into a data buffer.
    let len = if rng.chance(50) {
        rng.below(12)
    } else {
        12 + rng.below(20)
    };
    (0..len)
        .map(|_| (b'a' + rng.below(26) as u8) as char)
        .collect()
}

/// `value`, or `None` where `nulls` says row `i` is null.
fn optional<T>(nulls: &Option<NullBuffer>, i: usize, value: T) -> Option<T> {
    match nulls {
        Some(n) if n.is_null(i) => None,
        _ => Some(value),
    }
}

/// `len` list lengths of 0 to 4.
fn lengths(rng: &mut Rng, len: usize) -> Vec<usize> {
    (0..len).map(|_| rng.below(5) as usize).collect()
}

/// A random array of `data_type`, `len` rows.
pub fn random_array(rng: &mut Rng, data_type: &DataType, len: usize, nullable: bool) -> ArrayRef {
    let n = nulls(rng, len, nullable);
    match data_type {
        DataType::Null => Arc::new(NullArray::new(len)),
        DataType::Boolean => {
            let bits: Vec<bool> = (0..len).map(|_| rng.chance(50)).collect();
            Arc::new(BooleanArray::new(BooleanBuffer::from(bits), n))
        }
        DataType::Float64 => {
            let v: Vec<f64> = (0..len).map(|_| rng.below(1000) as f64 / 8.0).collect();
            Arc::new(Float64Array::new(v.into(), n))
        }
        DataType::Utf8View | DataType::Utf8 | DataType::LargeUtf8 => {
            let values: Vec<Option<String>> = (0..len)
                .map(|i| {
                    let t = text(rng);
                    optional(&n, i, t)
                })
                .collect();
            match data_type {
                DataType::Utf8View => Arc::new(StringViewArray::from_iter(values)),
                DataType::Utf8 => Arc::new(StringArray::from(values)),
                _ => Arc::new(LargeStringArray::from(values)),
            }
        }
        DataType::BinaryView | DataType::Binary | DataType::LargeBinary => {
            let values: Vec<Option<Vec<u8>>> = (0..len)
                .map(|i| {
                    let t = text(rng).into_bytes();
                    optional(&n, i, t)
                })
                .collect();
            let refs: Vec<Option<&[u8]>> = values.iter().map(|v| v.as_deref()).collect();
            match data_type {
                DataType::BinaryView => Arc::new(BinaryViewArray::from_iter(refs)),
                DataType::Binary => Arc::new(BinaryArray::from_opt_vec(refs)),
                _ => Arc::new(LargeBinaryArray::from_opt_vec(refs)),
            }
        }
        DataType::List(f) | DataType::LargeList(f) | DataType::Map(f, _) => {
            let lens = lengths(rng, len);
            let child = random_array(rng, f.data_type(), lens.iter().sum(), f.is_nullable());
            match data_type {
                DataType::List(_) => Arc::new(
                    ListArray::try_new(f.clone(), OffsetBuffer::from_lengths(lens), child, n)
                        .unwrap(),
                ),
                DataType::LargeList(_) => Arc::new(
                    LargeListArray::try_new(f.clone(), OffsetBuffer::from_lengths(lens), child, n)
                        .unwrap(),
                ),
                _ => {
                    let entries = child
                        .as_any()
                        .downcast_ref::<StructArray>()
                        .unwrap()
                        .clone();
                    Arc::new(
                        MapArray::try_new(
                            f.clone(),
                            OffsetBuffer::from_lengths(lens),
                            entries,
                            n,
                            false,
                        )
                        .unwrap(),
                    )
                }
            }
        }
        DataType::FixedSizeList(f, size) => {
            let child = random_array(rng, f.data_type(), len * *size as usize, f.is_nullable());
            Arc::new(FixedSizeListArray::try_new(f.clone(), *size, child, n).unwrap())
        }
        DataType::Struct(fields) => {
            let children = fields
                .iter()
                .map(|f| random_array(rng, f.data_type(), len, f.is_nullable()))
                .collect();
            Arc::new(StructArray::try_new(fields.clone(), children, n).unwrap())
        }
        other => {
            let width = match other {
                DataType::FixedSizeBinary(w) => *w as usize,
                _ => other.primitive_width().expect("a fixed-width type"),
            };
            let decimal = matches!(other, DataType::Decimal128(..) | DataType::Decimal256(..));
            let mut bytes: Vec<u8> = (0..len * width).map(|_| rng.next() as u8).collect();
            if decimal {
                // Small values: inside every precision.
                for (i, b) in bytes.iter_mut().enumerate() {
                    if i % width >= 4 {
                        *b = 0;
                    }
                }
            }
            let data = ArrayDataBuilder::new(other.clone())
                .len(len)
                .add_buffer(Buffer::from_slice_ref(&bytes))
                .nulls(n)
                .build()
                .unwrap();
            make_array(data)
        }
    }
}

/// A mask of `len` rows, by kind: 0 none, 1 all, 2 one row, 3 random, 4
/// runs; kept rows get any byte but 0.
pub fn random_mask(rng: &mut Rng, len: usize, kind: u32) -> Vec<u8> {
    let one = rng.below(len as u64) as usize;
    let mut on = false;
    let mut run = 0u64;
    (0..len)
        .map(|i| {
            if run == 0 {
                on = !on;
                run = 1 + rng.below(40);
            }
            run -= 1;
            let keep = match kind {
                0 => false,
                1 => true,
                2 => i == one,
                3 => rng.chance(50),
                _ => on,
            };
            if keep {
                1 + rng.below(255) as u8
            } else {
                0
            }
        })
        .collect()
}
