//! Reading the footer (and optionally the page index) from a [`Source`]
//! (a local file through the engine, or a remote object), with a size hint
//! and a process-wide cache.
//!
//! One read of the last `size_hint` bytes serves most files: the footer, and
//! the page index that writers place just before it (for a remote object
//! that read is the suffix request that opened it: one round trip). A larger
//! footer costs exactly one more read. Every read goes through the source,
//! so it is counted like any other.

use std::collections::HashMap;
use std::io::Read;
use std::ops::Range;
use std::sync::{Arc, Mutex, OnceLock};

use ::parquet::arrow::async_reader::MetadataFetch;
use futures::future::{BoxFuture, FutureExt};

use ::parquet::errors::ParquetError;
use ::parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
use ::parquet::file::reader::{ChunkReader, Length};
use bytes::Bytes;

use super::error::{Result, ScanError};
use crate::store::Source;

/// Default bytes read from the end of the file in the first request (as
/// many as a remote source's first request brings).
pub(crate) const DEFAULT_SIZE_HINT: usize = crate::store::DEFAULT_FOOTER_HINT as usize;

/// How to read metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetadataOptions {
    /// Also read the column and offset indexes (when the file has them).
    pub page_index: bool,
    /// Bytes to read from the end of the file first.
    pub size_hint: usize,
}

impl Default for MetadataOptions {
    fn default() -> Self {
        MetadataOptions {
            page_index: true,
            size_hint: DEFAULT_SIZE_HINT,
        }
    }
}

/// A [`ChunkReader`] over any [`Source`]: the object's end (prefetched, or
/// already fetched when a remote object was opened) serves the footer, the
/// metadata and usually the page index; anything else is one more read.
#[derive(Debug, Clone)]
pub struct SourceChunkReader {
    source: Arc<dyn Source>,
    len: u64,
    tail: Arc<Mutex<Option<(u64, Bytes)>>>,
}

impl SourceChunkReader {
    /// Wraps `source`, starting from the bytes it already holds at its end.
    pub fn new(source: Arc<dyn Source>) -> Self {
        let len = source.size();
        let tail = source.cached_tail();
        SourceChunkReader {
            source,
            len,
            tail: Arc::new(Mutex::new(tail)),
        }
    }

    /// Reads the last `hint` bytes (all of the object when smaller) unless
    /// bytes at the end are held already (then the footer is read from
    /// them, and whatever they lack costs one more read).
    pub fn prefetch_tail(&self, hint: usize) -> Result<()> {
        let length = (self.prefetch_len(hint) as u64).min(self.len) as usize;
        if length == 0 || self.cached(self.len - length as u64, length).is_some() {
            return Ok(());
        }
        let start = self.len - length as u64;
        let bytes = self.read_exact_at(start, length)?;
        *self.tail.lock().unwrap_or_else(|e| e.into_inner()) = Some((start, bytes));
        Ok(())
    }

    fn cached(&self, start: u64, length: usize) -> Option<Bytes> {
        let tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        let (at, bytes) = tail.as_ref()?;
        let end = start.checked_add(length as u64)?;
        (start >= *at && end <= at + bytes.len() as u64)
            .then(|| bytes.slice((start - at) as usize..(end - at) as usize))
    }

    fn read_exact_at(&self, start: u64, length: usize) -> Result<Bytes> {
        if length == 0 {
            return Ok(Bytes::new());
        }
        let end = start.saturating_add(length as u64);
        Ok(self.source.read_blocking(start..end)?)
    }

    /// The prefetch to use: the bytes already held at the end when there
    /// are some (a remote object's opening request), else `hint`.
    fn prefetch_len(&self, hint: usize) -> usize {
        let tail = self.tail.lock().unwrap_or_else(|e| e.into_inner());
        match tail.as_ref() {
            Some((at, bytes)) if at + bytes.len() as u64 == self.len => bytes.len(),
            _ => hint,
        }
    }
}

impl Length for SourceChunkReader {
    fn len(&self) -> u64 {
        self.len
    }
}

/// A `Read` from an offset of a [`SourceChunkReader`].
#[derive(Debug)]
pub struct SourceRead {
    reader: SourceChunkReader,
    pos: u64,
}

impl Read for SourceRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.reader.len.saturating_sub(self.pos) as usize;
        let n = buf.len().min(left);
        if n == 0 {
            return Ok(0);
        }
        let bytes = match self.reader.cached(self.pos, n) {
            Some(hit) => hit,
            None => self
                .reader
                .read_exact_at(self.pos, n)
                .map_err(std::io::Error::other)?,
        };
        buf[..n].copy_from_slice(&bytes);
        self.pos += n as u64;
        Ok(n)
    }
}

impl ChunkReader for SourceChunkReader {
    type T = SourceRead;

