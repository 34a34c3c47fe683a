//! A caching allocator of device memory.
//!
//! `cuMemFree` synchronises the whole device: freeing a row group's buffer
//! while the next row groups' copies run stalls every copy stream. The pool
//! keeps buffers that are given back and hands them out again, so a steady
//! scan allocates and frees nothing after its first row groups. Sizes are
//! rounded up to [`GRANULE`] so that row groups of similar size share buffers.
//!
//! A buffer goes back to the pool when its [`PooledDeviceBuffer`] drops: the
//! owner must have finished (synchronised) any GPU work that reads it before
//! that, exactly as it must before freeing memory with `cuMemFree`'s
//! stream-unordered cousins.

use std::sync::Arc;

use super::error::{CudaError, Result};
use super::pool_policy::{round_up, Cached, IdleCache};
use super::{Device, DeviceBuffer, PoolStats};

/// Allocation sizes are rounded up to a multiple of this (2 MiB, the
/// driver's large-page size).
pub(super) const GRANULE: usize = 2 << 20;

/// A cache of device buffers on one GPU (the policy is `IdleCache`'s, in `cuda/pool_policy.rs`).
#[derive(Debug)]
pub struct DevicePool {
    device: Device,
    idle: IdleCache<DeviceBuffer>,
}

impl Cached for DeviceBuffer {
    fn bytes(&self) -> usize {
        self.len()
    }
}

impl DevicePool {
    /// A pool on `device` that keeps idle buffers of at most
    /// `max_cached_bytes` in all (a buffer given back beyond that is freed).
    pub fn new(device: Device, max_cached_bytes: usize) -> Arc<DevicePool> {
        Arc::new(DevicePool {
            device,
            idle: IdleCache::new(max_cached_bytes),
        })
    }

    /// The pool's device.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Idle buffers held now.
    pub fn cached(&self) -> usize {
        self.idle.cached()
    }

    /// Bytes of the idle buffers held now.
    pub fn cached_bytes(&self) -> usize {
        self.idle.cached_bytes()
    }

    /// Bytes of the buffers handed out now and not yet given back (rounded
    /// up as allocated).
    pub fn in_use_bytes(&self) -> usize {
        self.idle.in_use_bytes()
    }

    /// What the pool has done since it was made: allocations that missed
    /// the cache (and the time spent making them), buffers evicted.
    pub fn stats(&self) -> PoolStats {
        self.idle.stats()
    }

    /// Starts a new high-water mark of the bytes handed out
    /// ([`PoolStats::peak_in_use_bytes`]) from what is handed out now.
    pub fn reset_peak(&self) {
        self.idle.reset_peak();
    }

    /// A buffer of `len` bytes: the smallest idle one that fits and is not
    /// more than twice the rounded size, else a new allocation. When the
    /// device is out of memory, idle buffers are freed and the allocation
    /// retried once.
    pub fn allocate(self: &Arc<Self>, len: usize) -> Result<PooledDeviceBuffer> {
        let want = round_up(len, GRANULE);
        let buffer = self.idle.lend(
            want,
            want.saturating_mul(2),
            |want| match DeviceBuffer::new(self.device, want) {
                Err(CudaError::OutOfMemory { .. }) if self.cached() > 0 => {
                    self.trim();
                    DeviceBuffer::new(self.device, want)
                }
                made => made,
            },
        )?;
        Ok(PooledDeviceBuffer {
            buffer: Some(buffer),
            len,
            pool: self.clone(),
        })
    }

    /// Frees every idle buffer.
    pub fn trim(&self) {
        self.idle.trim();
    }

    /// Keeps a returned buffer, freeing the least recently returned ones
    /// while the idle bytes exceed the cap (`IdleCache::give_back`).
    fn give_back(&self, buffer: DeviceBuffer) {
        self.idle.give_back(buffer);
    }
}

/// A buffer from a [`DevicePool`]: `len` bytes at the start of a possibly
/// larger allocation, returned to the pool on drop.
#[derive(Debug)]
pub struct PooledDeviceBuffer {
    buffer: Option<DeviceBuffer>,
    len: usize,
    pool: Arc<DevicePool>,
}

impl PooledDeviceBuffer {
    fn inner(&self) -> &DeviceBuffer {
        self.buffer.as_ref().expect("present until drop")
    }

    /// The device the memory lives on.
    pub fn device(&self) -> Device {
        self.inner().device()
    }

    /// Length in bytes (what was asked for).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address of the first byte.
    pub fn device_ptr(&self) -> u64 {
        self.inner().device_ptr()
    }

    /// Copies `dst.len()` bytes starting at `offset` back to host memory
    /// (synchronous); the range must lie inside `len`.
    pub fn copy_to_host(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        match offset.checked_add(dst.len()) {
            Some(end) if end <= self.len => self.inner().copy_to_host(offset, dst),
            _ => Err(CudaError::OutOfRange {
                buffer_kind: "<device buffer>",
                buffer: self.len,
                requested: offset.saturating_add(dst.len()),
            }),
        }
    }
}

impl Drop for PooledDeviceBuffer {
    fn drop(&mut self) {
        if let Some(b) = self.buffer.take() {
            self.pool.give_back(b);
        }
    }
}
