//! A property test of the GPU decoder on nested columns: random schemas of
//! lists (large lists too), maps, structs and fixed-size lists nested up to
//! four deep over the covered flat types, optional or required at every
//! level; random data with empty lists, null lists, lists of nulls, null
//! structs and null leaves; random writer settings (v1 and v2 data pages,
//! dictionaries on and off, small pages, several row groups, no codec,
//! Snappy or Zstd). Each file is written by arrow-rs's writer and decoded
//! on the GPU equal, value by value and null by null at every level, to
//! arrow-rs's CPU decode of it.
//!
//! It runs like the flat property test (`seeded`): for
//! `GDSCAN_PROPERTY_SECONDS`, and `GDSCAN_PROPERTY_SEED=S` replays one
//! case. The generator and the nested comparison are checked on the CPU
//! too, by the tests here that are not ignored.
//!
//! arrow-rs 59's writer ends every data page, v1 included, at a record
//! boundary (it extends each write batch to the next `rep == 0`), so no
//! file here has a record that spans two pages.

use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, FixedSizeListArray, LargeListArray, ListArray, MapArray, RecordBatch,
    StructArray,
};
use arrow::buffer::{NullBuffer, OffsetBuffer};
use arrow::datatypes::{DataType, Field, Fields, Schema};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::metadata::ParquetMetaDataReader;
use parquet::file::properties::{WriterProperties, WriterPropertiesBuilder, WriterVersion};

use super::campaign::pages_of;
use super::decode::{assert_gpu, gpu_decode};
use super::property::{column, covered_types};
use super::reference::{arrow_rs_decode, assert_same_values, normalise};
use super::seeded::{run_seeded_cases, Rng};
use gdscan::decode::page::nesting::PADDING_FACTOR;
use gdscan::decode::page::PageKind;
use gdscan::parquet::ScanRequest;

/// Most children one list of a case may hold (lists nested four deep
/// multiply their lengths; past this, every list of that array holds at
/// most one element).
const MAX_CHILDREN: usize = 20_000;

/// Deepest nesting of a top-level field (lists, maps, structs and
/// fixed-size lists around a leaf).
const MAX_DEPTH: u64 = 4;

// ----- schemas ---------------------------------------------------------------

/// A random schema: 1 to 5 top-level fields, each nested 0 to
/// [`MAX_DEPTH`] deep.
fn random_schema(rng: &mut Rng) -> Schema {
    let n = 1 + rng.below(5) as usize;
    let fields: Vec<Field> = (0..n)
        .map(|i| {
            let depth = rng.below(MAX_DEPTH + 1) as u32;
            random_field(rng, &format!("c{i}"), depth, None)
        })
        .collect();
    Schema::new(fields)
}

/// A field named `name` whose type nests `depth` levels (0: a covered
/// flat type), nullable or not at random. `fixed`: under a List, LargeList
/// or Map, the product of FixedSizeList sizes it may still nest (the
/// decoder sizes such levels by `PADDING_FACTOR` slots an entry: past it,
/// a chunk with many null lists is refused, which is no case of this test;
/// the allowance has its own test), None under records.
fn random_field(rng: &mut Rng, name: &str, depth: u32, fixed: Option<u32>) -> Field {
    let nullable = rng.chance(0.6);
    if depth == 0 {
        return Field::new(name, rng.pick(&covered_types()), nullable);
    }
    let under_list = Some(PADDING_FACTOR as u32);
    let size = 1 + rng.below(4) as u32;
    let data_type = match rng.below(100) {
        0..=29 => DataType::List(Arc::new(list_element(rng, depth, under_list))),
        30..=41 => DataType::LargeList(Arc::new(list_element(rng, depth, under_list))),
        42..=54 if fixed.is_none_or(|f| size <= f) => {
            let inner = fixed.map(|f| f / size);
            DataType::FixedSizeList(Arc::new(list_element(rng, depth, inner)), size as i32)
        }
        42..=69 => map_type(rng, depth),
        _ => struct_type(rng, depth, fixed),
    };
    Field::new(name, data_type, nullable)
}

/// The depth of a child of a node `depth` deep: one less, or sometimes
/// shallower still.
fn child_depth(rng: &mut Rng, depth: u32) -> u32 {
    if rng.chance(0.7) {
        depth - 1
    } else {
        rng.below(u64::from(depth)) as u32
    }
}

