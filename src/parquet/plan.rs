//! The scan plan: which bytes a scan needs, computed from metadata alone.
//!
//! Like arrow-rs's push decoder, planning does no I/O: it takes the
//! metadata and a request (projection, row groups, predicate) and returns
//! the column-chunk byte ranges, pruned by statistics and the page index,
//! and the coalesced I/O requests that cover them. Fetching is a separate
//! step ([`super::fetch`](mod@super::fetch)).

use std::collections::BTreeSet;
use std::ops::Range;

use ::parquet::basic::{Compression, Encoding, Type as PhysicalType};
use ::parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData, RowGroupMetaData};
use ::parquet::file::page_index::offset_index::OffsetIndexMetaData;
use ::parquet::schema::types::{ColumnDescPtr, SchemaDescriptor};
use serde::Serialize;

use super::coalesce::{coalesce, CoalesceOptions};
pub use super::plan_error::PlanError;
use super::predicate::Predicate;
use super::selection::{intersect, normalize, overlaps, page_rows, RowSelections};

/// Which columns a scan reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Projection {
    /// Every column.
    #[default]
    All,
    /// Top-level column names (all their leaves) or dotted leaf paths.
    Columns(Vec<String>),
}

/// What to scan.
#[derive(Debug, Clone, Default)]
pub struct ScanRequest {
    /// Columns.
    pub projection: Projection,
    /// Row groups to consider (None: all).
    pub row_groups: Option<Vec<usize>>,
    /// Filter used for pruning (the plan never drops a row that may match).
    pub predicate: Option<Predicate>,
    /// How byte ranges are merged into requests.
    pub coalesce: CoalesceOptions,
    /// Explicit rows (None: all): a row group without rows here is not
    /// planned; the others keep the rows both this and the predicate's page
    /// pruning select, and each column the pages overlapping them (with an
    /// offset index; else whole chunks, cut to the rows by the decoder).
    /// Where [`ScanPlan::whole_row_groups`], kept row groups are read and
    /// decoded whole. A row group or range outside the file is an error.
    pub rows: Option<RowSelections>,
}

/// One data page kept by the plan (from the offset index).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PageRange {
    /// The page's bytes in the file (header included).
    pub range: Range<u64>,
    /// First row of the page within its row group.
    pub first_row: i64,
}

/// One column chunk the scan needs, with the parquet crate's typed
/// description of it (what a decoder dispatches on); the JSON form (see
/// `gdscan plan --json`) writes the types as their names.
#[derive(Debug, Clone, PartialEq)]
pub struct ChunkPlan {
    /// Row group index.
    pub row_group: usize,
    /// Leaf column index in the schema.
    pub leaf: usize,
    /// Dotted column path.
    pub column: String,
    /// The column: path, physical and logical type, maximum definition and
    /// repetition levels.
    pub descriptor: ColumnDescPtr,
    /// Physical type.
    pub physical_type: PhysicalType,
    /// Compression codec.
    pub codec: Compression,
    /// Encodings used in the chunk.
    pub encodings: Vec<Encoding>,
    /// Values in the chunk (nulls included).
    pub num_values: i64,
    /// Whether the chunk starts with a dictionary page.
    pub has_dictionary_page: bool,
    /// The whole chunk's bytes in the file.
    pub range: Range<u64>,
    /// The byte ranges this scan needs: the whole chunk, or the dictionary
    /// page plus the data pages kept by page pruning.
    pub ranges: Vec<Range<u64>>,
    /// The kept data pages, when the offset index is known (a GPU decoder
    /// dispatches per page).
    pub pages: Option<Vec<PageRange>>,
}

impl ChunkPlan {
    /// Bytes this chunk needs.
    pub fn needed(&self) -> u64 {
        self.ranges.iter().map(|r| r.end - r.start).sum()
    }
}

/// One coalesced read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IoRequest {
    /// Row group it belongs to (requests never span row groups, so each row
    /// group lands in its own allocation).
    pub row_group: usize,
    /// The bytes read from the file.
    pub range: Range<u64>,
}

