//! Criterion benches that run without a GPU: task splitting and host-memory
//! reads through the engine against a single-threaded `read_at` of the same
//! range (the naive baseline), so a regression shows on any machine.

use std::os::unix::fs::FileExt;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gdscan::engine::TaskSplit;
use gdscan::{Engine, FileHandle, OpenMode, Settings};

fn task_split(c: &mut Criterion) {
    let split = TaskSplit::new(12_345, 1 << 30, 4 << 20);
    c.bench_function("task_split/iterate_1GiB_in_4MiB", |b| {
        b.iter(|| split.iter().map(|t| t.len).sum::<usize>())
    });
}

fn host_reads(c: &mut Criterion) {
    let len = 256usize << 20;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bench.bin");
    gdscan_cli::bench::data::ensure_file(&path, len as u64).unwrap();
    gdscan_cli::bench::data::warm_and_checksum(&path).unwrap();
    let mut buf = vec![0u8; len];

    let mut group = c.benchmark_group("host_read_256MiB_warm");
    group.throughput(Throughput::Bytes(len as u64));
    group.sample_size(10);
    let file = std::fs::File::open(&path).unwrap();
    group.bench_function("naive_read_at", |b| {
        b.iter(|| file.read_exact_at(&mut buf, 0).unwrap())
    });
    for threads in [1, 2, 4] {
        let settings = Settings::builder().num_threads(threads).build().unwrap();
        let handle =
            FileHandle::open_with(Engine::new(settings).unwrap(), &path, OpenMode::Read).unwrap();
        group.bench_with_input(BenchmarkId::new("gdscan", threads), &threads, |b, _| {
            b.iter(|| handle.pread(&mut buf, len, 0).unwrap())
        });
    }
    group.finish();
}

criterion_group!(benches, task_split, host_reads);
criterion_main!(benches);
