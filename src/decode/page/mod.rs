//! The host side of page decoding, pure (no I/O, no GPU):
//!
//! - [`header`]: Thrift compact `PageHeader` parsing;
//! - [`walk`]: the pages of a fetched chunk, located in its row-group buffer;
//! - [`levels`]: CPU reference of the RLE/bit-packed hybrid and the v1 level
//!   section arithmetic;
//! - [`nesting`]: the nesting model of nested columns (LIST, MAP, STRUCT)
//!   and the CPU reference of their level assembly;
//! - [`codes`]: the codes a page task carries ([`Kind`], [`Encoding`],
//!   [`Conversion`]), one vocabulary for the plan and the kernels;
//! - [`column_type`](mod@column_type): the type mapping (Parquet physical and logical types
//!   to Arrow types and kernel codes);
//! - [`plan`](mod@plan): the decode plan of a row group (the model: first
//!   rows, encodings, decompression jobs, scratch and output sizes);
//! - [`planner`]: the functions that fill it from walked pages;
//! - [`plan_error`]: why a row group cannot be decoded;
//! - [`framing`]: a compressed page's framing, read to route it (Hadoop
//!   LZ4 blocks, a GZIP member's size);
//! - [`host_codec`]: the codecs the host decompresses (BROTLI, legacy LZ4
//!   without the Hadoop framing, GZIP pages of several members).

pub mod codes;
pub mod column_type;
pub mod framing;
pub mod header;
pub mod host_codec;
pub mod levels;
pub mod nesting;
pub mod plan;
pub mod plan_error;
pub mod planner;
pub mod validate;
pub mod walk;

#[cfg(test)]
mod codec_tests;
#[cfg(test)]
mod plan_tests;

pub use codes::{Conversion, Encoding, Kind};
pub use column_type::{chunk_type, column_type, is_nested, leaf_type, ChunkCodec, ColumnType};
pub use header::{parse_page_header, PageError, PageHeader, PageKind};
pub use host_codec::{HostCodec, HostCodecError};
pub use levels::LevelError;
pub use plan::{
    BufferKind, ColumnDecode, ColumnInput, DecodePlan, DecompressJob, HostJob, PageDecode,
    PageVersion, Region, StoredBytes,
};
pub use plan_error::DecodePlanError;
pub use planner::{check_chunk, check_page_crc, plan_fetched, plan_landed, plan_row_group};
pub use walk::{
    walk_chunk, walk_pieces, HeaderWalk, HeaderWant, PageInfo, WalkError, HEADER_WINDOW,
};
