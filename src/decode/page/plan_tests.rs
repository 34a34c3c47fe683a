//! Tests of page headers, walks, the level reference and decode plans, on
//! files written by arrow-rs's `ArrowWriter` into memory, checked against
//! the parquet crate's own page reader and offset index.

use std::io::Read;
use std::sync::Arc;

use arrow::array::{
    Array, ArrayRef, BinaryArray, BooleanArray, Date32Array, Decimal128Array, Decimal256Array,
    FixedSizeBinaryArray, Float32Array, Float64Array, Int16Array, Int32Array, Int64Array,
    Int8Array, IntervalDayTimeArray, NullArray, StringArray, TimestampMicrosecondArray,
    TimestampMillisecondArray, TimestampNanosecondArray, UInt16Array, UInt32Array, UInt64Array,
    UInt8Array,
};
use arrow::datatypes::{i256, IntervalDayTime};
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use arrow::record_batch::RecordBatch;
use bytes::Bytes;
use parquet::arrow::{parquet_to_arrow_schema, ArrowWriter};
use parquet::basic::{Compression, Encoding, GzipLevel, PageType, ZstdLevel};
use parquet::column::page::Page;
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::SchemaDescriptor;

use super::codes::{self, Conversion, Kind};
use super::column_type::*;
use super::header::*;
use super::host_codec::*;
use super::levels::*;
use super::plan::*;
use super::plan_error::*;
use super::planner::*;
use super::walk::*;
use crate::nvcomp::Codec;
use crate::parquet::fetch::{layout, Piece};
use crate::parquet::plan::{plan as scan_plan, ScanRequest};

// ----- test data ---------------------------------------------------------

/// A small deterministic generator (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

const ROWS: usize = 3000;

/// A batch of every type the decoder covers, nulls in the optional columns,
/// low-cardinality columns (dictionaries) and high-cardinality ones (that
/// fall back to PLAIN mid-chunk with a small dictionary limit).
fn rich_batch() -> RecordBatch {
    let n = ROWS;
    let nth = |k: usize| move |i: usize| i % k != 3;
    let opt = |k: usize, i: usize| nth(k)(i);
    let cols: Vec<(&str, ArrayRef, bool)> = vec![
        (
            "i64",
            Arc::new(Int64Array::from_iter(
                (0..n).map(|i| opt(7, i).then_some((i as i64 * 7919) % 1000 - 500)),
            )),
            true,
        ),
        (
            "seq",
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i as i64))),
            false,
        ),
        (
            "i32",
            Arc::new(Int32Array::from_iter_values(
                (0..n).map(|i| (i % 50) as i32 - 25),
            )),
            false,
        ),
        (
            "f64",
            Arc::new(Float64Array::from_iter(
                (0..n).map(|i| opt(5, i).then_some(i as f64 * 0.25)),
            )),
            true,
        ),
        (
            "f32",
            Arc::new(Float32Array::from_iter_values(
                (0..n).map(|i| (i % 9) as f32),
            )),
            false,
        ),
        (
            "b",
            Arc::new(BooleanArray::from_iter(
                (0..n).map(|i| opt(4, i).then_some(i % 3 == 0)),
            )),
            true,
        ),
        (
            "s",
            Arc::new(StringArray::from_iter((0..n).map(|i| {
                opt(6, i).then(|| format!("v{}{}", i % 37, "long".repeat(i % 5)))
            }))),
            true,
        ),
        (
            "s_uniq",
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|i| format!("row {i} {}", "x".repeat(i % 20))),
            )),
            false,
        ),
        (
            "bin",
            Arc::new(BinaryArray::from_iter(
                (0..n).map(|i| opt(9, i).then(|| vec![(i % 251) as u8; i % 17])),
            )),
            true,
        ),
        (
            "d",
            Arc::new(Date32Array::from_iter_values(
                (0..n).map(|i| 19000 + (i % 400) as i32),
            )),
            false,
        ),
        (
            "dec9",
            Arc::new(
                Decimal128Array::from_iter(
                    (0..n).map(|i| opt(8, i).then_some(i as i128 * 101 - 7000)),
                )
                .with_precision_and_scale(9, 2)
                .unwrap(),
            ),
            true,
        ),
        (
            "dec18",
            Arc::new(
                Decimal128Array::from_iter_values((0..n).map(|i| i as i128 * 1_000_003))
                    .with_precision_and_scale(18, 3)
                    .unwrap(),
            ),
            false,
        ),
        (
            "dec30",
            Arc::new(
                Decimal128Array::from_iter(
                    (0..n).map(|i| opt(5, i).then_some((i as i128 - 1500) * 10i128.pow(20))),
                )
                .with_precision_and_scale(30, 4)
                .unwrap(),
            ),
            true,
        ),
        (
            "dec50",
            Arc::new(
                Decimal256Array::from_iter((0..n).map(|i| {
                    opt(7, i).then(|| {
                        i256::from_i128(i as i128 - 1700)
                            .wrapping_mul(i256::from_i128(10i128.pow(30) + 7))
                    })
                }))
                .with_precision_and_scale(50, 6)
                .unwrap(),
            ),
            true,
        ),
        (
            "ivl",
            Arc::new(IntervalDayTimeArray::from_iter((0..n).map(|i| {
                opt(6, i).then(|| IntervalDayTime::new(i as i32 - 900, (i as i32) * 977 - 5))
            }))),
            true,
        ),
        (
            "ts_us",
            Arc::new(
                TimestampMicrosecondArray::from_iter_values(
                    (0..n).map(|i| 1_700_000_000_000_000 + i as i64),
                )
                .with_timezone("UTC"),
            ),
            false,
        ),
        (
            "ts_ms",
            Arc::new(TimestampMillisecondArray::from_iter(
                (0..n).map(|i| opt(3, i).then_some(1_700_000_000_000 + i as i64)),
            )),
            true,
        ),
        (
            "ts_ns",
            Arc::new(TimestampNanosecondArray::from_iter_values(
                (0..n).map(|i| i as i64 * 1_000_000_007),
            )),
            false,
        ),
        (
            "i8",
            Arc::new(Int8Array::from_iter_values(
                (0..n).map(|i| (i % 256) as u8 as i8),
            )),
            false,
        ),
        (
            "i16",
            Arc::new(Int16Array::from_iter_values(
                (0..n).map(|i| (i * 31) as i16),
            )),
            false,
        ),
        (
            "u8",
            Arc::new(UInt8Array::from_iter(
                (0..n).map(|i| opt(10, i).then_some((i % 256) as u8)),
            )),
            true,
        ),
        (
            "u16",
            Arc::new(UInt16Array::from_iter_values(
                (0..n).map(|i| (i * 97) as u16),
            )),
            false,
        ),
        (
            "u32",
            Arc::new(UInt32Array::from_iter_values(
                (0..n).map(|i| u32::MAX - i as u32),
            )),
            false,
        ),
        (
            "u64",
            Arc::new(UInt64Array::from_iter_values(
                (0..n).map(|i| u64::MAX - i as u64 * 3),
            )),
            false,
        ),
        (
            "fsb",
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    (0..n).map(|i| opt(11, i).then_some([(i % 7) as u8, 1, 2, 3, (i % 13) as u8])),
                    5,
                )
                .unwrap(),
            ),
            true,
        ),
    ];
    let schema = Schema::new(
        cols.iter()
            .map(|(name, a, nullable)| Field::new(*name, a.data_type().clone(), *nullable))
            .collect::<Vec<_>>(),
    );
    RecordBatch::try_new(
        Arc::new(schema),
        cols.into_iter().map(|(_, a, _)| a).collect(),
    )
    .unwrap()
}

fn props(version: WriterVersion, codec: Compression, dictionary: bool) -> WriterProperties {
    let props = WriterProperties::builder()
        .set_writer_version(version)
        .set_compression(codec)
        .set_dictionary_enabled(dictionary)
        .set_dictionary_page_size_limit(2048)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_data_page_row_count_limit(500)
        .set_write_batch_size(100)
        .set_max_row_group_row_count(Some(2000));
    // arrow-rs's v2 writer falls back to (and without a dictionary uses)
    // DELTA_BINARY_PACKED, DELTA_BYTE_ARRAY and RLE booleans: its defaults.
    props.build()
}

pub(super) fn write(batch: &RecordBatch, props: WriterProperties) -> Bytes {
    let mut buf = Vec::new();
    let mut w = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    Bytes::from(buf)
}

fn metadata(bytes: &Bytes) -> ParquetMetaData {
    ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Required)
        .parse_and_finish(bytes)
        .unwrap()
}

fn codecs() -> [Compression; 7] {
    [
        Compression::UNCOMPRESSED,
        Compression::SNAPPY,
        Compression::ZSTD(ZstdLevel::try_new(1).unwrap()),
        Compression::LZ4_RAW,
        Compression::GZIP(GzipLevel::default()),
        // Legacy LZ4: arrow-rs writes the Hadoop framing.
        Compression::LZ4,
        Compression::BROTLI(Default::default()),
    ]
}

/// Every writer setting the tests cover: v1 and v2 pages, seven codecs,
/// dictionary on and off.
fn settings() -> Vec<(String, WriterProperties)> {
    let mut out = Vec::new();
    for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
        for codec in codecs() {
            for dictionary in [true, false] {
                out.push((
                    format!("{version:?} {codec} dictionary={dictionary}"),
                    props(version, codec, dictionary),
                ));
            }
        }
        out.push((
            format!("{version:?} SNAPPY BYTE_STREAM_SPLIT"),
            encoded_props(version, Encoding::BYTE_STREAM_SPLIT, FIXED_COLUMNS),
        ));
        out.push((
            format!("{version:?} SNAPPY DELTA_BINARY_PACKED"),
            encoded_props(version, Encoding::DELTA_BINARY_PACKED, INT_COLUMNS),
        ));
        out.push((
            format!("{version:?} SNAPPY DELTA_LENGTH_BYTE_ARRAY"),
            encoded_props(
                version,
                Encoding::DELTA_LENGTH_BYTE_ARRAY,
                BYTE_ARRAY_COLUMNS,
            ),
        ));
        out.push((
            format!("{version:?} SNAPPY DELTA_BYTE_ARRAY"),
            encoded_props(version, Encoding::DELTA_BYTE_ARRAY, DBA_COLUMNS),
        ));
    }
    out
}

/// The columns of [`rich_batch`] stored as FLOAT, DOUBLE, INT32, INT64 or
/// FIXED_LEN_BYTE_ARRAY (BYTE_STREAM_SPLIT's).
const FIXED_COLUMNS: &[&str] = &[
    "i64", "seq", "i32", "f64", "f32", "d", "dec9", "dec18", "dec30", "dec50", "ivl", "ts_us",
    "ts_ms", "ts_ns", "i8", "i16", "u8", "u16", "u32", "u64", "fsb",
];

/// The columns of [`rich_batch`] stored as INT32 or INT64
/// (DELTA_BINARY_PACKED's).
const INT_COLUMNS: &[&str] = &[
    "i64", "seq", "i32", "d", "dec9", "dec18", "ts_us", "ts_ms", "ts_ns", "i8", "i16", "u8", "u16",
    "u32", "u64",
];

