//! DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY pages (strings, binaries,
//! FIXED_LEN_BYTE_ARRAY) and decimals stored as BYTE_ARRAY, decoded on the
//! GPU and compared value by value with arrow-rs: v1 and v2 pages,
//! nullable columns, dictionary fallback, pruned pages (row windows), and
//! byte-flipped pages (a typed error or arrow-rs's values).

use std::path::Path;
use std::sync::Arc;

use arrow::array::{
    ArrayRef, BinaryArray, Decimal128Array, FixedSizeBinaryArray, Int64Array, RecordBatch,
    StringArray,
};
use arrow::compute::concat_batches;
use arrow::datatypes::i256;
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding};
use parquet::data_type::{ByteArray, ByteArrayType};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use super::decode::assert_gpu;
use super::reference::{arrow_rs_decode, assert_same_values};
use gdscan::decode::scan::{decode, DecodeError, DecodeOptions};
use gdscan::parquet::ScanRequest;

fn gpu_decode(path: &Path, request: ScanRequest) -> Result<RecordBatch, DecodeError> {
    let stream = decode(
        path.to_str().unwrap(),
        request,
        DecodeOptions::from_env().unwrap(),
    )?;
    let schema = stream.schema().clone();
    let mut host = Vec::new();
    for batch in stream {
        host.push(batch?.to_host()?);
    }
    if host.is_empty() {
        return Ok(RecordBatch::new_empty(schema));
    }
    Ok(concat_batches(&host[0].schema(), &host).expect("concat"))
}

/// A small deterministic generator.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// Strings with long shared prefixes (sorted runs), empty ones, short and
/// long; binaries; fixed-size binaries and FLBA decimals; a sequence.
fn batch(n: usize) -> RecordBatch {
    let mut rng = Rng(0x5eed);
    let mut strings: Vec<Option<String>> = (0..n)
        .map(|i| {
            let k = rng.below(6);
            (k != 0).then(|| match k {
                1 => String::new(),
                2 => format!("s{}", rng.below(100)),
                3 => format!("https://example.com/some/long/path/{i:08}/{}", rng.below(7)),
                _ => "x".repeat(rng.below(40) as usize) + &i.to_string(),
            })
        })
        .collect();
    // Sorted runs: long shared prefixes, as front coding meets them.
    for chunk in strings.chunks_mut(300) {
        chunk.sort();
    }
    let binary: Vec<Option<Vec<u8>>> = (0..n)
        .map(|i| {
            (i % 11 != 4).then(|| {
                (0..rng.below(30))
                    .map(|b| (b * 7 + i as u64) as u8)
                    .collect()
            })
        })
        .collect();
    let fixed: Vec<Option<[u8; 6]>> = (0..n)
        .map(|i| (i % 5 != 1).then_some([b'k', b'e', b'y', (i / 256) as u8, i as u8, 7]))
        .collect();
    let dec = Decimal128Array::from_iter(
        (0..n).map(|i| (i % 9 != 2).then(|| (i as i128 - 5000) * 1_000_000_007)),
    )
    .with_precision_and_scale(30, 3)
    .unwrap();
    let cols: Vec<(&str, ArrayRef)> = vec![
        ("s", Arc::new(StringArray::from(strings))),
        (
            "bin",
            Arc::new(BinaryArray::from_iter(binary.iter().map(|b| b.as_deref()))),
        ),
        (
            "fsb",
            Arc::new(
                FixedSizeBinaryArray::try_from_sparse_iter_with_size(fixed.into_iter(), 6).unwrap(),
            ),
        ),
        ("dec", Arc::new(dec)),
        (
            "seq",
            Arc::new(Int64Array::from_iter_values((0..n).map(|i| i as i64))),
        ),
    ];
    RecordBatch::try_from_iter(cols).unwrap()
}

fn props(v2: bool, dictionary: bool, strings: Option<Encoding>) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_writer_version(if v2 {
            WriterVersion::PARQUET_2_0
        } else {
            WriterVersion::PARQUET_1_0
        })
        .set_compression(Compression::SNAPPY)
        .set_dictionary_enabled(dictionary)
        .set_dictionary_page_size_limit(1024)
        .set_data_page_row_count_limit(700)
        .set_write_batch_size(100)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_max_row_group_row_count(Some(6000));
    if let Some(e) = strings {
        b = b
            .set_column_encoding("s".into(), e)
            .set_column_encoding("bin".into(), e);
        if e == Encoding::DELTA_BYTE_ARRAY {
            b = b
                .set_column_encoding("fsb".into(), e)
                .set_column_encoding("dec".into(), e);
        }
    }
    b.build()
}

