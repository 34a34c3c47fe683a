//! Plans with explicit rows ([`ScanRequest::rows`]) on files written here
//! by arrow-rs: the kept pages are those the offset index (as arrow-rs reads
//! it) places over the selected rows, and arrow-rs, reading a copy of the
//! file that holds only the plan's bytes, returns exactly the selected rows.

// Whole row groups and single selections are one-range lists here.
#![allow(clippy::single_range_in_vec_init)]

use std::ops::Range;
use std::sync::Arc;

use ::arrow::array::{ArrayRef, Int32Array, Int64Array, ListArray, StringArray, UInt32Array};
use ::arrow::compute::{concat_batches, take_record_batch};
use ::arrow::datatypes::Int32Type;
use ::arrow::record_batch::RecordBatch;
use ::parquet::arrow::arrow_reader::{
    ArrowReaderOptions, ParquetRecordBatchReaderBuilder, RowSelection, RowSelectionPolicy,
};
use ::parquet::arrow::{ArrowWriter, ProjectionMask};
use ::parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
use ::parquet::file::properties::{EnabledStatistics, WriterProperties};
use bytes::Bytes;

use super::plan::*;
use super::selection::{normalize, page_rows, RowSelections};
use super::selection_tests::Rng;

pub(super) const RG_ROWS: usize = 300;
pub(super) const PAGE_ROWS: usize = 37;

/// 1000 rows: `id` (0..), nullable `val` and `s` (strings of varied length),
/// and, with `nested`, a nullable list column `l`.
pub(super) fn batch(nested: bool) -> RecordBatch {
    let n = 1000;
    let id = Int64Array::from_iter_values(0..n as i64);
    let val = Int32Array::from_iter((0..n as i32).map(|i| (i % 3 != 0).then_some(i * 7)));
    let s = StringArray::from_iter(
        (0..n).map(|i| (i % 5 != 1).then(|| format!("row {i} {}", "x".repeat(i % 23)))),
    );
    let mut cols: Vec<(&str, ArrayRef)> = vec![
        ("id", Arc::new(id)),
        ("val", Arc::new(val)),
        ("s", Arc::new(s)),
    ];
    if nested {
        let l = ListArray::from_iter_primitive::<Int32Type, _, _>((0..n as i32).map(|i| {
            (i % 4 != 2).then(|| {
                (0..i % 5)
                    .map(|k| (k % 2 == 0).then_some(i + k))
                    .collect::<Vec<_>>()
            })
        }));
        cols.push(("l", Arc::new(l)));
    }
    RecordBatch::try_from_iter(cols).unwrap()
}

/// `batch` written with page statistics and a page index, in row groups of
/// [`RG_ROWS`] and data pages of [`PAGE_ROWS`] rows: the file's bytes and
/// its metadata as arrow-rs reads it (page index included).
pub(super) fn write(batch: &RecordBatch) -> (Bytes, ParquetMetaData) {
    let props = WriterProperties::builder()
        .set_max_row_group_row_count(Some(RG_ROWS))
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_data_page_row_count_limit(PAGE_ROWS)
        .set_write_batch_size(PAGE_ROWS)
        .build();
    let mut buf = Vec::new();
    let mut writer = ArrowWriter::try_new(&mut buf, batch.schema(), Some(props)).unwrap();
    writer.write(batch).unwrap();
    writer.close().unwrap();
    let bytes = Bytes::from(buf);
    let meta = ParquetMetaDataReader::new()
        .with_page_index_policy(PageIndexPolicy::Required)
        .parse_and_finish(&bytes)
        .unwrap();
    (bytes, meta)
}