/// The columns of [`rich_batch`] stored as BYTE_ARRAY
/// (DELTA_LENGTH_BYTE_ARRAY's).
const BYTE_ARRAY_COLUMNS: &[&str] = &["s", "s_uniq", "bin"];

/// The columns of [`rich_batch`] stored as BYTE_ARRAY or
/// FIXED_LEN_BYTE_ARRAY (DELTA_BYTE_ARRAY's).
const DBA_COLUMNS: &[&str] = &["s", "s_uniq", "bin", "dec30", "fsb"];

/// `encoding` for `columns` of [`rich_batch`], no dictionary, SNAPPY.
fn encoded_props(version: WriterVersion, encoding: Encoding, columns: &[&str]) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_writer_version(version)
        .set_compression(Compression::SNAPPY)
        .set_dictionary_enabled(false)
        .set_encoding(Encoding::PLAIN)
        .set_data_page_row_count_limit(500)
        .set_write_batch_size(100)
        .set_max_row_group_row_count(Some(2000));
    if version == WriterVersion::PARQUET_2_0 {
        b = b.set_column_encoding("b".into(), Encoding::RLE);
    }
    for name in columns {
        b = b.set_column_encoding(name.to_string().into(), encoding);
    }
    b.build()
}

/// Every page of a chunk as the parquet crate's page reader gives them
/// (decompressed).
fn reference_pages(bytes: &Bytes, rg: usize, col: usize) -> Vec<Page> {
    let reader = SerializedFileReader::new(bytes.clone()).unwrap();
    let pages = reader
        .get_row_group(rg)
        .unwrap()
        .get_column_page_reader(col)
        .unwrap();
    pages.map(|p| p.unwrap()).collect()
}

/// The whole chunk as one piece of a "row-group buffer" that is the file.
fn whole_chunk(md: &ParquetMetaData, rg: usize, col: usize) -> Piece {
    let (start, len) = md.row_group(rg).column(col).byte_range();
    Piece {
        file_offset: start,
        buffer_offset: start as usize,
        len: len as usize,
    }
}

// ----- header: against the parquet crate ---------------------------------

fn check_header_against(name: &str, info: &PageInfo, page: &Page) {
    let h = &info.header;
    assert_eq!(h.page_type(), page.page_type(), "{name}");
    assert_eq!(h.num_values(), page.num_values(), "{name}");
    assert_eq!(h.encoding(), Some(page.encoding()), "{name}");
    assert_eq!(h.uncompressed_size as usize, page.buffer().len(), "{name}");
    match (&h.kind, page) {
        (
            PageKind::Data(d),
            Page::DataPage {
                def_level_encoding,
                rep_level_encoding,
                ..
            },
        ) => {
            assert_eq!(d.def_level_encoding, *def_level_encoding, "{name}");
            assert_eq!(d.rep_level_encoding, *rep_level_encoding, "{name}");
        }
        (
            PageKind::DataV2(d),
            Page::DataPageV2 {
                num_nulls,
                num_rows,
                def_levels_byte_len,
                rep_levels_byte_len,
                is_compressed,
                ..
            },
        ) => {
            assert_eq!(d.num_nulls, *num_nulls, "{name}");
            assert_eq!(d.num_rows, *num_rows, "{name}");
            assert_eq!(d.def_levels_len, *def_levels_byte_len, "{name}");
            assert_eq!(d.rep_levels_len, *rep_levels_byte_len, "{name}");
            assert_eq!(d.is_compressed, *is_compressed, "{name}");
        }
        (PageKind::Dictionary(d), Page::DictionaryPage { is_sorted, .. }) => {
            assert_eq!(d.is_sorted, *is_sorted, "{name}");
        }
        (k, p) => panic!("{name}: {k:?} vs {:?}", p.page_type()),
    }
}

#[test]
#[allow(clippy::needless_range_loop)]
fn headers_walk_like_the_parquet_crate() {
    let batch = rich_batch();
    let mut v2_seen = false;
    let mut fallback_seen = false;
    for (setting, props) in settings() {
        let bytes = write(&batch, props);
        let md = metadata(&bytes);
        assert!(md.num_row_groups() >= 2, "{setting}");
        let offset_index = md.offset_index().unwrap();
        for rg in 0..md.num_row_groups() {
            for col in 0..md.row_group(rg).num_columns() {
                let name = format!("{setting} rg {rg} col {col}");
                let pages = walk_pieces(&bytes, &[whole_chunk(&md, rg, col)]).unwrap();
                let reference = reference_pages(&bytes, rg, col);
                assert_eq!(pages.len(), reference.len(), "{name}: page count");
                for (info, page) in pages.iter().zip(&reference) {
                    check_header_against(&name, info, page);
                    v2_seen |= matches!(info.header.kind, PageKind::DataV2(_));
                }
                let encodings: Vec<Encoding> = pages
                    .iter()
                    .filter(|p| p.header.is_data())
                    .filter_map(|p| p.header.encoding())
                    .collect();
                fallback_seen |= encodings.contains(&Encoding::RLE_DICTIONARY)
                    && encodings.contains(&Encoding::PLAIN);
                // Values add up to the chunk's, data pages sit where the
                // offset index says.
                let values: u64 = pages
                    .iter()
                    .filter(|p| p.header.is_data())
                    .map(|p| u64::from(p.header.num_values()))
                    .sum();
                assert_eq!(
                    values as i64,
                    md.row_group(rg).column(col).num_values(),
                    "{name}"
                );
                let locations = offset_index[rg][col].page_locations();
                let data: Vec<&PageInfo> = pages.iter().filter(|p| p.header.is_data()).collect();
                assert_eq!(data.len(), locations.len(), "{name}");
                for (p, loc) in data.iter().zip(locations) {
                    assert_eq!(p.file_offset, loc.offset as u64, "{name}");
                    assert_eq!(p.len(), loc.compressed_page_size as usize, "{name}");
                }
                // Pages tile the chunk; the dictionary page comes first.
                let (start, len) = md.row_group(rg).column(col).byte_range();
                assert_eq!(pages[0].file_offset, start);
                assert_eq!(pages.last().unwrap().file_end(), start + len);
                assert_eq!(
                    md.row_group(rg)
                        .column(col)
                        .dictionary_page_offset()
                        .is_some(),
                    matches!(pages[0].header.kind, PageKind::Dictionary(_)),
                    "{name}"
                );
            }
        }
    }
    assert!(v2_seen, "no DATA_PAGE_V2 written");
    assert!(fallback_seen, "no chunk switched from dictionary to PLAIN");
}

// ----- header: hand-made bytes ------------------------------------------

/// A minimal Thrift compact writer for hand-made headers.
#[derive(Default)]
struct W {
    out: Vec<u8>,
    last: Vec<i16>,
}

impl W {
    fn varint(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.out.push(b);
                return;
            }
            self.out.push(b | 0x80);
        }
    }
    fn zigzag(&mut self, v: i64) {
        self.varint(((v << 1) ^ (v >> 63)) as u64);
    }
    fn field(&mut self, id: i16, t: u8) {
        let last = *self.last.last().unwrap_or(&0);
        let delta = id - last;
        if (1..=15).contains(&delta) {
            self.out.push(((delta as u8) << 4) | t);
        } else {
            self.out.push(t);
            self.zigzag(i64::from(id));
        }
        if let Some(l) = self.last.last_mut() {
            *l = id;
        }
    }
    fn i32(&mut self, id: i16, v: i32) {
        self.field(id, 5);
        self.zigzag(i64::from(v));
    }
    fn bool(&mut self, id: i16, v: bool) {
        self.field(id, if v { 1 } else { 2 });
    }
    fn begin(&mut self, id: i16) {
        self.field(id, 12);
        self.last.push(0);
    }
    fn end(&mut self) {
        self.out.push(0);
        self.last.pop();
    }
    fn start() -> Self {
        W {
            out: Vec::new(),
            last: vec![0],
        }
    }
}

fn data_page_v1(num_values: i32, size: i32, extra: impl FnOnce(&mut W)) -> Vec<u8> {
    let mut w = W::start();
    w.i32(1, 0);
    w.i32(2, size);
    w.i32(3, size);
    extra(&mut w);
    w.begin(5);
    w.i32(1, num_values);
    w.i32(2, 0);
    w.i32(3, 3);
    w.i32(4, 3);
    w.end();
    w.end();
    w.out
}

#[test]
fn header_parses_hand_made_pages() {
    let bytes = data_page_v1(10, 100, |_| {});
    let (h, n) = parse_page_header(&bytes).unwrap();
    assert_eq!(n, bytes.len());
    assert_eq!(h.page_type(), PageType::DATA_PAGE);
    assert_eq!(h.compressed_size, 100);
    assert_eq!(
        h.kind,
        PageKind::Data(DataPageHeader {
            num_values: 10,
            encoding: Encoding::PLAIN,
            def_level_encoding: Encoding::RLE,
            rep_level_encoding: Encoding::RLE,
        })
    );
    // Trailing bytes (the body) are not read.
    let mut with_body = bytes.clone();
    with_body.extend_from_slice(&[0xff; 7]);
    assert_eq!(parse_page_header(&with_body).unwrap().1, n);

    // v2 with is_compressed absent: true by default; and false.
    for flag in [None, Some(false)] {
        let mut w = W::start();
        w.i32(1, 3);
        w.i32(2, 50);
        w.i32(3, 40);
        w.begin(8);
        w.i32(1, 9);
        w.i32(2, 2);
        w.i32(3, 9);
        w.i32(4, 8);
        w.i32(5, 4);
        w.i32(6, 0);
        if let Some(f) = flag {
            w.bool(7, f);
        }
        w.end();
        w.end();
        let (h, _) = parse_page_header(&w.out).unwrap();
        let PageKind::DataV2(d) = h.kind else {
            panic!("{h:?}")
        };
        assert_eq!(d.is_compressed, flag.unwrap_or(true));
        assert_eq!(
            (d.num_nulls, d.def_levels_len, d.encoding),
            (2, 4, Encoding::RLE_DICTIONARY)
        );
    }

    // Dictionary page, sorted.
    let mut w = W::start();
    w.i32(1, 2);
    w.i32(2, 8);
    w.i32(3, 8);
    w.begin(7);
    w.i32(1, 2);
    w.i32(2, 0);
    w.bool(3, true);
    w.end();
    w.end();
    let (h, _) = parse_page_header(&w.out).unwrap();
    assert_eq!(
        h.kind,
        PageKind::Dictionary(DictionaryPageHeader {
            num_values: 2,
            encoding: Encoding::PLAIN,
            is_sorted: true
        })
    );
}

