//! Planning, fetching and decoding on files the test writes itself (no
//! parquet-testing needed): the plan's ranges are the metadata's, the
//! fetched bytes are the file's, pruning never drops a matching row, and the
//! decoded, filtered output equals arrow-rs's own read filtered the same way.

use std::sync::Arc;

use arrow::compute::filter_record_batch;
use arrow::record_batch::RecordBatch;
use gdscan::parquet::fetch::{fetch, layout, FetchOptions, HostAllocator, ReadBack, SourceScan};
use gdscan::parquet::metadata::{load, MetadataOptions};
use gdscan::parquet::plan::{plan, PlanError, Projection, ScanRequest};
use gdscan::parquet::ScanError;
use gdscan::parquet::{CoalesceOptions, Predicate};
use gdscan::store::{LocalSource, Source};
use gdscan::{Engine, Settings};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;

mod common;
use common::{batch, write_file};
use gdscan::engine::IoError;

fn open(path: &std::path::Path) -> Arc<dyn Source> {
    let engine = Engine::new(Settings::builder().num_threads(3).build().unwrap()).unwrap();
    Arc::new(LocalSource::open(engine, path).unwrap())
}

#[test]
fn plan_ranges_are_the_metadata_chunk_ranges() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path());
    let h = open(&path);
    let meta = load(&h, MetadataOptions::default()).unwrap();
    assert_eq!(meta.num_row_groups(), 5);
    let req = ScanRequest {
        projection: Projection::Columns(vec!["l_shipdate".into(), "l_orderkey".into()]),
        ..Default::default()
    };
    let p = plan(&meta, &req).unwrap();
    assert_eq!(p.leaves, vec![0, 3], "schema order");
    assert_eq!(p.chunks.len(), 10);
    for c in &p.chunks {
        let (start, len) = meta.row_group(c.row_group).column(c.leaf).byte_range();
        assert_eq!(c.range, start..start + len);
        assert_eq!(
            c.ranges,
            vec![start..start + len],
            "no filter: whole chunks"
        );
        assert_eq!(
            c.pages.as_ref().unwrap().len(),
            8,
            "500-row pages from the offset index"
        );
    }
    assert_eq!(
        p.totals.bytes_needed,
        p.chunks
            .iter()
            .map(|c| c.range.end - c.range.start)
            .sum::<u64>()
    );
    assert!(p.totals.bytes_read >= p.totals.bytes_needed);
    assert_eq!(p.totals.row_groups_kept, 5);
    // With no gap allowed, requests are exactly the (adjacent-merged) chunks.
    let exact = plan(
        &meta,
        &ScanRequest {
            coalesce: CoalesceOptions {
                max_gap: 0,
                max_request: u64::MAX,
                max_overread: 0.0,
            },
            ..req.clone()
        },
    )
    .unwrap();
    assert_eq!(exact.totals.bytes_read, exact.totals.bytes_needed);
}

