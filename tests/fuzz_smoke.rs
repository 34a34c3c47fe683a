//! The fuzz targets' CI smoke: each target's function (fuzz/src/targets.rs,
//! the same code the AFL binaries run) over its seeds (fuzz/corpus, a
//! Parquet file written here, parquet-testing's small files when
//! PARQUET_TEST_DATA is set), every crash AFL found (fuzz/regressions), and
//! a fixed number of seeded mutations of each seed. Deterministic: the same
//! inputs every run. A panic fails the test and writes the input to
//! CARGO_TARGET_TMPDIR.

#[path = "../fuzz/src/targets.rs"]
mod targets;

use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Deterministic pseudo-random numbers (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// One mutation of `seed`, of the kinds AFL's havoc stage uses: bit flips,
/// interesting bytes, random bytes, a cut, a duplicated or removed slice.
fn mutate(seed: &[u8], r: &mut Rng) -> Vec<u8> {
    let mut v = seed.to_vec();
    for _ in 0..1 + r.below(4) {
        if v.is_empty() {
            v.push(r.next() as u8);
            continue;
        }
        let at = r.below(v.len());
        match r.below(6) {
            0 => v[at] ^= 1 << r.below(8),
            1 => v[at] = [0u8, 0xff, 0x7f, 0x80, 1, 0x10][r.below(6)],
            2 => v[at] = r.next() as u8,
            3 => v.truncate(at),
            4 => {
                let end = (at + 1 + r.below(16)).min(v.len());
                let piece = v[at..end].to_vec();
                let to = r.below(v.len());
                v.splice(to..to, piece);
            }
            _ => {
                let end = (at + 1 + r.below(16)).min(v.len());
                v.drain(at..end);
            }
        }
    }
    v
}

fn files_in(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    out.retain(|p| p.is_file());
    out.sort();
    out
}

/// A small Parquet file of the project's own: two row groups, statistics,
/// a page index, dictionary strings, nulls, Snappy.
fn own_parquet() -> Vec<u8> {
    use arrow::array::{ArrayRef, Int32Array, StringArray};
    use parquet::file::properties::{EnabledStatistics, WriterProperties};
    let keys: Int32Array = (0..300).map(|i| (i % 7 != 0).then_some(i)).collect();
    let names: StringArray = (0..300).map(|i| Some(format!("n{}", i % 13))).collect();
    let batch = arrow::record_batch::RecordBatch::try_from_iter([
        ("k", Arc::new(keys) as ArrayRef),
        ("s", Arc::new(names) as ArrayRef),
    ])
    .unwrap();
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(150))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_compression(parquet::basic::Compression::SNAPPY)
        .build();
    let mut out = Vec::new();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(&mut out, batch.schema(), Some(props)).unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    out
}

/// Parquet seeds: the project's file and parquet-testing's small files.
fn parquet_seeds() -> Vec<Vec<u8>> {
    let mut seeds = vec![own_parquet()];
    match std::env::var("PARQUET_TEST_DATA") {
        Ok(data) => {
            let data = PathBuf::from(data);
            for dir in [data.clone(), data.join("../bad_data")] {
                for f in files_in(&dir) {
                    let small = f.metadata().map(|m| m.len() < 16 << 10).unwrap_or(false);
                    if small && f.extension().is_some_and(|e| e == "parquet") {
                        seeds.push(std::fs::read(f).unwrap());
                    }
                }
            }
        }
        Err(_) => {
            eprintln!("PARQUET_TEST_DATA unset: parquet-testing's files are not among the seeds")
        }
    }
    seeds
}

fn run_one(target: &str, input: &[u8]) {
    let outcome = std::panic::catch_unwind(|| targets::run(target, input));
    if let Err(panic) = outcome {
        let saved = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "fuzz-smoke-{target}-{}.bin",
            crc32fast::hash(input)
        ));
        std::fs::write(&saved, input).unwrap();
        std::panic::resume_unwind(Box::new(format!(
            "target {target} panicked on {} (saved): {:?}",
            saved.display(),
            panic
                .downcast_ref::<String>()
                .map(|s| s.as_str())
                .or(panic.downcast_ref::<&str>().copied())
        )));
    }
}

