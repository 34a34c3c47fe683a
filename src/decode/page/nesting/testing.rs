//! Test helpers shared by the nesting tests and the kernel emulation
//! (`tests/kernel_emu.rs`, with the `internals` feature): random nested
//! batches of many shapes written by arrow-rs's writer in several
//! settings, and each leaf's levels and values read back with the parquet
//! crate's column reader. Not an API.
#![allow(missing_docs)]

use std::sync::Arc;

use arrow::array::{
    make_array, Array, ArrayRef, BinaryViewArray, BooleanArray, Decimal128Array,
    FixedSizeListArray, Float32Array, Float64Array, Int32Array, Int64Array, ListArray, MapArray,
    NullArray, RecordBatch, StringArray, StringViewArray, StructArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::compute::cast;
use arrow::datatypes::{DataType, Field, Fields, Schema};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::column::reader::{ColumnReader, ColumnReaderImpl};
use parquet::data_type::DataType as ParquetDataType;
use parquet::file::properties::{WriterProperties, WriterVersion};
use parquet::file::reader::RowGroupReader;

use super::{LeafLevels, LeafNode};

// ----- leaves read with the parquet crate's column reader ------------------

/// One leaf's chunk: its levels and non-null values, read with the
/// parquet crate's low-level column reader.
#[derive(Clone)]
pub struct LeafChunk {
    /// Repetition levels.
    pub rep: Vec<i16>,
    /// Definition levels.
    pub def: Vec<i16>,
    /// Level entries.
    pub entries: usize,
    /// Whether the leaf has repetition levels.
    pub has_rep: bool,
    /// Whether the leaf has definition levels.
    pub has_def: bool,
    /// The non-null values.
    pub values: ArrayRef,
}

impl LeafChunk {
    /// The levels as [`assemble`](super::assemble) takes them.
    pub fn levels(&self) -> LeafLevels<'_> {
        LeafLevels {
            entries: self.entries,
            rep: self.has_rep.then_some(self.rep.as_slice()),
            def: self.has_def.then_some(self.def.as_slice()),
        }
    }
}

/// Reads all the records of a chunk: repetition levels, definition levels,
/// level count, non-null values.
pub fn read_typed<T: ParquetDataType>(
    mut reader: ColumnReaderImpl<T>,
    rows: usize,
) -> (Vec<i16>, Vec<i16>, usize, Vec<T::T>) {
    let (mut rep, mut def, mut values) = (Vec::new(), Vec::new(), Vec::new());
    let (mut records, mut levels) = (0, 0);
    while records < rows {
        let (r, _, l) = reader
            .read_records(rows - records, Some(&mut def), Some(&mut rep), &mut values)
            .unwrap();
        if r == 0 && l == 0 {
            break;
        }
        records += r;
        levels += l;
    }
    assert_eq!(records, rows, "records read");
    (rep, def, levels, values)
}

/// The values as an array of the leaf's Arrow type (the conversions the
/// test files need).
pub fn retype(array: ArrayRef, target: &DataType) -> ArrayRef {
    if array.data_type() == target {
        return array;
    }
    match target {
        DataType::Null => Arc::new(NullArray::new(array.len())),
        DataType::Int8 | DataType::Int16 | DataType::UInt8 | DataType::UInt16 => {
            cast(&array, target).unwrap()
        }
        DataType::Decimal128(p, s) => {
            let wide = cast(&array, &DataType::Int64).unwrap();
            let wide = wide.as_any().downcast_ref::<Int64Array>().unwrap();
            let values = wide.values().iter().map(|&v| i128::from(v));
            Arc::new(
                Decimal128Array::from_iter_values(values)
                    .with_precision_and_scale(*p, *s)
                    .unwrap(),
            )
        }
        // Same width: a reinterpretation (dates, times, timestamps,
        // unsigned integers).
        _ => make_array(
            array
                .to_data()
                .into_builder()
                .data_type(target.clone())
                .build()
                .unwrap(),
        ),
    }
}

