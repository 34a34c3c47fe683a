//! Criterion benches for the Parquet path that run without a GPU: planning
//! (with and without pruning) on real TPC-H lineitem metadata, coalescing,
//! and a scan into host memory against object_store's `get_ranges` of the
//! same ranges (the naive baseline) in the same run.

use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gdscan::parquet::coalesce::{coalesce, CoalesceOptions};
use gdscan::parquet::fetch::{fetch, FetchOptions, HostAllocator, SourceScan};
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::plan::{plan, Projection, ScanRequest};
use gdscan::store::{LocalSource, Source};
use gdscan::{Engine, Settings};
use object_store::ObjectStore;

const Q6: &str = "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24";

fn setup() -> (tempfile::TempDir, std::path::PathBuf, Arc<dyn Source>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lineitem.parquet");
    gdscan_cli::tpch::ensure_lineitem(0.1, &path).unwrap();
    let engine = Engine::new(Settings::default()).unwrap();
    let source = Arc::new(LocalSource::open(engine, &path).unwrap());
    (dir, path, source)
}

fn planning(c: &mut Criterion) {
    let (_dir, _path, source) = setup();
    let meta = load(&source, MetadataOptions::default()).unwrap();
    let all = ScanRequest::default();
    let q6 = ScanRequest {
        projection: Projection::Columns(vec![
            "l_shipdate".into(),
            "l_discount".into(),
            "l_quantity".into(),
            "l_extendedprice".into(),
        ]),
        predicate: Some(Q6.parse().unwrap()),
        ..Default::default()
    };
    c.bench_function("plan/lineitem_sf0.1_all_columns", |b| {
        b.iter(|| plan(&meta, &all).unwrap())
    });
    c.bench_function("plan/lineitem_sf0.1_q6_pruned", |b| {
        b.iter(|| plan(&meta, &q6).unwrap())
    });
    let ranges: Vec<std::ops::Range<u64>> =
        (0..10_000u64).map(|i| i * 1000..i * 1000 + 700).collect();
    c.bench_function("coalesce/10k_ranges", |b| {
        b.iter(|| coalesce(&ranges, CoalesceOptions::default()))
    });
}

fn host_scan(c: &mut Criterion) {
    let (_dir, path, source) = setup();
    let meta = load(&source, MetadataOptions::default()).unwrap();
    let p = Arc::new(plan(&meta, &ScanRequest::default()).unwrap());
    let ranges = p.needed_ranges();
    let store = object_store::local::LocalFileSystem::new();
    let location = object_store::path::Path::from_filesystem_path(&path).unwrap();
    let mut group = c.benchmark_group("scan_lineitem_sf0.1_all_columns_host");
    group.throughput(Throughput::Bytes(p.totals.bytes_needed));
    group.sample_size(10);
    group.bench_function("gdscan_fetch", |b| {
        b.iter(|| {
            for rg in fetch(
                [SourceScan::new(source.clone(), p.clone())],
                [HostAllocator],
                FetchOptions::default(),
            ) {
                rg.unwrap();
            }
        })
    });
    group.bench_function("object_store_get_ranges", |b| {
        b.iter(|| futures::executor::block_on(store.get_ranges(&location, &ranges)).unwrap())
    });
    group.finish();
}

/// The host's structural check of Snappy pages before nvCOMP (the
/// decoder's default), over every page of SF 0.1 lineitem as written.
fn snappy_check(c: &mut Criterion) {
    use gdscan::decode::page::parse_page_header;
    use gdscan::decode::page::validate::{
        check_snappy, snappy_pieces, snappy_pieces_batch, SNAPPY_BLOCK,
    };
    let (_dir, path, source) = setup();
    let meta = load(&source, MetadataOptions::default()).unwrap();
    let file = std::fs::read(&path).unwrap();
    let mut pages: Vec<(std::ops::Range<usize>, usize)> = Vec::new();
    for rg in meta.row_groups() {
        for col in rg.columns() {
            let (start, len) = col.byte_range();
            let (mut at, end) = (start as usize, (start + len) as usize);
            while at < end {
                let (h, used) = parse_page_header(&file[at..end]).unwrap();
                let body = at + used..at + used + h.compressed_size as usize;
                at = body.end;
                pages.push((body, h.uncompressed_size as usize));
            }
        }
    }
    let bytes: usize = pages.iter().map(|(r, _)| r.len()).sum();
    let mut group = c.benchmark_group("snappy_check");
    group.throughput(Throughput::Bytes(bytes as u64));
    group.bench_function("lineitem_sf0.1_pages", |b| {
        b.iter(|| {
            for (r, size) in &pages {
                check_snappy(&file[r.clone()], *size).unwrap();
            }
        })
    });
    // The same walk also finding each page's 64 KiB pieces (for nvCOMP).
    group.bench_function("lineitem_sf0.1_pages_pieces", |b| {
        b.iter(|| {
            for (r, size) in &pages {
                snappy_pieces(&file[r.clone()], *size, SNAPPY_BLOCK).unwrap();
            }
        })
    });
    // The same, with the pages' walks interleaved on the one thread.
    let borrowed: Vec<(&[u8], usize)> = pages.iter().map(|(r, n)| (&file[r.clone()], *n)).collect();
    group.bench_function("lineitem_sf0.1_pages_pieces_batch", |b| {
        b.iter(|| {
            for verdict in snappy_pieces_batch(&borrowed, SNAPPY_BLOCK) {
                verdict.unwrap();
            }
        })
    });
    group.finish();
    // What the decoder's planner walks on the host: the pages longer than
    // the GPU's check takes (copy-heavy, so more elements per byte).
    let long: Vec<(&[u8], usize)> = borrowed
        .iter()
        .copied()
        .filter(|(s, _)| s.len() > gdscan::decode::scan::GPU_CHECK_MAX_BYTES)
        .collect();
    let mut group = c.benchmark_group("snappy_check_long_pages");
    group.throughput(Throughput::Bytes(
        long.iter().map(|(s, _)| s.len() as u64).sum(),
    ));
    group.bench_function("one_at_a_time", |b| {
        b.iter(|| {
            for (s, size) in &long {
                snappy_pieces(s, *size, SNAPPY_BLOCK).unwrap();
            }
        })
    });
    group.bench_function("batch", |b| {
        b.iter(|| {
            for verdict in snappy_pieces_batch(&long, SNAPPY_BLOCK) {
                verdict.unwrap();
            }
        })
    });
    group.finish();
    // The same pages' data as LZ4_RAW blocks (lz4_flex), checked one at a time.
    let lz4: Vec<(Vec<u8>, usize)> = pages
        .iter()
        .map(|(r, n)| {
            let raw = snap::raw::Decoder::new()
                .decompress_vec(&file[r.clone()])
                .unwrap();
            (lz4_flex::block::compress(&raw), *n)
        })
        .collect();
    let mut group = c.benchmark_group("lz4_check");
    group.throughput(Throughput::Bytes(
        lz4.iter().map(|(s, _)| s.len() as u64).sum(),
    ));
    group.bench_function("lineitem_sf0.1_pages", |b| {
        b.iter(|| {
            for (s, size) in &lz4 {
                gdscan::decode::page::validate::check_lz4_block(s, *size).unwrap();
            }
        })
    });
    group.finish();
}

criterion_group!(benches, planning, host_scan, snappy_check);
criterion_main!(benches);
