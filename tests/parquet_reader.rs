//! The engine-backed `AsyncFileReader` against arrow-rs's own reader, on
//! every file of apache/parquet-testing (found through PARQUET_TEST_DATA,
//! as arrow-rs does; skipped with a message when unset), on its bad_data
//! files, and on truncated copies of good files: same batches, or an error
//! where arrow-rs errs, and never a panic. Without PARQUET_TEST_DATA at
//! build time those tests are listed as ignored (see build.rs).

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow::record_batch::RecordBatch;
use futures::StreamExt;
use gdscan::parquet::GdsParquetReader;
use gdscan::store::LocalSource;
use gdscan::{Engine, Settings};
use std::ops::Range;

use bytes::Bytes;
use futures::future::{BoxFuture, FutureExt};
use parquet::arrow::arrow_reader::ArrowReaderOptions;
use parquet::arrow::async_reader::AsyncFileReader;
use parquet::arrow::ParquetRecordBatchStreamBuilder;
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataReader};

fn data_dir() -> Option<PathBuf> {
    match std::env::var("PARQUET_TEST_DATA") {
        Ok(p) if !p.is_empty() => Some(PathBuf::from(p)),
        _ => panic!("PARQUET_TEST_DATA is not set (point it at parquet-testing/data)"),
    }
}

fn parquet_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "parquet"))
        .collect();
    out.sort();
    out
}

/// The oracle: arrow-rs's same async decoder over the whole file held in
/// memory (trivially correct I/O), so the only difference under test is
/// gdscan's I/O. (arrow-rs's sync reader is not a fair oracle: it decodes
/// some files differently from its own async reader, e.g.
/// repeated_no_annotation.parquet, 0 rows against 6.)
#[derive(Clone)]
struct MemReader(Bytes);

impl AsyncFileReader for MemReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, parquet::errors::Result<Bytes>> {
        let r = if range.end as usize <= self.0.len() && range.start <= range.end {
            Ok(self.0.slice(range.start as usize..range.end as usize))
        } else {
            Err(parquet::errors::ParquetError::EOF(format!(
                "{range:?} past {}",
                self.0.len()
            )))
        };
        async move { r }.boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        _options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, parquet::errors::Result<Arc<ParquetMetaData>>> {
        let r = ParquetMetaDataReader::new()
            .parse_and_finish(&self.0)
            .map(Arc::new);
        async move { r }.boxed()
    }
}

fn decode<R: AsyncFileReader + Unpin + Send + 'static>(
    reader: R,
) -> Result<Vec<RecordBatch>, String> {
    futures::executor::block_on(async {
        let builder = ParquetRecordBatchStreamBuilder::new(reader)
            .await
            .map_err(|e| e.to_string())?;
        let mut stream = builder.build().map_err(|e| e.to_string())?;
        let mut batches = Vec::new();
        while let Some(b) = stream.next().await {
            batches.push(b.map_err(|e| e.to_string())?);
        }
        Ok(batches)
    })
}

fn read_with_arrow_rs(path: &Path) -> Result<Vec<RecordBatch>, String> {
    let bytes = Bytes::from(std::fs::read(path).unwrap());
    catch_unwind(AssertUnwindSafe(|| decode(MemReader(bytes))))
        .unwrap_or_else(|_| Err("arrow-rs panicked".into()))
}

/// gdscan's reader under arrow-rs's async builder. A panic fails the test.
fn read_with_gdscan(path: &Path) -> Result<Vec<RecordBatch>, String> {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let engine = Engine::new(Settings::builder().num_threads(2).build().unwrap()).unwrap();
        let source = LocalSource::open(engine, path).map_err(|e| e.to_string())?;
        decode(GdsParquetReader::new(Arc::new(source)))
    }));
    match outcome {
        Ok(r) => r,
        Err(_) => panic!("gdscan's reader panicked on {}", path.display()),
    }
}

/// Batches as Arrow IPC bytes: equality that treats NaN like any other bit
/// pattern (RecordBatch's own equality says NaN != NaN).
fn ipc_bytes(batches: &[RecordBatch]) -> Vec<u8> {
    let mut out = Vec::new();
    if let Some(first) = batches.first() {
        let mut w = arrow::ipc::writer::StreamWriter::try_new(&mut out, &first.schema()).unwrap();
        for b in batches {
            w.write(b).unwrap();
        }
        w.finish().unwrap();
    }
    out
}

/// Same rows and values. Batch boundaries may differ: the async stream ends
/// a batch at each row group, the sync reader does not.
fn same(a: &[RecordBatch], b: &[RecordBatch]) -> bool {
    let concat = |v: &[RecordBatch]| match v.first() {
        Some(first) => vec![arrow::compute::concat_batches(&first.schema(), v).unwrap()],
        None => vec![],
    };
    let (a, b) = (concat(a), concat(b));
    a == b || ipc_bytes(&a) == ipc_bytes(&b)
}

