//! The GPU decoder against arrow-rs: every file decoded on the GPU, copied
//! back and compared value by value (nulls included) with arrow-rs's CPU
//! decode of the same bytes.

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::array::RecordBatch;
use arrow::compute::concat_batches;
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};

use super::reference::{arrow_rs_decode, assert_same_values};
use gdscan::cuda::driver;
use gdscan::decode::scan::{
    decode, CompressedCheck, DecodeError, DecodeOptions, DecompressPlace, FilterMode, Landing,
    LandingMode, SnappyDecoder,
};
use gdscan::parquet::ScanRequest;

const NEEDS_GPU: &str = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored";

pub(super) fn assert_gpu() {
    assert!(
        driver::is_available(),
        "{NEEDS_GPU}: no usable GPU: {:?}",
        driver::ensure().err()
    );
}

/// Decodes `path` on GPU 0 and copies the batches back as one batch.
pub(super) fn gpu_decode(path: &Path, request: ScanRequest) -> Result<RecordBatch, DecodeError> {
    gpu_decode_with(path, request, DecodeOptions::from_env().unwrap())
}

/// [`gpu_decode`] with a predicate that only prunes (row groups and pages
/// its statistics rule out), as a scan asks with `FilterMode::PruneOnly`:
/// the rows of the pages kept, not only those the predicate selects.
pub(super) fn gpu_decode_pruned(
    path: &Path,
    request: ScanRequest,
) -> Result<RecordBatch, DecodeError> {
    let mut options = DecodeOptions::from_env().unwrap();
    options.filter = FilterMode::PruneOnly;
    gpu_decode_with(path, request, options)
}

fn gpu_decode_with(
    path: &Path,
    request: ScanRequest,
    options: DecodeOptions,
) -> Result<RecordBatch, DecodeError> {
    Ok(gpu_decode_landed(path, request, options)?.0)
}

/// [`gpu_decode_with`], and where the row groups landed.
fn gpu_decode_landed(
    path: &Path,
    request: ScanRequest,
    options: DecodeOptions,
) -> Result<(RecordBatch, Option<Landing>), DecodeError> {
    let mut stream = decode(path.to_str().unwrap(), request, options)?;
    let schema = stream.schema().clone();
    let mut host = Vec::new();
    for batch in stream.by_ref() {
        let batch = batch?;
        assert_eq!(batch.device_ordinal(), Some(0));
        host.push(batch.to_host()?);
    }
    let landing = stream.report().landing;
    if host.is_empty() {
        return Ok((RecordBatch::new_empty(schema), landing));
    }
    let batch = concat_batches(&host[0].schema(), &host).expect("concat");
    Ok((batch, landing))
}

pub(super) fn test_data() -> Option<PathBuf> {
    std::env::var_os("PARQUET_TEST_DATA").map(PathBuf::from)
}

/// arrow-rs's decode of `bytes` with the file's row count taken from its
/// row groups, as the GPU decoder and pyarrow count them:
/// repeated_no_annotation.parquet's footer says 0 rows where its one row
/// group holds 6, and arrow-rs left to itself returns no row.
fn arrow_rs_decode_by_row_groups(bytes: &Bytes) -> arrow::array::RecordBatch {
    use parquet::arrow::arrow_reader::{ArrowReaderMetadata, ArrowReaderOptions};
    use parquet::file::metadata::{FileMetaData, ParquetMetaData, ParquetMetaDataReader};
    let metadata = ParquetMetaDataReader::new()
        .parse_and_finish(bytes)
        .expect("arrow-rs reads the footer");
    let rows: i64 = metadata.row_groups().iter().map(|r| r.num_rows()).sum();
    let file = metadata.file_metadata();
    if file.num_rows() == rows {
        return arrow_rs_decode(bytes, None, None, None);
    }
    let fixed = FileMetaData::new(
        file.version(),
        rows,
        file.created_by().map(str::to_string),
        file.key_value_metadata().cloned(),
        file.schema_descr_ptr(),
        file.column_orders().cloned(),
    );
    let metadata = ParquetMetaData::new(fixed, metadata.row_groups().to_vec());
    let reader_metadata =
        ArrowReaderMetadata::try_new(std::sync::Arc::new(metadata), ArrowReaderOptions::new())
            .expect("arrow-rs takes the metadata");
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::new_with_metadata(
        bytes.clone(),
        reader_metadata,
    )
    .build()
    .expect("arrow-rs reader");
    let schema = arrow::record_batch::RecordBatchReader::schema(&reader);
    let batches: Vec<_> = reader.map(|b| b.expect("arrow-rs decodes")).collect();
    super::reference::normalise(&arrow::compute::concat_batches(&schema, &batches).expect("concat"))
}

