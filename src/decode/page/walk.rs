//! Walking the pages of a column chunk as the fetch laid it out: one
//! row-group buffer, and per chunk a list of pieces (the whole chunk, or
//! with page pruning the dictionary page and the kept data pages). The
//! walk reads page headers only ([`HeaderWalk`]), from the buffer when it
//! is in host memory, from the file when the chunk lands on the device.

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

/// Bytes a [`HeaderWalk`] asks for at its first try at a header: most
/// page headers (statistics included) are far shorter.
pub const HEADER_WINDOW: usize = 512;

/// The bytes a [`HeaderWalk`] needs next: the start of a page header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderWant {
    /// Where the page starts in the file.
    pub file_offset: u64,
    /// Where it starts in the row-group buffer.
    pub buffer_offset: usize,
    /// Bytes to read from there: enough for most headers (after a header
    /// ran past a shorter read, more), never past the piece's end.
    pub len: usize,
    /// Bytes from there to the piece's end (a read of all of them never
    /// needs a second).
    pub rest: usize,
}

/// The walk of a chunk's pages as a conversation: the walk says which bytes
/// it needs next ([`HeaderWalk::wants`]), the caller reads them from
/// wherever the chunk is (the fetched row-group buffer, or the file itself
/// while the chunk lands in device memory) and hands them over
/// ([`HeaderWalk::push`]). Only page headers are read, never a page body:
/// each header gives the next one's place. No I/O here.
///
/// The rules are [`walk_pieces`]' (which is this walk over a buffer).
///
/// ```
/// use gdscan::decode::page::HeaderWalk;
/// use gdscan::parquet::fetch::Piece;
///
/// // A piece of no bytes holds no pages: nothing to read.
/// let pieces = [Piece { file_offset: 4, buffer_offset: 0, len: 0 }];
/// let mut walk = HeaderWalk::new(&pieces, 0);
/// assert_eq!(walk.wants()?, None);
/// assert!(walk.finish().is_empty());
/// # Ok::<(), gdscan::decode::page::WalkError>(())
/// ```
#[derive(Debug)]
pub struct HeaderWalk<'a> {
    pieces: &'a [Piece],
    buffer_len: usize,
    /// The piece walked, and whether its place was checked.
    piece: usize,
    entered: bool,
    /// Offset of the next page in the piece.
    at: usize,
    /// Bytes to ask for at the next header.
    window: usize,
    previous_end: Option<u64>,
    pages: Vec<PageInfo>,
}

impl<'a> HeaderWalk<'a> {
    /// A walk of `pieces`, laid out in a row-group buffer of `buffer_len`
    /// bytes.
    pub fn new(pieces: &'a [Piece], buffer_len: usize) -> Self {
        HeaderWalk {
            pieces,
            buffer_len,
            piece: 0,
            entered: false,
            at: 0,
            window: HEADER_WINDOW,
            previous_end: None,
            pages: Vec::new(),
        }
    }

    /// The bytes needed next, or `None` when every page has been walked.
    pub fn wants(&mut self) -> Result<Option<HeaderWant>, WalkError> {
        while let Some(piece) = self.pieces.get(self.piece) {
            if !self.entered {
                self.enter(self.piece, piece)?;
            }
            let rest = piece.len - self.at;
            if rest == 0 {
                self.piece += 1;
                self.entered = false;
                self.at = 0;
                continue;
            }
            return Ok(Some(HeaderWant {
                file_offset: piece.file_offset.saturating_add(self.at as u64),
                buffer_offset: piece.buffer_offset + self.at,
                len: self.window.min(rest),
                rest,
            }));
        }
        Ok(None)
    }

    /// Checks that piece `index` lies in the buffer and after the last.
    fn enter(&mut self, index: usize, piece: &Piece) -> Result<(), WalkError> {
        let inside = piece
            .buffer_offset
            .checked_add(piece.len)
            .is_some_and(|end| end <= self.buffer_len);
        if !inside {
            return Err(WalkError::PieceOutsideBuffer {
                piece: index,
                offset: piece.buffer_offset,
                len: piece.len,
                buffer: self.buffer_len,
            });
        }
        if let Some(prev) = self.previous_end {
            if piece.file_offset < prev {
                return Err(WalkError::PiecesOverlap {
                    piece: index,
                    file_offset: piece.file_offset,
                    previous_end: prev,
                });
            }
        }
        self.previous_end = Some(piece.file_offset.saturating_add(piece.len as u64));
        self.entered = true;
        Ok(())
    }

    /// Hands over the bytes [`HeaderWalk::wants`] named last (at least its
    /// `len`, at most its `rest` are looked at). A header that runs past
    /// them asks for more at the next [`HeaderWalk::wants`]: the header
    /// parser reads forward only, so a shorter read changes no verdict.
    pub fn push(&mut self, bytes: &[u8]) -> Result<(), WalkError> {
        let Some(piece) = self.pieces.get(self.piece).filter(|_| self.entered) else {
            return Ok(());
        };
        let rest = piece.len - self.at;
        let bytes = &bytes[..bytes.len().min(rest)];
        let page = self.pages.len();
        let file_offset = piece.file_offset.saturating_add(self.at as u64);
        let (header, header_len) = match parse_page_header(bytes) {
            Ok(parsed) => parsed,
            // More bytes may finish the header; a caller that handed over
            // fewer than asked gets the verdict on what it gave.
            Err(PageError::Truncated { .. })
                if bytes.len() < rest && bytes.len() >= self.window.min(rest) =>
            {
                self.window = bytes.len().saturating_mul(8).clamp(HEADER_WINDOW, rest);
                return Ok(());
            }
            Err(source) => {
                return Err(WalkError::Header {
                    page,
                    file_offset,
                    source,
                })
            }
        };
        let body_len = header.compressed_size as usize;
        let page_len = header_len + body_len;
        if page_len > rest {
            return Err(WalkError::PageOutsidePiece {
                page,
                file_offset,
                page_end: file_offset.saturating_add(page_len as u64),
                piece_end: piece.file_offset.saturating_add(piece.len as u64),
            });
        }
        if matches!(header.kind, PageKind::Dictionary(_)) && page != 0 {
            return Err(WalkError::DictionaryNotFirst { page, file_offset });
        }
        let offset = piece.buffer_offset + self.at;
        self.pages.push(PageInfo {
            header,
            header_len,
            file_offset,
            offset,
            body_offset: offset + header_len,
            body_len,
        });
        self.at += page_len;
        self.window = HEADER_WINDOW;
        Ok(())
    }

    /// The pages walked, in order.
    pub fn finish(self) -> Vec<PageInfo> {
        self.pages
    }
}

/// Walks the pages of a chunk's pieces in `buffer` (the whole row-group
/// buffer): every piece must be tiled exactly by whole pages (no gap, no
/// overlap, no page crossing a piece's end), pieces must follow each other
/// in file order without overlapping, and a dictionary page may only come
/// first.
pub fn walk_pieces(buffer: &[u8], pieces: &[Piece]) -> Result<Vec<PageInfo>, WalkError> {
    let mut walk = HeaderWalk::new(pieces, buffer.len());
    while let Some(want) = walk.wants()? {
        // The rest of the piece: one push per page.
        walk.push(&buffer[want.buffer_offset..want.buffer_offset + want.rest])?;
    }
    Ok(walk.finish())
}

/// Walks the pages of one fetched chunk (see [`walk_pieces`]).
pub fn walk_chunk(buffer: &[u8], slice: &ChunkSlice) -> Result<Vec<PageInfo>, WalkError> {
    walk_pieces(buffer, &slice.pieces)
}
