//! A property test of the GPU decoder: random flat schemas of every covered
//! type, random nulls, random values, random page and row-group sizes and
//! random writer settings, written by arrow-rs's writer; each file decoded
//! on the GPU equal value by value to arrow-rs's CPU decode of it.
//!
//! Cases run for `GDSCAN_PROPERTY_SECONDS` (60 by default) and at least
//! `seeded::MIN_CASES`; every case prints its seed, and `GDSCAN_PROPERTY_SEED=S`
//! replays one case alone.

use std::path::Path;
use std::sync::Arc;

use arrow::array::*;
use arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::basic::{BrotliLevel, Compression, Encoding, GzipLevel, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};

use super::reference::{arrow_rs_decode, assert_same_values};
use super::seeded::{run_seeded_cases, Rng};
use gdscan::cuda::driver;
use gdscan::decode::scan::{decode, DecodeOptions};
use gdscan::parquet::ScanRequest;

/// The covered flat types the generator draws from.
pub(super) fn covered_types() -> Vec<DataType> {
    vec![
        DataType::Boolean,
        DataType::Int8,
        DataType::Int16,
        DataType::Int32,
        DataType::Int64,
        DataType::UInt8,
        DataType::UInt16,
        DataType::UInt32,
        DataType::UInt64,
        DataType::Float32,
        DataType::Float64,
        DataType::Date32,
        DataType::Decimal128(9, 2),
        DataType::Decimal128(18, 4),
        DataType::Decimal128(30, 3),
        DataType::Timestamp(TimeUnit::Millisecond, None),
        DataType::Timestamp(TimeUnit::Microsecond, None),
        DataType::Timestamp(TimeUnit::Nanosecond, None),
        DataType::Utf8,
        DataType::Binary,
        DataType::FixedSizeBinary(5),
        DataType::FixedSizeBinary(16),
    ]
}

/// A random column of `n` rows of type `t`: `distinct` bounds the number of
/// different values (small: dictionary-friendly; large: dictionaries
/// overflow and pages switch to PLAIN), `nulls` is the chance of a null.
pub(super) fn column(rng: &mut Rng, t: &DataType, n: usize, distinct: u64, nulls: f64) -> ArrayRef {
    // Values come from a pool of `distinct` seeds, so repeats are likely.
    let mut seeds: Vec<Option<u64>> = Vec::with_capacity(n);
    let salt = rng.next_u64();
    for _ in 0..n {
        seeds.push(if rng.chance(nulls) {
            None
        } else {
            let k = rng.below(distinct);
            Some(k.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ salt)
        });
    }
    let s = seeds.iter();
    match t {
        DataType::Boolean => Arc::new(s.map(|v| v.map(|v| v & 1 == 1)).collect::<BooleanArray>()),
        DataType::Int8 => Arc::new(s.map(|v| v.map(|v| v as i8)).collect::<Int8Array>()),
        DataType::Int16 => Arc::new(s.map(|v| v.map(|v| v as i16)).collect::<Int16Array>()),
        DataType::Int32 => Arc::new(s.map(|v| v.map(|v| v as i32)).collect::<Int32Array>()),
        DataType::Int64 => Arc::new(s.map(|v| v.map(|v| v as i64)).collect::<Int64Array>()),
        DataType::UInt8 => Arc::new(s.map(|v| v.map(|v| v as u8)).collect::<UInt8Array>()),
        DataType::UInt16 => Arc::new(s.map(|v| v.map(|v| v as u16)).collect::<UInt16Array>()),
        DataType::UInt32 => Arc::new(s.map(|v| v.map(|v| v as u32)).collect::<UInt32Array>()),
        DataType::UInt64 => Arc::new(s.copied().collect::<UInt64Array>()),
        // Finite floats (NaN != NaN would fail an equal decode).
        DataType::Float32 => Arc::new(
            s.map(|v| v.map(|v| (v as i32) as f32 / 7.0))
                .collect::<Float32Array>(),
        ),
        DataType::Float64 => Arc::new(
            s.map(|v| v.map(|v| (v as i64) as f64 / 13.0))
                .collect::<Float64Array>(),
        ),
        DataType::Date32 => Arc::new(
            s.map(|v| v.map(|v| (v % 40_000) as i32 - 10_000))
                .collect::<Date32Array>(),
        ),
        DataType::Decimal128(p, scale) => {
            let bound = 10i128.pow(u32::from(*p));
            Arc::new(
                s.map(|v| v.map(|v| ((v as i64) as i128 * 1_000_003) % bound))
                    .collect::<Decimal128Array>()
                    .with_precision_and_scale(*p, *scale)
                    .expect("precision and scale"),
            )
        }
        DataType::Timestamp(unit, _) => {
            let values = s.map(|v| v.map(|v| (v >> 4) as i64));
            match unit {
                TimeUnit::Millisecond => Arc::new(values.collect::<TimestampMillisecondArray>()),
                TimeUnit::Microsecond => Arc::new(values.collect::<TimestampMicrosecondArray>()),
                _ => Arc::new(values.collect::<TimestampNanosecondArray>()),
            }
        }
        DataType::Utf8 => Arc::new(s.map(|v| v.map(|v| text(v, 40))).collect::<StringArray>()),
        DataType::Binary => {
            let values: Vec<Option<Vec<u8>>> =
                seeds.iter().map(|v| v.map(|v| bytes_of(v, 33))).collect();
            Arc::new(values.iter().map(|v| v.as_deref()).collect::<BinaryArray>())
        }
        DataType::FixedSizeBinary(w) => {
            let w = *w as usize;
            let values: Vec<Option<Vec<u8>>> = seeds
                .iter()
                .map(|v| v.map(|v| (0..w).map(|i| (v >> (i % 8 * 8)) as u8 ^ i as u8).collect()))
                .collect();
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(
                    values.iter().map(|v| v.as_deref()),
                    w as i32,
                )
                .expect("fixed-size binary"),
            )
        }
        other => unreachable!("not a generated type: {other}"),
    }
}

