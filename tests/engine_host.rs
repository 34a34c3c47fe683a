//! Host-memory paths of the I/O engine, checked byte for byte against
//! `std::fs` (the oracle): parallel reads across thread counts and task sizes,
//! short reads at end of file, O_DIRECT reads and writes, writes in every
//! writable mode, asynchronous requests, and per-path counters.

mod common;

use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::evict;
use futures::executor::block_on;
use gdscan::{Engine, FileHandle, IoPath, OpenMode, Settings};

const MIB: usize = 1024 * 1024;
const PAGE: usize = 4096;
const THREADS: [usize; 4] = [1, 2, 3, 8];
const TASK_SIZES: [usize; 5] = [1, 7, 4096, 4097, MIB];
const FILE_SIZES: [usize; 4] = [1, 4095, 4096, 1_000_003];

/// Deterministic pseudo-random bytes (xorshift64*), different per seed.
fn pattern(len: usize, seed: u64) -> Vec<u8> {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(len + 8);
    while out.len() < len {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        out.extend_from_slice(&state.wrapping_mul(0x2545_F491_4F6C_DD1D).to_le_bytes());
    }
    out.truncate(len);
    out
}

fn engine(threads: usize, task_size: usize, direct_read: bool, direct_write: bool) -> Arc<Engine> {
    let settings = Settings::builder()
        .num_threads(threads)
        .task_size(task_size)
        .auto_direct_io_read(direct_read)
        .auto_direct_io_write(direct_write)
        .build()
        .expect("valid settings");
    let engine = Engine::new(settings).expect("engine starts");
    assert_eq!(engine.threads(), threads);
    assert_eq!(engine.settings().task_size, task_size);
    engine
}

/// Writes `len` pattern bytes to `dir/name` with std and returns the path and
/// the file content as std reads it back (the oracle).
fn make_file(dir: &Path, name: &str, len: usize, seed: u64) -> (PathBuf, Vec<u8>) {
    let path = dir.join(name);
    std::fs::write(&path, pattern(len, seed)).unwrap();
    let content = std::fs::read(&path).unwrap();
    assert_eq!(content.len(), len);
    (path, content)
}

/// A buffer of `len` zero bytes whose slice `buf[start..start + len]` begins
/// `shift` bytes after a 4096-byte boundary.
fn aligned_buffer(len: usize, shift: usize) -> (Vec<u8>, usize) {
    let buf = vec![0u8; len + 2 * PAGE];
    let addr = buf.as_ptr() as usize;
    let start = (PAGE - addr % PAGE) % PAGE + shift;
    assert_eq!((addr + start) % PAGE, shift % PAGE);
    (buf, start)
}

/// Whether the process holds a descriptor for `path` opened with O_DIRECT
/// (from /proc/self/fd and /proc/self/fdinfo).
fn has_direct_descriptor(path: &Path) -> bool {
    let want = std::fs::canonicalize(path).unwrap();
    for entry in std::fs::read_dir("/proc/self/fd").unwrap().flatten() {
        let Ok(target) = std::fs::read_link(entry.path()) else {
            continue;
        };
        if target != want {
            continue;
        }
        let info_path = Path::new("/proc/self/fdinfo").join(entry.file_name());
        let Ok(info) = std::fs::read_to_string(info_path) else {
            continue;
        };
        for line in info.lines() {
            if let Some(flags) = line.strip_prefix("flags:") {
                let flags = i64::from_str_radix(flags.trim(), 8).unwrap();
                if flags & i64::from(libc::O_DIRECT) != 0 {
                    return true;
                }
            }
        }
    }
    false
}

/// Checks that a handle which asked for O_DIRECT either holds an O_DIRECT
/// descriptor or says why not; returns whether direct I/O is in use.
fn direct_in_use(handle: &FileHandle, path: &Path) -> bool {
    match handle.direct_unavailable() {
        None => {
            assert!(
                has_direct_descriptor(path),
                "no reason given, yet no O_DIRECT descriptor is open for {}",
                path.display()
            );
            true
        }
        Some(reason) => {
            assert!(!reason.is_empty());
            eprintln!("O_DIRECT not available for {}: {reason}", path.display());
            false
        }
    }
}