impl IoRequest {
    /// Bytes read.
    pub fn len(&self) -> u64 {
        self.range.end - self.range.start
    }

    /// Whether the request reads nothing (never, in a plan).
    pub fn is_empty(&self) -> bool {
        self.range.is_empty()
    }
}

/// One kept row group.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RowGroupPlan {
    /// Row group index in the file.
    pub index: usize,
    /// Rows in the row group.
    pub num_rows: i64,
    /// Indices into [`ScanPlan::chunks`].
    pub chunks: Vec<usize>,
    /// Indices into [`ScanPlan::requests`].
    pub requests: Vec<usize>,
    /// Bytes its requests read.
    pub bytes: u64,
    /// The rows page pruning kept (sorted, disjoint ranges within the row
    /// group); None when every row may match.
    pub rows: Option<Vec<Range<i64>>>,
}

/// Totals of a plan.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PlanTotals {
    /// Bytes the scan needs (sum of chunk ranges).
    pub bytes_needed: u64,
    /// Bytes the requests read (needed plus bridged gaps).
    pub bytes_read: u64,
    /// Coalesced requests.
    pub requests: usize,
    /// Column chunks.
    pub chunks: usize,
    /// Row groups in the file (or asked for).
    pub row_groups_considered: usize,
    /// Row groups kept.
    pub row_groups_kept: usize,
    /// Row groups pruned by column-chunk statistics.
    pub row_groups_pruned_by_statistics: usize,
    /// Row groups pruned because no page of theirs can match.
    pub row_groups_pruned_by_page_index: usize,
    /// Data pages of the projected chunks, where the offset index is known.
    pub pages_total: usize,
    /// Data pages kept.
    pub pages_kept: usize,
    /// Row groups dropped because [`ScanRequest::rows`] selects none of
    /// their rows (that the predicate's pruning kept).
    pub row_groups_pruned_by_rows: usize,
    /// Data pages of the projected chunks that the predicate's pruning
    /// alone keeps and [`ScanRequest::rows`] drops (their row group's pages
    /// too, where it drops the row group).
    pub pages_skipped_by_rows: usize,
    /// Bytes [`ScanRequest::rows`] saves: needed without it, minus needed
    /// with it (before coalescing).
    pub bytes_skipped_by_rows: u64,
}

/// The plan.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScanPlan {
    /// The projected leaf columns (schema indices), in schema order.
    pub leaves: Vec<usize>,
    /// Every chunk, row group by row group.
    pub chunks: Vec<ChunkPlan>,
    /// Kept row groups in file order.
    pub row_groups: Vec<RowGroupPlan>,
    /// Coalesced requests, row group by row group, in file order.
    pub requests: Vec<IoRequest>,
    /// Totals.
    pub totals: PlanTotals,
}

impl ScanPlan {
    /// Every byte range the scan needs, chunk by chunk (not coalesced).
    pub fn needed_ranges(&self) -> Vec<Range<u64>> {
        self.chunks
            .iter()
            .flat_map(|c| c.ranges.iter().cloned())
            .collect()
    }

    /// Whether the plan keeps or drops whole row groups only: a repeated
    /// (nested) leaf is projected, so no row group is cut to rows
    /// ([`RowGroupPlan::rows`] is always None) and a caller that wants some
    /// rows of a kept row group only must compact the decoded ones by mask
    /// (see [`super::selection::compaction_mask`]).
    pub fn whole_row_groups(&self) -> bool {
        self.chunks.iter().any(|c| c.descriptor.max_rep_level() > 0)
    }
}

