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

use std::sync::{Arc, Mutex};

use super::error::{CudaError, Result};
use super::{Device, DeviceBuffer};

/// Allocation sizes are rounded up to a multiple of this (2 MiB, the
/// driver's large-page size).
pub(super) const GRANULE: usize = 2 << 20;

/// A cache of device buffers on one GPU.
#[derive(Debug)]
pub struct DevicePool {
    device: Device,
    max_cached_bytes: usize,
    free: Mutex<Vec<DeviceBuffer>>,
}

impl DevicePool {
    /// A pool on `device` that keeps idle buffers of at most
    /// `max_cached_bytes` in all (a buffer given back beyond that is freed).
    pub fn new(device: Device, max_cached_bytes: usize) -> Arc<DevicePool> {
        Arc::new(DevicePool {
            device,
            max_cached_bytes,
            free: Mutex::new(Vec::new()),
        })
    }

    /// The pool's device.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Idle buffers held now.
    pub fn cached(&self) -> usize {
        self.free.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Bytes of the idle buffers held now.
    pub fn cached_bytes(&self) -> usize {
        let free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        free.iter().map(|b| b.len()).sum()
    }

    /// A buffer of `len` bytes: the smallest idle one that fits and is not
    /// more than twice the rounded size, else a new allocation. When the
    /// device is out of memory, idle buffers are freed and the allocation
    /// retried once.
    pub fn allocate(self: &Arc<Self>, len: usize) -> Result<PooledDeviceBuffer> {
        let want = round_up(len.max(1));
        let reused = {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            let best = free
                .iter()
                .enumerate()
                .filter(|(_, b)| b.len() >= want && b.len() <= want.saturating_mul(2))
                .min_by_key(|(_, b)| b.len())
                .map(|(i, _)| i);
            best.map(|i| free.remove(i))
        };
        let buffer = match reused {
            Some(b) => b,
            None => match DeviceBuffer::new(self.device, want) {
                Ok(b) => b,
                Err(CudaError::OutOfMemory { .. }) if self.cached() > 0 => {
                    self.trim();
                    DeviceBuffer::new(self.device, want)?
                }
                Err(e) => return Err(e),
            },
        };
        Ok(PooledDeviceBuffer {
            buffer: Some(buffer),
            len,
            pool: self.clone(),
        })
    }

    /// Frees every idle buffer.
    pub fn trim(&self) {
        let idle = std::mem::take(&mut *self.free.lock().unwrap_or_else(|e| e.into_inner()));
        drop(idle);
    }

    /// Keeps a returned buffer as the most recently used one, freeing the
    /// least recently returned ones while the idle bytes exceed the cap
    /// (so the cache follows the working set when row-group sizes change).
    fn give_back(&self, buffer: DeviceBuffer) {
        let evicted = {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            keep_newest(&mut free, buffer, self.max_cached_bytes, DeviceBuffer::len)
        };
        // Freed outside the lock: cuMemFree waits for the device.
        drop(evicted);
    }
}

/// Pushes `returned` as the most recently used of the idle buffers `free`
/// (oldest first) and takes out the least recently returned ones while
/// their bytes (`len` of each) exceed `cap`; the caller frees those
/// outside its lock. Shared by the device and the pinned pool.
pub(crate) fn keep_newest<T>(
    free: &mut Vec<T>,
    returned: T,
    cap: usize,
    len: impl Fn(&T) -> usize,
) -> Vec<T> {
    free.push(returned);
    let mut held: usize = free.iter().map(&len).sum();
    let mut evicted = Vec::new();
    while held > cap && !free.is_empty() {
        let oldest = free.remove(0);
        held -= len(&oldest);
        evicted.push(oldest);
    }
    evicted
}

fn round_up(len: usize) -> usize {
    len.div_ceil(GRANULE).saturating_mul(GRANULE)
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

#[cfg(test)]
mod tests {
    use super::round_up;

    #[test]
    fn sizes_round_up_to_the_granule() {
        assert_eq!(round_up(1), super::GRANULE);
        assert_eq!(round_up(super::GRANULE), super::GRANULE);
        assert_eq!(round_up(super::GRANULE + 1), 2 * super::GRANULE);
    }
}

#[cfg(test)]
mod keep_newest_tests {
    use super::keep_newest;

    #[test]
    fn the_returned_buffer_stays_and_the_oldest_go_while_over_the_cap() {
        let mut free = vec![40usize, 30, 20];
        // 140 bytes: the oldest (40) goes, 100 is within the cap.
        let evicted = keep_newest(&mut free, 50, 100, |n| *n);
        assert_eq!(evicted, vec![40]);
        assert_eq!(free, vec![30, 20, 50]);
        // 110 bytes: the oldest left (30) goes.
        let evicted = keep_newest(&mut free, 10, 100, |n| *n);
        assert_eq!(evicted, vec![30]);
        assert_eq!(free, vec![20, 50, 10]);
        // Within the cap: nothing goes.
        let evicted = keep_newest(&mut free, 5, 100, |n| *n);
        assert!(evicted.is_empty());
    }
}
