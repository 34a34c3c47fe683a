//! [`RemoteSource`]: an object in any [`ObjectStore`], read with bounded
//! concurrency and request size into host memory, or through pinned staging
//! buffers into device memory.

use std::ops::Range;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use futures::future::{BoxFuture, FutureExt};
use futures::StreamExt;
use object_store::path::Path;
use object_store::{GetOptions, GetRange, ObjectStore};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::counting::{attributed, HttpCounts};
use super::error::{Result, StoreError};
use super::get::{get_into, HostSink, Object};
use super::options::StoreOptions;
use super::runtime::{block_on, handle, joined};
use super::source::{PendingReads, Source};
use super::split::split_reads;
use super::staging::{DeviceSink, StagingPool, STAGE_BYTES, STAGE_SLOTS};
use crate::cuda::Device;
use crate::engine::IoError;
use crate::engine::{global_counters, IoPath, Memory, PathCounters, RangeRead};

/// An object in a remote store, opened with one suffix request that brings
/// its size, its version and the bytes at its end (the Parquet footer).
#[derive(Debug, Clone)]
pub struct RemoteSource {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    object: Arc<Object>,
    size: u64,
    version: Option<String>,
    tail: (u64, Bytes),
    options: StoreOptions,
    http: Option<Arc<HttpCounts>>,
    staging: Mutex<Vec<Arc<StagingPool>>>,
}

/// What the opening request brought back.
struct Opened {
    size: u64,
    e_tag: Option<String>,
    modified: String,
    tail: (u64, Bytes),
}

async fn open_tail(object: Arc<Object>, hint: u64) -> Result<Opened> {
    let op = format!("get the last {hint} bytes");
    let start = Instant::now();
    let (result, attempts) = attributed(async {
        let options = GetOptions {
            range: Some(GetRange::Suffix(hint)),
            ..Default::default()
        };
        let response = object
            .store
            .get_opts(&object.path, options)
            .await
            .map_err(|e| StoreError::from_store(&object.label, op.clone(), e))?;
        let range = response.range.clone();
        let meta = response.meta.clone();
        let expected = (range.end - range.start) as usize;
        let mut body = response.into_stream();
        let mut bytes = BytesMut::with_capacity(expected);
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| StoreError::from_store(&object.label, op.clone(), e))?;
            bytes.extend_from_slice(&chunk);
            if bytes.len() > expected {
                break;
            }
        }
        if bytes.len() != expected {
            return Err(StoreError::Truncated {
                object: object.label.clone(),
                offset: range.start,
                expected,
                got: bytes.len(),
            });
        }
        Ok(Opened {
            size: meta.size,
            e_tag: meta.e_tag,
            modified: meta.last_modified.to_rfc3339(),
            tail: (range.start, bytes.freeze()),
        })
    })
    .await;
    let retries = attempts.saturating_sub(1);
    object.counters.add_retries(IoPath::RemoteStore, retries);
    global_counters().add_retries(IoPath::RemoteStore, retries);
    let opened = result?;
    let n = opened.tail.1.len() as u64;
    object.counters.add(IoPath::RemoteStore, n, start.elapsed());
    global_counters().add(IoPath::RemoteStore, n, start.elapsed());
    Ok(opened)
}

impl RemoteSource {
    /// Opens `path` in `store`, shown as `label` (its URL). `http` are the
    /// store's attempt counts when it was built with a
    /// [`CountingConnector`](super::CountingConnector) (stores from
    /// [`super::open`] are), for the report.
    pub fn open(
        store: Arc<dyn ObjectStore>,
        path: Path,
        label: impl Into<String>,
        options: StoreOptions,
        http: Option<Arc<HttpCounts>>,
    ) -> Result<RemoteSource> {
        let object = Arc::new(Object {
            store,
            path,
            label: label.into(),
            e_tag: std::sync::OnceLock::new(),
            counters: PathCounters::default(),
            limit: Arc::new(Semaphore::new(options.concurrency.max(1))),
        });
        let opened = block_on(open_tail(object.clone(), options.footer_hint.max(8)))??;
        if let Some(tag) = &opened.e_tag {
            let _ = object.e_tag.set(tag.clone());
        }
        Ok(RemoteSource {
            inner: Arc::new(Inner {
                object,
                size: opened.size,
                version: opened.e_tag.or(Some(opened.modified)),
                tail: opened.tail,
                options,
                http,
                staging: Mutex::new(Vec::new()),
            }),
        })
    }

    /// The store.
    pub fn store(&self) -> &Arc<dyn ObjectStore> {
        &self.inner.object.store
    }

    /// The object's path in the store.
    pub fn path(&self) -> &Path {
        &self.inner.object.path
    }

    /// The options it reads with.
    pub fn options(&self) -> &StoreOptions {
        &self.inner.options
    }

    /// The HTTP attempts of the store behind this object (all its objects
    /// together), when its client counts them.
    pub fn http_counts(&self) -> Option<&Arc<HttpCounts>> {
        self.inner.http.as_ref()
    }