/// Runs `target` over `seeds`, its regressions, and `mutants` mutations of
/// each seed; returns the number of inputs.
fn smoke(target: &str, seeds: &[Vec<u8>], mutants: usize) -> usize {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut inputs: Vec<Vec<u8>> = seeds.to_vec();
    for f in files_in(&root.join("regressions").join(target)) {
        inputs.push(std::fs::read(f).unwrap());
    }
    let mut r = Rng(0x5EED ^ crc32fast::hash(target.as_bytes()) as u64);
    for seed in seeds {
        for _ in 0..mutants {
            inputs.push(mutate(seed, &mut r));
        }
    }
    for input in &inputs {
        run_one(target, input);
    }
    eprintln!("{target}: {} inputs", inputs.len());
    inputs.len()
}

fn corpus(target: &str) -> Vec<Vec<u8>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(target);
    files_in(&dir)
        .into_iter()
        .map(|f| std::fs::read(f).unwrap())
        .collect()
}

#[test]
fn filter_target() {
    let seeds = corpus("filter");
    assert!(seeds.len() >= 10);
    smoke("filter", &seeds, 300);
}

#[test]
fn location_settings_target() {
    let seeds = corpus("location_settings");
    assert!(seeds.len() >= 5);
    smoke("location_settings", &seeds, 300);
}

#[test]
fn page_header_target() {
    // The bytes after each file's magic: where the first page header sits.
    let seeds: Vec<Vec<u8>> = parquet_seeds()
        .iter()
        .map(|f| f[4.min(f.len())..f.len().min(516)].to_vec())
        .collect();
    smoke("page_header", &seeds, 100);
}

#[test]
fn metadata_plan_target() {
    smoke("metadata_plan", &parquet_seeds(), 15);
}

#[test]
fn reader_target() {
    // The slowest target in a debug build (two full decodes per input):
    // the smaller seeds, fewer mutations.
    let seeds: Vec<Vec<u8>> = parquet_seeds()
        .into_iter()
        .filter(|s| s.len() < 6 << 10)
        .take(24)
        .collect();
    smoke("reader", &seeds, 4);
}

/// The seeds are what they claim: the project's file decodes through both
/// readers to the same rows (so the reader target compares real batches).
#[test]
fn the_own_seed_decodes() {
    let file = own_parquet();
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(
        bytes::Bytes::from(file.clone()),
    )
    .unwrap()
    .build()
    .unwrap();
    let rows: usize = reader.map(|b| b.unwrap().num_rows()).sum();
    assert_eq!(rows, 300);
    targets::reader(&file);
}

/// Regressions found by the fuzz targets, each with the typed outcome it
/// now has.
mod regressions {
    use std::sync::Arc;

    use gdscan::parquet::fetch::{fetch, FetchOptions, HostAllocator, SourceScan};
    use gdscan::parquet::metadata::{load, MetadataOptions};
    use gdscan::parquet::plan::{plan, PlanError, ScanRequest};

    fn open(name: &str) -> (tempfile::TempDir, Arc<dyn gdscan::store::Source>) {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/regressions/metadata_plan")
            .join(name);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::copy(file, &path).unwrap();
        let source = gdscan::store::open(path.to_str().unwrap(), &Default::default()).unwrap();
        (dir, source)
    }

    /// The footer as the parquet crate parses it, without gdscan's load
    /// checks (so that the planner's and the fetch's own defences are
    /// tested too).
    fn raw_footer(name: &str) -> Arc<parquet::file::metadata::ParquetMetaData> {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/regressions/metadata_plan")
            .join(name);
        let bytes = bytes::Bytes::from(std::fs::read(file).unwrap());
        Arc::new(
            parquet::file::metadata::ParquetMetaDataReader::new()
                .parse_and_finish(&bytes)
                .unwrap(),
        )
    }

    /// gdscan's load refuses the footer with a typed error naming the chunk.
    fn refused_at_load(source: &Arc<dyn gdscan::store::Source>) {
        match load(source, MetadataOptions::default()) {
            Err(e) => assert!(
                e.to_string().contains("outside the file"),
                "unexpected error: {e}"
            ),
            Ok(_) => panic!("the footer was accepted"),
        }
    }