#[test]
fn unknown_columns_row_groups_and_filters_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(&write_file(dir.path()));
    let meta = load(&h, MetadataOptions::default()).unwrap();
    let e = plan(
        &meta,
        &ScanRequest {
            projection: Projection::Columns(vec!["nope".into()]),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(e, PlanError::UnknownColumn("nope".into()));
    let e = plan(
        &meta,
        &ScanRequest {
            row_groups: Some(vec![7]),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert_eq!(e, PlanError::UnknownRowGroup { index: 7, count: 5 });
    let e = plan(
        &meta,
        &ScanRequest {
            predicate: Some("missing > 3".parse::<Predicate>().unwrap()),
            ..Default::default()
        },
    )
    .unwrap_err();
    assert!(matches!(e, PlanError::Predicate(_)), "{e:?}");
}

#[test]
fn pruning_reads_less_and_never_drops_a_matching_row() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path());
    let h = open(&path);
    let meta = load(&h, MetadataOptions::default()).unwrap();
    let all = plan(&meta, &ScanRequest::default()).unwrap();
    for text in [
        "l_orderkey >= 5000 AND l_orderkey < 5600",
        "l_shipdate >= DATE '1992-01-01' AND l_shipdate < DATE '1992-03-01'",
        "l_orderkey = 19999",
        "l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24",
        "l_comment IS NULL",
    ] {
        let pred: Predicate = text.parse().unwrap();
        let p = plan(
            &meta,
            &ScanRequest {
                predicate: Some(pred.clone()),
                ..Default::default()
            },
        )
        .unwrap();
        // Oracle: every row that matches lies in a kept row group, inside a kept page range.
        let full = batch();
        let mask = pred.evaluate(&full).unwrap();
        for (row, m) in mask.iter().enumerate() {
            if m != Some(true) {
                continue;
            }
            let rg = row / 4000;
            let in_rg = (row % 4000) as i64;
            let rgp = p
                .row_groups
                .iter()
                .find(|r| r.index == rg)
                .unwrap_or_else(|| {
                    panic!("{text}: row {row} matches but row group {rg} was pruned")
                });
            for &c in &rgp.chunks {
                let pages = p.chunks[c].pages.as_ref().unwrap();
                let kept = pages.iter().enumerate().any(|(i, pg)| {
                    let end = pages.get(i + 1).map(|n| n.first_row).unwrap_or(i64::MAX);
                    pg.first_row <= in_rg && (in_rg < end || i + 1 == pages.len())
                });
                assert!(
                    kept,
                    "{text}: row {row} matches but its page of {} was dropped",
                    p.chunks[c].column
                );
            }
        }
        if text.starts_with("l_orderkey") {
            assert!(
                p.totals.bytes_needed < all.totals.bytes_needed / 2,
                "{text}: sorted keys prune ({} of {})",
                p.totals.bytes_needed,
                all.totals.bytes_needed
            );
        }
    }
    let none: Predicate = "l_orderkey > 1000000".parse().unwrap();
    let p = plan(
        &meta,
        &ScanRequest {
            predicate: Some(none),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(p.totals.row_groups_kept, 0);
    assert_eq!(p.totals.row_groups_pruned_by_statistics, 5);
    assert_eq!(p.totals.bytes_read, 0);
}

#[test]
fn fetched_bytes_are_the_file_bytes_and_memory_is_bounded() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path());
    let file = std::fs::read(&path).unwrap();
    let h = open(&path);
    let meta = load(&h, MetadataOptions::default()).unwrap();
    let pred: Predicate = "l_orderkey >= 3000 AND l_orderkey < 9000".parse().unwrap();
    let p = Arc::new(
        plan(
            &meta,
            &ScanRequest {
                projection: Projection::Columns(vec!["l_comment".into(), "l_orderkey".into()]),
                predicate: Some(pred),
                ..Default::default()
            },
        )
        .unwrap(),
    );
    assert!(p.totals.row_groups_kept >= 2);
    // One row group at a time; the defaults; many row groups with a tiny read-ahead.
    let option_sets = [
        FetchOptions {
            max_bytes_in_flight: 1,
            prefetch: 1,
            ..Default::default()
        },
        FetchOptions::default(),
        FetchOptions {
            read_ahead_bytes: 1,
            ..Default::default()
        },
    ];
    for opts in option_sets {
        let mut seen = Vec::new();
        for rg in fetch(
            [SourceScan::new(h.clone(), p.clone())],
            [HostAllocator],
            opts,
        ) {
            let rg = rg.unwrap();
            let lay = layout(
                &p,
                p.row_groups.iter().find(|r| r.index == rg.index).unwrap(),
            );
            assert_eq!(rg.buffer.len(), lay.len);
            assert_eq!(rg.bytes_read as usize, lay.len);
            for slice in &rg.chunks {
                for piece in &slice.pieces {
                    let got = &rg.buffer[piece.buffer_offset..piece.buffer_offset + piece.len];
                    let want =
                        &file[piece.file_offset as usize..piece.file_offset as usize + piece.len];
                    assert_eq!(
                        got, want,
                        "chunk {} piece at {}",
                        slice.chunk, piece.file_offset
                    );
                }
                // The chunk read back whole: its pieces' file bytes, in file order.
                assert!(
                    slice.file_bytes(&file) == Some(rg.chunk_bytes(slice).unwrap()),
                    "chunk {}",
                    slice.chunk
                );
            }
            seen.push(rg.index);
        }
        assert_eq!(
            seen,
            p.row_groups.iter().map(|r| r.index).collect::<Vec<_>>(),
            "{opts:?}"
        );
    }
}

#[test]
fn dropping_a_fetch_stream_early_stops_it() {
    let dir = tempfile::tempdir().unwrap();
    let h = open(&write_file(dir.path()));
    let meta = load(&h, MetadataOptions::default()).unwrap();
    let p = Arc::new(plan(&meta, &ScanRequest::default()).unwrap());
    let mut stream = fetch(
        [SourceScan::new(h, p)],
        [HostAllocator],
        FetchOptions {
            max_bytes_in_flight: 1,
            prefetch: 1,
            ..Default::default()
        },
    );
    let first = stream.next().unwrap().unwrap();
    assert_eq!(first.index, 0);
    drop(stream); // must return, with the producer blocked on the budget held by `first`
    drop(first);
}

#[test]
fn decoded_output_equals_arrow_rs_filtered() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path());
    let h = open(&path);
    let meta = load(&h, MetadataOptions::default()).unwrap();
    let pred: Predicate =
        "l_shipdate >= DATE '1992-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND l_quantity < 24"
            .parse()
            .unwrap();
    let projection = Projection::Columns(vec!["l_orderkey".into(), "l_quantity".into()]);
    let p = plan(
        &meta,
        &ScanRequest {
            projection: projection.clone(),
            predicate: Some(pred.clone()),
            ..Default::default()
        },
    )
    .unwrap();
    let out = dir.path().join("out.arrow");
    let rows = gdscan::parquet::ipc_export::write_ipc(h, meta, &p, &projection, Some(&pred), &out)
        .unwrap();
    let got: Vec<RecordBatch> =
        arrow::ipc::reader::FileReader::try_new(std::fs::File::open(&out).unwrap(), None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    let got = arrow::compute::concat_batches(&got[0].schema(), &got).unwrap();
    // Oracle: arrow-rs reads everything, the predicate filters, then project.
    let all: Vec<RecordBatch> =
        ParquetRecordBatchReaderBuilder::try_new(std::fs::File::open(&path).unwrap())
            .unwrap()
            .build()
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    let all = arrow::compute::concat_batches(&all[0].schema(), &all).unwrap();
    let want = filter_record_batch(&all, &pred.evaluate(&all).unwrap())
        .unwrap()
        .project(&[0, 1])
        .unwrap();
    assert!(want.num_rows() > 0);
    assert_eq!(rows as usize, want.num_rows());
    assert_eq!(got, want);
}

