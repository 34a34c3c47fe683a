//! The host side of page decoding, pure (no I/O, no GPU):
//!
//! - [`header`]: Thrift compact `PageHeader` parsing;
//! - [`walk`]: the pages of a fetched chunk, located in its row-group buffer;
//! - [`levels`]: CPU reference of the RLE/bit-packed hybrid and the v1 level
//!   section arithmetic;
//! - [`codes`]: the codes a page task carries ([`Kind`], [`Encoding`],
//!   [`Conversion`]), one vocabulary for the plan and the kernels;
//! - [`column_type`]: the type mapping (Parquet physical and logical types
//!   to Arrow types and kernel codes);
//! - [`plan`](mod@plan): the decode plan of a row group (the model: first
//!   rows, encodings, decompression jobs, scratch and output sizes);
//! - [`planner`]: the functions that fill it from walked pages;
//! - [`plan_error`]: why a row group cannot be decoded.

pub mod codes;
pub mod column_type;
pub mod header;
pub mod levels;
pub mod plan;
pub mod plan_error;
pub mod planner;
pub mod validate;
pub mod walk;

#[cfg(test)]
mod tests;

pub use codes::{Conversion, Encoding, Kind};
pub use column_type::{column_type, ColumnType};
pub use header::{parse_page_header, PageError, PageHeader, PageKind};
pub use levels::LevelError;
pub use plan::{
    BufferKind, ColumnDecode, ColumnInput, DecodePlan, DecompressJob, PageDecode, PageVersion,
    Region,
};
pub use plan_error::DecodePlanError;
pub use planner::{check_chunk, plan_fetched, plan_row_group};
pub use walk::{walk_chunk, walk_pieces, PageInfo, WalkError};
