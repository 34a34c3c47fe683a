//! Per-path byte counters: always on, a few relaxed atomics per task.
//!
//! Every byte the engine moves is counted under the path that moved it, per
//! [`FileHandle`](super::FileHandle) and process-wide, so a report can say
//! which path carried the data instead of guessing. Reads from remote object
//! stores ([`crate::store`]) are counted the same way, per source and
//! process-wide, under [`IoPath::RemoteStore`], with their HTTP retries.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use serde::Serialize;

/// The ways bytes travel between a file and memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum IoPath {
    /// pread/pwrite straight into or out of host memory.
    PosixHost,
    /// pread into pinned bounce buffers, then an asynchronous copy to the device
    /// (or the reverse for writes).
    PosixDeviceBounce,
    /// mmap of the page cache, registered with `cuMemHostRegister`, copied by DMA.
    MmapRegistered,
    /// `cuFileRead`/`cuFileWrite` (stage 2, nvidia-fs or cuFile's compat
    /// path, is told apart by cuFile's own statistics).
    #[serde(rename = "cufile")]
    CuFile,
    /// GET requests to a remote object store (S3, GCS, Azure, HTTP): one op
    /// per request, with the retries its HTTP client made.
    RemoteStore,
}

impl IoPath {
    /// All paths, in report order.
    pub const ALL: [IoPath; 5] = [
        IoPath::PosixHost,
        IoPath::PosixDeviceBounce,
        IoPath::MmapRegistered,
        IoPath::CuFile,
        IoPath::RemoteStore,
    ];

    /// Short stable name, e.g. "posix-device-bounce".
    pub fn name(self) -> &'static str {
        match self {
            IoPath::PosixHost => "posix-host",
            IoPath::PosixDeviceBounce => "posix-device-bounce",
            IoPath::MmapRegistered => "mmap-registered",
            IoPath::CuFile => "cufile",
            IoPath::RemoteStore => "remote-store",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

impl std::fmt::Display for IoPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Default)]
struct Slot {
    ops: AtomicU64,
    bytes: AtomicU64,
    nanos: AtomicU64,
    retries: AtomicU64,
}

/// Counters for every [`IoPath`].
#[derive(Debug, Default)]
pub struct PathCounters {
    slots: [Slot; IoPath::ALL.len()],
}

/// A copy of one path's counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PathTotals {
    /// Completed tasks.
    pub ops: u64,
    /// Bytes moved.
    pub bytes: u64,
    /// Time spent in those tasks, summed over workers, in nanoseconds.
    pub nanos: u64,
    /// Requests sent again after a failed attempt (remote stores only: the
    /// HTTP client's retries, counted as they happen).
    pub retries: u64,
}

impl PathCounters {
    /// Adds one task of `bytes` that took `elapsed`.
    pub fn add(&self, path: IoPath, bytes: u64, elapsed: Duration) {
        let slot = &self.slots[path.index()];
        slot.ops.fetch_add(1, Ordering::Relaxed);
        slot.bytes.fetch_add(bytes, Ordering::Relaxed);
        slot.nanos
            .fetch_add(elapsed.as_nanos() as u64, Ordering::Relaxed);
    }

    /// Adds `n` retried attempts to `path`.
    pub fn add_retries(&self, path: IoPath, n: u64) {
        if n > 0 {
            self.slots[path.index()]
                .retries
                .fetch_add(n, Ordering::Relaxed);
        }
    }

    /// The totals of one path.
    pub fn get(&self, path: IoPath) -> PathTotals {
        let slot = &self.slots[path.index()];
        PathTotals {
            ops: slot.ops.load(Ordering::Relaxed),
            bytes: slot.bytes.load(Ordering::Relaxed),
            nanos: slot.nanos.load(Ordering::Relaxed),
            retries: slot.retries.load(Ordering::Relaxed),
        }
    }

