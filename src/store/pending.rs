//! Reads of one buffer in flight on the store runtime: a driver task joins
//! the piece tasks, stops the rest at the first error, and is waited for on
//! drop, so the buffer is never written after its reads are given up.

use std::sync::mpsc::{sync_channel, Receiver};

use futures::future::{self, BoxFuture, Either};
use tokio::sync::oneshot;
use tokio::task::JoinSet;

use super::error::Result;
use super::runtime::{handle, joined, lost};
use super::source::PendingReads;

/// Pieces running on the store runtime.
#[derive(Debug)]
pub(crate) struct RuntimeReads {
    done: Option<Receiver<Result<u64>>>,
    cancel: Option<oneshot::Sender<()>>,
}

/// Starts `pieces` (each resolving to its bytes read) on the store runtime.
pub(crate) fn start(pieces: Vec<BoxFuture<'static, Result<u64>>>) -> Result<RuntimeReads> {
    let rt = handle()?;
    let (cancel, cancelled) = oneshot::channel();
    let (tx, done) = sync_channel(1);
    rt.spawn(async move {
        let _ = tx.send(drive(pieces, cancelled).await);
    });
    Ok(RuntimeReads {
        done: Some(done),
        cancel: Some(cancel),
    })
}

/// Joins every piece; at the first error (or when the pending read is
/// dropped) stops the others and waits until they have stopped.
pub(crate) async fn drive(
    pieces: Vec<BoxFuture<'static, Result<u64>>>,
    mut cancelled: oneshot::Receiver<()>,
) -> Result<u64> {
    let mut set = JoinSet::new();
    for p in pieces {
        set.spawn(p);
    }
    let mut total = 0u64;
    loop {
        let event = match future::select(Box::pin(set.join_next()), &mut cancelled).await {
            Either::Left((next, _)) => Some(next),
            Either::Right(_) => None,
        };
        let Some(next) = event else {
            set.shutdown().await;
            return Ok(total);
        };
        match next {
            None => return Ok(total),
            Some(Ok(Ok(n))) => total += n,
            Some(Ok(Err(e))) => {
                set.shutdown().await;
                return Err(e);
            }
            Some(Err(e)) => {
                set.shutdown().await;
                return Err(joined(e));
            }
        }
    }
}

impl PendingReads for RuntimeReads {
    fn wait(mut self: Box<Self>) -> Result<u64> {
        let out = match self.done.take() {
            Some(done) => done.recv().map_err(|_| lost()).and_then(|r| r),
            None => Err(lost()),
        };
        // The cancel sender lives until the driver is done.
        drop(self.cancel.take());
        out
    }
}

impl Drop for RuntimeReads {
    fn drop(&mut self) {
        drop(self.cancel.take());
        if let Some(done) = self.done.take() {
            let _ = done.recv();
        }
    }
}
