//! The corruption campaign: files written by arrow-rs's writer in many
//! settings (every codec, both page versions, dictionaries that fall back,
//! every encoding the decoder reads, small pages, several row groups),
//! corrupted one mutation at a time (bit flips, byte sets, runs, lying
//! lengths, truncations) in page headers, levels, dictionary pages, data
//! and the footer, then decoded on the GPU. Every case must end with a
//! typed error or with the values arrow-rs decodes from the same bytes:
//! no hang (each case under a watchdog, each GPU wait under the decoder's
//! own timeout), no crash, no value arrow-rs does not produce.
//!
//! Seeded and reproducible (docs/reliability.md):
//!
//! ```text
//! GDSCAN_CAMPAIGN_CASES=10000 GDSCAN_CAMPAIGN_SEED=1 \
//!   gpu-tests --ignored --test-threads 1 --nocapture campaign
//! ```
//!
//! `GDSCAN_CAMPAIGN_FILTER="i32 > 100 OR f32 < 50"` runs every case
//! through the exact GPU filter (the reference: arrow-rs's values of the
//! row groups and pages the planner keeps by their statistics, filtered on
//! the host by the same predicate), so that a corrupt filter-column page
//! must end in a typed error, never in wrong rows selected (where
//! arrow-rs refuses bytes the filtered read did not need, the rows handed
//! out must be exactly the clean file's answer);
//! `GDSCAN_CAMPAIGN_OUT=DIR` keeps every failing case's file there;
//! `GDSCAN_CAMPAIGN_SETTINGS=Plain,Dictionary` limits the encodings (all
//! five by default).

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::*;
use arrow::compute::concat_batches;
use arrow::datatypes::{DataType, Field, Schema};
use bytes::Bytes;
use parquet::arrow::ArrowWriter;
use parquet::basic::{BrotliLevel, Compression, Encoding, GzipLevel, ZstdLevel};
use parquet::file::metadata::ParquetMetaDataReader;
use parquet::file::properties::{WriterProperties, WriterVersion};

use super::decode::{assert_gpu, plan_selection};
use super::reference::{
    arrow_rs_try_decode, arrow_rs_try_decode_rows, filter_on_host, same_values,
};
use gdscan::decode::page::parse_page_header;
use gdscan::decode::page::PageKind;
use gdscan::decode::scan::{decode, DecodeError, DecodeOptions};
use gdscan::parquet::{Predicate, ScanRequest};

/// xorshift64*: the campaign's only source of chance.
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