/// (offset, size) requests for a file of `len` bytes: whole file, unaligned
/// starts, spans over many tasks, the last byte, and sizes beyond the end.
fn requests(len: usize) -> Vec<(u64, usize)> {
    let mut r = vec![(0, len), (0, 1), ((len - 1) as u64, 1)];
    if len > 1 {
        r.push((1, len - 1));
        r.push((1, len + 100)); // clipped at end of file
        r.push(((len / 2) as u64, len / 3 + 1));
    }
    if len > 10_000 {
        r.push((4095, 4097));
        r.push((4096, 3 * 4096));
        r.push((12_345, 777_777));
        r.push(((len - 5000) as u64, 4999));
    }
    r
}

#[test]
fn parallel_reads_match_std_across_threads_task_sizes_and_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let files: Vec<(PathBuf, Vec<u8>)> = FILE_SIZES
        .iter()
        .enumerate()
        .map(|(i, &len)| make_file(dir.path(), &format!("f{len}"), len, i as u64 + 1))
        .collect();
    let mut checked = 0usize;
    for threads in THREADS {
        for task_size in TASK_SIZES {
            let engine = engine(threads, task_size, false, false);
            for (path, content) in &files {
                let handle = FileHandle::open_with(engine.clone(), path, OpenMode::Read).unwrap();
                assert_eq!(handle.file_size().unwrap(), content.len() as u64);
                for (offset, size) in requests(content.len()) {
                    // Keep tiny task sizes cheap: at most ~3000 tasks per request.
                    let size = size.min(task_size.saturating_mul(3000));
                    let start = offset as usize;
                    let expected_len = size.min(content.len() - start);
                    let mut buf = vec![0x5Au8; size];
                    let n = handle.pread(&mut buf, size, offset).unwrap_or_else(|e| {
                        panic!(
                            "threads {threads} task {task_size} offset {offset} size {size}: {e}"
                        )
                    });
                    assert_eq!(
                        n, expected_len,
                        "threads {threads} task {task_size} offset {offset} size {size}"
                    );
                    assert!(
                        buf[..n] == content[start..start + n],
                        "bytes differ: threads {threads} task {task_size} offset {offset} size {size}"
                    );
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 400, "{checked}");
}

#[test]
fn reads_into_unaligned_slices_match_std() {
    let dir = tempfile::tempdir().unwrap();
    let (path, content) = make_file(dir.path(), "slices", 300_001, 7);
    let engine = engine(3, 4097, false, false);
    let handle = FileHandle::open_with(engine, &path, OpenMode::Read).unwrap();
    for shift in [0usize, 1, 3, 4095] {
        for (offset, size) in [(0u64, 300_001usize), (17, 123_456), (299_000, 1001)] {
            let mut buf = vec![0xEEu8; size + shift + 16];
            let n = handle
                .pread(&mut buf[shift..shift + size], size, offset)
                .unwrap();
            assert_eq!(n, size);
            let o = offset as usize;
            assert!(
                buf[shift..shift + n] == content[o..o + n],
                "shift {shift} offset {offset}"
            );
            assert!(
                buf[..shift].iter().all(|&b| b == 0xEE),
                "bytes before the slice changed"
            );
            assert!(
                buf[shift + n..].iter().all(|&b| b == 0xEE),
                "bytes after the slice changed"
            );
        }
    }
}

#[test]
fn short_read_at_eof_returns_remaining_bytes_and_leaves_the_rest_untouched() {
    const SENTINEL: u8 = 0xA5;
    let dir = tempfile::tempdir().unwrap();
    let (path, content) = make_file(dir.path(), "eof", 100_003, 3);
    for threads in [1, 3] {
        for task_size in [7, 4096, MIB] {
            let engine = engine(threads, task_size, false, false);
            let handle = FileHandle::open_with(engine, &path, OpenMode::Read).unwrap();
            for offset in [0u64, 1, 4096, 99_000, 100_002] {
                if task_size == 7 && offset < 90_000 {
                    continue; // tens of thousands of 7-byte tasks: too slow in debug
                }
                let remaining = content.len() - offset as usize;
                let size = remaining + 5000;
                let mut buf = vec![SENTINEL; size + 64];
                let n = handle.pread(&mut buf, size, offset).unwrap();
                assert_eq!(
                    n, remaining,
                    "threads {threads} task {task_size} offset {offset}"
                );
                assert!(buf[..n] == content[offset as usize..]);
                assert!(
                    buf[n..].iter().all(|&b| b == SENTINEL),
                    "bytes past the end of file were written: threads {threads} task {task_size} offset {offset}"
                );
            }
        }
    }
}

#[test]
fn direct_reads_match_std_at_aligned_and_unaligned_offsets() {
    let dir = tempfile::tempdir().unwrap();
    let len = 3 * MIB + 12_345;
    let (path, content) = make_file(dir.path(), "direct", len, 11);
    for threads in [1, 3] {
        for task_size in [4096, 4097, MIB] {
            let engine = engine(threads, task_size, true, false);
            let handle = FileHandle::open_with(engine, &path, OpenMode::Read).unwrap();
            let _ = direct_in_use(&handle, &path);
            for (offset, size) in [
                (0u64, len),
                (4096, 8 * 4096),
                (MIB as u64, MIB),
                (100, 3 * 4096 + 10),
                (4095, 2 * MIB + 1),
                ((len - 10_000) as u64, 20_000),
            ] {
                let expected = size.min(len - offset as usize);
                let o = offset as usize;
                // Memory aligned so that the aligned middle of the range can
                // go through O_DIRECT, and misaligned by one byte.
                let head = (PAGE - o % PAGE) % PAGE;
                for shift in [(PAGE - head) % PAGE, (PAGE - head + 1) % PAGE] {
                    let (mut buf, start) = aligned_buffer(size, shift);
                    let n = handle
                        .pread(&mut buf[start..start + size], size, offset)
                        .unwrap();
                    assert_eq!(
                        n, expected,
                        "threads {threads} task {task_size} offset {offset}"
                    );
                    assert!(
                        buf[start..start + n] == content[o..o + n],
                        "bytes differ: threads {threads} task {task_size} offset {offset} shift {shift}"
                    );
                }
            }
            // A plain Vec (whatever its alignment) must read the same bytes.
            let mut v = vec![0u8; len];
            assert_eq!(handle.pread(&mut v, len, 0).unwrap(), len);
            assert!(v == content);
        }
    }
}

/// Pages of `path` in `[offset, offset + len)` resident in the page cache.
fn resident_pages(path: &Path, offset: usize, len: usize) -> usize {
    let file = std::fs::File::open(path).unwrap();
    let file_len = file.metadata().unwrap().len() as usize;
    // SAFETY: a read-only shared mapping of an open file; it is only passed
    // to mincore (never dereferenced) and unmapped below.
    unsafe {
        let map = libc::mmap(
            std::ptr::null_mut(),
            file_len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            0,
        );
        assert_ne!(map, libc::MAP_FAILED);
        let pages = file_len.div_ceil(PAGE);
        let mut vec = vec![0u8; pages];
        assert_eq!(libc::mincore(map, file_len, vec.as_mut_ptr()), 0);
        libc::munmap(map, file_len);
        vec[offset / PAGE..(offset + len).div_ceil(PAGE)]
            .iter()
            .filter(|&&b| b & 1 != 0)
            .count()
    }
}

#[test]
fn is_cached_follows_the_page_cache() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let len = 256 * PAGE;
    let (path, _) = make_file(dir.path(), "cached", len, 14);
    let handle = FileHandle::open(&path, "r").unwrap();
    evict(&path);
    assert_eq!(resident_pages(&path, 0, len), 0, "eviction must work here");
    assert!(!handle.is_cached(0, len as u64));
    assert_eq!(handle.cached_pages(0, len as u64), Some((0, 256)));
    // Asking read nothing: a probe that reads would start the kernel's
    // read-ahead (and, on fast storage, find the page it brought in).
    assert_eq!(resident_pages(&path, 0, len), 0, "asking must not read");
    // Read the first half: it is cached (the rest may be too, by the
    // kernel's own read-ahead); the count agrees with mincore's.
    let mut buf = vec![0u8; len / 2];
    handle.pread(&mut buf, len / 2, 0).unwrap();
    assert!(handle.is_cached(0, (len / 2) as u64));
    assert!(
        handle.is_cached(PAGE as u64 / 2, PAGE as u64),
        "an unaligned range counts its pages"
    );
    let resident = resident_pages(&path, 0, len) as u64;
    assert_eq!(handle.cached_pages(0, len as u64), Some((resident, 256)));
    assert_eq!(handle.is_cached(0, len as u64), resident == 256);
    assert!(!handle.is_cached(0, 0), "an empty range is never cached");
}

#[test]
fn direct_read_of_aligned_range_bypasses_the_page_cache() {
    let dir = tempfile::tempdir().unwrap();
    let len = 64 * PAGE;
    let (path, content) = make_file(dir.path(), "bypass", len, 13);
    let engine = engine(2, 4 * PAGE, true, false);
    let handle = FileHandle::open_with(engine, &path, OpenMode::Read).unwrap();
    let direct = direct_in_use(&handle, &path);
    let (offset, size) = (8 * PAGE, 32 * PAGE);
    evict(&path);
    let evicted = resident_pages(&path, 0, len) == 0;
    let (mut buf, start) = aligned_buffer(size, 0);
    let n = handle
        .pread(&mut buf[start..start + size], size, offset as u64)
        .unwrap();
    assert_eq!(n, size);
    assert!(buf[start..start + size] == content[offset..offset + size]);
    match (direct, evicted) {
        (true, true) => assert_eq!(
            resident_pages(&path, offset, size),
            0,
            "an O_DIRECT read of an aligned range filled the page cache"
        ),
        (true, false) => eprintln!("page cache could not be emptied; residency not checked"),
        (false, _) => eprintln!("O_DIRECT unavailable here; only the bytes were checked"),
    }
}

/// Applies a write of `data` at `offset` to the model of the file: bytes past
/// the old end and before `offset` are a hole and read as zero.
fn model_write(model: &mut Vec<u8>, data: &[u8], offset: usize) {
    if model.len() < offset + data.len() {
        model.resize(offset + data.len(), 0);
    }
    model[offset..offset + data.len()].copy_from_slice(data);
}

#[test]
fn writes_in_every_mode_match_std_with_and_without_direct_io() {
    let dir = tempfile::tempdir().unwrap();
    let mut case = 0u64;
    for mode in [
        OpenMode::Write,
        OpenMode::ReadWriteCreate,
        OpenMode::ReadWrite,
    ] {
        for direct in [false, true] {
            for (threads, task_size) in [(1, 4096), (2, 7), (3, 4097), (8, MIB)] {
                case += 1;
                let path = dir.path().join(format!("w{case}"));
                // The file exists beforehand: "r+" keeps its bytes, "w"/"w+" truncate.
                let old = pattern(70_000, case + 100);
                std::fs::write(&path, &old).unwrap();
                let mut model = match mode {
                    OpenMode::ReadWrite => old.clone(),
                    _ => Vec::new(),
                };
                let engine = engine(threads, task_size, false, direct);
                let handle = FileHandle::open_with(engine, &path, mode).unwrap();
                assert_eq!(handle.mode(), mode);
                if direct {
                    let _ = direct_in_use(&handle, &path);
                } else {
                    assert!(handle.direct_unavailable().is_none());
                    assert!(!has_direct_descriptor(&path));
                }
                let big = if task_size < 64 { 20_000 } else { 2 * MIB + 3 };
                let writes: [(usize, usize, usize); 6] = [
                    (0, 4096, 0),             // aligned offset, aligned memory
                    (1, 1000, 5),             // unaligned offset and memory
                    (4096, 3 * 4096 + 5, 0),  // aligned middle + tail
                    (100, 3 * 4096 + 10, 0),  // head + middle + tail
                    (10_001, big, 3),         // spans many tasks
                    (200_000 + big, 4097, 0), // past the end: leaves a hole
                ];
                for (i, &(offset, size, shift)) in writes.iter().enumerate() {
                    let data = pattern(size, case * 10 + i as u64);
                    // Place the source so that `offset`'s aligned middle starts on an
                    // aligned address (plus `shift`), so O_DIRECT can really be used.
                    let head = (PAGE - offset % PAGE) % PAGE;
                    let (mut buf, start) = aligned_buffer(size, (PAGE - head + shift) % PAGE);
                    buf[start..start + size].copy_from_slice(&data);
                    let n = handle
                        .pwrite(&buf[start..start + size], size, offset as u64)
                        .unwrap();
                    assert_eq!(n, size);
                    model_write(&mut model, &data, offset);
                }
                assert_eq!(handle.file_size().unwrap(), model.len() as u64);
                let on_disk = std::fs::read(&path).unwrap();
                assert_eq!(on_disk.len(), model.len(), "{mode:?} direct {direct}");
                assert!(
                    on_disk == model,
                    "file differs: mode {mode:?} direct {direct} threads {threads} task {task_size}"
                );
                // Readable modes read their own writes back through the engine.
                if mode != OpenMode::Write {
                    let mut back = vec![0u8; model.len()];
                    assert_eq!(
                        handle.pread(&mut back, model.len(), 0).unwrap(),
                        model.len()
                    );
                    assert!(back == model);
                }
            }
        }
    }
}

#[test]
fn write_past_end_extends_the_file_with_a_zero_hole() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hole");
    let old = pattern(1000, 5);
    std::fs::write(&path, &old).unwrap();
    let engine = engine(2, 4096, false, false);
    let handle = FileHandle::open_with(engine, &path, OpenMode::ReadWrite).unwrap();
    let data = pattern(5000, 6);
    let at = 50_000usize;
    assert_eq!(handle.pwrite(&data, data.len(), at as u64).unwrap(), 5000);
    let on_disk = std::fs::read(&path).unwrap();
    assert_eq!(on_disk.len(), at + data.len());
    assert!(on_disk[..1000] == old[..]);
    assert!(
        on_disk[1000..at].iter().all(|&b| b == 0),
        "hole must read as zero"
    );
    assert!(on_disk[at..] == data[..]);
}