pub fn read_leaf(row_group: &dyn RowGroupReader, leaf: &LeafNode, rows: usize) -> LeafChunk {
    let target = &leaf.column_type.data_type;
    let reader = row_group.get_column_reader(leaf.column).unwrap();
    let (rep, def, entries, values): (_, _, _, ArrayRef) = match reader {
        ColumnReader::BoolColumnReader(r) => {
            let (rep, def, n, v) = read_typed(r, rows);
            (rep, def, n, Arc::new(BooleanArray::from(v)))
        }
        ColumnReader::Int32ColumnReader(r) => {
            let (rep, def, n, v) = read_typed(r, rows);
            (rep, def, n, retype(Arc::new(Int32Array::from(v)), target))
        }
        ColumnReader::Int64ColumnReader(r) => {
            let (rep, def, n, v) = read_typed(r, rows);
            (rep, def, n, retype(Arc::new(Int64Array::from(v)), target))
        }
        ColumnReader::FloatColumnReader(r) => {
            let (rep, def, n, v) = read_typed(r, rows);
            (rep, def, n, Arc::new(Float32Array::from(v)))
        }
        ColumnReader::DoubleColumnReader(r) => {
            let (rep, def, n, v) = read_typed(r, rows);
            (rep, def, n, Arc::new(Float64Array::from(v)))
        }
        ColumnReader::ByteArrayColumnReader(r) => {
            let (rep, def, n, v) = read_typed(r, rows);
            let array: ArrayRef = match target {
                DataType::Utf8View => Arc::new(StringViewArray::from_iter_values(
                    v.iter().map(|b| b.as_utf8().unwrap()),
                )),
                DataType::BinaryView => Arc::new(BinaryViewArray::from_iter_values(
                    v.iter().map(|b| b.data()),
                )),
                DataType::Null => Arc::new(NullArray::new(v.len())),
                other => panic!("test reader: BYTE_ARRAY as {other}"),
            };
            (rep, def, n, array)
        }
        _ => panic!("test reader: physical type of leaf {}", leaf.column),
    };
    // An UNKNOWN leaf (arrow's Null): its values, none in a valid file,
    // are not read, as arrow-rs does not read them.
    let values: ArrayRef = match target {
        DataType::Null => Arc::new(NullArray::new(values.len())),
        _ => values,
    };
    LeafChunk {
        rep,
        def,
        entries,
        has_rep: leaf.rep > 0,
        has_def: leaf.def > 0,
        values,
    }
}

// ----- random nested batches written by ArrowWriter -------------------------

/// A small deterministic generator (xorshift64*).
pub struct Rng(pub u64);

impl Rng {
    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// A value below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
}

/// Per slot, valid or not (one in five null when the field is nullable).
pub fn random_nulls(rng: &mut Rng, field: &Field, len: usize) -> Option<NullBuffer> {
    field
        .is_nullable()
        .then(|| NullBuffer::from((0..len).map(|_| rng.below(5) != 0).collect::<Vec<bool>>()))
}

/// List lengths: 0 to 4 (an empty list one time in five), 0 at null slots.
pub fn random_lengths(rng: &mut Rng, nulls: &Option<NullBuffer>, len: usize) -> Vec<usize> {
    (0..len)
        .map(|i| {
            let valid = nulls.as_ref().is_none_or(|n| n.is_valid(i));
            if valid {
                rng.below(5) as usize
            } else {
                0
            }
        })
        .collect()
}

/// A random array of the field's type: nulls where nullable, empty and
/// null lists, strings both inline (up to 12 bytes) and not.
pub fn random_array(rng: &mut Rng, field: &Field, len: usize) -> ArrayRef {
    let nulls = random_nulls(rng, field, len);
    match field.data_type() {
        DataType::Int32 => {
            let values = (0..len).map(|_| rng.below(1000) as i32 - 500).collect();
            Arc::new(Int32Array::new(values, nulls))
        }
        DataType::Int64 => {
            let values = (0..len).map(|_| rng.next_u64() as i64).collect();
            Arc::new(Int64Array::new(values, nulls))
        }
        DataType::Utf8 => {
            let strings = (0..len).map(|i| {
                let valid = nulls.as_ref().is_none_or(|n| n.is_valid(i));
                let n = rng.below(20) as usize;
                valid.then(|| {
                    (0..n)
                        .map(|k| (b'a' + ((k as u64 + rng.below(26)) % 26) as u8) as char)
                        .collect::<String>()
                })
            });
            Arc::new(StringArray::from_iter(strings))
        }
        DataType::List(child) => {
            let lengths = random_lengths(rng, &nulls, len);
            let values = random_array(rng, child, lengths.iter().sum());
            let offsets = OffsetBuffer::from_lengths(lengths);
            Arc::new(ListArray::new(child.clone(), offsets, values, nulls))
        }
        DataType::FixedSizeList(child, size) => {
            let values = random_array(rng, child, len * *size as usize);
            Arc::new(FixedSizeListArray::new(child.clone(), *size, values, nulls))
        }
        DataType::Struct(fields) => {
            let children = fields.iter().map(|f| random_array(rng, f, len)).collect();
            Arc::new(StructArray::new(fields.clone(), children, nulls))
        }
        DataType::Map(entries, _) => {
            let DataType::Struct(kv) = entries.data_type() else {
                unreachable!("map entries are a struct")
            };
            let lengths = random_lengths(rng, &nulls, len);
            let total = lengths.iter().sum();
            let children = kv.iter().map(|f| random_array(rng, f, total)).collect();
            let entries_array = StructArray::new(kv.clone(), children, None);
            let offsets = OffsetBuffer::from_lengths(lengths);
            Arc::new(MapArray::new(
                entries.clone(),
                offsets,
                entries_array,
                nulls,
                false,
            ))
        }
        DataType::Null => Arc::new(NullArray::new(len)),
        other => unreachable!("random_array: {other}"),
    }
}

