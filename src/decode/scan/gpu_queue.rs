//! The GPU's side of a one-GPU pipeline ([`GpuQueue`]): the device's
//! resources, the threads that stage a group's row groups, and the row
//! groups queued on the GPU in launch order, `depth` groups at most. Each
//! group belongs to one job (`scan_job`): a decode of its own feeds it one,
//! the device's shared pipeline several in turn. Row groups finish in
//! launch order, so each job's come out in its own plan order.

use std::collections::VecDeque;
use std::time::Instant;

use super::gpu_resources::Gpu;
use super::s1_plan_ahead::{self, PlannedGroup};
use super::s2_upload_row_group;
use super::s3_to_s5_queue_group;
use super::s6_finish_row_group::InFlight;
use super::scan_job::{FinishedRowGroup, ScanJob};
use super::trace::Trace;
use super::{DecodeError, DecodeOptions};

/// A row group on the GPU, with the job it is for.
struct Queued {
    job: usize,
    item: InFlight,
}

/// A row group the GPU finished (or failed), with its job and group.
pub(crate) struct Finished {
    pub(crate) job: usize,
    /// The group's index in the queue's launch order.
    pub(crate) group: usize,
    /// The last row group of its group.
    pub(crate) ends_group: bool,
    pub(crate) result: Result<FinishedRowGroup, DecodeError>,
}

/// The GPU's resources and the row groups queued on it.
pub(crate) struct GpuQueue {
    /// First: queued work is waited for before the rest is dropped.
    queue: VecDeque<Queued>,
    /// The timeline, when `GDSCAN_DECODE_TRACE` asks for one.
    pub(crate) trace: Option<Trace>,
    pub(crate) gpu: Gpu,
    /// Groups handed to the GPU so far.
    groups_launched: usize,
    depth: usize,
    /// Groups with a row group in `queue`.
    groups_queued: usize,
    /// Row groups launched so far (they take the streams in turn).
    launched: usize,
    /// Pending row groups queued on `Gpu::late_streams` so far.
    late_launched: usize,
    /// Threads that stage a group's row groups at once
    /// (`DecodeOptions::stage_threads`); none stages them on the caller's.
    stage_pool: Option<rayon::ThreadPool>,
    /// `DecodeOptions::device_timeout`.
    device_timeout: std::time::Duration,
}

thread_local! {
    /// The host tables for queueing groups, kept on the thread that drives
    /// the queue (from one group and one scan to the next).
    static QUEUE_SCRATCH: std::cell::RefCell<s3_to_s5_queue_group::QueueScratch> =
        std::cell::RefCell::new(s3_to_s5_queue_group::QueueScratch::default());
}

/// The pool that stages a group's row groups, for `threads` above 1 (none
/// where its threads cannot start: the driving thread stages them then).
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

impl GpuQueue {
    /// An empty queue on `gpu`, with `options`' depth, staging threads and
    /// device timeout, recording `trace` when given.
    pub(crate) fn new(gpu: Gpu, options: &DecodeOptions, trace: Option<Trace>) -> GpuQueue {
        GpuQueue {
            queue: VecDeque::new(),
            trace,
            gpu,
            groups_launched: 0,
            depth: options.depth.max(1),
            groups_queued: 0,
            launched: 0,
            late_launched: 0,
            stage_pool: stage_pool(options.stage_threads),
            device_timeout: options.device_timeout,
        }
    }

    /// Whether another group may go on the GPU.
    pub(crate) fn has_room(&self) -> bool {
        self.groups_queued < self.depth
    }

    /// The groups the queue keeps on the GPU at most.
    pub(crate) fn depth(&self) -> usize {
        self.depth
    }

    /// Whether a row group of job `job` is queued.
    pub(crate) fn holds(&self, job: usize) -> bool {
        self.queue.iter().any(|q| q.job == job)
    }

    /// The job and group of the next row group to finish.
    pub(crate) fn front(&self) -> Option<(usize, usize)> {
        self.queue.front().map(|q| (q.job, q.item.group_index))
    }

    /// Records the wait for a group that began at `waited` (the timeline).
    pub(crate) fn trace_plan_wait(&mut self, waited: Instant, group: &PlannedGroup) {
        if let Some(t) = &mut self.trace {
            let g = self.groups_launched;
            t.span("plan_wait", g, waited);
            // The planning thread's view of the same group.
            t.span_between("gather", g, group.gather_started, group.gathered);
            t.span_between("plan", g, group.gathered, group.planned);
        }
    }