/// Every file of parquet-testing's `data/` that arrow-rs reads, nested
/// ones included, `null_list.parquet` (a list of arrow's Null type) too:
/// decoded on the GPU equal to arrow-rs. The only refusals allowed are
/// files whose page CRCs are deliberately wrong. The lists of files in and
/// out are printed (docs/gpu-decode.md keeps them with the reasons).
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn parquet_testing_files_decode_like_arrow_rs_null_list_included() {
    assert_gpu();
    let Some(dir) = test_data() else {
        panic!("PARQUET_TEST_DATA is not set: the GPU run must name parquet-testing's data/");
    };
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .collect();
    files.sort();
    let (mut inside, mut outside, mut failed) = (Vec::new(), Vec::new(), Vec::new());
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let bytes = Bytes::from(std::fs::read(path).unwrap());
        let expected = std::panic::catch_unwind(|| arrow_rs_decode_by_row_groups(&bytes));
        let Ok(expected) = expected else {
            outside.push(format!("{name}: arrow-rs cannot decode it"));
            continue;
        };
        match gpu_decode(path, ScanRequest::default()) {
            Ok(got) => {
                match std::panic::catch_unwind(AssertUnwindSafe(|| {
                    assert_same_values(&name, &expected, &got)
                })) {
                    Ok(()) => inside.push(format!("{name}: {} rows", got.num_rows())),
                    Err(e) => failed.push(format!(
                        "{name}: {}",
                        e.downcast_ref::<String>().cloned().unwrap_or_default()
                    )),
                }
            }
            Err(DecodeError::Unsupported { column, what, .. }) => {
                outside.push(format!("{name}: column {column}: {what}"))
            }
            // Files whose page CRCs are deliberately wrong: refused with a
            // typed error (arrow-rs, built without its `crc` feature, does
            // not check them and returns the values).
            Err(e @ DecodeError::Plan { .. })
                if name.contains("corrupt-checksum") && e.to_string().contains("CRC-32") =>
            {
                outside.push(format!("{name}: typed error, page CRC mismatch: {e}"))
            }
            Err(e) => failed.push(format!("{name}: {e}")),
        }
    }
    eprintln!("decoded on the GPU, equal to arrow-rs ({}):", inside.len());
    inside.iter().for_each(|l| eprintln!("  in  {l}"));
    eprintln!("outside part 1 ({}):", outside.len());
    outside.iter().for_each(|l| eprintln!("  out {l}"));
    // Legacy LZ4 (nvCOMP by block or the host) and GZIP pages of several
    // members (the host) are in now, and null_list (arrow's Null type).
    for name in [
        "null_list.parquet",
        "hadoop_lz4_compressed.parquet",
        "hadoop_lz4_compressed_larger.parquet",
        "non_hadoop_lz4_compressed.parquet",
        "concatenated_gzip_members.parquet",
    ] {
        let prefix = format!("{name}:");
        assert!(
            !outside.iter().any(|l| l.starts_with(&prefix)),
            "{name} is still outside: {outside:?}"
        );
    }
    assert!(
        failed.is_empty(),
        "files decoded wrongly or failed:\n{}",
        failed.join("\n")
    );
    // A file arrow-rs reads is never refused, flat or nested (LIST, MAP,
    // STRUCT at any depth: part 3 is in, and "(nested)" is no longer a
    // reason to stay out, nor a Null column). What stays out is
    // unreadable by arrow-rs or a deliberate bad CRC.
    let refused: Vec<&String> = outside
        .iter()
        .filter(|l| !(l.contains("arrow-rs cannot decode it") || l.contains("page CRC mismatch")))
        .collect();
    assert!(
        refused.is_empty(),
        "files arrow-rs reads refused (nested ones included): {refused:?}"
    );
    assert!(
        inside.len() >= 10,
        "only {} files decoded: the coverage is lower than part 1 promises",
        inside.len()
    );
}

/// Writer settings of the TPC-H variants: codec × dictionary × page version.
fn variants() -> Vec<(String, WriterProperties)> {
    let mut out = Vec::new();
    for (codec_name, codec) in [
        ("none", Compression::UNCOMPRESSED),
        ("snappy", Compression::SNAPPY),
        ("zstd", Compression::ZSTD(ZstdLevel::try_new(3).unwrap())),
    ] {
        for dictionary in [true, false] {
            for v2 in [false, true] {
                let mut b = WriterProperties::builder()
                    .set_compression(codec)
                    .set_dictionary_enabled(dictionary)
                    .set_statistics_enabled(EnabledStatistics::Page)
                    .set_max_row_group_row_count(Some(100_000))
                    .set_writer_version(if v2 {
                        WriterVersion::PARQUET_2_0
                    } else {
                        WriterVersion::PARQUET_1_0
                    });
                if v2 {
                    // arrow-rs's v2 writer falls back to DELTA_* encodings
                    // (outside part 1) unless told to use PLAIN.
                    b = b.set_encoding(Encoding::PLAIN);
                }
                let name = format!(
                    "{codec_name}-{}-{}",
                    if dictionary { "dict" } else { "plain" },
                    if v2 { "v2" } else { "v1" }
                );
                out.push((name, b.build()));
            }
        }
    }
    out
}