/// A copy of `file` holding only the plan's requested bytes, the leading
/// magic and everything after the last column chunk (page indexes and
/// footer); every other byte zero.
pub(super) fn planned_bytes(file: &Bytes, meta: &ParquetMetaData, plan: &ScanPlan) -> Bytes {
    let mut out = vec![0u8; file.len()];
    let tail = meta
        .row_groups()
        .iter()
        .flat_map(|rg| rg.columns())
        .map(|c| {
            let (start, len) = c.byte_range();
            (start + len) as usize
        })
        .max()
        .unwrap();
    out[..4].copy_from_slice(&file[..4]);
    out[tail..].copy_from_slice(&file[tail..]);
    for r in &plan.requests {
        let (a, b) = (r.range.start as usize, r.range.end as usize);
        out[a..b].copy_from_slice(&file[a..b]);
    }
    Bytes::from(out)
}

/// arrow-rs's read of `bytes`: the plan's columns and row groups, each cut
/// to its [`RowGroupPlan::rows`] (whole where None).
pub(super) fn decode(bytes: Bytes, plan: &ScanPlan) -> RecordBatch {
    let options = ArrowReaderOptions::new().with_page_index_policy(PageIndexPolicy::Required);
    let builder = ParquetRecordBatchReaderBuilder::try_new_with_options(bytes, options).unwrap();
    let mask = ProjectionMask::leaves(builder.parquet_schema(), plan.leaves.iter().copied());
    let mut ranges = Vec::new();
    let mut at = 0usize;
    for rg in &plan.row_groups {
        let whole = [0..rg.num_rows];
        for r in rg.rows.as_deref().unwrap_or(&whole) {
            ranges.push(at + r.start as usize..at + r.end as usize);
        }
        at += rg.num_rows as usize;
    }
    let reader = builder
        .with_projection(mask)
        .with_row_groups(plan.row_groups.iter().map(|r| r.index).collect())
        // Selectors: arrow-rs's default turns short runs into a mask and
        // reads every page; selectors skip the pages no selected row is in.
        .with_row_selection_policy(RowSelectionPolicy::Selectors)
        .with_row_selection(RowSelection::from_consecutive_ranges(
            ranges.into_iter(),
            at,
        ))
        .build()
        .unwrap();
    let schema = ::arrow::record_batch::RecordBatchReader::schema(&reader);
    let batches: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    concat_batches(&schema, &batches).unwrap()
}

/// The rows of `batch` (the whole file) at `rows` (row numbers within each
/// row group), projected to `columns`.
pub(super) fn expected(
    batch: &RecordBatch,
    meta: &ParquetMetaData,
    rows: &[(usize, Vec<Range<i64>>)],
    columns: &[&str],
) -> RecordBatch {
    let firsts: Vec<i64> = meta
        .row_groups()
        .iter()
        .scan(0, |at, rg| {
            *at += rg.num_rows();
            Some(*at - rg.num_rows())
        })
        .collect();
    let mut indices = Vec::new();
    for (rg, ranges) in rows {
        for r in ranges {
            indices.extend(r.clone().map(|i| (firsts[*rg] + i) as u32));
        }
    }
    let indices = UInt32Array::from(indices);
    let projected = batch
        .project(
            &columns
                .iter()
                .map(|c| batch.schema().index_of(c).unwrap())
                .collect::<Vec<_>>(),
        )
        .unwrap();
    take_record_batch(&projected, &indices).unwrap()
}

/// The pages of chunk (`rg`, `leaf`) whose rows meet `rows`, from the
/// offset index: (byte offset, length, first row).
fn pages_meeting(
    meta: &ParquetMetaData,
    rg: usize,
    leaf: usize,
    rows: &[Range<i64>],
) -> Vec<(u64, u64, i64)> {
    let index = &meta.offset_index().unwrap()[rg][leaf];
    let num_rows = meta.row_group(rg).num_rows();
    let locs = index.page_locations();
    (0..locs.len())
        .filter(|&i| {
            let end = locs.get(i + 1).map_or(num_rows, |l| l.first_row_index);
            (locs[i].first_row_index..end).any(|row| rows.iter().any(|r| r.contains(&row)))
        })
        .map(|i| {
            (
                locs[i].offset as u64,
                locs[i].compressed_page_size as u64,
                locs[i].first_row_index,
            )
        })
        .collect()
}