    /// Stages the row groups of `group` (planned ahead by job `job_id`'s
    /// planner) and queues the group on the GPU.
    pub(crate) fn launch_group(
        &mut self,
        job_id: usize,
        job: &ScanJob,
        group: PlannedGroup,
    ) -> Result<(), DecodeError> {
        let planned = group.row_groups;
        let started = Instant::now();
        let streams: Vec<&crate::cuda::Stream> = (0..planned.len())
            .map(|i| &self.gpu.streams[(self.launched + i) % self.gpu.streams.len()])
            .collect();
        let gpu = &self.gpu;
        // The job's parts the staging threads read (its planner is not
        // shared with them).
        let (inputs, schema, nestings) = (&job.inputs, &job.schema, &job.nestings);
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
        let queue_started = Instant::now();
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
        self.queue
            .extend(queued.into_iter().map(|item| Queued { job: job_id, item }));
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
    pub(crate) fn try_queue_pending(&mut self) -> Result<(), DecodeError> {
        for k in 0..self.queue.len() {
            if !self.queue[k].item.kernels_pending {
                continue;
            }
            let late = self.gpu.late_streams.len();
            let s = (self.late_launched + 1) % late;
            if self.queue[k]
                .item
                .try_queue_pending(&self.gpu, &self.gpu.late_streams[s])?
            {
                self.next_late_stream();
            }
        }
        Ok(())
    }

    /// Finishes the next row group: waits for its event, checks its pages
    /// and builds its batch. None when nothing is queued.
    ///
    /// After a `DecodeError::DeviceTimeout` the GPU has not finished what
    /// is queued behind either: the caller must [`GpuQueue::abandon`].
    pub(crate) fn finish_front(&mut self) -> Option<Finished> {
        if self.queue.front().is_some_and(|q| q.item.kernels_pending) {
            // The row group is wanted now: its group's pending row groups
            // wait for their sizes (the groups behind are queued already).
            let group = self.queue[0].item.group_index;
            for k in 0..self.queue.len() {
                if self.queue[k].item.group_index != group {
                    break;
                }
                let s = self.next_late_stream();
                let (gpu, limit) = (&self.gpu, self.device_timeout);
                if let Err(e) = self.queue[k]
                    .item
                    .queue_pending(gpu, &gpu.late_streams[s], limit)
                {
                    // The front row group fails with it (its group cannot
                    // be handed out whole).
                    let Queued { job, item } = self.queue.pop_front()?;
                    let ends_group = item.ends_group;
                    if ends_group {
                        self.groups_queued -= 1;
                    }
                    if matches!(e, DecodeError::DeviceTimeout { .. }) {
                        // The GPU may still write its buffers.
                        std::mem::forget(item);
                    }
                    return Some(Finished {
                        job,
                        group,
                        ends_group,
                        result: Err(e),
                    });
                }
            }
        }
        let Queued { job, item } = self.queue.pop_front()?;
        let group = item.group_index;
        let ends_group = item.ends_group;
        if ends_group {
            self.groups_queued -= 1;
        }
        let (rows, bytes) = (item.rows(), item.output_bytes());
        let finish_started = Instant::now();
        let finished = item.finish(self.gpu.device.ordinal(), self.device_timeout);
        if let Some(t) = &mut self.trace {
            t.span("finish", self.groups_launched, finish_started);
        }
        let result = finished.map(|(batch, times)| FinishedRowGroup {
            batch,
            rows,
            bytes,
            times,
        });
        Some(Finished {
            job,
            group,
            ends_group,
            result,
        })
    }

    /// Finishes the rest of the front group (the row groups queued after
    /// `first`, one of its row groups, up to its end), in order; after
    /// `first` or one of them failed, none more (the caller drops them).
    pub(crate) fn finish_rest_of_group(
        &mut self,
        first: &Finished,
    ) -> Vec<Result<FinishedRowGroup, DecodeError>> {
        let mut rest = Vec::new();
        let mut ends = first.ends_group || first.result.is_err();
        while !ends && self.front() == Some((first.job, first.group)) {
            match self.finish_front() {
                Some(f) => {
                    ends = f.ends_group || f.result.is_err();
                    rest.push(f.result);
                }
                None => break,
            }
        }
        rest
    }

    /// Drops every queued row group after a failure: a device timeout's
    /// are leaked (the GPU may still write their buffers, which must not go
    /// back to the pools), the others waited for as they drop.
    pub(crate) fn abandon(&mut self, timed_out: bool) {
        if timed_out {
            self.queue.drain(..).for_each(std::mem::forget);
        }
        self.queue.clear();
        self.groups_queued = 0;
    }

    /// Drops the queued row groups of job `job` (waiting for each: its
    /// buffers go back to the pools), after the job failed or its reader
    /// went away.
    pub(crate) fn drop_job(&mut self, job: usize) {
        let mut kept = VecDeque::with_capacity(self.queue.len());
        for q in self.queue.drain(..) {
            if q.job == job {
                if q.item.ends_group {
                    self.groups_queued -= 1;
                }
                drop(q);
            } else {
                kept.push_back(q);
            }
        }
        self.queue = kept;
    }
}
