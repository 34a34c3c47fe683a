//! The worker pool: a fixed set of threads, each with a bounded queue.
//!
//! A request is not split into queued tasks. Instead the request itself is
//! handed to up to `threads` workers, and each worker claims task indices
//! from the request's counter until none are left. The queues hold requests,
//! at most [`QUEUE_DEPTH`] per worker, so memory stays constant whatever the
//! request's size (KvikIO queues every task at once: its issue #1064).

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::bounce::BouncePools;
use super::error::{IoError, Result};
use super::lane::Lane;
use super::memory::Memory;
use super::request::Request;
use super::transfer::run_task;

/// Requests a worker may have waiting before a submitter blocks.
pub(super) const QUEUE_DEPTH: usize = 16;

/// The pool.
#[derive(Debug)]
pub(crate) struct WorkerPool {
    queues: Mutex<Vec<SyncSender<Arc<Request>>>>,
    threads: Mutex<Vec<JoinHandle<()>>>,
    count: usize,
    next: AtomicUsize,
}

/// What a worker keeps between requests: one lane per device it served.
#[derive(Default)]
struct WorkerState {
    lanes: HashMap<usize, Lane>,
}

impl WorkerPool {
    /// Starts `count` workers sharing the per-device pools of `bounce`.
    pub(crate) fn new(count: usize, bounce: Arc<BouncePools>) -> Result<Self> {
        let count = count.max(1);
        let mut queues = Vec::with_capacity(count);
        let mut threads = Vec::with_capacity(count);
        for i in 0..count {
            let (tx, rx) = sync_channel::<Arc<Request>>(QUEUE_DEPTH);
            let bounce = bounce.clone();
            let handle = std::thread::Builder::new()
                .name(format!("gdscan-io-{i}"))
                .spawn(move || worker_loop(rx, &bounce))
                .map_err(|e| IoError::os("<worker pool>", "spawn thread", e))?;
            queues.push(tx);
            threads.push(handle);
        }
        Ok(WorkerPool {
            queues: Mutex::new(queues),
            threads: Mutex::new(threads),
            count,
            next: AtomicUsize::new(0),
        })
    }

    /// Number of workers.
    pub(crate) fn len(&self) -> usize {
        self.count
    }

    /// Hands `req` to as many workers as it has tasks (at most all of them).
    pub(crate) fn submit(&self, req: Arc<Request>) -> Result<()> {
        let helpers = req.split.count().min(self.count).max(1);
        req.set_helpers(helpers);
        let queues = self
            .queues
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if queues.is_empty() {
            for _ in 0..helpers {
                req.helper_done();
            }
            return Err(IoError::PoolStopped);
        }
        let start = self.next.fetch_add(helpers, Ordering::Relaxed);
        let mut sent = 0;
        for i in 0..helpers {
            if queues[(start + i) % queues.len()].send(req.clone()).is_ok() {
                sent += 1;
            } else {
                req.helper_done();
            }
        }
        if sent == 0 {
            req.fail(IoError::PoolStopped);
        }
        Ok(())
    }
}

impl Drop for WorkerPool {
    fn drop(&mut self) {
        self.queues
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        for t in self
            .threads
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            let _ = t.join();
        }
    }
}

fn worker_loop(rx: Receiver<Arc<Request>>, bounce: &BouncePools) {
    let mut state = WorkerState::default();
    loop {
        let req = match rx.try_recv() {
            Ok(req) => req,
            Err(TryRecvError::Empty) => {
                // Out of work: finish what the lanes still hold before sleeping.
                state.settle();
                match rx.recv() {
                    Ok(req) => req,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        let outcome = crate::border::catch(|| help(&req, &mut state, bounce));
        match outcome {
            Ok(Ok(Share::Deferred)) => {}
            Ok(Ok(Share::Done)) => req.helper_done(),
            Ok(Err(e)) => {
                req.fail(e);
                req.helper_done();
            }
            Err(panic) => {
                // A lane may be mid-pipeline after a panic: settle what it
                // owes, then drop it entirely.
                let _ = crate::border::catch(|| state.settle());
                state.lanes.clear();
                req.fail(IoError::os(
                    &req.file.path,
                    "worker",
                    std::io::Error::other(format!("an I/O worker panicked: {}", panic.message())),
                ));
                req.helper_done();
            }
        }
    }
    state.settle();
}

/// How a worker's share of a request ended.
enum Share {
    /// Finished: the worker reports it done now.
    Done,
    /// Tasks finished, copies maybe still running: the lane reports it done
    /// when they have.
    Deferred,
}

impl WorkerState {
    /// Waits for every lane's copies and completes the requests waiting on
    /// them (a failed wait fails those requests).
    fn settle(&mut self) {
        for lane in self.lanes.values_mut() {
            let _ = lane.drain();
        }
    }

    /// Completes, without blocking, what every lane has finished, so that
    /// device requests are not held back while this worker reads into host
    /// memory.
    fn reap_all(&mut self) {
        for lane in self.lanes.values_mut() {
            let _ = lane.reap();
        }
    }
}

/// Claims and runs tasks of `req` until none are left. Device copies it
/// queued are left to the lane, which completes this share once they finish.
///
/// A worker keeps a lane per device it has served, each holding at most its
/// two slots' buffers of that device's own pool, so lanes of other devices
/// need not be drained before serving this one (each pool has two buffers
/// per worker: nobody can starve). Their finished copies are reaped between
/// tasks instead, without waiting.
fn help(req: &Arc<Request>, state: &mut WorkerState, bounce: &BouncePools) -> Result<Share> {
    let device = match req.memory {
        Memory::Device { device, .. } => Some(device),
        Memory::Host { .. } => None,
    };
    let Some(device) = device else {
        state.reap_all();
        while let Some(task) = req.claim() {
            run_task(req, task, None)?;
            state.reap_all();
        }
        return Ok(Share::Done);
    };
    device.bind()?;
    let ordinal = device.ordinal();
    let lane = match state.lanes.remove(&ordinal) {
        Some(lane) => lane,
        None => Lane::new(device, bounce.of(device))?,
    };
    // Out of the map while it works (so the other lanes can be reaped), and
    // back in it however this ends, a panic included (the worker then
    // settles it with the others).
    let mut held = HeldLane {
        lanes: &mut state.lanes,
        ordinal,
        lane: Some(lane),
    };
    held.reap_others();
    let lane = held.lane.as_mut().expect("held until drop");
    // Complete what earlier requests' copies have finished since.
    let _ = lane.reap();
    while let Some(task) = req.claim() {
        let lane = held.lane.as_mut().expect("held until drop");
        if let Err(e) = run_task(req, task, Some(lane)) {
            let _ = lane.drain();
            return Err(e);
        }
        held.reap_others();
    }
    held.lane
        .as_mut()
        .expect("held until drop")
        .defer(req.clone());
    Ok(Share::Deferred)
}

/// A worker's lane to one device, taken out of its map while a request to
/// that device runs, put back on drop.
struct HeldLane<'a> {
    lanes: &'a mut HashMap<usize, Lane>,
    ordinal: usize,
    lane: Option<Lane>,
}

impl HeldLane<'_> {
    /// Completes, without blocking, what the lanes of the other devices
    /// have finished, so that requests to one GPU are not held back while
    /// this worker serves another.
    fn reap_others(&mut self) {
        for lane in self.lanes.values_mut() {
            let _ = lane.reap();
        }
    }
}

impl Drop for HeldLane<'_> {
    fn drop(&mut self) {
        if let Some(lane) = self.lane.take() {
            self.lanes.insert(self.ordinal, lane);
        }
    }
}