/// Checks every chunk of `plan` keeps exactly the pages meeting its row
/// group's rows (`want`, per row group) plus its dictionary page.
fn assert_pages(meta: &ParquetMetaData, plan: &ScanPlan, want: &[(usize, Vec<Range<i64>>)]) {
    for c in &plan.chunks {
        let rows = &want.iter().find(|(i, _)| *i == c.row_group).unwrap().1;
        let pages: Vec<(u64, u64, i64)> = c
            .pages
            .as_ref()
            .unwrap()
            .iter()
            .map(|p| (p.range.start, p.range.end - p.range.start, p.first_row))
            .collect();
        let reference = pages_meeting(meta, c.row_group, c.leaf, rows);
        assert_eq!(
            pages, reference,
            "{} in row group {}",
            c.column, c.row_group
        );
        let first_page =
            meta.offset_index().unwrap()[c.row_group][c.leaf].page_locations()[0].offset;
        let dictionary = first_page as u64 - c.range.start;
        let bytes: u64 = reference.iter().map(|p| p.1).sum::<u64>() + dictionary;
        assert_eq!(
            c.needed(),
            bytes,
            "{} in row group {}",
            c.column,
            c.row_group
        );
    }
}

fn flat_columns() -> Projection {
    Projection::Columns(vec!["id".into(), "val".into(), "s".into()])
}

#[test]
fn explicit_rows_keep_the_pages_meeting_them_and_decode_to_them() {
    let batch = batch(false);
    let (file, meta) = write(&batch);
    assert_eq!(meta.num_row_groups(), 4);
    let rows: RowSelections = [
        (0, vec![5..20, 100..101, 250..300]),
        (2, vec![0..300]),
        (3, vec![]),
    ]
    .into_iter()
    .collect();
    let request = ScanRequest {
        projection: flat_columns(),
        rows: Some(rows),
        ..Default::default()
    };
    let p = plan(&meta, &request).unwrap();
    let kept: Vec<usize> = p.row_groups.iter().map(|r| r.index).collect();
    assert_eq!(
        kept,
        vec![0, 2],
        "row groups 1 (no entry) and 3 (empty) are not planned"
    );
    assert_eq!(p.row_groups[0].rows, Some(vec![5..20, 100..101, 250..300]));
    assert_eq!(p.row_groups[1].rows, None, "all 300 rows: nothing to cut");
    assert_eq!(p.totals.row_groups_pruned_by_rows, 2);
    assert!(!p.whole_row_groups());
    let want = vec![(0, vec![5..20, 100..101, 250..300]), (2, vec![0..300])];
    assert_pages(&meta, &p, &want);
    // What the rows saved, against the plan without them.
    let all = plan(
        &meta,
        &ScanRequest {
            rows: None,
            ..request.clone()
        },
    )
    .unwrap();
    assert_eq!(
        p.totals.bytes_skipped_by_rows,
        all.totals.bytes_needed - p.totals.bytes_needed
    );
    assert_eq!(
        p.totals.pages_skipped_by_rows,
        all.totals.pages_kept - p.totals.pages_kept
    );
    assert_eq!(all.totals.pages_skipped_by_rows, 0);
    assert_eq!(all.totals.bytes_skipped_by_rows, 0);
    let got = decode(planned_bytes(&file, &meta, &p), &p);
    assert_eq!(got, expected(&batch, &meta, &want, &["id", "val", "s"]));
}

