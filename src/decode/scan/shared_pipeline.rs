//! The device's shared pipeline (`GDSCAN_DECODE_PIPELINE=shared`): decodes
//! on one GPU draw from one pipeline instead of each opening its own.
//!
//! One driver thread per device (and per set of the options that shape the
//! GPU's side: streams, depth, checks, kernels) owns the GPU's streams,
//! staging threads and queue of groups (`gpu_queue`), `depth` groups on
//! the GPU for all decodes together. Each decode keeps its own side
//! (`scan_job`: its fetch, its planner running ahead, its filter, its
//! report), started on the caller's thread and handed to the driver. The
//! driver launches the planned groups of the decodes in turn
//! (`shared_schedule`), finishes them in launch order and puts each
//! finished group (filtered, where the decode has a filter) in its
//! decode's outbox, from which the decode's reader ([`SharedStream`])
//! takes it. A decode holds few groups at once, so one whose reader stops
//! reading holds up only itself.
//!
//! Failures: one decode's failure (a corrupt page, a refused group) ends
//! that decode only; a device timeout or a panic of the driver ends every
//! decode on the pipeline with a typed error, and the next decode starts a
//! new pipeline.

use std::collections::{HashMap, VecDeque};
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use arrow::datatypes::SchemaRef;

use super::gpu_queue::GpuQueue;
use super::gpu_resources::JobResources;
use super::one_gpu::{checked_outputs, open_gpu};
use super::s7_filter_rows::ExactFilter;
use super::scan_job::ScanJob;
use super::shared_driver::{Driver, Hub, Submission};
use super::shared_handover::{lock, Outbox, Wake};
use super::{DecodeError, DecodeInput, DecodeOptions, DecodeReport};
use crate::decode::array::DeviceBatch;

/// One device's shared pipeline: where decodes are handed in.
struct Pipeline {
    /// None once the driver ended: no decode is handed in after.
    submit: Mutex<Option<Sender<Submission<ScanJob>>>>,
    /// The driver's wake-up counter and the outboxes handed in.
    hub: Arc<Hub>,
    /// What each decode's own side takes from the GPU.
    resources: JobResources,
    device: usize,
}

/// The pipelines of the process, by device and the options that shape
/// the GPU's side.
fn pipelines() -> &'static Mutex<HashMap<String, Arc<Pipeline>>> {
    static ALL: OnceLock<Mutex<HashMap<String, Arc<Pipeline>>>> = OnceLock::new();
    ALL.get_or_init(Default::default)
}

/// The options a pipeline is made with (decodes with other values get a
/// pipeline of their own).
fn pipeline_key(device: usize, o: &DecodeOptions) -> String {
    format!(
        "{device}|{:?}|{:?}|{}|{}|{}|{:?}|{:?}|{}|{}|{:?}|{:?}|{:?}|{}|{:?}|{:?}",
        o.depth,
        o.check,
        o.gpu_check_max,
        o.snappy_split,
        o.check_stream,
        o.snappy_decoder,
        o.check_streams,
        o.streams,
        o.stage_threads,
        o.string_walks,
        o.kernels,
        o.device_pool,
        o.device_timeout.as_nanos(),
        o.zstd,
        o.gzip,
    )
}

/// Seconds the GPU's context and resources took to open.
type OpenSeconds = (f64, f64);

/// The pipeline for `device` and `options`, started on first use (the GPU
/// opened, the driver thread started); the opening's seconds when this
/// call started it.
fn pipeline(
    device: usize,
    options: &DecodeOptions,
) -> Result<(Arc<Pipeline>, Option<OpenSeconds>), DecodeError> {
    let key = pipeline_key(device, options);
    let mut all = lock(pipelines());
    if let Some(p) = all.get(&key) {
        return Ok((p.clone(), None));
    }
    let (gpu, context_seconds, resources_seconds) = open_gpu(device, options)?;
    let (tx, rx) = channel();
    let pipeline = Arc::new(Pipeline {
        submit: Mutex::new(Some(tx)),
        hub: Arc::new(Hub::default()),
        resources: gpu.job_resources(),
        device,
    });
    let queue = GpuQueue::new(gpu, options, None);
    let depth = queue.depth();
    let driver = Driver::new(queue, depth, rx, pipeline.hub.clone());
    let for_thread = pipeline.clone();
    let key_for_thread = key.clone();
    std::thread::Builder::new()
        .name(format!("gdscan-shared-{device}"))
        .spawn(move || {
            let why = match crate::border::catch(move || driver.run()) {
                Ok(why) => why,
                Err(panic) => format!("its thread panicked: {}", panic.message()),
            };
            for_thread.end(&key_for_thread, &why);
        })
        .map_err(|e| DecodeError::PipelineEnded {
            why: format!("its thread could not start: {e}"),
        })?;
    all.insert(key, pipeline.clone());
    Ok((pipeline, Some((context_seconds, resources_seconds))))
}

