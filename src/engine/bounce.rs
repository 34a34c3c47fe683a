//! A bounded pool of pinned bounce buffers, shared by the workers and reused.
//!
//! At most `capacity` buffers ever exist; a worker that finds the pool empty
//! and full-grown waits for one to come back. Buffers are allocated lazily
//! (pinning is expensive) and kept for reuse.

use std::sync::{Condvar, Mutex};

use crate::cuda::{Device, PinnedBuffer};
use crate::error::Result;

/// The pool.
#[derive(Debug)]
pub(crate) struct BouncePool {
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
    /// A pool of at most `capacity` buffers of `buffer_size` bytes.
    pub(crate) fn new(buffer_size: usize, capacity: usize) -> Self {
        BouncePool {
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

    /// Takes a buffer, allocating one (pinned through `device`'s context) if
    /// the pool may still grow, else waiting for one to be returned.
    pub(crate) fn acquire(&self, device: Device) -> Result<PinnedBuffer> {
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
    pub(crate) fn fill(&self, device: Device) -> Result<usize> {
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