#[test]
fn footer_is_one_read_with_the_size_hint_and_two_without_and_cached() {
    use gdscan::engine::IoPath;
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path());
    gdscan::parquet::metadata::clear_cache();
    let h = open(&path);
    let meta = load(&h, MetadataOptions::default()).unwrap();
    assert!(meta.offset_index().is_some(), "page index read too");
    let reads = h.counters().get(IoPath::PosixHost).ops;
    assert_eq!(
        reads, 1,
        "footer and page index in one read of the file's tail"
    );
    // Cached: no I/O the second time (same path, size, mtime).
    load(&h, MetadataOptions::default()).unwrap();
    assert_eq!(h.counters().get(IoPath::PosixHost).ops, reads);
    // A hint smaller than the footer costs more reads, never wrong metadata.
    gdscan::parquet::metadata::clear_cache();
    let h2 = open(&path);
    let small = load(
        &h2,
        MetadataOptions {
            page_index: true,
            size_hint: 16,
        },
    )
    .unwrap();
    assert!(h2.counters().get(IoPath::PosixHost).ops >= 2);
    assert_eq!(small.num_row_groups(), meta.num_row_groups());
    assert_eq!(
        small.file_metadata().num_rows(),
        meta.file_metadata().num_rows()
    );
}

#[test]
fn nested_columns_project_by_name_or_leaf_path() {
    use arrow::array::{Int32Array, StructArray};
    use arrow::datatypes::{DataType, Field, Fields, Schema};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested.parquet");
    let inner = Fields::from(vec![
        Field::new("x", DataType::Int32, false),
        Field::new("y", DataType::Int32, false),
    ]);
    let s = StructArray::new(
        inner.clone(),
        vec![
            Arc::new(Int32Array::from(vec![1, 2, 3])),
            Arc::new(Int32Array::from(vec![4, 5, 6])),
        ],
        None,
    );
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int32, false),
        Field::new("point", DataType::Struct(inner), false),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![Arc::new(Int32Array::from(vec![7, 8, 9])), Arc::new(s)],
    )
    .unwrap();
    let mut w =
        parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path).unwrap(), schema, None)
            .unwrap();
    w.write(&batch).unwrap();
    w.close().unwrap();
    let h = open(&path);
    let meta = load(&h, MetadataOptions::default()).unwrap();
    let by_name = plan(
        &meta,
        &ScanRequest {
            projection: Projection::Columns(vec!["point".into()]),
            ..Default::default()
        },
    )
    .unwrap();
    let cols: Vec<&str> = by_name.chunks.iter().map(|c| c.column.as_str()).collect();
    assert_eq!(
        cols,
        vec!["point.x", "point.y"],
        "a struct brings all its leaves"
    );
    let by_leaf = plan(
        &meta,
        &ScanRequest {
            projection: Projection::Columns(vec!["point.y".into()]),
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(by_leaf.leaves, vec![2]);
    assert_eq!(by_leaf.chunks[0].column, "point.y");
}

#[test]
fn a_multi_file_fetch_streams_every_file_in_order_with_exact_bytes() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let paths: Vec<_> = dirs.iter().map(|d| write_file(d.path())).collect();
    let contents: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let request = ScanRequest {
        projection: Projection::Columns(vec!["l_comment".into(), "l_quantity".into()]),
        ..Default::default()
    };
    let scans: Vec<SourceScan> = paths
        .iter()
        .map(|p| {
            let source = open(p);
            let meta = load(&source, MetadataOptions::default()).unwrap();
            let plan = Arc::new(plan(&meta, &request).unwrap());
            SourceScan::new(source, plan)
        })
        .collect();
    let expected: Vec<(usize, usize)> = scans
        .iter()
        .enumerate()
        .flat_map(|(f, s)| s.plan.row_groups.iter().map(move |r| (f, r.index)))
        .collect();
    assert!(expected.len() >= 4, "two files of several row groups");
    for opts in [
        FetchOptions::default(),
        FetchOptions {
            max_bytes_in_flight: 1,
            prefetch: 1,
            ..Default::default()
        },
    ] {
        let mut seen = Vec::new();
        for rg in fetch(scans.clone(), [HostAllocator], opts) {
            let rg = rg.unwrap();
            let file = &contents[rg.file];
            for slice in &rg.chunks {
                for piece in &slice.pieces {
                    let got = &rg.buffer[piece.buffer_offset..piece.buffer_offset + piece.len];
                    let at = piece.file_offset as usize;
                    assert_eq!(got, &file[at..at + piece.len], "file {}", rg.file);
                }
            }
            seen.push((rg.file, rg.index));
        }
        assert_eq!(seen, expected, "{opts:?}");
    }
}