impl Pipeline {
    /// Hands `job` in; its outbox.
    fn submit(&self, job: ScanJob) -> Result<Arc<Outbox>, DecodeError> {
        let outbox = Arc::new(Outbox::default());
        let submit = lock(&self.submit);
        let sent = submit.as_ref().is_some_and(|tx| {
            tx.send(Submission {
                job,
                outbox: outbox.clone(),
            })
            .is_ok()
        });
        if !sent {
            return Err(DecodeError::PipelineEnded {
                why: "it ended before the decode was handed in".into(),
            });
        }
        lock(&self.hub.outboxes).push(outbox.clone());
        drop(submit);
        self.hub.wake.bump();
        Ok(outbox)
    }

    /// The driver ended (`why`): no decode is handed in after, every
    /// decode not ended ends with an error, and the next decode on the
    /// device starts a new pipeline.
    fn end(self: &Arc<Self>, key: &str, why: &str) {
        let mut all = lock(pipelines());
        if all.get(key).is_some_and(|p| Arc::ptr_eq(p, self)) {
            all.remove(key);
        }
        drop(all);
        // Under the submit lock: a decode is either in `outboxes` or refused.
        lock(&self.submit).take();
        self.hub.end_all(why);
    }
}

/// A decode on the device's shared pipeline: device batches, one per row
/// group (with a filter, one per row group that keeps a row), in plan
/// order. Dropping it stops the decode (its queued groups are waited for
/// and dropped by the driver); batches already handed out stay valid.
pub(crate) struct SharedStream {
    outbox: Arc<Outbox>,
    wake: Arc<Wake>,
    schema: SchemaRef,
    device: usize,
    /// Batches of the group being read.
    batches: VecDeque<DeviceBatch>,
    done: bool,
    /// Seconds the GPU's opening took, when this decode started the
    /// pipeline.
    opened: Option<OpenSeconds>,
}

impl std::fmt::Debug for SharedStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedStream")
            .field("device", &self.device)
            .field("done", &self.done)
            .finish()
    }
}

/// Starts decoding `inputs` (files with their plans, streamed as one
/// table) on `device`'s shared pipeline. Every column is checked against
/// the decoder's coverage first, before any read.
pub(crate) fn decode_shared(
    inputs: Vec<DecodeInput>,
    options: DecodeOptions,
    device: usize,
    filter: Option<ExactFilter>,
) -> Result<SharedStream, DecodeError> {
    let outputs = checked_outputs(&inputs)?;
    let (pipeline, opened) = pipeline(device, &options)?;
    let wake = pipeline.hub.wake.clone();
    let notify_wake = wake.clone();
    let notify: super::s1_plan_ahead::Notify = Arc::new(move || notify_wake.bump());
    let mut job = ScanJob::start(
        inputs,
        outputs,
        &options,
        &pipeline.resources,
        filter,
        // A decode alone on the pipeline may hold its depth of groups, as
        // one of its own does: its fetch may run as far ahead.
        options.depth,
        Some(notify),
    )?;
    job.report.shared_pipeline = true;
    let schema = job.output_schema().clone();
    let outbox = pipeline.submit(job)?;
    Ok(SharedStream {
        outbox,
        wake,
        schema,
        device: pipeline.device,
        batches: VecDeque::new(),
        done: false,
        opened,
    })
}

impl SharedStream {
    /// The batches' schema.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The GPU the batches land on.
    pub(crate) fn device(&self) -> usize {
        self.device
    }

    /// What the decoder has done so far (as of its last finished group).
    pub(crate) fn report(&self) -> DecodeReport {
        let mut report = lock(&self.outbox.state).report.clone();
        report.shared_pipeline = true;
        if let Some((context, resources)) = self.opened {
            report.context_seconds = context;
            report.resources_seconds = resources;
        }
        report
    }
}

impl Iterator for SharedStream {
    type Item = Result<DeviceBatch, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(batch) = self.batches.pop_front() {
                return Some(Ok(batch));
            }
            if self.done {
                return None;
            }
            let mut st = lock(&self.outbox.state);
            while st.groups.is_empty() && !st.ended {
                st = self
                    .outbox
                    .ready
                    .wait(st)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            let Some(group) = st.groups.pop_front() else {
                self.done = true; // ended, nothing left
                return None;
            };
            st.taken += 1;
            drop(st);
            self.wake.bump(); // the decode has room for another group
            match group {
                Ok(batches) => self.batches.extend(batches),
                Err(e) => {
                    // A failure ends the decode: never partial data after it.
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl Drop for SharedStream {
    fn drop(&mut self) {
        let mut st = lock(&self.outbox.state);
        st.reader_gone = true;
        st.groups.clear();
        drop(st);
        self.wake.bump();
    }
}

#[cfg(test)]
impl SharedStream {
    /// A reader of `outbox` woken by `wake`, as `decode_shared` makes one
    /// (for the tests, which play the driver).
    pub(crate) fn for_test(
        outbox: Arc<Outbox>,
        wake: Arc<Wake>,
        schema: SchemaRef,
    ) -> SharedStream {
        SharedStream {
            outbox,
            wake,
            schema,
            device: 0,
            batches: VecDeque::new(),
            done: false,
            opened: None,
        }
    }
}