fn rewrite(src: &Path, dst: &Path, props: &WriterProperties) {
    let reader = ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(src).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let schema = arrow::record_batch::RecordBatchReader::schema(&reader);
    let mut writer = ArrowWriter::try_new(
        std::fs::File::create(dst).unwrap(),
        schema,
        Some(props.clone()),
    )
    .unwrap();
    for batch in reader {
        writer.write(&batch.unwrap()).unwrap();
    }
    writer.close().unwrap();
}

/// TPC-H, all eight tables at SF 0.1, written with no compression, Snappy
/// and Zstd, dictionary on and off, data pages v1 and v2: decoded on the
/// GPU equal to arrow-rs, with the default checks (the Snappy scan, on
/// the check stream).
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn tpch_tables_in_every_writer_setting_decode_like_arrow_rs() {
    tpch_tables_with(DecodeOptions {
        check: CompressedCheck::default(),
        check_stream: true,
        ..DecodeOptions::from_env().unwrap()
    });
}

/// The same with the Snappy scan on the upload stream, and with the warp
/// check of short pages (`CompressedCheck::Gpu`, the host taking the long
/// ones) there.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn tpch_tables_with_the_snappy_scan_decode_like_arrow_rs() {
    for check in [CompressedCheck::Scan, CompressedCheck::Gpu] {
        tpch_tables_with(checked(check));
    }
}

/// The same with the checks and pieces kernels on their own stream
/// (`DecodeOptions::check_stream`), the warp check's and the scan's.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn tpch_tables_with_checks_on_their_own_stream_decode_like_arrow_rs() {
    for check in [CompressedCheck::Gpu, CompressedCheck::Scan] {
        tpch_tables_with(DecodeOptions {
            check_stream: true,
            ..checked(check)
        });
    }
}

/// The same with the scanned Snappy pages decompressed by gdscan's own
/// kernel (`gds_snappy_decode`, `GDSCAN_SNAPPY_DECODER=gdscan`) instead of
/// nvCOMP, pages split into pieces and whole.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn tpch_tables_with_gdscans_snappy_decoder_decode_like_arrow_rs() {
    for snappy_split in [true, false] {
        tpch_tables_with(DecodeOptions {
            snappy_decoder: SnappyDecoder::Gdscan,
            snappy_split,
            ..checked(CompressedCheck::Scan)
        });
    }
}

/// The default options with `check` and the checks on the upload stream.
fn checked(check: CompressedCheck) -> DecodeOptions {
    DecodeOptions {
        check,
        check_stream: false,
        ..DecodeOptions::from_env().unwrap()
    }
}

fn tpch_tables_with(options: DecodeOptions) {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let mut opts = gdscan_cli::tpch::GenOptions::new(0.1, dir.path().join("gen"));
    opts.quiet = true;
    opts.parts = Some(1);
    gdscan_cli::tpch::generate(&opts).unwrap();
    let mut checked = 0;
    for table in gdscan_cli::tpch::Table::ALL {
        let folder = dir.path().join("gen").join(table.name());
        let src = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.extension().is_some_and(|e| e == "parquet"))
            .unwrap();
        for (name, props) in variants() {
            let dst = dir.path().join(format!("{}-{name}.parquet", table.name()));
            rewrite(&src, &dst, &props);
            let bytes = Bytes::from(std::fs::read(&dst).unwrap());
            let expected = arrow_rs_decode(&bytes, None, None, None);
            let what = format!("{} {name}", table.name());
            let (got, landing) = gpu_decode_landed(&dst, ScanRequest::default(), options.clone())
                .unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_same_values(&what, &expected, &got);
            assert_eq!(landing, Some(expected_landing(&name, &options)), "{what}");
            checked += 1;
        }
    }
    assert_eq!(checked, 8 * 12);
}

/// Where a variant's row groups land under `options`: device memory for
/// uncompressed pages, and for Snappy ones under the scan or no check
/// (the host reads no page body then), else pinned host memory.
fn expected_landing(variant: &str, options: &DecodeOptions) -> Landing {
    let host_reads_bodies = match variant.split('-').next() {
        Some("none") => false,
        Some("snappy") => !matches!(options.check, CompressedCheck::Scan | CompressedCheck::Off),
        _ => options.zstd == DecompressPlace::Host,
    };
    if options.landing == LandingMode::Pinned || host_reads_bodies {
        Landing::Pinned
    } else {
        Landing::Device
    }
}

