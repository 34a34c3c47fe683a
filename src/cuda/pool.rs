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

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

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
    counters: PoolCounters,
}

impl DevicePool {
    /// A pool on `device` that keeps idle buffers of at most
    /// `max_cached_bytes` in all (a buffer given back beyond that is freed).
    pub fn new(device: Device, max_cached_bytes: usize) -> Arc<DevicePool> {
        Arc::new(DevicePool {
            device,
            max_cached_bytes,
            free: Mutex::new(Vec::new()),
            counters: PoolCounters::default(),
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

    /// What the pool has done since it was made: allocations that missed
    /// the cache (and the time spent making them), buffers evicted.
    pub fn stats(&self) -> PoolStats {
        self.counters.snapshot()
    }

    /// Starts a new high-water mark of the bytes handed out
    /// ([`PoolStats::peak_in_use_bytes`]) from what is handed out now.
    pub fn reset_peak(&self) {
        self.counters.reset_peak();
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
            None => {
                let started = Instant::now();
                let made = match DeviceBuffer::new(self.device, want) {
                    Ok(b) => b,
                    Err(CudaError::OutOfMemory { .. }) if self.cached() > 0 => {
                        self.trim();
                        DeviceBuffer::new(self.device, want)?
                    }
                    Err(e) => return Err(e),
                };
                self.counters.created(want, started);
                made
            }
        };
        self.counters.handed_out(buffer.len());
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
        self.counters.returned(buffer.len());
        let evicted = {
            let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
            keep_newest(&mut free, buffer, self.max_cached_bytes, DeviceBuffer::len)
        };
        self.counters.evicted(evicted.len());
        // Freed outside the lock: cuMemFree waits for the device.
        drop(evicted);
    }
}

/// A caching pool's counters at one moment ([`DevicePool::stats`],
/// [`PinnedPool::stats`](super::PinnedPool::stats)). Subtract two snapshots
/// to see what one piece of work cost.
///
/// ```
/// use gdscan::cuda::PoolStats;
/// let before = PoolStats::default();
/// let after = PoolStats {
///     created: 3,
///     created_bytes: 6 << 20,
///     create_seconds: 0.002,
///     evicted: 1,
///     peak_in_use_bytes: 8 << 20,
/// };
/// let cost = after.since(&before);
/// assert_eq!(cost.created, 3);
/// assert_eq!(cost.evicted, 1);
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize)]
pub struct PoolStats {
    /// Buffers made because no cached one fitted (`cuMemAlloc`, or pinning).
    pub created: u64,
    /// Their bytes.
    pub created_bytes: u64,
    /// Seconds spent making them.
    pub create_seconds: f64,
    /// Cached buffers freed to stay under the pool's cap.
    pub evicted: u64,
    /// The most bytes handed out at once since the pool was made or its
    /// peak was last reset ([`DevicePool::reset_peak`]); not a count, so
    /// [`PoolStats::since`] and [`PoolStats::plus`] keep the larger.
    pub peak_in_use_bytes: u64,
}

impl PoolStats {
    /// Both counts together (two pools, or two scans).
    pub fn plus(&self, other: &PoolStats) -> PoolStats {
        PoolStats {
            created: self.created + other.created,
            created_bytes: self.created_bytes + other.created_bytes,
            create_seconds: self.create_seconds + other.create_seconds,
            evicted: self.evicted + other.evicted,
            peak_in_use_bytes: self.peak_in_use_bytes.max(other.peak_in_use_bytes),
        }
    }

    /// What happened between `earlier` and `self`.
    pub fn since(&self, earlier: &PoolStats) -> PoolStats {
        PoolStats {
            created: self.created.saturating_sub(earlier.created),
            created_bytes: self.created_bytes.saturating_sub(earlier.created_bytes),
            create_seconds: (self.create_seconds - earlier.create_seconds).max(0.0),
            evicted: self.evicted.saturating_sub(earlier.evicted),
            peak_in_use_bytes: self.peak_in_use_bytes,
        }
    }
}

/// The live counters behind [`PoolStats`].
#[derive(Debug, Default)]
pub(crate) struct PoolCounters {
    created: AtomicU64,
    created_bytes: AtomicU64,
    create_nanos: AtomicU64,
    evicted: AtomicU64,
    in_use: AtomicU64,
    peak_in_use: AtomicU64,
}

impl PoolCounters {
    pub(crate) fn created(&self, bytes: usize, started: Instant) {
        self.created.fetch_add(1, Ordering::Relaxed);
        self.created_bytes
            .fetch_add(bytes as u64, Ordering::Relaxed);
        self.create_nanos
            .fetch_add(started.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }

    pub(crate) fn handed_out(&self, bytes: usize) {
        let now = self.in_use.fetch_add(bytes as u64, Ordering::Relaxed) + bytes as u64;
        self.peak_in_use.fetch_max(now, Ordering::Relaxed);
    }

    pub(crate) fn returned(&self, bytes: usize) {
        self.in_use.fetch_sub(bytes as u64, Ordering::Relaxed);
    }

    pub(crate) fn reset_peak(&self) {
        self.peak_in_use
            .store(self.in_use.load(Ordering::Relaxed), Ordering::Relaxed);
    }

    pub(crate) fn evicted(&self, n: usize) {
        self.evicted.fetch_add(n as u64, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self) -> PoolStats {
        PoolStats {
            created: self.created.load(Ordering::Relaxed),
            created_bytes: self.created_bytes.load(Ordering::Relaxed),
            create_seconds: self.create_nanos.load(Ordering::Relaxed) as f64 * 1e-9,
            evicted: self.evicted.load(Ordering::Relaxed),
            peak_in_use_bytes: self.peak_in_use.load(Ordering::Relaxed),
        }
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
