//! The decode kernels: CUDA C compiled at run time with NVRTC, and their
//! launch wrappers.
//!
//! # What runs, per row group
//!
//! The host fills one [`PageTask`] per kept data page (and one [`DictTask`]
//! per BYTE_ARRAY dictionary page), uploads the arrays, zeroes the validity
//! bitmaps and BOOLEAN value bitmaps, and queues on one stream
//! ([`KernelSet::decode_row_group`] does the four in order):
//!
//! 1. `gds_dict_views` (one block per byte-array dictionary): the
//!    dictionary's PLAIN values become 16-byte views, so that dictionary pages
//!    of strings are a 16-byte gather like any fixed-width dictionary page;
//! 2. `gds_byte_array_walk` (one block per PLAIN byte-array page, staging
//!    it in shared memory): the value offsets of the page, into its scratch
//!    (by default, [`StringWalks::Spread`], both walks are spread over a
//!    block per 16 KiB chunk of every section instead, three launches
//!    `gds_spread_*`; [`StringWalks`] says the other ways);
//! 3. `gds_decode_pages` (one block of 256 threads per page, whatever its
//!    kind): definition levels → validity bits and value indices (block scan),
//!    then values PLAIN or by dictionary, converted, to their rows;
//! 4. `gds_gather_status` (one thread per task): every page's `[error,
//!    error_index, null_count, value_count]` and every dictionary's `[error,
//!    0, 0, found]` into one array, which the host copies back once (after
//!    an event) to check the whole row group.
//!
//! No kernel synchronises the device; ordering is the stream's.
//!
//! # Output layout (what the host must provide)
//!
//! - fixed width: `out_width` bytes per row at `out_values` (16-byte
//!   aligned), rows `out_row..out_row + num_values`; null rows are zeroed;
//! - booleans and validity: Arrow bitmaps (LSB first) written with `atomicOr`
//!   in 4-byte words: zeroed before the launch, 4-byte aligned, sized with
//!   [`launch::bitmap_bytes`];
//! - byte arrays: 16-byte views (Arrow's Utf8View/BinaryView layout: length;
//!   then ≤ 12 bytes inline, or a 4-byte prefix, the buffer index and the
//!   offset from `view_buffer_base`). PLAIN views point into the page's
//!   `data`; dictionary views into the dictionary page's data. Null rows get
//!   an all-zero view (an empty inline value).
//!
//! # Errors
//!
//! Every read is checked against its section's length and the dictionary's
//! size; every loop is bounded by the page's bytes or values. A corrupt page
//! gets the first error found in its `error` word ([`PageErrorCode`]) and the
//! level index in `error_index`; its output rows are then undefined (never
//! written outside the page's rows).
//!
//! # Compilation
//!
//! [`KernelSet::get`] compiles the sources once per process and target with
//! NVRTC ([`nvrtc`]; PTX for `compute_XX` from the device's compute
//! capability, or a cubin when NVRTC is newer than the driver) and loads the
//! result once per device.
//!
//! # Files
//!
//! - `set.rs`: [`KernelSet`], the compiled kernels on one device;
//!   `args.rs`: what a launch passes (its kernel, its arguments with their
//!   C types), built once per launch;
//! - the launches, a family each: `launch_strings.rs` (the string walks),
//!   `launch_pages.rs` (pages, DELTA_BYTE_ARRAY sizes, status),
//!   `launch_nest.rs`, `launch_row_group.rs` (a row group's in order),
//!   `launch_snappy.rs` (the Snappy check, pieces and decode),
//!   `launch_scan.rs` (the Snappy scan), `launch_filter_eval.rs` (the GPU
//!   filter's evaluator, `decode::filter`), `launch_compact.rs` (a batch
//!   cut to a filter's rows); `launch_tests.rs` checks every
//!   launch against the kernel's C signature, without a GPU;
//! - [`launch`]: grids, blocks and buffer sizes; [`task`], [`nest`],
//!   [`check`], [`snappy_scan`], [`layout`]: what the host and the kernels
//!   share; `status.rs`: the status array read back; [`nvrtc`]: the
//!   compiler.

pub mod check;
pub mod disk_cache;
pub mod error;
pub mod launch;
pub mod layout;
pub mod nest;
pub mod nvrtc;
pub mod snappy_scan;
pub mod task;

mod args;
mod launch_compact;
mod launch_filter_eval;
mod launch_nest;
mod launch_pages;
mod launch_row_group;
mod launch_scan;
mod launch_snappy;
mod launch_strings;
mod set;
mod status;

#[cfg(test)]
mod launch_tests;
#[cfg(test)]
mod nvrtc_tests;

pub use crate::config::decode::{KernelConfig, StringWalks};
pub use error::KernelError;
pub use launch_compact::{
    compact_tiles, CompactBits, CompactExpand, CompactGather, CompactLengths, CompactScan,
    COMPACT_BAD_OFFSETS, COMPACT_BLOCK, COMPACT_OUT_OF_RANGE, COMPACT_TILE,
};
pub use launch_filter_eval::{FilterLaunch, FILTER_BLOCK};
pub use launch_nest::NestLaunch;
pub use launch_row_group::RowGroupLaunch;
pub use launch_scan::SnappyScan;
pub use launch_snappy::{SnappyDecode, SnappyJobs};
pub use launch_strings::SpreadLaunch;
pub use nvrtc::{CodeKind, Target};
pub use set::KernelSet;
pub use status::{parse_status, TaskStatus};
pub use task::{
    Conversion, DictTask, Encoding, Kind, PageErrorCode, PageTask, FLAG_ROW_WINDOW, FLAG_V1_LEVELS,
    FLAG_V1_REP_LEVELS,
};