    fn get_read(&self, start: u64) -> ::parquet::errors::Result<SourceRead> {
        Ok(SourceRead {
            reader: self.clone(),
            pos: start,
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> ::parquet::errors::Result<Bytes> {
        if let Some(hit) = self.cached(start, length) {
            return Ok(hit);
        }
        let bytes = self
            .read_exact_at(start, length)
            .map_err(|e| ParquetError::External(Box::new(e)))?;
        if start + length as u64 == self.len {
            *self.tail.lock().unwrap_or_else(|e| e.into_inner()) = Some((start, bytes.clone()));
        }
        Ok(bytes)
    }
}

/// [`MetadataFetch`] over a [`SourceChunkReader`]: held bytes without I/O,
/// the rest through the source's asynchronous reads.
struct TailFetch(SourceChunkReader);

impl MetadataFetch for TailFetch {
    fn fetch(&mut self, range: Range<u64>) -> BoxFuture<'_, ::parquet::errors::Result<Bytes>> {
        let len = range.end.saturating_sub(range.start) as usize;
        if let Some(hit) = self.0.cached(range.start, len) {
            return async move { Ok(hit) }.boxed();
        }
        let read = self.0.source.read_ranges(&[range]);
        async move {
            let mut got = read
                .await
                .map_err(|e| ParquetError::External(Box::new(e)))?;
            Ok(got.pop().unwrap_or_default())
        }
        .boxed()
    }
}

type CacheKey = (String, u64, Option<String>, bool);

fn key_of(source: &dyn Source, opts: MetadataOptions) -> CacheKey {
    (
        source.location().to_string(),
        source.size(),
        source.version(),
        opts.page_index,
    )
}

fn cached(key: &CacheKey) -> Option<Arc<ParquetMetaData>> {
    cache()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(key)
        .cloned()
}

fn remember(key: CacheKey, metadata: ParquetMetaData) -> Arc<ParquetMetaData> {
    let metadata = Arc::new(metadata);
    let mut c = cache().lock().unwrap_or_else(|e| e.into_inner());
    if c.len() >= CACHE_CAPACITY {
        c.clear();
    }
    c.insert(key, metadata.clone());
    metadata
}

fn policy(opts: MetadataOptions) -> PageIndexPolicy {
    if opts.page_index {
        PageIndexPolicy::Optional
    } else {
        PageIndexPolicy::Skip
    }
}

fn cache() -> &'static Mutex<HashMap<CacheKey, Arc<ParquetMetaData>>> {
    static CACHE: OnceLock<Mutex<HashMap<CacheKey, Arc<ParquetMetaData>>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Entries kept before the cache is cleared.
const CACHE_CAPACITY: usize = 1024;

/// Drops every cached footer.
pub fn clear_cache() {
    cache().lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// A metadata lookup that missed the cache: what a loader needs to parse
/// the footer and remember the result.
struct Miss {
    key: CacheKey,
    reader: SourceChunkReader,
    parser: ParquetMetaDataReader,
}

/// The outcome of a cache lookup.
enum Lookup {
    Hit(Arc<ParquetMetaData>),
    Miss(Box<Miss>),
}

/// The cached metadata of `source`, or what loading it needs.
fn lookup(source: &Arc<dyn Source>, opts: MetadataOptions) -> Lookup {
    let key = key_of(source.as_ref(), opts);
    match cached(&key) {
        Some(hit) => Lookup::Hit(hit),
        None => Lookup::Miss(Box::new(Miss {
            key,
            reader: SourceChunkReader::new(source.clone()),
            parser: ParquetMetaDataReader::new().with_page_index_policy(policy(opts)),
        })),
    }
}

/// Remembers what the parser made of the footer (or names the object in
/// its failure).
fn finish(
    key: CacheKey,
    source: &dyn Source,
    parsed: ::parquet::errors::Result<ParquetMetaData>,
) -> Result<Arc<ParquetMetaData>> {
    let metadata = parsed
        .and_then(|m| super::sanity::check(&m, source.size()).map(|()| m))
        .map_err(|e| ScanError::from_parquet(source.location(), e))?;
    Ok(remember(key, metadata))
}

/// Reads (or finds in the cache, keyed by location, size and version: the
/// e-tag, else the modification time) the metadata of `source`'s object. A
/// remote object's footer usually arrived with the request that opened it,
/// so a cache miss costs no further round trip; a local file is read with
/// `pread`, without the store runtime. Blocks this thread on any read;
/// async callers use [`load_async`].
pub fn load(source: &Arc<dyn Source>, opts: MetadataOptions) -> Result<Arc<ParquetMetaData>> {
    let miss = match lookup(source, opts) {
        Lookup::Hit(hit) => return Ok(hit),
        Lookup::Miss(miss) => *miss,
    };
    miss.reader.prefetch_tail(opts.size_hint)?;
    let parsed = miss.parser.parse_and_finish(&miss.reader);
    finish(miss.key, source.as_ref(), parsed)
}

/// As [`load`], reading asynchronously (for arrow-rs's `AsyncFileReader`
/// and any executor).
pub async fn load_async(
    source: &Arc<dyn Source>,
    opts: MetadataOptions,
) -> Result<Arc<ParquetMetaData>> {
    let miss = match lookup(source, opts) {
        Lookup::Hit(hit) => return Ok(hit),
        Lookup::Miss(miss) => *miss,
    };
    let prefetch = miss.reader.prefetch_len(opts.size_hint);
    let parsed = miss
        .parser
        .with_prefetch_hint(Some(prefetch))
        .load_and_finish(TailFetch(miss.reader), source.size())
        .await;
    finish(miss.key, source.as_ref(), parsed)
}
