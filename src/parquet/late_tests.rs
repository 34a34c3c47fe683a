//! The payload policy and the steps between the phases of a late
//! materialized scan, on files written by arrow-rs: phase 2's rows, read by
//! arrow-rs from only the planned bytes and compacted by the step's mask,
//! are exactly the rows phase 1's mask kept.

// Whole row groups and single selections are one-range lists here.
#![allow(clippy::single_range_in_vec_init)]

use std::collections::BTreeSet;
use std::ops::Range;

use ::arrow::array::{BooleanArray, Int64Array};
use ::arrow::compute::filter_record_batch;
use ::arrow::record_batch::RecordBatch;

use super::late::{compaction, late_rows, LateRows};
use super::payload::*;
use super::plan::*;
use super::plan_rows_tests::{batch, decode, expected, planned_bytes, write};
use super::selection::{kept_ranges, page_rows, RowSelections};
use super::selection_tests::Rng;

/// The offset indexes of leaves `leaves` of row group `rg`.
fn indexes<'a>(
    meta: &'a ::parquet::file::metadata::ParquetMetaData,
    rg: usize,
    leaves: &[usize],
) -> Vec<Option<&'a ::parquet::file::page_index::offset_index::OffsetIndexMetaData>> {
    leaves
        .iter()
        .map(|&l| Some(&meta.offset_index().unwrap()[rg][l]))
        .collect()
}

#[test]
fn few_ranges_are_exact_and_many_short_ones_whole_pages() {
    let (_, meta) = write(&batch(false));
    let columns = indexes(&meta, 0, &[1, 2]);
    let policy = PayloadPolicy::default();
    // Two ranges in pages 0 and 5 (rows 0..37 and 185..222): exact.
    let kept = vec![3..9, 190..200];
    let c = payload_rows(&kept, None, 300, &columns, policy);
    assert_eq!(c.rows, PayloadRows::Exact(kept.clone()));
    assert!(!c.rows.needs_compaction());
    assert_eq!((c.windows, c.pages), (4, 4));
    // Every other row: 150 ranges over 9 pages per column.
    let kept: Vec<Range<i64>> = (0..150).map(|i| 2 * i..2 * i + 1).collect();
    let c = payload_rows(&kept, None, 300, &columns, policy);
    assert_eq!(
        c.rows,
        PayloadRows::Pages {
            ranges: vec![0..300]
        }
    );
    assert!(c.rows.needs_compaction());
    assert_eq!(c.pages, 18);
    assert_eq!(c.windows, 300, "each range meets one page of each column");
    // A looser policy keeps them exact.
    let loose = PayloadPolicy {
        max_windows_per_page: 20,
    };
    assert_eq!(
        payload_rows(&kept, None, 300, &columns, loose).rows,
        PayloadRows::Exact(kept)
    );
    // Whole pages are cut to phase 1's rows: here rows 30..60 and 100..120.
    let base = vec![30..60, 100..120];
    let kept: Vec<Range<i64>> = (30..60)
        .chain(100..120)
        .step_by(2)
        .map(|i| i..i + 1)
        .collect();
    let c = payload_rows(&kept, Some(&base), 300, &columns, policy);
    assert_eq!(
        c.rows,
        PayloadRows::Pages {
            ranges: base.clone()
        }
    );
    // No kept row: nothing to decode, every page phase 1 kept skipped.
    let c = payload_rows(&[], Some(&base), 300, &columns, policy);
    assert_eq!(c.rows, PayloadRows::Exact(vec![]));
    assert_eq!(
        c.skipped.pages,
        2 * 4,
        "pages 0..37, 37..74, 74..111 and 111..148 of each column"
    );
}

#[test]
fn an_unindexed_column_counts_as_one_page() {
    let (_, meta) = write(&batch(false));
    let kept = vec![1..2, 5..6, 9..10, 20..21, 30..31];
    let c = payload_rows(&kept, None, 300, &[None], PayloadPolicy::default());
    assert_eq!((c.windows, c.pages), (5, 1));
    assert_eq!(
        c.rows,
        PayloadRows::Pages {
            ranges: vec![0..300]
        }
    );
    assert_eq!(c.skipped, Skipped::default(), "nothing known to skip");
    let few = payload_rows(&kept[..4], None, 300, &[None], PayloadPolicy::default());
    assert_eq!(few.rows, PayloadRows::Exact(kept[..4].to_vec()));
    let _ = meta;
}