    /// `source` as a remote object, when it is one.
    pub fn of(source: &dyn Source) -> Option<&RemoteSource> {
        source.as_any().downcast_ref()
    }

    fn check_range(&self, offset: u64, len: usize) -> Result<()> {
        let end = offset.checked_add(len as u64);
        if end.is_none_or(|end| end > self.inner.size) {
            return Err(IoError::ShortRead {
                path: self.inner.object.label.clone(),
                offset,
                expected: len,
                got: self.inner.size.saturating_sub(offset) as usize,
            }
            .into());
        }
        Ok(())
    }

    fn staging(&self, device: Device) -> Arc<StagingPool> {
        let mut pools = self.inner.staging.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(p) = pools.iter().find(|p| p.device() == device) {
            return p.clone();
        }
        let bytes = (self.inner.options.request_size as usize).clamp(1, STAGE_BYTES);
        let pool = Arc::new(StagingPool::new(device, STAGE_SLOTS, bytes));
        pools.push(pool.clone());
        pool
    }

    fn host_piece(&self, piece: RangeRead, at: usize) -> BoxFuture<'static, Result<u64>> {
        let object = self.inner.object.clone();
        async move {
            let range = piece.file_offset..piece.file_offset + piece.len as u64;
            let mut sink = HostSink { at, written: 0 };
            get_into(&object, range, &mut sink).await
        }
        .boxed()
    }
}

impl Source for RemoteSource {
    fn location(&self) -> &str {
        &self.inner.object.label
    }

    fn size(&self) -> u64 {
        self.inner.size
    }

    fn version(&self) -> Option<String> {
        self.inner.version.clone()
    }

    fn read_ranges(&self, ranges: &[Range<u64>]) -> BoxFuture<'static, Result<Vec<Bytes>>> {
        let this = self.clone();
        let ranges = ranges.to_vec();
        async move {
            for r in &ranges {
                this.check_range(r.start, r.end.saturating_sub(r.start) as usize)?;
            }
            let task = handle()?.spawn(async move {
                let mut buffers: Vec<Vec<u8>> = ranges
                    .iter()
                    .map(|r| vec![0u8; r.end.saturating_sub(r.start) as usize])
                    .collect();
                let mut set = JoinSet::new();
                for (r, buf) in ranges.iter().zip(buffers.iter_mut()) {
                    let read = RangeRead {
                        file_offset: r.start,
                        buffer_offset: 0,
                        len: buf.len(),
                    };
                    let base = buf.as_mut_ptr() as usize;
                    for piece in split_reads(&[read], this.inner.options.request_size) {
                        set.spawn(this.host_piece(piece, base + piece.buffer_offset));
                    }
                }
                while let Some(done) = set.join_next().await {
                    let failed = match done {
                        Ok(Ok(_)) => None,
                        Ok(Err(e)) => Some(e),
                        Err(e) => Some(joined(e)),
                    };
                    if let Some(e) = failed {
                        set.shutdown().await;
                        return Err(e);
                    }
                }
                Ok(buffers.into_iter().map(Bytes::from).collect())
            });
            task.await.map_err(joined)?
        }
        .boxed()
    }

    unsafe fn submit_reads(
        &self,
        memory: Memory,
        reads: &[RangeRead],
    ) -> Result<Box<dyn PendingReads>> {
        for r in reads {
            let end = r.buffer_offset.checked_add(r.len);
            if end.is_none_or(|end| end > memory.len()) {
                return Err(IoError::BufferTooSmall {
                    path: self.inner.object.label.clone(),
                    buffer: memory.len(),
                    requested: end.unwrap_or(usize::MAX),
                }
                .into());
            }
            self.check_range(r.file_offset, r.len)?;
        }
        let pieces = split_reads(reads, self.inner.options.request_size);
        let futures: Vec<BoxFuture<'static, Result<u64>>> = match memory {
            Memory::Host { ptr, .. } => pieces
                .iter()
                .map(|p| self.host_piece(*p, ptr as usize + p.buffer_offset))
                .collect(),
            Memory::Device { device, ptr, .. } => {
                let pool = self.staging(device);
                pieces
                    .iter()
                    .map(|p| {
                        let object = self.inner.object.clone();
                        let mut sink = DeviceSink::new(pool.clone(), ptr + p.buffer_offset as u64);
                        let range = p.file_offset..p.file_offset + p.len as u64;
                        async move { get_into(&object, range, &mut sink).await }.boxed()
                    })
                    .collect()
            }
        };
        Ok(Box::new(super::pending::start(futures)?))
    }

    fn counters(&self) -> &PathCounters {
        &self.inner.object.counters
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn cached_tail(&self) -> Option<(u64, Bytes)> {
        Some(self.inner.tail.clone())
    }

    fn prepare_device(&self, device: Device) -> Result<()> {
        self.staging(device).fill().map(|_| ())
    }
}
