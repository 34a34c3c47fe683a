//! Row selections: rows of a row group as sorted, disjoint ranges of row
//! numbers within it, and the host steps between the two phases of a late
//! materialized scan (a phase-1 row mask to the rows that survived, and
//! back to a mask over the rows a phase-2 decode produced).
//!
//! Pure: no I/O, no GPU.

use std::collections::BTreeMap;
use std::ops::Range;

use ::parquet::file::page_index::offset_index::OffsetIndexMetaData;

/// Explicit rows to scan, per row group index (in the file): each entry is
/// sorted, disjoint, non-empty ranges of row numbers within its row group.
///
/// In a [`ScanRequest`](super::plan::ScanRequest) a row group without an
/// entry (or with an empty one) has no selected row, so it is not planned.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowSelections {
    by_row_group: BTreeMap<usize, Vec<Range<i64>>>,
}

impl RowSelections {
    /// No row of any row group.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the rows of `row_group` (replacing earlier ones): `ranges` in
    /// any order, overlapping or empty ones allowed; they are stored
    /// normalized ([`normalize`]).
    pub fn insert(
        &mut self,
        row_group: usize,
        ranges: impl IntoIterator<Item = Range<i64>>,
    ) -> &mut Self {
        self.by_row_group.insert(row_group, normalize(ranges));
        self
    }

    /// The rows of `row_group`, or None when it has no entry.
    pub fn get(&self, row_group: usize) -> Option<&[Range<i64>]> {
        self.by_row_group.get(&row_group).map(Vec::as_slice)
    }

    /// Every entry, by row group index.
    pub fn iter(&self) -> impl Iterator<Item = (usize, &[Range<i64>])> {
        self.by_row_group.iter().map(|(&i, r)| (i, r.as_slice()))
    }

    /// Row groups with an entry.
    pub fn len(&self) -> usize {
        self.by_row_group.len()
    }

    /// Whether no row group has an entry.
    pub fn is_empty(&self) -> bool {
        self.by_row_group.is_empty()
    }
}

impl<R: IntoIterator<Item = Range<i64>>> FromIterator<(usize, R)> for RowSelections {
    fn from_iter<I: IntoIterator<Item = (usize, R)>>(iter: I) -> Self {
        let mut out = Self::new();
        for (row_group, ranges) in iter {
            out.insert(row_group, ranges);
        }
        out
    }
}

/// `ranges` sorted, with empty ones dropped and overlapping or adjacent ones
/// merged.
pub fn normalize(ranges: impl IntoIterator<Item = Range<i64>>) -> Vec<Range<i64>> {
    let mut all: Vec<Range<i64>> = ranges.into_iter().filter(|r| r.start < r.end).collect();
    all.sort_by_key(|r| r.start);
    let mut out: Vec<Range<i64>> = Vec::with_capacity(all.len());
    for r in all {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

/// Row ranges `[first_row, end)` of each page of one chunk of a row group
/// of `num_rows` rows, from its offset index.
pub fn page_rows(index: &OffsetIndexMetaData, num_rows: i64) -> Vec<Range<i64>> {
    let locs = index.page_locations();
    (0..locs.len())
        .map(|i| {
            let start = locs[i].first_row_index;
            let end = locs
                .get(i + 1)
                .map(|n| n.first_row_index)
                .unwrap_or(num_rows);
            start..end
        })
        .collect()
}

/// Rows in sorted, disjoint `ranges`.
pub fn row_count(ranges: &[Range<i64>]) -> i64 {
    ranges.iter().map(|r| (r.end - r.start).max(0)).sum()
}

/// Whether `rows` overlaps any of the sorted, disjoint `selection`.
pub fn overlaps(rows: &Range<i64>, selection: &[Range<i64>]) -> bool {
    // The first range ending after `rows.start` is the only candidate.
    let i = selection.partition_point(|s| s.end <= rows.start);
    selection
        .get(i)
        .is_some_and(|s| s.start < rows.end && rows.start < s.end)
}

/// The rows in both sorted, disjoint lists (sorted, disjoint), in one pass.
pub fn intersect(a: &[Range<i64>], b: &[Range<i64>]) -> Vec<Range<i64>> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while let (Some(x), Some(y)) = (a.get(i), b.get(j)) {
        let (start, end) = (x.start.max(y.start), x.end.min(y.end));
        if start < end {
            out.push(start..end);
        }
        if x.end <= y.end {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// The rows a phase-1 mask kept, as ranges of row numbers in the row group.
///
/// `mask` has one byte per row of the phase-1 batch (non-zero: kept), whose
/// rows are the row group's `base` selection (None: every row of the
/// `num_rows`) in order. Mask bytes past the selection's rows are ignored and
/// missing ones count as dropped, so a short or long mask never reads out of
/// bounds. The result is sorted and disjoint, adjacent runs merged.
pub fn kept_ranges(mask: &[u8], base: Option<&[Range<i64>]>, num_rows: i64) -> Vec<Range<i64>> {
    let whole = 0..num_rows.max(0);
    let base = base.unwrap_or(std::slice::from_ref(&whole));
    let mut out: Vec<Range<i64>> = Vec::new();
    let mut at = 0usize; // next mask byte
    for range in base {
        let len = usize::try_from((range.end - range.start).max(0)).unwrap_or(0);
        let bytes = mask.get(at..).unwrap_or(&[]);
        let bytes = &bytes[..len.min(bytes.len())];
        push_runs(bytes, range.start, &mut out);
        at = at.saturating_add(len);
    }
    out
}

/// Appends the runs of non-zero `bytes` as rows from `first` on, merging a
/// run adjacent to the last range of `out`.
fn push_runs(bytes: &[u8], first: i64, out: &mut Vec<Range<i64>>) {
    let mut i = 0;
    while i < bytes.len() {
        let Some(start) = bytes[i..].iter().position(|&b| b != 0).map(|p| i + p) else {
            return;
        };
        let end = bytes[start..]
            .iter()
            .position(|&b| b == 0)
            .map_or(bytes.len(), |p| start + p);
        let rows = first + start as i64..first + end as i64;
        match out.last_mut() {
            Some(last) if last.end == rows.start => last.end = rows.end,
            _ => out.push(rows),
        }
        i = end;
    }
}

/// The mask that compacts a decode of `decoded` rows to the `kept` ones: one
/// byte per decoded row, in order (1: the row is in `kept`). Both lists are
/// sorted and disjoint; kept rows outside `decoded` have no byte.
pub fn compaction_mask(kept: &[Range<i64>], decoded: &[Range<i64>]) -> Vec<u8> {
    let len = usize::try_from(row_count(decoded)).unwrap_or(0);
    let mut mask = vec![0u8; len];
    // Offset of each decoded range's first row in the decoded batch.
    let mut offset = 0i64;
    let mut j = 0;
    for d in decoded {
        while let Some(k) = kept.get(j) {
            if k.end <= d.start {
                j += 1;
                continue;
            }
            if k.start >= d.end {
                break;
            }
            let (start, end) = (k.start.max(d.start), k.end.min(d.end));
            let from = (offset + start - d.start) as usize;
            let to = (offset + end - d.start) as usize;
            if let Some(bytes) = mask.get_mut(from..to) {
                bytes.fill(1);
            }
            if k.end > d.end {
                break;
            }
            j += 1;
        }
        offset += (d.end - d.start).max(0);
    }
    mask
}
