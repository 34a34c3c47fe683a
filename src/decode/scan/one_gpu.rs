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

use super::gpu_resources::{self, Gpu};
use super::s0_land::{self, Landing};
use super::s1_plan_ahead::{self, PlanAhead, PlannedGroup};
use super::s2_upload_row_group;
use super::s3_to_s5_queue_group;
use super::s6_finish_row_group::InFlight;
use super::s7_filter_rows::{ExactFilter, RowFilter};
use super::trace::Trace;
use super::{DecodeError, DecodeInput, DecodeOptions, DecodeReport, DevicePoolMode};
use crate::cuda::Device;
use crate::decode::array::DeviceBatch;
use crate::decode::page::nesting::{arrow_fields, nest_fields_of_file, GpuNesting};
use crate::decode::page::{check_chunk, column_type, is_nested, DecodePlanError};
use crate::parquet::fetch::{fetch, SourceScan};
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
/// meanwhile (a fresh process's first batch waits for all three).
fn open_gpu(device: usize, options: &DecodeOptions) -> Result<(Gpu, f64, f64), DecodeError> {
    super::warm_up::start();
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

/// Starts decoding `inputs` (files with their plans, streamed as one
/// table) into `device`. Every column is checked against the decoder's
/// coverage first: an unsupported one fails here, before any read.
pub(crate) fn decode_one(
    inputs: Vec<DecodeInput>,
    options: DecodeOptions,
    device: usize,
    filter: Option<ExactFilter>,
) -> Result<GpuStream, DecodeError> {
    let mut schema: Option<SchemaRef> = None;
    let mut nestings = Vec::with_capacity(inputs.len());
    for input in &inputs {
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
    let (gpu, context_seconds, resources_seconds) = open_gpu(device, &options)?;
    let filter = match &filter {
        Some(f) => Some(RowFilter::new(
            f,
            &schema,
            gpu.kernels.clone(),
            gpu.pool.clone(),
        )?),
        None => None,
    };
    let scans: Vec<SourceScan> = inputs
        .iter()
        .map(|i| SourceScan {
            source: i.source.clone(),
            plan: i.plan.clone(),
        })
        .collect();
    // The stream holds `depth` groups while it collects the next, and the
    // planner works on the one after: the fetch must let that many bytes
    // through, or it would wait for row groups the stream holds (and the
    // planner could not run ahead of the GPU).
    let depth = options.depth.max(1);
    let largest = inputs
        .iter()
        .flat_map(|i| i.plan.row_groups.iter().map(|r| r.bytes))
        .max()
        .unwrap_or(0);
    let mut fetch_options = options.fetch;
    let needed = (depth as u64 + 2).saturating_mul(options.group_bytes.saturating_add(largest));
    fetch_options.max_bytes_in_flight = fetch_options.max_bytes_in_flight.max(needed);
    // Row groups land in device memory where the host reads no page body
    // (it reads their headers from the file), else in pinned host memory
    // (the host walks the pages there, one copy takes them up).
    let landing = s0_land::choose(options.landing, &inputs, gpu.checks());
    let allocator = match landing {
        Landing::Device => s0_land::LandingAllocator::Device(gpu.pool.clone()),
        Landing::Pinned => s0_land::LandingAllocator::Pinned(gpu.pinned.clone()),
    };
    let fetch = fetch(scans, [allocator], fetch_options);
    let inputs = Arc::new(inputs);
    let trace = match &options.trace {
        Some(path) => Some(Trace::start(path.clone(), gpu.device, &gpu.streams[0])?),
        None => None,
    };
    // The device pool's high-water mark from here is this scan's (shared
    // by any scan running beside it on the device).
    gpu.pool.reset_peak();
    gpu.pinned.reset_peak();
    let pools_at_start = (gpu.pool.stats(), gpu.pinned.stats());
    let planned = PlanAhead::start(
        fetch,
        inputs.clone(),
        gpu.checks(),
        options.group_bytes,
        s1_plan_ahead::Ramp {
            up: options.ramp_up,
            down: options.ramp_down,
        },
    );
    Ok(GpuStream {
        trace,
        pools_at_start,
        groups_launched: 0,
        queue: VecDeque::new(),
        gpu,
        inputs,
        planned,
        depth,
        groups_queued: 0,
        launched: 0,
        late_launched: 0,
        stage_pool: stage_pool(options.stage_threads),
        schema,
        filter,
        filtered: VecDeque::new(),
        nestings,
        report: DecodeReport {
            landing: Some(landing),
            context_seconds,
            resources_seconds,
            ..DecodeReport::default()
        },
        failed: false,
        device_timeout: options.device_timeout,
    })
}

thread_local! {
    /// The host tables for queueing groups, kept on the thread that drives
    /// the scans (from one group and one scan to the next).
    static QUEUE_SCRATCH: std::cell::RefCell<s3_to_s5_queue_group::QueueScratch> =
        std::cell::RefCell::new(s3_to_s5_queue_group::QueueScratch::default());
}

/// The pool that stages a group's row groups, for `threads` above 1 (none
/// where its threads cannot start: the decoder's thread stages them then).
fn stage_pool(threads: usize) -> Option<rayon::ThreadPool> {
    (threads > 1)
        .then(|| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(threads)
                .thread_name(|i| format!("gdscan-stage-{i}"))
                .build()
                .ok()
        })
        .flatten()
}

/// Device batches, one per row group, in plan order. Dropping the stream
/// stops the fetch; batches already handed out stay valid.
pub(crate) struct GpuStream {
    /// First: queued work is waited for before the rest is dropped.
    queue: VecDeque<InFlight>,
    /// The timeline, when `GDSCAN_DECODE_TRACE` asks for one.
    trace: Option<Trace>,
    /// The pools' counters when the scan started.
    pools_at_start: (crate::cuda::PoolStats, crate::cuda::PoolStats),
    /// Groups handed to the GPU so far.
    groups_launched: usize,
    gpu: Gpu,
    inputs: Arc<Vec<DecodeInput>>,
    /// After `queue`: the queued work's fetched bytes go back to the
    /// fetch's budget before the planner is joined.
    planned: PlanAhead,
    depth: usize,
    /// Groups with a row group in `queue`.
    groups_queued: usize,
    launched: usize,
    /// Pending row groups queued on `Gpu::late_streams` so far.
    late_launched: usize,
    /// Threads that stage a group's row groups at once
    /// (`DecodeOptions::stage_threads`); none stages them on this thread.
    stage_pool: Option<rayon::ThreadPool>,
    /// The decoded columns' schema (before the filter's projection).
    schema: SchemaRef,
    /// The exact filter, when the request has a predicate.
    filter: Option<RowFilter>,
    /// Filtered batches of the last group not handed out yet.
    filtered: VecDeque<DeviceBatch>,
    /// Per input, its projection's nesting plan (None: flat).
    nestings: Vec<Option<Arc<GpuNesting>>>,
    report: DecodeReport,
    failed: bool,
    /// `DecodeOptions::device_timeout`.
    device_timeout: std::time::Duration,
}

impl std::fmt::Debug for GpuStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GpuStream")
            .field("device", &self.gpu.device.ordinal())
            .field("queued", &self.queue.len())
            .finish()
    }
}