/// The element field of a list `depth` deep (`fixed` as in
/// [`random_field`]).
fn list_element(rng: &mut Rng, depth: u32, fixed: Option<u32>) -> Field {
    let name = rng.pick(&["item", "element"]);
    let depth = child_depth(rng, depth);
    random_field(rng, name, depth, fixed)
}

/// A map `depth` deep: non-null string or integer keys, a random value.
fn map_type(rng: &mut Rng, depth: u32) -> DataType {
    let key_type = rng.pick(&[DataType::Utf8, DataType::Int32, DataType::Int64]);
    let value_depth = child_depth(rng, depth);
    let value = random_field(rng, "values", value_depth, Some(PADDING_FACTOR as u32));
    let entries = Field::new(
        "entries",
        DataType::Struct(Fields::from(vec![
            Field::new("keys", key_type, false),
            value,
        ])),
        false,
    );
    DataType::Map(Arc::new(entries), false)
}

/// A struct `depth` deep of 1 to 3 fields.
fn struct_type(rng: &mut Rng, depth: u32, fixed: Option<u32>) -> DataType {
    let n = 1 + rng.below(3);
    let fields: Vec<Field> = (0..n)
        .map(|i| {
            let depth = child_depth(rng, depth);
            random_field(rng, &format!("f{i}"), depth, fixed)
        })
        .collect();
    DataType::Struct(Fields::from(fields))
}

/// A short text of a field's type for the log: `?` marks a nullable field.
fn type_text(field: &Field) -> String {
    let inner = match field.data_type() {
        DataType::List(f) => format!("List<{}>", type_text(f)),
        DataType::LargeList(f) => format!("LargeList<{}>", type_text(f)),
        DataType::FixedSizeList(f, n) => format!("FixedSizeList<{n} x {}>", type_text(f)),
        DataType::Map(entries, _) => match entries.data_type() {
            DataType::Struct(kv) => format!("Map<{}, {}>", type_text(&kv[0]), type_text(&kv[1])),
            other => format!("Map<{other}>"),
        },
        DataType::Struct(fields) => {
            let fields: Vec<String> = fields
                .iter()
                .map(|f| format!("{}: {}", f.name(), type_text(f)))
                .collect();
            format!("Struct<{}>", fields.join(", "))
        }
        other => other.to_string(),
    };
    format!("{inner}{}", if field.is_nullable() { "?" } else { "" })
}

// ----- data ------------------------------------------------------------------

/// A random array of `field`'s type, `len` slots: nulls only where the
/// field is nullable (a required field is never null at its level).
fn random_array(rng: &mut Rng, field: &Field, len: usize) -> ArrayRef {
    match field.data_type() {
        DataType::List(item) => {
            let nulls = random_validity(rng, field, len);
            let lengths = random_lengths(rng, nulls.as_ref(), len);
            let values = random_array(rng, item, lengths.iter().sum());
            let offsets = OffsetBuffer::<i32>::from_lengths(lengths);
            Arc::new(ListArray::new(item.clone(), offsets, values, nulls))
        }
        DataType::LargeList(item) => {
            let nulls = random_validity(rng, field, len);
            let lengths = random_lengths(rng, nulls.as_ref(), len);
            let values = random_array(rng, item, lengths.iter().sum());
            let offsets = OffsetBuffer::<i64>::from_lengths(lengths);
            Arc::new(LargeListArray::new(item.clone(), offsets, values, nulls))
        }
        DataType::FixedSizeList(item, size) => {
            let nulls = random_validity(rng, field, len);
            let values = random_array(rng, item, len * *size as usize);
            Arc::new(FixedSizeListArray::new(item.clone(), *size, values, nulls))
        }
        DataType::Map(entries, sorted) => {
            let DataType::Struct(key_value) = entries.data_type() else {
                unreachable!("a map's entries are a struct")
            };
            let nulls = random_validity(rng, field, len);
            let lengths = random_lengths(rng, nulls.as_ref(), len);
            let total = lengths.iter().sum();
            let keys = random_array(rng, &key_value[0], total);
            let values = random_array(rng, &key_value[1], total);
            let entries_array = StructArray::new(key_value.clone(), vec![keys, values], None);
            let offsets = OffsetBuffer::<i32>::from_lengths(lengths);
            Arc::new(MapArray::new(
                entries.clone(),
                offsets,
                entries_array,
                nulls,
                *sorted,
            ))
        }
        DataType::Struct(fields) => {
            let nulls = random_validity(rng, field, len);
            let children = fields.iter().map(|f| random_array(rng, f, len)).collect();
            Arc::new(StructArray::new(fields.clone(), children, nulls))
        }
        leaf => {
            let nulls = if field.is_nullable() {
                rng.pick(&[0.0, 0.05, 0.3, 0.9, 1.0])
            } else {
                0.0
            };
            let distinct = rng.pick(&[1u64, 5, 300, 1 << 20]);
            column(rng, leaf, len, distinct, nulls)
        }
    }
}