fn write(path: &Path, batch: &RecordBatch, props: WriterProperties) {
    let file = std::fs::File::create(path).unwrap();
    let mut w = ArrowWriter::try_new(file, batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
}

/// `path` decoded on the GPU with `filter` pruning only
/// (`FilterMode::PruneOnly`) equals arrow-rs's decode of the rows the scan
/// plan keeps (with a filter, pruned pages: row windows).
fn check_file(path: &Path, name: &str, filter: Option<&str>) {
    let bytes = Bytes::from(std::fs::read(path).unwrap());
    let request = ScanRequest {
        predicate: filter.map(|f| f.parse().unwrap()),
        ..ScanRequest::default()
    };
    let expected = match filter {
        None => arrow_rs_decode(&bytes, None, None, None),
        Some(_) => {
            let source: Arc<dyn gdscan::store::Source> = Arc::new(
                gdscan::store::LocalSource::new(Arc::new(
                    gdscan::FileHandle::open(path, "r").unwrap(),
                ))
                .unwrap(),
            );
            let metadata = gdscan::parquet::load_metadata(&source, Default::default()).unwrap();
            let plan = gdscan::parquet::plan(&metadata, &request).unwrap();
            let (kept, selection) = super::decode::plan_selection(&plan, &metadata);
            arrow_rs_decode(&bytes, None, Some(kept), Some(selection))
        }
    };
    let got =
        super::decode::gpu_decode_pruned(path, request).unwrap_or_else(|e| panic!("{name}: {e}"));
    assert_same_values(name, &expected, &got);
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn delta_string_pages_decode_like_arrow_rs() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let batch = batch(13_000);
    for v2 in [false, true] {
        for (strings, dictionary) in [
            (Some(Encoding::DELTA_LENGTH_BYTE_ARRAY), false),
            (Some(Encoding::DELTA_BYTE_ARRAY), false),
            // arrow-rs's defaults: v2 falls back to DELTA_BYTE_ARRAY when
            // the (small) dictionary page fills.
            (None, true),
        ] {
            let name = format!("v2={v2} {strings:?} dictionary={dictionary}");
            let path = dir.path().join("delta.parquet");
            write(&path, &batch, props(v2, dictionary, strings));
            check_file(&path, &name, None);
            for filter in ["seq >= 4100 AND seq < 4900", "seq < 350", "seq >= 12500"] {
                check_file(&path, &format!("{name} {filter}"), Some(filter));
            }
        }
    }
}

/// Two's complement big-endian bytes without redundant sign bytes; zero is
/// empty (as some writers store it).
fn minimal_be(be: &[u8]) -> ByteArray {
    let mut k = 0;
    while k + 1 < be.len() {
        let (b, next) = (be[k], be[k + 1]);
        if (b == 0 && next & 0x80 == 0) || (b == 0xff && next & 0x80 != 0) {
            k += 1;
        } else {
            break;
        }
    }
    let rest = &be[k..];
    ByteArray::from(if rest == [0] { vec![] } else { rest.to_vec() })
}

/// A file of BYTE_ARRAY decimals (arrow-rs writes FLBA), written with the
/// low-level writer: `encoding` for every column, minimal big-endian bytes
/// (empty for zero), nulls in the optional ones; `w`'s precision makes it
/// a Decimal256 (values of up to 32 bytes).
fn write_byte_array_decimals(path: &Path, encoding: Option<Encoding>, v2: bool) {
    let schema = Arc::new(
        parse_message_type(
            "message m { optional binary d (DECIMAL(20,4)); required binary e (DECIMAL(38,0));
                optional binary w (DECIMAL(76,10)); }",
        )
        .unwrap(),
    );
    let mut b = WriterProperties::builder()
        .set_data_page_row_count_limit(500)
        .set_write_batch_size(100)
        .set_dictionary_enabled(encoding.is_none())
        .set_writer_version(if v2 {
            WriterVersion::PARQUET_2_0
        } else {
            WriterVersion::PARQUET_1_0
        });
    if let Some(e) = encoding {
        b = b.set_encoding(e);
    }
    let file = std::fs::File::create(path).unwrap();
    let mut w = SerializedFileWriter::new(file, schema, Arc::new(b.build())).unwrap();
    let n = 4000usize;
    let minimal = |v: i128| minimal_be(&v.to_be_bytes());
    for _ in 0..2 {
        let mut rg = w.next_row_group().unwrap();
        let mut rng = Rng(77);
        let d: Vec<ByteArray> = (0..n)
            .filter(|i| i % 7 != 3)
            .map(|i| minimal((i as i128 - 2000) * 10i128.pow((i % 15) as u32)))
            .collect();
        let def: Vec<i16> = (0..n).map(|i| i16::from(i % 7 != 3)).collect();
        let e: Vec<ByteArray> = (0..n)
            .map(|i| {
                minimal(if i % 3 == 0 {
                    0
                } else {
                    (rng.below(u64::MAX) as i128) << (rng.below(60))
                })
            })
            .collect();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<ByteArrayType>()
            .write_batch(&d, Some(&def), None)
            .unwrap();
        col.close().unwrap();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<ByteArrayType>()
            .write_batch(&e, None, None)
            .unwrap();
        col.close().unwrap();
        // Every length from 0 to 32 bytes, both signs; nulls every 5th row.
        let def: Vec<i16> = (0..n).map(|i| i16::from(i % 5 != 1)).collect();
        let w: Vec<ByteArray> = (0..n)
            .filter(|i| i % 5 != 1)
            .map(|i| {
                let mut word = || rng.below(u64::MAX) as u128;
                let (low, high) = (word() << 64 | word(), word() << 64 | word());
                let v = i256::from_parts(low, high as i128) >> ((i % 256) as u8);
                minimal_be(&if i % 2 == 0 { v } else { v.wrapping_neg() }.to_be_bytes())
            })
            .collect();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<ByteArrayType>()
            .write_batch(&w, Some(&def), None)
            .unwrap();
        col.close().unwrap();
        rg.close().unwrap();
    }
    w.close().unwrap();
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn byte_array_decimals_decode_like_arrow_rs() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    for v2 in [false, true] {
        for encoding in [
            None, // dictionary
            Some(Encoding::PLAIN),
            Some(Encoding::DELTA_LENGTH_BYTE_ARRAY),
            Some(Encoding::DELTA_BYTE_ARRAY),
        ] {
            let path = dir.path().join("dec.parquet");
            write_byte_array_decimals(&path, encoding, v2);
            check_file(
                &path,
                &format!("BYTE_ARRAY decimals v2={v2} {encoding:?}"),
                None,
            );
        }
    }
}

