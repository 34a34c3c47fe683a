//! The host steps between the two phases of a late materialized scan.
//!
//! Phase 1 plans and decodes the predicate's columns only and evaluates the
//! predicate into a row mask per row group (one byte per decoded row).
//! [`late_rows`] turns those masks into phase 2's
//! [`ScanRequest::rows`](super::plan::ScanRequest::rows) for the payload
//! columns (exact rows or whole pages, by [`PayloadPolicy`]); once phase 2
//! is planned, [`compaction`] says, per row group, whether its decoded rows
//! are the kept ones or which of them to keep.
//!
//! Pure: no I/O, no GPU.

use std::ops::Range;

use ::parquet::file::metadata::ParquetMetaData;

use super::payload::{payload_rows, PayloadChoice, PayloadPolicy, Skipped};
use super::plan::{resolve_projection, PlanError, Projection, ScanPlan};
use super::selection::{compaction_mask, kept_ranges, normalize, RowSelections};

/// Phase 2 of one row group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LateRowGroup {
    /// Row group index in the file.
    pub row_group: usize,
    /// The rows phase 1 kept (sorted, disjoint, within the row group).
    pub kept: Vec<Range<i64>>,
    /// How phase 2 decodes its payload columns.
    pub choice: PayloadChoice,
}

/// Phase 2's rows.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LateRows {
    /// For phase 2's [`ScanRequest::rows`](super::plan::ScanRequest::rows):
    /// row groups with no kept row have no entry, so they are not planned.
    pub rows: RowSelections,
    /// Every row group a mask was given for, in the order given.
    pub row_groups: Vec<LateRowGroup>,
    /// Payload data pages (and bytes) phase 1's selection keeps and phase
    /// 2 does not fetch, over the row groups (columns with an offset index).
    pub skipped: Skipped,
}

/// Phase 2's rows for the `payload` columns from phase 1's plan and masks.
///
/// `masks`: per row group of `phase1` (by index in the file), its mask over
/// the rows phase 1 decoded (that row group's
/// [`RowGroupPlan::rows`](super::plan::RowGroupPlan::rows), all rows where
/// None), as [`kept_ranges`] reads it. A row group the plan does not hold is
/// [`PlanError::NotInPlan`]; an unknown payload column is
/// [`PlanError::UnknownColumn`].
pub fn late_rows<'a>(
    metadata: &ParquetMetaData,
    phase1: &ScanPlan,
    payload: &Projection,
    masks: impl IntoIterator<Item = (usize, &'a [u8])>,
    policy: PayloadPolicy,
) -> Result<LateRows, PlanError> {
    let leaves = resolve_projection(metadata.file_metadata().schema_descr(), payload)?;
    let mut out = LateRows::default();
    for (row_group, mask) in masks {
        let plan = phase1
            .row_groups
            .iter()
            .find(|r| r.index == row_group)
            .ok_or(PlanError::NotInPlan { row_group })?;
        let kept = kept_ranges(mask, plan.rows.as_deref(), plan.num_rows);
        let indexes = metadata.offset_index().and_then(|o| o.get(row_group));
        let columns: Vec<_> = leaves
            .iter()
            .map(|&leaf| indexes.and_then(|i| i.get(leaf)))
            .collect();
        let choice = payload_rows(&kept, plan.rows.as_deref(), plan.num_rows, &columns, policy);
        if !kept.is_empty() {
            out.rows
                .insert(row_group, choice.rows.ranges().iter().cloned());
        }
        out.skipped += choice.skipped;
        out.row_groups.push(LateRowGroup {
            row_group,
            kept,
            choice,
        });
    }
    Ok(out)
}

/// How to bring phase 2's decode of `row_group` to its `kept` rows: None
/// when the decoder outputs exactly them (or the row group is not in
/// `phase2`: nothing decoded), else a mask over the rows it outputs (its
/// [`RowGroupPlan::rows`](super::plan::RowGroupPlan::rows), all rows where
/// None: also where `phase2` keeps whole row groups only) for the GPU to
/// compact by.
pub fn compaction(phase2: &ScanPlan, row_group: usize, kept: &[Range<i64>]) -> Option<Vec<u8>> {
    let plan = phase2.row_groups.iter().find(|r| r.index == row_group)?;
    let all = 0..plan.num_rows;
    let decoded = plan.rows.as_deref().unwrap_or(std::slice::from_ref(&all));
    if normalize(decoded.iter().cloned()) == normalize(kept.iter().cloned()) {
        return None;
    }
    Some(compaction_mask(kept, decoded))
}
