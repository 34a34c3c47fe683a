//! The Arrow C Device Data Interface: device batches handed to other
//! libraries (cuDF, CuPy, PyTorch through Python capsules, any C consumer)
//! without a copy, and taken back.
//!
//! - [`ArrowDeviceArray`] and [`ArrowDeviceArrayStream`]: the spec's
//!   `#[repr(C)]` structures (arrow-rs has neither), checked at compile time
//!   against the spec's sizes and field offsets. The `array` member is
//!   arrow's own [`FFI_ArrowArray`](arrow::ffi::FFI_ArrowArray), the schema is
//!   arrow's [`FFI_ArrowSchema`](arrow::ffi::FFI_ArrowSchema).
//! - [`export_device_batch`]: a [`DeviceBatch`](super::array::DeviceBatch) as a
//!   struct array whose children are the columns (the spec's "record batch"),
//!   with `device_type`/`device_id` from the batch's memory and `sync_event`
//!   pointing to the batch's ready `CUevent`. Every C structure owns, in its
//!   `private_data`, `Arc` clones of the buffers it points to (and of the
//!   event): the device memory goes back to its pool when the consumer calls
//!   `release` on the last structure that uses it, whatever happened to the
//!   Rust batch in the meantime. A child moved out by the consumer keeps its
//!   own buffers alive.
//! - [`import_device_batch`]: the reverse, through the C structures only;
//!   the imported buffers share one owner that calls the producer's
//!   `release` exactly once, when the last of them drops.
//! - [`export_device_stream`] / [`DeviceStreamReader`]: a stream over any
//!   iterator of device batches (`get_last_error` included), and its reader.
//!
//! # Moves and releases
//! Rust values of these structures release on drop (through arrow's
//! `FFI_ArrowArray` drop and [`ArrowDeviceArrayStream`]'s). Moving one out of
//! a C pointer ([`ArrowDeviceArray::from_raw`]) leaves a released structure
//! (`release` NULL) behind, as the spec requires of a move; writing one into
//! consumer memory ([`ArrowDeviceArray::write_to`]) moves without dropping
//! whatever was there.
//!
//! # The variadic buffer sizes of Utf8View/BinaryView live in host memory
//! The C Data Interface appends to view arrays one extra buffer holding the
//! length of each variadic data buffer as `int64_t` ("Binary view arrays" in
//! the C Data Interface spec). The C Device Data Interface says that only
//! the data buffers reside on the device and that everything else is CPU
//! memory, but does not name this buffer. Exporters and importers agree on
//! host memory: Arrow C++'s `ExportDeviceArray` (cpp/src/arrow/c/bridge.cc)
//! exports the sizes from a host `std::vector<int64_t>` whatever the device,
//! and its `ImportDeviceArray` reads `buffers[n_buffers - 1]` with CPU loads
//! before any device copy; nanoarrow's `ArrowDeviceArrayViewSetArrayMinimal`
//! (used by cuDF's importer) takes the same pointer as a host `int64_t*`. A
//! device pointer there would crash those consumers, so gdscan exports the
//! sizes in host memory owned by the column's private data, and its importer
//! reads them on the host. The views and the data buffers themselves stay in
//! device memory.

mod abi;
mod export;
mod import;
mod stream;

pub use abi::{ArrowDeviceArray, ArrowDeviceArrayStream};
pub use export::{export_device_array, export_device_batch};
pub use import::{import_device_batch, import_device_batch_with_schema};
pub use stream::{export_device_stream, DeviceStreamReader};

pub use super::array::ArrowDeviceType;

#[cfg(test)]
pub(crate) mod c_interface_tests;