#[test]
fn async_reads_resolve_to_the_buffer_and_byte_count() {
    let dir = tempfile::tempdir().unwrap();
    let (path, content) = make_file(dir.path(), "async", 1_000_003, 21);
    for threads in [1, 3] {
        let engine = engine(threads, 4097, false, false);
        let handle = FileHandle::open_with(engine, &path, OpenMode::Read).unwrap();

        // One at a time.
        let fut = handle
            .pread_async(vec![0u8; 1_000_003], 1_000_003, 0)
            .unwrap();
        let (buf, n) = block_on(fut).unwrap();
        assert_eq!(n, content.len());
        assert!(buf == content);

        // Several in flight at once, including one clipped at end of file.
        let ranges = [
            (0u64, 10_000usize),
            (1, 333_333),
            (500_000, 500_003),
            (999_000, 5000),
        ];
        let futures: Vec<_> = ranges
            .iter()
            .map(|&(offset, size)| handle.pread_async(vec![0u8; size], size, offset).unwrap())
            .collect();
        let results = block_on(futures::future::join_all(futures));
        for ((offset, size), result) in ranges.iter().zip(results) {
            let (buf, n) = result.unwrap();
            let o = *offset as usize;
            let expected = (*size).min(content.len() - o);
            assert_eq!(n, expected);
            assert_eq!(buf.len(), *size, "the buffer comes back whole");
            assert!(buf[..n] == content[o..o + n], "offset {offset}");
        }
    }
}