/// A string of 0 to `max` characters (some multi-byte) drawn from `seed`.
fn text(seed: u64, max: u64) -> String {
    let len = seed % (max + 1);
    let alphabet = ['a', 'b', 'z', '0', ' ', '_', 'é', 'ß', '字', '🙂'];
    (0..len)
        .map(|i| alphabet[((seed >> (i % 16 * 4)) as usize + i as usize) % alphabet.len()])
        .collect()
}

/// 0 to `max` bytes drawn from `seed`.
fn bytes_of(seed: u64, max: u64) -> Vec<u8> {
    let len = seed % (max + 1);
    (0..len).map(|i| seed.rotate_left(i as u32) as u8).collect()
}

/// The encodings arrow-rs's writer takes for a column of type `t` besides
/// PLAIN (and the dictionary): BYTE_STREAM_SPLIT for FLOAT, DOUBLE, INT32,
/// INT64 and FIXED_LEN_BYTE_ARRAY, DELTA_BINARY_PACKED for INT32 and INT64.
fn encodings_of(t: &DataType) -> &'static [Encoding] {
    use DataType::*;
    match t {
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 | Date32
        | Timestamp(..) => &[
            Encoding::PLAIN,
            Encoding::BYTE_STREAM_SPLIT,
            Encoding::DELTA_BINARY_PACKED,
        ],
        Decimal128(p, _) if *p <= 18 => &[
            Encoding::PLAIN,
            Encoding::BYTE_STREAM_SPLIT,
            Encoding::DELTA_BINARY_PACKED,
        ],
        Float32 | Float64 => &[Encoding::PLAIN, Encoding::BYTE_STREAM_SPLIT],
        // FIXED_LEN_BYTE_ARRAY.
        Decimal128(..) | FixedSizeBinary(_) => &[
            Encoding::PLAIN,
            Encoding::BYTE_STREAM_SPLIT,
            Encoding::DELTA_BYTE_ARRAY,
        ],
        Utf8 | LargeUtf8 | Utf8View | Binary | LargeBinary | BinaryView => &[
            Encoding::PLAIN,
            Encoding::DELTA_LENGTH_BYTE_ARRAY,
            Encoding::DELTA_BYTE_ARRAY,
        ],
        _ => &[Encoding::PLAIN],
    }
}