/// Resolves a projection to leaf indices (schema order).
pub(crate) fn resolve_projection(
    schema: &SchemaDescriptor,
    projection: &Projection,
) -> Result<Vec<usize>, PlanError> {
    match projection {
        Projection::All => Ok((0..schema.num_columns()).collect()),
        Projection::Columns(names) => {
            let mut leaves = BTreeSet::new();
            for name in names {
                let mut found = false;
                for (i, col) in schema.columns().iter().enumerate() {
                    let path = col.path().string();
                    let top = col.path().parts().first().map(String::as_str);
                    if path == *name || top == Some(name.as_str()) {
                        leaves.insert(i);
                        found = true;
                    }
                }
                if !found {
                    return Err(PlanError::UnknownColumn(name.clone()));
                }
            }
            Ok(leaves.into_iter().collect())
        }
    }
}

/// Rows of `rg` that may match, from the page index, or None when unknown.
fn selected_rows(
    metadata: &ParquetMetaData,
    rg_index: usize,
    rg: &RowGroupMetaData,
    predicate: &Predicate,
) -> Option<Vec<Range<i64>>> {
    let column_index = metadata.column_index()?.get(rg_index)?;
    let offset_index = metadata.offset_index()?.get(rg_index)?;
    let mut selection: Option<Vec<Range<i64>>> = None;
    for leaf in 0..rg.num_columns() {
        let (Some(ci), Some(oi)) = (column_index.get(leaf), offset_index.get(leaf)) else {
            continue;
        };
        let Some(matches) = predicate.pages_may_match(rg, leaf, ci) else {
            continue;
        };
        let rows = page_rows(oi, rg.num_rows());
        if rows.len() != matches.len() {
            continue;
        }
        let kept = normalize(
            rows.into_iter()
                .zip(matches)
                .filter(|(_, m)| *m)
                .map(|(r, _)| r),
        );
        selection = Some(match selection {
            None => kept,
            Some(prev) => intersect(&prev, &kept),
        });
    }
    selection
}

/// A column chunk's offset and length as the footer states them, or None
/// when either is negative. (The parquet crate's `byte_range` asserts
/// instead: a corrupt footer made the plan panic, found by fuzzing.)
pub(crate) fn chunk_byte_range(col: &ColumnChunkMetaData) -> Option<(u64, u64)> {
    let start = col
        .dictionary_page_offset()
        .unwrap_or_else(|| col.data_page_offset());
    let len = col.compressed_size();
    Some((u64::try_from(start).ok()?, u64::try_from(len).ok()?))
}

fn chunk_range(row_group: usize, col: &ColumnChunkMetaData) -> Result<Range<u64>, PlanError> {
    match chunk_byte_range(col).and_then(|(start, len)| Some(start..start.checked_add(len)?)) {
        Some(range) => Ok(range),
        None => Err(PlanError::BadRange {
            row_group,
            column: col.column_path().string(),
        }),
    }
}

/// The row groups a request considers: those asked for (checked, sorted,
/// without repeats), or all.
fn considered_row_groups(
    metadata: &ParquetMetaData,
    request: &ScanRequest,
) -> Result<Vec<usize>, PlanError> {
    let count = metadata.num_row_groups();
    let Some(list) = &request.row_groups else {
        return Ok((0..count).collect());
    };
    if let Some(&index) = list.iter().find(|&&index| index >= count) {
        return Err(PlanError::UnknownRowGroup { index, count });
    }
    let set: BTreeSet<usize> = list.iter().copied().collect();
    Ok(set.into_iter().collect())
}

/// The pages of one chunk from the offset index, each with its row range.
fn chunk_pages(index: &OffsetIndexMetaData, num_rows: i64) -> Vec<(PageRange, Range<i64>)> {
    let rows = page_rows(index, num_rows);
    index
        .page_locations()
        .iter()
        .zip(rows)
        .map(|(p, rows)| {
            let start = p.offset.max(0) as u64;
            let page = PageRange {
                range: start..start + p.compressed_page_size.max(0) as u64,
                first_row: p.first_row_index,
            };
            (page, rows)
        })
        .collect()
}

