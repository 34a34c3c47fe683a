//! Where each chunk (and page range) of a row group lands in the row
//! group's one buffer.

use serde::Serialize;

use crate::engine::RangeRead;
use crate::parquet::error::Result;
use crate::parquet::plan::{RowGroupPlan, ScanPlan};

/// A contiguous piece of a chunk inside a row group's buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Piece {
    /// Where it is in the file.
    pub file_offset: u64,
    /// Where it is in the row group's buffer.
    pub buffer_offset: usize,
    /// Length.
    pub len: usize,
}

/// Where one planned chunk landed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChunkSlice {
    /// Index into [`ScanPlan::chunks`].
    pub chunk: usize,
    /// Its pieces in file order (one for a whole chunk; the dictionary page
    /// and the kept pages after page pruning).
    pub pieces: Vec<Piece>,
}

impl ChunkSlice {
    /// The chunk's bytes in file order, copied out of its row group's buffer
    /// with `read(buffer_offset, destination)`.
    pub fn gather(&self, mut read: impl FnMut(usize, &mut [u8]) -> Result<()>) -> Result<Vec<u8>> {
        let mut out = vec![0u8; self.pieces.iter().map(|p| p.len).sum()];
        let mut at = 0;
        for p in &self.pieces {
            read(p.buffer_offset, &mut out[at..at + p.len])?;
            at += p.len;
        }
        Ok(out)
    }

    /// The chunk's bytes as the file holds them, cut from `file` (the whole
    /// file's content): what [`FetchedRowGroup::chunk_bytes`](super::FetchedRowGroup::chunk_bytes) must give
    /// back. None when a piece lies past the end of `file`.
    pub fn file_bytes(&self, file: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(self.pieces.iter().map(|p| p.len).sum());
        for p in &self.pieces {
            let start = usize::try_from(p.file_offset).ok()?;
            out.extend_from_slice(file.get(start..start.checked_add(p.len)?)?);
        }
        Some(out)
    }
}

/// The buffer layout of one row group: the reads, the chunk table, the size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowGroupLayout {
    /// One read per coalesced request, packed one after another.
    pub reads: Vec<RangeRead>,
    /// Where every chunk lands.
    pub chunks: Vec<ChunkSlice>,
    /// Bytes of the allocation.
    pub len: usize,
}

/// Lays out a row group's requests back to back and maps its chunks into
/// them (pure).
pub fn layout(plan: &ScanPlan, rg: &RowGroupPlan) -> RowGroupLayout {
    let mut reads = Vec::with_capacity(rg.requests.len());
    let mut at = 0usize;
    for &r in &rg.requests {
        let req = &plan.requests[r];
        reads.push(RangeRead {
            file_offset: req.range.start,
            buffer_offset: at,
            len: req.len() as usize,
        });
        at += req.len() as usize;
    }
    let chunks = rg
        .chunks
        .iter()
        .map(|&c| {
            let pieces = plan.chunks[c]
                .ranges
                .iter()
                .map(|range| {
                    let read = reads
                        .iter()
                        .find(|r| {
                            r.file_offset <= range.start
                                && range.end <= r.file_offset + r.len as u64
                        })
                        .expect("every chunk range lies inside a coalesced request");
                    Piece {
                        file_offset: range.start,
                        buffer_offset: read.buffer_offset
                            + (range.start - read.file_offset) as usize,
                        len: (range.end - range.start) as usize,
                    }
                })
                .collect();
            ChunkSlice { chunk: c, pieces }
        })
        .collect();
    RowGroupLayout {
        reads,
        chunks,
        len: at,
    }
}
