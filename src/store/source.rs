//! The one trait the Parquet layer reads through.

use std::any::Any;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;

use super::error::Result;
use crate::cuda::Device;
use crate::engine::{Memory, PathCounters, RangeRead, SubmittedReads};

/// Reads submitted by [`Source::submit_reads`], not yet awaited. Dropping
/// one waits for (or cancels and then waits for) its reads, so its memory is
/// never written after the drop returns.
pub trait PendingReads: Send + std::fmt::Debug {
    /// Waits for every read; returns the bytes read or the first error.
    fn wait(self: Box<Self>) -> Result<u64>;
}

impl PendingReads for SubmittedReads {
    fn wait(self: Box<Self>) -> Result<u64> {
        Ok(SubmittedReads::wait(*self)?)
    }
}

/// A Parquet object's bytes: where it is, how big, which version, and reads
/// of exact ranges into host `Bytes` or into host or device memory.
///
/// What only one backend has stays on its type: a local file's engine
/// handle ([`LocalSource::of`](super::LocalSource::of)), a remote object's
/// store and HTTP attempts ([`RemoteSource::of`](super::RemoteSource::of)).
pub trait Source: Send + Sync + std::fmt::Debug {
    /// The object as shown to users and used in the metadata cache key: a
    /// path, or a URL.
    fn location(&self) -> &str;

    /// The object's size in bytes, as seen when it was opened.
    fn size(&self) -> u64;

    /// The object's version: its e-tag, or its modification time when it
    /// has none. Part of the metadata cache key.
    fn version(&self) -> Option<String>;

    /// Reads exactly `ranges` (not merged here: callers coalesce), one
    /// `Bytes` per range. A range past the end, or a response shorter than
    /// its range, is an error.
    fn read_ranges(&self, ranges: &[Range<u64>]) -> BoxFuture<'static, Result<Vec<Bytes>>>;

    /// Reads exactly `range`, blocking this thread (for synchronous callers
    /// such as the footer parser). By default [`Source::read_ranges`] run on
    /// the store runtime.
    fn read_blocking(&self, range: Range<u64>) -> Result<Bytes> {
        let read = self.read_ranges(std::slice::from_ref(&range));
        Ok(super::runtime::block_on(read)??.pop().unwrap_or_default())
    }

    /// Starts reading `reads` into `memory` (host or device) without waiting.
    ///
    /// # Safety
    /// `memory` must stay valid, and untouched by anything else, until the
    /// returned [`PendingReads`] is waited for or dropped.
    unsafe fn submit_reads(
        &self,
        memory: Memory,
        reads: &[RangeRead],
    ) -> Result<Box<dyn PendingReads>>;

    /// The bytes, requests and time this source moved, per path.
    fn counters(&self) -> &PathCounters;

    /// The source as `Any`, to reach its backend's own methods (see
    /// [`LocalSource::of`](super::LocalSource::of)).
    fn as_any(&self) -> &dyn Any;

    /// Bytes at the end of the object already read (a remote object's
    /// footer, fetched when it was opened): `(offset, bytes)`.
    fn cached_tail(&self) -> Option<(u64, Bytes)> {
        None
    }

    /// Allocates now what device reads will need (pinned buffers), so the
    /// first read does not pay for it.
    fn prepare_device(&self, _device: Device) -> Result<()> {
        Ok(())
    }
}

/// A shared source is a source (so `Arc<dyn Source>` goes wherever a source does).
impl<T: Source + ?Sized> Source for Arc<T> {
    fn location(&self) -> &str {
        (**self).location()
    }
    fn size(&self) -> u64 {
        (**self).size()
    }
    fn version(&self) -> Option<String> {
        (**self).version()
    }
    fn read_ranges(&self, ranges: &[Range<u64>]) -> BoxFuture<'static, Result<Vec<Bytes>>> {
        (**self).read_ranges(ranges)
    }
    fn read_blocking(&self, range: Range<u64>) -> Result<Bytes> {
        (**self).read_blocking(range)
    }
    unsafe fn submit_reads(
        &self,
        memory: Memory,
        reads: &[RangeRead],
    ) -> Result<Box<dyn PendingReads>> {
        (**self).submit_reads(memory, reads)
    }
    fn counters(&self) -> &PathCounters {
        (**self).counters()
    }
    fn as_any(&self) -> &dyn Any {
        (**self).as_any()
    }
    fn cached_tail(&self) -> Option<(u64, Bytes)> {
        (**self).cached_tail()
    }
    fn prepare_device(&self, device: Device) -> Result<()> {
        (**self).prepare_device(device)
    }
}
