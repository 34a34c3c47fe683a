//! The worker pool: a fixed set of threads, each with a bounded queue.
//!
//! A request is not split into queued tasks. Instead the request itself is
//! handed to up to `threads` workers, and each worker claims task indices
//! from the request's counter until none are left. The queues hold requests,
//! at most [`QUEUE_DEPTH`] per worker, so memory stays constant whatever the
//! request's size (KvikIO queues every task at once: its issue #1064).

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use super::bounce::BouncePool;
use super::error::IoError;
use super::lane::Lane;
use super::memory::Memory;
use super::request::Request;
use super::transfer::run_task;
use crate::error::{Error, Result};

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
    /// Starts `count` workers sharing `bounce`.
    pub(crate) fn new(count: usize, bounce: Arc<BouncePool>) -> Result<Self> {
        let count = count.max(1);
        let mut queues = Vec::with_capacity(count);
        let mut threads = Vec::with_capacity(count);
        for i in 0..count {
            let (tx, rx) = sync_channel::<Arc<Request>>(QUEUE_DEPTH);
            let bounce = bounce.clone();
            let handle = std::thread::Builder::new()
                .name(format!("gdscan-io-{i}"))
                .spawn(move || worker_loop(rx, &bounce))
                .map_err(|e| Error::io("<worker pool>", "spawn thread", e))?;
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
            return Err(IoError::PoolStopped.into());
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
            req.fail(IoError::PoolStopped.into());
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

fn worker_loop(rx: Receiver<Arc<Request>>, bounce: &BouncePool) {
    let mut state = WorkerState::default();
    loop {
        let req = match rx.try_recv() {
            Ok(req) => req,
            Err(TryRecvError::Empty) => {
                // Out of work: finish what the lanes still hold before sleeping.
                state.settle(bounce);
                match rx.recv() {
                    Ok(req) => req,
                    Err(_) => break,
                }
            }
            Err(TryRecvError::Disconnected) => break,
        };
        let outcome = catch_unwind(AssertUnwindSafe(|| help(&req, &mut state, bounce)));
        match outcome {
            Ok(Ok(Share::Deferred)) => {}
            Ok(Ok(Share::Done)) => req.helper_done(),
            Ok(Err(e)) => {
                req.fail(e);
                req.helper_done();
            }
            Err(_) => {
                // A lane may be mid-pipeline after a panic: settle what it
                // owes, then drop it entirely.
                let _ = catch_unwind(AssertUnwindSafe(|| state.settle(bounce)));
                state.lanes.clear();
                req.fail(Error::io(
                    &req.file.path,
                    "worker",
                    std::io::Error::other("an I/O worker panicked"),
                ));
                req.helper_done();
            }
        }
    }
    state.settle(bounce);
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
    fn settle(&mut self, bounce: &BouncePool) {
        for lane in self.lanes.values_mut() {
            let _ = lane.drain(bounce);
        }
    }
}

/// Claims and runs tasks of `req` until none are left. Device copies it
/// queued are left to the lane, which completes this share once they finish.
fn help(req: &Arc<Request>, state: &mut WorkerState, bounce: &BouncePool) -> Result<Share> {
    let device = match req.memory {
        Memory::Device { device, .. } => Some(device),
        Memory::Host { .. } => None,
    };
    // Only the lane of this request's device keeps bounce buffers and
    // waiting requests (so workers on different devices can never hold each
    // other's buffers); the others are settled first.
    for (&ordinal, lane) in state.lanes.iter_mut() {
        if device.map(|d| d.ordinal()) != Some(ordinal) {
            let _ = lane.drain(bounce);
        }
    }
    let Some(device) = device else {
        while let Some(task) = req.claim() {
            run_task(req, task, None, bounce)?;
        }
        return Ok(Share::Done);
    };
    device.bind()?;
    let lane = match state.lanes.entry(device.ordinal()) {
        std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
        std::collections::hash_map::Entry::Vacant(v) => v.insert(Lane::new(device)?),
    };
    // Complete what earlier requests' copies have finished since.
    let _ = lane.reap();
    while let Some(task) = req.claim() {
        if let Err(e) = run_task(req, task, Some(lane), bounce) {
            let _ = lane.drain(bounce);
            return Err(e);
        }
    }
    lane.defer(req.clone());
    Ok(Share::Deferred)
}