/// Byte-flipped DELTA_LENGTH_BYTE_ARRAY / DELTA_BYTE_ARRAY pages: the GPU
/// decode is a typed error, or arrow-rs's values when arrow-rs reads them.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn flipped_delta_string_pages_are_errors_or_arrow_rs_values() {
    assert_gpu();
    let dir = tempfile::tempdir().unwrap();
    let batch = batch(3000).project(&[0, 1, 4]).unwrap();
    let mut rng = Rng(99);
    let (mut errors, mut equal, mut refused) = (0, 0, 0);
    for e in [
        Encoding::DELTA_LENGTH_BYTE_ARRAY,
        Encoding::DELTA_BYTE_ARRAY,
    ] {
        let path = dir.path().join("good.parquet");
        let props = WriterProperties::builder()
            .set_compression(Compression::UNCOMPRESSED)
            .set_dictionary_enabled(false)
            .set_column_encoding("s".into(), e)
            .set_column_encoding("bin".into(), e)
            .set_data_page_row_count_limit(1000)
            .set_write_batch_size(100)
            .build();
        write(&path, &batch, props);
        let good = std::fs::read(&path).unwrap();
        // Flip bytes in the first column chunk's pages (after "PAR1").
        let end = good.len() / 3;
        for k in 0..30 {
            let mut bad = good.clone();
            for _ in 0..1 + k % 3 {
                let at = 4 + rng.below(end as u64 - 4) as usize;
                bad[at] ^= 1 + rng.below(255) as u8;
            }
            let path = dir.path().join(format!("bad-{k}.parquet"));
            std::fs::write(&path, &bad).unwrap();
            let bytes = Bytes::from(bad);
            let reference = std::panic::catch_unwind(|| arrow_rs_decode(&bytes, None, None, None));
            match (gpu_decode(&path, ScanRequest::default()), reference) {
                (Err(_), _) => errors += 1,
                (Ok(got), Ok(expected)) => {
                    assert_same_values(&format!("{e} flip {k}"), &expected, &got);
                    equal += 1;
                }
                // arrow-rs refuses (or panics on) what the GPU read: nothing
                // to compare with; counted apart.
                (Ok(_), Err(_)) => refused += 1,
            }
        }
    }
    println!(
        "flipped delta string files: {errors} GPU errors, {equal} equal to arrow-rs, {refused} read by the GPU but refused by arrow-rs"
    );
}
