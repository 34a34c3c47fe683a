//! A caching allocator of pinned (page-locked) host memory.
//!
//! `cuMemHostAlloc` and `cuMemFreeHost` cost milliseconds for large sizes;
//! a scan that lands every row group in pinned memory (the GPU decoder's
//! fetch) would pay that per row group. The pool keeps returned buffers and
//! hands them out again, like [`DevicePool`](super::DevicePool) does for
//! device memory.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use super::error::Result;
use super::pool_policy::{round_up, Cached, IdleCache};
use super::{Device, PerDevice, PinnedBuffer, PoolStats};

/// Idle pinned host memory the process's shared pool keeps per device
/// ([`PinnedPool::shared`]): about what a scan of all of a wide table's
/// columns holds at once (its fetch budget, the planner's group and the
/// groups on the GPU), so that the next scan pins nothing new.
pub const SHARED_PINNED_POOL_BYTES: usize = 4 << 30;

/// The process's shared pools, per device ordinal.
static SHARED: PerDevice<PinnedPool> = PerDevice::new();

/// Pinned sizes are rounded up to a multiple of this (2 MiB).
pub(crate) const PINNED_GRANULE: usize = 2 << 20;

/// A cache of pinned host buffers, allocated in `device`'s context (the
/// policy is `IdleCache`'s, in `cuda/pool_policy.rs`).
#[derive(Debug)]
pub struct PinnedPool {
    device: Device,
    idle: IdleCache<PinnedBuffer>,
}

impl Cached for PinnedBuffer {
    fn bytes(&self) -> usize {
        self.len()
    }
}

impl PinnedPool {
    /// A pool that keeps idle buffers of at most `max_cached_bytes` in all.
    pub fn new(device: Device, max_cached_bytes: usize) -> Arc<PinnedPool> {
        Arc::new(PinnedPool {
            device,
            idle: IdleCache::new(max_cached_bytes),
        })
    }

    /// The process's pool for `device` (made on first use, keeping
    /// [`SHARED_PINNED_POOL_BYTES`] idle): the decoder's scans and the copies
    /// of device batches back to the host share it, so each reuses what the
    /// others pinned.
    pub fn shared(device: Device) -> Arc<PinnedPool> {
        SHARED.get_or_make(device, || PinnedPool::new(device, SHARED_PINNED_POOL_BYTES))
    }

    /// Unpins the idle buffers of every shared pool ([`PinnedPool::shared`]).
    pub fn trim_shared() {
        for pool in Self::shared_all() {
            pool.trim();
        }
    }

    /// Every shared pool made so far ([`PinnedPool::shared`]), one per
    /// device that has one.
    pub(crate) fn shared_all() -> Vec<Arc<PinnedPool>> {
        SHARED.all()
    }

    /// Bytes of the buffers handed out now (rounded up as allocated).
    pub fn in_use_bytes(&self) -> usize {
        self.idle.in_use_bytes()
    }

    /// Bytes of the idle buffers kept pinned now for the next requests.
    pub fn cached_bytes(&self) -> usize {
        self.idle.cached_bytes()
    }

    /// What the pool has done since it was made (see [`PoolStats`]).
    pub fn stats(&self) -> PoolStats {
        self.idle.stats()
    }

    /// A pinned buffer of at least `len` bytes: the smallest idle one that
    /// fits and is at most twice the size asked (or 8 MiB more, for small
    /// sizes), else a new allocation.
    /// (Any idle buffer that fits, whatever its size, let a scan's small
    /// buffers take the large ones a wider scan before it had left, so its
    /// row groups pinned new ones while the cache stayed full of the
    /// others.)
    pub fn allocate(self: &Arc<Self>, len: usize) -> Result<PooledPinnedBuffer> {
        let want = round_up(len, PINNED_GRANULE);
        let buffer = self.idle.lend(want, reuse_limit(want), |want| {
            PinnedBuffer::new(self.device, want)
        })?;
        Ok(PooledPinnedBuffer {
            buffer: Some(buffer),
            len,
            pool: self.clone(),
        })
    }

    /// Starts a new high-water mark of the bytes handed out
    /// ([`PoolStats::peak_in_use_bytes`]) from what is handed out now.
    pub fn reset_peak(&self) {
        self.idle.reset_peak();
    }

    /// Unpins every idle buffer (those handed out stay theirs).
    pub fn trim(&self) {
        self.idle.trim();
    }

    /// Keeps a returned buffer as the most recently used one and unpins the
    /// least recently returned ones while the idle bytes exceed the cap
    /// (`IdleCache::give_back`).
    fn give_back(&self, buffer: PinnedBuffer) {
        self.idle.give_back(buffer);
    }
}

/// The largest idle buffer a request for `want` bytes takes: twice its
/// size, and at least 8 MiB more (small buffers differ little in cost).
pub(crate) fn reuse_limit(want: usize) -> usize {
    want.saturating_mul(2).max(want.saturating_add(8 << 20))
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

#[cfg(test)]
mod tests {
    use super::reuse_limit;

    #[test]
    fn small_requests_take_buffers_a_little_larger_large_ones_up_to_twice() {
        let mib = 1usize << 20;
        assert_eq!(reuse_limit(2 * mib), 10 * mib);
        assert_eq!(reuse_limit(8 * mib), 16 * mib);
        assert_eq!(reuse_limit(40 * mib), 80 * mib);
        assert_eq!(reuse_limit(usize::MAX), usize::MAX);
    }
}