/// Plans one column chunk of a kept row group: its needed ranges (the whole
/// chunk, or its dictionary page and the pages overlapping `selection`) and
/// its kept pages; counts its pages into `totals`.
fn plan_chunk(
    rg_index: usize,
    rg: &RowGroupMetaData,
    leaf: usize,
    offset_index: Option<&OffsetIndexMetaData>,
    selection: Option<&[Range<i64>]>,
    totals: &mut PlanTotals,
) -> Result<ChunkPlan, PlanError> {
    let col = rg.column(leaf);
    let range = chunk_range(rg_index, col)?;
    let pages_all = offset_index.map(|oi| chunk_pages(oi, rg.num_rows()));
    let (ranges, pages) = match (pages_all, selection) {
        (Some(all), Some(sel)) => {
            totals.pages_total += all.len();
            let mut ranges = Vec::new();
            // The dictionary page (if any) sits between the chunk's start
            // and its first data page.
            if let Some((first, _)) = all.first() {
                if first.range.start > range.start {
                    ranges.push(range.start..first.range.start);
                }
            }
            let kept: Vec<PageRange> = all
                .into_iter()
                .filter(|(_, rows)| overlaps(rows, sel))
                .map(|(page, _)| page)
                .collect();
            totals.pages_kept += kept.len();
            ranges.extend(kept.iter().map(|p| p.range.clone()));
            (ranges, Some(kept))
        }
        (Some(all), None) => {
            totals.pages_total += all.len();
            totals.pages_kept += all.len();
            let pages = all.into_iter().map(|(page, _)| page).collect();
            (vec![range.clone()], Some(pages))
        }
        (None, _) => (vec![range.clone()], None),
    };
    Ok(ChunkPlan {
        row_group: rg_index,
        leaf,
        column: col.column_path().string(),
        descriptor: col.column_descr_ptr(),
        physical_type: col.column_type(),
        codec: col.compression(),
        encodings: col.encodings().collect(),
        num_values: col.num_values(),
        has_dictionary_page: col.dictionary_page_offset().is_some(),
        range,
        ranges,
        pages,
    })
}

/// What a request keeps of one row group.
enum RowGroupRows {
    /// Pruned by the predicate (counted in the totals).
    Pruned,
    /// Dropped because [`ScanRequest::rows`] selects none of the rows the
    /// predicate keeps (`baseline`: the predicate's selection).
    DroppedByRows { baseline: Option<Vec<Range<i64>>> },
    /// Kept: `selection` cuts the chunks (None: every row); `baseline` is
    /// the predicate's selection alone where [`ScanRequest::rows`] is given.
    Kept {
        selection: Option<Vec<Range<i64>>>,
        baseline: Option<Option<Vec<Range<i64>>>>,
    },
}

/// The rows of row group `rg_index` a request keeps: the predicate's
/// pruning, then the explicit rows; with `whole_row_groups`, selections are
/// widened to the whole row group.
fn row_group_rows(
    metadata: &ParquetMetaData,
    request: &ScanRequest,
    rg_index: usize,
    whole_row_groups: bool,
    totals: &mut PlanTotals,
) -> RowGroupRows {
    let rg = metadata.row_group(rg_index);
    let predicate = match &request.predicate {
        Some(p) if !p.row_group_may_match(rg) => {
            totals.row_groups_pruned_by_statistics += 1;
            return RowGroupRows::Pruned;
        }
        Some(p) => selected_rows(metadata, rg_index, rg, p),
        None => None,
    };
    if predicate.as_ref().is_some_and(|s| s.is_empty()) {
        totals.row_groups_pruned_by_page_index += 1;
        return RowGroupRows::Pruned;
    }
    let widen = |s: Option<Vec<Range<i64>>>| s.filter(|_| !whole_row_groups);
    let Some(rows) = &request.rows else {
        return RowGroupRows::Kept {
            selection: widen(predicate),
            baseline: None,
        };
    };
    let explicit = rows.get(rg_index).unwrap_or(&[]);
    let selection = match &predicate {
        Some(p) => intersect(p, explicit),
        None => explicit.to_vec(),
    };
    if selection.is_empty() {
        totals.row_groups_pruned_by_rows += 1;
        return RowGroupRows::DroppedByRows {
            baseline: widen(predicate),
        };
    }
    RowGroupRows::Kept {
        selection: widen(Some(selection)),
        baseline: Some(widen(predicate)),
    }
}

