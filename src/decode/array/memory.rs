//! Where the bytes of a device column live, who owns them, and the event that
//! says when they are ready.

use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use arrow::buffer::{Buffer, MutableBuffer};

use super::{DeviceArrayError, Result};
use crate::cuda::{Event, PooledDeviceBuffer};

/// The Arrow C Device Data Interface's `ArrowDeviceType` (an `int32_t`; the
/// values are DLPack's `DLDeviceType`). Any value can be held, so that
/// imports can report devices this crate does not know.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ArrowDeviceType(pub i32);

impl ArrowDeviceType {
    /// `ARROW_DEVICE_CPU`: ordinary host memory.
    pub const CPU: ArrowDeviceType = ArrowDeviceType(1);
    /// `ARROW_DEVICE_CUDA`: device memory (`cuMemAlloc`, `cudaMalloc`).
    pub const CUDA: ArrowDeviceType = ArrowDeviceType(2);
    /// `ARROW_DEVICE_CUDA_HOST`: pinned host memory (`cuMemHostAlloc`).
    pub const CUDA_HOST: ArrowDeviceType = ArrowDeviceType(3);
    /// `ARROW_DEVICE_CUDA_MANAGED`: unified memory (`cudaMallocManaged`).
    pub const CUDA_MANAGED: ArrowDeviceType = ArrowDeviceType(13);

    /// Whether the CPU can read the memory with ordinary loads.
    pub fn is_host_readable(self) -> bool {
        self == Self::CPU || self == Self::CUDA_HOST
    }

    /// Whether the memory belongs to CUDA (so a `sync_event` is a `CUevent*`).
    pub fn is_cuda(self) -> bool {
        self == Self::CUDA || self == Self::CUDA_HOST || self == Self::CUDA_MANAGED
    }
}

impl fmt::Display for ArrowDeviceType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::CPU => f.write_str("CPU"),
            Self::CUDA => f.write_str("CUDA"),
            Self::CUDA_HOST => f.write_str("CUDA host"),
            Self::CUDA_MANAGED => f.write_str("CUDA managed"),
            ArrowDeviceType(other) => write!(f, "device type {other}"),
        }
    }
}

/// A device type and a device id: where a buffer lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct MemoryLocation {
    /// The kind of memory.
    pub device_type: ArrowDeviceType,
    /// The device's id (the CUDA ordinal; -1 for the CPU, as Arrow C++ and
    /// nanoarrow write it).
    pub device_id: i64,
}

impl MemoryLocation {
    /// Host memory.
    pub const CPU: MemoryLocation = MemoryLocation {
        device_type: ArrowDeviceType::CPU,
        device_id: -1,
    };

    /// Device memory of CUDA device `ordinal`.
    pub fn cuda(ordinal: usize) -> MemoryLocation {
        MemoryLocation {
            device_type: ArrowDeviceType::CUDA,
            device_id: ordinal as i64,
        }
    }

    /// The CUDA ordinal, for CUDA memory.
    pub fn cuda_ordinal(&self) -> Option<usize> {
        if self.device_type.is_cuda() {
            usize::try_from(self.device_id).ok()
        } else {
            None
        }
    }
}

impl fmt::Display for MemoryLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.device_type == ArrowDeviceType::CPU {
            f.write_str("CPU")
        } else {
            write!(f, "{} device {}", self.device_type, self.device_id)
        }
    }
}

/// An allocation that device columns can point into.
///
/// # Safety
/// Implementors promise that `address()..address() + len()` is memory at
/// `location()` that stays allocated and unchanged while the value lives
/// (the C interface hands these addresses to other libraries, and
/// [`DeviceBatch::to_host`](super::DeviceBatch::to_host) reads host-readable
/// ones directly).
pub unsafe trait DeviceMemory: Send + Sync + fmt::Debug {
    /// The address of the first byte (a device address for CUDA memory).
    fn address(&self) -> u64;
    /// Length in bytes.
    fn len(&self) -> usize;
    /// Whether the allocation is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Where the bytes live.
    fn location(&self) -> MemoryLocation;
}

// SAFETY: the pool's buffer is a live cuMemAlloc range of at least `len`
// bytes on its device until it drops (then it goes back to the pool).
unsafe impl DeviceMemory for PooledDeviceBuffer {
    fn address(&self) -> u64 {
        self.device_ptr()
    }
    fn len(&self) -> usize {
        PooledDeviceBuffer::len(self)
    }
    fn location(&self) -> MemoryLocation {
        MemoryLocation::cuda(self.device().ordinal())
    }
}

/// Host memory standing in for device memory: the CPU form of a
/// [`DeviceBatch`](super::DeviceBatch) (exported as `ARROW_DEVICE_CPU`),
/// used where there is no GPU (CI) and for host-decoded batches. Aligned to
/// 64 bytes, as arrow-rs allocates.
#[derive(Debug)]
pub struct HostMemory {
    bytes: Buffer,
}

impl HostMemory {
    /// A copy of `bytes`.
    pub fn copy_from(bytes: &[u8]) -> HostMemory {
        let mut buffer = MutableBuffer::from_len_zeroed(bytes.len());
        buffer.as_slice_mut().copy_from_slice(bytes);
        HostMemory {
            bytes: buffer.into(),
        }
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        self.bytes.as_slice()
    }
}