pub fn list(name: &str, item: Field, nullable: bool) -> Field {
    Field::new(name, DataType::List(Arc::new(item)), nullable)
}

pub fn fixed_list(name: &str, item: Field, size: i32, nullable: bool) -> Field {
    Field::new(
        name,
        DataType::FixedSizeList(Arc::new(item), size),
        nullable,
    )
}

pub fn strukt(name: &str, fields: Vec<Field>, nullable: bool) -> Field {
    Field::new(name, DataType::Struct(Fields::from(fields)), nullable)
}

pub fn map(name: &str, value: Field, nullable: bool) -> Field {
    let entries = strukt(
        "entries",
        vec![Field::new("keys", DataType::Utf8, false), value],
        false,
    );
    Field::new(name, DataType::Map(Arc::new(entries), false), nullable)
}

pub fn int32(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Int32, nullable)
}

pub fn int64(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Int64, nullable)
}

pub fn utf8(name: &str, nullable: bool) -> Field {
    Field::new(name, DataType::Utf8, nullable)
}

/// The nested shapes of the assembly tests, optional and required (23
/// top-level fields; the FixedSizeLists come back as such through the
/// embedded Arrow schema, `nest_fields_of_file`).
pub fn nested_schema() -> Schema {
    Schema::new(vec![
        int64("id", false),
        utf8("flat", true),
        list("l_i32", int32("item", true), true),
        list("l_i32_req", int32("item", false), false),
        list("l_str", utf8("item", true), true),
        list("l_str_req", utf8("item", false), true),
        strukt(
            "st",
            vec![int32("a", true), list("b", int32("item", true), true)],
            true,
        ),
        strukt(
            "st_req",
            vec![int32("a", false), list("b", int32("item", false), false)],
            false,
        ),
        list("ll", list("item", int64("item", true), true), true),
        list("ll_req", list("item", int64("item", false), false), false),
        map("m", int32("values", true), true),
        map("m_req", int32("values", false), false),
        list(
            "ls",
            strukt("item", vec![int32("x", true), utf8("y", true)], true),
            true,
        ),
        list(
            "ls_req",
            strukt("item", vec![int32("x", false), utf8("y", false)], false),
            false,
        ),
        // A required struct and a required leaf inside an optional struct.
        strukt(
            "deep",
            vec![
                strukt(
                    "s",
                    vec![int32("req", false), list("l", utf8("item", true), true)],
                    false,
                ),
                map("m", list("values", int32("item", true), true), true),
            ],
            true,
        ),
        list(
            "lm",
            map("item", strukt("values", vec![int64("p", true)], true), true),
            true,
        ),
        // FixedSizeLists: null ones padded, required items among them, one
        // of another, a variable-length list inside one, one in a struct.
        fixed_list("fl", int32("item", true), 3, true),
        fixed_list("fl_req", int64("item", false), 2, false),
        fixed_list(
            "fl_fl",
            fixed_list("item", utf8("item", true), 2, true),
            2,
            true,
        ),
        strukt(
            "st_fl",
            vec![
                fixed_list("f", list("item", int32("item", true), true), 2, true),
                int32("a", true),
            ],
            true,
        ),
        // FixedSizeLists inside variable-length lists and maps: sizes
        // within the padding factor (a bound), and past it (an allowance).
        list(
            "l_fl",
            fixed_list("item", int32("item", true), 3, true),
            true,
        ),
        map(
            "m_fl",
            fixed_list("values", utf8("item", true), 2, true),
            true,
        ),
        list(
            "l_fl8",
            fixed_list("item", int64("item", false), 8, true),
            true,
        ),
    ])
}