/// Checks a request's explicit rows against the file: every row group
/// exists and every range lies within its row group.
fn check_rows(metadata: &ParquetMetaData, rows: &RowSelections) -> Result<(), PlanError> {
    let count = metadata.num_row_groups();
    for (index, ranges) in rows.iter() {
        if index >= count {
            return Err(PlanError::UnknownRowGroup { index, count });
        }
        let num_rows = metadata.row_group(index).num_rows();
        if let Some(r) = ranges.iter().find(|r| r.start < 0 || r.end > num_rows) {
            return Err(PlanError::RowsOutOfRange {
                row_group: index,
                rows: r.clone(),
                num_rows,
            });
        }
    }
    Ok(())
}

/// Data pages and bytes the projected chunks of a row group need under
/// `selection` (what [`plan_chunk`] keeps), without counting them in the
/// plan's totals.
fn needed_under(
    rg_index: usize,
    rg: &RowGroupMetaData,
    leaves: &[usize],
    offset_index: Option<&Vec<OffsetIndexMetaData>>,
    selection: Option<&[Range<i64>]>,
) -> Result<(usize, u64), PlanError> {
    let mut scratch = PlanTotals::default();
    let mut bytes = 0;
    for &leaf in leaves {
        let index = offset_index.and_then(|oi| oi.get(leaf));
        bytes += plan_chunk(rg_index, rg, leaf, index, selection, &mut scratch)?.needed();
    }
    Ok((scratch.pages_kept, bytes))
}

/// Plans a scan. No I/O.
pub fn plan(metadata: &ParquetMetaData, request: &ScanRequest) -> Result<ScanPlan, PlanError> {
    let schema = metadata.file_metadata().schema_descr();
    let leaves = resolve_projection(schema, &request.projection)?;
    if let Some(p) = &request.predicate {
        p.validate(schema)?;
    }
    if let Some(rows) = &request.rows {
        check_rows(metadata, rows)?;
    }
    let considered = considered_row_groups(metadata, request)?;
    // A repeated leaf's pages do not end on the rows the offset index
    // counts in a way every reader can cut (a v1 page may end mid-record):
    // with one projected, page pruning keeps or drops whole row groups
    // only, so every chunk is read whole and records stay whole.
    let whole_row_groups = leaves
        .iter()
        .any(|&leaf| schema.column(leaf).max_rep_level() > 0);
    let mut totals = PlanTotals {
        row_groups_considered: considered.len(),
        ..Default::default()
    };
    let mut chunks = Vec::new();
    let mut row_groups = Vec::new();
    let mut requests = Vec::new();
    for rg_index in considered {
        let rg = metadata.row_group(rg_index);
        let offset_index = metadata.offset_index().and_then(|o| o.get(rg_index));
        let (selection, baseline) =
            match row_group_rows(metadata, request, rg_index, whole_row_groups, &mut totals) {
                RowGroupRows::Pruned => continue,
                RowGroupRows::DroppedByRows { baseline } => {
                    let (pages, bytes) =
                        needed_under(rg_index, rg, &leaves, offset_index, baseline.as_deref())?;
                    totals.pages_skipped_by_rows += pages;
                    totals.bytes_skipped_by_rows += bytes;
                    continue;
                }
                RowGroupRows::Kept {
                    selection,
                    baseline,
                } => (selection, baseline),
            };
        let first_chunk = chunks.len();
        for &leaf in &leaves {
            let index = offset_index.and_then(|oi| oi.get(leaf));
            chunks.push(plan_chunk(
                rg_index,
                rg,
                leaf,
                index,
                selection.as_deref(),
                &mut totals,
            )?);
        }
        let kept = &chunks[first_chunk..];
        if let Some(baseline) = baseline {
            let (pages, bytes) =
                needed_under(rg_index, rg, &leaves, offset_index, baseline.as_deref())?;
            let kept_pages: usize = kept
                .iter()
                .filter_map(|c| c.pages.as_ref())
                .map(Vec::len)
                .sum();
            let kept_bytes: u64 = kept.iter().map(ChunkPlan::needed).sum();
            totals.pages_skipped_by_rows += pages.saturating_sub(kept_pages);
            totals.bytes_skipped_by_rows += bytes.saturating_sub(kept_bytes);
        }
        let ranges: Vec<Range<u64>> = kept.iter().flat_map(|c| c.ranges.iter().cloned()).collect();
        let first_request = requests.len();
        requests.extend(
            coalesce(&ranges, request.coalesce)
                .into_iter()
                .map(|range| IoRequest {
                    row_group: rg_index,
                    range,
                }),
        );
        row_groups.push(RowGroupPlan {
            index: rg_index,
            num_rows: rg.num_rows(),
            chunks: (first_chunk..chunks.len()).collect(),
            requests: (first_request..requests.len()).collect(),
            bytes: requests[first_request..].iter().map(IoRequest::len).sum(),
            rows: selection
                .filter(|s| s.iter().map(|r| r.end - r.start).sum::<i64>() < rg.num_rows()),
        });
    }
    totals.row_groups_kept = row_groups.len();
    totals.chunks = chunks.len();
    totals.requests = requests.len();
    totals.bytes_needed = chunks.iter().map(ChunkPlan::needed).sum();
    totals.bytes_read = requests.iter().map(IoRequest::len).sum();
    Ok(ScanPlan {
        leaves,
        chunks,
        row_groups,
        requests,
        totals,
    })
}

