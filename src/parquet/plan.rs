//! The scan plan: which bytes a scan needs, computed from metadata alone.
//!
//! Like arrow-rs's push decoder, planning does no I/O: it takes the
//! metadata and a request (projection, row groups, predicate) and returns
//! the column-chunk byte ranges, pruned by statistics and the page index,
//! and the coalesced I/O requests that cover them. Fetching is a separate
//! step ([`super::fetch`](mod@super::fetch)).

use std::collections::BTreeSet;
use std::ops::Range;

use ::parquet::file::metadata::{ColumnChunkMetaData, ParquetMetaData, RowGroupMetaData};
use ::parquet::file::page_index::offset_index::OffsetIndexMetaData;
use ::parquet::schema::types::SchemaDescriptor;
use serde::Serialize;

use super::coalesce::{coalesce, CoalesceOptions};
use super::predicate::Predicate;

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
}

/// A planning failure: the request does not fit the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// A projected column is not in the file.
    #[error("column {0:?} is not in the file")]
    UnknownColumn(String),
    /// A row group index is out of range.
    #[error("row group {index} does not exist (the file has {count})")]
    UnknownRowGroup {
        /// The index asked for.
        index: usize,
        /// How many there are.
        count: usize,
    },
    /// The filter does not fit the schema.
    #[error("{0}")]
    Predicate(String),
    /// The metadata holds an impossible range.
    #[error("column chunk {column} of row group {row_group} has an invalid byte range")]
    BadRange {
        /// Row group.
        row_group: usize,
        /// Column path.
        column: String,
    },
}

/// One data page kept by the plan (from the offset index).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct PageRange {
    /// File offset of the page (header included).
    pub offset: u64,
    /// Bytes (header included).
    pub len: u64,
    /// First row of the page within its row group.
    pub first_row: i64,
}

/// One column chunk the scan needs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ChunkPlan {
    /// Row group index.
    pub row_group: usize,
    /// Leaf column index in the schema.
    pub leaf: usize,
    /// Dotted column path.
    pub column: String,
    /// Physical type, e.g. "INT64".
    pub physical_type: String,
    /// Compression codec, e.g. "SNAPPY".
    pub codec: String,
    /// Encodings used in the chunk.
    pub encodings: Vec<String>,
    /// Values in the chunk (nulls included).
    pub num_values: i64,
    /// Whether the chunk starts with a dictionary page.
    pub has_dictionary_page: bool,
    /// File offset of the whole chunk.
    pub offset: u64,
    /// Length of the whole chunk.
    pub len: u64,
    /// The byte ranges this scan needs: the whole chunk, or the dictionary
    /// page plus the data pages kept by page pruning.
    pub ranges: Vec<(u64, u64)>,
    /// The kept data pages, when the offset index is known (a GPU decoder
    /// dispatches per page).
    pub pages: Option<Vec<PageRange>>,
}

impl ChunkPlan {
    /// Bytes this chunk needs.
    pub fn needed(&self) -> u64 {
        self.ranges.iter().map(|r| r.1).sum()
    }
}

/// One coalesced read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct IoRequest {
    /// Row group it belongs to (requests never span row groups, so each row
    /// group lands in its own allocation).
    pub row_group: usize,
    /// File offset.
    pub offset: u64,
    /// Length.
    pub len: u64,
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