impl GpuStream {
    /// The batches' schema.
    pub(crate) fn schema(&self) -> &SchemaRef {
        match &self.filter {
            Some(f) => f.schema(),
            None => &self.schema,
        }
    }

    /// What the decoder has done so far.
    pub(crate) fn report(&self) -> &DecodeReport {
        &self.report
    }

    /// The GPU the batches land on.
    pub(crate) fn device(&self) -> usize {
        self.gpu.device.ordinal()
    }

    /// Queues groups until `depth` are on the GPU or the fetch ends.
    fn fill(&mut self) -> Result<(), DecodeError> {
        while self.groups_queued < self.depth {
            let waited = Instant::now();
            let Some(group) = self.planned.next() else {
                return Ok(());
            };
            self.report.io_wait_seconds += waited.elapsed().as_secs_f64();
            if let Some(t) = &mut self.trace {
                t.span("plan_wait", self.groups_launched, waited);
            }
            let group = group?;
            if let Some(t) = &mut self.trace {
                // The planning thread's view of the same group.
                let g = self.groups_launched;
                t.span_between("gather", g, group.gather_started, group.gathered);
                t.span_between("plan", g, group.gathered, group.planned);
            }
            self.report.fetch_wait_seconds += group.fetch_wait;
            self.report.plan_seconds += group.plan;
            self.launch_group(group)?;
        }
        Ok(())
    }

