//! A fetch spread over several allocators (normally one per GPU): the row
//! groups are divided by bytes ([`spread`]), each share runs its own
//! producer on the same engine (whose workers keep a lane and a bounce pool
//! per device), and one forwarder per share feeds the shares' row groups,
//! marked with their share, into one stream.

use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;

use super::alloc::Allocator;
use super::options::{FetchOptions, SourceScan};
use super::produce::fetch_share;
use super::stream::{FetchedRowGroup, RowGroupStream};
use crate::engine::IoError;
use crate::parquet::error::{Result, ScanError};
use crate::parquet::plan::ScanPlan;
use crate::parquet::spread::spread;

/// Fetches `files` into `allocs`, share `i` of the row groups (by bytes)
/// into `allocs[i]`, all shares at once, as one stream.
pub(super) fn fetch_shares<A: Allocator>(
    files: Vec<SourceScan>,
    allocs: Vec<A>,
    opts: FetchOptions,
) -> RowGroupStream<A::Buffer> {
    let plans: Vec<Arc<ScanPlan>> = files.iter().map(|s| s.plan.clone()).collect();
    let spread = spread(&plans, allocs.len());
    let shares: Vec<RowGroupStream<A::Buffer>> = allocs
        .into_iter()
        .enumerate()
        .map(|(share, alloc)| {
            let cut: Vec<SourceScan> = files
                .iter()
                .zip(spread.plans_of(&plans, share))
                .map(|(scan, plan)| SourceScan::new(scan.source.clone(), plan))
                .collect();
            fetch_share(cut, alloc, opts)
        })
        .collect();
    let producers: Vec<_> = shares.iter().flat_map(|s| s.producers()).collect();
    let (tx, rx) = sync_channel(opts.prefetch.max(1) * shares.len());
    let mut threads = Vec::with_capacity(shares.len());
    for (share, stream) in shares.into_iter().enumerate() {
        let (share_tx, all) = (tx.clone(), producers.clone());
        let spawned = std::thread::Builder::new()
            .name("gdscan-fetch-share".into())
            .spawn(move || {
                forward(share, stream, &share_tx, || {
                    all.iter().for_each(|p| p.stop())
                })
            });
        match spawned {
            Ok(t) => threads.push(t),
            Err(e) => {
                producers.iter().for_each(|p| p.stop());
                let err: ScanError = IoError::os("<fetch>", "spawn thread", e).into();
                let _ = tx.send(Err(err));
                break;
            }
        }
    }
    RowGroupStream::merged(rx, threads, producers)
}

/// Passes `stream`'s row groups on as share `share`; after an error, stops
/// every share (`stop_all`).
fn forward<B>(
    share: usize,
    stream: RowGroupStream<B>,
    tx: &SyncSender<Result<FetchedRowGroup<B>>>,
    stop_all: impl Fn(),
) {
    for item in stream {
        let failed = item.is_err();
        let item = item.map(|mut rg| {
            rg.share = share;
            rg
        });
        if tx.send(item).is_err() || failed {
            if failed {
                stop_all();
            }
            return;
        }
    }
}
