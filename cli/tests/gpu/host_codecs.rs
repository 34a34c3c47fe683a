//! The codecs nvCOMP cannot take as they are, against arrow-rs: BROTLI
//! (decompressed on the host), legacy LZ4 (Hadoop-framed: nvCOMP, a job
//! per block; otherwise the host) and GZIP pages of several members (the
//! host), decoded on the GPU and compared value by value with arrow-rs.

use std::io::Write;
use std::path::Path;

use arrow::array::RecordBatch;
use arrow::compute::concat_batches;
use bytes::Bytes;
use parquet::basic::{Compression, Encoding, GzipLevel};
use parquet::file::metadata::{PageIndexPolicy, ParquetMetaDataReader};
use parquet::file::properties::{WriterProperties, WriterVersion};

use super::decode::{assert_gpu, test_data, write_mixed};
use super::reference::{arrow_rs_decode, assert_same_values};
use gdscan::decode::scan::{decode, CodecPlace, DecodeOptions, DecodeReport};
use gdscan::parquet::ScanRequest;

/// Decodes `path` on GPU 0: the batches back as one, and the report.
fn gpu_decode_report(path: &Path) -> (RecordBatch, DecodeReport) {
    let options = DecodeOptions::from_env().unwrap();
    let mut stream = decode(path.to_str().unwrap(), ScanRequest::default(), options)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema = stream.schema().clone();
    let mut host = Vec::new();
    for batch in &mut stream {
        let batch = batch.unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        host.push(batch.to_host().unwrap());
    }
    let got = if host.is_empty() {
        RecordBatch::new_empty(schema)
    } else {
        concat_batches(&host[0].schema(), &host).unwrap()
    };
    (got, stream.report())
}

/// Pages of `codec` the report says ran in `place`.
fn pages_in(report: &DecodeReport, codec: &str, place: CodecPlace) -> usize {
    report
        .codecs
        .iter()
        .filter(|c| c.codec == codec && c.place == place)
        .map(|c| c.pages)
        .sum()
}

fn props(codec: Compression, v2: bool, dictionary: bool) -> WriterProperties {
    let b = WriterProperties::builder()
        .set_compression(codec)
        .set_dictionary_enabled(dictionary);
    if v2 {
        b.set_writer_version(WriterVersion::PARQUET_2_0)
            .set_encoding(Encoding::PLAIN)
            .build()
    } else {
        b.build()
    }
}

/// The mixed file (every covered type, nulls) written by arrow-rs with
/// BROTLI and with legacy LZ4 (which it Hadoop-frames), v1 and v2 pages,
/// dictionary on and off: equal to arrow-rs; BROTLI pages ran on the CPU,
/// LZ4 pages on the GPU.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn brotli_and_legacy_lz4_files_decode_like_arrow_rs() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    for (name, codec, place) in [
        (
            "BROTLI",
            Compression::BROTLI(Default::default()),
            CodecPlace::Cpu,
        ),
        ("LZ4", Compression::LZ4, CodecPlace::Gpu),
    ] {
        for v2 in [false, true] {
            for dictionary in [true, false] {
                let what = format!("{name} v2={v2} dictionary={dictionary}");
                let path = dir.path().join("mixed.parquet");
                write_mixed(&path, &props(codec, v2, dictionary));
                let bytes = Bytes::from(std::fs::read(&path).unwrap());
                let expected = arrow_rs_decode(&bytes, None, None, None);
                let (got, report) = gpu_decode_report(&path);
                assert_same_values(&what, &expected, &got);
                assert!(
                    pages_in(&report, name, place) > 0,
                    "{what}: {:?}",
                    report.codecs
                );
                assert_eq!(report.codecs.len(), 1, "{what}: {:?}", report.codecs);
            }
        }
    }
}