    /// Stages the row groups of a group (planned ahead by the planner) and
    /// queues the group.
    fn launch_group(&mut self, group: PlannedGroup) -> Result<(), DecodeError> {
        let planned = group.row_groups;
        self.report.bytes_read += planned.iter().map(|p| p.fetched.bytes_read).sum::<u64>();
        let started = Instant::now();
        let streams: Vec<&crate::cuda::Stream> = (0..planned.len())
            .map(|i| &self.gpu.streams[(self.launched + i) % self.gpu.streams.len()])
            .collect();
        let (gpu, inputs, schema, nestings) =
            (&self.gpu, &self.inputs, &self.schema, &self.nestings);
        let stage_one = |p: s1_plan_ahead::PlannedRowGroup| {
            let file = p.fetched.file;
            let input = &inputs[file];
            s2_upload_row_group::stage(
                gpu,
                s2_upload_row_group::Output {
                    file: input.source.location(),
                    metadata: &input.metadata,
                    schema,
                    nesting: nestings[file].clone(),
                },
                p.plan,
                p.fetched,
                &gpu.upload_stream,
            )
        };
        // The row groups are independent: with a staging pool they are
        // staged at once (their copies queued on the upload stream in any
        // order, all before the group's own copy and its event).
        let results: Vec<Result<s2_upload_row_group::Staged, DecodeError>> = match &self.stage_pool
        {
            Some(pool) if planned.len() > 1 => {
                use rayon::prelude::*;
                pool.install(|| planned.into_par_iter().map(stage_one).collect())
            }
            _ => planned.into_iter().map(stage_one).collect(),
        };
        let mut staged = Vec::with_capacity(results.len());
        let mut failed = None;
        for r in results {
            match r {
                Ok(s) => staged.push(s),
                Err(e) => {
                    failed.get_or_insert(e);
                }
            }
        }
        if let Some(e) = failed {
            // The staged ones' copies may still read and write buffers that
            // go back to their pools when they are dropped: wait for them
            // first (an error's path only).
            let _ = self.gpu.upload_stream.synchronize();
            drop(staged);
            return Err(e);
        }
        let first_row_group = self.launched;
        self.launched += staged.len();
        let staged_at = started.elapsed();
        let group_index = self.groups_launched;
        self.groups_launched += 1;
        let queue_started = std::time::Instant::now();
        let check_stream = self.gpu.check_stream_for(group_index);
        let mut queued = {
            let mut traced = self.trace.as_mut().map(|trace| {
                trace.span("stage", group_index, started);
                s3_to_s5_queue_group::TraceGroup {
                    trace,
                    group: group_index,
                    first_row_group,
                    nv_stream: &self.gpu.nvcomp_stream,
                    check_stream,
                    streams: &self.gpu.streams,
                }
            });
            QUEUE_SCRATCH.with_borrow_mut(|scratch| {
                scratch.set_walk_starts(self.gpu.kernels.config().scan_starts);
                s3_to_s5_queue_group::launch_group(
                    &self.gpu,
                    staged,
                    &streams,
                    check_stream,
                    scratch,
                    traced.as_mut(),
                )
            })?
        };
        if let Some(t) = &mut self.trace {
            t.span("queue", group_index, queue_started);
        }
        let queued_at = started.elapsed();
        // The group's host time, shared out over its row groups.
        let n = queued.len().max(1) as u32;
        for item in &mut queued {
            item.group_index = group_index;
            item.times.stage = staged_at / n;
            item.times.queue = (queued_at - staged_at) / n;
        }
        self.groups_queued += 1;
        self.queue.extend(queued);
        self.try_queue_pending()?;
        Ok(())
    }

    /// The next of `Gpu::late_streams`, in turn.
    fn next_late_stream(&mut self) -> usize {
        self.late_launched += 1;
        self.late_launched % self.gpu.late_streams.len()
    }