#[test]
fn header_skips_unknown_fields_of_every_type() {
    let bytes = data_page_v1(10, 100, |w| {
        w.i32(4, -12345); // crc
                          // A struct of every wire type at a far field id (long form).
        w.begin(200);
        w.bool(1, true);
        w.field(2, 3);
        w.out.push(0x7f);
        w.field(3, 4);
        w.zigzag(-300);
        w.field(4, 6);
        w.zigzag(1 << 40);
        w.field(5, 7);
        w.out.extend_from_slice(&[0; 8]);
        w.field(6, 8);
        w.varint(3);
        w.out.extend_from_slice(b"abc");
        // list<i32> of 20 elements (long size form)
        w.field(7, 9);
        w.out.push(0xf5);
        w.varint(20);
        for i in 0..20 {
            w.zigzag(i);
        }
        // list<bool> of 2
        w.field(8, 9);
        w.out.push(0x21);
        w.out.extend_from_slice(&[1, 2]);
        // map<binary, struct> of 1
        w.field(9, 11);
        w.varint(1);
        w.out.push(0x8c);
        w.varint(1);
        w.out.push(b'k');
        w.out.push(0x15); // field 1 i32
        w.zigzag(5);
        w.out.push(0);
        // empty map
        w.field(10, 11);
        w.varint(0);
        // uuid
        w.field(11, 13);
        w.out.extend_from_slice(&[9; 16]);
        w.end();
    });
    let (h, n) = parse_page_header(&bytes).unwrap();
    assert_eq!(n, bytes.len());
    assert_eq!(h.crc, Some(-12345i32 as u32));
    assert_eq!(h.num_values(), 10);
}

#[test]
fn header_rejects_bad_values() {
    // Negative and absurd sizes.
    let mut w = W::start();
    w.i32(1, 0);
    w.i32(2, -1);
    w.i32(3, 10);
    w.end();
    assert!(matches!(
        parse_page_header(&w.out),
        Err(PageError::Negative {
            field: "uncompressed_page_size",
            value: -1
        })
    ));
    let bytes = data_page_v1(1, i32::MAX, |_| {});
    assert!(matches!(
        parse_page_header(&bytes),
        Err(PageError::TooLarge { .. })
    ));
    let bytes = data_page_v1(-5, 10, |_| {});
    assert!(matches!(
        parse_page_header(&bytes),
        Err(PageError::Negative {
            field: "num_values",
            ..
        })
    ));
    // Unknown page type; missing sub-header; missing required field.
    let mut w = W::start();
    w.i32(1, 9);
    w.i32(2, 1);
    w.i32(3, 1);
    w.end();
    assert_eq!(
        parse_page_header(&w.out),
        Err(PageError::UnknownPageType(9))
    );
    let mut w = W::start();
    w.i32(1, 0);
    w.i32(2, 1);
    w.i32(3, 1);
    w.end();
    assert!(matches!(
        parse_page_header(&w.out),
        Err(PageError::MissingSubHeader { .. })
    ));
    let mut w = W::start();
    w.i32(1, 0);
    w.i32(3, 1);
    w.end();
    assert_eq!(
        parse_page_header(&w.out),
        Err(PageError::MissingField("uncompressed_page_size"))
    );
    // Unknown encoding.
    let mut w = W::start();
    w.i32(1, 0);
    w.i32(2, 1);
    w.i32(3, 1);
    w.begin(5);
    w.i32(1, 1);
    w.i32(2, 1);
    w.i32(3, 3);
    w.i32(4, 3);
    w.end();
    w.end();
    assert!(matches!(
        parse_page_header(&w.out),
        Err(PageError::UnknownEncoding { value: 1, .. })
    ));
    // Wrong wire type for a known field.
    let mut w = W::start();
    w.field(1, 6);
    w.zigzag(0);
    w.end();
    assert!(matches!(
        parse_page_header(&w.out),
        Err(PageError::WrongFieldType { field: "type", .. })
    ));
    // v2 levels longer than the page.
    let mut w = W::start();
    w.i32(1, 3);
    w.i32(2, 10);
    w.i32(3, 10);
    w.begin(8);
    for (id, v) in [(1, 1), (2, 0), (3, 1), (4, 0), (5, 8), (6, 8)] {
        w.i32(id, v);
    }
    w.end();
    w.end();
    assert!(matches!(
        parse_page_header(&w.out),
        Err(PageError::LevelsTooLong { levels: 16, .. })
    ));
    // Too deep: structs nested past the bound in an unknown field.
    let mut w = W::start();
    for _ in 0..MAX_DEPTH + 2 {
        w.begin(20);
    }
    for _ in 0..MAX_DEPTH + 3 {
        w.end();
    }
    assert_eq!(parse_page_header(&w.out), Err(PageError::TooDeep));
    // Too-long varint; unknown wire type; empty input.
    let mut bytes = vec![0x15];
    bytes.extend_from_slice(&[0xff; 11]);
    assert!(matches!(
        parse_page_header(&bytes),
        Err(PageError::VarintTooLong { .. }) | Err(PageError::IntOutOfRange { .. })
    ));
    assert!(matches!(
        parse_page_header(&[0xfe]),
        Err(PageError::UnknownWireType { wire_type: 14, .. })
    ));
    assert!(matches!(
        parse_page_header(&[]),
        Err(PageError::Truncated { at: 0, len: 0 })
    ));
    // A lying list length ends at the slice's end.
    let mut w = W::start();
    w.field(20, 9);
    w.out.push(0xf5);
    w.varint(u32::MAX as u64);
    w.out.extend_from_slice(&[2, 4]);
    assert!(matches!(
        parse_page_header(&w.out),
        Err(PageError::Truncated { .. })
    ));
}

/// Real headers from every writer setting, truncated at every length and
/// mutated (bit flips, byte overwrites, spliced bytes) thousands of times:
/// the parser returns Ok or Err, never panics, never reports reading past
/// its input; walks and plans of corrupted chunks do not panic either.
#[test]
fn header_fuzz_never_panics() {
    let batch = rich_batch();
    let mut headers: Vec<Vec<u8>> = Vec::new();
    let mut chunks: Vec<(Bytes, usize, usize)> = Vec::new();
    for (i, (_, props)) in settings().into_iter().enumerate() {
        let bytes = write(&batch, props);
        let md = metadata(&bytes);
        for col in 0..md.row_group(0).num_columns() {
            let pages = walk_pieces(&bytes, &[whole_chunk(&md, 0, col)]).unwrap();
            for p in pages.iter().take(2) {
                headers.push(bytes[p.offset..p.body_offset].to_vec());
            }
        }
        if i % 4 == 0 {
            chunks.push((bytes, 0, 7));
        }
    }
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let mut parsed = 0usize;
    for h in &headers {
        for cut in 0..h.len() {
            let r = parse_page_header(&h[..cut]);
            assert!(
                r.is_err(),
                "a header cut to {cut} of {} bytes parsed",
                h.len()
            );
        }
    }
    for _ in 0..20_000 {
        let mut h = headers[rng.below(headers.len() as u64) as usize].clone();
        match rng.below(4) {
            0 => {
                for _ in 0..=rng.below(3) {
                    let bit = rng.below(h.len() as u64 * 8) as usize;
                    h[bit / 8] ^= 1 << (bit % 8);
                }
            }
            1 => {
                let at = rng.below(h.len() as u64) as usize;
                h[at] = rng.next() as u8;
            }
            2 => {
                let at = rng.below(h.len() as u64) as usize;
                h.insert(at, rng.next() as u8);
            }
            _ => {
                let at = rng.below(h.len() as u64) as usize;
                h.remove(at);
            }
        }
        if let Ok((_, n)) = parse_page_header(&h) {
            assert!(n <= h.len());
            parsed += 1;
        }
    }
    assert!(parsed > 0, "no mutation parsed at all");
    // Corrupted chunks: walk and plan them, expecting no panic.
    for (bytes, rg, col) in &chunks {
        let md = metadata(bytes);
        let piece = whole_chunk(&md, *rg, *col);
        let meta = md.row_group(*rg).column(*col);
        for _ in 0..300 {
            let mut b = bytes.to_vec();
            for _ in 0..=rng.below(4) {
                let at = piece.buffer_offset + rng.below(piece.len as u64) as usize;
                b[at] ^= 1 << rng.below(8);
            }
            if let Ok(pages) = walk_pieces(&b, &[piece]) {
                let input = ColumnInput {
                    leaf: *col,
                    descr: meta.column_descr(),
                    meta,
                    pages: &pages,
                    buffer: StoredBytes::Host(&b),
                    page_ranges: None,
                };
                let _ = plan_row_group(*rg, &[input]);
            }
        }
    }
}

// ----- walk ---------------------------------------------------------------

/// A walk that reads exactly what [`HeaderWalk::wants`] asks for, as the
/// decoder reads page headers from a file: its result and the bytes it read.
fn walk_in_windows(buffer: &[u8], pieces: &[Piece]) -> (Result<Vec<PageInfo>, WalkError>, usize) {
    let mut walk = HeaderWalk::new(pieces, buffer.len());
    let mut read = 0;
    loop {
        let want = match walk.wants() {
            Ok(Some(want)) => want,
            Ok(None) => return (Ok(walk.finish()), read),
            Err(e) => return (Err(e), read),
        };
        assert!(want.len >= 1 && want.len <= want.rest, "{want:?}");
        read += want.len;
        let bytes = &buffer[want.buffer_offset..want.buffer_offset + want.len];
        if let Err(e) = walk.push(bytes) {
            return (Err(e), read);
        }
    }
}

/// Reading only the page headers, a window at a time, finds the pages (and
/// the errors) a walk over the whole buffer finds: on every writer
/// setting's chunks, on headers longer than the first window (page
/// statistics of long strings), and on chunks with bytes flipped anywhere.
#[test]
fn header_windows_walk_as_the_buffer_does() {
    let mut files: Vec<Bytes> = settings()
        .into_iter()
        .map(|(_, props)| write(&rich_batch(), props))
        .collect();
    // Headers over the first window: page statistics of 2,000-byte strings.
    let long: Vec<String> = (0..64).map(|i| format!("{i:04}").repeat(500)).collect();
    let schema = Arc::new(Schema::new(vec![Field::new("s", DataType::Utf8, false)]));
    let batch = RecordBatch::try_new(schema, vec![Arc::new(StringArray::from(long))]).unwrap();
    let stats = WriterProperties::builder()
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_statistics_truncate_length(None)
        .set_write_page_header_statistics(true)
        .set_data_page_row_count_limit(8)
        .set_write_batch_size(8)
        .build();
    files.push(write(&batch, stats));
    let (mut chunks, mut long_headers, mut flipped_errors) = (0, 0, 0);
    let mut rng = Rng(0x5eed_2026_1204_0001);
    for bytes in &files {
        let md = metadata(bytes);
        for col in 0..md.row_group(0).num_columns() {
            let piece = whole_chunk(&md, 0, col);
            let whole = walk_pieces(bytes, &[piece]);
            let (windowed, read) = walk_in_windows(bytes, &[piece]);
            assert_eq!(windowed, whole, "column {col}");
            let pages = whole.unwrap();
            long_headers += pages
                .iter()
                .filter(|p| p.header_len > HEADER_WINDOW)
                .count();
            // Headers only: a window per page, more only for long headers.
            let header_bytes: usize = pages.iter().map(|p| p.header_len).sum();
            let rereads: usize = pages
                .iter()
                .filter(|p| p.header_len > HEADER_WINDOW)
                .count();
            assert!(read <= (pages.len() + 2 * rereads) * HEADER_WINDOW.max(header_bytes));
            chunks += 1;
            for _ in 0..40 {
                let mut b = bytes.to_vec();
                let at = piece.buffer_offset + rng.below(piece.len as u64) as usize;
                b[at] ^= 1 << rng.below(8);
                let whole = walk_pieces(&b, &[piece]);
                flipped_errors += usize::from(whole.is_err());
                assert_eq!(
                    walk_in_windows(&b, &[piece]).0,
                    whole,
                    "column {col}, byte {at}"
                );
            }
        }
    }
    assert!(chunks > 50, "{chunks} chunks");
    assert!(long_headers > 0, "no header longer than the first window");
    assert!(flipped_errors > 0, "no flipped chunk failed its walk");
}

