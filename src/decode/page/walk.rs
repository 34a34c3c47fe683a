//! Walking the pages of a column chunk as the fetch laid it out: one
//! row-group buffer, and per chunk a list of pieces (the whole chunk, or
//! with page pruning the dictionary page and the kept data pages).

use crate::parquet::fetch::{ChunkSlice, Piece};

use super::header::{parse_page_header, PageError, PageHeader, PageKind};

/// One page of a chunk, located in the row-group buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageInfo {
    /// The parsed header.
    pub header: PageHeader,
    /// Bytes of the header.
    pub header_len: usize,
    /// File offset of the page (its header).
    pub file_offset: u64,
    /// Offset of the page (its header) in the row-group buffer.
    pub offset: usize,
    /// Offset of the page body in the row-group buffer.
    pub body_offset: usize,
    /// Bytes of the body as stored (the header's compressed size).
    pub body_len: usize,
}

impl PageInfo {
    /// Bytes of the whole page, header included.
    pub fn len(&self) -> usize {
        self.header_len + self.body_len
    }

    /// Whether the page is empty (never: a header has at least one byte).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// File offset just past the page.
    pub fn file_end(&self) -> u64 {
        self.file_offset.saturating_add(self.len() as u64)
    }
}

/// Why a chunk's pages could not be walked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WalkError {
    /// A piece lies outside the row-group buffer.
    #[error("piece {piece} (buffer bytes {offset}..+{len}) lies outside the {buffer} bytes of the row-group buffer")]
    PieceOutsideBuffer {
        /// Piece index.
        piece: usize,
        /// Buffer offset.
        offset: usize,
        /// Length.
        len: usize,
        /// Buffer size.
        buffer: usize,
    },
    /// Pieces out of file order or overlapping.
    #[error("piece {piece} at file offset {file_offset} overlaps or precedes the previous piece ending at {previous_end}")]
    PiecesOverlap {
        /// Piece index.
        piece: usize,
        /// Its file offset.
        file_offset: u64,
        /// Where the previous piece ends in the file.
        previous_end: u64,
    },
    /// A page header could not be parsed.
    #[error("page {page} at file offset {file_offset}: bad header: {source}")]
    Header {
        /// Page index in the chunk (kept pages, dictionary included).
        page: usize,
        /// File offset of the page.
        file_offset: u64,
        /// The parse error.
        #[source]
        source: PageError,
    },
    /// A page's body runs past the end of its piece.
    #[error("page {page} at file offset {file_offset} ends at {page_end}, past the end of its piece at {piece_end}")]
    PageOutsidePiece {
        /// Page index in the chunk.
        page: usize,
        /// File offset of the page.
        file_offset: u64,
        /// File offset where the page would end.
        page_end: u64,
        /// File offset where the piece ends.
        piece_end: u64,
    },
    /// A dictionary page that is not the chunk's first page.
    #[error("page {page} at file offset {file_offset} is a dictionary page but not the chunk's first page")]
    DictionaryNotFirst {
        /// Page index in the chunk.
        page: usize,
        /// File offset of the page.
        file_offset: u64,
    },
}

/// Walks the pages of a chunk's pieces in `buffer` (the whole row-group
/// buffer): every piece must be tiled exactly by whole pages (no gap, no
/// overlap, no page crossing a piece's end), pieces must follow each other
/// in file order without overlapping, and a dictionary page may only come
/// first.
pub fn walk_pieces(buffer: &[u8], pieces: &[Piece]) -> Result<Vec<PageInfo>, WalkError> {
    let mut pages = Vec::new();
    let mut previous_end: Option<u64> = None;
    for (index, piece) in pieces.iter().enumerate() {
        let bytes = piece
            .buffer_offset
            .checked_add(piece.len)
            .and_then(|end| buffer.get(piece.buffer_offset..end))
            .ok_or(WalkError::PieceOutsideBuffer {
                piece: index,
                offset: piece.buffer_offset,
                len: piece.len,
                buffer: buffer.len(),
            })?;
        let piece_end = piece.file_offset.saturating_add(piece.len as u64);
        if let Some(prev) = previous_end {
            if piece.file_offset < prev {
                return Err(WalkError::PiecesOverlap {
                    piece: index,
                    file_offset: piece.file_offset,
                    previous_end: prev,
                });
            }
        }
        previous_end = Some(piece_end);
        let mut at = 0usize;
        // Every page takes at least one header byte: the loop ends.
        while at < bytes.len() {
            let page = pages.len();
            let file_offset = piece.file_offset.saturating_add(at as u64);
            let (header, header_len) =
                parse_page_header(&bytes[at..]).map_err(|source| WalkError::Header {
                    page,
                    file_offset,
                    source,
                })?;
            let body_len = header.compressed_size as usize;
            let end = at + header_len + body_len;
            if end > bytes.len() {
                return Err(WalkError::PageOutsidePiece {
                    page,
                    file_offset,
                    page_end: file_offset.saturating_add((header_len + body_len) as u64),
                    piece_end,
                });
            }
            if matches!(header.kind, PageKind::Dictionary(_)) && page != 0 {
                return Err(WalkError::DictionaryNotFirst { page, file_offset });
            }
            pages.push(PageInfo {
                header,
                header_len,
                file_offset,
                offset: piece.buffer_offset + at,
                body_offset: piece.buffer_offset + at + header_len,
                body_len,
            });
            at = end;
        }
    }
    Ok(pages)
}

/// Walks the pages of one fetched chunk (see [`walk_pieces`]).
pub fn walk_chunk(buffer: &[u8], slice: &ChunkSlice) -> Result<Vec<PageInfo>, WalkError> {
    walk_pieces(buffer, &slice.pieces)
}