/// The validity of `len` slots of `field`: none when it is required; else
/// with a chance of null drawn for this array (none, few, many, all).
fn random_validity(rng: &mut Rng, field: &Field, len: usize) -> Option<NullBuffer> {
    if !field.is_nullable() {
        return None;
    }
    let chance = rng.pick(&[0.0, 0.1, 0.4, 0.9, 1.0]);
    let valid: Vec<bool> = (0..len).map(|_| !rng.chance(chance)).collect();
    Some(NullBuffer::from(valid))
}

/// The lengths of `len` lists: 0 at null slots; at valid ones empty with a
/// chance drawn for this array (from never to always), else 1 to a drawn
/// longest length. Past [`MAX_CHILDREN`] in all, each is cut to 1.
fn random_lengths(rng: &mut Rng, nulls: Option<&NullBuffer>, len: usize) -> Vec<usize> {
    let empty = rng.pick(&[0.0, 0.2, 0.6, 1.0]);
    let longest = rng.pick(&[1u64, 2, 3, 7]);
    let mut lengths: Vec<usize> = (0..len)
        .map(|i| {
            let valid = nulls.is_none_or(|n| n.is_valid(i));
            if !valid || rng.chance(empty) {
                0
            } else {
                1 + rng.below(longest) as usize
            }
        })
        .collect();
    if lengths.iter().sum::<usize>() > MAX_CHILDREN {
        lengths.iter_mut().for_each(|l| *l = (*l).min(1));
    }
    lengths
}

/// A row count: mostly 0 to 3000, with the smallest counts more often.
fn random_rows(rng: &mut Rng) -> usize {
    if rng.chance(0.15) {
        rng.pick(&[0usize, 1, 2, 7])
    } else {
        rng.below(3001) as usize
    }
}

/// A random nested batch, and its schema in words.
pub(super) fn random_nested_batch(rng: &mut Rng) -> (String, RecordBatch) {
    let schema = Arc::new(random_schema(rng));
    let rows = random_rows(rng);
    let columns = schema
        .fields()
        .iter()
        .map(|f| random_array(rng, f, rows))
        .collect();
    let batch = RecordBatch::try_new(schema.clone(), columns).expect("random nested batch");
    let text: Vec<String> = schema
        .fields()
        .iter()
        .map(|f| format!("{}: {}", f.name(), type_text(f)))
        .collect();
    (format!("{rows} rows, [{}]", text.join(", ")), batch)
}

// ----- writer settings -------------------------------------------------------

/// Random page, dictionary and row-group settings with data pages v1 or
/// v2 (`v2`), and the codec left to the caller: small data pages by bytes
/// and by rows, small write batches, row groups of a few rows to all.
pub(super) fn random_page_settings(rng: &mut Rng, v2: bool) -> (String, WriterPropertiesBuilder) {
    let dictionary = rng.chance(0.5);
    let plain = !dictionary && rng.chance(0.4);
    let page_bytes = rng.pick(&[64usize, 512, 4096, 1 << 20]);
    let page_rows = rng.pick(&[1usize, 3, 20, 500, 20_000]);
    let batch_rows = rng.pick(&[1usize, 4, 64, 1024]);
    let dictionary_bytes = rng.pick(&[128usize, 4096, 1 << 20]);
    let group_rows = rng.pick(&[5usize, 64, 700, 1_000_000]);
    let mut builder = WriterProperties::builder()
        .set_writer_version(if v2 {
            WriterVersion::PARQUET_2_0
        } else {
            WriterVersion::PARQUET_1_0
        })
        .set_dictionary_enabled(dictionary)
        .set_dictionary_page_size_limit(dictionary_bytes)
        .set_data_page_size_limit(page_bytes)
        .set_data_page_row_count_limit(page_rows)
        .set_write_batch_size(batch_rows)
        .set_max_row_group_row_count(Some(group_rows));
    if plain {
        // Else v2 pages fall back to the DELTA_* encodings.
        builder = builder.set_encoding(Encoding::PLAIN);
    }
    let text = format!(
        "v2={v2} dict={dictionary} plain={plain} page={page_bytes}B/{page_rows}rows \
         batch={batch_rows} dict_page={dictionary_bytes}B group={group_rows}rows"
    );
    (text, builder)
}