/// Property: the skipped pages and bytes are, column by column, those the
/// offset index places over phase 1's rows and not over the chosen ones;
/// whole pages hold every kept row and only phase 1's rows.
#[test]
fn skipped_pages_and_bytes_match_the_offset_index() {
    let (_, meta) = write(&batch(false));
    let mut rng = Rng::new(11);
    for case in 0..200 {
        let rg = rng.below(3) as usize;
        let columns = indexes(&meta, rg, &[0, 1, 2]);
        let base = (rng.below(2) == 0).then(|| rng.ranges(300, 70, 60));
        let rows: Vec<i64> = match &base {
            Some(b) => b.iter().flat_map(|r| r.clone()).collect(),
            None => (0..300).collect(),
        };
        let density = rng.below(30);
        let mask: Vec<u8> = rows
            .iter()
            .map(|_| u8::from(rng.below(100) < density))
            .collect();
        let kept = kept_ranges(&mask, base.as_deref(), 300);
        let c = payload_rows(
            &kept,
            base.as_deref(),
            300,
            &columns,
            PayloadPolicy::default(),
        );
        let chosen: BTreeSet<i64> = c.rows.ranges().iter().flat_map(|r| r.clone()).collect();
        let phase1: BTreeSet<i64> = rows.iter().copied().collect();
        let kept_rows: BTreeSet<i64> = kept.iter().flat_map(|r| r.clone()).collect();
        assert!(kept_rows.is_subset(&chosen), "case {case}");
        assert!(chosen.is_subset(&phase1), "case {case}");
        let (mut pages, mut bytes) = (0, 0u64);
        for index in columns.iter().flatten() {
            for (page, loc) in page_rows(index, 300).iter().zip(index.page_locations()) {
                let in_phase1 = page.clone().any(|r| phase1.contains(&r));
                let in_chosen = page.clone().any(|r| chosen.contains(&r));
                if in_phase1 && !in_chosen {
                    pages += 1;
                    bytes += loc.compressed_page_size as u64;
                }
            }
        }
        assert_eq!(
            c.skipped,
            Skipped { pages, bytes },
            "case {case}: {:?}",
            c.rows
        );
    }
}

/// The masks a "GPU" predicate `keep` on `id` gives over phase 1's rows
/// (arrow-rs decodes the ids from only phase 1's bytes).
fn masks(
    file: &bytes::Bytes,
    meta: &::parquet::file::metadata::ParquetMetaData,
    phase1: &ScanPlan,
    keep: fn(i64) -> bool,
) -> Vec<(usize, Vec<u8>)> {
    let ids = decode(planned_bytes(file, meta, phase1), phase1);
    let ids = ids
        .column(0)
        .as_any()
        .downcast_ref::<Int64Array>()
        .unwrap()
        .clone();
    let mut out = Vec::new();
    let mut at = 0;
    for rg in &phase1.row_groups {
        let whole = [0..rg.num_rows];
        let n: i64 = rg
            .rows
            .as_deref()
            .unwrap_or(&whole)
            .iter()
            .map(|r| r.end - r.start)
            .sum();
        let mask = (at..at + n as usize)
            .map(|i| u8::from(keep(ids.value(i))))
            .collect();
        at += n as usize;
        out.push((rg.index, mask));
    }
    assert_eq!(at, ids.len());
    out
}

/// Phase 2's decode, compacted row group by row group by [`compaction`]'s
/// masks.
fn compacted(decoded: &RecordBatch, phase2: &ScanPlan, late: &LateRows) -> RecordBatch {
    let mut parts = Vec::new();
    let mut at = 0;
    for rg in &phase2.row_groups {
        let n = rg
            .rows
            .as_deref()
            .map_or(rg.num_rows, |r| r.iter().map(|r| r.end - r.start).sum());
        let part = decoded.slice(at, n as usize);
        at += n as usize;
        let kept = &late
            .row_groups
            .iter()
            .find(|l| l.row_group == rg.index)
            .unwrap()
            .kept;
        parts.push(match compaction(phase2, rg.index, kept) {
            None => part,
            Some(mask) => {
                let keep = BooleanArray::from_iter(mask.iter().map(|&m| Some(m != 0)));
                filter_record_batch(&part, &keep).unwrap()
            }
        });
    }
    assert_eq!(at, decoded.num_rows());
    ::arrow::compute::concat_batches(&decoded.schema(), &parts).unwrap()
}

