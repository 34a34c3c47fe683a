//! One submitted request: its tasks, claimed by workers from a counter, and
//! its completion, awaited synchronously or as a future.

use std::any::Any;
use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};

use super::error::{IoError, Result};
use super::memory::Memory;
use super::mmap::Mapping;
use super::open_file::FileShared;
use super::tasks::{Task, TaskSplit};

/// How a request's tasks move bytes.
#[derive(Debug)]
pub(crate) enum Transfer {
    /// File to host memory.
    ReadHost,
    /// File to pinned bounce buffers to the device.
    ReadDeviceBounce,
    /// Page cache, registered in place, to the device.
    ReadDeviceMmap(Mapping),
    /// File to device memory through cuFile.
    ReadCuFile,
    /// Host memory to file.
    WriteHost,
    /// Device memory to file through cuFile.
    WriteCuFile,
    /// Device to pinned bounce buffers to file.
    WriteDevice,
}

#[derive(Debug, Default)]
struct Completion {
    done: bool,
    waker: Option<Waker>,
}

/// A request in flight.
pub(crate) struct Request {
    pub file: Arc<FileShared>,
    pub transfer: Transfer,
    pub memory: Memory,
    pub split: TaskSplit,
    pub use_direct: bool,
    pub bounce_size: usize,
    next: AtomicUsize,
    helpers: AtomicUsize,
    failed: AtomicBool,
    error: Mutex<Option<IoError>>,
    completion: Mutex<Completion>,
    finished: Condvar,
    keep_alive: Mutex<Option<Box<dyn Any + Send>>>,
}

impl std::fmt::Debug for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Request")
            .field("path", &self.file.path)
            .field("transfer", &self.transfer)
            .field("split", &self.split)
            .finish_non_exhaustive()
    }
}

impl Request {
    /// A request of `split`'s tasks over `memory`.
    pub(crate) fn new(
        file: Arc<FileShared>,
        transfer: Transfer,
        memory: Memory,
        split: TaskSplit,
        use_direct: bool,
        bounce_size: usize,
    ) -> Self {
        Request {
            file,
            transfer,
            memory,
            split,
            use_direct,
            bounce_size,
            next: AtomicUsize::new(0),
            helpers: AtomicUsize::new(0),
            failed: AtomicBool::new(false),
            error: Mutex::new(None),
            completion: Mutex::new(Completion::default()),
            finished: Condvar::new(),
            keep_alive: Mutex::new(None),
        }
    }

    /// Keeps `owner` (the buffer of an async request) alive until completion.
    pub(crate) fn keep_alive(&self, owner: Box<dyn Any + Send>) {
        *self.keep_alive.lock().unwrap_or_else(|e| e.into_inner()) = Some(owner);
    }

    /// Sets how many workers will call [`Request::helper_done`].
    pub(crate) fn set_helpers(&self, n: usize) {
        self.helpers.store(n, Ordering::SeqCst);
    }

    /// The next unclaimed task, unless the request failed or is exhausted.
    pub(crate) fn claim(&self) -> Option<Task> {
        if self.failed.load(Ordering::Relaxed) {
            return None;
        }
        self.split.task(self.next.fetch_add(1, Ordering::Relaxed))
    }

    /// Records a failure; the first one wins and stops further claims.
    pub(crate) fn fail(&self, err: IoError) {
        self.failed.store(true, Ordering::Relaxed);
        let mut slot = self.error.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert(err);
    }

    /// Called once by each helper when it has no more work and every copy it
    /// queued has completed. The last one completes the request.
    pub(crate) fn helper_done(&self) {
        if self.helpers.fetch_sub(1, Ordering::AcqRel) == 1 {
            let mut c = self.completion.lock().unwrap_or_else(|e| e.into_inner());
            c.done = true;
            if let Some(w) = c.waker.take() {
                w.wake();
            }
            self.finished.notify_all();
        }
    }

    fn outcome(&self) -> Result<usize> {
        match self.error.lock().unwrap_or_else(|e| e.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(self.split_len()),
        }
    }

    fn split_len(&self) -> usize {
        self.split.total_len()
    }

    /// Blocks until every helper is done; returns the bytes moved.
    pub(crate) fn wait(&self) -> Result<usize> {
        let mut c = self.completion.lock().unwrap_or_else(|e| e.into_inner());
        while !c.done {
            c = self.finished.wait(c).unwrap_or_else(|e| e.into_inner());
        }
        drop(c);
        self.outcome()
    }
}

/// The future of an asynchronous request: resolves to the buffer (handed
/// back) and the bytes moved. Dropping it early is safe: the request keeps
/// the buffer alive until the workers are done with it.
#[derive(Debug)]
pub struct IoFuture<B> {
    request: Arc<Request>,
    _buffer: PhantomData<fn() -> B>,
}

impl<B> IoFuture<B> {
    pub(crate) fn new(request: Arc<Request>) -> Self {
        IoFuture {
            request,
            _buffer: PhantomData,
        }
    }
}

impl<B: Send + 'static> Future for IoFuture<B> {
    type Output = Result<(B, usize)>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let request = &self.request;
        let mut c = request.completion.lock().unwrap_or_else(|e| e.into_inner());
        if !c.done {
            c.waker = Some(cx.waker().clone());
            return Poll::Pending;
        }
        drop(c);
        let owner = request
            .keep_alive
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
            .and_then(|b| b.downcast::<B>().ok())
            .ok_or(IoError::PoolStopped)?;
        Poll::Ready(request.outcome().map(|n| (*owner, n)))
    }
}
