//! The fuzz targets' bodies: one function per target, each taking the
//! fuzzer's bytes. They must never panic on any input; each also checks
//! what must hold when the input is accepted (a plan inside the file, the
//! reader's batches equal to arrow-rs's own decoder's, a parsed filter that
//! prints and parses back to itself). Shared by the AFL binaries
//! (`fuzz/src/bin/*.rs`) and the CI smoke (`tests/fuzz_smoke.rs`), which
//! includes this file by path.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures::TryStreamExt;
use gdscan::parquet::metadata::{self, MetadataOptions};
use gdscan::parquet::plan::{plan, Projection, ScanRequest};
use gdscan::parquet::{GdsParquetReader, Predicate};
use gdscan::store::{LocalSource, Source};
use gdscan::{Engine, Settings};

/// The targets, by name (the AFL binaries' names and the corpus folders').
pub const TARGETS: [&str; 5] = [
    "filter",
    "metadata_plan",
    "reader",
    "location_settings",
    "page_header",
];

/// Runs target `name` on `data`.
pub fn run(name: &str, data: &[u8]) {
    match name {
        "filter" => filter(data),
        "metadata_plan" => metadata_plan(data),
        "reader" => reader(data),
        "location_settings" => location_settings(data),
        "page_header" => page_header(data),
        other => panic!("no fuzz target {other}"),
    }
}

/// The filter language: parse; an accepted filter prints as text that
/// parses back to a filter printing the same (Display's promise, but for
/// an empty conjunction and NaN, which have no text form).
pub fn filter(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(p) = text.parse::<Predicate>() {
        let printed = p.to_string();
        // The two exceptions Display documents: no terms, and NaN.
        if printed.is_empty() || printed.contains("NaN") {
            return;
        }
        let again: Predicate = printed
            .parse()
            .unwrap_or_else(|e| panic!("{text:?} printed as {printed:?}, which fails: {e}"));
        assert_eq!(again.to_string(), printed, "printing is stable");
    }
}

fn engine() -> Arc<Engine> {
    static ENGINE: std::sync::OnceLock<Arc<Engine>> = std::sync::OnceLock::new();
    ENGINE
        .get_or_init(|| {
            Engine::new(
                Settings::builder()
                    .num_threads(2)
                    .auto_direct_io_read(false)
                    .build()
                    .unwrap(),
            )
            .unwrap()
        })
        .clone()
}

/// A scratch file per thread for the input (tmpfs when there is one).
fn scratch(data: &[u8]) -> PathBuf {
    let dir = if Path::new("/dev/shm").is_dir() {
        PathBuf::from("/dev/shm")
    } else {
        std::env::temp_dir()
    };
    let name = format!(
        "gdscan-fuzz-{}-{:?}.parquet",
        std::process::id(),
        std::thread::current().id()
    );
    let path = dir.join(name.replace(['(', ')'], ""));
    std::fs::write(&path, data).unwrap();
    path
}

/// Opens the input as a local source, with no metadata cached from an
/// earlier input at the same path.
fn source(data: &[u8]) -> Option<(PathBuf, Arc<dyn Source>)> {
    let path = scratch(data);
    metadata::clear_cache();
    let source: Arc<dyn Source> = Arc::new(LocalSource::open(engine(), &path).ok()?);
    Some((path, source))
}

/// Footer, metadata and page index, then plans over them (every column;
/// one column with a filter on it), then the plans' fetches into host
/// memory: every row group handed out holds exactly the file's bytes at its
/// chunks' ranges, all inside the file; a plan whose ranges leave the file
/// (the footer lies: the plan cannot know the file's size) fails its fetch
/// with an error, never a panic or partial data.
pub fn metadata_plan(data: &[u8]) {
    let Some((path, source)) = source(data) else {
        return;
    };
    if let Ok(meta) = metadata::load(&source, MetadataOptions::default()) {
        let mut requests = vec![ScanRequest::default()];
        let fields = meta.file_metadata().schema_descr().columns().to_vec();
        if !fields.is_empty() {
            let pick = data.last().copied().unwrap_or(0) as usize % fields.len();
            let name = fields[pick].path().string();
            for text in [
                format!("\"{name}\" IS NOT NULL"),
                format!("\"{name}\" >= 0 AND \"{name}\" < 1000"),
                format!("\"{name}\" = 'a'"),
            ] {
                if let Ok(p) = text.parse::<Predicate>() {
                    requests.push(ScanRequest {
                        projection: Projection::Columns(vec![name.clone()]),
                        predicate: Some(p),
                        ..Default::default()
                    });
                }
            }
        }
        for request in requests {
            if let Ok(p) = plan(&meta, &request) {
                check_fetch(&source, data, Arc::new(p));
            }
        }
    }
    let _ = std::fs::remove_file(path);
}

