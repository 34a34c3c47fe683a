//! GPU-only tests. Without a GPU they are listed as ignored; on the GPU
//! machine run all of them with
//!
//! ```text
//! cargo test --release --test gpu -- --ignored --test-threads 1
//! ```
//!
//! (or the carried binary: `./gpu-tests --ignored --test-threads 1`).
//! Every test first asserts that a GPU is present, so that run fails,
//! rather than passing vacuously, on a machine without one.

use std::io::Write;
use std::sync::Arc;

mod common;

// The GPU decoder's tests, in this one binary so that one command (and one
// carried binary) runs every GPU test.
#[path = "gpu/campaign.rs"]
mod campaign;
#[path = "gpu/compact.rs"]
mod compact;
#[path = "gpu/decode.rs"]
mod decode;
#[path = "gpu/delta_strings.rs"]
mod delta_strings;
#[path = "gpu/device_array.rs"]
mod device_array;
#[path = "../../tests/kernel_emu/filter_cases.rs"]
mod filter_cases;
#[path = "gpu/filter_eval.rs"]
mod filter_eval;
#[path = "gpu/filter_exact.rs"]
mod filter_exact;
#[path = "gpu/filter_property.rs"]
mod filter_property;
#[path = "gpu/host_codecs.rs"]
mod host_codecs;
#[path = "gpu/kernels.rs"]
mod kernels;
#[path = "gpu/multi.rs"]
mod multi;
#[path = "gpu/nested_corruption.rs"]
mod nested_corruption;
#[path = "gpu/null_type.rs"]
mod null_type;
#[path = "gpu/nvcomp.rs"]
mod nvcomp;
#[path = "gpu/oom.rs"]
mod oom;
#[path = "gpu/property.rs"]
mod property;
#[path = "gpu/property_nested.rs"]
mod property_nested;
#[path = "gpu/reference.rs"]
mod reference;
#[path = "gpu/seeded.rs"]
mod seeded;
#[path = "gpu/shared_pipeline.rs"]
mod shared_pipeline;
#[path = "gpu/timeout.rs"]
mod timeout;
#[path = "gpu/tpch_matrix.rs"]
mod tpch_matrix;
#[path = "gpu/wide_deltas.rs"]
mod wide_deltas;

use gdscan::checksum::{crc32_device, crc32_host};
use gdscan::cuda::CudaError;
use gdscan::cuda::{driver, Device, DeviceBuffer};
use gdscan::cufile::CuFileError;
use gdscan::engine::IoError;
use gdscan::engine::{DeviceRoute, Engine, FileHandle, IoPath, OpenMode};
use gdscan::store::{LocalSource, StoreError};
use gdscan::{CompatMode, DeviceReadPath, Settings};

const NEEDS_GPU: &str = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored";

fn gpu() -> Device {
    assert!(
        driver::is_available(),
        "no usable GPU: {:?}",
        driver::ensure().err()
    );
    Device::get(0).expect("device 0")
}

fn pseudo_random(len: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0u8; len];
    gdscan_cli::bench::data::fill_pseudo_random(&mut v, seed);
    v
}

fn temp_file(data: &[u8]) -> tempfile::NamedTempFile {
    let mut f = tempfile::NamedTempFile::new_in(std::env::temp_dir()).unwrap();
    f.write_all(data).unwrap();
    f.flush().unwrap();
    f
}

/// An engine on gdscan's POSIX routes (compat ON, so cuFile never takes
/// these tests' requests, whatever the machine offers).
fn engine(threads: usize, task: usize, route: DeviceReadPath) -> Arc<Engine> {
    Engine::new(
        Settings::builder()
            .compat_mode(CompatMode::On)
            .num_threads(threads)
            .task_size(task)
            .bounce_buffer_size(1 << 20)
            .device_read_path(route)
            .build()
            .unwrap(),
    )
    .unwrap()
}

fn device_bytes(buf: &DeviceBuffer, len: usize) -> Vec<u8> {
    let mut host = vec![0u8; len];
    buf.copy_to_host(0, &mut host).unwrap();
    host
}

