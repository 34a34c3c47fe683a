//! Injected faults on the engine's POSIX path (the `FileHandle::inject_faults`
//! seam): EINTR, EAGAIN, short reads and writes, EIO at a chosen offset,
//! ENOSPC, the file truncated or replaced mid-request. Expected: a typed
//! error naming the file and the offset, never a request reported complete
//! when it was not, counters that count exactly the completed tasks, and the
//! same handle usable for the next request. The bytes of every successful
//! read are compared with the file's; the figures (faults injected per kind)
//! are printed for docs/reliability.md (`--nocapture`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use gdscan::engine::{Fault, FaultInjector, IoError, IoPath};
use gdscan::{Engine, Error, FileHandle, OpenMode, Settings};

const TASK: usize = 64 << 10;

fn engine(threads: usize) -> Arc<Engine> {
    Engine::new(
        Settings::builder()
            .num_threads(threads)
            .task_size(TASK)
            .auto_direct_io_read(false)
            .auto_direct_io_write(false)
            .build()
            .unwrap(),
    )
    .unwrap()
}

/// Deterministic pseudo-random numbers (xorshift64*).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed | 1);
    (0..len).map(|_| r.next() as u8).collect()
}

fn file_with(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, data).unwrap();
    p
}

type Decide = dyn Fn(&'static str, u64, usize) -> Option<Fault> + Send + Sync;

/// An injector from a closure, counting what it injected by kind.
struct Scripted {
    decide: Box<Decide>,
    injected: Mutex<BTreeMap<String, u64>>,
    calls: AtomicU64,
}

impl std::fmt::Debug for Scripted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Scripted")
    }
}

impl Scripted {
    fn new(
        decide: impl Fn(&'static str, u64, usize) -> Option<Fault> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Scripted {
            decide: Box::new(decide),
            injected: Mutex::new(BTreeMap::new()),
            calls: AtomicU64::new(0),
        })
    }
    fn ask(&self, op: &'static str, offset: u64, len: usize) -> Option<Fault> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        let f = (self.decide)(op, offset, len);
        if let Some(f) = f {
            let kind = match f {
                Fault::Errno(libc::EINTR) => "EINTR".to_string(),
                Fault::Errno(libc::EAGAIN) => "EAGAIN".to_string(),
                Fault::Errno(libc::EIO) => "EIO".to_string(),
                Fault::Errno(libc::ENOSPC) => "ENOSPC".to_string(),
                Fault::Errno(e) => format!("errno {e}"),
                Fault::Short(0) => format!("{op} of 0 bytes"),
                Fault::Short(_) => format!("short {op}"),
            };
            *self.injected.lock().unwrap().entry(kind).or_default() += 1;
        }
        f
    }
    fn count(&self, kind: &str) -> u64 {
        self.injected
            .lock()
            .unwrap()
            .get(kind)
            .copied()
            .unwrap_or(0)
    }
    fn report(&self, test: &str) {
        eprintln!(
            "faults injected ({test}): {:?} over {} calls",
            self.injected.lock().unwrap(),
            self.calls.load(Ordering::Relaxed)
        );
    }
}

impl FaultInjector for Scripted {
    fn on_read(&self, offset: u64, len: usize) -> Option<Fault> {
        self.ask("pread", offset, len)
    }
    fn on_write(&self, offset: u64, len: usize) -> Option<Fault> {
        self.ask("pwrite", offset, len)
    }
}

fn host(h: &FileHandle) -> (u64, u64) {
    let t = h.counters().get(IoPath::PosixHost);
    (t.ops, t.bytes)
}

/// Reads `len` at `offset` and checks the outcome against `data`: on
/// success every byte, and the counters grew by exactly the request's tasks;
/// on failure, fewer bytes counted than asked. Returns the error, if any.
fn checked_read(h: &FileHandle, data: &[u8], offset: u64, len: usize) -> Option<Error> {
    let (ops0, bytes0) = host(h);
    let mut buf = vec![0xEEu8; len];
    let outcome = h.pread(&mut buf, len, offset);
    let (ops1, bytes1) = host(h);
    match outcome {
        Ok(n) => {
            let end = (offset as usize + len).min(data.len());
            assert_eq!(n, end - offset as usize);
            assert!(buf[..n] == data[offset as usize..end], "bytes differ");
            assert_eq!(bytes1 - bytes0, n as u64, "counted bytes");
            assert_eq!(ops1 - ops0, n.div_ceil(TASK) as u64, "counted tasks");
            None
        }
        Err(e) => {
            assert!(
                bytes1 - bytes0 < len as u64,
                "a failed request counted whole"
            );
            Some(e.into())
        }
    }
}