    /// Every path with its totals.
    pub fn snapshot(&self) -> Vec<(IoPath, PathTotals)> {
        IoPath::ALL.iter().map(|&p| (p, self.get(p))).collect()
    }

    /// Bytes per path, for the paths that moved any.
    pub fn nonzero(&self) -> Vec<(IoPath, u64)> {
        IoPath::ALL
            .iter()
            .map(|&p| (p, self.get(p).bytes))
            .filter(|&(_, b)| b > 0)
            .collect()
    }

    /// Sets everything back to zero.
    pub fn reset(&self) {
        for slot in &self.slots {
            slot.ops.store(0, Ordering::Relaxed);
            slot.bytes.store(0, Ordering::Relaxed);
            slot.nanos.store(0, Ordering::Relaxed);
            slot.retries.store(0, Ordering::Relaxed);
        }
    }
}

/// The process-wide counters (all handles together).
pub fn global_counters() -> &'static PathCounters {
    static GLOBAL: std::sync::OnceLock<PathCounters> = std::sync::OnceLock::new();
    GLOBAL.get_or_init(PathCounters::default)
}

/// The process-wide counters of the bytes that went to (or came from) device
/// `ordinal`'s memory, for every path; host-memory transfers are not in any
/// device's counters. Created on first use and kept for the process.
pub fn device_counters(ordinal: usize) -> &'static PathCounters {
    device_map()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(ordinal)
        .or_insert_with(|| Box::leak(Box::default()))
}

/// The devices that have counters (every device the engine has moved bytes
/// for, and any asked for by [`device_counters`]), in ordinal order.
pub(crate) fn counted_devices() -> Vec<usize> {
    let mut d: Vec<usize> = device_map()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .keys()
        .copied()
        .collect();
    d.sort_unstable();
    d
}

type DeviceMap = std::sync::Mutex<std::collections::HashMap<usize, &'static PathCounters>>;

fn device_map() -> &'static DeviceMap {
    static DEVICES: std::sync::OnceLock<DeviceMap> = std::sync::OnceLock::new();
    DEVICES.get_or_init(Default::default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_per_path_and_resets() {
        let c = PathCounters::default();
        c.add(IoPath::PosixHost, 10, Duration::from_nanos(5));
        c.add(IoPath::PosixHost, 20, Duration::from_nanos(5));
        c.add(IoPath::MmapRegistered, 7, Duration::from_nanos(1));
        c.add(IoPath::RemoteStore, 5, Duration::from_nanos(3));
        c.add_retries(IoPath::RemoteStore, 2);
        assert_eq!(
            c.get(IoPath::PosixHost),
            PathTotals {
                ops: 2,
                bytes: 30,
                nanos: 10,
                retries: 0
            }
        );
        assert_eq!(
            c.get(IoPath::RemoteStore),
            PathTotals {
                ops: 1,
                bytes: 5,
                nanos: 3,
                retries: 2
            }
        );
        assert_eq!(c.get(IoPath::MmapRegistered).bytes, 7);
        assert_eq!(c.get(IoPath::PosixDeviceBounce), PathTotals::default());
        c.reset();
        assert_eq!(c.get(IoPath::PosixHost), PathTotals::default());
        assert_eq!(c.get(IoPath::RemoteStore), PathTotals::default());
    }

    #[test]
    fn device_counters_are_one_set_per_ordinal() {
        // Ordinals no real test uses, so concurrent tests do not interfere.
        let a = device_counters(1000);
        let b = device_counters(1001);
        a.add(IoPath::PosixDeviceBounce, 11, Duration::from_nanos(1));
        assert_eq!(
            device_counters(1000).get(IoPath::PosixDeviceBounce).bytes,
            11
        );
        assert_eq!(b.get(IoPath::PosixDeviceBounce).bytes, 0);
        assert!(std::ptr::eq(a, device_counters(1000)));
        let listed = counted_devices();
        assert!(listed.contains(&1000) && listed.contains(&1001));
        assert!(listed.windows(2).all(|w| w[0] < w[1]));
    }
}