#[test]
fn explicit_rows_intersect_the_predicates_pages() {
    let batch = batch(false);
    let (file, meta) = write(&batch);
    let rows: RowSelections = [
        (1, vec![0..10]),
        (2, vec![50..80, 200..210]),
        (3, vec![0..5]),
    ]
    .into_iter()
    .collect();
    let request = ScanRequest {
        projection: flat_columns(),
        predicate: Some("id >= 700".parse().unwrap()),
        rows: Some(rows),
        ..Default::default()
    };
    let p = plan(&meta, &request).unwrap();
    // Row groups 0 and 1 (ids below 600) fail the statistics; row group 2
    // keeps its pages from row 74 (ids 674..) on.
    assert_eq!(p.totals.row_groups_pruned_by_statistics, 2);
    assert_eq!(p.totals.row_groups_pruned_by_rows, 0);
    let kept: Vec<usize> = p.row_groups.iter().map(|r| r.index).collect();
    assert_eq!(kept, vec![2, 3]);
    assert_eq!(p.row_groups[0].rows, Some(vec![74..80, 200..210]));
    assert_eq!(p.row_groups[1].rows, Some(vec![0..5]));
    let want = vec![(2, vec![74..80, 200..210]), (3, vec![0..5])];
    assert_pages(&meta, &p, &want);
    let got = decode(planned_bytes(&file, &meta, &p), &p);
    assert_eq!(got, expected(&batch, &meta, &want, &["id", "val", "s"]));
}

/// Random selections, with and without a predicate: the kept pages are
/// those meeting the selected rows, and decoding the plan's bytes returns
/// exactly them.
#[test]
fn random_selections_plan_the_pages_meeting_them() {
    let batch = batch(false);
    let (file, meta) = write(&batch);
    let mut rng = Rng::new(7);
    for case in 0..24 {
        let mut rows = RowSelections::new();
        for rg in 0..meta.num_row_groups() {
            if rng.below(5) > 0 {
                let n = meta.row_group(rg).num_rows();
                let (density, run) = (1 + rng.below(60), 1 + rng.below(40));
                rows.insert(rg, rng.ranges(n, density, run));
            }
        }
        let predicate = (case % 2 == 1).then(|| "id >= 450".parse().unwrap());
        let request = ScanRequest {
            projection: flat_columns(),
            predicate: predicate.clone(),
            rows: Some(rows.clone()),
            ..Default::default()
        };
        let p = plan(&meta, &request).unwrap();
        // The reference selection: the explicit rows, cut by the pages the
        // predicate keeps (the plan without explicit rows says which).
        let base = plan(
            &meta,
            &ScanRequest {
                rows: None,
                ..request.clone()
            },
        )
        .unwrap();
        let want: Vec<(usize, Vec<Range<i64>>)> = base
            .row_groups
            .iter()
            .filter_map(|rg| {
                let explicit = rows.get(rg.index).unwrap_or(&[]);
                let sel: Vec<Range<i64>> = explicit
                    .iter()
                    .flat_map(|e| {
                        let whole = [0..rg.num_rows];
                        let base = rg.rows.clone().unwrap_or(whole.to_vec());
                        base.into_iter()
                            .map(|b| b.start.max(e.start)..b.end.min(e.end))
                            .filter(|r| r.start < r.end)
                            .collect::<Vec<_>>()
                    })
                    .collect();
                let sel = normalize(sel);
                (!sel.is_empty()).then_some((rg.index, sel))
            })
            .collect();
        let kept: Vec<usize> = p.row_groups.iter().map(|r| r.index).collect();
        let want_kept: Vec<usize> = want.iter().map(|w| w.0).collect();
        assert_eq!(kept, want_kept, "case {case}");
        assert_pages(&meta, &p, &want);
        assert_eq!(
            p.totals.bytes_skipped_by_rows,
            base.totals.bytes_needed - p.totals.bytes_needed,
            "case {case}"
        );
        assert_eq!(
            p.totals.pages_skipped_by_rows,
            base.totals.pages_kept - p.totals.pages_kept,
            "case {case}"
        );
        let got = decode(planned_bytes(&file, &meta, &p), &p);
        assert_eq!(
            got,
            expected(&batch, &meta, &want, &["id", "val", "s"]),
            "case {case}"
        );
    }
}