/// One gzip member of `data` (best compression), with a comment of
/// `comment` bytes (0: none) to pad it.
fn gzip_member(data: &[u8], comment: usize) -> Vec<u8> {
    let mut b = flate2::GzBuilder::new();
    if comment > 0 {
        b = b.comment(vec![b'x'; comment - 1]);
    }
    let mut e = b.write(Vec::new(), flate2::Compression::best());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// Gzip members that decompress to nothing and take exactly `len` bytes
/// (header comments pad them; readers cap a header field near 64 KiB, so
/// long padding is spread over several members). `len` must be 0 or at
/// least one empty member's size.
fn padding_members(mut len: usize) -> Vec<u8> {
    let base = gzip_member(&[], 0).len();
    let mut out = Vec::new();
    while len > 0 {
        assert!(
            len > base,
            "padding of {len} bytes is below a member's {base}"
        );
        let mut comment = (len - base).min(60_000);
        let left = len - base - comment;
        if left > 0 && left <= base {
            // Leave enough for one more member.
            comment -= base + 1 - left;
        }
        out.extend(gzip_member(&[], comment));
        len -= base + comment;
    }
    out
}

/// Rewrites every data page of `bytes` (GZIP, stored at level 0 so that
/// its pages shrink when recompressed) as two gzip members of data with
/// empty members between them padding to the page's stored length: every
/// offset and size of the file is unchanged. Returns the bytes and the
/// pages rewritten.
fn two_member_pages(bytes: &Bytes) -> (Vec<u8>, usize) {
    let md = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Required)
        .parse_and_finish(bytes)
        .unwrap();
    let mut out = bytes.to_vec();
    let mut rewritten = 0;
    for chunk in md.offset_index().unwrap().iter().flatten() {
        for loc in chunk.page_locations() {
            let span =
                loc.offset as usize..(loc.offset + i64::from(loc.compressed_page_size)) as usize;
            let page = &bytes[span.clone()];
            // The member runs from its magic to the page's end (a v2
            // page's levels come first, uncompressed).
            let Some(at) = page.windows(3).position(|w| w == [0x1f, 0x8b, 0x08]) else {
                continue;
            };
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&page[at..]), &mut data)
                .unwrap();
            let len = page.len() - at;
            let half = data.len() / 2;
            let second = gzip_member(&data[half..], 0);
            let first = gzip_member(&data[..half], 0);
            let base = gzip_member(&[], 0).len();
            let Some(pad) = len
                .checked_sub(first.len() + second.len())
                .filter(|&p| p > base)
            else {
                continue;
            };
            let members = [first, padding_members(pad), second].concat();
            assert_eq!(members.len(), len);
            out[span.start + at..span.end].copy_from_slice(&members);
            rewritten += 1;
        }
    }
    (out, rewritten)
}

/// GZIP pages of two members each (nvCOMP's Gzip would stop after the
/// first): decoded on the host, equal to arrow-rs (which reads every
/// member) and to the file before the rewrite.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn two_member_gzip_pages_decode_like_arrow_rs() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let stored = Compression::GZIP(GzipLevel::try_new(0).unwrap());
    for v2 in [false, true] {
        let what = format!("GZIP two members v2={v2}");
        let path = dir.path().join("gzip.parquet");
        write_mixed(&path, &props(stored, v2, false));
        let original = Bytes::from(std::fs::read(&path).unwrap());
        let (bytes, rewritten) = two_member_pages(&original);
        assert!(rewritten >= 5, "{what}: {rewritten} pages rewritten");
        std::fs::write(&path, &bytes).unwrap();
        let expected = arrow_rs_decode(&Bytes::from(bytes), None, None, None);
        assert_same_values(
            &what,
            &arrow_rs_decode(&original, None, None, None),
            &expected,
        );
        let (got, report) = gpu_decode_report(&path);
        assert_same_values(&what, &expected, &got);
        assert_eq!(
            pages_in(&report, "GZIP", CodecPlace::Cpu),
            rewritten,
            "{what}"
        );
    }
}

/// parquet-testing's legacy LZ4 (Hadoop-framed and not), LZ4_RAW and
/// concatenated GZIP member files: equal to arrow-rs. Skipped, saying so,
/// without `PARQUET_TEST_DATA`.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn parquet_testing_lz4_and_gzip_member_files_decode_like_arrow_rs() {
    assert_gpu();
    let Some(dir) = test_data() else {
        eprintln!("SKIPPED: PARQUET_TEST_DATA is not set (parquet-testing's data/)");
        return;
    };
    for (name, codec, place) in [
        ("hadoop_lz4_compressed.parquet", "LZ4", CodecPlace::Gpu),
        (
            "hadoop_lz4_compressed_larger.parquet",
            "LZ4",
            CodecPlace::Gpu,
        ),
        ("non_hadoop_lz4_compressed.parquet", "LZ4", CodecPlace::Cpu),
        ("lz4_raw_compressed.parquet", "LZ4_RAW", CodecPlace::Gpu),
        (
            "lz4_raw_compressed_larger.parquet",
            "LZ4_RAW",
            CodecPlace::Gpu,
        ),
        ("concatenated_gzip_members.parquet", "GZIP", CodecPlace::Cpu),
    ] {
        let path = dir.join(name);
        if !path.exists() {
            eprintln!("SKIPPED: {} is not there", path.display());
            continue;
        }
        let bytes = Bytes::from(std::fs::read(&path).unwrap());
        let expected = arrow_rs_decode(&bytes, None, None, None);
        let (got, report) = gpu_decode_report(&path);
        assert_same_values(name, &expected, &got);
        assert!(
            pages_in(&report, codec, place) > 0,
            "{name}: {:?}",
            report.codecs
        );
        eprintln!("{name}: {} rows, {:?}", got.num_rows(), report.codecs);
    }
}
