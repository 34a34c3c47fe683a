//! The host side of page decoding, pure (no I/O, no GPU):
//!
//! - [`header`]: Thrift compact `PageHeader` parsing;
//! - [`walk`]: the pages of a fetched chunk, located in its row-group buffer;
//! - [`levels`]: CPU reference of the RLE/bit-packed hybrid and the v1 level
//!   section arithmetic;
//! - [`plan`](mod@plan): the decode plan of a row group (types, first rows,
//!   encodings, decompression jobs, scratch and output sizes).

pub mod header;
pub mod levels;
pub mod plan;
pub mod validate;
pub mod walk;

#[cfg(test)]
mod tests;

pub use header::{parse_page_header, PageError, PageHeader, PageKind};
pub use levels::LevelError;
pub use plan::{
    check_chunk, column_type, plan_fetched, plan_row_group, BufferKind, ColumnDecode, ColumnInput,
    ColumnType, Conversion, DecodePlan, DecodePlanError, DecompressJob, EncodingClass, PageCodec,
    PageDecode, PageVersion, Region,
};
pub use walk::{walk_chunk, walk_pieces, PageInfo, WalkError};
