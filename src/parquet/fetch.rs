//! Executing a plan: each kept row group lands in one allocation (device or
//! host) with a table mapping every chunk (and page range) to its place,
//! streamed row group after row group with a bound on bytes in flight.
//!
//! A producer thread reads the next row groups (all requests of a row group
//! submitted at once to the source: the engine for a local file, the store
//! runtime for a remote object) while the consumer works on the current
//! one; the bound on bytes in flight, released as the consumer drops row
//! groups, keeps memory bounded.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use serde::Serialize;

use super::error::{Result, ScanError};
use super::plan::{RowGroupPlan, ScanPlan};
use crate::cuda::{Device, DevicePool, PooledDeviceBuffer};
use crate::engine::IoError;
use crate::engine::{IoBufMut, RangeRead};
use crate::store::{PendingReads, Source};

/// Where a row group's bytes land.
pub trait Allocator: Send + 'static {
    /// The buffer type.
    type Buffer: IoBufMut + ReadBack + Send + 'static;
    /// One buffer of `len` bytes.
    fn allocate(&self, len: usize) -> Result<Self::Buffer>;
}

/// A row-group buffer whose bytes can be copied back into host memory: for
/// checksums and checks of what landed, never on a scan's hot path.
pub trait ReadBack {
    /// Copies `dst.len()` bytes starting at `offset` into `dst`
    /// (synchronous); a range outside the buffer is an error.
    fn read_back(&self, offset: usize, dst: &mut [u8]) -> Result<()>;
}

impl ReadBack for Vec<u8> {
    fn read_back(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        let end = offset.checked_add(dst.len());
        match end.and_then(|end| self.get(offset..end)) {
            Some(src) => {
                dst.copy_from_slice(src);
                Ok(())
            }
            None => Err(IoError::BufferTooSmall {
                path: "<host buffer>".into(),
                buffer: self.len(),
                requested: offset.saturating_add(dst.len()),
            }
            .into()),
        }
    }
}

impl ReadBack for PooledDeviceBuffer {
    fn read_back(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        Ok(self.copy_to_host(offset, dst)?)
    }
}

/// Host memory (`Vec<u8>`).
#[derive(Debug, Clone, Copy, Default)]
pub struct HostAllocator;

impl Allocator for HostAllocator {
    type Buffer = Vec<u8>;
    fn allocate(&self, len: usize) -> Result<Vec<u8>> {
        Ok(vec![0u8; len])
    }
}

/// Device memory on one GPU, from a caching pool: a row group's buffer goes
/// back to the pool when the consumer drops it, and the next row group (of
/// this or a later scan through a clone of the allocator) reuses it, so a
/// steady scan never calls `cuMemFree`, which would stall every copy in
/// flight. Drop a row group only after GPU work reading it has finished.
#[derive(Debug, Clone)]
pub struct DeviceAllocator {
    pool: Arc<DevicePool>,
}

/// Bytes of idle row-group buffers a [`DeviceAllocator`] keeps for reuse:
/// as much as the default fetch may hold at once, so that a steady scan
/// allocates nothing.
pub(crate) const CACHED_ROW_GROUP_BYTES: usize = 2 << 30;

impl DeviceAllocator {
    /// An allocator with its own pool on `device`.
    pub fn new(device: Device) -> Self {
        DeviceAllocator {
            pool: DevicePool::new(device, CACHED_ROW_GROUP_BYTES),
        }
    }

    /// An allocator drawing from `pool`.
    pub fn with_pool(pool: Arc<DevicePool>) -> Self {
        DeviceAllocator { pool }
    }

    /// The pool underneath.
    pub fn pool(&self) -> &Arc<DevicePool> {
        &self.pool
    }
}

impl Allocator for DeviceAllocator {
    type Buffer = PooledDeviceBuffer;
    fn allocate(&self, len: usize) -> Result<PooledDeviceBuffer> {
        Ok(self.pool.allocate(len)?)
    }
}

/// A contiguous piece of a chunk inside a row group's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Piece {
    /// Where it is in the file.
    pub file_offset: u64,
    /// Where it is in the row group's buffer.
    pub buffer_offset: usize,
    /// Length.
    pub len: usize,
}

/// Where one planned chunk landed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChunkSlice {
    /// Index into [`ScanPlan::chunks`].
    pub chunk: usize,
    /// Its pieces in file order (one for a whole chunk; the dictionary page
    /// and the kept pages after page pruning).
    pub pieces: Vec<Piece>,
}

impl ChunkSlice {
    /// The chunk's bytes in file order, copied out of its row group's buffer
    /// with `read(buffer_offset, destination)`.
    pub fn gather(&self, mut read: impl FnMut(usize, &mut [u8]) -> Result<()>) -> Result<Vec<u8>> {
        let mut out = vec![0u8; self.pieces.iter().map(|p| p.len).sum()];
        let mut at = 0;
        for p in &self.pieces {
            read(p.buffer_offset, &mut out[at..at + p.len])?;
            at += p.len;
        }
        Ok(out)
    }

    /// The chunk's bytes as the file holds them, cut from `file` (the whole
    /// file's content): what [`FetchedRowGroup::chunk_bytes`] must give
    /// back. None when a piece lies past the end of `file`.
    pub fn file_bytes(&self, file: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(self.pieces.iter().map(|p| p.len).sum());
        for p in &self.pieces {
            let start = usize::try_from(p.file_offset).ok()?;
            out.extend_from_slice(file.get(start..start.checked_add(p.len)?)?);
        }
        Some(out)
    }
}