#[test]
fn fill_buffers_hand_over_only_what_a_read_wrote_whole() {
    let dir = tempfile::tempdir().unwrap();
    let (path, content) = make_file(dir.path(), "fill", 3_000_001, 22);
    let engine = engine(3, 65_536, false, false);
    let handle = FileHandle::open_with(engine, &path, OpenMode::Read).unwrap();
    // Reused allocations hold old bytes: every byte must come from the file.
    for round in 0..3 {
        let (offset, size) = (round * 7_777, 2_000_000usize);
        let fut = handle
            .pread_async(gdscan::engine::FillBuffer::new(size), size, offset as u64)
            .unwrap();
        let (buf, n) = block_on(fut).unwrap();
        assert_eq!(n, size);
        let bytes = buf.into_filled(n).expect("a whole read");
        assert!(bytes == content[offset..offset + size], "round {round}");
    }
    // Clipped at the end of the file: nothing is handed over.
    let fut = handle
        .pread_async(gdscan::engine::FillBuffer::new(10_000), 10_000, 2_999_000)
        .unwrap();
    let (buf, n) = block_on(fut).unwrap();
    assert_eq!(n, 1_001);
    assert!(buf.into_filled(n).is_none());
}

#[test]
fn async_writes_land_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("async-write");
    let engine = engine(3, 4096, false, false);
    let handle = FileHandle::open_with(engine, &path, OpenMode::ReadWriteCreate).unwrap();
    let a = pattern(300_000, 31);
    let (buf, n) = block_on(handle.pwrite_async(a.clone(), a.len(), 0).unwrap()).unwrap();
    assert_eq!(n, a.len());
    assert!(buf == a, "the source buffer comes back unchanged");

    // Several disjoint writes in flight at once.
    let pieces: Vec<(usize, Vec<u8>)> = (0..6)
        .map(|i| (i * 50_001 + 7, pattern(40_000 + i, 40 + i as u64)))
        .collect();
    let futures: Vec<_> = pieces
        .iter()
        .map(|(offset, data)| {
            handle
                .pwrite_async(data.clone(), data.len(), *offset as u64)
                .unwrap()
        })
        .collect();
    for (result, (_, data)) in block_on(futures::future::join_all(futures))
        .into_iter()
        .zip(&pieces)
    {
        assert_eq!(result.unwrap().1, data.len());
    }
    let mut model = a.clone();
    for (offset, data) in &pieces {
        model_write(&mut model, data, *offset);
    }
    assert!(std::fs::read(&path).unwrap() == model);
}