/// Random writer settings: [`random_page_settings`] with v1 or v2 pages,
/// and no codec, Snappy or Zstd.
fn random_writer_settings(rng: &mut Rng) -> (String, WriterProperties) {
    let (codec_name, codec) = rng.pick(&[
        ("none", Compression::UNCOMPRESSED),
        ("snappy", Compression::SNAPPY),
        ("zstd", Compression::ZSTD(ZstdLevel::default())),
    ]);
    let v2 = rng.chance(0.5);
    let (text, builder) = random_page_settings(rng, v2);
    (
        format!("{codec_name} {text}"),
        builder.set_compression(codec).build(),
    )
}

/// `batch` written by arrow-rs's writer with `props`, in random slices (so
/// pages and row groups end at odd rows).
pub(super) fn write_in_slices(
    rng: &mut Rng,
    batch: &RecordBatch,
    props: WriterProperties,
) -> Vec<u8> {
    let mut out = Vec::new();
    let mut writer =
        ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).expect("arrow-rs writer");
    let rows = batch.num_rows();
    let mut at = 0;
    while at < rows {
        let take = (1 + rng.below(rows as u64) as usize).min(rows - at);
        writer.write(&batch.slice(at, take)).expect("write");
        at += take;
    }
    writer.close().expect("close");
    out
}

/// One case of the nested property test: what it is, the batch written,
/// and the file's bytes.
struct NestedCase {
    what: String,
    batch: RecordBatch,
    bytes: Vec<u8>,
}

/// The case of `seed`: a random nested batch written with random settings.
fn nested_case(seed: u64) -> NestedCase {
    let mut rng = Rng(seed);
    let (schema, batch) = random_nested_batch(&mut rng);
    let (settings, props) = random_writer_settings(&mut rng);
    let bytes = write_in_slices(&mut rng, &batch, props);
    NestedCase {
        what: format!("seed {seed:#x}: {schema}, {settings}"),
        batch,
        bytes,
    }
}

// ----- the tests -------------------------------------------------------------

/// One GPU case: the file of `seed` under `dir`, decoded on the GPU whole
/// and compared with arrow-rs's decode of it. Returns what the case was.
fn run_gpu_case(seed: u64, dir: &Path) -> String {
    let case = nested_case(seed);
    let path = dir.join(format!("nested-{seed:x}.parquet"));
    std::fs::write(&path, &case.bytes).expect("write the case's file");
    let expected = arrow_rs_decode(&Bytes::from(case.bytes), None, None, None);
    let got = gpu_decode(&path, ScanRequest::default())
        .unwrap_or_else(|e| panic!("{}: decode: {e}", case.what));
    assert_same_values(&case.what, &expected, &got);
    std::fs::remove_file(&path).ok();
    case.what
}

/// Random nested files, as many as fit in the time budget: every one
/// decoded on the GPU equal to arrow-rs.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn random_nested_files_decode_like_arrow_rs() {
    assert_gpu();
    let dir = tempfile::tempdir().expect("temp dir");
    run_seeded_cases("nested property test", |seed| {
        run_gpu_case(seed, dir.path())
    });
}

/// What the generated batches held, counted over many cases.
#[derive(Debug, Default)]
struct Coverage {
    lists: usize,
    large_lists: usize,
    maps: usize,
    structs: usize,
    deepest: usize,
    empty_lists: usize,
    null_lists: usize,
    null_list_elements: usize,
    null_structs: usize,
    null_leaves: usize,
}