/// A codec's name and how to make it.
type Codec = (&'static str, fn() -> Compression);

const CODECS: [Codec; 7] = [
    ("UNCOMPRESSED", || Compression::UNCOMPRESSED),
    ("SNAPPY", || Compression::SNAPPY),
    ("ZSTD", || Compression::ZSTD(ZstdLevel::default())),
    ("GZIP", || Compression::GZIP(GzipLevel::default())),
    ("LZ4_RAW", || Compression::LZ4_RAW),
    ("LZ4", || Compression::LZ4),
    ("BROTLI", || Compression::BROTLI(BrotliLevel::default())),
];

/// The encodings of a base file's columns.
#[derive(Debug, Clone, Copy)]
enum Setting {
    /// Dictionaries with a small page limit (so they fall back).
    Dictionary,
    Plain,
    /// DELTA_BINARY_PACKED integers, BYTE_STREAM_SPLIT floating and fixed
    /// columns, PLAIN strings.
    DeltaNumbers,
    /// As `DeltaNumbers` with DELTA_LENGTH_BYTE_ARRAY strings.
    DeltaLength,
    /// As `DeltaLength` with DELTA_BYTE_ARRAY strings.
    DeltaPrefix,
}

const SETTINGS: [Setting; 5] = [
    Setting::Dictionary,
    Setting::Plain,
    Setting::DeltaNumbers,
    Setting::DeltaLength,
    Setting::DeltaPrefix,
];

/// The rows of a base file: every flat type family, nulls, repeats.
fn base_batch(rows: usize, seed: u64) -> RecordBatch {
    let mut rng = Rng(seed | 1);
    let mut r = |n: u64| rng.below(n);
    let nulls: Vec<bool> = (0..rows).map(|_| r(5) != 0).collect();
    let valid = |i: usize| nulls[i];
    let columns: Vec<(&str, ArrayRef)> = vec![
        (
            "i32",
            Arc::new(
                (0..rows)
                    .map(|i| valid(i).then_some((i as i32 % 1000) * 7 - 300))
                    .collect::<Int32Array>(),
            ),
        ),
        (
            "i64",
            Arc::new(Int64Array::from_iter_values(
                (0..rows).map(|i| (i as i64) * 1_000_003 - 77),
            )),
        ),
        (
            "f32",
            Arc::new(
                (0..rows)
                    .map(|i| valid(i).then_some(i as f32 * 0.25))
                    .collect::<Float32Array>(),
            ),
        ),
        (
            "f64",
            Arc::new(Float64Array::from_iter_values(
                (0..rows).map(|i| (i % 97) as f64 / 3.0),
            )),
        ),
        (
            "b",
            Arc::new(
                (0..rows)
                    .map(|i| valid(i).then_some(i % 3 == 0))
                    .collect::<BooleanArray>(),
            ),
        ),
        (
            "s",
            Arc::new(
                (0..rows)
                    .map(|i| valid(i).then(|| format!("tag-{}", i % 41)))
                    .collect::<StringArray>(),
            ),
        ),
        (
            "u",
            Arc::new(StringArray::from_iter_values(
                (0..rows).map(|i| format!("row {i} {}", "z".repeat(i % 23))),
            )),
        ),
        (
            "d",
            Arc::new(Date32Array::from_iter_values(
                (0..rows).map(|i| 18_000 + (i % 900) as i32),
            )),
        ),
        (
            "dec",
            Arc::new(
                (0..rows)
                    .map(|i| valid(i).then_some(i as i128 * 13 - 5000))
                    .collect::<Decimal128Array>()
                    .with_precision_and_scale(9, 2)
                    .unwrap(),
            ),
        ),
        (
            "fsb",
            Arc::new(
                FixedSizeBinaryArray::try_from_iter(
                    (0..rows).map(|i| [(i % 251) as u8, 1, 2, (i / 251) as u8, 9]),
                )
                .unwrap(),
            ),
        ),
    ];
    let fields: Vec<Field> = columns
        .iter()
        .map(|(n, a)| Field::new(*n, a.data_type().clone(), a.null_count() > 0))
        .collect();
    RecordBatch::try_new(
        Arc::new(Schema::new(fields)),
        columns.into_iter().map(|(_, a)| a).collect(),
    )
    .unwrap()
}

fn properties(schema: &Schema, codec: Compression, v2: bool, setting: Setting) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(codec)
        .set_writer_version(if v2 {
            WriterVersion::PARQUET_2_0
        } else {
            WriterVersion::PARQUET_1_0
        })
        .set_max_row_group_row_count(Some(4_000))
        .set_data_page_row_count_limit(700)
        .set_write_batch_size(256)
        .set_dictionary_page_size_limit(2048)
        .set_dictionary_enabled(matches!(setting, Setting::Dictionary));
    if !matches!(setting, Setting::Dictionary) {
        // Else v2 writes byte arrays as DELTA_BYTE_ARRAY.
        b = b.set_encoding(Encoding::PLAIN);
    }
    if let Setting::DeltaNumbers | Setting::DeltaLength | Setting::DeltaPrefix = setting {
        let strings = match setting {
            Setting::DeltaLength => Encoding::DELTA_LENGTH_BYTE_ARRAY,
            Setting::DeltaPrefix => Encoding::DELTA_BYTE_ARRAY,
            _ => Encoding::PLAIN,
        };
        for f in schema.fields() {
            let e = match f.data_type() {
                DataType::Int32 | DataType::Int64 | DataType::Date32 => {
                    Encoding::DELTA_BINARY_PACKED
                }
                DataType::Float32
                | DataType::Float64
                | DataType::Decimal128(..)
                | DataType::FixedSizeBinary(_) => Encoding::BYTE_STREAM_SPLIT,
                DataType::Utf8 => strings,
                _ => Encoding::PLAIN,
            };
            b = b.set_column_encoding(f.name().as_str().into(), e);
        }
    }
    b.build()
}

fn write(batch: &RecordBatch, props: WriterProperties) -> Vec<u8> {
    let mut out = Vec::new();
    let mut w = ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(batch).unwrap();
    w.close().unwrap();
    out
}

/// Where a mutation lands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Region {
    Header,
    Levels,
    Dictionary,
    Data,
    Footer,
}

/// A base file and the byte ranges of its regions.
struct Base {
    codec: &'static str,
    name: String,
    bytes: Vec<u8>,
    regions: Vec<(Region, std::ops::Range<usize>)>,
}