/// The buffer layout of one row group: the reads, the chunk table, the size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowGroupLayout {
    /// One read per coalesced request, packed one after another.
    pub reads: Vec<RangeRead>,
    /// Where every chunk lands.
    pub chunks: Vec<ChunkSlice>,
    /// Bytes of the allocation.
    pub len: usize,
}

/// Lays out a row group's requests back to back and maps its chunks into
/// them (pure).
pub fn layout(plan: &ScanPlan, rg: &RowGroupPlan) -> RowGroupLayout {
    let mut reads = Vec::with_capacity(rg.requests.len());
    let mut at = 0usize;
    for &r in &rg.requests {
        let req = &plan.requests[r];
        reads.push(RangeRead {
            file_offset: req.range.start,
            buffer_offset: at,
            len: req.len() as usize,
        });
        at += req.len() as usize;
    }
    let chunks = rg
        .chunks
        .iter()
        .map(|&c| {
            let pieces = plan.chunks[c]
                .ranges
                .iter()
                .map(|range| {
                    let read = reads
                        .iter()
                        .find(|r| {
                            r.file_offset <= range.start
                                && range.end <= r.file_offset + r.len as u64
                        })
                        .expect("every chunk range lies inside a coalesced request");
                    Piece {
                        file_offset: range.start,
                        buffer_offset: read.buffer_offset
                            + (range.start - read.file_offset) as usize,
                        len: (range.end - range.start) as usize,
                    }
                })
                .collect();
            ChunkSlice { chunk: c, pieces }
        })
        .collect();
    RowGroupLayout {
        reads,
        chunks,
        len: at,
    }
}

/// How the fetch streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchOptions {
    /// Bytes of row groups alive at once (read, queued or held by the
    /// consumer); a single larger row group still goes through alone.
    pub max_bytes_in_flight: u64,
    /// Most row groups whose reads are in flight at once (read ahead of
    /// the consumer).
    pub prefetch: usize,
    /// Bytes of reads the producer keeps in flight, as long as `prefetch`
    /// and `max_bytes_in_flight` allow: enough for every worker to have
    /// several tasks queued, so narrow projections (a few small chunks per
    /// row group) still keep reads and copies overlapped.
    pub read_ahead_bytes: u64,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            max_bytes_in_flight: 2 << 30,
            prefetch: 64,
            read_ahead_bytes: 512 << 20,
        }
    }
}

#[derive(Debug, Default)]
struct Budget {
    used: Mutex<u64>,
    freed: Condvar,
}

/// A share of the in-flight budget, returned on drop.
#[derive(Debug)]
pub struct Permit {
    budget: Arc<Budget>,
    bytes: u64,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut used = self.budget.used.lock().unwrap_or_else(|e| e.into_inner());
        *used -= self.bytes;
        self.budget.freed.notify_all();
    }
}

impl Budget {
    fn try_acquire(self: &Arc<Self>, bytes: u64, max: u64) -> Option<Permit> {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        if *used > 0 && *used + bytes > max {
            return None;
        }
        *used += bytes;
        Some(Permit {
            budget: self.clone(),
            bytes,
        })
    }

    fn acquire(self: &Arc<Self>, bytes: u64, max: u64, cancel: &AtomicBool) -> Option<Permit> {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        while *used > 0 && *used + bytes > max {
            if cancel.load(Ordering::Relaxed) {
                return None;
            }
            used = self
                .freed
                .wait_timeout(used, std::time::Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        *used += bytes;
        Some(Permit {
            budget: self.clone(),
            bytes,
        })
    }
}

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
    _permit: Permit,
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
    cancel: Arc<AtomicBool>,
    budget: Arc<Budget>,
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

/// One object of a fetch (a local file or a remote object): where to read
/// and what.
#[derive(Debug, Clone)]
pub struct SourceScan {
    /// The object.
    pub source: Arc<dyn Source>,
    /// Its plan.
    pub plan: Arc<ScanPlan>,
}

impl SourceScan {
    /// `plan` of `source`.
    pub fn new(source: Arc<dyn Source>, plan: Arc<ScanPlan>) -> Self {
        SourceScan { source, plan }
    }
}

/// Starts fetching the plans of `scans` (local files, remote objects, or
/// both) into buffers from `allocs`, as one stream of row groups.
///
/// With one allocator (`[DeviceAllocator::new(dev)]`, or a host one) the
/// row groups come in scan order, then plan order, under one read-ahead and
/// one byte budget, so the reads of the next object overlap the end of the
/// current one (a table split into many files streams like one file).
/// With several (normally one [`DeviceAllocator`] per GPU), the row groups
/// are divided among them by bytes ([`spread`](super::spread::spread)), each
/// share fetched at once by its own producer through the same engine, and
/// the stream interleaves the shares as they land. [`FetchedRowGroup::file`]
/// tells which scan a row group came from, [`FetchedRowGroup::share`] which
/// allocator holds it. The first error of any share stops every share.
pub fn fetch<A: Allocator>(
    scans: impl IntoIterator<Item = SourceScan>,
    allocs: impl IntoIterator<Item = A>,
    opts: FetchOptions,
) -> RowGroupStream<A::Buffer> {
    let files: Vec<SourceScan> = scans.into_iter().collect();
    let mut allocs: Vec<A> = allocs.into_iter().collect();
    match allocs.len() {
        0 => RowGroupStream::failed(ScanError::NoAllocator),
        1 => fetch_share(files, allocs.remove(0), opts),
        _ => super::fetch_spread::fetch_shares(files, allocs, opts),
    }
}

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