fn check_fetch(source: &Arc<dyn Source>, data: &[u8], p: Arc<gdscan::parquet::ScanPlan>) {
    use gdscan::parquet::fetch::{fetch, FetchOptions, HostAllocator, SourceScan};
    let size = data.len() as u64;
    for rg in fetch(
        [SourceScan::new(source.clone(), p.clone())],
        [HostAllocator],
        FetchOptions::default(),
    ) {
        let Ok(rg) = rg else {
            return;
        };
        for slice in &rg.chunks {
            let c = &p.chunks[slice.chunk];
            let mut want = Vec::new();
            for r in &c.ranges {
                assert!(
                    r.start <= r.end && r.end <= size,
                    "{r:?} handed out past {size} bytes"
                );
                want.extend_from_slice(&data[r.start as usize..r.end as usize]);
            }
            let got = rg.chunk_bytes(slice).expect("host bytes");
            assert!(
                got == want,
                "chunk {} differs from the file's bytes",
                slice.chunk
            );
        }
    }
}

/// Decodes every row through gdscan's `AsyncFileReader` and through
/// arrow-rs's own async reader over the bytes in memory: when both succeed
/// they give the same batches.
pub fn reader(data: &[u8]) {
    use parquet::arrow::ParquetRecordBatchStreamBuilder;
    let Some((path, source)) = source(data) else {
        return;
    };
    // On no runtime at all (gdscan's reader works on any executor).
    let ours = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        futures::executor::block_on(async move {
            let builder =
                ParquetRecordBatchStreamBuilder::new(GdsParquetReader::new(source)).await?;
            builder
                .with_batch_size(1024)
                .build()?
                .try_collect::<Vec<_>>()
                .await
        })
    }));
    // The oracle's own panics (arrow-rs's, on bytes it reads alone) are
    // not gdscan's: they only skip the comparison.
    let bytes = bytes::Bytes::copy_from_slice(data);
    let theirs = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        futures::executor::block_on(async move {
            let builder = ParquetRecordBatchStreamBuilder::new(InMemory(bytes)).await?;
            builder
                .with_batch_size(1024)
                .build()?
                .try_collect::<Vec<_>>()
                .await
        })
    }));
    let _ = std::fs::remove_file(path);
    match (ours, theirs) {
        (Ok(a), Ok(b)) => {
            if let (Ok(a), Ok(b)) = (&a, &b) {
                assert_eq!(a, b, "gdscan's reader and arrow-rs's differ");
            }
        }
        // arrow-rs's decoder panics on the same bytes read from memory
        // with the same message: its bug (the bytes gdscan handed it are
        // the file's), which gdscan's own entry points turn into errors
        // (`ipc_export::write_ipc`).
        (Err(a), Err(b)) if panic_text(&*a) == panic_text(&*b) => {}
        (Err(a), _) => std::panic::resume_unwind(a),
        (Ok(_), Err(_)) => {}
    }
}

/// A panic's message.
pub fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or(p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// arrow-rs's `AsyncFileReader` over bytes in memory: the oracle.
struct InMemory(bytes::Bytes);

impl parquet::arrow::async_reader::AsyncFileReader for InMemory {
    fn get_bytes(
        &mut self,
        range: std::ops::Range<u64>,
    ) -> futures::future::BoxFuture<'_, parquet::errors::Result<bytes::Bytes>> {
        let len = self.0.len() as u64;
        let out = if range.start <= range.end && range.end <= len {
            Ok(self.0.slice(range.start as usize..range.end as usize))
        } else {
            Err(parquet::errors::ParquetError::EOF(format!(
                "{range:?} past {len}"
            )))
        };
        Box::pin(async move { out })
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a parquet::arrow::arrow_reader::ArrowReaderOptions>,
    ) -> futures::future::BoxFuture<
        'a,
        parquet::errors::Result<Arc<parquet::file::metadata::ParquetMetaData>>,
    > {
        // As gdscan's reader: the page index (when the file has one) only
        // when the options ask for it.
        use parquet::file::metadata::PageIndexPolicy;
        let page_index = options.is_some_and(|o| {
            o.column_index_policy() != PageIndexPolicy::Skip
                || o.offset_index_policy() != PageIndexPolicy::Skip
        });
        let bytes = self.0.clone();
        Box::pin(async move {
            let reader = parquet::file::metadata::ParquetMetaDataReader::new()
                .with_page_index_policy(if page_index {
                    PageIndexPolicy::Optional
                } else {
                    PageIndexPolicy::Skip
                });
            Ok(Arc::new(reader.parse_and_finish(&bytes)?))
        })
    }
}

/// Locations and settings: `store::classify` on the input's first line,
/// and `Settings::from_lookup` over the `KEY=value` lines that follow;
/// accepted settings keep their invariants.
pub fn location_settings(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.lines();
    if let Some(location) = lines.next() {
        let _ = gdscan::store::classify(location);
    }
    let pairs: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let lookup = |key: &str| {
        pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    };
    if let Ok(s) = Settings::from_lookup(lookup) {
        assert!(s.num_threads >= 1, "at least one thread");
        assert!(s.task_size >= 1, "tasks of at least one byte");
    }
    for (_, v) in &pairs {
        let _ = gdscan::config::parse_size(v);
    }
}

/// The GPU decoder's Thrift compact page-header reader: an accepted header
/// consumed no more bytes than it was given.
pub fn page_header(data: &[u8]) {
    if let Ok((_header, used)) = gdscan::decode::page::parse_page_header(data) {
        assert!(used <= data.len(), "used {used} of {} bytes", data.len());
    }
}