#[test]
fn walk_checks_pieces() {
    let batch = rich_batch();
    let bytes = write(
        &batch,
        props(WriterVersion::PARQUET_1_0, Compression::SNAPPY, true),
    );
    let md = metadata(&bytes);
    let col = 6; // "s": dictionary page then data pages
    let whole = whole_chunk(&md, 0, col);
    let pages = walk_pieces(&bytes, &[whole]).unwrap();
    assert!(matches!(pages[0].header.kind, PageKind::Dictionary(_)));
    assert!(pages.len() > 3);

    // Split into one piece per page, each moved elsewhere in a buffer:
    // the same pages, located in their new places.
    let mut buffer = vec![0u8; 64];
    let mut pieces = Vec::new();
    for p in &pages {
        buffer.extend_from_slice(&[0xee; 3]);
        pieces.push(Piece {
            file_offset: p.file_offset,
            buffer_offset: buffer.len(),
            len: p.len(),
        });
        buffer.extend_from_slice(&bytes[p.offset..p.offset + p.len()]);
    }
    let moved = walk_pieces(&buffer, &pieces).unwrap();
    assert_eq!(moved.len(), pages.len());
    for ((m, p), piece) in moved.iter().zip(&pages).zip(&pieces) {
        assert_eq!(
            (m.header, m.header_len, m.file_offset),
            (p.header, p.header_len, p.file_offset)
        );
        assert_eq!(m.offset, piece.buffer_offset);
        assert_eq!(m.body_offset, piece.buffer_offset + p.header_len);
    }
    // Dictionary page plus a subset of pages (page pruning) walks too.
    let kept = [pieces[0], pieces[2], pieces[3]];
    assert_eq!(walk_pieces(&buffer, &kept).unwrap().len(), 3);

    // A piece cut inside a page.
    let mut cut = pieces[1];
    cut.len -= 1;
    assert!(matches!(
        walk_pieces(&buffer, &[pieces[0], cut]),
        Err(WalkError::PageOutsidePiece { page: 1, .. })
    ));
    // A piece starting inside a page: its "header" is body bytes.
    let mut inside = pieces[1];
    inside.buffer_offset += 5;
    inside.file_offset += 5;
    inside.len -= 5;
    assert!(walk_pieces(&buffer, &[pieces[0], inside]).is_err());
    // A gap in a piece: trailing bytes that are not a page.
    let mut buffer2 = bytes.to_vec();
    let mut longer = whole;
    longer.len += 1;
    buffer2[whole.buffer_offset + whole.len] = 0;
    assert!(walk_pieces(&buffer2, &[longer]).is_err());
    // Pieces out of order or overlapping.
    assert!(matches!(
        walk_pieces(&buffer, &[pieces[2], pieces[1]]),
        Err(WalkError::PiecesOverlap { piece: 1, .. })
    ));
    // Dictionary page not first.
    let dictionary_later = Piece {
        file_offset: pieces[1].file_offset + 1_000_000,
        ..pieces[0]
    };
    assert!(matches!(
        walk_pieces(&buffer, &[pieces[1], dictionary_later]),
        Err(WalkError::DictionaryNotFirst { page: 1, .. })
    ));
    // A piece past the buffer's end.
    let past = Piece {
        buffer_offset: buffer.len() - 2,
        ..pieces[1]
    };
    assert!(matches!(
        walk_pieces(&buffer, &[past]),
        Err(WalkError::PieceOutsideBuffer { .. })
    ));
    let huge = Piece {
        buffer_offset: usize::MAX,
        len: 2,
        file_offset: u64::MAX,
    };
    assert!(walk_pieces(&buffer, &[huge]).is_err());
}

// ----- levels ------------------------------------------------------------

/// Encodes `values` as the hybrid: alternating RLE runs (for repeats) and
/// bit-packed runs, like writers do, to test the decoder on any width.
fn encode_hybrid(values: &[u32], bit_width: u8, rng: &mut Rng) -> Vec<u8> {
    let mut out = Vec::new();
    let push_varint = |out: &mut Vec<u8>, mut v: u64| loop {
        let b = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(b);
            break;
        }
        out.push(b | 0x80);
    };
    let mut i = 0;
    while i < values.len() {
        if rng.below(2) == 0 {
            // RLE run of the same value (as long as it repeats).
            let mut j = i + 1;
            while j < values.len() && values[j] == values[i] && j - i < 1000 {
                j += 1;
            }
            push_varint(&mut out, ((j - i) as u64) << 1);
            let bytes = usize::from(bit_width).div_ceil(8);
            out.extend_from_slice(&values[i].to_le_bytes()[..bytes]);
            i = j;
        } else {
            // Bit-packed groups, zero-padded past the end.
            let groups = (1 + rng.below(4) as usize).min((values.len() - i).div_ceil(8));
            push_varint(&mut out, ((groups as u64) << 1) | 1);
            let mut acc = 0u128;
            let mut bits = 0;
            for k in 0..groups * 8 {
                let v = values.get(i + k).copied().unwrap_or(0);
                acc |= u128::from(v) << bits;
                bits += u32::from(bit_width);
                while bits >= 8 {
                    out.push(acc as u8);
                    acc >>= 8;
                    bits -= 8;
                }
            }
            assert_eq!(bits, 0);
            i += groups * 8;
        }
    }
    out
}

#[test]
fn hybrid_round_trips_every_bit_width() {
    let mut rng = Rng(42);
    for width in 0..=32u8 {
        for len in [0usize, 1, 7, 8, 9, 100, 1000] {
            let max = if width == 0 {
                0
            } else {
                u32::MAX >> (32 - width)
            };
            let values: Vec<u32> = (0..len)
                .map(|_| {
                    if rng.below(3) == 0 {
                        max
                    } else {
                        (rng.next() as u32) & max
                    }
                })
                .collect();
            let bytes = encode_hybrid(&values, width, &mut rng);
            let got = decode_hybrid(&bytes, width, len).unwrap();
            assert_eq!(got, values, "width {width} len {len}");
            // Never more than asked, even inside a run.
            if len > 2 {
                assert_eq!(
                    decode_hybrid(&bytes, width, len - 2).unwrap(),
                    values[..len - 2]
                );
            }
            // Truncated data: an error, never a panic or a short output.
            if len > 0 && !bytes.is_empty() {
                for cut in [bytes.len() - 1, bytes.len() / 2, 0] {
                    if let Ok(v) = decode_hybrid(&bytes[..cut], width, len) {
                        assert_eq!(v.len(), len);
                    }
                }
                assert!(decode_hybrid(&bytes, width, len + 1000).is_err());
            }
        }
    }
    assert_eq!(decode_hybrid(&[], 33, 1), Err(LevelError::BadBitWidth(33)));
    // An RLE run of a million values from three bytes: bounded by `count`.
    assert_eq!(
        decode_hybrid(&[0x80, 0x89, 0x7a, 1], 1, 5).unwrap(),
        vec![1; 5]
    );
    // A zero header (an empty RLE run) ends the stream, as arrow-rs and
    // Arrow C++ read it: what follows it is not values.
    assert_eq!(
        decode_hybrid(&[0x04, 1, 0x00, 0x04, 1], 1, 2).unwrap(),
        vec![1; 2]
    );
    assert!(decode_hybrid(&[0x04, 1, 0x00, 0x04, 1], 1, 3).is_err());
    assert!(decode_hybrid(&[0x00, 0x04, 1], 1, 1).is_err());
    // Random garbage: Ok with exactly `count` values, or Err.
    for _ in 0..5000 {
        let data: Vec<u8> = (0..rng.below(40)).map(|_| rng.next() as u8).collect();
        let width = rng.below(36) as u8;
        let count = rng.below(300) as usize;
        if let Ok(v) = decode_hybrid(&data, width, count) {
            assert_eq!(v.len(), count);
        }
    }
}

#[test]
fn level_sections() {
    assert_eq!(bit_width(0), 0);
    assert_eq!(bit_width(1), 1);
    assert_eq!(bit_width(255), 8);
    assert_eq!(bit_width(u32::MAX), 32);
    let body = [3, 0, 0, 0, 0x02, 0x01, 0xaa, 9, 9];
    assert_eq!(split_length_prefixed(&body).unwrap(), (&body[4..7], 7));
    assert_eq!(
        v1_layout(&body, 1).unwrap(),
        V1Layout {
            def_offset: 4,
            def_len: 3,
            values_offset: 7
        }
    );
    assert_eq!(v1_layout(&body, 0).unwrap().values_offset, 0);
    assert!(matches!(
        split_length_prefixed(&[9, 0, 0, 0, 1]),
        Err(LevelError::BadLengthPrefix {
            len: 9,
            available: 1
        })
    ));
    assert!(split_length_prefixed(&[1, 0]).is_err());
    assert!(split_length_prefixed(&[0xff, 0xff, 0xff, 0xff]).is_err());
    assert_eq!(dictionary_bit_width(&[5, 1]), Ok(5));
    assert_eq!(dictionary_bit_width(&[]), Err(LevelError::MissingBitWidth));
    assert_eq!(
        dictionary_bit_width(&[40]),
        Err(LevelError::BadBitWidth(40))
    );
    // Indices: width 2, bit-packed group of 8.
    let idx = decode_dictionary_indices(&[2, 0x03, 0b11_10_01_00, 0b00_01_10_11], 8).unwrap();
    assert_eq!(idx, vec![0, 1, 2, 3, 3, 2, 1, 0]);
    // RLE booleans: length 2, run of 5 trues.
    assert_eq!(
        decode_rle_booleans(&[2, 0, 0, 0, 0x0a, 1], 5).unwrap(),
        vec![true; 5]
    );
}

// ----- column types -------------------------------------------------------

fn view(t: &DataType) -> DataType {
    match t {
        DataType::Utf8 => DataType::Utf8View,
        DataType::Binary => DataType::BinaryView,
        t => t.clone(),
    }
}

fn check_types_like_arrow(schema: &SchemaDescriptor) -> usize {
    let arrow = parquet_to_arrow_schema(schema, None).unwrap();
    let mut checked = 0;
    for (i, field) in arrow.fields().iter().enumerate() {
        let c = schema.column(i);
        let ours = column_type(&c).unwrap_or_else(|e| panic!("{}: {e}", field.name()));
        assert_eq!(
            ours.data_type,
            view(field.data_type()),
            "column {}",
            field.name()
        );
        assert_eq!(
            ours.nullable,
            field.is_nullable(),
            "column {}",
            field.name()
        );
        checked += 1;
    }
    checked
}

