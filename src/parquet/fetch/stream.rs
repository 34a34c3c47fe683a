//! The consumer's side of a fetch: the stream of fetched row groups, and
//! the handles that stop its producers when it is dropped.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::alloc::ReadBack;
use super::budget::{Budget, Permit};
use super::layout::ChunkSlice;
use crate::parquet::error::{Result, ScanError};

/// One fetched row group.
#[derive(Debug)]
pub struct FetchedRowGroup<B> {
    /// Which scan of the fetch it came from (0 for a single object).
    pub file: usize,
    /// Which allocator of the fetch holds it (0 with one allocator).
    pub share: usize,
    /// Row group index in the file.
    pub index: usize,
    /// The bytes: the row group's requests back to back.
    pub buffer: B,
    /// Where each chunk is in `buffer`.
    pub chunks: Vec<ChunkSlice>,
    /// Bytes read (requests, gaps included).
    pub bytes_read: u64,
    pub(super) _permit: Permit,
}

impl<B: ReadBack> FetchedRowGroup<B> {
    /// One of its chunks' bytes in file order, copied into host memory.
    pub fn chunk_bytes(&self, slice: &ChunkSlice) -> Result<Vec<u8>> {
        slice.gather(|at, dst| self.buffer.read_back(at, dst))
    }
}

/// The stream of fetched row groups: in plan order for one allocator; with
/// several, each share's row groups in its plan order, the shares
/// interleaved as they land ([`FetchedRowGroup::share`] tells which).
#[derive(Debug)]
pub struct RowGroupStream<B> {
    rx: Option<Receiver<Result<FetchedRowGroup<B>>>>,
    /// The producer thread (one allocator) or the shares' forwarders.
    threads: Vec<JoinHandle<()>>,
    /// Every producer's stop flag and budget, to wake and stop them on drop.
    producers: Vec<Producer>,
}

/// A producer thread's stop flag and in-flight budget.
#[derive(Debug, Clone)]
pub(super) struct Producer {
    pub(super) cancel: Arc<AtomicBool>,
    pub(super) budget: Arc<Budget>,
}

impl Producer {
    /// Stops the producer and wakes it if it waits for budget.
    pub(super) fn stop(&self) {
        self.cancel.store(true, Ordering::Relaxed);
        self.budget.freed.notify_all();
    }
}

impl<B> Iterator for RowGroupStream<B> {
    type Item = Result<FetchedRowGroup<B>>;
    fn next(&mut self) -> Option<Self::Item> {
        self.rx.as_ref()?.recv().ok()
    }
}

impl<B> RowGroupStream<B> {
    /// A stream whose only item is `error`.
    pub(super) fn failed(error: ScanError) -> Self {
        let (tx, rx) = sync_channel(1);
        let _ = tx.send(Err(error));
        RowGroupStream {
            rx: Some(rx),
            threads: Vec::new(),
            producers: Vec::new(),
        }
    }

    /// A stream fed by `threads` through `rx`, whose producers are `producers`.
    pub(super) fn merged(
        rx: Receiver<Result<FetchedRowGroup<B>>>,
        threads: Vec<JoinHandle<()>>,
        producers: Vec<Producer>,
    ) -> Self {
        RowGroupStream {
            rx: Some(rx),
            threads,
            producers,
        }
    }

    /// The stop flags and budgets of this stream's producers.
    pub(super) fn producers(&self) -> Vec<Producer> {
        self.producers.clone()
    }
}

impl<B> Drop for RowGroupStream<B> {
    fn drop(&mut self) {
        for p in &self.producers {
            p.stop();
        }
        // Dropping the receiver fails the threads' next send.
        self.rx.take();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
