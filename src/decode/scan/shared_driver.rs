//! The shared pipeline's driver ([`Driver`]): one thread per pipeline that
//! takes in decodes, launches their planned groups on the GPU's queue in
//! the turns `shared_schedule` gives, finishes the groups in launch order
//! and hands each to its decode's outbox (`shared_handover`).
//!
//! The driver works through two small traits, [`DriverQueue`] (the GPU's
//! side: `gpu_queue::GpuQueue`) and [`DriverJob`] (a decode's side:
//! `scan_job::ScanJob`), so that its rules are tested on the CPU with a
//! queue that finishes groups at once (`shared_pipeline_tests`).

use std::sync::mpsc::{Receiver, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::gpu_queue::GpuQueue;
use super::s1_plan_ahead::PlannedGroup;
use super::scan_job::{FinishedRowGroup, NextGroup, ScanJob};
use super::shared_handover::{lock, Outbox, Wake};
use super::shared_schedule::Schedule;
use super::{DecodeError, DecodeReport};
use crate::decode::array::DeviceBatch;

/// The longest the idle driver sleeps between looks at its decodes (each
/// planner, reader and new decode wakes it sooner).
const IDLE_LOOK: Duration = Duration::from_millis(50);

/// The GPU's side as the driver uses it.
pub(crate) trait DriverQueue {
    /// A decode's side.
    type Job: DriverJob;
    /// Whether another group may be launched.
    fn has_room(&self) -> bool;
    /// Launches `group` of decode `id`.
    fn launch(
        &mut self,
        id: usize,
        job: &Self::Job,
        group: <Self::Job as DriverJob>::Group,
    ) -> Result<(), DecodeError>;
    /// Finishes the front group (every row group of it, in order): its
    /// decode's id and its row groups, or the first failure. None when
    /// nothing is queued.
    #[allow(clippy::type_complexity)]
    fn finish_group(
        &mut self,
    ) -> Option<(
        usize,
        Result<Vec<<Self::Job as DriverJob>::Finished>, DecodeError>,
    )>;
    /// Forgets everything queued (a device timeout: nothing is reused).
    fn abandon(&mut self);
    /// Drops decode `id`'s queued groups (waiting for them).
    fn drop_job(&mut self, id: usize);
    /// Whether a group of decode `id` is queued.
    fn holds(&self, id: usize) -> bool;
}

/// A decode's side as the driver uses it.
pub(crate) trait DriverJob {
    /// A planned group.
    type Group;
    /// A finished row group.
    type Finished;
    /// The next planned group, without waiting.
    fn next_group(&mut self) -> NextGroup<Self::Group>;
    /// A finished group's row groups as the batches handed out.
    fn take_group(
        &mut self,
        finished: Vec<Self::Finished>,
    ) -> Result<Vec<DeviceBatch>, DecodeError>;
    /// The decode's report so far.
    fn report(&self) -> &DecodeReport;
}

impl DriverQueue for GpuQueue {
    type Job = ScanJob;

    fn has_room(&self) -> bool {
        GpuQueue::has_room(self)
    }

    fn launch(&mut self, id: usize, job: &ScanJob, group: PlannedGroup) -> Result<(), DecodeError> {
        self.launch_group(id, job, group)
    }

    fn finish_group(&mut self) -> Option<(usize, Result<Vec<FinishedRowGroup>, DecodeError>)> {
        let first = self.finish_front()?;
        let rest = self.finish_rest_of_group(&first);
        let finished = std::iter::once(first.result).chain(rest).collect();
        Some((first.job, finished))
    }

    fn abandon(&mut self) {
        GpuQueue::abandon(self, true);
    }

    fn drop_job(&mut self, id: usize) {
        GpuQueue::drop_job(self, id);
    }

    fn holds(&self, id: usize) -> bool {
        GpuQueue::holds(self, id)
    }
}

impl DriverJob for ScanJob {
    type Group = PlannedGroup;
    type Finished = FinishedRowGroup;

    fn next_group(&mut self) -> NextGroup<PlannedGroup> {
        ScanJob::next_group(self, false)
    }

    fn take_group(
        &mut self,
        finished: Vec<FinishedRowGroup>,
    ) -> Result<Vec<DeviceBatch>, DecodeError> {
        ScanJob::take_group(self, finished)
    }

    fn report(&self) -> &DecodeReport {
        &self.report
    }
}

/// A decode handed to the driver, with the outbox its reader takes from.
pub(crate) struct Submission<J> {
    pub(crate) job: J,
    pub(crate) outbox: Arc<Outbox>,
}

/// What the driver shares with the pipeline's other threads: its wake-up
/// counter, and the outboxes of the decodes handed in (which the
/// pipeline's end must reach when the driver is gone).
#[derive(Debug, Default)]
pub(crate) struct Hub {
    pub(crate) wake: Arc<Wake>,
    pub(crate) outboxes: Mutex<Vec<Arc<Outbox>>>,
}

impl Hub {
    /// Ends every decode handed in and not ended, with
    /// `DecodeError::PipelineEnded` saying `why` (the driver is gone).
    pub(crate) fn end_all(&self, why: &str) {
        for outbox in lock(&self.outboxes).drain(..) {
            if !lock(&outbox.state).ended {
                outbox.end(Some(DecodeError::PipelineEnded { why: why.into() }));
            }
        }
    }
}

/// The driver: the GPU's queue and the decodes feeding it.
pub(crate) struct Driver<Q: DriverQueue> {
    queue: Q,
    /// By the schedule's ids.
    jobs: Vec<Option<Submission<Q::Job>>>,
    schedule: Schedule,
    submissions: Receiver<Submission<Q::Job>>,
    hub: Arc<Hub>,
}

impl<Q: DriverQueue> Driver<Q> {
    /// A driver of `queue` (of `depth` groups) taking decodes from
    /// `submissions`.
    pub(crate) fn new(
        queue: Q,
        depth: usize,
        submissions: Receiver<Submission<Q::Job>>,
        hub: Arc<Hub>,
    ) -> Self {
        Driver {
            queue,
            jobs: Vec::new(),
            schedule: Schedule::new(depth),
            submissions,
            hub,
        }
    }

    /// Runs until a failure that ends every decode; why it ended.
    pub(crate) fn run(mut self) -> String {
        loop {
            let seen = self.hub.wake.seen();
            let more_may_come = self.take_submissions();
            if !more_may_come && self.jobs.iter().all(Option::is_none) {
                return "no decode is left and none can come".to_string();
            }
            self.look_at_readers();
            let launched = self.fill();
            let finished = match self.finish_group() {
                Ok(finished) => finished,
                Err(why) => return why,
            };
            self.retire();
            if !launched && !finished {
                self.hub.wake.wait_past(seen, IDLE_LOOK);
            }
        }
    }

    /// Adds the decodes handed in since the last look; false once no
    /// decode can come any more (the pipeline's sender is gone).
    fn take_submissions(&mut self) -> bool {
        loop {
            match self.submissions.try_recv() {
                Ok(submission) => {
                    let id = self.schedule.add();
                    if self.jobs.len() <= id {
                        self.jobs.resize_with(id + 1, || None);
                    }
                    self.jobs[id] = Some(submission);
                }
                Err(TryRecvError::Empty) => return true,
                Err(TryRecvError::Disconnected) => return false,
            }
        }
    }

    /// The groups each reader took; a reader gone closes its decode.
    fn look_at_readers(&mut self) {
        for id in 0..self.jobs.len() {
            let Some(active) = &self.jobs[id] else {
                continue;
            };
            let st = lock(&active.outbox.state);
            let (taken, gone) = (st.taken, st.reader_gone);
            drop(st);
            self.schedule.set_taken(id, taken);
            if gone && !self.schedule.is_closed(id) {
                self.schedule.close(id);
                self.queue.drop_job(id);
            }
        }
    }

    /// Ends decode `id` with `e` (its queued groups waited for and dropped).
    fn fail(&mut self, id: usize, e: DecodeError) {
        self.schedule.close(id);
        self.queue.drop_job(id);
        if let Some(active) = &self.jobs[id] {
            active.outbox.end(Some(e));
        }
    }

    /// Launches planned groups, the decodes in turn, while the GPU's queue
    /// has room; whether it launched one.
    fn fill(&mut self) -> bool {
        let mut any = false;
        while self.queue.has_room() {
            let mut launched = false;
            for id in self.schedule.candidates() {
                let Some(mut active) = self.jobs[id].take() else {
                    continue;
                };
                let outcome = match active.job.next_group() {
                    NextGroup::NotYet => None,
                    NextGroup::End => {
                        self.schedule.planned_all(id);
                        None
                    }
                    NextGroup::Failed(e) => Some(Err(e)),
                    NextGroup::Ready(group) => Some(self.queue.launch(id, &active.job, group)),
                };
                self.jobs[id] = Some(active);
                match outcome {
                    None => {}
                    Some(Ok(())) => {
                        self.schedule.launched(id);
                        launched = true;
                        break;
                    }
                    Some(Err(e)) => self.fail(id, e),
                }
            }
            if !launched {
                break;
            }
            any = true;
        }
        any
    }

    /// Finishes the GPU's front group and hands it to its decode; whether
    /// there was one. A device timeout ends the pipeline (Err: why).
    fn finish_group(&mut self) -> Result<bool, String> {
        let Some((id, finished)) = self.queue.finish_group() else {
            return Ok(false);
        };
        let finished = match finished {
            Ok(finished) => finished,
            Err(e @ DecodeError::DeviceTimeout { .. }) => {
                // The GPU did not finish: nothing queued behind can be
                // trusted to end, and its buffers must not be reused.
                self.queue.abandon();
                let why = e.to_string();
                self.fail(id, e);
                return Err(why);
            }
            Err(e) => {
                self.fail(id, e);
                return Ok(true);
            }
        };
        let Some(active) = self.jobs[id].as_mut() else {
            return Ok(true);
        };
        match active.job.take_group(finished) {
            Ok(batches) => active.outbox.put(Ok(batches), active.job.report()),
            Err(e) => self.fail(id, e),
        }
        Ok(true)
    }

    /// Ends the decodes that launch no more and have nothing on the GPU.
    fn retire(&mut self) {
        for id in 0..self.jobs.len() {
            if self.jobs[id].is_none() || !self.schedule.done_launching(id) || self.queue.holds(id)
            {
                continue;
            }
            if let Some(active) = self.jobs[id].take() {
                active.outbox.end(None);
                let outbox = active.outbox.clone();
                // Joins the decode's planner (its fetch stops).
                drop(active);
                lock(&self.hub.outboxes).retain(|o| !Arc::ptr_eq(o, &outbox));
            }
            self.schedule.remove(id);
        }
    }
}