/// Random writer settings: codec, dictionary, page and row-group sizes,
/// data page version, statistics, and each column's encoding (chosen among
/// those its type allows; with a dictionary, the fallback encoding).
pub(super) fn writer_settings(rng: &mut Rng, fields: &[Arc<Field>]) -> (String, WriterProperties) {
    let (codec_name, codec) = rng.pick(&[
        ("none", Compression::UNCOMPRESSED),
        ("snappy", Compression::SNAPPY),
        ("zstd", Compression::ZSTD(ZstdLevel::default())),
        ("lz4raw", Compression::LZ4_RAW),
        ("gzip", Compression::GZIP(GzipLevel::default())),
        ("brotli", Compression::BROTLI(BrotliLevel::default())),
        ("lz4", Compression::LZ4),
    ]);
    let dictionary = rng.chance(0.6);
    let v2 = rng.chance(0.5);
    let page_bytes = rng.pick(&[256usize, 4096, 64 * 1024, 1024 * 1024]);
    let page_rows = rng.pick(&[7usize, 100, 1000, 20_000]);
    let dict_bytes = rng.pick(&[64usize, 1024, 1024 * 1024]);
    let group_rows = rng.pick(&[500usize, 3000, 10_000, 1_000_000]);
    let statistics = rng.pick(&[
        EnabledStatistics::None,
        EnabledStatistics::Chunk,
        EnabledStatistics::Page,
    ]);
    let mut b = WriterProperties::builder()
        .set_compression(codec)
        .set_dictionary_enabled(dictionary)
        .set_dictionary_page_size_limit(dict_bytes)
        .set_data_page_size_limit(page_bytes)
        .set_data_page_row_count_limit(page_rows)
        .set_write_batch_size(page_rows.min(1024))
        .set_max_row_group_row_count(Some(group_rows))
        .set_statistics_enabled(statistics)
        .set_writer_version(if v2 {
            WriterVersion::PARQUET_2_0
        } else {
            WriterVersion::PARQUET_1_0
        });
    let mut chosen = Vec::new();
    for f in fields {
        let e = rng.pick(encodings_of(f.data_type()));
        if e != Encoding::PLAIN {
            b = b.set_column_encoding(f.name().as_str().into(), e);
            chosen.push(format!("{}={e}", f.name()));
        }
    }
    let name = format!(
        "{codec_name} dict={dictionary} v2={v2} page={page_bytes}B/{page_rows}rows dict_page={dict_bytes}B group={group_rows}rows stats={statistics:?} encodings=[{}]",
        chosen.join(" ")
    );
    (name, b.build())
}

/// One case from `seed`: writes the file under `dir`, decodes it on the GPU
/// and compares it with arrow-rs. Returns what the case was, for the log.
fn run_case(seed: u64, dir: &Path) -> String {
    let mut rng = Rng(seed);
    let types = covered_types();
    let n_columns = 1 + rng.below(8) as usize;
    let rows = rng.pick(&[1usize, 17, 1000, 4096, 25_000, 60_000]);
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for c in 0..n_columns {
        let t = rng.pick(&types);
        let nullable = rng.chance(0.6);
        let nulls = if nullable {
            rng.pick(&[0.0, 0.01, 0.3, 0.9, 1.0])
        } else {
            0.0
        };
        let distinct = rng.pick(&[1u64, 5, 300, 1 << 20]);
        columns.push(column(&mut rng, &t, rows, distinct, nulls));
        fields.push(Field::new(format!("c{c}"), t, nullable));
    }
    let schema = Arc::new(Schema::new(fields));
    let batch = RecordBatch::try_new(schema.clone(), columns).expect("random batch");
    let (settings, props) = writer_settings(&mut rng, schema.fields());
    let what = format!(
        "seed {seed:#x}: {rows} rows, {}, {settings}",
        schema
            .fields()
            .iter()
            .map(|f| format!(
                "{}{}",
                f.data_type(),
                if f.is_nullable() { "?" } else { "" }
            ))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let path = dir.join(format!("case-{seed:x}.parquet"));
    let mut writer = ArrowWriter::try_new(
        std::fs::File::create(&path).expect("create"),
        schema,
        Some(props),
    )
    .expect("writer");
    // Written in random slices, so pages and row groups end at odd rows.
    let mut at = 0;
    while at < rows {
        let take = (1 + rng.below(rows as u64) as usize).min(rows - at);
        writer.write(&batch.slice(at, take)).expect("write");
        at += take;
    }
    writer.close().expect("close");

    let bytes = Bytes::from(std::fs::read(&path).expect("read back"));
    let expected = arrow_rs_decode(&bytes, None, None, None);
    let stream = decode(
        path.to_str().expect("utf-8 path"),
        ScanRequest::default(),
        DecodeOptions::from_env().unwrap(),
    )
    .unwrap_or_else(|e| panic!("{what}: open: {e}"));
    let mut host = Vec::new();
    for b in stream {
        let b = b.unwrap_or_else(|e| panic!("{what}: decode: {e}"));
        host.push(
            b.to_host()
                .unwrap_or_else(|e| panic!("{what}: copy back: {e}")),
        );
    }
    let got = if host.is_empty() {
        RecordBatch::new_empty(expected.schema())
    } else {
        arrow::compute::concat_batches(&host[0].schema(), &host).expect("concat")
    };
    assert_same_values(&what, &expected, &got);
    std::fs::remove_file(&path).ok();
    what
}

/// Random flat files, as many as fit in the time budget: every one decoded
/// on the GPU equal to arrow-rs.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn random_flat_files_decode_like_arrow_rs() {
    assert!(
        driver::is_available(),
        "needs an NVIDIA GPU: no usable GPU: {:?}",
        driver::ensure().err()
    );
    let dir = tempfile::tempdir().expect("temp dir");
    run_seeded_cases("property test", |seed| run_case(seed, dir.path()));
}
