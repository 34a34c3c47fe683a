//! Why a row group cannot be decoded: the typed error of the type mapping
//! and the planner.

use super::walk::WalkError;

/// Why a row group cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodePlanError {
    /// The column uses something the GPU decoder does not cover.
    #[error("column {column}: unsupported by the GPU decoder: {what}")]
    Unsupported {
        /// Column path.
        column: String,
        /// What is not covered.
        what: String,
    },
    /// The chunk's pages could not be walked.
    #[error("column {column}, row group {row_group}: {source}")]
    Walk {
        /// Column path.
        column: String,
        /// Row group index in the file.
        row_group: usize,
        /// What went wrong.
        #[source]
        source: WalkError,
    },
    /// A page contradicts the format or the metadata.
    #[error("column {column}, row group {row_group}, page {page}: {what}")]
    BadPage {
        /// Column path.
        column: String,
        /// Row group index in the file.
        row_group: usize,
        /// Page index in the chunk's kept pages (the dictionary page is 0).
        page: usize,
        /// What is wrong.
        what: String,
    },
    /// A page whose routing or decompression reads its stored bytes on
    /// the host, in a row group landing in device memory (the decoder
    /// lands such row groups in host memory; this is never a file's
    /// fault).
    #[error("column {column}, row group {row_group}, page {page}: a {codec} page needs its bytes on the host, but the row group lands in device memory")]
    NotOnHost {
        /// Column path.
        column: String,
        /// Row group index.
        row_group: usize,
        /// Page index in the chunk.
        page: usize,
        /// The chunk's codec.
        codec: &'static str,
    },
    /// A chunk contradicts the format, the metadata or the scan plan.
    #[error("column {column}, row group {row_group}: {what}")]
    BadChunk {
        /// Column path.
        column: String,
        /// Row group index in the file.
        row_group: usize,
        /// What is wrong.
        what: String,
    },
    /// The fetched row group does not fit the scan plan or the metadata.
    #[error("row group {row_group}: {what}")]
    BadRowGroup {
        /// Row group index in the file.
        row_group: usize,
        /// What is wrong.
        what: String,
    },
}

impl DecodePlanError {
    /// The walk of `column`'s chunk in row group `row_group` failed.
    pub fn walk(column: &str, row_group: usize, source: WalkError) -> DecodePlanError {
        DecodePlanError::Walk {
            column: column.to_string(),
            row_group,
            source,
        }
    }
}
