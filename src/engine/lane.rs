//! A worker's lane to one device: its own stream and two pipeline slots.
//!
//! Each slot owns what a queued copy still reads from (a pinned bounce buffer
//! or a page-cache registration) and an event recorded after that copy. A
//! slot is reused only after its event completes, so the read into one slot
//! overlaps the copy out of the other (KvikIO reads, copies, then waits: its
//! issue #520). Waiting is per event, never a device-wide synchronise.
//!
//! The lane outlives requests. A worker that has finished its share of a
//! request does not wait for its last copies: it hands the request to the
//! lane (`Lane::defer`), which completes it once an event recorded after
//! those copies has been seen complete, while the worker goes on with the
//! next request. So small requests (a row group's chunks) still overlap
//! reads with copies, as one large request does. A lane whose worker runs
//! out of work is settled ([`Lane::drain`]) before the worker sleeps.

use std::sync::Arc;

use super::bounce::BouncePool;
use super::error::IoError;
use super::error::Result;
use super::request::Request;
use crate::cuda::{Device, Event, HostRegistration, PinnedBuffer, Stream};

/// Slots per lane: two is enough to overlap one read with one copy.
pub(super) const SLOTS_PER_LANE: usize = 2;

#[derive(Debug)]
struct Slot {
    event: Event,
    /// The lane's commit number when `event` was last recorded.
    seq: u64,
    bounce: Option<PinnedBuffer>,
    registration: Option<HostRegistration>,
}

/// A device lane.
#[derive(Debug)]
pub(super) struct Lane {
    device: Device,
    /// The device's bounce pool: the slots' buffers come from it and go
    /// back to it.
    pool: Arc<BouncePool>,
    stream: Stream,
    slots: Vec<Slot>,
    next: usize,
    /// Commits so far (the number of the latest one).
    seq: u64,
    /// Every commit numbered up to this one has completed.
    done_through: u64,
    /// Requests whose helper share is over but whose copies, up to the
    /// given commit, may still run.
    waiting: Vec<(Arc<Request>, u64)>,
}

impl Lane {
    /// Creates the stream and the slots' events on `device`, whose bounce
    /// buffers come from `pool`.
    pub(super) fn new(device: Device, pool: Arc<BouncePool>) -> Result<Lane> {
        let stream = Stream::new(device)?;
        let slots = (0..SLOTS_PER_LANE)
            .map(|_| {
                Ok(Slot {
                    event: Event::new(device)?,
                    seq: 0,
                    bounce: None,
                    registration: None,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Lane {
            device,
            pool,
            stream,
            slots,
            next: 0,
            seq: 0,
            done_through: 0,
            waiting: Vec::new(),
        })
    }

    /// The lane's device.
    pub(super) fn device(&self) -> Device {
        self.device
    }

    /// The size of the lane's bounce buffers.
    pub(super) fn bounce_size(&self) -> usize {
        self.pool.buffer_size()
    }

    /// The lane's stream.
    pub(super) fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Waits until the next slot is free (its last copy finished), releases
    /// what it held, and returns its index.
    pub(super) fn next_slot(&mut self) -> Result<usize> {
        let index = self.next;
        self.next = (self.next + 1) % self.slots.len();
        let slot = &mut self.slots[index];
        slot.event.synchronize()?;
        slot.registration = None;
        let seq = slot.seq;
        self.completed(seq);
        Ok(index)
    }

    /// Notes that every commit up to `seq` has completed (one stream: a
    /// completed event implies every earlier one) and completes the
    /// requests that waited for no more than that.
    ///
    /// The page registrations of those commits are dropped first: a waiting
    /// request, once completed, may unmap the pages it lent (its file
    /// mapping), and a range still registered after its munmap would stay
    /// registered for whatever is mapped there next (a later host buffer
    /// then fails its copies with CUDA_ERROR_INVALID_VALUE).
    fn completed(&mut self, seq: u64) {
        if seq <= self.done_through {
            return;
        }
        for slot in &mut self.slots {
            if slot.seq <= seq {
                slot.registration = None;
            }
        }
        self.done_through = seq;
        let through = self.done_through;
        self.waiting.retain(|(req, last)| {
            if *last <= through {
                req.helper_done();
                false
            } else {
                true
            }
        });
    }

    /// Hands over a request whose tasks this worker has finished: it is
    /// completed (for this helper) once the copies committed so far have
    /// finished, which may be now.
    pub(crate) fn defer(&mut self, req: Arc<Request>) {
        if self.seq <= self.done_through {
            req.helper_done();
        } else {
            self.waiting.push((req, self.seq));
        }
    }

    /// Completes, without blocking, the waiting requests whose copies have
    /// finished.
    pub(super) fn reap(&mut self) -> Result<()> {
        let mut best = self.done_through;
        for slot in &mut self.slots {
            if slot.seq > best && slot.event.is_complete()? {
                best = slot.seq;
            }
        }
        self.completed(best);
        Ok(())
    }

    /// The slot's bounce buffer, taken from the device's pool on first use.
    pub(super) fn bounce(&mut self, index: usize) -> Result<&mut PinnedBuffer> {
        let slot = &mut self.slots[index];
        if slot.bounce.is_none() {
            slot.bounce = Some(self.pool.acquire()?);
        }
        Ok(slot.bounce.as_mut().expect("just filled"))
    }

    /// Records the slot's event after the copies queued so far, keeping
    /// `registration` alive until that event completes.
    pub(super) fn commit(
        &mut self,
        index: usize,
        registration: Option<HostRegistration>,
    ) -> Result<()> {
        let slot = &mut self.slots[index];
        slot.event.record(&self.stream)?;
        slot.registration = registration;
        self.seq += 1;
        slot.seq = self.seq;
        Ok(())
    }

    /// Waits for the copies committed to slot `index`.
    pub(super) fn wait(&mut self, index: usize) -> Result<()> {
        self.slots[index].event.synchronize()?;
        let seq = self.slots[index].seq;
        self.completed(seq);
        Ok(())
    }

    /// Waits for every queued copy, drops registrations, returns the bounce
    /// buffers to the pool and completes every waiting request (a failed
    /// wait fails them). The first error is returned, but every slot is
    /// drained regardless.
    pub(super) fn drain(&mut self) -> Result<()> {
        let pool = &self.pool;
        let mut first_err = None;
        for slot in &mut self.slots {
            if let Err(e) = slot.event.synchronize() {
                first_err.get_or_insert(e);
            }
            slot.registration = None;
            if let Some(buf) = slot.bounce.take() {
                pool.release(buf);
            }
        }
        self.next = 0;
        if let Some(e) = &first_err {
            for (req, _) in &self.waiting {
                req.fail(IoError::DeviceCopy {
                    path: req.file.path.clone(),
                    source: e.clone(),
                });
            }
        }
        let seq = self.seq;
        self.completed(seq);
        match first_err {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    }
}
