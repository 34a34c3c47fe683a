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
#[derive(Debug, Clone)]
pub struct HandleChunkReader {
    handle: Arc<FileHandle>,
    len: u64,
}

impl HandleChunkReader {
    /// Wraps `handle`, whose size is `len`.
    pub fn new(handle: Arc<FileHandle>, len: u64) -> Self {
        HandleChunkReader { handle, len }
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
        self.read_exact_at(start, length)
            .map(Bytes::from)
            .map_err(|e| ParquetError::External(Box::new(e)))
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
    let policy = if opts.page_index {
        PageIndexPolicy::Optional
    } else {
        PageIndexPolicy::Skip
    };
    let metadata = ParquetMetaDataReader::new()
        .with_page_index_policy(policy)
        .with_prefetch_hint(Some(opts.size_hint))
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
