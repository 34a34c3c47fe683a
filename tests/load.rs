//! Load: 64 threads on one `FileHandle` reading random ranges for a fixed
//! time, and 1,000 small Parquet files scanned at once. Every byte is
//! compared with the file's; a watchdog fails the test on a deadlock; the
//! figures (reads, bytes, peak RSS) are printed for docs/reliability.md
//! (`--nocapture`). Each test takes a few seconds.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use arrow::array::{ArrayRef, Int64Array, StringArray};
use arrow::record_batch::RecordBatch;
use gdscan::parquet::fetch::{fetch, FetchOptions, HostAllocator, SourceScan};
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::plan::{plan, ScanRequest};
use gdscan::store::{LocalSource, Source};
use gdscan::{Engine, FileHandle, IoPath, OpenMode, Settings};

/// Peak resident set of this process, from /proc (kB).
fn peak_rss_kb() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}

/// Runs `f` on another thread; fails if it has not finished by `limit`.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(limit)
        .expect("deadlock or stall: the load did not finish in time")
}

#[test]
fn sixty_four_threads_on_one_handle_read_right_bytes_without_deadlock() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.bin");
    let len = 16usize << 20;
    let mut data = vec![0u8; len];
    let mut s = 0x9E37_79B9_7F4A_7C15u64;
    for b in data.iter_mut() {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        *b = (s >> 32) as u8;
    }
    std::fs::write(&path, &data).unwrap();
    let data = Arc::new(data);
    let engine = Engine::new(
        Settings::builder()
            .num_threads(8)
            .task_size(256 << 10)
            .build()
            .unwrap(),
    )
    .unwrap();
    let h = Arc::new(FileHandle::open_with(engine, &path, OpenMode::Read).unwrap());
    let run_for = Duration::from_secs(4);
    let (reads, bytes) = within(Duration::from_secs(60), {
        let (h, data) = (h.clone(), data.clone());
        move || {
            let stop = Arc::new(AtomicBool::new(false));
            let reads = Arc::new(AtomicU64::new(0));
            let bytes = Arc::new(AtomicU64::new(0));
            let threads: Vec<_> = (0..64u64)
                .map(|t| {
                    let (h, data, stop, reads, bytes) = (
                        h.clone(),
                        data.clone(),
                        stop.clone(),
                        reads.clone(),
                        bytes.clone(),
                    );
                    std::thread::spawn(move || {
                        let mut r = t.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1;
                        let mut buf = vec![0u8; 2 << 20];
                        while !stop.load(Ordering::Relaxed) {
                            r ^= r << 13;
                            r ^= r >> 7;
                            r ^= r << 17;
                            let offset = (r % data.len() as u64) as usize;
                            let n = 1 + ((r >> 24) % (2 << 20)) as usize;
                            let got = if t % 4 == 0 {
                                let fut = h.pread_async(vec![0u8; n], n, offset as u64).unwrap();
                                let (b, got) = futures::executor::block_on(fut).unwrap();
                                buf[..got].copy_from_slice(&b[..got]);
                                got
                            } else {
                                h.pread(&mut buf, n, offset as u64).unwrap()
                            };
                            assert_eq!(got, n.min(data.len() - offset));
                            assert!(buf[..got] == data[offset..offset + got], "bytes differ");
                            reads.fetch_add(1, Ordering::Relaxed);
                            bytes.fetch_add(got as u64, Ordering::Relaxed);
                        }
                    })
                })
                .collect();
            std::thread::sleep(run_for);
            stop.store(true, Ordering::Relaxed);
            for t in threads {
                t.join().unwrap();
            }
            (reads.load(Ordering::Relaxed), bytes.load(Ordering::Relaxed))
        }
    });
    let counted = h.counters().get(IoPath::PosixHost).bytes;
    eprintln!(
        "64 threads, one handle, {:?}: {reads} reads, {bytes} bytes checked ({:.2} GB/s), peak RSS {} MiB",
        run_for,
        bytes as f64 / run_for.as_secs_f64() / 1e9,
        peak_rss_kb() / 1024
    );
    assert!(reads >= 64, "every thread read");
    assert_eq!(
        counted, bytes,
        "the handle's counters agree with the bytes read"
    );
}

fn small_file(dir: &std::path::Path, i: usize) -> std::path::PathBuf {
    let path = dir.join(format!("f{i:04}.parquet"));
    let rows = 50 + i % 200;
    let keys: Int64Array = (0..rows as i64).map(|k| k * 1000 + i as i64).collect();
    let names: StringArray = (0..rows)
        .map(|k| Some(format!("file {i} row {k}")))
        .collect();
    let batch = RecordBatch::try_from_iter([
        ("k", Arc::new(keys) as ArrayRef),
        ("s", Arc::new(names) as ArrayRef),
    ])
    .unwrap();
    let mut w = parquet::arrow::ArrowWriter::try_new(
        std::fs::File::create(&path).unwrap(),
        batch.schema(),
        None,
    )
    .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    path
}

#[test]
fn a_thousand_small_files_scanned_at_once_land_every_chunk_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<_> = (0..1000).map(|i| small_file(dir.path(), i)).collect();
    let engine = Engine::new(Settings::builder().num_threads(8).build().unwrap()).unwrap();
    let started = Instant::now();
    let (chunks, bytes) = within(Duration::from_secs(120), move || {
        let mut scans = Vec::new();
        let mut contents = Vec::new();
        for f in &files {
            let source: Arc<dyn Source> = Arc::new(LocalSource::open(engine.clone(), f).unwrap());
            let meta = load(&source, MetadataOptions::default()).unwrap();
            let p = Arc::new(plan(&meta, &ScanRequest::default()).unwrap());
            contents.push(std::fs::read(f).unwrap());
            scans.push(SourceScan::new(source, p));
        }
        let plans: Vec<_> = scans.iter().map(|s| s.plan.clone()).collect();
        let (mut chunks, mut bytes) = (0u64, 0u64);
        let mut seen = vec![0usize; files.len()];
        // One pipeline over all 1,000 files: their reads are in flight together.
        for rg in fetch(scans, [HostAllocator], FetchOptions::default()) {
            let rg = rg.unwrap();
            seen[rg.file] += 1;
            for slice in &rg.chunks {
                let got = rg.chunk_bytes(slice).unwrap();
                let c = &plans[rg.file].chunks[slice.chunk];
                let want = &contents[rg.file][c.range.start as usize..c.range.end as usize];
                assert!(
                    got == want,
                    "file {} chunk {} differs",
                    rg.file,
                    slice.chunk
                );
                chunks += 1;
                bytes += got.len() as u64;
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "every file's row group, once");
        (chunks, bytes)
    });
    eprintln!(
        "1,000 files at once: {chunks} chunks, {bytes} bytes checked in {:.2} s, peak RSS {} MiB",
        started.elapsed().as_secs_f64(),
        peak_rss_kb() / 1024
    );
    assert_eq!(chunks, 2000);
}