impl Coverage {
    /// Counts `array` (at nesting `depth`) and everything below it.
    fn add(&mut self, array: &dyn Array, depth: usize) {
        self.deepest = self.deepest.max(depth);
        let nulls = array.logical_null_count();
        match array.data_type() {
            DataType::List(_) | DataType::LargeList(_) | DataType::Map(..) => {
                let (lengths, child) = list_lengths_and_child(array);
                match array.data_type() {
                    DataType::List(_) => self.lists += 1,
                    DataType::LargeList(_) => self.large_lists += 1,
                    _ => self.maps += 1,
                }
                self.null_lists += nulls;
                self.empty_lists += (0..array.len())
                    .filter(|&i| array.is_valid(i) && lengths[i] == 0)
                    .count();
                self.null_list_elements += child.logical_null_count();
                self.add(child.as_ref(), depth + 1);
            }
            DataType::Struct(_) => {
                self.structs += 1;
                self.null_structs += nulls;
                let s = array.as_any().downcast_ref::<StructArray>().unwrap();
                s.columns()
                    .iter()
                    .for_each(|c| self.add(c.as_ref(), depth + 1));
            }
            _ => self.null_leaves += nulls,
        }
    }
}

/// A list's (or a map's) lengths and child (a map's child: its values, the
/// entries' struct being never null).
fn list_lengths_and_child(array: &dyn Array) -> (Vec<usize>, ArrayRef) {
    let any = array.as_any();
    if let Some(list) = any.downcast_ref::<ListArray>() {
        (list.offsets().lengths().collect(), list.values().clone())
    } else if let Some(list) = any.downcast_ref::<LargeListArray>() {
        (list.offsets().lengths().collect(), list.values().clone())
    } else {
        let map = any.downcast_ref::<MapArray>().expect("a map");
        (map.offsets().lengths().collect(), map.values().clone())
    }
}

/// A file's row groups, and the most data pages of one of its column
/// chunks (from the campaign's page walk).
fn row_groups_and_most_pages(bytes: &[u8]) -> (usize, usize) {
    let metadata = ParquetMetaDataReader::new()
        .parse_and_finish(&Bytes::from(bytes.to_vec()))
        .expect("footer");
    let pages = pages_of(bytes);
    let most = metadata
        .row_groups()
        .iter()
        .flat_map(|row_group| row_group.columns())
        .map(|chunk| {
            let (start, len) = chunk.byte_range();
            let chunk_range = start as usize..(start + len) as usize;
            pages
                .iter()
                .filter(|p| chunk_range.contains(&p.header.start))
                .filter(|p| matches!(p.kind, PageKind::Data(_) | PageKind::DataV2(_)))
                .count()
        })
        .max()
        .unwrap_or(0);
    (metadata.num_row_groups(), most)
}

/// The generator is sound without a GPU: 200 random nested files, each read
/// back by arrow-rs equal to the batch written (types included, after the
/// view cast both sides get); and the cases cover what the test promises.
#[test]
fn random_nested_files_are_read_by_arrow_rs() {
    let mut seeds = Rng(0x6e65_7374_6564);
    let mut coverage = Coverage::default();
    let (mut v1_pages, mut v2_pages) = (0, 0);
    let (mut several_row_groups, mut several_pages) = (0, 0);
    for _ in 0..200 {
        let case = nested_case(seeds.next_u64());
        let (row_groups, most_pages) = row_groups_and_most_pages(&case.bytes);
        several_row_groups += usize::from(row_groups > 1);
        several_pages += usize::from(most_pages > 1);
        let read = arrow_rs_decode(&Bytes::from(case.bytes), None, None, None);
        assert_same_values(&case.what, &normalise(&case.batch), &read);
        for column in case.batch.columns() {
            coverage.add(column.as_ref(), 1);
        }
        if case.what.contains("v2=true") {
            v2_pages += 1;
        } else {
            v1_pages += 1;
        }
    }
    eprintln!(
        "{coverage:?}, {v1_pages} files of v1 pages, {v2_pages} of v2, \
         {several_row_groups} of several row groups, {several_pages} with a chunk of several pages"
    );
    let Coverage {
        lists,
        large_lists,
        maps,
        structs,
        deepest,
        empty_lists,
        null_lists,
        null_list_elements,
        null_structs,
        null_leaves,
    } = coverage;
    for (what, count) in [
        ("lists", lists),
        ("large lists", large_lists),
        ("maps", maps),
        ("structs", structs),
        ("empty lists", empty_lists),
        ("null lists", null_lists),
        ("null list elements", null_list_elements),
        ("null structs", null_structs),
        ("null leaves", null_leaves),
        ("files of v1 pages", v1_pages),
        ("files of v2 pages", v2_pages),
        ("files of several row groups", several_row_groups),
        ("column chunks of several data pages", several_pages),
    ] {
        assert!(count > 0, "200 cases without {what}");
    }
    assert_eq!(deepest, MAX_DEPTH as usize + 1, "nesting depth reached");
}
