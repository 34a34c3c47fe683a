//! [`LocalSource`]: a local file through the engine's [`FileHandle`], so the
//! POSIX paths and cuFile serve it and its handle counts every byte.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::future::{BoxFuture, FutureExt};

use super::error::Result;
use super::source::{PendingReads, Source};
use crate::cuda::Device;
use crate::engine::IoError;
use crate::engine::{Engine, FileHandle, FillBuffer, Memory, OpenMode, PathCounters, RangeRead};

/// A local file, read by the engine.
#[derive(Debug, Clone)]
pub struct LocalSource {
    handle: Arc<FileHandle>,
    size: u64,
    version: Option<String>,
}

impl LocalSource {
    /// Wraps an open handle; its size and modification time are read now.
    pub fn new(handle: Arc<FileHandle>) -> Result<LocalSource> {
        let size = handle.file_size()?;
        let version = std::fs::metadata(handle.path())
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map(|d| format!("mtime {}.{:09}", d.as_secs(), d.subsec_nanos()));
        Ok(LocalSource {
            handle,
            size,
            version,
        })
    }

    /// Opens `path` for reading with `engine`.
    pub fn open(engine: Arc<Engine>, path: impl AsRef<std::path::Path>) -> Result<LocalSource> {
        LocalSource::new(Arc::new(FileHandle::open_with(
            engine,
            path,
            OpenMode::Read,
        )?))
    }

    /// The handle.
    pub fn handle(&self) -> &Arc<FileHandle> {
        &self.handle
    }

    /// `source` as a local file, when it is one.
    pub fn of(source: &dyn Source) -> Option<&LocalSource> {
        source.as_any().downcast_ref()
    }
}

/// The bytes of a read of `buf.len()` bytes at `offset` that wrote `n`; a
/// short read (the file ended early) is an error.
fn filled(handle: &FileHandle, buf: FillBuffer, n: usize, offset: u64) -> Result<Bytes> {
    let expected = buf.len();
    buf.into_filled(n).map(Bytes::from).ok_or_else(|| {
        IoError::ShortRead {
            path: handle.path().to_string(),
            offset,
            expected,
            got: n,
        }
        .into()
    })
}

impl Source for LocalSource {
    fn location(&self) -> &str {
        self.handle.path()
    }

    fn size(&self) -> u64 {
        self.size
    }

    fn version(&self) -> Option<String> {
        self.version.clone()
    }

    fn read_ranges(&self, ranges: &[Range<u64>]) -> BoxFuture<'static, Result<Vec<Bytes>>> {
        let handle = self.handle.clone();
        let ranges = ranges.to_vec();
        async move {
            let mut futures = Vec::with_capacity(ranges.len());
            for r in &ranges {
                let len = r.end.saturating_sub(r.start) as usize;
                futures.push(if len == 0 {
                    None
                } else {
                    Some(handle.pread_async(FillBuffer::new(len), len, r.start)?)
                });
            }
            let mut out = Vec::with_capacity(ranges.len());
            for (r, f) in ranges.iter().zip(futures) {
                let Some(f) = f else {
                    out.push(Bytes::new());
                    continue;
                };
                let (buf, n) = f.await?;
                out.push(filled(&handle, buf, n, r.start)?);
            }
            Ok(out)
        }
        .boxed()
    }

    fn read_blocking(&self, range: Range<u64>) -> Result<Bytes> {
        let len = range.end.saturating_sub(range.start) as usize;
        if len == 0 {
            return Ok(Bytes::new());
        }
        let mut buf = FillBuffer::new(len);
        let n = self.handle.pread(&mut buf, len, range.start)?;
        filled(&self.handle, buf, n, range.start)
    }

    unsafe fn submit_reads(
        &self,
        memory: Memory,
        reads: &[RangeRead],
    ) -> Result<Box<dyn PendingReads>> {
        Ok(Box::new(self.handle.submit_ranges(memory, reads)?))
    }

    fn counters(&self) -> &PathCounters {
        self.handle.counters()
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn prepare_device(&self, device: Device) -> Result<()> {
        self.handle
            .engine()
            .preallocate_bounce_buffers(device)
            .map(|_| ())
            .map_err(Into::into)
    }
}
