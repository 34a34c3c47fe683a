//! The GPU decoder: fetched column chunks become Arrow columns in device
//! memory.
//!
//! - [`page`]: the host side, pure: page headers, page walks, the level
//!   encoding's CPU reference and the decode plan of a row group.
//! - [`array`](mod@array): device-resident Arrow columns and record batches
//!   ([`array::DeviceBatch`]), their owners (pooled device memory, or any
//!   [`array::DeviceMemory`]), and the copy back to an arrow
//!   [`RecordBatch`](arrow::record_batch::RecordBatch).
//! - [`ffi`](mod@ffi): the Arrow C Device Data Interface (`ArrowDeviceArray`,
//!   `ArrowDeviceArrayStream`): export of device batches to other libraries
//!   without a copy, and import back.

pub mod array;
pub mod ffi;
pub mod page;
