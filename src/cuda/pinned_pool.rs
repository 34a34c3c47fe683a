//! A caching allocator of pinned (page-locked) host memory.
//!
//! `cuMemHostAlloc` and `cuMemFreeHost` cost milliseconds for large sizes;
//! a scan that lands every row group in pinned memory (the GPU decoder's
//! fetch) would pay that per row group. The pool keeps returned buffers and
//! hands them out again, like [`DevicePool`](super::DevicePool) does for
//! device memory.

use std::ops::{Deref, DerefMut};
use std::sync::{Arc, Mutex};

use super::{Device, PinnedBuffer};
use crate::error::Result;

/// Pinned sizes are rounded up to a multiple of this (2 MiB).
pub(crate) const PINNED_GRANULE: usize = 2 << 20;

/// A cache of pinned host buffers, allocated in `device`'s context.
#[derive(Debug)]
pub struct PinnedPool {
    device: Device,
    max_cached_bytes: usize,
    free: Mutex<Vec<PinnedBuffer>>,
}

impl PinnedPool {
    /// A pool that keeps idle buffers of at most `max_cached_bytes` in all.
    pub fn new(device: Device, max_cached_bytes: usize) -> Arc<PinnedPool> {
        Arc::new(PinnedPool {
            device,
            max_cached_bytes,
            free: Mutex::new(Vec::new()),
        })
    }

    /// A pinned buffer of at least `len` bytes: the smallest idle one that
    /// fits, whatever its size (pinning a new buffer costs far more than the
    /// idle memory a larger one holds: scans of narrower columns after wider
    /// ones otherwise pinned and unpinned a buffer per row group), else a
    /// new allocation.
    pub fn allocate(self: &Arc<Self>, len: usize) -> Result<PooledPinnedBuffer> {
        let want = len.max(1).div_ceil(PINNED_GRANULE) * PINNED_GRANULE;
        let reused = {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            let best = free
                .iter()
                .enumerate()
                .filter(|(_, b)| b.len() >= want)
                .min_by_key(|(_, b)| b.len())
                .map(|(i, _)| i);
            best.map(|i| free.swap_remove(i))
        };
        let buffer = match reused {
            Some(b) => b,
            None => PinnedBuffer::new(self.device, want)?,
        };
        Ok(PooledPinnedBuffer {
            buffer: Some(buffer),
            len,
            pool: self.clone(),
        })
    }

    fn give_back(&self, buffer: PinnedBuffer) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let held: usize = free.iter().map(|b| b.len()).sum();
        if held + buffer.len() <= self.max_cached_bytes {
            free.push(buffer);
        }
    }
}

/// A pinned buffer of `len` bytes lent by a [`PinnedPool`]; it goes back to
/// the pool on drop. Its bytes dereference as a slice of exactly `len`.
#[derive(Debug)]
pub struct PooledPinnedBuffer {
    buffer: Option<PinnedBuffer>,
    len: usize,
    pool: Arc<PinnedPool>,
}

impl PooledPinnedBuffer {
    /// The first byte (for asynchronous copies).
    pub fn as_ptr(&self) -> *const u8 {
        self.deref().as_ptr()
    }

    /// The first byte, writable.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.deref_mut().as_mut_ptr()
    }
}

impl Deref for PooledPinnedBuffer {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match &self.buffer {
            Some(b) => &b.as_slice()[..self.len],
            None => &[],
        }
    }
}

impl DerefMut for PooledPinnedBuffer {
    fn deref_mut(&mut self) -> &mut [u8] {
        let len = self.len;
        match &mut self.buffer {
            Some(b) => &mut b.as_mut_slice()[..len],
            None => &mut [],
        }
    }
}

impl Drop for PooledPinnedBuffer {
    fn drop(&mut self) {
        if let Some(b) = self.buffer.take() {
            self.pool.give_back(b);
        }
    }
}