#[test]
fn a_nested_leaf_keeps_whole_row_groups() {
    let batch = batch(true);
    let (file, meta) = write(&batch);
    let rows: RowSelections = [(1, vec![3..9]), (2, vec![])].into_iter().collect();
    let request = ScanRequest {
        projection: Projection::Columns(vec!["id".into(), "l".into()]),
        rows: Some(rows),
        ..Default::default()
    };
    let p = plan(&meta, &request).unwrap();
    assert!(p.whole_row_groups());
    let kept: Vec<usize> = p.row_groups.iter().map(|r| r.index).collect();
    assert_eq!(kept, vec![1], "empty selections still drop row groups");
    assert_eq!(p.row_groups[0].rows, None, "widened to the whole row group");
    for c in &p.chunks {
        assert_eq!(c.ranges, vec![c.range.clone()], "{}: read whole", c.column);
    }
    assert_eq!(p.totals.pages_kept, p.totals.pages_total);
    let got = decode(planned_bytes(&file, &meta, &p), &p);
    let want = expected(&batch, &meta, &[(1, vec![0..300])], &["id", "l"]);
    assert_eq!(got, want);
    // Compacting by mask gives the selected rows.
    let mask = super::selection::compaction_mask(&[3..9], &[0..300]);
    let filter = ::arrow::array::BooleanArray::from_iter(mask.iter().map(|&m| Some(m != 0)));
    let compacted = ::arrow::compute::filter_record_batch(&got, &filter).unwrap();
    assert_eq!(
        compacted,
        expected(&batch, &meta, &[(1, vec![3..9])], &["id", "l"])
    );
}

#[test]
fn without_an_offset_index_chunks_are_read_whole_and_rows_kept() {
    let batch = batch(false);
    let (file, _) = write(&batch);
    let meta = ParquetMetaDataReader::new()
        .parse_and_finish(&file)
        .unwrap();
    assert!(meta.offset_index().is_none());
    let rows: RowSelections = [(0, vec![10..20]), (3, vec![0..1, 50..60])]
        .into_iter()
        .collect();
    let request = ScanRequest {
        projection: flat_columns(),
        rows: Some(rows),
        ..Default::default()
    };
    let p = plan(&meta, &request).unwrap();
    assert_eq!(p.row_groups[0].rows, Some(vec![10..20]));
    assert_eq!(p.row_groups[1].rows, Some(vec![0..1, 50..60]));
    for c in &p.chunks {
        assert_eq!(
            (c.ranges.clone(), c.pages.clone()),
            (vec![c.range.clone()], None)
        );
    }
    assert_eq!(p.totals.pages_skipped_by_rows, 0);
    let all = plan(
        &meta,
        &ScanRequest {
            rows: None,
            ..request.clone()
        },
    )
    .unwrap();
    assert_eq!(
        p.totals.bytes_skipped_by_rows,
        all.totals.bytes_needed - p.totals.bytes_needed
    );
    let got = decode(planned_bytes(&file, &meta, &p), &p);
    let want = [(0, vec![10..20]), (3, vec![0..1, 50..60])];
    assert_eq!(got, expected(&batch, &meta, &want, &["id", "val", "s"]));
}

#[test]
fn rows_outside_the_file_are_errors() {
    let (_, meta) = write(&batch(false));
    let bad = |rows: RowSelections| {
        plan(
            &meta,
            &ScanRequest {
                rows: Some(rows),
                ..Default::default()
            },
        )
        .unwrap_err()
    };
    assert_eq!(
        bad([(9, vec![0..1])].into_iter().collect()),
        PlanError::UnknownRowGroup { index: 9, count: 4 }
    );
    assert_eq!(
        bad([(3, vec![90..101])].into_iter().collect()),
        PlanError::RowsOutOfRange {
            row_group: 3,
            rows: 90..101,
            num_rows: 100
        }
    );
    assert_eq!(
        bad([(0, vec![-1..2])].into_iter().collect()),
        PlanError::RowsOutOfRange {
            row_group: 0,
            rows: -1..2,
            num_rows: 300
        }
    );
    // Page row ranges come from the same offset index the plan reads.
    let index = &meta.offset_index().unwrap()[0][0];
    assert_eq!(page_rows(index, 300).first(), Some(&(0..37)));
}