/// A local file's handle as a source (for the path report and the fetch).
fn local(handle: &Arc<FileHandle>) -> LocalSource {
    LocalSource::new(handle.clone()).unwrap()
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn gpu_is_present() {
    let dev = gpu();
    let (free, total) = dev.memory_info().unwrap();
    assert!(total > 0 && free <= total);
    eprintln!("{NEEDS_GPU}: found {}", dev.name().unwrap());
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn bounce_route_lands_exact_bytes_across_shapes() {
    let dev = gpu();
    let data = pseudo_random(9_000_123, 1);
    let file = temp_file(&data);
    for threads in [1, 3, 8] {
        for task in [4096, 1 << 20, 3_000_001] {
            let e = engine(threads, task, DeviceReadPath::Bounce);
            let h = FileHandle::open_with(e.clone(), file.path(), OpenMode::Read).unwrap();
            for (offset, size) in [
                (0usize, data.len()),
                (17, 5_000_000),
                (4096, 1),
                (8_999_000, 1123),
            ] {
                let mut buf = DeviceBuffer::new(dev, size).unwrap();
                buf.fill(0xEE).unwrap();
                let n = h.pread(&mut buf, size, offset as u64).unwrap();
                assert_eq!(n, size);
                assert_eq!(
                    device_bytes(&buf, n),
                    &data[offset..offset + n],
                    "threads {threads} task {task} offset {offset}"
                );
            }
            assert!(h.counters().get(IoPath::PosixDeviceBounce).bytes > 0);
            assert_eq!(h.counters().get(IoPath::MmapRegistered).bytes, 0);
            assert!(
                e.bounce_buffers_allocated() <= threads * 2,
                "bounce pool is bounded"
            );
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn mmap_route_lands_exact_bytes_and_is_counted() {
    let dev = gpu();
    let data = pseudo_random(20_000_000 + 77, 2);
    let file = temp_file(&data);
    for threads in [1, 4, 16] {
        let e = engine(threads, 1 << 20, DeviceReadPath::Mmap);
        let h = FileHandle::open_with(e, file.path(), OpenMode::Read).unwrap();
        for (offset, size) in [(0usize, data.len()), (4095, 10_000_000), (12_345, 3)] {
            let mut buf = DeviceBuffer::new(dev, size).unwrap();
            buf.fill(0).unwrap();
            h.counters().reset();
            let n = h.pread(&mut buf, size, offset as u64).unwrap();
            assert_eq!(n, size);
            assert_eq!(
                crc32_device(&buf, 0, n).unwrap(),
                crc32_host(&data[offset..offset + n])
            );
            assert_eq!(h.counters().get(IoPath::MmapRegistered).bytes, size as u64);
        }
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn auto_route_takes_bounce_buffers() {
    let dev = gpu();
    let data = pseudo_random(8 << 20, 3);
    let file = temp_file(&data);
    let e = engine(4, 1 << 20, DeviceReadPath::Auto);
    let h = FileHandle::open_with(e, file.path(), OpenMode::Read).unwrap();
    let decision = h.device_route(data.len(), 0).unwrap();
    assert_eq!(decision.route, DeviceRoute::Bounce, "{}", decision.reason);
    let mut buf = DeviceBuffer::new(dev, data.len()).unwrap();
    h.pread(&mut buf, data.len(), 0).unwrap();
    assert_eq!(device_bytes(&buf, data.len()), data);
    assert_eq!(
        h.counters().get(IoPath::PosixDeviceBounce).bytes,
        data.len() as u64
    );
    assert_eq!(h.counters().get(IoPath::MmapRegistered).bytes, 0);
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn short_read_at_eof_into_device_returns_the_short_count() {
    let dev = gpu();
    let data = pseudo_random(3_000_000, 4);
    let file = temp_file(&data);
    for route in [DeviceReadPath::Bounce, DeviceReadPath::Mmap] {
        let h =
            FileHandle::open_with(engine(4, 1 << 20, route), file.path(), OpenMode::Read).unwrap();
        let mut buf = DeviceBuffer::new(dev, 2_000_000).unwrap();
        buf.fill(0x5A).unwrap();
        let n = h.pread(&mut buf, 2_000_000, 2_500_000).unwrap();
        assert_eq!(n, 500_000);
        let got = device_bytes(&buf, 2_000_000);
        assert_eq!(&got[..n], &data[2_500_000..]);
        assert!(
            got[n..].iter().all(|&b| b == 0x5A),
            "nothing written past the short count"
        );
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn direct_io_bounce_reads_are_exact() {
    let dev = gpu();
    let data = pseudo_random(5_000_000, 5);
    let file = temp_file(&data);
    let settings = Settings::builder()
        .compat_mode(CompatMode::On)
        .num_threads(4)
        .task_size(1 << 20)
        .auto_direct_io_read(true)
        .device_read_path(DeviceReadPath::Bounce)
        .build()
        .unwrap();
    let h =
        FileHandle::open_with(Engine::new(settings).unwrap(), file.path(), OpenMode::Read).unwrap();
    eprintln!("O_DIRECT: {:?}", h.direct_unavailable().unwrap_or("in use"));
    for (offset, size) in [(0usize, data.len()), (4096, 1 << 20), (100, 3_000_000)] {
        let mut buf = DeviceBuffer::new(dev, size).unwrap();
        let n = h.pread(&mut buf, size, offset as u64).unwrap();
        assert_eq!(device_bytes(&buf, n), &data[offset..offset + n]);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn device_writes_round_trip() {
    let dev = gpu();
    let data = pseudo_random(6_000_001, 6);
    let mut src = DeviceBuffer::new(dev, data.len()).unwrap();
    src.copy_from_host(0, &data).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("out.bin");
    let h = FileHandle::open_with(
        engine(4, 1 << 20, DeviceReadPath::Auto),
        &path,
        OpenMode::ReadWriteCreate,
    )
    .unwrap();
    assert_eq!(h.pwrite(&src, data.len(), 10).unwrap(), data.len());
    let back = std::fs::read(&path).unwrap();
    assert_eq!(back.len(), data.len() + 10);
    assert_eq!(&back[10..], &data[..]);
    assert!(back[..10].iter().all(|&b| b == 0));
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn async_device_reads_complete_with_their_buffers() {
    let dev = gpu();
    let data = pseudo_random(12_000_000, 7);
    let file = temp_file(&data);
    let h = FileHandle::open_with(
        engine(8, 1 << 20, DeviceReadPath::Auto),
        file.path(),
        OpenMode::Read,
    )
    .unwrap();
    let parts = 4;
    let part = data.len() / parts;
    let futures: Vec<_> = (0..parts)
        .map(|i| {
            let buf = DeviceBuffer::new(dev, part).unwrap();
            h.pread_async(buf, part, (i * part) as u64).unwrap()
        })
        .collect();
    for (i, f) in futures.into_iter().enumerate() {
        let (buf, n) = futures::executor::block_on(f).unwrap();
        assert_eq!(n, part);
        assert_eq!(device_bytes(&buf, n), &data[i * part..(i + 1) * part]);
    }
}

/// Many small requests in flight at once: each worker hands its finished
/// share to its lane and goes on with the next request, so a request
/// completes only when its copies have. Every byte must be in place, with
/// host requests interleaved and all buffers checked after completion.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn many_small_device_requests_complete_only_when_their_copies_have() {
    let dev = gpu();
    let data = pseudo_random(48 << 20, 11);
    let file = temp_file(&data);
    let h = FileHandle::open_with(
        engine(16, 1 << 20, DeviceReadPath::Auto),
        file.path(),
        OpenMode::Read,
    )
    .unwrap();
    for round in 0..3u64 {
        // Ranges of 1 byte to 3 MiB, packed into one device buffer.
        let mut reads = Vec::new();
        let (mut at, mut off, mut i) = (0usize, 0u64, 0u64);
        while off < data.len() as u64 {
            let len = (((i * 7_919 + round * 104_729) % (3 << 20)) as usize + 1)
                .min(data.len() - off as usize);
            reads.push(gdscan::engine::RangeRead {
                file_offset: off,
                buffer_offset: at,
                len,
            });
            at += len;
            off += len as u64 + (i % 5) * 4096;
            i += 1;
        }
        let mut buf = DeviceBuffer::new(dev, at).unwrap();
        buf.fill(0xAB).unwrap();
        let mut host = vec![0u8; 1 << 20];
        let pending =
            unsafe { h.submit_ranges(gdscan::engine::IoBufMut::io_memory_mut(&mut buf), &reads) }
                .unwrap();
        // A host read while device requests are in flight.
        assert_eq!(h.pread(&mut host[..], 1 << 20, 4096).unwrap(), 1 << 20);
        assert_eq!(&host[..], &data[4096..4096 + (1 << 20)]);
        assert_eq!(pending.wait().unwrap(), at as u64, "round {round}");
        let landed = device_bytes(&buf, at);
        for r in &reads {
            let got = &landed[r.buffer_offset..r.buffer_offset + r.len];
            let want = &data[r.file_offset as usize..r.file_offset as usize + r.len];
            assert!(
                got == want,
                "round {round}: range at {} differs",
                r.file_offset
            );
        }
    }
}

/// The caching pool hands a returned buffer out again instead of freeing it.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn device_pool_reuses_returned_buffers() {
    let dev = gpu();
    let pool = gdscan::cuda::DevicePool::new(dev, 64 << 20);
    let a = pool.allocate(10 << 20).unwrap();
    let first = a.device_ptr();
    assert_eq!(a.len(), 10 << 20);
    drop(a);
    assert_eq!(pool.cached(), 1);
    let b = pool.allocate(9 << 20).unwrap();
    assert_eq!(b.device_ptr(), first, "a fitting idle buffer is reused");
    assert_eq!(b.len(), 9 << 20);
    let mut out = vec![0u8; 16];
    assert!(
        b.copy_to_host((9 << 20) - 8, &mut out).is_err(),
        "reads stop at len"
    );
    let c = pool.allocate(40 << 20).unwrap();
    assert_ne!(c.device_ptr(), first);
    drop((b, c));
    assert_eq!(pool.cached(), 2);
    assert_eq!(pool.cached_bytes(), 50 << 20);
    // Beyond the byte cap the least recently returned buffers are freed.
    let (x, y) = (
        pool.allocate(10 << 20).unwrap(),
        pool.allocate(40 << 20).unwrap(),
    );
    assert_eq!(pool.cached(), 0, "both idle buffers were reused");
    let z = pool.allocate(30 << 20).unwrap();
    drop(x);
    drop(y);
    // 10 + 40 + 30 MiB > 64 MiB: the buffers returned first (10, then 40)
    // are freed until the rest fits.
    drop(z);
    assert_eq!(pool.cached_bytes(), 30 << 20);
    assert_eq!(pool.cached(), 1);
    pool.trim();
    assert_eq!(pool.cached(), 0);
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn concurrent_reads_of_the_same_pages_fall_back_and_stay_exact() {
    let dev = gpu();
    let data = pseudo_random(16 << 20, 8);
    let file = temp_file(&data);
    let h = Arc::new(
        FileHandle::open_with(
            engine(8, 1 << 20, DeviceReadPath::Mmap),
            file.path(),
            OpenMode::Read,
        )
        .unwrap(),
    );
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let h = h.clone();
            std::thread::spawn(move || {
                let mut buf = DeviceBuffer::new(dev, 16 << 20).unwrap();
                let n = h.pread(&mut buf, 16 << 20, 0).unwrap();
                crc32_device(&buf, 0, n).unwrap()
            })
        })
        .collect();
    let expected = crc32_host(&data);
    for t in threads {
        assert_eq!(t.join().unwrap(), expected);
    }
    let c = h.counters();
    assert_eq!(
        c.get(IoPath::MmapRegistered).bytes + c.get(IoPath::PosixDeviceBounce).bytes,
        4 * (16 << 20)
    );
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn out_of_device_memory_is_a_typed_error() {
    let dev = gpu();
    let (_, total) = dev.memory_info().unwrap();
    match DeviceBuffer::new(dev, total * 2) {
        Err(CudaError::OutOfMemory { requested, .. }) => {
            assert_eq!(requested, total * 2)
        }
        other => panic!("expected DeviceOutOfMemory, got {other:?}"),
    }
    // The device is still usable afterwards.
    let mut small = DeviceBuffer::new(dev, 1024).unwrap();
    small.fill(1).unwrap();
    assert_eq!(device_bytes(&small, 1024), vec![1u8; 1024]);
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn device_errors_are_typed() {
    let dev = gpu();
    assert!(matches!(
        Device::get(4096),
        Err(CudaError::NoSuchDevice { device: 4096, .. })
    ));
    let data = pseudo_random(10_000, 9);
    let file = temp_file(&data);
    let mut small = DeviceBuffer::new(dev, 10).unwrap();
    let h = FileHandle::open_with(
        engine(2, 4096, DeviceReadPath::Auto),
        file.path(),
        OpenMode::Read,
    )
    .unwrap();
    assert!(matches!(
        h.pread(&mut small, 100, 0),
        Err(IoError::BufferTooSmall { .. })
    ));
}

/// What the run expects of cuFile on this machine: `registered` (the H200
/// with the udev entry), `fallback` (without it), or unset (whatever is found;
/// each outcome is still checked in full).
fn expected_cufile() -> Option<String> {
    std::env::var("GDSCAN_EXPECT_CUFILE").ok()
}

/// A file on a real (O_DIRECT-capable) file system: the working directory,
/// or GDSCAN_TEST_DIR.
fn disk_file(data: &[u8]) -> tempfile::NamedTempFile {
    let dir = std::env::var("GDSCAN_TEST_DIR").unwrap_or_else(|_| ".".into());
    let mut f = tempfile::NamedTempFile::new_in(dir).unwrap();
    f.write_all(data).unwrap();
    f.flush().unwrap();
    f
}

fn compat_engine(compat: CompatMode) -> Arc<Engine> {
    Engine::new(
        Settings::builder()
            .compat_mode(compat)
            .num_threads(4)
            .task_size(1 << 20)
            .build()
            .unwrap(),
    )
    .unwrap()
}

/// cuFile on a registered file, through `handle` (compat OFF, or AUTO where
/// stage 2 is GDS): bytes right, route and counters, cuFile's own level-3
/// statistics, the path report's verdict, a write, and a small request on
/// POSIX.
fn check_cufile_registered(handle: &Arc<FileHandle>, data: &[u8], dev: Device) {
    use gdscan::cufile::{driver as cf_driver, stats};
    let len = data.len();
    stats::start(true).unwrap();
    let before = stats::read().unwrap();
    let mut buf = DeviceBuffer::new(dev, len).unwrap();
    buf.fill(0).unwrap();
    assert_eq!(handle.pread(&mut buf, len, 0).unwrap(), len);
    assert_eq!(device_bytes(&buf, len), data, "bytes through cuFile");
    assert_eq!(handle.last_route().unwrap().route, DeviceRoute::CuFile);
    assert_eq!(handle.counters().get(IoPath::CuFile).bytes, len as u64);
    let s = stats::read().unwrap().since(&before);
    let info = cf_driver::opened().expect("driver open");
    let (total, nvfs, posix) = s.read_split();
    assert!(total > 0, "cuFile's level-3 stats counted the reads: {s:?}");
    let report = gdscan::report::build(&local(handle), Some(s.clone()));
    eprintln!(
        "--- path report (cuFile registered) ---\n{}",
        gdscan::report::render(&report)
    );
    if cf_driver::gds_stage2(info).is_err() {
        assert_eq!(nvfs, 0, "no nvidia-fs, so no nvfs reads");
        assert!(posix > 0, "cuFile's compat path served the reads");
        assert!(
            report
                .verdict
                .starts_with("cuFile reached, GDS not used: bytes via nvfs: 0"),
            "{}",
            report.verdict
        );
    }
    // Writes through cuFile, with the source buffer registered (scoped).
    let out = disk_file(&[]);
    let w = FileHandle::open_with(
        compat_engine(CompatMode::Off),
        out.path(),
        OpenMode::ReadWrite,
    )
    .unwrap();
    {
        let _reg = gdscan::cufile::BufferRegistration::new(&buf).unwrap();
        assert_eq!(w.pwrite(&buf, len, 0).unwrap(), len);
    }
    assert_eq!(w.last_route().unwrap().route, DeviceRoute::CuFile);
    assert_eq!(
        std::fs::read(out.path()).unwrap(),
        data,
        "bytes written through cuFile"
    );
    // A small request stays on POSIX even though cuFile is ready.
    let mut small = DeviceBuffer::new(dev, 4096).unwrap();
    handle.pread(&mut small, 4096, 0).unwrap();
    let d = handle.last_route().unwrap();
    assert_eq!(d.route, DeviceRoute::Bounce);
    assert!(d.reason.contains("KVIKIO_GDS_THRESHOLD"), "{}", d.reason);
}

/// A read through `handle` that stage 1 sent to the bounce route with
/// `reason_prefix`: bytes right, counters, and the path report's verdict.
fn check_bounce_fallback(handle: &Arc<FileHandle>, data: &[u8], dev: Device, reason_prefix: &str) {
    let len = data.len();
    let mut buf = DeviceBuffer::new(dev, len).unwrap();
    assert_eq!(handle.pread(&mut buf, len, 0).unwrap(), len);
    assert_eq!(device_bytes(&buf, len), data);
    let d = handle.last_route().unwrap();
    assert_eq!(d.route, DeviceRoute::Bounce);
    assert!(d.reason.starts_with(reason_prefix), "{}", d.reason);
    assert_eq!(handle.counters().get(IoPath::CuFile).bytes, 0);
    assert_eq!(
        handle.counters().get(IoPath::PosixDeviceBounce).bytes,
        len as u64
    );
    let report = gdscan::report::build(&local(handle), None);
    eprintln!(
        "--- path report (bounce route) ---\n{}",
        gdscan::report::render(&report)
    );
    assert!(
        report.verdict.starts_with("cuFile not used; GDS: no"),
        "{}",
        report.verdict
    );
}

/// A cuFile registration that failed: the reason names the step, and
/// matches the scenario (`fallback`: 5027 without the udev entry).
fn check_registration_failed(why: &str) {
    assert_ne!(
        expected_cufile().as_deref(),
        Some("registered"),
        "cuFile did not register: {why}"
    );
    eprintln!("--- cuFile unavailable: {why} ---");
    if gdscan::cufile::find_library().is_ok() {
        assert!(
            why.contains("cuFileHandleRegister failed")
                || why.contains("O_DIRECT")
                || why.contains("cuFileDriverOpen"),
            "the reason names the failing step: {why}"
        );
    }
    if expected_cufile().as_deref() == Some("fallback") {
        assert!(
            why.contains("(5027)"),
            "without the udev entry registration fails with 5027: {why}"
        );
    }
}

/// Stage 1 under AUTO and OFF, proven by stage 2. AUTO takes cuFile only
/// when stage 2 is GDS: on a machine without nvidia-fs (the H200 VM) it
/// declines cuFile with the reason (without opening it where PCI P2PDMA is
/// not configured either) and takes the bounce route, in both
/// scenarios (udev entry or not). OFF forces cuFile: with the udev entry it
/// registers and cuFile's compat path serves the reads (its statistics say
/// so); without it, it fails with the registration's 5027.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn cufile_stage1_and_stage2_are_proven() {
    use gdscan::engine::CuFileAvailability;
    let dev = gpu();
    let data = pseudo_random((8 << 20) + 4096, 11);
    let file = disk_file(&data);
    let len = data.len();
    let auto = Arc::new(
        FileHandle::open_with(compat_engine(CompatMode::Auto), file.path(), OpenMode::Read)
            .unwrap(),
    );
    match auto.cufile().clone() {
        CuFileAvailability::Ready => {
            let info = gdscan::cufile::driver::opened().expect("driver open");
            assert!(
                gdscan::cufile::driver::gds_stage2(info).is_ok(),
                "AUTO registered a file although stage 2 is not GDS"
            );
            check_cufile_registered(&auto, &data, dev);
        }
        CuFileAvailability::CompatPathOnly(why) => {
            eprintln!("--- AUTO declined cuFile: {why} ---");
            // Opened and found without GDS, or not opened at all (no
            // nvidia-fs module, no PCI P2PDMA in cuFile's configuration).
            match gdscan::cufile::driver::opened() {
                Some(info) => {
                    assert_eq!(gdscan::cufile::driver::gds_stage2(info), Err(why.clone()))
                }
                None => assert!(why.contains("so it is not opened"), "{why}"),
            }
            check_bounce_fallback(
                &auto,
                &data,
                dev,
                &format!("cuFile would run its POSIX compat path: {why}"),
            );
        }
        CuFileAvailability::Unavailable(why) => {
            check_registration_failed(&why);
            check_bounce_fallback(&auto, &data, dev, &format!("cuFile unavailable: {why}"));
        }
        CuFileAvailability::Disabled => panic!("AUTO never disables cuFile"),
    }
    // OFF forces cuFile whatever stage 2 will be.
    let off = Arc::new(
        FileHandle::open_with(compat_engine(CompatMode::Off), file.path(), OpenMode::Read).unwrap(),
    );
    match off.cufile().clone() {
        CuFileAvailability::Ready => {
            assert_ne!(
                expected_cufile().as_deref(),
                Some("fallback"),
                "cuFile registered unexpectedly"
            );
            check_cufile_registered(&off, &data, dev);
        }
        CuFileAvailability::Unavailable(why) => {
            check_registration_failed(&why);
            let mut buf = DeviceBuffer::new(dev, len).unwrap();
            let err = off.pread(&mut buf, len, 0).unwrap_err();
            assert!(matches!(err, IoError::CuFileRequired { .. }), "{err:?}");
            assert!(err.to_string().contains(&why), "{err}");
        }
        other => panic!("OFF never declines cuFile: {other:?}"),
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn cufile_parameters_are_read_with_their_source_and_bounds_enforced() {
    use gdscan::config::ParamValue;
    use gdscan::cufile::params::{apply, report, ConfigSource};
    gpu();
    let api = match gdscan::cufile::library::api() {
        Ok(api) => api,
        Err(why) => {
            assert_eq!(
                expected_cufile().as_deref(),
                Some("absent"),
                "libcufile should load here: {why}"
            );
            return;
        }
    };
    // Values reflect cufile.json only once the driver has opened.
    gdscan::cufile::driver::open(&Default::default()).unwrap();
    let config = ConfigSource::locate();
    let params = report(api, &Default::default(), &config);
    let allow = params
        .iter()
        .find(|p| p.key == "properties.allow_compat_mode")
        .unwrap();
    assert!(
        matches!(allow.value, Some(ParamValue::Bool(_))),
        "{allow:?}"
    );
    let threads = params
        .iter()
        .find(|p| p.key == "execution.max_io_threads")
        .unwrap();
    let (lo, hi) = threads.bounds.expect("size keys have bounds");
    assert!(lo <= hi);
    eprintln!("cufile.json: {} readable={}", config.path, config.readable);
    for p in &params {
        eprintln!(
            "  {} = {:?} ({:?}) bounds {:?}",
            p.key, p.value, p.source, p.bounds
        );
    }
    let too_many = gdscan::cufile::CuFileOverrides::default()
        .set("execution.max_io_threads", &(hi + 1).to_string())
        .unwrap();
    let err = apply(api, &too_many).unwrap_err();
    assert!(matches!(err, CuFileError::ParamRefused { .. }), "{err:?}");
    assert!(
        err.to_string()
            .contains(&format!("cuFile accepts {lo}..={hi}")),
        "{err}"
    );
}

/// The plan of `columns` of `common::write_file`'s lineitem with a
/// predicate that prunes row groups and pages (l_orderkey in 2500..13000).
fn pruned_plan(
    source: &Arc<dyn gdscan::store::Source>,
    columns: &[&str],
) -> Arc<gdscan::parquet::ScanPlan> {
    use gdscan::parquet::metadata::{load, MetadataOptions};
    use gdscan::parquet::plan::{plan, Projection, ScanRequest};
    let meta = load(source, MetadataOptions::default()).unwrap();
    let request = ScanRequest {
        projection: Projection::Columns(columns.iter().map(|c| c.to_string()).collect()),
        predicate: Some("l_orderkey >= 2500 AND l_orderkey < 13000".parse().unwrap()),
        ..Default::default()
    };
    Arc::new(plan(&meta, &request).unwrap())
}

/// Fetch options that keep one row group alive at a time.
fn one_row_group_at_a_time() -> gdscan::parquet::fetch::FetchOptions {
    gdscan::parquet::fetch::FetchOptions {
        max_bytes_in_flight: 1,
        prefetch: 1,
        ..Default::default()
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn parquet_row_groups_land_in_device_memory_exactly() {
    use gdscan::parquet::fetch::{fetch, DeviceAllocator, SourceScan};
    let dev = gpu();
    let dir = tempfile::tempdir_in(".").unwrap();
    let path = common::write_file(dir.path());
    let file = std::fs::read(&path).unwrap();
    for compat in [CompatMode::On, CompatMode::Auto] {
        let h =
            Arc::new(FileHandle::open_with(compat_engine(compat), &path, OpenMode::Read).unwrap());
        let source: Arc<dyn gdscan::store::Source> = Arc::new(local(&h));
        let p = pruned_plan(&source, &["l_orderkey", "l_comment", "l_discount"]);
        let mut row_groups = 0;
        let scan = SourceScan::new(source.clone(), p.clone());
        for rg in fetch(
            [scan],
            [DeviceAllocator::new(dev)],
            one_row_group_at_a_time(),
        ) {
            let rg = rg.unwrap();
            for slice in &rg.chunks {
                for piece in &slice.pieces {
                    let mut host = vec![0u8; piece.len];
                    rg.buffer
                        .copy_to_host(piece.buffer_offset, &mut host)
                        .unwrap();
                    let at = piece.file_offset as usize;
                    assert_eq!(
                        host,
                        &file[at..at + piece.len],
                        "compat {compat}: chunk {}",
                        slice.chunk
                    );
                }
            }
            row_groups += 1;
        }
        assert_eq!(row_groups, p.row_groups.len());
        assert!(row_groups >= 3);
        eprintln!("compat {compat}: route {:?}", h.last_route());
    }
}

/// The decoder's landing place: row groups fetched into pinned host memory
/// (`PinnedAllocator`) hold every piece as the file has it, and a second
/// scan reuses the pool's buffers instead of pinning new ones.
#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn parquet_row_groups_land_in_pinned_memory_exactly() {
    use gdscan::parquet::fetch::{fetch, PinnedAllocator, SourceScan};
    let dev = gpu();
    let dir = tempfile::tempdir_in(".").unwrap();
    let path = common::write_file(dir.path());
    let file = std::fs::read(&path).unwrap();
    let h = Arc::new(
        FileHandle::open_with(compat_engine(CompatMode::On), &path, OpenMode::Read).unwrap(),
    );
    let source: Arc<dyn gdscan::store::Source> = Arc::new(local(&h));
    let p = pruned_plan(&source, &["l_orderkey", "l_comment"]);
    let alloc = PinnedAllocator::new(dev, 256 << 20);
    let mut created_after_first = 0;
    for pass in 0..2 {
        let mut row_groups = 0;
        // One row group alive at a time: the pool's use is the same in
        // both passes, so the second needs nothing the first did not pin.
        let scan = SourceScan::new(source.clone(), p.clone());
        for rg in fetch([scan], [alloc.clone()], one_row_group_at_a_time()) {
            let rg = rg.unwrap();
            for slice in &rg.chunks {
                for piece in &slice.pieces {
                    let at = piece.file_offset as usize;
                    assert_eq!(
                        &rg.buffer[piece.buffer_offset..piece.buffer_offset + piece.len],
                        &file[at..at + piece.len],
                        "pass {pass}: chunk {}",
                        slice.chunk
                    );
                    assert_eq!(
                        rg.chunk_bytes(slice).unwrap().len(),
                        slice.pieces.iter().map(|p| p.len).sum::<usize>()
                    );
                }
            }
            row_groups += 1;
        }
        assert_eq!(row_groups, p.row_groups.len());
        assert!(row_groups >= 3);
        if pass == 0 {
            created_after_first = alloc.pool().stats().created;
            assert!(created_after_first > 0);
        }
    }
    assert_eq!(
        alloc.pool().stats().created,
        created_after_first,
        "the second scan reuses the pool's buffers"
    );
}

/// Every chunk of every fetched row group in device memory, read back whole
/// (`FetchedRowGroup::chunk_bytes`) and compared with its pieces' file bytes.
fn assert_device_row_groups_match(
    source: Arc<dyn gdscan::store::Source>,
    plan: Arc<gdscan::parquet::ScanPlan>,
    dev: Device,
    file: &[u8],
) -> usize {
    use gdscan::parquet::fetch::{fetch, DeviceAllocator, FetchOptions, SourceScan};
    let mut row_groups = 0;
    for rg in fetch(
        [SourceScan::new(source, plan)],
        [DeviceAllocator::new(dev)],
        FetchOptions::default(),
    ) {
        let rg = rg.unwrap();
        for slice in &rg.chunks {
            assert!(
                slice.file_bytes(file) == Some(rg.chunk_bytes(slice).unwrap()),
                "chunk {}",
                slice.chunk
            );
        }
        row_groups += 1;
    }
    row_groups
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn remote_http_row_groups_land_in_device_memory_through_staging() {
    use common::range_server::RangeServer;
    use gdscan::parquet::metadata::{load, MetadataOptions};
    use gdscan::parquet::plan::{plan, ScanRequest};
    use gdscan::store::{open, StoreOptions};
    let dev = gpu();
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    let file = std::fs::read(&path).unwrap();
    let server = RangeServer::start();
    server.put("gpu/lineitem.parquet", file.clone());
    // Requests smaller than, and larger than, one staging buffer (4 MiB):
    // one copy per request, and several per request.
    for (concurrency, request_size) in [(4, 16 << 10), (1, 1 << 10), (16, 64 << 20)] {
        let opts = StoreOptions {
            concurrency,
            request_size,
            ..Default::default()
        };
        let remote = open(&server.url("gpu/lineitem.parquet"), &opts).unwrap();
        remote.prepare_device(dev).unwrap();
        let meta = load(&remote, MetadataOptions::default()).unwrap();
        let p = Arc::new(plan(&meta, &ScanRequest::default()).unwrap());
        let row_groups = assert_device_row_groups_match(remote.clone(), p.clone(), dev, &file);
        assert_eq!(row_groups, p.row_groups.len());
        let c = remote.counters().get(IoPath::RemoteStore);
        assert!(c.bytes >= p.totals.bytes_read, "{c:?}");
        assert_eq!(remote.counters().get(IoPath::PosixDeviceBounce).bytes, 0);
    }
}

#[test]
#[ignore = "needs an NVIDIA GPU: cargo test --test gpu -- --ignored"]
fn remote_device_reads_resume_cut_bodies_and_fail_short_ones_cleanly() {
    use common::range_server::{Fault, RangeServer};
    use gdscan::parquet::fetch::{fetch, DeviceAllocator, FetchOptions, SourceScan};
    use gdscan::parquet::metadata::{load, MetadataOptions};
    use gdscan::parquet::plan::{plan, ScanRequest};
    use gdscan::store::{open, StoreOptions};
    let dev = gpu();
    let dir = tempfile::tempdir().unwrap();
    let path = common::write_file(dir.path());
    let file = std::fs::read(&path).unwrap();
    let server = RangeServer::start();
    server.put("gpu/faults.parquet", file.clone());
    let opts = StoreOptions {
        concurrency: 4,
        request_size: 32 << 10,
        init_backoff: std::time::Duration::from_millis(5),
        ..Default::default()
    };
    let remote = open(&server.url("gpu/faults.parquet"), &opts).unwrap();
    let meta = load(&remote, MetadataOptions::default()).unwrap();
    let p = Arc::new(plan(&meta, &ScanRequest::default()).unwrap());
    server.fail_next(Fault::CutBody(5000), 2);
    assert_device_row_groups_match(remote.clone(), p.clone(), dev, &file);
    assert_eq!(remote.counters().get(IoPath::RemoteStore).retries, 2);

    server.fail_next(Fault::ShortBody(100), 1);
    let outcome: Result<Vec<_>, _> = fetch(
        [SourceScan::new(remote.clone(), p.clone())],
        [DeviceAllocator::new(dev)],
        FetchOptions::default(),
    )
    .collect();
    match outcome {
        Err(gdscan::parquet::ScanError::Store(s))
            if matches!(*s, StoreError::Truncated { got: 100, .. }) => {}
        other => panic!("{:?}", other.map(|v| v.len())),
    }
    // Nothing is left writing into freed memory: the device still works.
    assert_device_row_groups_match(remote, p, dev, &file);
}