// SAFETY: an immutable arrow Buffer owned by this value.
unsafe impl DeviceMemory for HostMemory {
    fn address(&self) -> u64 {
        self.bytes.as_ptr().expose_provenance() as u64
    }
    fn len(&self) -> usize {
        self.bytes.len()
    }
    fn location(&self) -> MemoryLocation {
        MemoryLocation::CPU
    }
}

/// A byte range of a shared allocation: one buffer of a device column.
///
/// Cloning shares the allocation (an `Arc`); the allocation is freed, or
/// returned to its pool, when the last `DeviceBytes` pointing into it drops.
#[derive(Clone)]
pub struct DeviceBytes {
    memory: Arc<dyn DeviceMemory>,
    offset: usize,
    len: usize,
}

impl DeviceBytes {
    /// The whole of `memory`.
    pub fn new(memory: Arc<dyn DeviceMemory>) -> DeviceBytes {
        let len = memory.len();
        DeviceBytes {
            memory,
            offset: 0,
            len,
        }
    }

    /// The whole of a pooled device buffer (its asked-for length).
    pub fn from_pooled(buffer: PooledDeviceBuffer) -> DeviceBytes {
        DeviceBytes::new(Arc::new(buffer))
    }

    /// A host copy of `bytes` (see [`HostMemory`]).
    pub fn host(bytes: &[u8]) -> DeviceBytes {
        DeviceBytes::new(Arc::new(HostMemory::copy_from(bytes)))
    }

    /// `len` bytes from `offset` of this range, sharing the allocation.
    pub fn slice(&self, offset: usize, len: usize) -> Result<DeviceBytes> {
        match offset.checked_add(len) {
            Some(end) if end <= self.len => Ok(DeviceBytes {
                memory: self.memory.clone(),
                offset: self.offset + offset,
                len,
            }),
            _ => Err(DeviceArrayError::OutOfRange {
                offset,
                len,
                available: self.len,
            }),
        }
    }

    /// The address of the first byte of the range.
    pub fn address(&self) -> u64 {
        self.memory.address() + self.offset as u64
    }

    /// Length of the range in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the range is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Where the bytes live.
    pub fn location(&self) -> MemoryLocation {
        self.memory.location()
    }

    /// The shared allocation.
    pub fn memory(&self) -> &Arc<dyn DeviceMemory> {
        &self.memory
    }

    /// How many owners share the allocation now (exports count as owners
    /// until the consumer releases them).
    pub fn owners(&self) -> usize {
        Arc::strong_count(&self.memory)
    }
}

impl fmt::Debug for DeviceBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DeviceBytes")
            .field("address", &format_args!("{:#x}", self.address()))
            .field("len", &self.len)
            .field("location", &self.location())
            .finish()
    }
}

/// The event a producer records on its stream once a batch's buffers are
/// written; its handle is what an exported `ArrowDeviceArray`'s `sync_event`
/// points to.
///
/// # Safety
/// [`ReadyEvent::handle`] must return a live `CUevent` of the batch's device
/// (created in a context of that device) for as long as the value lives.
pub unsafe trait ReadyEvent: Send + Sync + fmt::Debug {
    /// The raw `CUevent` handle.
    fn handle(&self) -> *mut c_void;
    /// Blocks the calling thread until the work before the event is done.
    fn wait(&self) -> Result<()>;
}

// SAFETY: the handle lives as long as the `Event`, on the event's device.
unsafe impl ReadyEvent for Event {
    fn handle(&self) -> *mut c_void {
        self.raw().cast()
    }
    fn wait(&self) -> Result<()> {
        Event::wait(self).map_err(DeviceArrayError::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_share_the_allocation_and_check_bounds() {
        let bytes = DeviceBytes::host(&[1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(bytes.owners(), 1);
        let tail = bytes.slice(4, 4).unwrap();
        assert_eq!(bytes.owners(), 2);
        assert_eq!(tail.address(), bytes.address() + 4);
        assert_eq!(tail.len(), 4);
        let inner = tail.slice(1, 2).unwrap();
        assert_eq!(inner.address(), bytes.address() + 5);
        assert!(matches!(
            tail.slice(3, 2),
            Err(DeviceArrayError::OutOfRange { available: 4, .. })
        ));
        assert!(tail.slice(usize::MAX, 2).is_err());
        drop((tail, inner));
        assert_eq!(bytes.owners(), 1);
    }

    #[test]
    fn host_memory_is_aligned_for_any_arrow_type() {
        let bytes = DeviceBytes::host(&[0u8; 40]);
        assert_eq!(bytes.address() % 64, 0);
        assert_eq!(bytes.location(), MemoryLocation::CPU);
    }

    #[test]
    fn device_types_print_and_classify() {
        assert_eq!(MemoryLocation::cuda(3).to_string(), "CUDA device 3");
        assert_eq!(MemoryLocation::CPU.to_string(), "CPU");
        assert_eq!(MemoryLocation::cuda(3).cuda_ordinal(), Some(3));
        assert_eq!(MemoryLocation::CPU.cuda_ordinal(), None);
        assert!(ArrowDeviceType::CUDA_HOST.is_host_readable());
        assert!(!ArrowDeviceType::CUDA.is_host_readable());
        assert!(ArrowDeviceType::CUDA_MANAGED.is_cuda());
        assert_eq!(ArrowDeviceType(7).to_string(), "device type 7");
    }
}