/// The same with every row group landing in pinned host memory (the
/// default lands Snappy and uncompressed files on the device, reading
/// only their page headers on the host): both give arrow-rs's values.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn tpch_tables_landing_in_pinned_memory_decode_like_arrow_rs() {
    tpch_tables_with(DecodeOptions {
        landing: LandingMode::Pinned,
        ..DecodeOptions::from_env().unwrap()
    });
}

/// Bit flips and truncations inside the pages of a real file: the GPU
/// decoder returns a typed error or exactly the values arrow-rs decodes
/// from the same corrupted bytes; never a crash, never a hang, never other
/// values. Compressed pages checked on the host.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn corrupt_pages_give_typed_errors_or_arrow_rs_values() {
    corrupt_pages_with(checked(CompressedCheck::Host));
}

/// The same with short Snappy pages checked on the GPU (`gds_check_snappy`).
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn corrupt_pages_checked_on_the_gpu_give_typed_errors_or_arrow_rs_values() {
    corrupt_pages_with(checked(CompressedCheck::Gpu));
}

/// The same with the GPU's checks on their own stream.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn corrupt_pages_checked_on_their_own_stream_give_typed_errors_or_arrow_rs_values() {
    for check in [CompressedCheck::Gpu, CompressedCheck::Scan] {
        corrupt_pages_with(DecodeOptions {
            check_stream: true,
            ..checked(check)
        });
    }
}

/// The same with every Snappy page checked and split by the GPU's Snappy
/// scan (`snappy_scan.cu`).
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn corrupt_pages_checked_by_the_snappy_scan_give_typed_errors_or_arrow_rs_values() {
    corrupt_pages_with(checked(CompressedCheck::Scan));
}

/// The same with the scanned pages decompressed by `gds_snappy_decode`.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn corrupt_pages_decoded_by_gdscans_snappy_decoder_give_typed_errors_or_arrow_rs_values() {
    corrupt_pages_with(DecodeOptions {
        snappy_decoder: SnappyDecoder::Gdscan,
        ..checked(CompressedCheck::Scan)
    });
}

fn corrupt_pages_with(options: DecodeOptions) {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let (mut typed, mut equal, mut arrow_failed) = (0, 0, 0);
    for (name, props) in variants().into_iter().step_by(3) {
        let clean = dir.path().join(format!("clean-{name}.parquet"));
        write_mixed(&clean, &props);
        let file = std::fs::read(&clean).unwrap();
        let metadata = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(file.clone()))
            .unwrap()
            .metadata()
            .clone();
        // The data region: from the first column chunk to the footer.
        let start = metadata.row_group(0).column(0).byte_range().0 as usize;
        let end = file.len()
            - 8
            - u32::from_le_bytes(file[file.len() - 8..file.len() - 4].try_into().unwrap()) as usize;
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for case in 0..40 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let mut bad = file.clone();
            let at = start + (seed as usize) % (end - start);
            match case % 4 {
                0 => bad[at] ^= 1 << ((seed >> 40) % 8),
                1 => bad[at] = bad[at].wrapping_add(0x40),
                2 => bad[at..(at + 4).min(end)]
                    .iter_mut()
                    .for_each(|b| *b = 0xff),
                _ => bad[at] = 0,
            }
            let path = dir.path().join(format!("bad-{name}-{case}.parquet"));
            std::fs::write(&path, &bad).unwrap();
            let reference = std::panic::catch_unwind(|| {
                arrow_rs_decode(&Bytes::from(bad.clone()), None, None, None)
            });
            arrow_failed += usize::from(reference.is_err());
            match gpu_decode_with(&path, ScanRequest::default(), options.clone()) {
                Err(e) => {
                    let text = e.to_string();
                    assert!(!text.is_empty());
                    typed += 1;
                }
                Ok(got) => match reference {
                    // ZSTD pages are decompressed by libzstd on the host
                    // (GDSCAN_ZSTD=host, the default): compared like the rest.
                    Ok(expected) => {
                        assert_same_values(&format!("{name} case {case} at {at}"), &expected, &got);
                        equal += 1;
                    }
                    Err(_) => {
                        panic!("{name} case {case} at {at}: arrow-rs refuses the corrupted file but the GPU decoder returned values")
                    }
                },
            }
        }
    }
    eprintln!("corrupted files: {typed} typed errors, {equal} equal to arrow-rs ({arrow_failed} refused by arrow-rs)");
    assert!(typed > 0 && equal > 0);
}

