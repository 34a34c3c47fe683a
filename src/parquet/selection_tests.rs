//! Tests of the row-range helpers against row-by-row references.

// Whole row groups and single selections are one-range lists here.
#![allow(clippy::single_range_in_vec_init)]

use std::collections::BTreeSet;
use std::ops::Range;

use super::selection::*;

/// A small deterministic generator (xorshift), so the tests need no crate.
pub(super) struct Rng(u64);

impl Rng {
    pub(super) fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1)
    }

    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number in `0..n` (`n > 0`).
    pub(super) fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    /// Random sorted, disjoint ranges within `0..n`, about `density` of
    /// the rows in runs of up to `run` rows.
    pub(super) fn ranges(&mut self, n: i64, density: u64, run: u64) -> Vec<Range<i64>> {
        let mut out = Vec::new();
        let mut at = 0;
        while at < n {
            let len = 1 + self.below(run) as i64;
            if self.below(100) < density {
                out.push(at..(at + len).min(n));
            }
            at += len + self.below(run) as i64;
        }
        normalize(out)
    }
}

fn rows_of(ranges: &[Range<i64>]) -> BTreeSet<i64> {
    ranges.iter().flat_map(|r| r.clone()).collect()
}

fn sorted_disjoint_merged(ranges: &[Range<i64>]) -> bool {
    ranges.iter().all(|r| r.start < r.end) && ranges.windows(2).all(|w| w[0].end < w[1].start)
}

#[test]
fn normalize_sorts_merges_and_drops_empty_ranges() {
    assert_eq!(
        normalize([5..7, 0..2, 2..3, 6..9, 4..4, 10..11, 8..8]),
        vec![0..3, 5..9, 10..11]
    );
    assert_eq!(normalize([Range { start: 3, end: 1 }]), vec![]);
    let mut rng = Rng::new(1);
    for _ in 0..200 {
        let raw: Vec<Range<i64>> = (0..rng.below(12))
            .map(|_| {
                let a = rng.below(50) as i64;
                a..a + rng.below(8) as i64
            })
            .collect();
        let got = normalize(raw.clone());
        assert!(sorted_disjoint_merged(&got), "{raw:?} -> {got:?}");
        assert_eq!(rows_of(&got), rows_of(&raw), "{raw:?}");
    }
}

#[test]
fn intersect_and_overlaps_match_row_sets() {
    let mut rng = Rng::new(2);
    for _ in 0..300 {
        let a = rng.ranges(200, 50, 15);
        let b = rng.ranges(200, 50, 15);
        let got = intersect(&a, &b);
        let want: BTreeSet<i64> = rows_of(&a).intersection(&rows_of(&b)).copied().collect();
        assert_eq!(rows_of(&got), want, "{a:?} ∩ {b:?}");
        assert!(got.windows(2).all(|w| w[0].end <= w[1].start));
        let page = {
            let s = rng.below(200) as i64;
            s..s + 1 + rng.below(30) as i64
        };
        assert_eq!(
            overlaps(&page, &a),
            page.clone().any(|r| rows_of(&a).contains(&r)),
            "{page:?} {a:?}"
        );
    }
}

#[test]
fn row_selections_normalize_and_look_up_by_row_group() {
    let s: RowSelections = [(3, vec![4..6, 0..2, 5..9]), (1, vec![])]
        .into_iter()
        .collect();
    assert_eq!(s.get(3), Some(&[0..2, 4..9][..]));
    assert_eq!(s.get(1), Some(&[][..]));
    assert_eq!(s.get(0), None);
    assert_eq!(s.len(), 2);
    let order: Vec<usize> = s.iter().map(|(i, _)| i).collect();
    assert_eq!(order, vec![1, 3]);
    assert!(RowSelections::new().is_empty());
}

#[test]
fn kept_ranges_examples() {
    // All rows of a 6-row group.
    assert_eq!(kept_ranges(&[1, 1, 0, 0, 1, 1], None, 6), vec![0..2, 4..6]);
    // The mask's rows are the base selection's, in order: runs meeting at a
    // gap of the base stay apart, runs adjacent in row numbers merge.
    let base = [10..13, 13..15, 20..22];
    assert_eq!(
        kept_ranges(&[0, 1, 1, 1, 0, 1, 1], Some(&base), 30),
        vec![11..14, 20..22]
    );
    // A short mask drops the rest; a long one is read up to the base's rows.
    assert_eq!(kept_ranges(&[1], Some(&base), 30), vec![10..11]);
    assert_eq!(kept_ranges(&[1; 20], Some(&base), 30), vec![10..15, 20..22]);
    assert_eq!(kept_ranges(&[], None, 4), vec![]);
    // Any non-zero byte keeps.
    assert_eq!(kept_ranges(&[0, 7, 255], None, 3), vec![1..3]);
}

/// Property: for random bases and masks, the kept ranges hold exactly the
/// base rows whose mask byte is set, sorted, disjoint and merged.
#[test]
fn kept_ranges_are_the_masks_set_rows() {
    let mut rng = Rng::new(3);
    for case in 0..500 {
        let num_rows = 1 + rng.below(400) as i64;
        let base = match rng.below(3) {
            0 => None,
            _ => Some(rng.ranges(num_rows, 60, 40)),
        };
        let rows: Vec<i64> = match &base {
            None => (0..num_rows).collect(),
            Some(b) => b.iter().flat_map(|r| r.clone()).collect(),
        };
        let density = rng.below(101);
        let mask: Vec<u8> = rows
            .iter()
            .map(|_| u8::from(rng.below(100) < density))
            .collect();
        let got = kept_ranges(&mask, base.as_deref(), num_rows);
        let want: BTreeSet<i64> = rows
            .iter()
            .zip(&mask)
            .filter(|(_, &m)| m != 0)
            .map(|(&r, _)| r)
            .collect();
        assert_eq!(rows_of(&got), want, "case {case}: {base:?} {mask:?}");
        assert!(sorted_disjoint_merged(&got), "case {case}: {got:?}");
    }
}

/// Property: the compaction mask has one byte per decoded row, set exactly
/// where the row is kept.
#[test]
fn compaction_mask_marks_the_kept_decoded_rows() {
    let mut rng = Rng::new(4);
    for case in 0..500 {
        let n = 1 + rng.below(300) as i64;
        let decoded = rng.ranges(n, 70, 50);
        let kept = rng.ranges(n, 40, 10);
        let mask = compaction_mask(&kept, &decoded);
        let kept_rows = rows_of(&kept);
        let want: Vec<u8> = decoded
            .iter()
            .flat_map(|r| r.clone())
            .map(|r| u8::from(kept_rows.contains(&r)))
            .collect();
        assert_eq!(mask, want, "case {case}: {kept:?} in {decoded:?}");
    }
    assert_eq!(
        compaction_mask(&[2..5], &[0..3, 4..8]),
        vec![0, 0, 1, 1, 0, 0, 0]
    );
}
