//! gdscan's reader as DataFusion uses it: every read and its time counted
//! in the scan's metrics, and the metadata always with its page index.

use std::ops::Range;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Instant;

use ::parquet::arrow::arrow_reader::ArrowReaderOptions;
use ::parquet::arrow::async_reader::AsyncFileReader;
use ::parquet::errors::ParquetError;
use ::parquet::file::metadata::ParquetMetaData;
use bytes::Bytes;
use futures::future::{BoxFuture, FutureExt};

use super::metrics::ReaderMetrics;
use super::read_ahead::{ReadAhead, Served};
use crate::parquet::metadata::{load_async, MetadataOptions};
use crate::parquet::GdsParquetReader;

/// A [`GdsParquetReader`] that reports to DataFusion's metrics and reads
/// the next planned row group ahead (`ReadAhead`).
#[derive(Debug)]
pub struct MeteredReader {
    inner: GdsParquetReader,
    metrics: ReaderMetrics,
    reported: (u64, u64),
    read_ahead: ReadAhead,
}

impl MeteredReader {
    /// Wraps `inner`, reporting to `metrics`, without read-ahead.
    pub fn new(inner: GdsParquetReader, metrics: ReaderMetrics) -> Self {
        MeteredReader {
            inner,
            metrics,
            reported: (0, 0),
            read_ahead: ReadAhead::disabled(),
        }
    }

    /// Reads ahead as `read_ahead` plans.
    pub fn with_read_ahead(mut self, read_ahead: ReadAhead) -> Self {
        self.read_ahead = read_ahead;
        self
    }

    /// Adds what the reader did since the last report.
    fn report(&mut self) {
        let stats = self.inner.stats();
        let reads = stats.reads.load(Ordering::Relaxed);
        let bytes = stats.bytes_read.load(Ordering::Relaxed);
        let (old_reads, old_bytes) = self.reported;
        self.metrics
            .requests
            .add(reads.saturating_sub(old_reads) as usize);
        self.metrics
            .bytes_read
            .add(bytes.saturating_sub(old_bytes) as usize);
        self.reported = (reads, bytes);
    }

    /// Bytes read ahead for nothing: read, and wasted.
    fn add_wasted(&self, bytes: u64) {
        if bytes > 0 {
            self.metrics.bytes_read.add(bytes as usize);
            self.metrics.requests.add(1);
            self.metrics.read_ahead_wasted.add(bytes as usize);
        }
    }

    async fn read(&mut self, ranges: Vec<Range<u64>>) -> ::parquet::errors::Result<Vec<Bytes>> {
        self.metrics.ranges.add(ranges.len());
        self.metrics.bytes_needed.add(
            ranges
                .iter()
                .map(|r| r.end.saturating_sub(r.start) as usize)
                .sum(),
        );
        let start = Instant::now();
        let out = match self.read_ahead.serve(&ranges).await {
            Served::Hit {
                result,
                reads,
                bytes_read,
            } => {
                self.metrics.read_ahead_hits.add(1);
                self.metrics.requests.add(reads as usize);
                self.metrics.bytes_read.add(bytes_read as usize);
                result
            }
            Served::Miss { wasted } => {
                self.add_wasted(wasted);
                self.inner
                    .read_ranges(ranges.clone())
                    .await
                    .map_err(Into::into)
            }
        };
        self.metrics.io_time.add_duration(start.elapsed());
        self.read_ahead.advance(&ranges);
        if out.is_ok() {
            self.read_ahead.start_next(&self.inner);
        }
        self.report();
        let out = out.map_err(|e| ParquetError::External(Box::new(e)))?;
        // What arrow-rs would abort on is refused first (`parquet::delta_guard`).
        self.inner.check_for_arrow(&ranges, &out)?;
        Ok(out)
    }
}

impl AsyncFileReader for MeteredReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, ::parquet::errors::Result<Bytes>> {
        async move { Ok(self.read(vec![range]).await?.pop().unwrap_or_default()) }.boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, ::parquet::errors::Result<Vec<Bytes>>> {
        self.read(ranges).boxed()
    }

    /// The footer with its page index, from gdscan's metadata cache (one
    /// read of the file's tail on a miss), whatever the options ask: the
    /// page index then costs DataFusion no further I/O when it prunes pages.
    fn get_metadata<'a>(
        &'a mut self,
        _options: Option<&'a ArrowReaderOptions>,
    ) -> BoxFuture<'a, ::parquet::errors::Result<Arc<ParquetMetaData>>> {
        let source = self.inner.source().clone();
        async move {
            let meta = load_async(&source, MetadataOptions::default())
                .await
                .map_err(|e| ParquetError::External(Box::new(e)))?;
            self.inner.set_metadata(meta.clone());
            Ok(meta)
        }
        .boxed()
    }
}

impl Drop for MeteredReader {
    fn drop(&mut self) {
        self.add_wasted(self.read_ahead.pending_bytes());
        self.report();
        for (path, bytes) in self.inner.source().counters().nonzero() {
            self.metrics.add_path(path, bytes);
        }
    }
}
