//! What the decoder's process-wide pools hold now: the shared device pools
//! (one per GPU a scan has used) and the shared pinned pools
//! ([`PinnedPool::shared`]), as bytes handed out and bytes kept idle.

use serde::Serialize;

use super::gpu_resources::shared_device_pools;
use crate::cuda::PinnedPool;

/// A snapshot of the memory the process-wide pools hold, summed over every
/// device. A process that never made a pool (no GPU, or no GPU scan yet)
/// holds nothing: every field is 0.
///
/// Between scans, when no batch is alive, the bytes in use should be 0:
/// what stays is the idle cache, which [`release_cached_memory`]
/// gives back.
///
/// [`release_cached_memory`]: super::release_cached_memory
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemoryHeld {
    /// Device memory handed out by the shared device pools now (rounded up
    /// as allocated).
    pub device_in_use_bytes: u64,
    /// Device memory the shared device pools keep idle for the next scans.
    pub device_cached_bytes: u64,
    /// Pinned host memory handed out by the shared pinned pools now.
    pub pinned_in_use_bytes: u64,
    /// Pinned host memory the shared pinned pools keep idle.
    pub pinned_cached_bytes: u64,
}

/// One pool's figures: bytes in use and bytes cached.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct PoolBytes {
    in_use: usize,
    cached: usize,
}

impl MemoryHeld {
    /// The sums of the device pools' and the pinned pools' figures.
    fn sum(
        device: impl IntoIterator<Item = PoolBytes>,
        pinned: impl IntoIterator<Item = PoolBytes>,
    ) -> MemoryHeld {
        let (device_in_use_bytes, device_cached_bytes) = totals(device);
        let (pinned_in_use_bytes, pinned_cached_bytes) = totals(pinned);
        MemoryHeld {
            device_in_use_bytes,
            device_cached_bytes,
            pinned_in_use_bytes,
            pinned_cached_bytes,
        }
    }
}

/// Bytes in use and bytes cached, summed over `pools`.
fn totals(pools: impl IntoIterator<Item = PoolBytes>) -> (u64, u64) {
    pools.into_iter().fold((0, 0), |(in_use, cached), p| {
        (
            in_use.saturating_add(p.in_use as u64),
            cached.saturating_add(p.cached as u64),
        )
    })
}

/// What the decoder's process-wide device and pinned pools hold now,
/// summed over every device (all zeros when no pool was ever made, as
/// without a GPU).
///
/// ```
/// use gdscan::decode::scan::{memory_held, MemoryHeld};
///
/// // A process that has not scanned on a GPU yet holds nothing.
/// assert_eq!(memory_held(), MemoryHeld::default());
/// ```
pub fn memory_held() -> MemoryHeld {
    let device = shared_device_pools().into_iter().map(|p| PoolBytes {
        in_use: p.in_use_bytes(),
        cached: p.cached_bytes(),
    });
    let pinned = PinnedPool::shared_all().into_iter().map(|p| PoolBytes {
        in_use: p.in_use_bytes(),
        cached: p.cached_bytes(),
    });
    MemoryHeld::sum(device, pinned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool(in_use: usize, cached: usize) -> PoolBytes {
        PoolBytes { in_use, cached }
    }

    #[test]
    fn no_pools_hold_nothing() {
        assert_eq!(MemoryHeld::sum([], []), MemoryHeld::default());
        assert_eq!(
            MemoryHeld::default(),
            MemoryHeld {
                device_in_use_bytes: 0,
                device_cached_bytes: 0,
                pinned_in_use_bytes: 0,
                pinned_cached_bytes: 0,
            }
        );
    }

    #[test]
    fn the_pools_figures_add_up_per_kind() {
        let held = MemoryHeld::sum(
            [pool(2 << 20, 4 << 20), pool(6 << 20, 0)],
            [pool(0, 8 << 20), pool(2 << 20, 2 << 20), pool(0, 0)],
        );
        assert_eq!(
            held,
            MemoryHeld {
                device_in_use_bytes: 8 << 20,
                device_cached_bytes: 4 << 20,
                pinned_in_use_bytes: 2 << 20,
                pinned_cached_bytes: 10 << 20,
            }
        );
    }

    #[test]
    fn sums_saturate_instead_of_wrapping() {
        let (in_use, cached) = totals([pool(usize::MAX, 1), pool(usize::MAX, 1)]);
        assert_eq!(in_use, (usize::MAX as u64).saturating_mul(2));
        assert_eq!(cached, 2);
    }
}
