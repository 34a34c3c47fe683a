//! The GPU decode pipeline: a scan's row groups in, device batches out.
//!
//! Per row group: the fetch lands its planned bytes where the scan chose
//! ([`Landing`]): in device memory through the engine's reused bounce
//! buffers when the host needs no page body (local files of Snappy or
//! uncompressed pages, by default), the host then reading only the page
//! headers from the file; else in pinned host memory (the engine's workers
//! read them from the page cache or the disk, a store from the network),
//! where the host walks the pages and one copy takes the bytes up. The
//! host plans the work from the headers (no device round trip per page);
//! nvCOMP decompresses the compressed pages in batches, the kernels
//! decode every page into the row group's output columns, and one copy
//! brings back every page's status. All of it is queued on one of the
//! scan's streams behind one event; `depth` row groups are queued at once,
//! each on the next stream, so one row group's copy overlaps others'
//! kernels while the host plans the next and the fetch reads further
//! ahead. The only host waits are on each row group's own event, before
//! its batch is handed out (its status must be known to be clean).
//!
//! The files, in the order of a row group's trip (the stages of
//! ARCHITECTURE.md's "The GPU decoder"), each named `s<stage>_<job>`:
//!
//! | stage | file | what it does |
//! |---|---|---|
//! | 0 Land | `s0_land` | where the row groups land (device or pinned memory), chosen per scan; the fetch's allocator |
//! | 1 Plan | `s1_plan_ahead` | the planning thread: landed row groups gathered into groups, each group planned ahead of the GPU |
//! | | `s1_plan_headers_from_file` | the page headers of a row group landed on the device, read from its file |
//! | | `s1_plan_host_decompress` | the pages only the host decompresses, decompressed while the row group is planned |
//! | | `s1_plan_row_group` | the host's share of a row group: header walk, page plan, row selection, checks |
//! | 2 Upload | `s2_column_out` | where one column's page output lies on the device |
//! | | `s2_nested_columns` | the nested columns' device memory and tasks, and their arrays once finished |
//! | | `s2_upload_row_group` | a row group's device memory allocated and its uploads queued |
//! | 3–5 | `s3_to_s5_queue_group` | a group's job arrays uploaded, its pages checked (3) and decompressed (4), each row group's kernels queued (5) |
//! | 4 | `s4_group_results` | what a group's row groups share: nvCOMP's and the checks' results, the buffers kept until the GPU is done |
//! | 5 Kernels | `s5_delta_string_buffers` | the values' buffers of DELTA_BYTE_ARRAY pages, sized on the GPU before the kernels |
//! | 6 Finish | `s6_finish_row_group` | a row group in flight: its event waited for, its statuses checked, its batch built |
//! | 7 Filter | `s7_filter_rows` | the batch cut on the GPU to the rows the predicate selects and to the columns asked for |
//!
//! Around the stages: `entry` ([`decode`], the one way in), `one_gpu` (the
//! pipeline on one GPU, which runs the stages in turn: `gpu_queue` is its
//! GPU's side, the resources and the groups queued on the device;
//! `scan_job` a decode's side, its fetch, planner, filter and report),
//! `shared_pipeline` (with [`PipelineMode::Shared`], one GPU's queue shared
//! by every decode on the device, a driver thread launching their groups
//! in the turns `shared_schedule` gives), `multi_gpu` (one
//! scan over several GPUs, a one-GPU pipeline each), `options`
//! ([`DecodeOptions`]), `compressed_check` (where compressed pages are
//! checked), `input` ([`DecodeInput`]), `gpu_resources` (what a scan keeps
//! per GPU: streams, pools, kernels, nvCOMP), `memory_held` (what the
//! process-wide pools hold now, [`memory_held()`]), `report`
//! ([`DecodeReport`]), `trace` (the optional timeline) and `decode_error`
//! ([`DecodeError`]).
//!
//! ```no_run
//! use gdscan::decode::scan::{decode, DecodeOptions};
//! use gdscan::parquet::{Projection, ScanRequest};
//!
//! let request = ScanRequest {
//!     projection: Projection::Columns(vec!["l_quantity".into(), "l_shipdate".into()]),
//!     predicate: Some("l_shipdate >= DATE '1994-01-01'".parse()?),
//!     ..ScanRequest::default()
//! };
//! for batch in decode("lineitem.parquet", request, DecodeOptions::default())? {
//!     let batch = batch?; // Arrow columns in GPU memory
//!     println!("{} rows on GPU {:?}", batch.num_rows(), batch.device_ordinal());
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod compressed_check;
mod decode_error;
mod entry;
mod gpu_queue;
mod gpu_resources;
mod input;
mod late_two_phase;
mod memory_held;
mod multi_gpu;
mod one_gpu;
mod options;
mod planned_stream;
mod report;
mod scan_job;
mod shared_driver;
#[cfg(test)]
mod shared_driver_tests;
mod shared_handover;
mod shared_pipeline;
#[cfg(test)]
mod shared_pipeline_tests;
mod shared_schedule;
mod trace;
mod warm_up;

mod s0_land;
mod s1_plan_ahead;
mod s1_plan_headers_from_file;
mod s1_plan_host_decompress;
mod s1_plan_row_group;
mod s2_column_out;
mod s2_nested_columns;
mod s2_upload_row_group;
mod s3_to_s5_queue_group;
mod s4_group_results;
mod s5_delta_string_buffers;
mod s6_finish_row_group;
mod s7_filter_rows;

pub use compressed_check::{CompressedCheck, DecompressPlace, GPU_CHECK_MAX_BYTES};
pub use decode_error::DecodeError;
pub use entry::{decode, decode_plan, DecodeSource, DecodeStream};
pub use gpu_resources::release_cached_memory;
pub use input::DecodeInput;
pub use memory_held::{memory_held, MemoryHeld};
pub use multi_gpu::DeviceShare;
pub use one_gpu::output_schema;
pub use options::{DecodeOptions, FilterMode};
pub use report::{CodecCount, CodecPlace, DecodeReport, FilterReport};
pub use s0_land::Landing;
pub use warm_up::{warm_up, WarmUp};

pub use crate::config::decode::{
    DevicePoolMode, KernelConfig, LandingMode, PipelineMode, SnappyDecoder, StringWalks,
};
// The causes a `DecodeError` carries from the decoder's inner layers, so
// that a caller can name them.
pub use crate::decode::kernels::KernelError;
pub use crate::decode::page::validate::CompressedError;
pub use crate::decode::page::{DecodePlanError, WalkError};
pub use crate::nvcomp::{NvcompError, NvcompStatus};