/// A fetch spread over three shares (host memory here; one GPU each on a
/// machine with several): every kept row group lands exactly once, in its
/// share, with the file's bytes; each share reads the bytes the spread
/// gave it, within one row group of the others.
#[test]
fn a_spread_fetch_lands_every_row_group_once_in_its_share() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let paths: Vec<_> = dirs.iter().map(|d| write_file(d.path())).collect();
    let contents: Vec<Vec<u8>> = paths.iter().map(|p| std::fs::read(p).unwrap()).collect();
    let scans: Vec<SourceScan> = paths
        .iter()
        .map(|p| {
            let source = open(p);
            let meta = load(&source, MetadataOptions::default()).unwrap();
            let plan = Arc::new(plan(&meta, &ScanRequest::default()).unwrap());
            SourceScan::new(source, plan)
        })
        .collect();
    let mut expected: Vec<(usize, usize)> = scans
        .iter()
        .enumerate()
        .flat_map(|(f, s)| s.plan.row_groups.iter().map(move |r| (f, r.index)))
        .collect();
    assert!(expected.len() >= 4);
    let plans: Vec<_> = scans.iter().map(|s| s.plan.clone()).collect();
    let spread = gdscan::parquet::spread(&plans, 3);
    let mut seen = Vec::new();
    for rg in fetch(
        scans.clone(),
        vec![HostAllocator; 3],
        FetchOptions::default(),
    ) {
        let rg = rg.unwrap();
        let file = &contents[rg.file];
        for slice in &rg.chunks {
            assert_eq!(slice.file_bytes(file), Some(rg.chunk_bytes(slice).unwrap()));
        }
        seen.push((rg.share, rg.file, rg.index, rg.bytes_read));
    }
    let mut got: Vec<(usize, usize)> = seen.iter().map(|&(_, f, i, _)| (f, i)).collect();
    got.sort_unstable();
    expected.sort_unstable();
    assert_eq!(got, expected, "every row group once");
    for &(share, f, i, _) in &seen {
        let p = spread
            .placements
            .iter()
            .find(|p| p.file == f && p.row_group == i)
            .unwrap();
        assert_eq!(p.share, share, "file {f} row group {i}");
    }
    for share in 0..3 {
        let bytes: u64 = seen.iter().filter(|s| s.0 == share).map(|s| s.3).sum();
        assert_eq!(bytes, spread.bytes[share], "share {share}'s bytes");
    }
    let total: u64 = scans.iter().map(|s| s.plan.totals.bytes_read).sum();
    assert_eq!(seen.iter().map(|s| s.3).sum::<u64>(), total);
    let (max, min) = (
        *spread.bytes.iter().max().unwrap(),
        *spread.bytes.iter().min().unwrap(),
    );
    assert!(max - min <= spread.largest_row_group());
}

