//! An arrow-rs [`AsyncFileReader`] backed by the engine.
//!
//! arrow-rs asks for byte ranges; the reader coalesces them underneath
//! (fewer, larger reads through the engine's worker pool) and hands back
//! exactly the ranges asked for, as zero-copy [`Bytes`] slices of the
//! coalesced buffers (arrow-rs's push decoder ignores a buffer that is not
//! exactly a requested range).

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ::parquet::arrow::arrow_reader::ArrowReaderOptions;
use ::parquet::arrow::async_reader::AsyncFileReader;
use ::parquet::errors::ParquetError;
use ::parquet::file::metadata::{PageIndexPolicy, ParquetMetaData};
use bytes::Bytes;
use futures::future::{BoxFuture, FutureExt};

use super::coalesce::{coalesce, CoalesceOptions};
use super::metadata::{load, MetadataOptions};
use crate::engine::FileHandle;
use crate::error::Error;

/// What the reader did: ranges asked for, bytes asked for, reads issued and
/// bytes read (asked for plus bridged gaps).
#[derive(Debug, Default)]
pub struct ReaderStats {
    /// Ranges arrow-rs asked for.
    pub ranges: AtomicU64,
    /// Bytes in those ranges.
    pub bytes_requested: AtomicU64,
    /// Coalesced reads issued.
    pub reads: AtomicU64,
    /// Bytes read.
    pub bytes_read: AtomicU64,
}

/// The reader.
#[derive(Debug, Clone)]
pub struct GdsParquetReader {
    handle: Arc<FileHandle>,
    coalesce: CoalesceOptions,
    size_hint: usize,
    stats: Arc<ReaderStats>,
}

fn external(e: Error) -> ParquetError {
    ParquetError::External(Box::new(e))
}

impl GdsParquetReader {
    /// A reader over an open handle.
    pub fn new(handle: Arc<FileHandle>) -> Self {
        GdsParquetReader {
            handle,
            coalesce: CoalesceOptions::default(),
            size_hint: super::metadata::DEFAULT_SIZE_HINT,
            stats: Arc::default(),
        }
    }

    /// Sets how ranges are merged.
    pub fn with_coalesce(mut self, coalesce: CoalesceOptions) -> Self {
        self.coalesce = coalesce;
        self
    }

    /// The reader's counters.
    pub fn stats(&self) -> Arc<ReaderStats> {
        self.stats.clone()
    }

    /// The handle underneath.
    pub fn handle(&self) -> &Arc<FileHandle> {
        &self.handle
    }

    /// Reads exactly `ranges`, coalesced underneath.
    pub async fn read_ranges(&self, ranges: Vec<Range<u64>>) -> crate::Result<Vec<Bytes>> {
        self.stats
            .ranges
            .fetch_add(ranges.len() as u64, Ordering::Relaxed);
        self.stats.bytes_requested.fetch_add(
            ranges.iter().map(|r| r.end.saturating_sub(r.start)).sum(),
            Ordering::Relaxed,
        );
        let merged = coalesce(&ranges, self.coalesce);
        let mut futures = Vec::with_capacity(merged.len());
        for m in &merged {
            let len = (m.end - m.start) as usize;
            futures.push(self.handle.pread_async(vec![0u8; len], len, m.start)?);
        }
        let mut buffers = Vec::with_capacity(merged.len());
        for (m, f) in merged.iter().zip(futures) {
            let (buf, n) = f.await?;
            let len = (m.end - m.start) as usize;
            if n < len {
                return Err(Error::ShortRead {
                    path: self.handle.path().to_string(),
                    offset: m.start,
                    expected: len,
                    got: n,
                });
            }
            buffers.push(Bytes::from(buf));
        }
        self.stats
            .reads
            .fetch_add(merged.len() as u64, Ordering::Relaxed);
        self.stats.bytes_read.fetch_add(
            merged.iter().map(|m| m.end - m.start).sum(),
            Ordering::Relaxed,
        );
        Ok(ranges
            .iter()
            .map(|r| {
                if r.end <= r.start {
                    return Bytes::new();
                }
                let i = merged
                    .iter()
                    .position(|m| m.start <= r.start && r.end <= m.end)
                    .expect("every range lies inside a coalesced read");
                let base = merged[i].start;
                buffers[i].slice((r.start - base) as usize..(r.end - base) as usize)
            })
            .collect())
    }
}

impl AsyncFileReader for GdsParquetReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, ::parquet::errors::Result<Bytes>> {
        async move {
            let mut v = self.read_ranges(vec![range]).await.map_err(external)?;
            Ok(v.pop().unwrap_or_default())
        }
        .boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, ::parquet::errors::Result<Vec<Bytes>>> {
        async move { self.read_ranges(ranges).await.map_err(external) }.boxed()
    }

    fn get_metadata<'a>(
        &'a mut self,
        options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, ::parquet::errors::Result<Arc<ParquetMetaData>>> {
        let page_index = options
            .map(|o| {
                o.column_index_policy() != PageIndexPolicy::Skip
                    || o.offset_index_policy() != PageIndexPolicy::Skip
            })
            .unwrap_or(false);
        let opts = MetadataOptions {
            page_index,
            size_hint: self.size_hint,
        };
        let handle = self.handle.clone();
        async move { load(&handle, opts).map_err(external) }.boxed()
    }
}
