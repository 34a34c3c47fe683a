//! An arrow-rs [`AsyncFileReader`] over a [`Source`]: a local file through
//! the engine, or an object in a remote store.
//!
//! arrow-rs asks for byte ranges; the reader coalesces them underneath
//! (fewer, larger reads through the engine's worker pool, or fewer store
//! requests, split and run concurrently by the store source) and hands back
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
use super::error::ScanError;
use super::metadata::{load_async, MetadataOptions};
use crate::store::{Source, StoreError, StoreOptions};

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
    source: Arc<dyn Source>,
    coalesce: CoalesceOptions,
    size_hint: usize,
    stats: Arc<ReaderStats>,
    /// The footer, once [`AsyncFileReader::get_metadata`] has read it: the
    /// column chunks handed to arrow-rs are then checked by
    /// [`super::delta_guard`].
    metadata: Option<Arc<ParquetMetaData>>,
}

fn external(e: impl Into<ScanError>) -> ParquetError {
    ParquetError::External(Box::new(e.into()))
}

impl GdsParquetReader {
    /// A reader over `source`: a local file
    /// ([`LocalSource`](crate::store::LocalSource), read by the engine) or
    /// a remote object.
    pub fn new(source: Arc<dyn Source>) -> Self {
        GdsParquetReader {
            source,
            coalesce: CoalesceOptions::default(),
            size_hint: super::metadata::DEFAULT_SIZE_HINT,
            stats: Arc::default(),
            metadata: None,
        }
    }

    /// A reader over a path or URL (see [`crate::store::open`]).
    pub fn open(location: &str, options: &StoreOptions) -> Result<Self, StoreError> {
        Ok(Self::new(crate::store::open(location, options)?))
    }

    /// Sets how ranges are merged.
    pub fn with_coalesce(mut self, coalesce: CoalesceOptions) -> Self {
        self.coalesce = coalesce;
        self
    }

    /// Gives the reader a footer already read (for arrow-rs builders made
    /// with `new_with_metadata`, which never ask the reader for it): the
    /// column chunks it hands out are then checked as after
    /// [`AsyncFileReader::get_metadata`].
    pub fn with_metadata(mut self, metadata: Arc<ParquetMetaData>) -> Self {
        self.metadata = Some(metadata);
        self
    }

    /// A reader over the same source with the same options and counters of
    /// its own (a clone shares them).
    pub fn with_own_stats(&self) -> Self {
        GdsParquetReader {
            stats: Arc::default(),
            ..self.clone()
        }
    }

    /// The reader's counters.
    pub fn stats(&self) -> Arc<ReaderStats> {
        self.stats.clone()
    }

    /// The source underneath.
    pub fn source(&self) -> &Arc<dyn Source> {
        &self.source
    }

    /// Reads exactly `ranges`, coalesced underneath.
    pub async fn read_ranges(&self, ranges: Vec<Range<u64>>) -> Result<Vec<Bytes>, StoreError> {
        self.stats
            .ranges
            .fetch_add(ranges.len() as u64, Ordering::Relaxed);
        self.stats.bytes_requested.fetch_add(
            ranges.iter().map(|r| r.end.saturating_sub(r.start)).sum(),
            Ordering::Relaxed,
        );
        let merged = coalesce(&ranges, self.coalesce);
        let buffers = self.source.read_ranges(&merged).await?;
        self.stats
            .reads
            .fetch_add(merged.len() as u64, Ordering::Relaxed);
        self.stats.bytes_read.fetch_add(
            merged.iter().map(|m| m.end - m.start).sum(),
            Ordering::Relaxed,
        );
        Ok(cut_ranges(&ranges, &merged, &buffers))
    }

    /// Keeps a footer read elsewhere (a wrapper's own `get_metadata`), as
    /// [`GdsParquetReader::with_metadata`] does.
    pub fn set_metadata(&mut self, metadata: Arc<ParquetMetaData>) {
        self.metadata = Some(metadata);
    }

    /// Checks the column chunks among `ranges` (read as `bytes`) before
    /// arrow-rs decodes them ([`super::delta_guard`]), once the footer is
    /// known; nothing before.
    pub(crate) fn check_for_arrow(
        &self,
        ranges: &[Range<u64>],
        bytes: &[Bytes],
    ) -> ::parquet::errors::Result<()> {
        if let Some(meta) = &self.metadata {
            for (range, b) in ranges.iter().zip(bytes) {
                super::delta_guard::check_range(meta, range, b)?;
            }
        }
        Ok(())
    }

    /// [`GdsParquetReader::read_ranges`] for arrow-rs, checked by
    /// [`GdsParquetReader::check_for_arrow`].
    async fn read_for_arrow(
        &self,
        ranges: Vec<Range<u64>>,
    ) -> ::parquet::errors::Result<Vec<Bytes>> {
        let bytes = self.read_ranges(ranges.clone()).await.map_err(external)?;
        self.check_for_arrow(&ranges, &bytes)?;
        Ok(bytes)
    }
}

/// The index of the span of `spans` that holds all of `range`.
pub(crate) fn holding_span(spans: &[Range<u64>], range: &Range<u64>) -> Option<usize> {
    spans
        .iter()
        .position(|s| s.start <= range.start && range.end <= s.end)
}

/// Each of `ranges` as a zero-copy slice of the buffer that holds it, where
/// `buffers[i]` holds the bytes of `spans[i]`; empty ranges are empty.
///
/// # Panics
/// When a non-empty range lies in no span (callers read spans covering
/// every range).
pub(crate) fn cut_ranges(
    ranges: &[Range<u64>],
    spans: &[Range<u64>],
    buffers: &[Bytes],
) -> Vec<Bytes> {
    ranges
        .iter()
        .map(|r| {
            if r.end <= r.start {
                return Bytes::new();
            }
            let i = holding_span(spans, r).expect("every range lies inside a span read");
            let base = spans[i].start;
            buffers[i].slice((r.start - base) as usize..(r.end - base) as usize)
        })
        .collect()
}

impl AsyncFileReader for GdsParquetReader {
    fn get_bytes(&mut self, range: Range<u64>) -> BoxFuture<'_, ::parquet::errors::Result<Bytes>> {
        async move {
            let mut v = self.read_for_arrow(vec![range]).await?;
            Ok(v.pop().unwrap_or_default())
        }
        .boxed()
    }

    fn get_byte_ranges(
        &mut self,
        ranges: Vec<Range<u64>>,
    ) -> BoxFuture<'_, ::parquet::errors::Result<Vec<Bytes>>> {
        async move { self.read_for_arrow(ranges).await }.boxed()
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
        let source = self.source.clone();
        async move {
            let meta = load_async(&source, opts).await.map_err(external)?;
            self.metadata = Some(meta.clone());
            Ok(meta)
        }
        .boxed()
    }
}
