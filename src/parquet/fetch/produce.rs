//! One producer: a thread that submits the reads of the next row groups to
//! their source and hands them on, in plan order, as they complete.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;

use super::alloc::Allocator;
use super::budget::{Budget, Permit};
use super::layout::{layout, ChunkSlice};
use super::options::{FetchOptions, SourceScan};
use super::stream::{FetchedRowGroup, Producer, RowGroupStream};
use crate::engine::{IoBufMut, IoError};
use crate::parquet::error::Result;
use crate::store::PendingReads;

/// One producer thread fetching `files` into `alloc`'s buffers (share 0).
pub(super) fn fetch_share<A: Allocator>(
    files: Vec<SourceScan>,
    alloc: A,
    opts: FetchOptions,
) -> RowGroupStream<A::Buffer> {
    let (tx, rx) = sync_channel(opts.prefetch.max(1));
    let producer = Producer {
        cancel: Arc::new(AtomicBool::new(false)),
        budget: Arc::new(Budget::default()),
    };
    let (cancel, budget) = (producer.cancel.clone(), producer.budget.clone());
    let thread = std::thread::Builder::new()
        .name("gdscan-fetch".into())
        .spawn(move || produce(&files, &alloc, opts, &budget, &cancel, &tx));
    match thread {
        Ok(t) => RowGroupStream::merged(rx, vec![t], vec![producer]),
        Err(e) => RowGroupStream::failed(IoError::os("<fetch>", "spawn thread", e).into()),
    }
}

/// A row group whose reads are in flight. Field order matters: the pending
/// reads drop (and so wait) before the buffer they write into.
struct InFlight<B> {
    pending: Box<dyn PendingReads>,
    buffer: B,
    bytes: u64,
    file: usize,
    index: usize,
    chunks: Vec<ChunkSlice>,
    permit: Permit,
}

impl<B> InFlight<B> {
    fn finish(self) -> Result<FetchedRowGroup<B>> {
        let InFlight {
            pending,
            buffer,
            bytes: _,
            file,
            index,
            chunks,
            permit,
        } = self;
        let bytes_read = pending.wait()?;
        Ok(FetchedRowGroup {
            file,
            share: 0,
            index,
            buffer,
            chunks,
            bytes_read,
            _permit: permit,
        })
    }
}

/// Keeps up to `opts.prefetch` row groups' reads (and about
/// `opts.read_ahead_bytes`) in flight in the engine at once, so small row
/// groups still fill the worker pool, and hands them to the consumer in plan
/// order.
fn produce<A: Allocator>(
    files: &[SourceScan],
    alloc: &A,
    opts: FetchOptions,
    budget: &Arc<Budget>,
    cancel: &AtomicBool,
    tx: &SyncSender<Result<FetchedRowGroup<A::Buffer>>>,
) {
    let depth = opts.prefetch.max(1);
    let mut queue: VecDeque<InFlight<A::Buffer>> = VecDeque::with_capacity(depth);
    let deliver = |item: InFlight<A::Buffer>| {
        let result = item.finish();
        let failed = result.is_err();
        tx.send(result).is_ok() && !failed
    };
    let row_groups = files
        .iter()
        .enumerate()
        .flat_map(|(file, f)| f.plan.row_groups.iter().map(move |rg| (file, f, rg)));
    for (file, SourceScan { source, plan }, rg) in row_groups {
        if cancel.load(Ordering::Relaxed) {
            return;
        }
        let lay = layout(plan, rg);
        // Deliver the oldest first when the pipeline is full (row groups or
        // bytes), or when the budget needs what it holds.
        while queue.len() >= depth
            || (!queue.is_empty()
                && queue.iter().map(|q| q.bytes).sum::<u64>() >= opts.read_ahead_bytes)
        {
            if !deliver(queue.pop_front().expect("non-empty")) {
                return;
            }
        }
        let permit = loop {
            if let Some(p) = budget.try_acquire(lay.len as u64, opts.max_bytes_in_flight) {
                break p;
            }
            match queue.pop_front() {
                Some(item) => {
                    if !deliver(item) {
                        return;
                    }
                }
                None => match budget.acquire(lay.len as u64, opts.max_bytes_in_flight, cancel) {
                    Some(p) => break p,
                    None => return,
                },
            }
        };
        let mut buffer = match alloc.allocate(lay.len.max(1)) {
            Ok(b) => b,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        // SAFETY: the buffer moves into `InFlight` behind the pending reads,
        // which wait before it drops; its heap or device memory does not move.
        let pending = match unsafe { source.submit_reads(buffer.io_memory_mut(), &lay.reads) } {
            Ok(p) => p,
            Err(e) => {
                let _ = tx.send(Err(e.into()));
                return;
            }
        };
        queue.push_back(InFlight {
            pending,
            buffer,
            bytes: lay.len as u64,
            file,
            index: rg.index,
            chunks: lay.chunks,
            permit,
        });
    }
    while let Some(item) = queue.pop_front() {
        if !deliver(item) {
            return;
        }
    }
}