#[test]
fn dropping_async_futures_early_is_safe() {
    let dir = tempfile::tempdir().unwrap();
    let (path, content) = make_file(dir.path(), "drop", 1_000_003, 51);
    let threads = 3;
    let engine = engine(threads, 4096, false, false);
    let handle = FileHandle::open_with(engine, &path, OpenMode::ReadWrite).unwrap();

    // Reads dropped before (probably) completing.
    for offset in [0u64, 1, 4096] {
        drop(
            handle
                .pread_async(vec![0u8; 900_000], 900_000, offset)
                .unwrap(),
        );
    }
    // A write dropped before it completes.
    let data = pattern(400_000, 52);
    drop(
        handle
            .pwrite_async(data.clone(), data.len(), 123_457)
            .unwrap(),
    );
    let mut model = content.clone();
    model_write(&mut model, &data, 123_457);

    // A later sync read with at least `threads` tasks is handed to every
    // worker and completes only when each worker has finished everything
    // queued before it, including the dropped write: a barrier. Its own
    // bytes may predate parts of that write (one worker can read a range
    // while another still writes it: the dropped write promised no order,
    // and this raced once in CI), so the read after it is the one compared.
    let mut back = vec![0u8; model.len()];
    for _ in 0..2 {
        assert_eq!(
            handle.pread(&mut back, model.len(), 0).unwrap(),
            model.len()
        );
    }
    assert!(back == model, "engine read after dropped futures differs");
    assert!(
        std::fs::read(&path).unwrap() == model,
        "file differs from the model"
    );
}