/// A phase-1 filter and the mask's predicate on `id`.
type Case = (&'static str, fn(i64) -> bool);

/// Both phases end to end: phase 1 reads `id` under a predicate, a mask
/// keeps some of its rows, phase 2 plans the payload columns for them and,
/// read by arrow-rs from only its bytes and compacted by [`compaction`]'s
/// mask, gives exactly the kept rows.
#[test]
fn both_phases_give_exactly_the_kept_rows() {
    let batch = batch(false);
    let (file, meta) = write(&batch);
    let cases: [Case; 5] = [
        ("id >= 130", |id| id % 7 == 0),
        ("id < 10000", |id| id % 7 < 2),
        ("id >= 0", |id| id % 61 == 0),
        ("id >= 260", |id| !(280..=900).contains(&id)),
        ("id < 650", |id| id % 3 != 0 && id < 40),
    ];
    let (mut exact, mut pages) = (0, 0);
    for (case, (filter, keep)) in cases.into_iter().enumerate() {
        let phase1 = plan(
            &meta,
            &ScanRequest {
                projection: Projection::Columns(vec!["id".into()]),
                predicate: Some(filter.parse().unwrap()),
                ..Default::default()
            },
        )
        .unwrap();
        let masks = masks(&file, &meta, &phase1, keep);
        let payload = Projection::Columns(vec!["val".into(), "s".into()]);
        let late = late_rows(
            &meta,
            &phase1,
            &payload,
            masks.iter().map(|(i, m)| (*i, m.as_slice())),
            PayloadPolicy::default(),
        )
        .unwrap();
        for l in &late.row_groups {
            match l.choice.rows {
                PayloadRows::Exact(_) => exact += 1,
                PayloadRows::Pages { .. } => pages += 1,
            }
        }
        let phase2 = plan(
            &meta,
            &ScanRequest {
                projection: payload.clone(),
                rows: Some(late.rows.clone()),
                ..Default::default()
            },
        )
        .unwrap();
        let got = compacted(
            &decode(planned_bytes(&file, &meta, &phase2), &phase2),
            &phase2,
            &late,
        );
        let want: Vec<(usize, Vec<Range<i64>>)> = late
            .row_groups
            .iter()
            .map(|l| (l.row_group, l.kept.clone()))
            .collect();
        assert_eq!(
            got,
            expected(&batch, &meta, &want, &["val", "s"]),
            "case {case}"
        );
        assert!(got.num_rows() > 0, "case {case}");
        // The skipped pages: the payload pages over phase 1's rows that
        // phase 2 does not keep.
        let phase1_rows: RowSelections = phase1
            .row_groups
            .iter()
            .map(|rg| (rg.index, rg.rows.clone().unwrap_or(vec![0..rg.num_rows])))
            .collect();
        let over_phase1 = plan(
            &meta,
            &ScanRequest {
                projection: payload.clone(),
                rows: Some(phase1_rows),
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(
            late.skipped.pages,
            over_phase1.totals.pages_kept - phase2.totals.pages_kept,
            "case {case}"
        );
        assert!(late.skipped.bytes <= over_phase1.totals.bytes_needed - phase2.totals.bytes_needed);
    }
    assert!(
        exact > 0 && pages > 0,
        "both choices made: {exact} exact, {pages} pages"
    );
}

#[test]
fn a_mask_for_a_row_group_outside_the_plan_is_an_error() {
    let (_, meta) = write(&batch(false));
    let phase1 = plan(
        &meta,
        &ScanRequest {
            row_groups: Some(vec![0]),
            ..Default::default()
        },
    )
    .unwrap();
    let e = late_rows(
        &meta,
        &phase1,
        &Projection::All,
        [(2, &[1u8][..])],
        PayloadPolicy::default(),
    );
    assert_eq!(e.unwrap_err(), PlanError::NotInPlan { row_group: 2 });
    let e = late_rows(
        &meta,
        &phase1,
        &Projection::Columns(vec!["nope".into()]),
        [(0, &[1u8][..])],
        PayloadPolicy::default(),
    );
    assert_eq!(e.unwrap_err(), PlanError::UnknownColumn("nope".into()));
}