#[test]
fn output_types_match_arrow_rs() {
    // Files written by arrow-rs (logical types).
    let bytes = write(
        &rich_batch(),
        props(WriterVersion::PARQUET_1_0, Compression::UNCOMPRESSED, true),
    );
    let md = metadata(&bytes);
    let schema = md.file_metadata().schema_descr();
    assert_eq!(check_types_like_arrow(schema), rich_batch().num_columns());
    let ty = |name: &str| {
        let i = (0..schema.num_columns())
            .find(|&i| schema.column(i).name() == name)
            .unwrap();
        column_type(&schema.column(i)).unwrap()
    };
    assert_eq!(ty("s").data_type, DataType::Utf8View);
    assert_eq!(ty("s").kind, Kind::ByteArray);
    assert_eq!(ty("s").out_width, 16);
    assert_eq!(
        ty("ts_us").data_type,
        DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
    );
    assert_eq!(ty("dec9").conversion, Conversion::I32ToDecimal128);
    assert_eq!(ty("dec18").conversion, Conversion::I64ToDecimal128);
    assert_eq!(ty("dec30").conversion, Conversion::BeToDecimal128);
    assert_eq!(ty("dec30").type_length, 13);
    assert_eq!(ty("dec30").out_width, 16);
    assert_eq!(
        (ty("dec50").conversion, ty("dec50").out_width),
        (Conversion::BeToDecimal256, 32)
    );
    assert_eq!(
        (ty("ivl").conversion, ty("ivl").out_width),
        (Conversion::IntervalDayTime, 8)
    );
    assert_eq!(ty("i8").conversion, Conversion::I32To8);
    assert_eq!(
        (ty("u16").conversion, ty("u16").out_width),
        (Conversion::I32To16, 2)
    );
    assert_eq!((ty("fsb").type_length, ty("fsb").out_width), (5, 5));
    assert_eq!((ty("b").kind, ty("b").out_width), (Kind::Boolean, 0));
    assert!(ty("b").nullable && !ty("seq").nullable);

    // Hand-written schemas: legacy converted types and logical types
    // arrow-rs does not write.
    let legacy = parse_message_type(
        "message m {
            optional int32 a (INT_8); required int32 b (UINT_16); optional int32 c (UINT_32);
            optional int32 d (DATE); optional int32 e (TIME_MILLIS); optional int32 f (DECIMAL(9,2));
            optional int64 g (TIMESTAMP_MILLIS); optional int64 h (TIMESTAMP_MICROS);
            optional int64 i (UINT_64); optional int64 j (INT_64); optional int64 k (DECIMAL(18,4));
            optional int64 l (TIME_MICROS);
            optional binary m (UTF8); optional binary n (JSON); optional binary o (ENUM);
            optional binary p (BSON); optional binary q;
            optional binary ba (DECIMAL(10,2)); required binary bb (DECIMAL(38,0));
            optional binary bc (DECIMAL(40,2)); required binary bd (DECIMAL(76,0));
            optional fixed_len_byte_array(16) r (DECIMAL(38,10));
            optional fixed_len_byte_array(3) s;
            optional fixed_len_byte_array(2) t (FLOAT16);
            optional fixed_len_byte_array(16) u (UUID);
            optional fixed_len_byte_array(20) ga (DECIMAL(40,2));
            required fixed_len_byte_array(32) gb (DECIMAL(76,10));
            optional fixed_len_byte_array(12) gc (INTERVAL);
            optional int64 v (TIMESTAMP(NANOS,false));
            optional int64 w (TIME(NANOS,true));
            optional int32 x (INTEGER(8,false));
            required binary y (STRING);
            optional boolean z; required float fa; required double fb;
        }",
    )
    .unwrap();
    let legacy = SchemaDescriptor::new(Arc::new(legacy));
    check_types_like_arrow(&legacy);

    // INT96 (Spark's, Impala's timestamps): nanoseconds as arrow-rs gives.
    let int96 = parse_message_type("message m { optional int96 a; required int96 b; }").unwrap();
    check_types_like_arrow(&SchemaDescriptor::new(Arc::new(int96)));

    // UNKNOWN (always null) of any physical type: arrow-rs's Null.
    let unknown = parse_message_type(
        "message m {
            optional int32 a (UNKNOWN); required int64 b (UNKNOWN);
            optional binary c (UNKNOWN); optional boolean d (UNKNOWN);
            optional fixed_len_byte_array(5) e (UNKNOWN); optional double f (UNKNOWN);
        }",
    )
    .unwrap();
    let unknown = SchemaDescriptor::new(Arc::new(unknown));
    assert_eq!(check_types_like_arrow(&unknown), 6);
    assert!((0..6).all(|i| column_type(&unknown.column(i)).unwrap().is_null()));

    // Outside the coverage: a typed Unsupported naming the column.
    let out = parse_message_type(
        "message m {
            repeated int32 b;
            optional group c { optional int32 d; }
            required group e { required int64 f; }
            optional group m (LIST) { repeated group list { optional int32 element; } }
        }",
    )
    .unwrap();
    let out = SchemaDescriptor::new(Arc::new(out));
    for i in 0..out.num_columns() {
        let c = out.column(i);
        match column_type(&c) {
            Err(DecodePlanError::Unsupported { column, what }) => {
                assert_eq!(column, c.path().string());
                assert!(!what.is_empty());
            }
            other => panic!("{}: {other:?}", c.path()),
        }
    }
    assert!(matches!(
        page_codec(&out.column(0), Compression::LZO),
        Err(DecodePlanError::Unsupported { .. })
    ));
    assert_eq!(
        page_codec(&out.column(0), Compression::BROTLI(Default::default())).unwrap(),
        Some(ChunkCodec::Brotli)
    );
    assert_eq!(
        page_codec(&out.column(0), Compression::LZ4).unwrap(),
        Some(ChunkCodec::Lz4Legacy)
    );
    assert_eq!(
        page_codec(&out.column(0), Compression::LZ4_RAW).unwrap(),
        Some(ChunkCodec::Gpu(Codec::Lz4))
    );
}

// ----- decode plans ------------------------------------------------------

fn decompress(codec: Codec, src: &[u8], len: usize) -> Vec<u8> {
    match codec {
        Codec::Snappy => snap::raw::Decoder::new().decompress_vec(src).unwrap(),
        Codec::Zstd => zstd::bulk::decompress(src, len).unwrap(),
        Codec::Lz4 => lz4_flex::block::decompress(src, len).unwrap(),
        Codec::Gzip => {
            let mut out = Vec::new();
            flate2::read::MultiGzDecoder::new(src)
                .read_to_end(&mut out)
                .unwrap();
            out
        }
        Codec::Deflate => unreachable!("the planner makes no Deflate jobs"),
    }
}

/// Runs a plan's decompression jobs on the CPU (nvCOMP's with the codecs'
/// crates, the host's with the decoder's own): the scratch buffer.
fn run_jobs(plan: &DecodePlan, rg: &[u8]) -> Vec<u8> {
    let mut scratch = vec![0u8; plan.scratch_bytes];
    let mut ends = Vec::new();
    let mut last = None;
    for j in &plan.host_jobs {
        assert_eq!(j.dst_offset % SCRATCH_ALIGN, 0);
        assert!(j.dst_offset + j.dst_len <= plan.scratch_bytes);
        let out = &mut scratch[j.dst_offset..j.dst_offset + j.dst_len];
        let src = &rg[j.src_offset..j.src_offset + j.src_len];
        super::host_codec::decompress_into(j.codec, src, out).unwrap();
        ends.push((j.dst_offset, j.dst_offset + j.dst_len));
    }
    for j in &plan.jobs {
        // A page's first job starts an aligned region (a Hadoop-framed LZ4
        // page's later blocks follow the one before).
        if last != Some((j.column, j.page)) {
            assert_eq!(j.dst_offset % SCRATCH_ALIGN, 0);
        }
        last = Some((j.column, j.page));
        assert!(j.dst_offset + j.dst_len <= plan.scratch_bytes);
        let out = decompress(
            j.codec,
            &rg[j.src_offset..j.src_offset + j.src_len],
            j.dst_len,
        );
        assert_eq!(out.len(), j.dst_len, "{j:?}");
        scratch[j.dst_offset..j.dst_offset + j.dst_len].copy_from_slice(&out);
        ends.push((j.dst_offset, j.dst_offset + j.dst_len));
    }
    // Job outputs never overlap.
    ends.sort();
    assert!(ends.windows(2).all(|w| w[0].1 <= w[1].0));
    scratch
}

fn region<'a>(r: &Region, rg: &'a [u8], scratch: &'a [u8]) -> &'a [u8] {
    let buf = match r.buffer {
        BufferKind::RowGroup => rg,
        BufferKind::Scratch => scratch,
    };
    &buf[r.offset..r.offset + r.len]
}

/// Physical values of a PLAIN section: `count` values (bytes each).
fn plain_values(ty: &ColumnType, data: &[u8], count: usize) -> Vec<Vec<u8>> {
    let mut out = Vec::with_capacity(count);
    let mut at = 0;
    for i in 0..count {
        match ty.kind {
            Kind::Boolean => out.push(vec![(data[i / 8] >> (i % 8)) & 1]),
            Kind::ByteArray => {
                let n = u32::from_le_bytes(data[at..at + 4].try_into().unwrap()) as usize;
                out.push(data[at + 4..at + 4 + n].to_vec());
                at += 4 + n;
            }
            _ => {
                let w = ty.type_length as usize;
                out.push(data[at..at + w].to_vec());
                at += w;
            }
        }
    }
    out
}

/// A CPU reference decode of a planned column: per output row, the
/// physical value's bytes (booleans: one byte 0/1), or None for a null.
fn cpu_decode(col: &ColumnDecode, rg: &[u8], scratch: &[u8]) -> Vec<Option<Vec<u8>>> {
    let dict = col
        .dictionary
        .as_ref()
        .map(|d| plain_values(&col.ty, region(&d.data, rg, scratch), d.num_values as usize));
    let mut out = Vec::new();
    for p in &col.pages {
        assert_eq!(p.out_row, out.len() as u64, "{}: out_row", col.column);
        let data = region(&p.data, rg, scratch);
        let n = p.num_values as usize;
        let (defs, values) = match (p.version, col.ty.nullable) {
            (_, false) => (vec![1; n], data),
            (PageVersion::V1, true) => {
                let l = v1_layout(data, 1).unwrap();
                let defs = decode_hybrid(&data[l.def_offset..l.def_offset + l.def_len], 1, n);
                (defs.unwrap(), &data[l.values_offset..])
            }
            (PageVersion::V2, true) => {
                let levels = region(p.def_levels.as_ref().unwrap(), rg, scratch);
                (decode_hybrid(levels, 1, n).unwrap(), data)
            }
        };
        let valid = defs.iter().filter(|d| **d == 1).count();
        if let Some(nulls) = p.num_nulls {
            assert_eq!(nulls as usize, n - valid);
        }
        let vals = if valid == 0 {
            Vec::new()
        } else {
            match p.class {
                codes::Encoding::Plain => plain_values(&col.ty, values, valid),
                codes::Encoding::DeltaBinaryPacked => {
                    let w = col.ty.type_length as usize;
                    let plain: Vec<u8> = delta_values(values)
                        .iter()
                        .flat_map(|v| v.to_le_bytes()[..w].to_vec())
                        .collect();
                    plain_values(&col.ty, &plain, valid)
                }
                codes::Encoding::ByteStreamSplit => {
                    // Byte b of value i is at b * n + i: back to PLAIN.
                    let w = col.ty.type_length as usize;
                    let n = values.len() / w;
                    let plain: Vec<u8> = (0..n * w).map(|k| values[(k % w) * n + k / w]).collect();
                    plain_values(&col.ty, &plain, valid)
                }
                codes::Encoding::Dictionary => decode_dictionary_indices(values, valid)
                    .unwrap()
                    .into_iter()
                    .map(|i| dict.as_ref().unwrap()[i as usize].clone())
                    .collect(),
                codes::Encoding::Rle => decode_rle_booleans(values, valid)
                    .unwrap()
                    .into_iter()
                    .map(|b| vec![b as u8])
                    .collect(),
                codes::Encoding::DeltaLengthByteArray => {
                    let (lengths, end) = delta_values_end(values);
                    let mut at = end;
                    let mut out = Vec::new();
                    for l in lengths {
                        let l = l as i32 as usize;
                        out.push(values[at..at + l].to_vec());
                        at += l;
                    }
                    out
                }
                codes::Encoding::DeltaByteArray => delta_byte_array_values(values),
            }
        };
        // BYTE_ARRAY decimals: sign-extended to 16 big-endian bytes.
        let vals =
            if col.ty.kind == Kind::ByteArray && col.ty.conversion == Conversion::BeToDecimal128 {
                vals.into_iter().map(|v| be_16(&v)).collect()
            } else {
                vals
            };
        let mut it = vals.into_iter();
        out.extend(defs.iter().map(|d| if *d == 1 { it.next() } else { None }));
    }
    out
}

