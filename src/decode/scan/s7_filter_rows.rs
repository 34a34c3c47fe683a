//! Stage 7, filter: a finished row group's batch cut on the GPU to the
//! rows the request's predicate selects (exactly: SQL's three-valued
//! logic, a row is kept only where the predicate is TRUE), then to the
//! columns the request asked for (the predicate's own columns are decoded
//! for it and dropped here when the projection does not name them).
//! Batches that keep no row are not handed out.

use std::sync::Arc;
use std::time::Instant;

use arrow::datatypes::{Schema, SchemaRef};

use super::decode_error::DecodeError;
use super::report::FilterReport;
use crate::cuda::DevicePool;
use crate::decode::array::DeviceBatch;
use crate::decode::filter::{FilterGpu, GpuPredicate};
use crate::decode::kernels::KernelSet;
use crate::parquet::Predicate;

/// What a decode filters by: the predicate, and the decoded columns to
/// hand out after it (top-level names; `None`: every decoded column).
#[derive(Debug, Clone)]
pub(crate) struct ExactFilter {
    pub(crate) predicate: Predicate,
    pub(crate) keep: Option<Vec<String>>,
}

impl ExactFilter {
    /// The indices of the decoded columns handed out, and their schema.
    pub(crate) fn output(&self, decoded: &SchemaRef) -> (Vec<usize>, SchemaRef) {
        let keep: Vec<usize> = match &self.keep {
            None => (0..decoded.fields().len()).collect(),
            Some(names) => decoded
                .fields()
                .iter()
                .enumerate()
                .filter(|(_, f)| names.iter().any(|n| n == f.name()))
                .map(|(i, _)| i)
                .collect(),
        };
        let fields: Vec<_> = keep.iter().map(|&i| decoded.field(i).clone()).collect();
        (keep, Arc::new(Schema::new(fields)))
    }
}

/// A decode's filter on one GPU: the compiled predicate, the kernels and
/// the columns handed out.
#[derive(Debug)]
pub(crate) struct RowFilter {
    program: GpuPredicate,
    gpu: FilterGpu,
    keep: Vec<usize>,
    schema: SchemaRef,
}

impl RowFilter {
    /// `filter` compiled for batches of `decoded` (a predicate the GPU does
    /// not evaluate fails here, before any read).
    pub(crate) fn new(
        filter: &ExactFilter,
        decoded: &SchemaRef,
        kernels: Arc<KernelSet>,
        pool: Arc<DevicePool>,
    ) -> Result<RowFilter, DecodeError> {
        let program = GpuPredicate::compile(&filter.predicate, decoded)?;
        let (keep, schema) = filter.output(decoded);
        Ok(RowFilter {
            program,
            gpu: FilterGpu::new(kernels, pool)?,
            keep,
            schema,
        })
    }

    /// The schema of the batches handed out.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// `batch` cut to the selected rows and the kept columns; `None` when
    /// no row is selected.
    pub(crate) fn apply(
        &self,
        batch: DeviceBatch,
        report: &mut FilterReport,
    ) -> Result<Option<DeviceBatch>, DecodeError> {
        let started = Instant::now();
        let projected = batch.project(&self.keep)?;
        let kept = self.gpu.select(&self.program, &batch, &projected)?;
        report.batches_in += 1;
        report.rows_in += batch.num_rows() as u64;
        match &kept {
            Some(b) => report.rows_out += b.num_rows() as u64,
            None => report.batches_empty += 1,
        }
        report.seconds += started.elapsed().as_secs_f64();
        Ok(kept)
    }
}