#[test]
#[cfg_attr(
    not(parquet_test_data),
    ignore = "needs PARQUET_TEST_DATA (apache/parquet-testing data/)"
)]
fn same_batches_as_arrow_rs_on_every_readable_file() {
    let Some(dir) = data_dir() else { return };
    let mut readable = 0;
    let mut unreadable = 0;
    for path in parquet_files(&dir) {
        let expected = read_with_arrow_rs(&path);
        let ours = read_with_gdscan(&path);
        match (&expected, &ours) {
            (Ok(e), Ok(o)) => {
                assert!(same(e, o), "different data for {}", path.display());
                readable += 1;
            }
            (Err(_), Err(_)) => unreadable += 1,
            (Ok(_), Err(err)) => {
                panic!("{}: arrow-rs reads it, gdscan fails: {err}", path.display())
            }
            (Err(err), Ok(_)) => panic!(
                "{}: arrow-rs fails ({err}), gdscan returned data",
                path.display()
            ),
        }
    }
    eprintln!("{readable} files identical, {unreadable} unreadable by both");
    assert!(readable >= 40, "only {readable} readable files compared");
}

#[test]
#[cfg_attr(
    not(parquet_test_data),
    ignore = "needs PARQUET_TEST_DATA (apache/parquet-testing data/)"
)]
fn bad_data_gives_errors_not_panics() {
    let Some(dir) = data_dir() else { return };
    let bad = dir.parent().unwrap().join("bad_data");
    let files = parquet_files(&bad);
    assert!(!files.is_empty(), "no files in {}", bad.display());
    for path in files {
        let expected = read_with_arrow_rs(&path);
        let ours = read_with_gdscan(&path);
        match (&expected, &ours) {
            (Ok(e), Ok(o)) => assert!(same(e, o), "{}", path.display()),
            (Err(_), Err(err)) => assert!(!err.is_empty()),
            (Ok(_), Err(err)) => {
                panic!("{}: arrow-rs reads it, gdscan fails: {err}", path.display())
            }
            (Err(err), Ok(_)) => panic!(
                "{}: arrow-rs fails ({err}), gdscan returned data",
                path.display()
            ),
        }
    }
}

#[test]
#[cfg_attr(
    not(parquet_test_data),
    ignore = "needs PARQUET_TEST_DATA (apache/parquet-testing data/)"
)]
fn truncated_files_are_errors() {
    let Some(dir) = data_dir() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut checked = 0;
    for path in parquet_files(&dir) {
        let bytes = std::fs::read(&path).unwrap();
        if read_with_arrow_rs(&path).is_err() || bytes.len() > 4 << 20 {
            continue;
        }
        for cut in [bytes.len() - 1, bytes.len() - 8, bytes.len() / 2, 12, 4, 0] {
            let copy = tmp.path().join(format!("cut-{cut}.parquet"));
            std::fs::write(&copy, &bytes[..cut]).unwrap();
            let ours = read_with_gdscan(&copy);
            // Cutting the footer away can never leave a readable file.
            assert!(
                ours.is_err(),
                "{} cut at {cut} of {} read as data",
                path.display(),
                bytes.len()
            );
            checked += 1;
        }
    }
    assert!(checked > 100, "only {checked} truncated copies checked");
}

#[test]
fn get_byte_ranges_returns_exactly_the_ranges_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bytes.bin");
    let data: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
    std::fs::write(&path, &data).unwrap();
    let engine = Engine::new(Settings::builder().num_threads(3).build().unwrap()).unwrap();
    let source = LocalSource::open(engine, &path).unwrap();
    let mut reader = GdsParquetReader::new(Arc::new(source));
    let ranges = vec![
        0..10,
        5..20,
        50_000..50_001,
        99_990..100_000,
        30..30,
        70_000..90_000,
    ];
    let got = futures::executor::block_on(reader.get_byte_ranges(ranges.clone())).unwrap();
    assert_eq!(got.len(), ranges.len());
    for (r, b) in ranges.iter().zip(&got) {
        assert_eq!(&b[..], &data[r.start as usize..r.end as usize], "{r:?}");
    }
    let stats = reader.stats();
    let reads = stats.reads.load(std::sync::atomic::Ordering::Relaxed);
    assert!(reads < 5, "nearby ranges were coalesced into {reads} reads");
    // Past the end: an error, never short data.
    let err = futures::executor::block_on(reader.get_bytes(99_990..100_010));
    assert!(err.is_err());
}