/// The physical bytes arrow-rs writes for row `row` of `array`.
fn physical(array: &ArrayRef, ty: &ColumnType, row: usize) -> Option<Vec<u8>> {
    use arrow::array::AsArray;
    use arrow::datatypes::*;
    // A Null array has no physical nulls: every row is null all the same.
    if array.is_null(row) || array.data_type() == &DataType::Null {
        return None;
    }
    Some(match array.data_type() {
        DataType::Int8 => (array.as_primitive::<Int8Type>().value(row) as i32)
            .to_le_bytes()
            .to_vec(),
        DataType::Int16 => (array.as_primitive::<Int16Type>().value(row) as i32)
            .to_le_bytes()
            .to_vec(),
        DataType::UInt8 => (array.as_primitive::<UInt8Type>().value(row) as i32)
            .to_le_bytes()
            .to_vec(),
        DataType::UInt16 => (array.as_primitive::<UInt16Type>().value(row) as i32)
            .to_le_bytes()
            .to_vec(),
        DataType::Int32 => array
            .as_primitive::<Int32Type>()
            .value(row)
            .to_le_bytes()
            .to_vec(),
        DataType::UInt32 => array
            .as_primitive::<UInt32Type>()
            .value(row)
            .to_le_bytes()
            .to_vec(),
        DataType::Date32 => array
            .as_primitive::<Date32Type>()
            .value(row)
            .to_le_bytes()
            .to_vec(),
        DataType::Int64 => array
            .as_primitive::<Int64Type>()
            .value(row)
            .to_le_bytes()
            .to_vec(),
        DataType::UInt64 => array
            .as_primitive::<UInt64Type>()
            .value(row)
            .to_le_bytes()
            .to_vec(),
        DataType::Timestamp(TimeUnit::Millisecond, _) => array
            .as_primitive::<TimestampMillisecondType>()
            .value(row)
            .to_le_bytes()
            .to_vec(),
        DataType::Timestamp(TimeUnit::Microsecond, _) => array
            .as_primitive::<TimestampMicrosecondType>()
            .value(row)
            .to_le_bytes()
            .to_vec(),
        DataType::Timestamp(TimeUnit::Nanosecond, _) => array
            .as_primitive::<TimestampNanosecondType>()
            .value(row)
            .to_le_bytes()
            .to_vec(),
        DataType::Float32 => array
            .as_primitive::<Float32Type>()
            .value(row)
            .to_le_bytes()
            .to_vec(),
        DataType::Float64 => array
            .as_primitive::<Float64Type>()
            .value(row)
            .to_le_bytes()
            .to_vec(),
        DataType::Boolean => vec![array.as_boolean().value(row) as u8],
        DataType::Utf8 => array.as_string::<i32>().value(row).as_bytes().to_vec(),
        DataType::Binary => array.as_binary::<i32>().value(row).to_vec(),
        DataType::FixedSizeBinary(_) => array.as_fixed_size_binary().value(row).to_vec(),
        DataType::Decimal128(..) => {
            let v = array.as_primitive::<Decimal128Type>().value(row);
            match ty.conversion {
                Conversion::I32ToDecimal128 => (v as i32).to_le_bytes().to_vec(),
                Conversion::I64ToDecimal128 => (v as i64).to_le_bytes().to_vec(),
                // BYTE_ARRAY: the CPU decode sign-extends to 16 bytes.
                _ if ty.kind == Kind::ByteArray => v.to_be_bytes().to_vec(),
                _ => v.to_be_bytes()[16 - ty.type_length as usize..].to_vec(),
            }
        }
        DataType::Decimal256(..) => {
            let v = array.as_primitive::<Decimal256Type>().value(row);
            v.to_be_bytes()[32 - ty.type_length as usize..].to_vec()
        }
        DataType::Interval(IntervalUnit::DayTime) => {
            let v = array.as_primitive::<IntervalDayTimeType>().value(row);
            [[0; 4], v.days.to_le_bytes(), v.milliseconds.to_le_bytes()].concat()
        }
        t => panic!("no physical form for {t}"),
    })
}

/// Big-endian two's complement bytes sign-extended to 16 (empty: zero, as
/// arrow-rs reads it).
fn be_16(v: &[u8]) -> Vec<u8> {
    let fill = if v.first().is_some_and(|b| b & 0x80 != 0) {
        0xff
    } else {
        0
    };
    let mut out = vec![fill; 16 - v.len()];
    out.extend_from_slice(v);
    out
}

/// A DELTA_BYTE_ARRAY section's values, by the specification's rules:
/// prefix lengths, suffix lengths, then the suffixes.
fn delta_byte_array_values(section: &[u8]) -> Vec<Vec<u8>> {
    let (prefixes, e1) = delta_values_end(section);
    let (suffixes, e2) = delta_values_end(&section[e1..]);
    assert_eq!(prefixes.len(), suffixes.len());
    let mut at = e1 + e2;
    let mut out: Vec<Vec<u8>> = Vec::new();
    for (p, s) in prefixes.iter().zip(&suffixes) {
        let mut v = out
            .last()
            .map_or(vec![], |prev| prev[..*p as usize].to_vec());
        v.extend_from_slice(&section[at..at + *s as usize]);
        at += *s as usize;
        out.push(v);
    }
    out
}

/// A DELTA_BINARY_PACKED section's values, by the specification's rules
/// (sums wrap in 64 bits; the low 32 bits are INT32's), for the plan tests.
fn delta_values(section: &[u8]) -> Vec<u64> {
    delta_values_end(section).0
}

/// [`delta_values`], and where the section's stream ends (after its last
/// miniblock, padded).
fn delta_values_end(section: &[u8]) -> (Vec<u64>, usize) {
    fn uleb(section: &[u8], at: &mut usize) -> u64 {
        let (mut v, mut shift) = (0u64, 0);
        loop {
            let b = section[*at];
            *at += 1;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return v;
            }
            shift += 7;
        }
    }
    let mut at = 0;
    let unzigzag = |v: u64| (v >> 1) ^ 0u64.wrapping_sub(v & 1);
    let block = uleb(section, &mut at) as usize;
    let minis = uleb(section, &mut at) as usize;
    let total = uleb(section, &mut at) as usize;
    let mut value = unzigzag(uleb(section, &mut at));
    let per_mini = block / minis;
    let mut out = vec![value];
    while out.len() < total {
        let min = unzigzag(uleb(section, &mut at));
        let widths: Vec<usize> = section[at..at + minis]
            .iter()
            .map(|w| *w as usize)
            .collect();
        at += minis;
        for width in widths {
            if out.len() >= total {
                break;
            }
            for k in 0..per_mini {
                let bit = k * width;
                let mut raw = 0u128;
                for b in 0..width.div_ceil(8) + 1 {
                    let byte = section.get(at + bit / 8 + b).copied().unwrap_or(0);
                    raw |= u128::from(byte) << (8 * b);
                }
                let delta = ((raw >> (bit % 8)) as u64)
                    & if width == 64 {
                        u64::MAX
                    } else {
                        (1 << width) - 1
                    };
                if out.len() < total {
                    value = value.wrapping_add(min.wrapping_add(delta));
                    out.push(value);
                }
            }
            at += per_mini * width / 8;
        }
    }
    (out, at)
}

/// The row-group buffer the fetch would fill: its reads back to back.
fn fetched_buffer(bytes: &Bytes, reads: &[crate::engine::RangeRead]) -> Vec<u8> {
    let mut buf = Vec::new();
    for r in reads {
        assert_eq!(r.buffer_offset, buf.len());
        let start = r.file_offset as usize;
        buf.extend_from_slice(&bytes[start..start + r.len]);
    }
    buf
}