/// The error is a failed transfer call on `path` at an offset inside
/// `[lo, hi)`, with `errno`.
fn assert_transfer(err: &Error, path: &Path, op: &str, lo: u64, hi: u64, errno: i32) {
    match err {
        Error::Io(IoError::Transfer {
            path: p,
            op: o,
            offset,
            source,
            ..
        }) => {
            assert_eq!(p, &path.display().to_string());
            assert_eq!(*o, op);
            assert!(
                (lo..hi).contains(offset),
                "offset {offset} outside {lo}..{hi}"
            );
            assert_eq!(source.raw_os_error(), Some(errno));
            let msg = err.to_string();
            assert!(
                msg.contains(&path.display().to_string()) && msg.contains(&offset.to_string()),
                "{msg}"
            );
        }
        other => panic!("expected IoError::Transfer, got {other:?}"),
    }
}

#[test]
fn eintr_and_short_reads_are_retried_to_the_right_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(3 << 20, 1);
    let path = file_with(dir.path(), "f", &data);
    let h = FileHandle::open_with(engine(4), &path, OpenMode::Read).unwrap();
    let rng = Mutex::new(Rng(7));
    let inj = Scripted::new(move |_, _, len| {
        let mut r = rng.lock().unwrap();
        match r.below(4) {
            0 => Some(Fault::Errno(libc::EINTR)),
            1 => Some(Fault::Short(1 + r.below(len as u64) as usize)),
            _ => None,
        }
    });
    assert!(h.inject_faults(inj.clone()));
    let mut r = Rng(99);
    for _ in 0..200 {
        let offset = r.below(data.len() as u64);
        let len = 1 + r.below(400_000) as usize;
        assert!(checked_read(&h, &data, offset, len).is_none());
    }
    inj.report("EINTR and short reads");
    assert!(inj.count("EINTR") > 0 && inj.count("short pread") > 0);
}

#[test]
fn eagain_is_retried_a_bounded_number_of_times_then_typed() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(1 << 20, 2);
    let path = file_with(dir.path(), "f", &data);
    let h = FileHandle::open_with(engine(2), &path, OpenMode::Read).unwrap();
    // Three EAGAINs per call site, then success: retried.
    let seen = Mutex::new(BTreeMap::<u64, u32>::new());
    let forever = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let f2 = forever.clone();
    let inj = Scripted::new(move |_, offset, _| {
        if f2.load(Ordering::Relaxed) && offset == 300_000 {
            return Some(Fault::Errno(libc::EAGAIN));
        }
        let mut s = seen.lock().unwrap();
        let n = s.entry(offset).or_default();
        *n += 1;
        (*n <= 3).then_some(Fault::Errno(libc::EAGAIN))
    });
    h.inject_faults(inj.clone());
    assert!(checked_read(&h, &data, 0, data.len()).is_none());
    // EAGAIN for ever at one task's start: a typed error, in bounded time.
    forever.store(true, Ordering::Relaxed);
    let started = std::time::Instant::now();
    let err = checked_read(&h, &data, 300_000, 200_000).unwrap();
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    assert_transfer(&err, &path, "pread", 300_000, 300_001, libc::EAGAIN);
    inj.report("EAGAIN");
    // The handle still reads what has no fault.
    assert!(checked_read(&h, &data, 400_000, 100_000).is_none());
}

