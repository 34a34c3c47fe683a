//! The one-GPU pipeline: a scan's row groups through stages 0 to 6 on one
//! device ([`GpuStream`]). It chooses where the row groups land (stage 0),
//! starts the fetch and the planning thread (stage 1), stages each planned
//! group's row groups (stage 2), queues the group's check, decompression and
//! kernels (stages 3 to 5), and finishes the row groups in plan order
//! (stage 6), keeping `depth` groups on the GPU.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use arrow::datatypes::{Field, Schema, SchemaRef};
use parquet::file::metadata::ParquetMetaData;

use super::gpu_queue::GpuQueue;
use super::gpu_resources::{self, Gpu};
use super::s7_filter_rows::ExactFilter;
use super::scan_job::{NextGroup, Outputs, ScanJob};
use super::trace::Trace;
use super::{DecodeError, DecodeInput, DecodeOptions, DecodeReport, DevicePoolMode};
use crate::cuda::Device;
use crate::decode::array::DeviceBatch;
use crate::decode::page::nesting::{arrow_fields, nest_fields_of_file, GpuNesting};
use crate::decode::page::{check_chunk, column_type, is_nested, DecodePlanError};
use crate::parquet::ScanPlan;

/// The Arrow schema a decode of `plan` produces, or the first column
/// outside the decoder's coverage (checked from the metadata, before any
/// I/O).
pub fn output_schema(
    location: &str,
    metadata: &ParquetMetaData,
    plan: &ScanPlan,
) -> Result<SchemaRef, DecodeError> {
    Ok(checked_output(location, metadata, plan)?.0)
}

/// [`output_schema`], and the GPU's nesting plan of the projection when it
/// has a nested leaf (the same for every row group of the file).
fn checked_output(
    location: &str,
    metadata: &ParquetMetaData,
    plan: &ScanPlan,
) -> Result<(SchemaRef, Option<Arc<GpuNesting>>), DecodeError> {
    let unsupported = |e: DecodePlanError| match e {
        DecodePlanError::Unsupported { column, what } => DecodeError::Unsupported {
            file: location.to_string(),
            column,
            what,
        },
        source => DecodeError::Plan {
            file: location.to_string(),
            source,
        },
    };
    for chunk in &plan.chunks {
        let meta = metadata.row_group(chunk.row_group).column(chunk.leaf);
        check_chunk(meta).map_err(unsupported)?;
    }
    let descr = metadata.file_metadata().schema_descr();
    if plan
        .leaves
        .iter()
        .any(|&leaf| is_nested(&descr.column(leaf)))
    {
        // Nested: the model's top-level fields, as arrow-rs types them.
        let model = nest_fields_of_file(metadata.file_metadata(), Some(&plan.leaves))
            .map_err(unsupported)?;
        let schema = Arc::new(Schema::new(arrow_fields(&model)));
        return Ok((schema, Some(Arc::new(GpuNesting::new(model)))));
    }
    let mut fields = Vec::with_capacity(plan.leaves.len());
    for &leaf in &plan.leaves {
        let column = descr.column(leaf);
        let ty = column_type(&column).map_err(unsupported)?;
        fields.push(Field::new(column.name(), ty.data_type, ty.nullable));
    }
    Ok((Arc::new(Schema::new(fields)), None))
}

/// The scan's GPU `device` and its resources, with the seconds the context
/// and the resources took. nvCOMP and NVRTC open on threads of their own
/// meanwhile (a fresh process's first batch waits for all three); it
/// returns, opened or not, once they have opened or failed.
pub(crate) fn open_gpu(
    device: usize,
    options: &DecodeOptions,
) -> Result<(Gpu, f64, f64), DecodeError> {
    let _libraries = super::warm_up::warm_up();
    let opening = Instant::now();
    let device = Device::get(device)?;
    let context_seconds = opening.elapsed().as_secs_f64();
    let resources = Instant::now();
    let pool = match options.device_pool {
        DevicePoolMode::Scan => gpu_resources::new_device_pool(device),
        DevicePoolMode::Shared => gpu_resources::shared_device_pool(device),
    };
    let gpu = Gpu::new(device, pool, options)?;
    Ok((gpu, context_seconds, resources.elapsed().as_secs_f64()))
}

/// Every input's output checked against the decoder's coverage.
pub(crate) fn checked_outputs(inputs: &[DecodeInput]) -> Result<Outputs, DecodeError> {
    let mut schema: Option<SchemaRef> = None;
    let mut nestings = Vec::with_capacity(inputs.len());
    for input in inputs {
        let (s, nesting) = checked_output(input.source.location(), &input.metadata, &input.plan)?;
        nestings.push(nesting);
        match &schema {
            None => schema = Some(s),
            Some(first) if first.fields() != s.fields() => {
                return Err(DecodeError::SchemaMismatch {
                    file: input.source.location().to_string(),
                    first: inputs[0].source.location().to_string(),
                })
            }
            Some(_) => {}
        }
    }
    let schema = schema.unwrap_or_else(|| Arc::new(Schema::empty()));
    Ok((schema, nestings))
}