/// Plans, runs (jobs and a CPU decode) and checks every row group of a
/// file scanned with `request`; returns the decoded rows per row group.
fn plan_and_decode(
    bytes: &Bytes,
    request: &ScanRequest,
    batch: &RecordBatch,
    name: &str,
) -> Vec<DecodePlan> {
    let md = metadata(bytes);
    let scan = scan_plan(&md, request).unwrap();
    let mut plans = Vec::new();
    let mut rg_start = vec![0usize];
    for rg in 0..md.num_row_groups() {
        rg_start.push(rg_start[rg] + md.row_group(rg).num_rows() as usize);
    }
    for rg_plan in &scan.row_groups {
        let lay = layout(&scan, rg_plan);
        let buf = fetched_buffer(bytes, &lay.reads);
        let plan = plan_fetched(&md, &scan, rg_plan.index, &buf, &lay.chunks)
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        let scratch = run_jobs(&plan, &buf);
        for col in &plan.columns {
            let name = format!("{name} rg {} {}", rg_plan.index, col.column);
            assert_eq!(
                check_chunk(md.row_group(rg_plan.index).column(col.leaf)).as_ref(),
                Ok(&col.ty),
                "{name}"
            );
            // Every data page's decompressed bytes equal the parquet
            // crate's (v2: values after the levels, levels in place).
            let all = reference_pages(bytes, rg_plan.index, col.leaf);
            let data_ref: Vec<&Page> = all
                .iter()
                .filter(|p| p.page_type() != PageType::DICTIONARY_PAGE)
                .collect();
            for p in &col.pages {
                let first = p.first_row.expect("offset index known");
                let k = md.offset_index().unwrap()[rg_plan.index][col.leaf]
                    .page_locations()
                    .iter()
                    .position(|l| l.first_row_index as u64 == first)
                    .unwrap();
                let r = data_ref[k];
                let buf_ref = r.buffer();
                match r {
                    Page::DataPageV2 {
                        def_levels_byte_len,
                        rep_levels_byte_len,
                        ..
                    } => {
                        let levels = (*def_levels_byte_len + *rep_levels_byte_len) as usize;
                        assert_eq!(
                            region(&p.data, &buf, &scratch),
                            &buf_ref[levels..],
                            "{name}"
                        );
                        if let Some(d) = &p.def_levels {
                            assert_eq!(region(d, &buf, &scratch), &buf_ref[..levels], "{name}");
                        }
                    }
                    _ => assert_eq!(region(&p.data, &buf, &scratch), &buf_ref[..], "{name}"),
                }
                if let Some(w) = &p.work {
                    assert_eq!(w.offset % SCRATCH_ALIGN, 0);
                    assert_eq!(w.len, work_bytes(&col.ty, p.class, p.num_values));
                }
            }
            if let Some(d) = &col.dictionary {
                assert_eq!(
                    region(&d.data, &buf, &scratch),
                    &all[0].buffer()[..],
                    "{name}"
                );
                if let Some(o) = &d.offsets {
                    assert_eq!(o.len, (d.num_values as usize + 1) * 4);
                }
            }
            // The CPU decode of the plan equals arrow-rs's values for the
            // kept pages' rows.
            let decoded = cpu_decode(col, &buf, &scratch);
            assert_eq!(decoded.len() as u64, col.rows, "{name}");
            let array = batch.column(col.leaf);
            let mut at = 0;
            for p in &col.pages {
                let first = rg_start[rg_plan.index] + p.first_row.unwrap() as usize;
                for r in 0..p.num_rows as usize {
                    assert_eq!(
                        decoded[at],
                        physical(array, &col.ty, first + r),
                        "{name}: row {}",
                        first + r
                    );
                    at += 1;
                }
            }
            // Output sizes.
            let bitmap = col.rows.div_ceil(8);
            assert_eq!(col.validity_bytes, if col.ty.nullable { bitmap } else { 0 });
            match col.ty.kind {
                Kind::Boolean => assert_eq!(col.value_bytes, bitmap),
                Kind::ByteArray => {
                    assert_eq!((col.value_bytes, col.view_bytes), (0, col.rows * 16))
                }
                _ => assert_eq!(col.value_bytes, col.rows * u64::from(col.ty.out_width)),
            }
        }
        plans.push(plan);
    }
    plans
}

#[test]
fn plans_decode_like_arrow_rs() {
    let batch = rich_batch();
    let mut jobs = 0;
    let mut seen = std::collections::HashSet::new();
    for (setting, props) in settings() {
        let bytes = write(&batch, props);
        let plans = plan_and_decode(&bytes, &ScanRequest::default(), &batch, &setting);
        for col in plans.iter().flat_map(|p| &p.columns) {
            for p in &col.pages {
                seen.insert((p.version == PageVersion::V2, format!("{:?}", p.class)));
                seen.insert((
                    p.version == PageVersion::V2,
                    format!("nulls {}", p.num_nulls.unwrap_or(1) > 0 && col.ty.nullable),
                ));
                seen.insert((
                    p.version == PageVersion::V2,
                    format!("scratch {:?}", p.data.buffer),
                ));
            }
            let classes: Vec<codes::Encoding> = col.pages.iter().map(|p| p.class).collect();
            if classes.contains(&codes::Encoding::Dictionary)
                && classes.contains(&codes::Encoding::Plain)
            {
                seen.insert((col.pages[0].version == PageVersion::V2, "fallback".into()));
            }
            if classes.contains(&codes::Encoding::Dictionary)
                && classes.contains(&codes::Encoding::DeltaByteArray)
            {
                seen.insert((true, "fallback to DELTA_BYTE_ARRAY".into()));
            }
        }
        let md = metadata(&bytes);
        assert_eq!(plans.len(), md.num_row_groups());
        for plan in &plans {
            let rows = md.row_group(plan.row_group).num_rows() as u64;
            assert_eq!(plan.rows(), Some(rows), "{setting}");
            for col in &plan.columns {
                // No pruning: out_row is the offset index's first row.
                for p in &col.pages {
                    assert_eq!(Some(p.out_row), p.first_row, "{setting}");
                }
            }
            let uncompressed = setting.contains("UNCOMPRESSED");
            let any = !plan.jobs.is_empty() || !plan.host_jobs.is_empty();
            assert_eq!(any, !uncompressed, "{setting}");
            // BROTLI runs on the host; arrow-rs's legacy LZ4 (Hadoop-framed)
            // and GZIP (one member a page) go to nvCOMP.
            let brotli = setting.contains("BROTLI");
            assert_eq!(plan.host_jobs.is_empty(), !brotli, "{setting}");
            assert!(plan.host_jobs.iter().all(|j| j.codec == HostCodec::Brotli));
            jobs += plan.jobs.len();
            for codec in [Codec::Snappy, Codec::Zstd, Codec::Lz4, Codec::Gzip] {
                let s = plan.job_stats(codec);
                let mine: Vec<&DecompressJob> =
                    plan.jobs.iter().filter(|j| j.codec == codec).collect();
                assert_eq!(s.count, mine.len());
                assert_eq!(s.total_dst, mine.iter().map(|j| j.dst_len).sum::<usize>());
                assert_eq!(s.max_dst, mine.iter().map(|j| j.dst_len).max().unwrap_or(0));
            }
        }
    }
    assert!(jobs > 0);
    // Both page versions saw every encoding class, nulls, pages used in
    // place and decompressed, and chunks switching from dictionary to PLAIN.
    for v2 in [false, true] {
        for what in [
            "Plain",
            "Dictionary",
            "ByteStreamSplit",
            "DeltaBinaryPacked",
            "DeltaLengthByteArray",
            "DeltaByteArray",
            "nulls true",
            "scratch RowGroup",
            "scratch Scratch",
            "fallback",
        ] {
            assert!(seen.contains(&(v2, what.to_string())), "v2={v2}: no {what}");
        }
    }
    assert!(seen.contains(&(true, "Rle".to_string())), "no RLE booleans");
    assert!(
        seen.contains(&(true, "fallback to DELTA_BYTE_ARRAY".to_string())),
        "no v2 dictionary fallback to DELTA_BYTE_ARRAY"
    );
}

#[test]
fn null_columns_are_planned_for_their_levels() {
    // arrow-rs writes a Null column as INT32 (UNKNOWN), every value null:
    // planned in every setting, its pages decoded to no values (the CPU
    // decode of the plan against arrow-rs's written rows), its output the
    // Null type.
    let rows = 1000;
    let schema = Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("nothing", DataType::Null, true),
    ]);
    let batch = RecordBatch::try_new(
        Arc::new(schema),
        vec![
            Arc::new(Int32Array::from_iter_values(0..rows)),
            Arc::new(NullArray::new(rows as usize)),
        ],
    )
    .unwrap();
    for (setting, props) in settings() {
        let bytes = write(&batch, props);
        let plans = plan_and_decode(&bytes, &ScanRequest::default(), &batch, &setting);
        for plan in &plans {
            let ty = &plan.columns[1].ty;
            assert!(ty.is_null() && ty.nullable, "{setting}: {ty:?}");
            assert_eq!(
                (ty.kind, ty.conversion, ty.type_length, ty.out_width),
                (Kind::Fixed, Conversion::Copy, 4, 4),
                "{setting}"
            );
        }
    }
}

#[test]
fn pruned_pages_keep_their_rows() {
    let batch = rich_batch();
    for version in [WriterVersion::PARQUET_1_0, WriterVersion::PARQUET_2_0] {
        let bytes = write(&batch, props(version, Compression::SNAPPY, true));
        let request = ScanRequest {
            predicate: Some("seq >= 2100 AND seq < 2400".parse().unwrap()),
            ..Default::default()
        };
        let plans = plan_and_decode(&bytes, &request, &batch, &format!("{version:?} pruned"));
        assert_eq!(plans.len(), 1);
        let plan = &plans[0];
        assert_eq!(plan.row_group, 1);
        let md = metadata(&bytes);
        let rows = md.row_group(1).num_rows();
        // The rows the scan plan selects (from the filtered column's kept
        // pages); every column keeps the pages that meet them.
        let selected = scan_plan(&md, &request).unwrap().row_groups[0]
            .rows
            .clone()
            .unwrap();
        assert!(selected[0].start <= 100 && selected[selected.len() - 1].end >= 400);
        let mut pruned_any = false;
        for col in &plan.columns {
            // Rows 2100..2400 are rows 100..400 of row group 1: the kept
            // pages are those meeting them, their out rows the sums of the
            // kept pages' rows before them.
            let locs = md.offset_index().unwrap()[1][col.leaf].page_locations();
            let mut expected = Vec::new();
            let mut out = 0u64;
            for (k, l) in locs.iter().enumerate() {
                let end = locs.get(k + 1).map_or(rows, |n| n.first_row_index);
                if selected
                    .iter()
                    .any(|r| l.first_row_index < r.end && end > r.start)
                {
                    expected.push((out, Some(l.first_row_index as u64)));
                    out += (end - l.first_row_index) as u64;
                }
            }
            let firsts: Vec<(u64, Option<u64>)> =
                col.pages.iter().map(|p| (p.out_row, p.first_row)).collect();
            assert_eq!(firsts, expected, "{}", col.column);
            pruned_any |= expected.len() < locs.len();
            assert_eq!(col.rows, out);
        }
        assert!(pruned_any, "nothing pruned");
        // Only the kept pages are decompressed: no job reads another page.
        let all = plan_and_decode(&bytes, &ScanRequest::default(), &batch, "all");
        assert!(plan.jobs.len() < all[1].jobs.len());
    }
}

#[test]
fn delta_string_encodings_are_planned() {
    let n = 1000;
    let batch = RecordBatch::try_from_iter([
        (
            "a",
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i * 3))) as ArrayRef,
        ),
        (
            "s",
            Arc::new(StringArray::from_iter_values(
                (0..n).map(|i| format!("s{i}")),
            )),
        ),
        (
            "f",
            Arc::new(Float64Array::from_iter_values((0..n).map(|i| i as f64))),
        ),
    ])
    .unwrap();
    let base = || {
        WriterProperties::builder()
            .set_dictionary_enabled(false)
            .set_encoding(Encoding::PLAIN)
            .set_writer_version(WriterVersion::PARQUET_2_0)
    };
    let cases: Vec<(WriterProperties, Encoding)> = vec![
        (
            base()
                .set_column_encoding("s".into(), Encoding::DELTA_LENGTH_BYTE_ARRAY)
                .build(),
            Encoding::DELTA_LENGTH_BYTE_ARRAY,
        ),
        (
            base()
                .set_column_encoding("s".into(), Encoding::DELTA_BYTE_ARRAY)
                .build(),
            Encoding::DELTA_BYTE_ARRAY,
        ),
    ];
    for (props, what) in cases {
        let bytes = write(&batch, props);
        let md = metadata(&bytes);
        let scan = scan_plan(&md, &ScanRequest::default()).unwrap();
        let lay = layout(&scan, &scan.row_groups[0]);
        let buf = fetched_buffer(&bytes, &lay.reads);
        // The chunk's metadata lists the encoding; the chunk is accepted.
        assert!(md.row_group(0).column(1).encodings().any(|e| e == what));
        for c in 0..3 {
            check_chunk(md.row_group(0).column(c)).unwrap();
        }
        let plan = plan_fetched(&md, &scan, 0, &buf, &lay.chunks).unwrap();
        let s = &plan.columns[1];
        assert!(s.pages.iter().all(|p| p.encoding == what), "{what}");
        plan_and_decode(&bytes, &ScanRequest::default(), &batch, &format!("{what}"));
    }
}

