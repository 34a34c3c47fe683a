//! Arrow columns and record batches whose buffers live in device memory.
//!
//! A [`DeviceBatch`] is what the GPU decoder produces for one row group (or
//! one bounded run of rows): an Arrow schema, one [`DeviceColumn`] per field,
//! and a [`ReadyEvent`] recorded on the producing stream after the last kernel
//! that writes the columns. Nothing here synchronises by itself: a consumer
//! waits on the event (on the host with [`DeviceBatch::wait`], or on its own
//! stream through the C Device Data Interface's `sync_event`).
//!
//! Buffers are [`DeviceBytes`]: a byte range of a reference-counted
//! allocation ([`DeviceMemory`]). Clones are cheap and share the allocation;
//! a pooled allocation ([`PooledDeviceBuffer`](crate::cuda::PooledDeviceBuffer))
//! goes back to its [`DevicePool`](crate::cuda::DevicePool) when the last
//! owner drops, and an exported batch keeps its buffers alive until the
//! consumer calls the C release callback.
//!
//! Columns follow the Arrow C Data Interface's buffer order, with the
//! validity bitmap kept apart: `buffers` holds the values (fixed-width types
//! and booleans), the offsets then the data (Utf8/Binary), or the 16-byte
//! views followed by the variadic data buffers (Utf8View/BinaryView; a view's
//! buffer index counts from the first variadic buffer, as in Arrow).
//!
//! [`DeviceBatch::to_host`] copies a batch back and validates it with
//! arrow-rs's full validation, so tests compare against arrow-rs's CPU
//! decode. On machines without a GPU the same types run on host memory
//! ([`HostMemory`], [`DeviceBatch::from_host`]), which is how CI tests the
//! ownership and C-interface logic.

mod batch;
mod column;
mod host_copy;
mod maps;
mod memory;
mod view_spans;

#[cfg(test)]
pub(crate) mod test_fakes;

pub use batch::DeviceBatch;
pub use column::DeviceColumn;
pub use maps::{host_maps_as_lists, maps_as_lists_type, schema_as_lists};
pub use memory::{
    ArrowDeviceType, DeviceBytes, DeviceMemory, HostMemory, MemoryLocation, ReadyEvent,
};

pub(crate) use batch::read_bytes;
#[cfg(test)]
pub(crate) use batch::tests::{nested_batch, sample_batch};
pub(crate) use column::{child_fields, has_offsets, is_flat};

use arrow::datatypes::DataType;
use arrow::error::ArrowError;

/// Errors of device arrays and of the C Device Data Interface.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DeviceArrayError {
    /// A CUDA driver call failed (copy, stream, event, device).
    #[error(transparent)]
    Cuda(#[from] crate::cuda::CudaError),

    /// Arrow rejected the data (validation of a copied-back array, schema
    /// conversion to or from the C interface).
    #[error("arrow: {0}")]
    Arrow(#[from] ArrowError),

    /// Device columns are flat, or List, LargeList, Map, FixedSizeList or
    /// Struct of those: no dictionary, union, list view or run-end encoded
    /// types.
    #[error("type {data_type} is not supported by device arrays (flat types and List, LargeList, Map, FixedSizeList, Struct)")]
    Unsupported {
        /// The type asked for.
        data_type: DataType,
    },

    /// A column's buffers do not match the Arrow layout of its type.
    #[error("{data_type} column: {problem}")]
    Layout {
        /// The column's type.
        data_type: DataType,
        /// What is wrong (buffer count, a buffer too short, a null count).
        problem: String,
    },

    /// An error about one column of a batch.
    #[error("column {column:?}: {source}")]
    InColumn {
        /// The column's field name.
        column: String,
        /// What went wrong.
        #[source]
        source: Box<DeviceArrayError>,
    },

    /// The columns do not fit the batch (schema, row count, device).
    #[error("device batch: {0}")]
    Batch(String),

    /// A byte range outside its allocation.
    #[error("range {offset}+{len} is outside a buffer of {available} bytes")]
    OutOfRange {
        /// Start of the range.
        offset: usize,
        /// Length of the range.
        len: usize,
        /// Bytes available.
        available: usize,
    },

    /// Memory of a device type this crate cannot read back.
    #[error("memory on {0} cannot be copied to the host by gdscan")]
    Unreachable(MemoryLocation),

    /// A C structure was used after it was released (or moved from).
    #[error("the C structure was already released")]
    Released,

    /// A C structure does not describe a valid device array.
    #[error("C device array: {0}")]
    Import(String),

    /// A C stream callback returned an error code.
    #[error("C device stream: {callback} returned {code}: {message}")]
    Stream {
        /// `get_schema` or `get_next`.
        callback: &'static str,
        /// The errno-style code returned.
        code: i32,
        /// The producer's `get_last_error` text (empty when it gave none).
        message: String,
    },
}

impl DeviceArrayError {
    pub(crate) fn layout(data_type: &DataType, problem: impl Into<String>) -> Self {
        DeviceArrayError::Layout {
            data_type: data_type.clone(),
            problem: problem.into(),
        }
    }

    pub(crate) fn in_column(self, column: &str) -> Self {
        DeviceArrayError::InColumn {
            column: column.to_string(),
            source: Box::new(self),
        }
    }
}

/// The result type of this module and of the Arrow C Device export.
pub type Result<T, E = DeviceArrayError> = std::result::Result<T, E>;
