//! The GPU decoder: fetched column chunks become Arrow columns in device
//! memory.
//!
//! The flow of one row group: `page` (host, pure) walks the page headers
//! in the pinned buffer the fetch filled and plans the work; [`scan`] copies
//! the row group to the device, decompresses its pages with `nvcomp` and
//! runs the `kernels` (CUDA C compiled at run time with NVRTC) into
//! [`array`](mod@array)'s device columns, which [`ffi`](mod@ffi) exports
//! through the Arrow C Device Data Interface.
//!
//! - `page`: page headers, page walks, the level encoding's CPU reference
//!   and the decode plan of a row group.
//! - `kernels`: the CUDA C kernels, the `PageTask` the host fills per data
//!   page, and their launch wrappers.
//! - [`array`](mod@array): device-resident Arrow columns and record batches
//!   ([`array::DeviceBatch`]), their owners (pooled device memory, or any
//!   [`array::DeviceMemory`]), and the copy back to an arrow
//!   [`RecordBatch`](arrow::record_batch::RecordBatch).
//! - [`ffi`](mod@ffi): the Arrow C Device Data Interface (`ArrowDeviceArray`,
//!   `ArrowDeviceArrayStream`): export of device batches to other libraries
//!   without a copy, and import back.
//! - [`filter`](mod@filter): exact filters on the GPU: a predicate evaluated
//!   over decoded columns into a row mask, batches compacted to its rows.
//! - [`scan`]: the pipeline: a scan's row groups in, device batches out.
//!

pub mod array;
pub mod ffi;
pub mod filter;
#[cfg(feature = "internals")]
pub mod kernels;
#[cfg(not(feature = "internals"))]
#[allow(unreachable_pub, unused_imports, dead_code)]
pub(crate) mod kernels;
#[cfg(feature = "internals")]
pub mod page;
#[cfg(not(feature = "internals"))]
#[allow(unreachable_pub, unused_imports, dead_code)]
pub(crate) mod page;
pub mod scan;