#[test]
fn eio_at_an_offset_fails_the_request_naming_file_and_offset_and_the_handle_recovers() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(2 << 20, 3);
    let path = file_with(dir.path(), "f", &data);
    let h = FileHandle::open_with(engine(4), &path, OpenMode::Read).unwrap();
    let bad: u64 = 1_234_567;
    let inj = Scripted::new(move |_, offset, len| {
        (offset <= bad && bad < offset + len as u64).then_some(Fault::Errno(libc::EIO))
    });
    h.inject_faults(inj.clone());
    let mut r = Rng(5);
    let (mut failed, mut ok) = (0, 0);
    for _ in 0..300 {
        let offset = r.below(data.len() as u64);
        let len = 1 + r.below(600_000) as usize;
        let covers = offset <= bad && bad < offset + len as u64;
        match checked_read(&h, &data, offset, len) {
            Some(err) => {
                assert!(covers, "failed without the bad offset: {err}");
                assert_transfer(
                    &err,
                    &path,
                    "pread",
                    offset.max(bad + 1 - TASK as u64),
                    bad + 1,
                    libc::EIO,
                );
                failed += 1;
            }
            None => {
                assert!(!covers, "read across the bad offset succeeded");
                ok += 1;
            }
        }
    }
    eprintln!("EIO at {bad}: {failed} requests failed, {ok} read right");
    inj.report("EIO");
    assert!(failed > 0 && ok > 0);
}

#[test]
fn a_file_truncated_mid_request_is_a_short_read_never_a_full_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(4 << 20, 4);
    let path = file_with(dir.path(), "f", &data);
    let h = FileHandle::open_with(engine(4), &path, OpenMode::Read).unwrap();
    let cut = 1u64 << 20;
    let p2 = path.clone();
    let armed = Arc::new(std::sync::atomic::AtomicBool::new(true));
    let a2 = armed.clone();
    let inj = Scripted::new(move |_, offset, _| {
        // The first call past 2 MiB cuts the file to 1 MiB first.
        if offset >= 2 << 20 && a2.swap(false, Ordering::SeqCst) {
            std::fs::OpenOptions::new()
                .write(true)
                .open(&p2)
                .unwrap()
                .set_len(cut)
                .unwrap();
        }
        None
    });
    h.inject_faults(inj);
    let err = checked_read(&h, &data, 0, data.len()).expect("a short read");
    match &err {
        Error::Io(IoError::ShortRead {
            path: p, offset, ..
        }) => {
            assert_eq!(p, &path.display().to_string());
            assert!(*offset >= cut, "{err}");
        }
        other => panic!("expected ShortRead, got {other:?}"),
    }
    assert!(!armed.load(Ordering::SeqCst));
    // The same handle reads what is left, and refuses what is gone.
    assert!(checked_read(&h, &data, 0, cut as usize).is_none());
    assert!(matches!(
        checked_read(&h, &data, cut, 10),
        Some(Error::Io(IoError::OffsetPastEof { .. }))
    ));
}

#[test]
fn a_file_replaced_mid_request_reads_the_file_that_was_opened() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(2 << 20, 5);
    let other = pattern(2 << 20, 6);
    let path = file_with(dir.path(), "f", &data);
    let replacement = file_with(dir.path(), "g", &other);
    let h = FileHandle::open_with(engine(4), &path, OpenMode::Read).unwrap();
    let (p2, r2) = (path.clone(), replacement.clone());
    let once = std::sync::Once::new();
    let inj = Scripted::new(move |_, offset, _| {
        if offset >= 1 << 20 {
            once.call_once(|| std::fs::rename(&r2, &p2).unwrap());
        }
        None
    });
    h.inject_faults(inj);
    // The descriptor still names the first file: its bytes, whole.
    assert!(checked_read(&h, &data, 0, data.len()).is_none());
    assert_eq!(
        std::fs::read(&path).unwrap(),
        other,
        "the path now names the new file"
    );
}

#[test]
fn enospc_and_short_writes_on_the_write_path() {
    let dir = tempfile::tempdir().unwrap();
    let data = pattern(3 << 20, 8);
    let path = dir.path().join("out");
    let h = FileHandle::open_with(engine(4), &path, OpenMode::ReadWriteCreate).unwrap();
    let full_at: u64 = 2_500_000;
    let rng = Mutex::new(Rng(3));
    let inj = Scripted::new(move |op, offset, len| {
        if op != "pwrite" {
            return None;
        }
        if offset <= full_at && full_at < offset + len as u64 {
            return Some(Fault::Errno(libc::ENOSPC));
        }
        let mut r = rng.lock().unwrap();
        match r.below(3) {
            0 => Some(Fault::Short(1 + r.below(len as u64) as usize)),
            1 => Some(Fault::Errno(libc::EINTR)),
            _ => None,
        }
    });
    h.inject_faults(inj.clone());
    // Short writes and EINTR: the bytes land whole.
    assert_eq!(h.pwrite(&data, 2 << 20, 0).unwrap(), 2 << 20);
    assert_eq!(std::fs::read(&path).unwrap(), &data[..2 << 20]);
    // ENOSPC at 2.5 MB: a typed error naming the file and the offset.
    let (_, bytes0) = host(&h);
    let err = Error::from(h.pwrite(&data, data.len(), 0).unwrap_err());
    assert_transfer(
        &err,
        &path,
        "pwrite",
        full_at + 1 - TASK as u64,
        full_at + 1,
        libc::ENOSPC,
    );
    assert!(host(&h).1 - bytes0 < data.len() as u64);
    // The handle writes again where there is room.
    assert_eq!(h.pwrite(&data[..1000], 1000, 0).unwrap(), 1000);
    inj.report("writes");
    assert!(inj.count("ENOSPC") > 0 && inj.count("short pwrite") > 0);
}