/// `list<fixed_size_list<int64 (required), 8>>`: `rows` rows of two
/// FixedSizeLists each, one in `null_every` of them null (1: all), the
/// values `7 * i - 3`. Past `null_every` 4 their padding passes the
/// decoder's allowance (`PADDING_FACTOR` slots an entry).
pub fn fixed_lists_in_lists(rows: usize, null_every: usize) -> RecordBatch {
    let item = Arc::new(Field::new("item", DataType::Int64, false));
    let fixed = Arc::new(Field::new(
        "item",
        DataType::FixedSizeList(item.clone(), 8),
        true,
    ));
    let instances = 2 * rows;
    let values = Int64Array::from_iter_values((0..instances as i64 * 8).map(|v| v * 7 - 3));
    let valid: Vec<bool> = (0..instances).map(|i| i % null_every != 0).collect();
    let inner = FixedSizeListArray::new(item, 8, Arc::new(values), Some(NullBuffer::from(valid)));
    let list = ListArray::new(
        fixed,
        OffsetBuffer::from_lengths(vec![2; rows]),
        Arc::new(inner),
        None,
    );
    let schema = Schema::new(vec![Field::new("a", list.data_type().clone(), true)]);
    RecordBatch::try_new(Arc::new(schema), vec![Arc::new(list)]).unwrap()
}

pub fn random_batch(seed: u64, rows: usize) -> RecordBatch {
    let schema = Arc::new(nested_schema());
    let mut rng = Rng(seed | 1);
    random_columns(&mut rng, schema, rows)
}

/// Columns of arrow's Null type (Parquet's UNKNOWN leaves) flat, in a
/// list, in a list of lists, in structs (beside a value and alone), in a
/// list of structs, as a map's values, beside columns of values.
pub fn null_columns_schema() -> Schema {
    let null = |name: &str| Field::new(name, DataType::Null, true);
    Schema::new(vec![
        int32("id", false),
        null("flat"),
        list("list", null("item"), true),
        list("lists", list("item", null("item"), true), false),
        strukt("beside", vec![null("n"), int32("x", true)], true),
        strukt("alone", vec![null("n")], true),
        list(
            "structs",
            strukt("item", vec![utf8("s", true), null("n")], true),
            true,
        ),
        map("values", null("values"), true),
        utf8("name", true),
    ])
}

/// A batch of `rows` random rows of `schema` (seed 1).
pub fn random_batch_of(schema: &Arc<Schema>, rows: usize) -> RecordBatch {
    random_columns(&mut Rng(1), schema.clone(), rows)
}

fn random_columns(rng: &mut Rng, schema: Arc<Schema>, rows: usize) -> RecordBatch {
    let columns = schema
        .fields()
        .iter()
        .map(|f| random_array(rng, f, rows))
        .collect();
    RecordBatch::try_new(schema, columns).unwrap()
}

/// Writer settings: small pages and write batches, v1 and v2 pages,
/// dictionaries on and off, several row groups. (arrow-rs 59's writer ends
/// every page, v1 included, at a record boundary; the assembly takes a
/// whole chunk's levels, so page boundaries do not enter it.)
pub fn writer_settings() -> Vec<(&'static str, WriterProperties)> {
    let base = || {
        WriterProperties::builder()
            .set_max_row_group_row_count(Some(97))
            .set_data_page_row_count_limit(7)
            .set_write_batch_size(5)
    };
    vec![
        ("v1 small pages", base().build()),
        (
            "v1 tiny pages, no dictionary",
            base()
                .set_dictionary_enabled(false)
                .set_data_page_size_limit(64)
                .set_write_batch_size(3)
                .build(),
        ),
        (
            "v2 small pages",
            base()
                .set_writer_version(WriterVersion::PARQUET_2_0)
                .build(),
        ),
        (
            "v2 default pages, no dictionary",
            WriterProperties::builder()
                .set_writer_version(WriterVersion::PARQUET_2_0)
                .set_dictionary_enabled(false)
                .build(),
        ),
    ]
}

pub fn write(batch: &RecordBatch, props: WriterProperties) -> Bytes {
    let mut out = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
    Bytes::from(out)
}