/// The JSON form of a plan's parts, as `gdscan plan --json` has always
/// written it: byte ranges as offset and length, types as their names.
mod json {
    use serde::{Serialize, Serializer};

    use super::{ChunkPlan, IoRequest, PageRange};

    fn offset_len(r: &std::ops::Range<u64>) -> (u64, u64) {
        (r.start, r.end - r.start)
    }

    #[derive(Serialize)]
    struct Page {
        offset: u64,
        len: u64,
        first_row: i64,
    }

    impl Serialize for PageRange {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let (offset, len) = offset_len(&self.range);
            Page {
                offset,
                len,
                first_row: self.first_row,
            }
            .serialize(s)
        }
    }

    #[derive(Serialize)]
    struct Request {
        row_group: usize,
        offset: u64,
        len: u64,
    }

    impl Serialize for IoRequest {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let (offset, len) = offset_len(&self.range);
            Request {
                row_group: self.row_group,
                offset,
                len,
            }
            .serialize(s)
        }
    }

    #[derive(Serialize)]
    struct Chunk<'a> {
        row_group: usize,
        leaf: usize,
        column: &'a str,
        physical_type: String,
        codec: String,
        encodings: Vec<String>,
        num_values: i64,
        has_dictionary_page: bool,
        offset: u64,
        len: u64,
        ranges: Vec<(u64, u64)>,
        pages: &'a Option<Vec<PageRange>>,
    }

    impl Serialize for ChunkPlan {
        fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            let (offset, len) = offset_len(&self.range);
            Chunk {
                row_group: self.row_group,
                leaf: self.leaf,
                column: &self.column,
                physical_type: self.physical_type.to_string(),
                codec: self.codec.to_string(),
                encodings: self.encodings.iter().map(|e| e.to_string()).collect(),
                num_values: self.num_values,
                has_dictionary_page: self.has_dictionary_page,
                offset,
                len,
                ranges: self.ranges.iter().map(offset_len).collect(),
                pages: &self.pages,
            }
            .serialize(s)
        }
    }
}