/// A file with every covered flat type, nulls, and several pages per chunk.
pub(super) fn write_mixed(path: &Path, props: &WriterProperties) {
    use arrow::array::*;
    let n = 20_000usize;
    let valid = |i: usize| i % 7 != 3;
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "b",
            Arc::new(
                (0..n)
                    .map(|i| valid(i).then_some(i % 3 == 0))
                    .collect::<BooleanArray>(),
            ),
        ),
        (
            "i8",
            Arc::new(
                (0..n)
                    .map(|i| valid(i).then_some(i as i8))
                    .collect::<Int8Array>(),
            ),
        ),
        (
            "u16",
            Arc::new(
                (0..n)
                    .map(|i| valid(i).then_some(i as u16))
                    .collect::<UInt16Array>(),
            ),
        ),
        (
            "i32",
            Arc::new(
                (0..n)
                    .map(|i| Some(i as i32 * 7 - 1000))
                    .collect::<Int32Array>(),
            ),
        ),
        (
            "i64",
            Arc::new(
                (0..n)
                    .map(|i| valid(i).then_some(i as i64 * 1_000_003))
                    .collect::<Int64Array>(),
            ),
        ),
        (
            "f32",
            Arc::new(
                (0..n)
                    .map(|i| valid(i).then_some(i as f32 / 3.0))
                    .collect::<Float32Array>(),
            ),
        ),
        (
            "f64",
            Arc::new(
                (0..n)
                    .map(|i| Some(i as f64 * 0.25))
                    .collect::<Float64Array>(),
            ),
        ),
        (
            "d",
            Arc::new(
                (0..n)
                    .map(|i| valid(i).then_some(i as i32 % 3000))
                    .collect::<Date32Array>(),
            ),
        ),
        (
            "dec9",
            Arc::new(
                (0..n)
                    .map(|i| valid(i).then_some(i as i128 - 500))
                    .collect::<Decimal128Array>()
                    .with_precision_and_scale(9, 2)
                    .unwrap(),
            ),
        ),
        (
            "dec18",
            Arc::new(
                (0..n)
                    .map(|i| Some(i as i128 * 1_000_000_007))
                    .collect::<Decimal128Array>()
                    .with_precision_and_scale(18, 3)
                    .unwrap(),
            ),
        ),
        (
            "dec30",
            Arc::new(
                (0..n)
                    .map(|i| valid(i).then_some(-(i as i128) * 10i128.pow(20)))
                    .collect::<Decimal128Array>()
                    .with_precision_and_scale(30, 4)
                    .unwrap(),
            ),
        ),
        (
            "ts",
            Arc::new(
                (0..n)
                    .map(|i| valid(i).then_some(i as i64 * 1_000))
                    .collect::<TimestampMicrosecondArray>(),
            ),
        ),
        (
            "s",
            Arc::new(
                (0..n)
                    .map(|i| valid(i).then(|| format!("value-{}-{}", i % 500, "x".repeat(i % 17))))
                    .collect::<StringArray>(),
            ),
        ),
        (
            "s_unique",
            Arc::new(
                (0..n)
                    .map(|i| Some(format!("row {i}")))
                    .collect::<StringArray>(),
            ),
        ),
    ];
    let batch = RecordBatch::try_from_iter(columns).unwrap();
    let mut writer = ArrowWriter::try_new(
        std::fs::File::create(path).unwrap(),
        batch.schema(),
        Some(props.clone()),
    )
    .unwrap();
    for start in (0..n).step_by(5_000) {
        writer.write(&batch.slice(start, 5_000)).unwrap();
    }
    writer.close().unwrap();
}

/// The mixed file in every writer setting: equal to arrow-rs.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn every_covered_type_with_nulls_decodes_like_arrow_rs() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    for (name, props) in variants() {
        let path = dir.path().join(format!("mixed-{name}.parquet"));
        write_mixed(&path, &props);
        let bytes = Bytes::from(std::fs::read(&path).unwrap());
        let expected = arrow_rs_decode(&bytes, None, None, None);
        let got =
            gpu_decode(&path, ScanRequest::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_same_values(&name, &expected, &got);
    }
}

