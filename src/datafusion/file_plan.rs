//! gdscan's plan of one file for one DataFusion scan: which row groups and
//! rows DataFusion reads (a [`ParquetAccessPlan`] from gdscan's pruning),
//! and which bytes each kept row group needs (for read-ahead).
//!
//! No I/O: the plan comes from the metadata gdscan cached at registration.

use std::ops::Range;

use ::datafusion::datasource::physical_plan::parquet::{ParquetAccessPlan, RowGroupAccess};
use ::parquet::arrow::arrow_reader::RowSelection;
use ::parquet::file::metadata::ParquetMetaData;

use crate::parquet::plan::{plan, Projection, ScanRequest};
use crate::parquet::predicate::Predicate;

/// One row group the scan keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedRowGroup {
    /// Its index in the file.
    pub index: usize,
    /// Where its first column's first page starts: DataFusion gives a row
    /// group to the file range that holds this offset.
    pub first_page: u64,
    /// The projected column chunks, whole (sorted by offset).
    pub chunks: Vec<Range<u64>>,
    /// Whether page pruning keeps only some of its rows (DataFusion then
    /// reads only some pages of the chunks).
    pub some_rows: bool,
}

impl PlannedRowGroup {
    /// The bytes from its first chunk's start to its last chunk's end.
    pub fn span(&self) -> Range<u64> {
        let start = self.chunks.iter().map(|c| c.start).min().unwrap_or(0);
        let end = self.chunks.iter().map(|c| c.end).max().unwrap_or(0);
        start..end
    }

    /// Bytes of its chunks.
    pub fn bytes(&self) -> u64 {
        self.chunks.iter().map(|c| c.end - c.start).sum()
    }
}

/// gdscan's plan of one file for one scan, attached to its
/// `PartitionedFile` for the reader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileScanPlan {
    /// The kept row groups, in file order.
    pub row_groups: Vec<PlannedRowGroup>,
    /// Whether the reader may read a row group ahead (off for a scan with a
    /// limit, which may stop early).
    pub read_ahead: bool,
}

impl FileScanPlan {
    /// The kept row groups DataFusion gives the file range `range` (all of
    /// them for the whole file).
    pub fn in_range(&self, range: Option<Range<u64>>) -> Vec<PlannedRowGroup> {
        self.row_groups
            .iter()
            .filter(|rg| range.as_ref().is_none_or(|r| r.contains(&rg.first_page)))
            .cloned()
            .collect()
    }
}

/// Plans `columns` (top-level names; None: all) of a file with `metadata`,
/// pruned by `predicate`'s terms that fit the file (a term on a column the
/// file lacks, or of another type, is left out).
///
/// None when gdscan cannot plan the file (DataFusion then scans it with its
/// own pruning alone).
pub fn plan_file(
    metadata: &ParquetMetaData,
    columns: Option<&[String]>,
    predicate: Option<&Predicate>,
    read_ahead: bool,
) -> Option<(ParquetAccessPlan, FileScanPlan)> {
    let schema = metadata.file_metadata().schema_descr();
    let predicate = predicate.and_then(|p| p.fitting(schema));
    let projection = match columns {
        None => Projection::All,
        Some(names) => {
            let roots = schema.root_schema().get_fields();
            Projection::Columns(
                names
                    .iter()
                    .filter(|n| roots.iter().any(|f| f.name() == n.as_str()))
                    .cloned()
                    .collect(),
            )
        }
    };
    let request = ScanRequest {
        projection,
        predicate,
        ..Default::default()
    };
    let scan = plan(metadata, &request).ok()?;
    let mut access = vec![RowGroupAccess::Skip; metadata.num_row_groups()];
    let mut row_groups = Vec::with_capacity(scan.row_groups.len());
    for rg in &scan.row_groups {
        let num_rows = usize::try_from(rg.num_rows).ok()?;
        access[rg.index] = match &rg.rows {
            None => RowGroupAccess::Scan,
            Some(rows) => RowGroupAccess::Selection(RowSelection::from_consecutive_ranges(
                rows.iter().map(|r| r.start as usize..r.end as usize),
                num_rows,
            )),
        };
        let meta = metadata.row_group(rg.index);
        let first = meta.column(0);
        let mut chunks: Vec<Range<u64>> = rg
            .chunks
            .iter()
            .map(|&c| scan.chunks[c].range.clone())
            .collect();
        chunks.sort_by_key(|c| c.start);
        row_groups.push(PlannedRowGroup {
            index: rg.index,
            first_page: first
                .dictionary_page_offset()
                .unwrap_or_else(|| first.data_page_offset())
                .max(0) as u64,
            chunks,
            some_rows: rg.rows.is_some(),
        });
    }
    Some((
        ParquetAccessPlan::new(access),
        FileScanPlan {
            row_groups,
            read_ahead,
        },
    ))
}