/// A spread fetch left after its first row group stops its shares and
/// returns (no thread left waiting for budget); a fetch with no allocator
/// is a typed error, not an empty stream.
#[test]
fn a_spread_fetch_dropped_early_returns_and_no_allocator_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_file(dir.path());
    let source = open(&path);
    let meta = load(&source, MetadataOptions::default()).unwrap();
    let p = Arc::new(plan(&meta, &ScanRequest::default()).unwrap());
    assert!(p.row_groups.len() >= 3);
    let opts = FetchOptions {
        max_bytes_in_flight: 1,
        prefetch: 1,
        ..Default::default()
    };
    let mut stream = fetch(
        [SourceScan::new(source.clone(), p.clone())],
        vec![HostAllocator; 3],
        opts,
    );
    let first = stream.next().unwrap().unwrap();
    drop(stream);
    drop(first);

    let mut none = fetch(
        [SourceScan::new(source, p)],
        Vec::<HostAllocator>::new(),
        FetchOptions::default(),
    );
    let err = none.next().unwrap().unwrap_err();
    assert!(
        matches!(err, gdscan::parquet::ScanError::NoAllocator),
        "{err:?}"
    );
    assert!(none.next().is_none());
}

#[test]
fn reading_back_outside_a_host_buffer_is_an_error() {
    let buffer = vec![7u8; 16];
    let mut dst = [0u8; 8];
    buffer.read_back(8, &mut dst).unwrap();
    assert_eq!(dst, [7u8; 8]);
    for offset in [9, 16, usize::MAX] {
        match buffer.read_back(offset, &mut dst) {
            Err(ScanError::Io(IoError::BufferTooSmall { buffer: 16, .. })) => {}
            other => panic!("offset {offset}: {other:?}"),
        }
    }
}
