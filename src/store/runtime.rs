//! The tokio runtime that drives every object-store request, whatever
//! executor (or none) the caller runs on: requests are spawned onto it and
//! their results awaited through join handles, which any executor can poll.

use std::future::Future;
use std::sync::{Mutex, OnceLock};

use tokio::runtime::{Builder, Handle, Runtime};

use super::error::{Result, StoreError};
use crate::engine::IoError;

/// Worker threads of the store runtime: network I/O is asynchronous, so a
/// few threads carry many requests; they also copy bodies into place.
fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(2, 8)
}

/// The process-wide store runtime, started on first use.
pub(super) fn handle() -> Result<Handle> {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    static STARTING: Mutex<()> = Mutex::new(());
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt.handle().clone());
    }
    let _guard = STARTING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(rt) = RUNTIME.get() {
        return Ok(rt.handle().clone());
    }
    let rt = Builder::new_multi_thread()
        .worker_threads(threads())
        .thread_name("gdscan-store")
        .enable_all()
        .build()
        .map_err(|e| IoError::os("<store runtime>", "start tokio runtime", e))?;
    Ok(RUNTIME.get_or_init(|| rt).handle().clone())
}

/// Runs `future` on the store runtime and waits for it from this thread,
/// through a plain channel: callable from any thread, inside another
/// executor's task too (it blocks that thread meanwhile), though not from
/// one of the store runtime's own workers.
pub fn block_on<F>(future: F) -> Result<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    handle()?.spawn(async move {
        let _ = tx.send(future.await);
    });
    rx.recv().map_err(|_| lost())
}

/// A task that ended without a result (it panicked or was cancelled).
pub(crate) fn lost() -> StoreError {
    StoreError::TaskLost
}

/// A task that panicked or was cancelled, as an error.
pub(crate) fn joined(e: tokio::task::JoinError) -> StoreError {
    StoreError::Task(e)
}
