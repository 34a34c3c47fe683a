//! The CPU path of `read_parquet` and `scan` (`device=None`): an arrow-rs
//! stream over gdscan's reader, reading the row groups and pages the plan
//! keeps, the filter applied row-exactly by arrow-rs's row filter (the
//! predicate's columns decoded first, the projected ones only for the rows
//! it selects).

use std::sync::Arc;

use arrow::array::{BooleanArray, RecordBatch};
use arrow::error::ArrowError;
use gdscan::parquet::{
    load_metadata, plan, GdsParquetReader, MetadataOptions, Predicate, Projection, ScanRequest,
};
use parquet::arrow::arrow_reader::{
    ArrowPredicateFn, ArrowReaderMetadata, ArrowReaderOptions, RowFilter, RowSelection, RowSelector,
};
use parquet::arrow::async_reader::ParquetRecordBatchStream;
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use parquet::file::metadata::{ParquetMetaData, ParquetMetaDataBuilder};
use parquet::schema::types::SchemaDescriptor;
use pyo3::prelude::*;

use crate::errors::to_py;
use crate::location::source_of;

/// Metadata options as the CLI's scan takes them: the page index only when
/// a filter can use it (arrow-rs reads pages through an offset index when it
/// is loaded, and some writers' offset indexes list no pages).
pub(crate) fn metadata_options(request: &ScanRequest) -> MetadataOptions {
    MetadataOptions {
        page_index: request.predicate.is_some(),
        ..MetadataOptions::default()
    }
}

/// arrow-rs's error for `location` as the library's (one of gdscan's that
/// travelled through arrow-rs unwrapped, arrow-rs's refusal of wide deltas
/// explained as `gdscan scan --host` explains it), sources kept in the text.
pub(crate) fn parquet_error(location: &str, e: parquet::errors::ParquetError) -> PyErr {
    to_py(gdscan::Error::from_parquet(location, e))
}

/// The selection of the rows the plan keeps in its row groups (the pages
/// that the filter's statistics do not rule out).
fn selection(plan: &gdscan::parquet::ScanPlan) -> RowSelection {
    let mut selectors = Vec::new();
    for rg in &plan.row_groups {
        match &rg.rows {
            None => selectors.push(RowSelector::select(rg.num_rows as usize)),
            Some(ranges) => {
                let mut at = 0i64;
                for r in ranges {
                    if r.start > at {
                        selectors.push(RowSelector::skip((r.start - at) as usize));
                    }
                    selectors.push(RowSelector::select((r.end - r.start) as usize));
                    at = r.end;
                }
                if rg.num_rows > at {
                    selectors.push(RowSelector::skip((rg.num_rows - at) as usize));
                }
            }
        }
    }
    RowSelection::from(selectors)
}

/// The leaves `predicate` reads (its columns resolved as the plan resolves
/// a projection).
fn filter_leaves(
    location: &str,
    metadata: &ParquetMetaData,
    predicate: &Predicate,
) -> PyResult<Vec<usize>> {
    let columns = predicate.columns().into_iter().map(String::from).collect();
    let request = ScanRequest {
        projection: Projection::Columns(columns),
        ..ScanRequest::default()
    };
    Ok(plan(metadata, &request)
        .map_err(|e| to_py(e.in_file(location)))?
        .leaves)
}

/// arrow-rs's row filter for `predicate` over its `leaves`: it decodes them
/// and keeps the rows where the predicate is TRUE.
fn row_filter(schema: &SchemaDescriptor, leaves: Vec<usize>, predicate: &Predicate) -> RowFilter {
    let predicate = predicate.clone();
    let exact = ArrowPredicateFn::new(
        ProjectionMask::leaves(schema, leaves),
        move |batch: RecordBatch| -> Result<BooleanArray, ArrowError> {
            predicate.evaluate(&batch)
        },
    );
    RowFilter::new(vec![Box::new(exact)])
}

/// The metadata arrow-rs reads with. Without the page index when a leaf
/// read is repeated: arrow-rs fetches only the pages of the rows a
/// selection (the plan's or the row filter's) keeps, which needs pages
/// that start on records, and some writers' v1 pages end mid-record (the
/// plan keeps such row groups whole for the same reason).
fn reader_metadata(metadata: &Arc<ParquetMetaData>, leaves: &[usize]) -> Arc<ParquetMetaData> {
    let schema = metadata.file_metadata().schema_descr();
    let repeated = leaves
        .iter()
        .any(|&leaf| schema.column(leaf).max_rep_level() > 0);
    if !repeated || metadata.offset_index().is_none() {
        return metadata.clone();
    }
    Arc::new(
        ParquetMetaDataBuilder::new_from_metadata(metadata.as_ref().clone())
            .set_column_index(None)
            .set_offset_index(None)
            .build(),
    )
}

/// An arrow-rs stream over exactly the rows of `location` where the
/// request's predicate is TRUE (row groups and pages pruned by statistics
/// first, as the GPU decoder prunes them), holding the projected columns.
pub(crate) fn host_stream(
    location: &str,
    request: &ScanRequest,
) -> PyResult<ParquetRecordBatchStream<GdsParquetReader>> {
    let source = source_of(location)?;
    let metadata = load_metadata(&source, metadata_options(request)).map_err(to_py)?;
    let plan = plan(&metadata, request).map_err(|e| to_py(e.in_file(location)))?;
    let schema = metadata.file_metadata().schema_descr_ptr();
    let filter = match &request.predicate {
        Some(p) => Some((p, filter_leaves(location, &metadata, p)?)),
        None => None,
    };
    let mut read = plan.leaves.clone();
    read.extend(filter.iter().flat_map(|(_, leaves)| leaves.iter().copied()));
    let arrow_meta =
        ArrowReaderMetadata::try_new(reader_metadata(&metadata, &read), ArrowReaderOptions::new())
            .map_err(|e| parquet_error(location, e))?;
    let batch_size = plan
        .row_groups
        .iter()
        .map(|r| r.num_rows as usize)
        .max()
        .unwrap_or(0)
        .max(1);
    let mut builder = ParquetRecordBatchStreamBuilder::new_with_metadata(
        GdsParquetReader::new(source).with_metadata(arrow_meta.metadata().clone()),
        arrow_meta,
    )
    .with_projection(ProjectionMask::leaves(&schema, plan.leaves.clone()))
    .with_row_groups(plan.row_groups.iter().map(|r| r.index).collect());
    // One batch per row group. arrow-rs clamps the batch size to the
    // footer's row count, which some writers leave at 0
    // (repeated_no_annotation.parquet): then keep its default.
    if metadata.file_metadata().num_rows() >= batch_size as i64 {
        builder = builder.with_batch_size(batch_size);
    }
    if plan.row_groups.iter().any(|r| r.rows.is_some()) {
        builder = builder.with_row_selection(selection(&plan));
    }
    if let Some((predicate, leaves)) = filter {
        builder = builder.with_row_filter(row_filter(&schema, leaves, predicate));
    }
    builder.build().map_err(|e| parquet_error(location, e))
}
