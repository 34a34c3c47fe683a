//! One counted GET of an exact range, its body streamed into a sink.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore};
use tokio::sync::Semaphore;

use super::counting::attributed;
use super::error::{Result, StoreError};
use crate::engine::IoError;
use crate::engine::{global_counters, IoPath, PathCounters};

/// A remote object as its reads need it.
#[derive(Debug)]
pub(crate) struct Object {
    /// The store.
    pub store: Arc<dyn ObjectStore>,
    /// The object's path in the store.
    pub path: Path,
    /// The object as shown in errors (its URL, or store and path).
    pub label: String,
    /// The e-tag seen at open: later reads ask for it (`If-Match`), so a
    /// changed object is an error, never a mix of two versions.
    pub e_tag: std::sync::OnceLock<String>,
    /// This source's counters.
    pub counters: PathCounters,
    /// Requests in flight at most.
    pub limit: Arc<Semaphore>,
}

/// Where a response body goes, chunk by chunk.
pub(crate) trait Sink: Send {
    /// `chunk` is the next part of the body.
    fn put(&mut self, chunk: Bytes) -> BoxFuture<'_, Result<()>>;
    /// The body is complete (`len` bytes); anything queued must land before
    /// this resolves.
    fn finish(&mut self) -> BoxFuture<'_, Result<()>>;
}

/// Reads `range` of `object` into `sink`: one request (under the source's
/// concurrency limit) whose attempts are counted, whose body must carry
/// exactly the range. Returns the bytes read.
pub(crate) async fn get_into(
    object: &Object,
    range: Range<u64>,
    sink: &mut dyn Sink,
) -> Result<u64> {
    let expected = (range.end - range.start) as usize;
    let _permit = object
        .limit
        .acquire()
        .await
        .map_err(|_| IoError::PoolStopped)?;
    let op = || format!("get bytes {}..{}", range.start, range.end);
    let start = Instant::now();
    let (result, attempts) = attributed(async {
        let options = GetOptions {
            range: Some(GetRange::Bounded(range.clone())),
            if_match: object.e_tag.get().cloned(),
            ..Default::default()
        };
        let response = object
            .store
            .get_opts(&object.path, options)
            .await
            .map_err(|e| StoreError::from_store(&object.label, op(), e))?;
        let mut body = response.into_stream();
        let mut got = 0usize;
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| StoreError::from_store(&object.label, op(), e))?;
            got += chunk.len();
            if got > expected {
                return Ok(got);
            }
            sink.put(chunk).await?;
        }
        if got == expected {
            sink.finish().await?;
        }
        Ok::<usize, StoreError>(got)
    })
    .await;
    let retries = attempts.saturating_sub(1);
    object.counters.add_retries(IoPath::RemoteStore, retries);
    global_counters().add_retries(IoPath::RemoteStore, retries);
    let got = result?;
    if got != expected {
        return Err(StoreError::Truncated {
            object: object.label.clone(),
            offset: range.start,
            expected,
            got,
        });
    }
    let elapsed = start.elapsed();
    object
        .counters
        .add(IoPath::RemoteStore, expected as u64, elapsed);
    global_counters().add(IoPath::RemoteStore, expected as u64, elapsed);
    Ok(expected as u64)
}

/// Host memory at a fixed address: chunks are copied in as they arrive.
pub(crate) struct HostSink {
    /// Address of the range's first byte (an address, so the sink is `Send`).
    pub at: usize,
    /// Bytes written so far.
    pub written: usize,
}

impl Sink for HostSink {
    fn put(&mut self, chunk: Bytes) -> BoxFuture<'_, Result<()>> {
        // SAFETY: the caller of `submit_reads` keeps the memory valid and
        // unshared until the reads end; `get_into` never passes more than the
        // range's length, so the copy stays inside this piece's slice.
        unsafe {
            std::ptr::copy_nonoverlapping(
                chunk.as_ptr(),
                (self.at + self.written) as *mut u8,
                chunk.len(),
            );
        }
        self.written += chunk.len();
        Box::pin(async { Ok(()) })
    }

    fn finish(&mut self) -> BoxFuture<'_, Result<()>> {
        Box::pin(async { Ok(()) })
    }
}