/// A scan pruned by a predicate (`FilterMode::PruneOnly`): the GPU decodes
/// exactly the rows the plan keeps (columns cut to the same rows although their pages end at
/// different rows), equal to arrow-rs's decode of the same row selection.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn page_pruned_scans_decode_the_selected_rows_like_arrow_rs() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    for (name, props) in variants().into_iter().step_by(2) {
        // Small pages of different row counts per column.
        let props = WriterProperties::builder()
            .set_compression(props.compression(&parquet::schema::types::ColumnPath::from("i32")))
            .set_dictionary_enabled(
                props.dictionary_enabled(&parquet::schema::types::ColumnPath::from("i32")),
            )
            .set_writer_version(props.writer_version())
            .set_encoding(Encoding::PLAIN)
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_data_page_row_count_limit(700)
            .set_data_page_size_limit(4096)
            .set_write_batch_size(100)
            .set_max_row_group_row_count(Some(12_000))
            .build();
        let path = dir.path().join(format!("pruned-{name}.parquet"));
        write_mixed(&path, &props);
        for filter in [
            "i32 >= 50000 AND i32 < 60000",
            "i32 < 3000",
            "f64 >= 4000.0",
        ] {
            let (request, expected) = pruned_request(&path, filter);
            let got = gpu_decode_pruned(&path, request)
                .unwrap_or_else(|e| panic!("{name} {filter}: {e}"));
            assert_same_values(&format!("{name} {filter}"), &expected, &got);
        }
    }
}

/// The scan request of `filter` over the file at `path` (its plan must
/// prune pages), and arrow-rs's decode of exactly the rows that plan keeps.
fn pruned_request(path: &Path, filter: &str) -> (ScanRequest, arrow::array::RecordBatch) {
    let bytes = Bytes::from(std::fs::read(path).unwrap());
    let source: Arc<dyn gdscan::store::Source> = Arc::new(
        gdscan::store::LocalSource::new(Arc::new(gdscan::FileHandle::open(path, "r").unwrap()))
            .unwrap(),
    );
    let metadata = gdscan::parquet::load_metadata(&source, Default::default()).unwrap();
    let request = ScanRequest {
        predicate: Some(filter.parse().unwrap()),
        ..ScanRequest::default()
    };
    let plan = gdscan::parquet::plan(&metadata, &request).unwrap();
    assert!(
        plan.totals.pages_kept < plan.totals.pages_total,
        "{path:?} {filter}: the filter pruned no page"
    );
    let (kept, selection) = plan_selection(&plan, &metadata);
    let expected = arrow_rs_decode(&bytes, None, Some(kept), Some(selection));
    (request, expected)
}

/// The row groups a plan keeps and its rows in them as an arrow-rs
/// selection over those row groups (a pruned row group's selected ranges,
/// every row of the others).
pub(super) fn plan_selection(
    plan: &gdscan::parquet::ScanPlan,
    metadata: &parquet::file::metadata::ParquetMetaData,
) -> (Vec<usize>, parquet::arrow::arrow_reader::RowSelection) {
    use parquet::arrow::arrow_reader::{RowSelection, RowSelector};
    let mut selectors = Vec::new();
    let mut kept = Vec::new();
    for rg in &plan.row_groups {
        kept.push(rg.index);
        let n = metadata.row_group(rg.index).num_rows();
        let ranges = rg
            .rows
            .clone()
            .unwrap_or_else(|| std::iter::once(0..n).collect());
        let mut at = 0;
        for r in ranges {
            if r.start > at {
                selectors.push(RowSelector::skip((r.start - at) as usize));
            }
            selectors.push(RowSelector::select((r.end - r.start) as usize));
            at = r.end;
        }
        if n > at {
            selectors.push(RowSelector::skip((n - at) as usize));
        }
    }
    (kept, RowSelection::from(selectors))
}

