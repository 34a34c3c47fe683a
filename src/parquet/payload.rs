//! Which rows the payload columns of a late materialized scan decode (its
//! phase 2), once phase 1 has kept some rows of a row group: exactly the
//! kept ones, or the kept ones' whole pages, compacted by mask afterwards.
//!
//! The cost behind the choice: the decoder cuts every page to the selected
//! rows with one kernel task per (page, selected range) pair, and a task
//! that writes rows `[skip, skip + take)` of a page still walks its levels
//! and values from the page's start to `skip + take` (RLE runs, dictionary
//! indices and variable-width values cannot be skipped without reading
//! them). `k` ranges spread over a page thus walk about `k / 2` pages' worth
//! of values, while decoding the page once and compacting the output walks
//! it about twice (one decode, one compaction pass over values already in
//! GPU memory). Hence the rule ([`PayloadPolicy`]): exact ranges while they
//! average at most [`PayloadPolicy::max_windows_per_page`] (4: `k / 2 ≤ 2`)
//! ranges per payload page that holds a kept row, whole pages beyond.
//!
//! Pure: offset indexes and ranges in, ranges out.

use std::ops::Range;

use ::parquet::file::page_index::offset_index::OffsetIndexMetaData;

use super::selection::{intersect, normalize, overlaps, page_rows};

/// The rule choosing between [`PayloadRows::Exact`] and
/// [`PayloadRows::Pages`] (see the [module](self) for the cost behind it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayloadPolicy {
    /// Exact ranges while the decode tasks they make (one per page and
    /// range meeting it) are at most this many times the payload pages
    /// holding a kept row.
    pub max_windows_per_page: usize,
}

impl Default for PayloadPolicy {
    fn default() -> Self {
        Self {
            max_windows_per_page: 4,
        }
    }
}

/// The rows a row group's payload columns decode in phase 2 (sorted,
/// disjoint ranges of row numbers within the row group).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PayloadRows {
    /// Exactly the kept rows: the decoder outputs them, nothing to compact.
    Exact(Vec<Range<i64>>),
    /// The phase-1 rows in the payload pages (of any payload column) that
    /// hold a kept row: decoded page by page, then compacted by a mask
    /// ([`super::selection::compaction_mask`]).
    Pages {
        /// The rows decoded.
        ranges: Vec<Range<i64>>,
    },
}

impl PayloadRows {
    /// The rows to select in phase 2.
    pub fn ranges(&self) -> &[Range<i64>] {
        match self {
            PayloadRows::Exact(r) | PayloadRows::Pages { ranges: r } => r,
        }
    }

    /// Whether the decoded rows must be compacted to the kept ones.
    pub fn needs_compaction(&self) -> bool {
        matches!(self, PayloadRows::Pages { .. })
    }
}

/// Data pages (and their compressed bytes) a selection does not fetch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Skipped {
    /// Data pages.
    pub pages: usize,
    /// Their bytes (page headers included).
    pub bytes: u64,
}

impl std::ops::AddAssign for Skipped {
    fn add_assign(&mut self, other: Self) {
        self.pages += other.pages;
        self.bytes += other.bytes;
    }
}

/// The choice for one row group, with the counts behind it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PayloadChoice {
    /// The rows phase 2 selects.
    pub rows: PayloadRows,
    /// Decode tasks exact ranges make: per payload column, one per page and
    /// kept range meeting it (a column without offset index counts as one
    /// page).
    pub windows: usize,
    /// Payload pages holding a kept row, over the payload columns (a column
    /// without offset index counts as one page).
    pub pages: usize,
    /// Payload data pages the phase-1 selection keeps and [`Self::rows`]
    /// does not (columns with an offset index only).
    pub skipped: Skipped,
}

/// Decides how phase 2 decodes a row group's payload columns.
///
/// `kept`: the rows phase 1 kept (sorted, disjoint; see
/// [`super::selection::kept_ranges`]); `base`: phase 1's selection of the
/// row group (None: all `num_rows`); `columns`: each payload column's offset
/// index (None where the file has none: its chunk is read whole and
/// counts as one page). No kept row gives `Exact` of nothing: the row group
/// is not planned at all.
pub fn payload_rows(
    kept: &[Range<i64>],
    base: Option<&[Range<i64>]>,
    num_rows: i64,
    columns: &[Option<&OffsetIndexMetaData>],
    policy: PayloadPolicy,
) -> PayloadChoice {
    let (mut windows, mut pages) = (0usize, 0usize);
    let mut holding: Vec<Range<i64>> = Vec::new();
    for column in columns {
        let rows = match column {
            Some(index) => page_rows(index, num_rows),
            None => std::iter::once(0..num_rows).collect(),
        };
        for page in rows.iter().filter(|p| overlaps(p, kept)) {
            windows += meeting(page, kept);
            pages += 1;
            holding.push(page.clone());
        }
    }
    let rows = if windows <= policy.max_windows_per_page.saturating_mul(pages) {
        PayloadRows::Exact(kept.to_vec())
    } else {
        let holding = normalize(holding);
        PayloadRows::Pages {
            ranges: match base {
                Some(base) => intersect(&holding, base),
                None => holding,
            },
        }
    };
    let skipped = skipped(base, rows.ranges(), num_rows, columns);
    PayloadChoice {
        rows,
        windows,
        pages,
        skipped,
    }
}

/// How many of the sorted, disjoint `ranges` meet `page`.
fn meeting(page: &Range<i64>, ranges: &[Range<i64>]) -> usize {
    let first = ranges.partition_point(|r| r.end <= page.start);
    ranges[first..]
        .iter()
        .take_while(|r| r.start < page.end)
        .count()
}

/// The data pages of `columns` (offset indexes of one row group's chunks;
/// None: unknown, nothing counted) that overlap `baseline` (None: every
/// page) and not `selection`: the pages and bytes a scan of `selection`
/// does not fetch that one of `baseline` would.
pub fn skipped(
    baseline: Option<&[Range<i64>]>,
    selection: &[Range<i64>],
    num_rows: i64,
    columns: &[Option<&OffsetIndexMetaData>],
) -> Skipped {
    let mut out = Skipped::default();
    for index in columns.iter().flatten() {
        let rows = page_rows(index, num_rows);
        for (page, loc) in rows.iter().zip(index.page_locations()) {
            let wanted = baseline.is_none_or(|b| overlaps(page, b));
            if wanted && !overlaps(page, selection) {
                out.pages += 1;
                out.bytes += u64::try_from(loc.compressed_page_size).unwrap_or(0);
            }
        }
    }
    out
}