#[test]
fn a_write_that_writes_nothing_is_an_error_not_a_hang() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out");
    let h = FileHandle::open_with(engine(2), &path, OpenMode::Write).unwrap();
    h.inject_faults(Scripted::new(|op, _, _| {
        (op == "pwrite").then_some(Fault::Short(0))
    }));
    let err = h.pwrite(&[1u8; 5000][..], 5000, 0).unwrap_err();
    match &err {
        IoError::Transfer {
            op, offset, source, ..
        } => {
            assert_eq!(*op, "pwrite");
            assert_eq!(*offset, 0);
            assert_eq!(source.kind(), std::io::ErrorKind::WriteZero);
        }
        other => panic!("expected Transfer, got {other:?}"),
    }
}

/// Many requests from several threads, sync and async, with every kind of
/// read fault mixed at random (seeded): each is right or a typed error.
#[test]
fn a_random_mix_of_faults_under_concurrency_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = Arc::new(pattern(8 << 20, 9));
    let path = file_with(dir.path(), "f", &data);
    let h = Arc::new(FileHandle::open_with(engine(8), &path, OpenMode::Read).unwrap());
    let rng = Mutex::new(Rng(11));
    let inj = Scripted::new(move |_, _, len| {
        let mut r = rng.lock().unwrap();
        match r.below(50) {
            0..=4 => Some(Fault::Errno(libc::EINTR)),
            5..=9 => Some(Fault::Short(1 + r.below(len as u64) as usize)),
            10 => Some(Fault::Errno(libc::EAGAIN)),
            11 => Some(Fault::Errno(libc::EIO)),
            _ => None,
        }
    });
    h.inject_faults(inj.clone());
    let results: Vec<(u64, u64)> = std::thread::scope(|s| {
        (0..4u64)
            .map(|t| {
                let (h, data) = (h.clone(), data.clone());
                s.spawn(move || {
                    let mut r = Rng(100 + t);
                    let (mut ok, mut typed) = (0, 0);
                    for i in 0..150 {
                        let offset = r.below(data.len() as u64);
                        let len = 1 + r.below(1 << 20) as usize;
                        let outcome = if i % 2 == 0 {
                            let mut buf = vec![0u8; len];
                            h.pread(&mut buf, len, offset).map(|n| (n, buf))
                        } else {
                            h.pread_async(vec![0u8; len], len, offset).and_then(|f| {
                                futures::executor::block_on(f).map(|(buf, n)| (n, buf))
                            })
                        };
                        match outcome {
                            Ok((n, buf)) => {
                                let end = offset as usize + n;
                                assert!(buf[..n] == data[offset as usize..end]);
                                ok += 1;
                            }
                            Err(IoError::Transfer { source, .. }) => {
                                assert_eq!(source.raw_os_error(), Some(libc::EIO));
                                typed += 1;
                            }
                            Err(other) => panic!("untyped failure: {other:?}"),
                        }
                    }
                    (ok, typed)
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|j| j.join().unwrap())
            .collect()
    });
    let ok: u64 = results.iter().map(|r| r.0).sum();
    let typed: u64 = results.iter().map(|r| r.1).sum();
    eprintln!("mixed faults: {ok} reads right, {typed} typed EIO failures");
    inj.report("mixed");
    assert!(ok > 0 && typed > 0);
    // Counters: only completed tasks, never more bytes than were asked.
    let t = h.counters().get(IoPath::PosixHost);
    assert!(t.ops > 0 && t.bytes > 0);
}
