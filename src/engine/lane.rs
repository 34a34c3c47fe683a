//! A worker's lane to one device: its own stream and two pipeline slots.
//!
//! Each slot owns what a queued copy still reads from (a pinned bounce buffer
//! or a page-cache registration) and an event recorded after that copy. A
//! slot is reused only after its event completes, so the read into one slot
//! overlaps the copy out of the other (KvikIO reads, copies, then waits: its
//! issue #520). Waiting is per event, never a device-wide synchronise.

use super::bounce::BouncePool;
use crate::cuda::{Device, Event, HostRegistration, PinnedBuffer, Stream};
use crate::error::Result;

/// Slots per lane: two is enough to overlap one read with one copy.
pub const SLOTS_PER_LANE: usize = 2;

#[derive(Debug)]
struct Slot {
    event: Event,
    bounce: Option<PinnedBuffer>,
    registration: Option<HostRegistration>,
}

/// A device lane.
#[derive(Debug)]
pub struct Lane {
    device: Device,
    stream: Stream,
    slots: Vec<Slot>,
    next: usize,
}

impl Lane {
    /// Creates the stream and the slots' events on `device`.
    pub fn new(device: Device) -> Result<Lane> {
        let stream = Stream::new(device)?;
        let slots = (0..SLOTS_PER_LANE)
            .map(|_| {
                Ok(Slot {
                    event: Event::new(device)?,
                    bounce: None,
                    registration: None,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Lane {
            device,
            stream,
            slots,
            next: 0,
        })
    }

    /// The lane's device.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The lane's stream.
    pub fn stream(&self) -> &Stream {
        &self.stream
    }

    /// Waits until the next slot is free (its last copy finished), releases
    /// what it held, and returns its index.
    pub fn next_slot(&mut self) -> Result<usize> {
        let index = self.next;
        self.next = (self.next + 1) % self.slots.len();
        let slot = &mut self.slots[index];
        slot.event.synchronize()?;
        slot.registration = None;
        Ok(index)
    }

    /// The slot's bounce buffer, taken from `pool` on first use.
    pub fn bounce(&mut self, index: usize, pool: &BouncePool) -> Result<&mut PinnedBuffer> {
        let device = self.device;
        let slot = &mut self.slots[index];
        if slot.bounce.is_none() {
            slot.bounce = Some(pool.acquire(device)?);
        }
        Ok(slot.bounce.as_mut().expect("just filled"))
    }

    /// Records the slot's event after the copies queued so far, keeping
    /// `registration` alive until that event completes.
    pub fn commit(&mut self, index: usize, registration: Option<HostRegistration>) -> Result<()> {
        let slot = &mut self.slots[index];
        slot.event.record(&self.stream)?;
        slot.registration = registration;
        Ok(())
    }

    /// Waits for the copies committed to slot `index`.
    pub fn wait(&mut self, index: usize) -> Result<()> {
        self.slots[index].event.synchronize()
    }

    /// Waits for every queued copy, drops registrations and returns the
    /// bounce buffers to `pool`. The first error is returned, but every slot
    /// is drained regardless.
    pub fn drain(&mut self, pool: &BouncePool) -> Result<()> {
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
        match first_err {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}