/// A struct column (nulls at the struct and in its fields) under page
/// pruning: its leaves' pages are cut to the selected rows and the
/// struct's validity comes from the same rows' definition levels, equal
/// to arrow-rs's decode of the same selection.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn page_pruned_struct_columns_decode_the_selected_rows_like_arrow_rs() {
    use arrow::array::{Int32Array, StringArray, StructArray};
    use arrow::datatypes::{DataType, Field, Fields, Schema};
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let n = 30_000usize;
    let fields = Fields::from(vec![
        Field::new("a", DataType::Int32, true),
        Field::new("s", DataType::Utf8, true),
    ]);
    let a: Int32Array = (0..n)
        .map(|i| (i % 5 != 1).then_some(i as i32 * 3))
        .collect();
    let s: StringArray = (0..n)
        .map(|i| (i % 7 != 2).then(|| format!("v{}", i % 97)))
        .collect();
    let valid: arrow::buffer::NullBuffer = (0..n).map(|i| i % 11 != 4).collect();
    let st = StructArray::new(fields.clone(), vec![Arc::new(a), Arc::new(s)], Some(valid));
    let key: Int32Array = (0..n as i32).collect();
    let schema = Arc::new(Schema::new(vec![
        Field::new("key", DataType::Int32, false),
        Field::new("st", DataType::Struct(fields), true),
    ]));
    let batch =
        arrow::array::RecordBatch::try_new(schema.clone(), vec![Arc::new(key), Arc::new(st)])
            .unwrap();
    for version in [
        parquet::file::properties::WriterVersion::PARQUET_1_0,
        parquet::file::properties::WriterVersion::PARQUET_2_0,
    ] {
        let props = WriterProperties::builder()
            .set_writer_version(version)
            .set_compression(Compression::SNAPPY)
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_data_page_row_count_limit(900)
            .set_write_batch_size(300)
            .set_max_row_group_row_count(Some(10_000))
            .build();
        let path = dir.path().join(format!("struct-{version:?}.parquet"));
        let mut writer = parquet::arrow::ArrowWriter::try_new(
            std::fs::File::create(&path).unwrap(),
            schema.clone(),
            Some(props),
        )
        .unwrap();
        writer.write(&batch).unwrap();
        writer.close().unwrap();
        for filter in ["key >= 4000 AND key < 6500", "key < 1000", "key >= 25000"] {
            let (request, expected) = pruned_request(&path, filter);
            let got = gpu_decode_pruned(&path, request)
                .unwrap_or_else(|e| panic!("{version:?} {filter}: {e}"));
            assert_same_values(&format!("{version:?} {filter}"), &expected, &got);
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn the_timeline_has_every_phase_of_every_row_group_in_order() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mixed.parquet");
    let props = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(4_000))
        .build();
    write_mixed(&path, &props);
    let file = Bytes::from(std::fs::read(&path).unwrap());
    let row_groups = ParquetRecordBatchReaderBuilder::try_new(file.clone())
        .unwrap()
        .metadata()
        .num_row_groups();
    assert!(row_groups >= 5, "{row_groups}");
    let trace = dir.path().join("trace.jsonl");
    let options = DecodeOptions {
        trace: Some(trace.clone()),
        // Several groups: each row group is well under 1 MiB.
        group_bytes: 1 << 18,
        ..DecodeOptions::from_env().unwrap()
    };
    let got = gpu_decode_with(&path, ScanRequest::default(), options).unwrap();
    assert_same_values(
        "traced scan",
        &arrow_rs_decode(&file, None, None, None),
        &got,
    );

    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let gpu = |what: &str, key: &str, value: u64| -> Vec<f64> {
        lines
            .iter()
            .filter(|l| l["side"] == "gpu" && l["what"] == what && l[key] == value)
            .map(|l| l["ms"].as_f64().unwrap())
            .collect()
    };
    // Every row group's kernels, once each, after its group's uploads and
    // decompression, in launch order.
    let groups: std::collections::BTreeSet<u64> = lines
        .iter()
        .filter(|l| l["side"] == "gpu")
        .map(|l| l["group"].as_u64().unwrap())
        .collect();
    assert!(groups.len() >= 2, "{groups:?}");
    for g in &groups {
        let uploaded = gpu("uploaded", "group", *g);
        let (start, end) = (
            gpu("nvcomp_start", "group", *g),
            gpu("nvcomp_end", "group", *g),
        );
        assert_eq!(
            (uploaded.len(), start.len(), end.len()),
            (1, 1, 1),
            "group {g}"
        );
        assert!(
            uploaded[0] >= 0.0 && uploaded[0] <= start[0] && start[0] <= end[0],
            "group {g}"
        );
        // The copies, then the group's check (`warp_check` when the warp
        // check runs; the default scan's marks are `scan_*`), then
        // `uploaded`.
        let (copied, checked) = (gpu("copied", "group", *g), gpu("warp_check", "group", *g));
        assert_eq!(copied.len(), 1, "group {g}");
        assert!(checked.len() <= 1, "group {g}");
        let after_copies = checked.first().copied().unwrap_or(copied[0]);
        assert!(
            copied[0] <= after_copies && after_copies <= uploaded[0],
            "group {g}: {copied:?} {checked:?} {uploaded:?}"
        );
        // The planner's spans of the group: gathered, then planned.
        let planner = |what: &str| {
            lines
                .iter()
                .filter(|l| l["side"] == "host" && l["what"] == what && l["group"] == *g)
                .count()
        };
        assert_eq!((planner("gather"), planner("plan")), (1, 1), "group {g}");
        // Every row group's kernels start after the group's uploads; those
        // of row groups with compressed pages (here, all with any) after
        // nvCOMP's call.
        let kernels: Vec<f64> = lines
            .iter()
            .filter(|l| l["side"] == "gpu" && l["group"] == *g && l["what"] == "kernels_start")
            .map(|l| l["ms"].as_f64().unwrap())
            .collect();
        assert!(!kernels.is_empty(), "group {g}");
        for k in &kernels {
            assert!(*k >= uploaded[0], "group {g}: kernels before the uploads");
        }
        let latest = kernels.iter().cloned().fold(f64::MIN, f64::max);
        assert!(
            latest >= end[0],
            "group {g}: every kernel before nvCOMP ended"
        );
    }
    for r in 0..row_groups as u64 {
        let k = gpu("kernels_start", "row_group", r);
        let done = gpu("gather_status", "row_group", r);
        assert_eq!((k.len(), done.len()), (1, 1), "row group {r}");
        assert!(k[0] <= done[0], "row group {r}");
    }
    // The decoder's own spans: each ends after it starts.
    let spans: Vec<&serde_json::Value> = lines.iter().filter(|l| l["side"] == "host").collect();
    assert!(spans.iter().any(|l| l["what"] == "finish"));
    for s in spans {
        assert!(
            s["start_ms"].as_f64().unwrap() <= s["end_ms"].as_f64().unwrap(),
            "{s}"
        );
    }
}

