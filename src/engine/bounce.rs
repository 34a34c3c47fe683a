//! Bounded pools of pinned bounce buffers, one per device, shared by the
//! workers and reused.
//!
//! At most `capacity` buffers of a device's pool ever exist; a worker that
//! finds the pool empty and full-grown waits for one to come back. Buffers
//! are allocated lazily (pinning is expensive), through the device's
//! context and on its NUMA node when the host has several
//! ([`PinnedBuffer::new`]), and kept for reuse. A pool per device, each
//! with two buffers per worker, means a worker may keep a lane's buffers
//! for several devices at once without ever starving another worker: of
//! any one pool it holds at most its lane's two.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

use super::error::Result;
use crate::cuda::{Device, PinnedBuffer};

/// The pools of every device served so far, created on a device's first
/// request.
#[derive(Debug)]
pub(crate) struct BouncePools {
    buffer_size: usize,
    capacity: usize,
    pools: Mutex<HashMap<usize, Arc<BouncePool>>>,
}

impl BouncePools {
    /// Pools of at most `capacity` buffers of `buffer_size` bytes each.
    pub(crate) fn new(buffer_size: usize, capacity: usize) -> Self {
        BouncePools {
            buffer_size,
            capacity,
            pools: Mutex::new(HashMap::new()),
        }
    }

    /// `device`'s pool, created on first use.
    pub(crate) fn of(&self, device: Device) -> Arc<BouncePool> {
        self.pools
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(device.ordinal())
            .or_insert_with(|| Arc::new(BouncePool::new(device, self.buffer_size, self.capacity)))
            .clone()
    }

    /// Buffers allocated so far, over every device.
    pub(crate) fn allocated(&self) -> usize {
        self.pools
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values()
            .map(|p| p.allocated())
            .sum()
    }

    /// Buffers allocated so far for one device.
    pub(crate) fn allocated_on(&self, device: usize) -> usize {
        self.pools
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&device)
            .map_or(0, |p| p.allocated())
    }
}

/// One device's pool.
#[derive(Debug)]
pub(crate) struct BouncePool {
    device: Device,
    buffer_size: usize,
    capacity: usize,
    state: Mutex<PoolState>,
    returned: Condvar,
}

#[derive(Debug, Default)]
struct PoolState {
    free: Vec<PinnedBuffer>,
    allocated: usize,
}

impl BouncePool {
    /// A pool of at most `capacity` buffers of `buffer_size` bytes, pinned
    /// for `device`.
    pub(crate) fn new(device: Device, buffer_size: usize, capacity: usize) -> Self {
        BouncePool {
            device,
            buffer_size,
            capacity: capacity.max(1),
            state: Mutex::new(PoolState::default()),
            returned: Condvar::new(),
        }
    }

    /// The size of each buffer.
    pub(crate) fn buffer_size(&self) -> usize {
        self.buffer_size
    }

    /// Buffers allocated so far (never more than the capacity).
    pub(crate) fn allocated(&self) -> usize {
        self.state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .allocated
    }

    /// Takes a buffer, allocating one (pinned through the device's context)
    /// if the pool may still grow, else waiting for one to be returned.
    pub(crate) fn acquire(&self) -> Result<PinnedBuffer> {
        let device = self.device;
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(buf) = state.free.pop() {
                return Ok(buf);
            }
            if state.allocated < self.capacity {
                state.allocated += 1;
                drop(state);
                return PinnedBuffer::new(device, self.buffer_size)
                    .inspect_err(|_| {
                        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                        state.allocated -= 1;
                        self.returned.notify_one();
                    })
                    .map_err(Into::into);
            }
            state = self.returned.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Allocates buffers until the pool holds its full capacity (pinning is
    /// the slow part of a first device read); returns how many exist.
    pub(crate) fn fill(&self) -> Result<usize> {
        let device = self.device;
        loop {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            if state.allocated >= self.capacity {
                return Ok(state.allocated);
            }
            state.allocated += 1;
            drop(state);
            match PinnedBuffer::new(device, self.buffer_size) {
                Ok(buf) => self.release(buf),
                Err(e) => {
                    let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
                    state.allocated -= 1;
                    self.returned.notify_one();
                    return Err(e.into());
                }
            }
        }
    }

    /// Gives a buffer back for reuse.
    pub(crate) fn release(&self, buf: PinnedBuffer) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.free.push(buf);
        self.returned.notify_one();
    }
}
