//! Reading the footer (and optionally the page index) through the engine,
//! with a size hint and a process-wide cache.
//!
//! One read of the last `size_hint` bytes serves most files: the footer, and
//! the page index that writers place just before it. A larger footer costs
//! exactly one more read. Every read goes through [`FileHandle`], so it is
//! counted like any other.

use std::collections::HashMap;
use std::io::Read;
use std::sync::{Arc, Mutex, OnceLock};

use ::parquet::errors::ParquetError;
use ::parquet::file::metadata::{PageIndexPolicy, ParquetMetaData, ParquetMetaDataReader};
use ::parquet::file::reader::{ChunkReader, Length};
use bytes::Bytes;

use crate::engine::FileHandle;
use crate::error::{Error, Result};

/// Default bytes read from the end of the file in the first request.
pub const DEFAULT_SIZE_HINT: usize = 512 << 10;

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

/// A [`ChunkReader`] over a [`FileHandle`]: every byte through the engine.
/// A read that ends at the end of the file (the footer prefetch) is kept,
/// and later requests inside it (the page index, which writers place just
/// before the footer) are served from it without I/O.
#[derive(Debug, Clone)]
pub struct HandleChunkReader {
    handle: Arc<FileHandle>,
    len: u64,
    tail: Arc<Mutex<Option<(u64, Bytes)>>>,
}

impl HandleChunkReader {
    /// Wraps `handle`, whose size is `len`.
    pub fn new(handle: Arc<FileHandle>, len: u64) -> Self {
        HandleChunkReader {
            handle,
            len,
            tail: Arc::default(),
        }
    }

    /// Reads the last `hint` bytes of the file (all of it when smaller) and
    /// keeps them, so that the footer, the metadata and the page index are
    /// usually served by this one read.
    pub fn prefetch_tail(&self, hint: usize) -> Result<()> {
        let length = (hint as u64).min(self.len) as usize;
        if length == 0 {
            return Ok(());
        }
        let start = self.len - length as u64;
        let bytes = Bytes::from(self.read_exact_at(start, length)?);
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

    fn read_exact_at(&self, start: u64, length: usize) -> Result<Vec<u8>> {
        let mut buf = vec![0u8; length];
        if length == 0 {
            return Ok(buf);
        }
        let n = self.handle.pread(&mut buf, length, start)?;
        if n < length {
            return Err(Error::ShortRead {
                path: self.handle.path().to_string(),
                offset: start,
                expected: length,
                got: n,
            });
        }
        Ok(buf)
    }
}

impl Length for HandleChunkReader {
    fn len(&self) -> u64 {
        self.len
    }
}

/// A `Read` from an offset of a [`HandleChunkReader`].
#[derive(Debug)]
pub struct HandleRead {
    reader: HandleChunkReader,
    pos: u64,
}

impl Read for HandleRead {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.reader.len.saturating_sub(self.pos) as usize;
        let n = buf.len().min(left);
        if n == 0 {
            return Ok(0);
        }
        if let Some(hit) = self.reader.cached(self.pos, n) {
            buf[..n].copy_from_slice(&hit);
            self.pos += n as u64;
            return Ok(n);
        }
        let got = self
            .reader
            .handle
            .pread(&mut buf[..n], n, self.pos)
            .map_err(std::io::Error::other)?;
        self.pos += got as u64;
        Ok(got)
    }
}

impl ChunkReader for HandleChunkReader {
    type T = HandleRead;

    fn get_read(&self, start: u64) -> ::parquet::errors::Result<HandleRead> {
        Ok(HandleRead {
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
            .map(Bytes::from)
            .map_err(|e| ParquetError::External(Box::new(e)))?;
        if start + length as u64 == self.len {
            *self.tail.lock().unwrap_or_else(|e| e.into_inner()) = Some((start, bytes.clone()));
        }
        Ok(bytes)
    }
}

type CacheKey = (String, u64, Option<std::time::SystemTime>, bool);

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

/// Reads (or finds in the cache, keyed by path, size and modification
/// time) the metadata of the file behind `handle`.
pub fn load(handle: &Arc<FileHandle>, opts: MetadataOptions) -> Result<Arc<ParquetMetaData>> {
    let meta = std::fs::metadata(handle.path()).ok();
    let size = handle.file_size()?;
    let key = (
        handle.path().to_string(),
        size,
        meta.and_then(|m| m.modified().ok()),
        opts.page_index,
    );
    if let Some(hit) = cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(hit.clone());
    }
    let reader = HandleChunkReader::new(handle.clone(), size);
    reader.prefetch_tail(opts.size_hint)?;
    let policy = if opts.page_index {
        PageIndexPolicy::Optional
    } else {
        PageIndexPolicy::Skip
    };
    let metadata = ParquetMetaDataReader::new()
        .with_page_index_policy(policy)
        .parse_and_finish(&reader)
        .map_err(|e| Error::from_parquet(handle.path(), e))?;
    let metadata = Arc::new(metadata);
    let mut c = cache().lock().unwrap_or_else(|e| e.into_inner());
    if c.len() >= CACHE_CAPACITY {
        c.clear();
    }
    c.insert(key, metadata.clone());
    Ok(metadata)
}
