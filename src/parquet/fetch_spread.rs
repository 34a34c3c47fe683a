//! The raw fetch of one scan spread over several GPUs: the row groups are
//! divided by bytes ([`spread`]), and each GPU runs
//! its own [`fetch`] of its share, on its own thread, through the same
//! engine (whose workers keep a lane and a bounce pool per device).

use std::sync::Arc;

use super::error::{Result, ScanError};
use super::fetch::{fetch, Allocator, FetchOptions, FetchedRowGroup, SourceScan};
use super::plan::ScanPlan;
use super::spread::{spread, Spread};
use crate::engine::IoError;

/// What each share of a spread fetch read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpreadFetch {
    /// Which row group went to which share.
    pub spread: Spread,
    /// Bytes each share's fetch read (what its row groups report).
    pub bytes_read: Vec<u64>,
    /// Row groups each share's fetch delivered.
    pub row_groups: Vec<usize>,
}

/// Fetches `scans` with one allocator per share (`allocs[i]` decides where
/// share `i` lands: normally a [`DeviceAllocator`](super::DeviceAllocator)
/// per GPU), all shares at once, handing every row group to `consume` with
/// its share on the share's thread. Returns when every share is done; the
/// first error (a read, an allocation, or `consume`'s) stops every share
/// and is returned.
pub fn fetch_spread<A, F>(
    scans: &[SourceScan],
    allocs: Vec<A>,
    opts: FetchOptions,
    consume: F,
) -> Result<SpreadFetch>
where
    A: Allocator,
    F: Fn(usize, FetchedRowGroup<A::Buffer>) -> Result<()> + Sync,
{
    let plans: Vec<Arc<ScanPlan>> = scans.iter().map(|s| s.plan.clone()).collect();
    let spread = spread(&plans, allocs.len());
    let stop = std::sync::atomic::AtomicBool::new(false);
    let outcomes: Vec<Result<(u64, usize)>> = std::thread::scope(|s| {
        let handles: Vec<_> = allocs
            .into_iter()
            .enumerate()
            .map(|(share, alloc)| {
                let cut: Vec<SourceScan> = scans
                    .iter()
                    .zip(spread.plans_of(&plans, share))
                    .map(|(scan, plan)| SourceScan::new(scan.source.clone(), plan))
                    .collect();
                let (consume, stop) = (&consume, &stop);
                s.spawn(move || {
                    let mut bytes = 0;
                    let mut count = 0;
                    for rg in fetch(cut, alloc, opts) {
                        if stop.load(std::sync::atomic::Ordering::Relaxed) {
                            break;
                        }
                        let outcome = rg.and_then(|rg| {
                            bytes += rg.bytes_read;
                            count += 1;
                            consume(share, rg)
                        });
                        if let Err(e) = outcome {
                            stop.store(true, std::sync::atomic::Ordering::Relaxed);
                            return Err(e);
                        }
                    }
                    Ok((bytes, count))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join().unwrap_or_else(|_| {
                    Err(ScanError::from(IoError::os(
                        "<fetch>",
                        "thread",
                        std::io::Error::other("a fetch thread panicked"),
                    )))
                })
            })
            .collect()
    });
    let mut bytes_read = Vec::with_capacity(outcomes.len());
    let mut row_groups = Vec::with_capacity(outcomes.len());
    for o in outcomes {
        let (b, n) = o?;
        bytes_read.push(b);
        row_groups.push(n);
    }
    Ok(SpreadFetch {
        spread,
        bytes_read,
        row_groups,
    })
}