/// Resolves a projection to leaf indices (schema order).
pub fn resolve_projection(
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

/// Row ranges `[first_row, end)` of each page of one chunk.
fn page_rows(index: &OffsetIndexMetaData, num_rows: i64) -> Vec<Range<i64>> {
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

fn intersects(a: &Range<i64>, sel: &[Range<i64>]) -> bool {
    sel.iter().any(|s| s.start < a.end && a.start < s.end)
}

/// Intersects two sorted, disjoint range lists.
fn intersect(a: &[Range<i64>], b: &[Range<i64>]) -> Vec<Range<i64>> {
    let mut out = Vec::new();
    for x in a {
        for y in b {
            let s = x.start.max(y.start);
            let e = x.end.min(y.end);
            if s < e {
                out.push(s..e);
            }
        }
    }
    out.sort_by_key(|r| r.start);
    out
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
        let kept: Vec<Range<i64>> = rows
            .into_iter()
            .zip(matches)
            .filter(|(_, m)| *m)
            .map(|(r, _)| r)
            .collect();
        selection = Some(match selection {
            None => kept,
            Some(prev) => intersect(&prev, &kept),
        });
    }
    selection
}

fn chunk_range(row_group: usize, col: &ColumnChunkMetaData) -> Result<(u64, u64), PlanError> {
    let (start, len) = col.byte_range();
    if start.checked_add(len).is_none() {
        return Err(PlanError::BadRange {
            row_group,
            column: col.column_path().string(),
        });
    }
    Ok((start, len))
}

/// Plans a scan. No I/O.
pub fn plan(metadata: &ParquetMetaData, request: &ScanRequest) -> Result<ScanPlan, PlanError> {
    let schema = metadata.file_metadata().schema_descr();
    let leaves = resolve_projection(schema, &request.projection)?;
    if let Some(p) = &request.predicate {
        p.validate(schema)
            .map_err(|e| PlanError::Predicate(e.to_string()))?;
    }
    let count = metadata.num_row_groups();
    let considered: Vec<usize> = match &request.row_groups {
        Some(list) => {
            for &index in list {
                if index >= count {
                    return Err(PlanError::UnknownRowGroup { index, count });
                }
            }
            let set: BTreeSet<usize> = list.iter().copied().collect();
            set.into_iter().collect()
        }
        None => (0..count).collect(),
    };
    let mut totals = PlanTotals {
        row_groups_considered: considered.len(),
        ..Default::default()
    };
    let mut chunks = Vec::new();
    let mut row_groups = Vec::new();
    let mut requests = Vec::new();
    for rg_index in considered {
        let rg = metadata.row_group(rg_index);
        let selection = match &request.predicate {
            Some(p) if !p.row_group_may_match(rg) => {
                totals.row_groups_pruned_by_statistics += 1;
                continue;
            }
            Some(p) => selected_rows(metadata, rg_index, rg, p),
            None => None,
        };
        if selection.as_ref().is_some_and(|s| s.is_empty()) {
            totals.row_groups_pruned_by_page_index += 1;
            continue;
        }
        let offset_index = metadata.offset_index().and_then(|o| o.get(rg_index));
        let first_chunk = chunks.len();
        let mut ranges: Vec<Range<u64>> = Vec::new();
        for &leaf in &leaves {
            let col = rg.column(leaf);
            let (offset, len) = chunk_range(rg_index, col)?;
            let pages_all: Option<Vec<PageRange>> =
                offset_index.and_then(|oi| oi.get(leaf)).map(|oi| {
                    oi.page_locations()
                        .iter()
                        .map(|p| PageRange {
                            offset: p.offset.max(0) as u64,
                            len: p.compressed_page_size.max(0) as u64,
                            first_row: p.first_row_index,
                        })
                        .collect()
                });
            let (chunk_ranges, pages) = match (&pages_all, &selection) {
                (Some(all), Some(sel)) => {
                    let rows = offset_index
                        .and_then(|oi| oi.get(leaf))
                        .map(|oi| page_rows(oi, rg.num_rows()))
                        .unwrap_or_default();
                    let kept: Vec<PageRange> = all
                        .iter()
                        .zip(rows.iter())
                        .filter(|(_, r)| intersects(r, sel))
                        .map(|(p, _)| *p)
                        .collect();
                    totals.pages_total += all.len();
                    totals.pages_kept += kept.len();
                    let mut rs = Vec::new();
                    // The dictionary page (if any) sits between the chunk's
                    // start and its first data page.
                    if let Some(first) = all.first() {
                        if first.offset > offset {
                            rs.push((offset, first.offset - offset));
                        }
                    }
                    rs.extend(kept.iter().map(|p| (p.offset, p.len)));
                    (rs, Some(kept))
                }
                (Some(all), None) => {
                    totals.pages_total += all.len();
                    totals.pages_kept += all.len();
                    (vec![(offset, len)], Some(all.clone()))
                }
                (None, _) => (vec![(offset, len)], None),
            };
            ranges.extend(chunk_ranges.iter().map(|&(o, l)| o..o + l));
            chunks.push(ChunkPlan {
                row_group: rg_index,
                leaf,
                column: col.column_path().string(),
                physical_type: col.column_type().to_string(),
                codec: col.compression().to_string(),
                encodings: col.encodings().map(|e| e.to_string()).collect(),
                num_values: col.num_values(),
                has_dictionary_page: col.dictionary_page_offset().is_some(),
                offset,
                len,
                ranges: chunk_ranges,
                pages,
            });
        }
        let first_request = requests.len();
        let mut bytes = 0;
        for r in coalesce(&ranges, request.coalesce) {
            bytes += r.end - r.start;
            requests.push(IoRequest {
                row_group: rg_index,
                offset: r.start,
                len: r.end - r.start,
            });
        }
        row_groups.push(RowGroupPlan {
            index: rg_index,
            num_rows: rg.num_rows(),
            chunks: (first_chunk..chunks.len()).collect(),
            requests: (first_request..requests.len()).collect(),
            bytes,
            rows: selection
                .filter(|s| s.iter().map(|r| r.end - r.start).sum::<i64>() < rg.num_rows()),
        });
    }
    totals.row_groups_kept = row_groups.len();
    totals.chunks = chunks.len();
    totals.requests = requests.len();
    totals.bytes_needed = chunks.iter().map(ChunkPlan::needed).sum();
    totals.bytes_read = requests.iter().map(|r| r.len).sum();
    Ok(ScanPlan {
        leaves,
        chunks,
        row_groups,
        requests,
        totals,
    })
}