/// Starts decoding `inputs` (files with their plans, streamed as one
/// table) into `device`, on a pipeline of its own. Every column is checked
/// against the decoder's coverage first: an unsupported one fails here,
/// before any read.
pub(crate) fn decode_one(
    inputs: Vec<DecodeInput>,
    options: DecodeOptions,
    device: usize,
    filter: Option<ExactFilter>,
) -> Result<GpuStream, DecodeError> {
    let outputs = checked_outputs(&inputs)?;
    let (gpu, context_seconds, resources_seconds) = open_gpu(device, &options)?;
    let trace = match &options.trace {
        Some(path) => Some(Trace::start(path.clone(), gpu.device, &gpu.streams[0])?),
        None => None,
    };
    // The pools' high-water marks from here are this scan's (shared by any
    // scan running beside it on the device).
    gpu.pool.reset_peak();
    gpu.pinned.reset_peak();
    let resources = gpu.job_resources();
    let held = options.depth;
    let mut job = ScanJob::start(inputs, outputs, &options, &resources, filter, held, None)?;
    job.report.context_seconds = context_seconds;
    job.report.resources_seconds = resources_seconds;
    Ok(GpuStream {
        queue: GpuQueue::new(gpu, &options, trace),
        job,
        filtered: VecDeque::new(),
        failed: false,
    })
}

/// Device batches, one per row group, in plan order, from a pipeline of
/// the decode's own. Dropping the stream stops the fetch; batches already
/// handed out stay valid.
pub(crate) struct GpuStream {
    /// First: queued work is waited for before the job (its fetch and
    /// planner) is dropped.
    queue: GpuQueue,
    job: ScanJob,
    /// Batches of the last finished group not handed out yet.
    filtered: VecDeque<DeviceBatch>,
    failed: bool,
}

impl std::fmt::Debug for GpuStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuStream")
            .field("device", &self.queue.gpu.device.ordinal())
            .field("job", &self.job)
            .finish()
    }
}

impl Drop for GpuStream {
    fn drop(&mut self) {
        if let Some(trace) = &self.queue.trace {
            // A diagnostic: a trace that cannot be written is said, not fatal.
            if let Err(e) = trace.write() {
                eprintln!("gdscan: GDSCAN_DECODE_TRACE: {e}");
            }
        }
    }
}

impl GpuStream {
    /// The batches' schema.
    pub(crate) fn schema(&self) -> &SchemaRef {
        self.job.output_schema()
    }

    /// What the decoder has done so far.
    pub(crate) fn report(&self) -> &DecodeReport {
        &self.job.report
    }

    /// The GPU the batches land on.
    pub(crate) fn device(&self) -> usize {
        self.queue.gpu.device.ordinal()
    }

    /// Queues groups until `depth` are on the GPU or the fetch ends.
    fn fill(&mut self) -> Result<(), DecodeError> {
        while self.queue.has_room() {
            let waited = Instant::now();
            let group = match self.job.next_group(true) {
                NextGroup::Ready(group) => group,
                NextGroup::Failed(e) => return Err(e),
                NextGroup::End | NextGroup::NotYet => return Ok(()),
            };
            self.queue.trace_plan_wait(waited, &group);
            self.queue.launch_group(0, &self.job, group)?;
        }
        Ok(())
    }

    /// The next batches: a row group's (a finished group's, filtered, with
    /// a filter); an empty list where a group keeps no row.
    fn step(&mut self) -> Option<Result<Vec<DeviceBatch>, DecodeError>> {
        if let Err(e) = self.fill().and_then(|()| self.queue.try_queue_pending()) {
            return Some(Err(e));
        }
        let first = self.queue.finish_front()?;
        let rest = if self.job.filters() {
            self.queue.finish_rest_of_group(&first)
        } else {
            Vec::new()
        };
        let finished: Result<Vec<_>, _> = std::iter::once(first.result).chain(rest).collect();
        Some(finished.and_then(|f| self.job.take_group(f)))
    }
}

impl Iterator for GpuStream {
    type Item = Result<DeviceBatch, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if self.failed {
                return None;
            }
            if let Some(batch) = self.filtered.pop_front() {
                return Some(Ok(batch));
            }
            match self.step()? {
                Ok(batches) => self.filtered.extend(batches),
                Err(e) => {
                    // A failed row group ends the stream: never partial data
                    // after it. A device timeout leaves the GPU unfinished
                    // with what is queued behind it: waiting for it (as
                    // dropping does) could never end.
                    self.failed = true;
                    let timed_out = matches!(e, DecodeError::DeviceTimeout { .. });
                    self.queue.abandon(timed_out);
                    self.filtered.clear();
                    return Some(Err(e));
                }
            }
        }
    }
}
