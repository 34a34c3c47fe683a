//! What a caching pool has done: [`PoolStats`], the snapshot users read,
//! and the live counters behind it. Device-free, shared by the device and
//! the pinned pool.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// A caching pool's counters at one moment ([`DevicePool::stats`](super::DevicePool::stats),
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
    /// peak was last reset ([`DevicePool::reset_peak`](super::DevicePool::reset_peak));
    /// not a count, so [`PoolStats::since`] and [`PoolStats::plus`] keep the larger.
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

    pub(crate) fn in_use(&self) -> u64 {
        self.in_use.load(Ordering::Relaxed)
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