/// Nested columns decoded on the GPU go through Arrow IPC as `gdscan scan
/// --decode --output` writes them (the batches copied back, one IPC file)
/// and read back equal to arrow-rs: parquet-testing's nested files of
/// lists, maps and structs.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn nested_columns_round_trip_through_arrow_ipc() {
    assert_gpu();
    let Some(dir) = test_data() else {
        panic!("PARQUET_TEST_DATA is not set: the GPU run must name parquet-testing's data/");
    };
    let names = [
        "list_columns.parquet",
        "nested_lists.snappy.parquet",
        "nested_maps.snappy.parquet",
        "nested_structs.rust.parquet",
        "nullable.impala.parquet",
    ];
    for name in names {
        let path = dir.join(name);
        let got =
            gpu_decode(&path, ScanRequest::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut ipc = Vec::new();
        {
            let mut writer = arrow::ipc::writer::FileWriter::try_new(&mut ipc, &got.schema())
                .expect("IPC writer");
            writer.write(&got).expect("IPC write");
            writer.finish().expect("IPC finish");
        }
        let reader = arrow::ipc::reader::FileReader::try_new(std::io::Cursor::new(ipc), None)
            .expect("IPC reader");
        let back: Vec<RecordBatch> = reader.map(|b| b.expect("IPC batch")).collect();
        let back = concat_batches(&got.schema(), &back).expect("concat");
        let expected = arrow_rs_decode(
            &Bytes::from(std::fs::read(&path).unwrap()),
            None,
            None,
            None,
        );
        assert_same_values(name, &expected, &back);
    }
}

/// The committed fixture whose v1 data pages split records
/// (`testdata/nested_v1_split_records.parquet`, written by pyarrow,
/// described in testdata/README.md): every nested column has pages that
/// begin with a repetition level > 0, continuing the record of the page
/// before. Decoded on the GPU equal to arrow-rs, all 600 rows.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn records_split_across_v1_pages_decode_like_arrow_rs() {
    assert_gpu();
    let path =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../testdata/nested_v1_split_records.parquet");
    let name = "nested_v1_split_records.parquet";
    let expected = arrow_rs_decode_by_row_groups(&Bytes::from(std::fs::read(&path).unwrap()));
    assert_eq!(expected.num_rows(), 600);
    let got = gpu_decode(&path, ScanRequest::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_eq!(got.num_rows(), 600);
    assert_same_values(name, &expected, &got);
}

/// FixedSizeLists inside a list (`list<fixed_size_list<int64, 8>>`, 3,000
/// rows of two each): with one in five null, decoded equal to arrow-rs
/// (their padding within the decoder's allowance); with all null, each
/// stands for eight padded slots, past the allowance (`PADDING_FACTOR`
/// slots an entry and `PADDING_SLACK`): a typed `Unsupported` naming it,
/// though arrow-rs reads the file.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn fixed_size_lists_in_lists_decode_or_are_refused_past_the_allowance() {
    use gdscan::decode::page::nesting::testing::{fixed_lists_in_lists, write};
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let rows = 3_000;
    for (null_every, refused) in [(5, false), (1, true)] {
        let bytes = write(
            &fixed_lists_in_lists(rows, null_every),
            WriterProperties::builder().build(),
        );
        let path = dir.path().join(format!("fixed-{null_every}.parquet"));
        std::fs::write(&path, &bytes).unwrap();
        let expected = arrow_rs_decode(&bytes, None, None, None);
        assert_eq!(expected.num_rows(), rows);
        match gpu_decode(&path, ScanRequest::default()) {
            Ok(got) if !refused => assert_same_values("one in five null", &expected, &got),
            Err(DecodeError::Unsupported { what, .. }) if refused => {
                assert!(what.contains("allowance"), "{what}")
            }
            other => panic!("null every {null_every}: {:?}", other.map(|b| b.num_rows())),
        }
    }
}
