//! Response bodies into device memory: frames are gathered in host memory
//! as they arrive, then copied into a pinned staging buffer from a small
//! bounded pool and sent to the device asynchronously on that buffer's own
//! stream. A buffer returns to the pool when its copy's event completes, so
//! pinned memory is held only for the copy, never while waiting on the
//! network, and copies overlap the requests still streaming.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures::future::BoxFuture;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinHandle;

use super::error::{Result, StoreError};
use super::get::Sink;
use super::runtime::joined;
use crate::cuda::{Device, Event, PinnedBuffer, Stream};
use crate::engine::IoError;

/// Bytes of one staging buffer.
pub(super) const STAGE_BYTES: usize = 4 << 20;
/// Staging buffers per source and device.
pub(super) const STAGE_SLOTS: usize = 8;

/// A pinned buffer with its own stream and the event of its last copy.
#[derive(Debug)]
struct Slot {
    buffer: PinnedBuffer,
    stream: Stream,
    event: Event,
}

/// A bounded pool of staging buffers for one device, allocated on first use.
#[derive(Debug)]
pub(super) struct StagingPool {
    device: Device,
    slot_bytes: usize,
    slots: usize,
    free: Mutex<Vec<Slot>>,
    permits: Arc<Semaphore>,
    allocated: AtomicUsize,
}

impl StagingPool {
    /// A pool of at most `slots` buffers of `slot_bytes` on `device`.
    pub(super) fn new(device: Device, slots: usize, slot_bytes: usize) -> StagingPool {
        StagingPool {
            device,
            slot_bytes: slot_bytes.max(1),
            slots: slots.max(1),
            free: Mutex::new(Vec::new()),
            permits: Arc::new(Semaphore::new(slots.max(1))),
            allocated: AtomicUsize::new(0),
        }
    }

    /// The device the pool copies to.
    pub(super) fn device(&self) -> Device {
        self.device
    }

    /// Buffers pinned so far.
    pub(super) fn allocated(&self) -> usize {
        self.allocated.load(Ordering::Relaxed)
    }

    fn new_slot(&self) -> Result<Slot> {
        let slot = Slot {
            buffer: PinnedBuffer::new(self.device, self.slot_bytes)?,
            stream: Stream::new(self.device)?,
            event: Event::new(self.device)?,
        };
        self.allocated.fetch_add(1, Ordering::Relaxed);
        Ok(slot)
    }

    /// Pins every buffer now; returns how many the pool holds.
    pub(super) fn fill(&self) -> Result<usize> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while self.allocated() < self.slots {
            free.push(self.new_slot()?);
        }
        Ok(self.allocated())
    }

    async fn acquire(self: &Arc<Self>) -> Result<(Slot, OwnedSemaphorePermit)> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| IoError::PoolStopped)?;
        let reused = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let slot = match reused {
            Some(s) => s,
            None => self.new_slot()?,
        };
        Ok((slot, permit))
    }

    fn release(&self, slot: Slot) {
        self.free
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(slot);
    }
}

/// One response body landing at a device address.
pub(crate) struct DeviceSink {
    pool: Arc<StagingPool>,
    dst: u64,
    queued: u64,
    gathered: Vec<Bytes>,
    gathered_len: usize,
    copies: Vec<JoinHandle<Result<()>>>,
}

impl DeviceSink {
    /// A sink writing from device address `dst` on.
    pub(crate) fn new(pool: Arc<StagingPool>, dst: u64) -> DeviceSink {
        DeviceSink {
            pool,
            dst,
            queued: 0,
            gathered: Vec::new(),
            gathered_len: 0,
            copies: Vec::new(),
        }
    }

    /// Stages what is gathered and queues its copy; the buffer returns to
    /// the pool when the copy completes.
    async fn flush(&mut self) -> Result<()> {
        if self.gathered_len == 0 {
            return Ok(());
        }
        let (mut slot, permit) = self.pool.acquire().await?;
        let n = self.gathered_len;
        let staged = slot.buffer.as_mut_slice();
        let mut at = 0;
        for frame in self.gathered.drain(..) {
            staged[at..at + frame.len()].copy_from_slice(&frame);
            at += frame.len();
        }
        self.gathered_len = 0;
        let dst = self.dst + self.queued;
        let queued = (|| {
            self.pool.device().bind()?;
            // SAFETY: the slot (and so its pinned buffer) is owned by the
            // release task below until the event recorded after the copy has
            // completed; `dst..dst + n` lies inside the destination, which the
            // caller of `submit_reads` keeps alive until the reads end (and the
            // sink waits for its copies before it ends, even when dropped).
            unsafe { slot.stream.copy_to_device(dst, slot.buffer.as_ptr(), n)? };
            slot.event.record(&slot.stream)
        })();
        let pool = self.pool.clone();
        let wait = queued.is_ok();
        self.copies.push(tokio::task::spawn_blocking(move || {
            let done = if wait {
                slot.event.synchronize().map_err(StoreError::from)
            } else {
                Ok(())
            };
            pool.release(slot);
            drop(permit);
            done
        }));
        queued?;
        self.queued += n as u64;
        Ok(())
    }
}

impl Sink for DeviceSink {
    fn put(&mut self, mut chunk: Bytes) -> BoxFuture<'_, Result<()>> {
        Box::pin(async move {
            let cap = self.pool.slot_bytes;
            while !chunk.is_empty() {
                let take = (cap - self.gathered_len).min(chunk.len());
                self.gathered.push(chunk.split_to(take));
                self.gathered_len += take;
                if self.gathered_len == cap {
                    self.flush().await?;
                }
            }
            Ok(())
        })
    }

    fn finish(&mut self) -> BoxFuture<'_, Result<()>> {
        Box::pin(async move {
            self.flush().await?;
            let mut first = None;
            for copy in self.copies.drain(..) {
                let done = copy.await.map_err(joined).and_then(|r| r);
                if let Err(e) = done {
                    first.get_or_insert(e);
                }
            }
            first.map_or(Ok(()), Err)
        })
    }
}

impl Drop for DeviceSink {
    /// A sink dropped mid-body (an error elsewhere, or a cancelled read)
    /// still waits for the copies it queued: they write into the caller's
    /// device buffer.
    fn drop(&mut self) {
        for copy in self.copies.drain(..) {
            let _ = futures::executor::block_on(copy);
        }
    }
}