/// One page of a file: where its header and body lie, what kind of page
/// it is, and its column's max repetition and definition levels.
pub(super) struct PageSpan {
    pub header: std::ops::Range<usize>,
    pub body: std::ops::Range<usize>,
    pub kind: PageKind,
    pub max_rep: i16,
    pub max_def: i16,
}

/// Every page of every column chunk of `bytes`, in file order (found from
/// the footer's chunk ranges and each page's header).
pub(super) fn pages_of(bytes: &[u8]) -> Vec<PageSpan> {
    let metadata = ParquetMetaDataReader::new()
        .parse_and_finish(&Bytes::from(bytes.to_vec()))
        .unwrap();
    let mut out = Vec::new();
    for rg in metadata.row_groups() {
        for chunk in rg.columns() {
            let descriptor = chunk.column_descr();
            let (start, len) = chunk.byte_range();
            let (mut at, end) = (start as usize, (start + len) as usize);
            while at < end {
                let (header, header_len) = parse_page_header(&bytes[at..end]).unwrap();
                let body = at + header_len;
                let body_end = body + header.compressed_size as usize;
                out.push(PageSpan {
                    header: at..body,
                    body: body..body_end,
                    kind: header.kind,
                    max_rep: descriptor.max_rep_level(),
                    max_def: descriptor.max_def_level(),
                });
                at = body_end;
            }
        }
    }
    out
}

/// The page headers, v2 level sections, dictionary and data bodies of
/// every column chunk, and the footer.
fn regions_of(bytes: &[u8]) -> Vec<(Region, std::ops::Range<usize>)> {
    let mut out = Vec::new();
    for page in pages_of(bytes) {
        let (body, body_end) = (page.body.start, page.body.end);
        out.push((Region::Header, page.header));
        match &page.kind {
            PageKind::Dictionary(_) => out.push((Region::Dictionary, body..body_end)),
            PageKind::DataV2(h) => {
                let levels = (h.def_levels_len + h.rep_levels_len) as usize;
                if levels > 0 {
                    out.push((Region::Levels, body..body + levels));
                }
                if body + levels < body_end {
                    out.push((Region::Data, body + levels..body_end));
                }
            }
            _ => {
                if body < body_end {
                    out.push((Region::Data, body..body_end));
                }
            }
        }
    }
    let footer_len =
        u32::from_le_bytes(bytes[bytes.len() - 8..bytes.len() - 4].try_into().unwrap()) as usize;
    out.push((
        Region::Footer,
        bytes.len() - 8 - footer_len..bytes.len() - 8,
    ));
    out
}

/// One mutation of `base`: what was done, and the bytes.
fn mutate(base: &Base, rng: &mut Rng) -> (String, Region, Vec<u8>) {
    let mut bytes = base.bytes.clone();
    // Regions by weight: data 40 %, headers 25 %, levels, dictionaries 15 %
    // each where the file has them, the footer 5 %.
    let want = match rng.below(100) {
        0..=39 => Region::Data,
        40..=64 => Region::Header,
        65..=79 => Region::Levels,
        80..=94 => Region::Dictionary,
        _ => Region::Footer,
    };
    let candidates: Vec<&(Region, std::ops::Range<usize>)> =
        base.regions.iter().filter(|(r, _)| *r == want).collect();
    let (region, range) = if candidates.is_empty() {
        let data: Vec<_> = base
            .regions
            .iter()
            .filter(|(r, _)| *r == Region::Data)
            .collect();
        data[rng.below(data.len() as u64) as usize].clone()
    } else {
        candidates[rng.below(candidates.len() as u64) as usize].clone()
    };
    let at = range.start + rng.below(range.len() as u64) as usize;
    let what = match rng.below(100) {
        0..=29 => {
            let bit = rng.below(8);
            bytes[at] ^= 1 << bit;
            format!("bit {bit} flipped at {at}")
        }
        30..=49 => {
            let v = rng.next() as u8;
            bytes[at] = v;
            format!("byte at {at} set to {v:#04x}")
        }
        50..=64 => {
            let n = 2 + rng.below(15) as usize;
            let v = [0u8, 0xff, rng.next() as u8][rng.below(3) as usize];
            let end = (at + n).min(range.end);
            bytes[at..end].iter_mut().for_each(|b| *b = v);
            format!("{} bytes at {at} set to {v:#04x}", end - at)
        }
        65..=89 => {
            // A lying length or count: a small step up or down of one byte
            // (a varint's low bits in a header, a length prefix in a body).
            let step = 1 + rng.below(64) as u8;
            bytes[at] = if rng.below(2) == 0 {
                bytes[at].wrapping_add(step)
            } else {
                bytes[at].wrapping_sub(step)
            };
            format!("byte at {at} moved by {step}")
        }
        90..=94 => {
            // A region cut short: its tail zeroed (a truncated stream whose
            // lengths still say more).
            let cut = at.max(range.start + 1).min(range.end);
            bytes[cut..range.end].iter_mut().for_each(|b| *b = 0);
            format!("{:?} zeroed from {cut} to {}", region, range.end)
        }
        _ => {
            bytes.truncate(at);
            format!("file truncated at {at}")
        }
    };
    (what, region, bytes)
}