#[test]
fn corrupt_pages_are_typed_errors() {
    let batch = rich_batch();
    let bytes = write(
        &batch,
        props(WriterVersion::PARQUET_1_0, Compression::UNCOMPRESSED, true),
    );
    let md = metadata(&bytes);
    let scan = scan_plan(&md, &ScanRequest::default()).unwrap();
    let lay = layout(&scan, &scan.row_groups[0]);
    let buf = fetched_buffer(&bytes, &lay.reads);
    let plan = plan_fetched(&md, &scan, 0, &buf, &lay.chunks).unwrap();
    let col = 1; // "seq": required INT64
    let pages = walk_chunk(&buf, &lay.chunks[col]).unwrap();
    let meta = md.row_group(0).column(col);
    let ranges = scan.chunks[lay.chunks[col].chunk].pages.clone().unwrap();
    let input = |pages: &[PageInfo]| {
        plan_row_group(
            0,
            &[ColumnInput {
                leaf: col,
                descr: meta.column_descr(),
                meta,
                pages,
                buffer: StoredBytes::Host(&buf),
                page_ranges: Some(&ranges),
            }],
        )
    };
    assert_eq!(input(&pages).unwrap().columns[0], plan.columns[col]);
    let data_at = pages.iter().position(|p| p.header.is_data()).unwrap();
    // A page that lies about its values: caught by the offset index.
    let mut lying = pages.clone();
    if let PageKind::Data(d) = &mut lying[data_at].header.kind {
        d.num_values += 1;
    }
    assert!(matches!(
        input(&lying),
        Err(DecodePlanError::BadPage { ref column, row_group: 0, .. }) if column == "seq"
    ));
    // The last page lying: caught by the chunk's value count.
    let mut lying = pages.clone();
    let last = lying.len() - 1;
    if let PageKind::Data(d) = &mut lying[last].header.kind {
        d.num_values -= 1;
    }
    let e = input(&lying).unwrap_err();
    assert!(matches!(e, DecodePlanError::BadChunk { .. }), "{e}");
    assert!(e.to_string().contains("seq"), "{e}");
    // Uncompressed page whose sizes disagree.
    let mut lying = pages.clone();
    lying[data_at].header.uncompressed_size += 1;
    assert!(matches!(
        input(&lying),
        Err(DecodePlanError::BadPage { .. })
    ));
    // A PLAIN page claiming more values than its bytes hold (no offset
    // index to catch it).
    let mut lying = pages.clone();
    let plain_at = lying
        .iter()
        .position(|p| p.header.is_data() && p.header.encoding() == Some(Encoding::PLAIN))
        .unwrap();
    if let PageKind::Data(d) = &mut lying[plain_at].header.kind {
        d.num_values *= 3;
    }
    let e = plan_row_group(
        0,
        &[ColumnInput {
            leaf: col,
            descr: meta.column_descr(),
            meta,
            pages: &lying[plain_at..plain_at + 1],
            buffer: StoredBytes::Host(&buf),
            page_ranges: None,
        }],
    )
    .unwrap_err();
    assert!(e.to_string().contains("PLAIN values need"), "{e}");
    // A missing page (not in the offset index).
    let mut short = pages.clone();
    short.remove(data_at);
    assert!(input(&short).is_err());
    // A dictionary-encoded page with no dictionary page before it.
    let s = 6;
    let s_pages = walk_chunk(&buf, &lay.chunks[s]).unwrap();
    let s_meta = md.row_group(0).column(s);
    assert!(matches!(s_pages[0].header.kind, PageKind::Dictionary(_)));
    let e = plan_row_group(
        0,
        &[ColumnInput {
            leaf: s,
            descr: s_meta.column_descr(),
            meta: s_meta,
            pages: &s_pages[1..],
            buffer: StoredBytes::Host(&buf),
            page_ranges: None,
        }],
    )
    .unwrap_err();
    assert!(e.to_string().contains("without a dictionary page"), "{e}");
    // A walk error names the column and row group.
    let mut broken = buf.clone();
    broken[lay.chunks[col].pieces[0].buffer_offset] = 0xff;
    let e = plan_fetched(&md, &scan, 0, &broken, &lay.chunks).unwrap_err();
    assert!(
        matches!(e, DecodePlanError::Walk { row_group: 0, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("seq"), "{e}");
    // Chunk tables that do not fit the plan.
    assert!(matches!(
        plan_fetched(&md, &scan, 1, &buf, &lay.chunks),
        Err(DecodePlanError::BadRowGroup { row_group: 1, .. })
    ));
    assert!(plan_fetched(&md, &scan, 99, &buf, &lay.chunks).is_err());
}

/// arrow-rs's Snappy pages (the `snap` crate) split into 64 KiB pieces:
/// every page longer than that, in text, numbers and incompressible bytes
/// with the writer's default 1 MiB pages, has its pieces found by
/// `validate::snappy_pieces`, and each piece, its elements after the
/// varint of its length, decompresses alone to that piece of the page.
#[test]
fn arrow_rs_snappy_pages_split_into_pieces() {
    use super::validate::{snappy_pieces, SNAPPY_BLOCK};
    let n = 200_000usize;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let words = ["carefully ", "final ", "deposits ", "sleep ", "quickly "];
    let text: Vec<String> = (0..n)
        .map(|_| {
            (0..1 + rng.below(6))
                .map(|_| words[rng.below(words.len() as u64) as usize])
                .collect()
        })
        .collect();
    let noise: Vec<Vec<u8>> = (0..n)
        .map(|_| (0..16).map(|_| rng.next() as u8).collect())
        .collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("text", DataType::Utf8, false),
        Field::new("key", DataType::Int64, false),
        Field::new("noise", DataType::Binary, false),
    ]));
    let batch = RecordBatch::try_new(
        schema,
        vec![
            Arc::new(StringArray::from(text)),
            Arc::new(Int64Array::from_iter_values(
                (0..n as i64).map(|i| i * 31 % 9973),
            )),
            Arc::new(BinaryArray::from_iter_values(noise.iter())),
        ],
    )
    .unwrap();
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_dictionary_enabled(false)
        .build();
    let bytes = write(&batch, props);
    let md = metadata(&bytes);
    let scan = scan_plan(&md, &ScanRequest::default()).unwrap();
    let mut split = 0;
    for rg_plan in &scan.row_groups {
        let lay = layout(&scan, rg_plan);
        let buf = fetched_buffer(&bytes, &lay.reads);
        let plan = plan_fetched(&md, &scan, rg_plan.index, &buf, &lay.chunks).unwrap();
        for j in plan.jobs.iter().filter(|j| j.dst_len > SNAPPY_BLOCK) {
            let stream = &buf[j.src_offset..j.src_offset + j.src_len];
            let page = decompress(j.codec, stream, j.dst_len);
            let pieces = snappy_pieces(stream, j.dst_len, SNAPPY_BLOCK)
                .unwrap()
                .unwrap_or_else(|| panic!("column {} page {} does not split", j.column, j.page));
            for i in 0..pieces.count() {
                let out_len = pieces.out_len(i, j.dst_len);
                let mut alone = Vec::new();
                let mut v = out_len;
                while v >= 0x80 {
                    alone.push((v & 0x7f) as u8 | 0x80);
                    v >>= 7;
                }
                alone.push(v as u8);
                alone.extend_from_slice(&stream[pieces.elements(i, stream.len())]);
                let out = snap::raw::Decoder::new().decompress_vec(&alone).unwrap();
                let at = i * SNAPPY_BLOCK;
                assert!(out == page[at..at + out_len], "piece {i}");
            }
            split += 1;
        }
    }
    // Every column has pages over 64 KiB.
    assert!(split >= 3, "{split} pages split");
}

// ----- parquet-testing's data/ ---------------------------------------------

/// The decoder's planning of a whole file, as the scan runs it before the
/// GPU: the output types (the nesting model where a leaf is nested), each
/// chunk, each row group's pages (headers, encodings, page CRCs).
fn plan_whole_file(bytes: &Bytes) -> Result<(), String> {
    let md = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Optional)
        .parse_and_finish(bytes)
        .map_err(|e| e.to_string())?;
    let scan = scan_plan(&md, &ScanRequest::default()).map_err(|e| e.to_string())?;
    let schema = md.file_metadata().schema_descr();
    let leaves: Vec<_> = (0..schema.num_columns())
        .map(|i| schema.column(i))
        .collect();
    if leaves.iter().any(|c| is_nested(c)) {
        super::nesting::nest_fields_of_file(md.file_metadata(), None).map_err(|e| e.to_string())?;
    } else {
        for c in &leaves {
            column_type(c).map_err(|e| e.to_string())?;
        }
    }
    for rg in &scan.row_groups {
        for leaf in 0..schema.num_columns() {
            check_chunk(md.row_group(rg.index).column(leaf)).map_err(|e| e.to_string())?;
        }
        let lay = layout(&scan, rg);
        let buf = fetched_buffer(bytes, &lay.reads);
        plan_fetched(&md, &scan, rg.index, &buf, &lay.chunks).map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Every file of parquet-testing's `data/` that arrow-rs reads is planned
/// (null_list.parquet, a list of arrow's Null type, included), but for the
/// two whose page CRCs are wrong on purpose (arrow-rs, without its `crc`
/// feature, does not check them). What the GPU's own checks could add is
/// the GPU tests' (`decode::parquet_testing_files_decode_like_arrow_rs_null_list_included`).
#[test]
fn parquet_testing_files_arrow_rs_reads_are_planned() {
    let Ok(dir) = std::env::var("PARQUET_TEST_DATA") else {
        eprintln!("SKIPPED: PARQUET_TEST_DATA is not set (parquet-testing's data/)");
        return;
    };
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    let (mut planned, mut refused) = (Vec::new(), Vec::new());
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let bytes = Bytes::from(std::fs::read(path).unwrap());
        let arrow_rs = std::panic::catch_unwind(|| {
            parquet::arrow::arrow_reader::ParquetRecordBatchReader::try_new(bytes.clone(), 1024)
                .and_then(|r| r.collect::<Result<Vec<_>, _>>().map_err(Into::into))
                .is_ok()
        });
        if !matches!(arrow_rs, Ok(true)) {
            continue;
        }
        match plan_whole_file(&bytes) {
            Ok(()) => planned.push(name),
            Err(e) if name.contains("corrupt-checksum") && e.contains("CRC") => {}
            Err(e) => refused.push(format!("{name}: {e}")),
        }
    }
    std::panic::set_hook(hook);
    eprintln!("planned ({}): {}", planned.len(), planned.join(", "));
    assert!(refused.is_empty(), "refused: {refused:#?}");
    assert!(planned.iter().any(|n| n == "null_list.parquet"));
    assert!(planned.len() >= 50, "only {} planned", planned.len());
}