    /// Queues the kernels of every pending row group (DELTA_BYTE_ARRAY
    /// strings, `super::s5_delta_string_buffers`) whose values' sizes are in,
    /// without waiting for the others: the host never holds the next
    /// groups' uploads and decompression back for them.
    fn try_queue_pending(&mut self) -> Result<(), DecodeError> {
        for k in 0..self.queue.len() {
            if !self.queue[k].kernels_pending {
                continue;
            }
            let late = self.gpu.late_streams.len();
            let s = (self.late_launched + 1) % late;
            if self.queue[k].try_queue_pending(&self.gpu, &self.gpu.late_streams[s])? {
                self.next_late_stream();
            }
        }
        Ok(())
    }

    /// The next row group's batch, with the index of the group it was
    /// decoded in.
    fn step(&mut self) -> Option<Result<(DeviceBatch, usize), DecodeError>> {
        if let Err(e) = self.fill().and_then(|()| self.try_queue_pending()) {
            return Some(Err(e));
        }
        if self.queue.front().is_some_and(|item| item.kernels_pending) {
            // The row group is wanted now: its group's pending row groups
            // wait for their sizes (the groups behind are queued already).
            // A timeout here leaks the queue (`next`).
            let group = self.queue[0].group_index;
            for k in 0..self.queue.len() {
                if self.queue[k].group_index != group {
                    break;
                }
                let s = self.next_late_stream();
                let (gpu, limit) = (&self.gpu, self.device_timeout);
                if let Err(e) = self.queue[k].queue_pending(gpu, &gpu.late_streams[s], limit) {
                    return Some(Err(e));
                }
            }
        }
        let item = self.queue.pop_front()?;
        let group = item.group_index;
        if item.ends_group {
            self.groups_queued -= 1;
        }
        let (rows, bytes) = (item.rows(), item.output_bytes());
        let finish_started = std::time::Instant::now();
        let finished = item.finish(self.gpu.device.ordinal(), self.device_timeout);
        if let Some(t) = &mut self.trace {
            t.span("finish", self.groups_launched, finish_started);
        }
        self.report.device_pool = self.gpu.pool.stats().since(&self.pools_at_start.0);
        self.report.pinned_pool = self.gpu.pinned.stats().since(&self.pools_at_start.1);
        Some(finished.map(|(batch, times)| {
            self.report.add(rows, bytes, &times);
            (batch, group)
        }))
    }

    /// The next filtered batch: the row groups of one decoded group (they
    /// finish together) filtered in one pass, those keeping a row handed
    /// out in order; groups keeping none are passed over (without a
    /// filter, every row group is handed out, a group at a time).
    fn next_filtered(&mut self) -> Option<Result<DeviceBatch, DecodeError>> {
        loop {
            if let Some(batch) = self.filtered.pop_front() {
                return Some(Ok(batch));
            }
            let (first, group) = match self.step()? {
                Ok(finished) => finished,
                Err(e) => return Some(Err(e)),
            };
            let mut batches = vec![first];
            while self.queue.front().is_some_and(|i| i.group_index == group) {
                match self.step() {
                    Some(Ok((batch, _))) => batches.push(batch),
                    Some(Err(e)) => return Some(Err(e)),
                    None => break,
                }
            }
            let kept = match &self.filter {
                Some(filter) => filter.apply_many(batches, &mut self.report.filter),
                None => Ok(batches),
            };
            match kept {
                Ok(kept) => self.filtered.extend(kept),
                Err(e) => return Some(Err(e)),
            }
        }
    }
}

impl Drop for GpuStream {
    fn drop(&mut self) {
        if let Some(trace) = &self.trace {
            // A diagnostic: a trace that cannot be written is said, not fatal.
            if let Err(e) = trace.write() {
                eprintln!("gdscan: GDSCAN_DECODE_TRACE: {e}");
            }
        }
    }
}

impl Iterator for GpuStream {
    type Item = Result<DeviceBatch, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = match self.filter {
            Some(_) => self.next_filtered(),
            None => self.step().map(|r| r.map(|(batch, _)| batch)),
        };
        if matches!(item, Some(Err(_))) {
            // A failed row group ends the stream: never partial data after it.
            self.failed = true;
            if matches!(item, Some(Err(DecodeError::DeviceTimeout { .. }))) {
                // The GPU has not finished what is queued behind it either:
                // waiting for it (as dropping does) could never end, and
                // its buffers must not go back to the pools.
                self.queue.drain(..).for_each(std::mem::forget);
            }
            self.queue.clear();
            self.filtered.clear();
            self.groups_queued = 0;
        }
        item
    }
}
