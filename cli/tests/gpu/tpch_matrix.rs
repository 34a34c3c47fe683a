//! TPC-H's eight tables at SF 0.1, rewritten by arrow-rs's writer in every
//! setting of a matrix (codec × page version × encodings), decoded on the
//! GPU and compared value by value with arrow-rs's decode of the same file.
//!
//! The encodings: the writer's dictionaries (which fall back to PLAIN in
//! v1 and to DELTA_BYTE_ARRAY for strings in v2 when a dictionary grows too
//! large), PLAIN alone, and two DELTA settings: integers and dates
//! DELTA_BINARY_PACKED, decimals BYTE_STREAM_SPLIT, strings
//! DELTA_LENGTH_BYTE_ARRAY or DELTA_BYTE_ARRAY.

use std::path::{Path, PathBuf};

use arrow::array::RecordBatch;
use arrow::compute::concat_batches;
use arrow::datatypes::{DataType, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{BrotliLevel, Compression, Encoding, GzipLevel, ZstdLevel};
use parquet::file::properties::{WriterProperties, WriterVersion};

use super::decode::assert_gpu;
use super::reference::{arrow_rs_decode, assert_same_values};
use gdscan::decode::scan::{decode, DecodeOptions};
use gdscan::parquet::ScanRequest;
use gdscan_cli::tpch::{generate, GenOptions, Table};

/// How the columns of a table are encoded in one setting.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Encodings {
    /// The writer's default: dictionaries, with its fallbacks.
    Dictionary,
    /// No dictionary: PLAIN.
    Plain,
    /// No dictionary: DELTA_BINARY_PACKED integers, BYTE_STREAM_SPLIT
    /// decimals, DELTA_LENGTH_BYTE_ARRAY strings.
    DeltaLength,
    /// As `DeltaLength` with DELTA_BYTE_ARRAY strings.
    DeltaPrefix,
}

/// A codec's name and how to make it.
type Codec = (&'static str, fn() -> Compression);

const CODECS: [Codec; 6] = [
    ("UNCOMPRESSED", || Compression::UNCOMPRESSED),
    ("SNAPPY", || Compression::SNAPPY),
    ("ZSTD", || Compression::ZSTD(ZstdLevel::default())),
    ("GZIP", || Compression::GZIP(GzipLevel::default())),
    ("LZ4_RAW", || Compression::LZ4_RAW),
    ("BROTLI", || Compression::BROTLI(BrotliLevel::default())),
];

const ENCODINGS: [Encodings; 4] = [
    Encodings::Dictionary,
    Encodings::Plain,
    Encodings::DeltaLength,
    Encodings::DeltaPrefix,
];

/// The writer's properties for one setting of the matrix.
fn properties(
    schema: &SchemaRef,
    codec: Compression,
    v2: bool,
    encodings: Encodings,
) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(codec)
        .set_max_row_group_row_count(Some(150_000))
        .set_dictionary_enabled(encodings == Encodings::Dictionary)
        .set_writer_version(if v2 {
            WriterVersion::PARQUET_2_0
        } else {
            WriterVersion::PARQUET_1_0
        });
    if matches!(encodings, Encodings::DeltaLength | Encodings::DeltaPrefix) {
        let strings = if encodings == Encodings::DeltaLength {
            Encoding::DELTA_LENGTH_BYTE_ARRAY
        } else {
            Encoding::DELTA_BYTE_ARRAY
        };
        for field in schema.fields() {
            let encoding = match field.data_type() {
                DataType::Int32 | DataType::Int64 | DataType::Date32 => {
                    Encoding::DELTA_BINARY_PACKED
                }
                DataType::Decimal128(..) | DataType::Float32 | DataType::Float64 => {
                    Encoding::BYTE_STREAM_SPLIT
                }
                DataType::Utf8 | DataType::Utf8View | DataType::Binary => strings,
                _ => Encoding::PLAIN,
            };
            b = b.set_column_encoding(field.name().as_str().into(), encoding);
        }
    }
    b.build()
}

/// The table's rows as generated, read back whole by arrow-rs.
fn read_table(dir: &Path) -> RecordBatch {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    let mut batches = Vec::new();
    for f in &files {
        let bytes = Bytes::from(std::fs::read(f).unwrap());
        let reader = ParquetRecordBatchReaderBuilder::try_new(bytes)
            .unwrap()
            .build()
            .unwrap();
        batches.extend(reader.map(|b| b.unwrap()));
    }
    concat_batches(&batches[0].schema(), &batches).unwrap()
}

fn write_file(path: &Path, batch: &RecordBatch, props: WriterProperties) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
    for start in (0..batch.num_rows()).step_by(8192) {
        w.write(&batch.slice(start, 8192.min(batch.num_rows() - start)))
            .unwrap();
    }
    w.close().unwrap();
}

fn gpu_decode(path: &Path) -> RecordBatch {
    let what = path.display();
    let options = DecodeOptions::from_env().unwrap();
    let stream = decode(path.to_str().unwrap(), ScanRequest::default(), options)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    let schema = stream.schema().clone();
    let mut host = Vec::new();
    for batch in stream {
        let batch = batch.unwrap_or_else(|e| panic!("{what}: {e}"));
        host.push(batch.to_host().unwrap_or_else(|e| panic!("{what}: {e}")));
    }
    if host.is_empty() {
        return RecordBatch::new_empty(schema);
    }
    concat_batches(&host[0].schema(), &host).unwrap()
}

/// Every table in every setting: 8 tables × 6 codecs × 2 page versions ×
/// 4 encoding settings, equal to arrow-rs.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn tpch_tables_in_every_setting_decode_like_arrow_rs() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let generated = dir.path().join("generated");
    let mut options = GenOptions::new(0.1, &generated);
    options.quiet = true;
    generate(&options).unwrap();
    let started = std::time::Instant::now();
    let mut files = 0;
    for table in Table::ALL {
        let batch = read_table(&generated.join(table.name()));
        let schema = batch.schema();
        let mut settings = Vec::new();
        for (codec_name, codec) in CODECS {
            for v2 in [false, true] {
                for encodings in ENCODINGS {
                    let name = format!(
                        "{} {codec_name} v{} {encodings:?}",
                        table.name(),
                        1 + v2 as u8
                    );
                    let path = dir
                        .path()
                        .join(format!("{}.parquet", name.replace(' ', "-")));
                    settings.push((name, path, properties(&schema, codec(), v2, encodings)));
                }
            }
        }
        // Written in parallel (the GZIP and BROTLI settings are slow).
        std::thread::scope(|s| {
            for chunk in settings.chunks(settings.len().div_ceil(8)) {
                let batch = &batch;
                s.spawn(move || {
                    for (_, path, props) in chunk {
                        write_file(path, batch, props.clone());
                    }
                });
            }
        });
        for (name, path, _) in &settings {
            let bytes = Bytes::from(std::fs::read(path).unwrap());
            let expected = arrow_rs_decode(&bytes, None, None, None);
            assert_eq!(expected.num_rows(), batch.num_rows(), "{name}");
            let got = gpu_decode(path);
            assert_same_values(name, &expected, &got);
            std::fs::remove_file(path).unwrap();
            files += 1;
        }
    }
    eprintln!(
        "TPC-H SF 0.1: {files} files (8 tables × 48 settings) equal to arrow-rs in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    assert_eq!(files, 8 * 48);
}