#[test]
fn dropping_handle_and_engine_finishes_pending_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("drop-engine");
    let data = pattern(2 * MIB + 1, 61);
    {
        let engine = engine(2, 4096, false, false);
        let handle = FileHandle::open_with(engine, &path, OpenMode::Write).unwrap();
        drop(handle.pwrite_async(data.clone(), data.len(), 0).unwrap());
        drop(handle);
    }
    assert!(std::fs::read(&path).unwrap() == data);
}

#[test]
fn counters_count_host_bytes_and_reset() {
    let dir = tempfile::tempdir().unwrap();
    let (path, content) = make_file(dir.path(), "counters", 1_000_003, 71);
    let task_size = 4096;
    let engine = engine(3, task_size, false, false);
    let handle = FileHandle::open_with(engine, &path, OpenMode::ReadWrite).unwrap();
    for p in IoPath::ALL {
        assert_eq!(handle.counters().get(p), Default::default(), "{p}");
    }
    let mut bytes = 0u64;
    let mut ops = 0u64;
    // Requests at offset 0: ceil(len / task_size) tasks each.
    for len in [1usize, 4096, 4097, 1_000_003] {
        let mut buf = vec![0u8; len];
        let n = handle.pread(&mut buf, len, 0).unwrap();
        assert!(buf[..n] == content[..n]);
        bytes += n as u64;
        ops += n.div_ceil(task_size) as u64;
    }
    // A request clipped at end of file counts the bytes actually read.
    let mut buf = vec![0u8; 10_000];
    let n = handle.pread(&mut buf, 10_000, 1_000_000).unwrap();
    assert_eq!(n, 3);
    bytes += 3;
    ops += 1;

    let host = handle.counters().get(IoPath::PosixHost);
    assert_eq!(host.bytes, bytes);
    assert_eq!(host.ops, ops);
    for p in [
        IoPath::PosixDeviceBounce,
        IoPath::MmapRegistered,
        IoPath::CuFile,
    ] {
        assert_eq!(handle.counters().get(p), Default::default(), "{p}");
    }
    let snapshot = handle.counters().snapshot();
    assert_eq!(snapshot.len(), IoPath::ALL.len());
    assert!(snapshot.contains(&(IoPath::PosixHost, host)));

    handle.counters().reset();
    for p in IoPath::ALL {
        assert_eq!(handle.counters().get(p), Default::default(), "{p}");
    }

    // Writes are host-path bytes too.
    let data = pattern(10_000, 72);
    handle.pwrite(&data, data.len(), 5).unwrap();
    assert_eq!(handle.counters().get(IoPath::PosixHost).bytes, 10_000);
    assert_eq!(handle.counters().get(IoPath::PosixDeviceBounce).bytes, 0);
    assert_eq!(handle.counters().get(IoPath::MmapRegistered).bytes, 0);
}