/// Outcomes of one codec's cases.
#[derive(Default, Clone)]
struct Tally {
    cases: usize,
    /// A typed error from gdscan where arrow-rs refuses too.
    both_refuse: usize,
    /// A typed error from gdscan where arrow-rs decodes values.
    gdscan_refuses: usize,
    /// The same values as arrow-rs.
    equal: usize,
    /// Filtered: arrow-rs refuses the corrupt bytes (met in data the query
    /// does not need), gdscan hands out exactly the clean file's answer.
    clean_answer: usize,
    /// Values that differ from arrow-rs's, or values where arrow-rs refuses.
    wrong: usize,
    /// Longest case, seconds.
    slowest: f64,
}

/// Whether `GDSCAN_CAMPAIGN_SETTINGS` (comma-separated names; all when
/// unset) asks for `setting`.
fn wanted(setting: &Setting) -> bool {
    match std::env::var("GDSCAN_CAMPAIGN_SETTINGS") {
        Ok(list) => list.split(',').any(|s| s.trim() == format!("{setting:?}")),
        Err(_) => true,
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn corruption_campaign_gives_typed_errors_or_arrow_rs_values() {
    assert_gpu();
    let cases = env_u64("GDSCAN_CAMPAIGN_CASES", 2_000) as usize;
    let seed = env_u64("GDSCAN_CAMPAIGN_SEED", 1);
    let case_limit = Duration::from_secs(env_u64("GDSCAN_CAMPAIGN_CASE_SECONDS", 60));
    let keep = std::env::var_os("GDSCAN_CAMPAIGN_OUT").map(std::path::PathBuf::from);
    let filter: Option<Predicate> = std::env::var("GDSCAN_CAMPAIGN_FILTER")
        .ok()
        .map(|f| f.parse().expect("GDSCAN_CAMPAIGN_FILTER parses"));
    if let Some(k) = &keep {
        std::fs::create_dir_all(k).unwrap();
    }
    let dir = tempfile::tempdir().unwrap();

    // The base files: every codec × page version × encoding setting, each
    // decoded clean first (a campaign over files the decoder refuses
    // whole would prove nothing).
    let mut bases = Vec::new();
    for (i, (codec_name, codec)) in CODECS.iter().enumerate() {
        for v2 in [false, true] {
            for (j, setting) in SETTINGS.iter().enumerate() {
                if !wanted(setting) {
                    continue;
                }
                let s = seed ^ ((i * 8 + j * 2 + v2 as usize) as u64) << 32;
                let batch = base_batch(6_000 + (s % 7) as usize * 1_000, s);
                let bytes = write(&batch, properties(&batch.schema(), codec(), v2, *setting));
                let name = format!("{codec_name} v{} {setting:?}", 1 + v2 as u8);
                let path = dir.path().join("clean.parquet");
                std::fs::write(&path, &bytes).unwrap();
                let expected = arrow_rs_try_decode(&Bytes::from(bytes.clone())).unwrap();
                let got = gpu_decode(&path)
                    .unwrap_or_else(|e| panic!("{name}: the clean file: {}", e.text));
                same_values(&expected, &got)
                    .unwrap_or_else(|d| panic!("{name}: the clean file: {d}"));
                let regions = regions_of(&bytes);
                bases.push(Base {
                    codec: codec_name,
                    name,
                    bytes,
                    regions,
                });
            }
        }
    }

    // A watchdog: a case that runs past `case_limit` is a hang, and ends
    // the run (with the case's seed, to replay it).
    let current = Arc::new(AtomicU64::new(u64::MAX));
    let started_ms = Arc::new(AtomicU64::new(0));
    let clock = Instant::now();
    {
        let (current, started_ms) = (current.clone(), started_ms.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(500));
            let case = current.load(Ordering::SeqCst);
            let since = clock.elapsed().as_millis() as u64 - started_ms.load(Ordering::SeqCst);
            if case != u64::MAX && since > case_limit.as_millis() as u64 {
                eprintln!("HANG: case {case} (seed {seed}) ran {since} ms");
                std::process::abort();
            }
        });
    }

    // arrow-rs's decoder panics on some corrupt pages (caught as a
    // refusal): keep those panics off the log.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let mut tallies: std::collections::BTreeMap<&str, Tally> = Default::default();
    let mut regions: std::collections::BTreeMap<Region, Tally> = Default::default();
    let mut failures = Vec::new();
    let run_started = Instant::now();
    for case in 0..cases {
        let mut rng = Rng((seed << 32 ^ case as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let base = &bases[case % bases.len()];
        let (what, region, bytes) = mutate(base, &mut rng);
        let path = dir.path().join("case.parquet");
        std::fs::write(&path, &bytes).unwrap();
        started_ms.store(clock.elapsed().as_millis() as u64, Ordering::SeqCst);
        current.store(case as u64, Ordering::SeqCst);
        let t = Instant::now();
        let (reference, got) = match &filter {
            None => (
                arrow_rs_try_decode(&Bytes::from(bytes.clone())),
                gpu_decode(&path),
            ),
            Some(p) => (
                planned_reference(&path, &bytes, p),
                gpu_decode_request(&path, filtered_request(p)),
            ),
        };
        let seconds = t.elapsed().as_secs_f64();
        current.store(u64::MAX, Ordering::SeqCst);
        let verdict = match (&reference, &got) {
            (_, Err(e)) if e.cuda => Err(format!("a CUDA call failed: {}", e.text)),
            (Err(_), Err(_)) => Ok(0),
            (Ok(_), Err(_)) => Ok(1),
            (Ok(e), Ok(g)) => same_values(e, g).map(|_| 2),
            // Filtered, the decoder reads less than arrow-rs (pages whose
            // every row is dropped are still decoded by arrow-rs, which
            // then meets corruption the query never needed: an invalid
            // string in a row not selected, a header of a page skipped):
            // its rows must then be exactly the clean file's answer.
            (Err(why), Ok(g)) => match &filter {
                Some(p) if clean_answer(base, p).is_ok_and(|c| same_values(&c, g).is_ok()) => Ok(3),
                _ => Err(format!(
                    "arrow-rs refuses ({why}) but the GPU decoder returned values{}",
                    if filter.is_some() {
                        " other than the clean file's answer"
                    } else {
                        ""
                    }
                )),
            },
        };
        for t in [
            tallies.entry(base.codec).or_default(),
            regions.entry(region).or_default(),
        ] {
            t.cases += 1;
            t.slowest = t.slowest.max(seconds);
            match &verdict {
                Ok(0) => t.both_refuse += 1,
                Ok(1) => t.gdscan_refuses += 1,
                Ok(3) => t.clean_answer += 1,
                Ok(_) => t.equal += 1,
                Err(_) => t.wrong += 1,
            }
        }
        // Every 250 cases, a clean file must still decode: the GPU and
        // the process are still usable.
        let verdict = match verdict {
            Ok(v) if case % 250 == 249 => healthy(&bases[0], dir.path()).map(|_| v),
            other => other,
        };
        if let Err(why) = verdict {
            let line = format!("case {case} ({}; {region:?}: {what}): {why}", base.name);
            if let Some(k) = &keep {
                std::fs::write(k.join(format!("case-{case}.parquet")), &bytes).unwrap();
            }
            failures.push(line);
        }
    }
    std::panic::set_hook(hook);
    let elapsed = run_started.elapsed().as_secs_f64();

    let table = |title: &str, rows: Vec<(String, Tally)>| {
        eprintln!("\n| {title} | cases | both refuse | gdscan refuses, arrow-rs reads | equal values | filtered: the clean file's answer, arrow-rs refuses | wrong values | slowest case s |");
        eprintln!("|---|---:|---:|---:|---:|---:|---:|---:|");
        for (name, t) in rows {
            eprintln!(
                "| {name} | {} | {} | {} | {} | {} | {} | {:.3} |",
                t.cases,
                t.both_refuse,
                t.gdscan_refuses,
                t.equal,
                t.clean_answer,
                t.wrong,
                t.slowest
            );
        }
    };
    table(
        "codec",
        tallies
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    );
    table(
        "region",
        regions
            .iter()
            .map(|(k, v)| (format!("{k:?}"), v.clone()))
            .collect(),
    );
    eprintln!(
        "\ncampaign: seed {seed}, {cases} corrupted files from {} base files in {elapsed:.1} s: 0 hangs, 0 crashes, {} wrong",
        bases.len(),
        failures.len()
    );
    for f in failures.iter().take(40) {
        eprintln!("  {f}");
    }
    assert!(
        failures.is_empty(),
        "{} cases gave values arrow-rs does not",
        failures.len()
    );
}

/// Whether `base`'s clean file still decodes on the GPU, equal to arrow-rs.
fn healthy(base: &Base, dir: &Path) -> Result<(), String> {
    let path = dir.join("health.parquet");
    std::fs::write(&path, &base.bytes).unwrap();
    let expected = arrow_rs_try_decode(&Bytes::from(base.bytes.clone()))?;
    let got =
        gpu_decode(&path).map_err(|e| format!("a clean file no longer decodes: {}", e.text))?;
    same_values(&expected, &got).map_err(|d| format!("a clean file decodes wrong: {d}"))
}

/// Why a GPU decode failed: its error's text, and whether a CUDA call
/// failed (a corrupt file must never cost the process its GPU: such an
/// error fails the campaign).
pub(super) struct Refusal {
    pub text: String,
    pub cuda: bool,
}

impl From<DecodeError> for Refusal {
    fn from(e: DecodeError) -> Self {
        Refusal {
            cuda: e.cuda().is_some(),
            text: e.to_string(),
        }
    }
}

/// The filtered campaign's reference: arrow-rs's decode of the rows the
/// planner keeps for `p` (the row groups and pages whose statistics do
/// not rule it out: a reader that skips a page by its statistics never
/// sees that page's corruption, and neither does this reference), filtered
/// on the host by `p`. A file the planner refuses is refused here too.
fn planned_reference(path: &Path, bytes: &[u8], p: &Predicate) -> Result<RecordBatch, String> {
    let handle = gdscan::FileHandle::open(path, "r").map_err(|e| e.to_string())?;
    let source: Arc<dyn gdscan::store::Source> =
        Arc::new(gdscan::store::LocalSource::new(Arc::new(handle)).map_err(|e| e.to_string())?);
    let metadata =
        gdscan::parquet::load_metadata(&source, Default::default()).map_err(|e| e.to_string())?;
    let plan = gdscan::parquet::plan(&metadata, &filtered_request(p)).map_err(|e| e.to_string())?;
    let (kept, selection) = plan_selection(&plan, &metadata);
    arrow_rs_try_decode_rows(&Bytes::from(bytes.to_vec()), Some(kept), Some(selection))
        .and_then(|b| filter_on_host(&b, p))
}

/// The answer of `p` over the base file before any corruption: arrow-rs's
/// rows of the clean bytes, filtered on the host.
fn clean_answer(base: &Base, p: &Predicate) -> Result<RecordBatch, String> {
    arrow_rs_try_decode(&Bytes::from(base.bytes.clone())).and_then(|b| filter_on_host(&b, p))
}

/// Every column, filtered exactly by `p` on the GPU.
fn filtered_request(p: &Predicate) -> ScanRequest {
    ScanRequest {
        predicate: Some(p.clone()),
        ..ScanRequest::default()
    }
}

/// The GPU decode of `path`, as one host batch.
pub(super) fn gpu_decode(path: &Path) -> Result<RecordBatch, Refusal> {
    gpu_decode_request(path, ScanRequest::default())
}

/// The GPU decode of `path` with `request`, as one host batch.
fn gpu_decode_request(path: &Path, request: ScanRequest) -> Result<RecordBatch, Refusal> {
    let options = DecodeOptions::from_env().unwrap();
    let stream = decode(path.to_str().unwrap(), request, options)?;
    let schema = stream.schema().clone();
    let mut host = Vec::new();
    for batch in stream {
        host.push(batch?.to_host().map_err(DecodeError::from)?);
    }
    if host.is_empty() {
        return Ok(RecordBatch::new_empty(schema));
    }
    Ok(concat_batches(&host[0].schema(), &host).unwrap())
}