    /// A footer giving a column chunk a negative offset: the parquet
    /// crate's `byte_range` asserts on it, and the plan panicked (found by
    /// the metadata_plan smoke's mutations). Now refused at load, and a
    /// typed `BadRange` from the plan over the raw footer.
    #[test]
    fn a_negative_chunk_offset_is_a_typed_error() {
        let (_d, source) = open("negative-chunk-offset.parquet");
        refused_at_load(&source);
        match plan(
            &raw_footer("negative-chunk-offset.parquet"),
            &ScanRequest::default(),
        ) {
            Err(PlanError::BadRange { .. }) => {}
            other => panic!("expected BadRange, got {other:?}"),
        }
    }

    /// A footer placing a chunk past the end of the file: refused at load;
    /// over the raw footer the plan (which knows no file size) keeps it,
    /// and the fetch refuses it with an error before any read, handing out
    /// no row group.
    #[test]
    fn a_chunk_past_the_end_of_the_file_is_a_typed_error() {
        let (_d, source) = open("chunk-past-end-of-file.parquet");
        refused_at_load(&source);
        let meta = raw_footer("chunk-past-end-of-file.parquet");
        let p = Arc::new(plan(&meta, &ScanRequest::default()).unwrap());
        assert!(p.requests.iter().any(|r| r.range.end > source.size()));
        let results: Vec<_> = fetch(
            [SourceScan::new(source.clone(), p)],
            [HostAllocator],
            FetchOptions::default(),
        )
        .collect();
        assert!(!results.is_empty());
        assert!(
            results.iter().all(|r| r.is_err()),
            "no row group handed out"
        );
    }
}

/// Every input on which AFL's `reader` target panicked (fuzz/findings/reader:
/// 28 from the first hour, 36 more after the load's checks): gdscan's load
/// refuses the footers arrow-rs would assert on (sanity::check); on the rest arrow-rs's decoder panics on the bytes
/// whether gdscan or memory supplies them (the target accepts only that);
/// and `scan --output`'s decode (`write_ipc`) returns an error for every
/// one that does not decode, never a panic.
#[test]
fn reader_findings_are_errors() {
    use gdscan::parquet::ipc_export::write_ipc;
    use gdscan::parquet::metadata::{load, MetadataOptions};
    use gdscan::parquet::plan::{plan, Projection, ScanRequest};
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/findings/reader");
    let files = files_in(&dir);
    assert!(files.len() >= 28, "the findings are in the checkout");
    let mut panics = Vec::new();
    let (mut refused_at_load, mut decode_errors) = (0, 0);
    let out = tempfile::tempdir().unwrap();
    for f in &files {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let data = std::fs::read(f).unwrap();
        if let Err(p) = std::panic::catch_unwind(|| targets::reader(&data)) {
            panics.push(format!("reader {name}: {}", targets::panic_text(&*p)));
        }
        gdscan::parquet::metadata::clear_cache();
        let outcome = std::panic::catch_unwind(|| {
            let source = gdscan::store::open(f.to_str().unwrap(), &Default::default())?;
            let meta = match load(&source, MetadataOptions::default()) {
                Ok(m) => m,
                Err(e) => return Ok::<_, gdscan::Error>(Err(("load", e))),
            };
            let p = plan(&meta, &ScanRequest::default()).map_err(|e| e.in_file(&name))?;
            let to = out.path().join(format!("{name}.arrow"));
            Ok(write_ipc(source, meta, &p, &Projection::All, None, &to).map_err(|e| ("decode", e)))
        });
        match outcome {
            Err(p) => panics.push(format!("write_ipc {name}: {}", targets::panic_text(&*p))),
            Ok(Ok(Err(("load", _)))) => refused_at_load += 1,
            Ok(Ok(Err(_))) | Ok(Err(_)) => decode_errors += 1,
            Ok(Ok(Ok(_rows))) => {}
        }
    }
    assert!(
        panics.is_empty(),
        "{} panics:\n{}",
        panics.len(),
        panics.join("\n")
    );
    eprintln!(
        "{refused_at_load} refused at load, {decode_errors} decode errors of {}",
        files.len()
    );
    assert!(refused_at_load > 0 && decode_errors > 0);
}