#[test]
fn a_handle_task_size_replaces_the_engines_for_its_requests() {
    let dir = tempfile::tempdir().unwrap();
    let (path, content) = make_file(dir.path(), "task-size", 1_000_003, 73);
    let shared = engine(3, 4096, false, false);
    let plain = FileHandle::open_with(shared.clone(), &path, OpenMode::Read).unwrap();
    assert_eq!(plain.task_size(), 4096);
    let handle = FileHandle::open_with(shared.clone(), &path, OpenMode::Read)
        .unwrap()
        .with_task_size(65_536);
    assert_eq!(handle.task_size(), 65_536);
    let mut buf = vec![0u8; content.len()];
    let n = handle.pread(&mut buf, content.len(), 0).unwrap();
    assert_eq!(n, content.len());
    assert!(buf == content);
    // One task (one counted op) per 64 KiB, not per 4 KiB.
    let host = handle.counters().get(IoPath::PosixHost);
    assert_eq!(host.ops, content.len().div_ceil(65_536) as u64);
    assert_eq!(host.bytes, content.len() as u64);
    // A task size of 0 is taken as 1 byte, never a division by zero.
    let tiny = FileHandle::open_with(shared, &path, OpenMode::Read)
        .unwrap()
        .with_task_size(0);
    assert_eq!(tiny.task_size(), 1);
    let mut small = vec![0u8; 7];
    assert_eq!(tiny.pread(&mut small, 7, 11).unwrap(), 7);
    assert!(small[..] == content[11..18]);
}

#[test]
fn crc32_host_matches_known_zlib_values() {
    // zlib.crc32(b"The quick brown fox jumps over the lazy dog") == 0x414FA339
    assert_eq!(
        gdscan::checksum::crc32_host(b"The quick brown fox jumps over the lazy dog"),
        0x414F_A339
    );
    assert_eq!(gdscan::checksum::crc32_host(b""), 0);

    // The checksum of bytes read by the engine equals that of std's bytes.
    let dir = tempfile::tempdir().unwrap();
    let (path, content) = make_file(dir.path(), "crc", 100_000, 81);
    let handle =
        FileHandle::open_with(engine(2, 4097, false, false), &path, OpenMode::Read).unwrap();
    let mut buf = vec![0u8; content.len()];
    assert_eq!(
        handle.pread(&mut buf, content.len(), 0).unwrap(),
        content.len()
    );
    assert!(buf == content);
    assert_eq!(
        gdscan::checksum::crc32_host(&buf),
        gdscan::checksum::crc32_host(&content)
    );
}
