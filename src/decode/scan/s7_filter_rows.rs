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

    /// `batches` (finished together: one decoded group's row groups) cut
    /// to the selected rows and the kept columns, in order; those that
    /// keep no row are left out. One pass of evaluation and compaction
    /// over all of them ([`FilterGpu::select_many`]).
    pub(crate) fn apply_many(
        &self,
        batches: Vec<DeviceBatch>,
        report: &mut FilterReport,
    ) -> Result<Vec<DeviceBatch>, DecodeError> {
        let started = Instant::now();
        let projected = batches
            .iter()
            .map(|b| b.project(&self.keep))
            .collect::<Result<Vec<_>, _>>()?;
        let work: Vec<(&DeviceBatch, &DeviceBatch)> = batches.iter().zip(&projected).collect();
        let kept = self.gpu.select_many(&self.program, &work)?;
        let mut out = Vec::with_capacity(kept.len());
        for (batch, kept) in batches.iter().zip(kept) {
            report.batches_in += 1;
            report.rows_in += batch.num_rows() as u64;
            match kept {
                Some(b) => {
                    report.rows_out += b.num_rows() as u64;
                    out.push(b);
                }
                None => report.batches_empty += 1,
            }
        }
        report.seconds += started.elapsed().as_secs_f64();
        Ok(out)
    }
}
