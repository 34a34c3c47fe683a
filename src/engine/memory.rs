//! What a request reads into or writes from: host or device memory.

use crate::cuda::{Device, DeviceBuffer, PinnedBuffer};

/// A raw description of the memory a request uses.
#[derive(Debug, Clone, Copy)]
pub enum Memory {
    /// Host memory (pageable or pinned).
    Host {
        /// First byte.
        ptr: *mut u8,
        /// Length in bytes.
        len: usize,
    },
    /// Device memory.
    Device {
        /// The device that owns the memory.
        device: Device,
        /// Device address of the first byte.
        ptr: u64,
        /// Length in bytes.
        len: usize,
    },
}

// SAFETY: `Memory` is an address range; the traits below make the promises.
unsafe impl Send for Memory {}
// SAFETY: as above.
unsafe impl Sync for Memory {}

impl Memory {
    /// Length in bytes.
    pub fn len(&self) -> usize {
        match *self {
            Memory::Host { len, .. } | Memory::Device { len, .. } => len,
        }
    }

    /// Whether the range is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The sub-range `offset..offset + len` (the caller checks the bounds).
    pub fn slice(&self, offset: usize, len: usize) -> Memory {
        debug_assert!(offset + len <= self.len());
        match *self {
            // SAFETY of later use: inside the original range, as asserted.
            Memory::Host { ptr, .. } => Memory::Host {
                ptr: ptr.wrapping_add(offset),
                len,
            },
            Memory::Device { device, ptr, .. } => Memory::Device {
                device,
                ptr: ptr + offset as u64,
                len,
            },
        }
    }

    /// Whether the memory lives on a device.
    pub fn is_device(&self) -> bool {
        matches!(self, Memory::Device { .. })
    }
}

/// Memory a read may fill.
///
/// # Safety
/// The returned range must be valid for writes for as long as the value is
/// mutably borrowed (sync calls) or owned by a pending request (async calls),
/// and nothing else may access it meanwhile. The range must not move when
/// the value itself is moved (heap or device storage, never inline bytes):
/// async requests take the address first and then own the value.
pub unsafe trait IoBufMut {
    /// The memory to fill.
    fn io_memory_mut(&mut self) -> Memory;
}

/// Memory a write may take its bytes from.
///
/// # Safety
/// The returned range must be valid for reads for as long as the value is
/// borrowed (sync calls) or owned by a pending request (async calls), and
/// must not move when the value is moved.
pub unsafe trait IoBuf {
    /// The memory to read from.
    fn io_memory(&self) -> Memory;
}

// SAFETY: a unique borrow of a slice is valid for writes while borrowed.
unsafe impl IoBufMut for [u8] {
    fn io_memory_mut(&mut self) -> Memory {
        Memory::Host {
            ptr: self.as_mut_ptr(),
            len: self.len(),
        }
    }
}

// SAFETY: a shared slice is valid for reads while borrowed.
unsafe impl IoBuf for [u8] {
    fn io_memory(&self) -> Memory {
        Memory::Host {
            ptr: self.as_ptr() as *mut u8,
            len: self.len(),
        }
    }
}

/// A host buffer that a read fills from empty: `len` bytes of heap memory
/// left uninitialised, since the read overwrites them (a zeroed `Vec`
/// would cost a pass over every byte before the copy: `calloc` clears
/// memory it reuses). [`FillBuffer::into_filled`] hands the bytes over
/// once a read reported that it wrote all of them.
#[derive(Debug)]
pub struct FillBuffer {
    vec: Vec<u8>,
    len: usize,
}

impl FillBuffer {
    /// A buffer for `len` bytes.
    pub fn new(len: usize) -> Self {
        FillBuffer {
            vec: Vec::with_capacity(len),
            len,
        }
    }

    /// The bytes it holds room for.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds room for nothing.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The filled bytes, when `written` (what the read reported) covers the
    /// whole buffer; None otherwise (the buffer is then dropped unread).
    pub fn into_filled(mut self, written: usize) -> Option<Vec<u8>> {
        if written != self.len {
            return None;
        }
        // SAFETY: the capacity is at least `len`, and a completed read that
        // reports `len` bytes written has initialised all of them.
        unsafe { self.vec.set_len(self.len) };
        Some(self.vec)
    }
}

// SAFETY: the vector's allocation holds `len` bytes, owned by the buffer and
// never moved by moving it; the read only writes through the raw pointer.
unsafe impl IoBufMut for FillBuffer {
    fn io_memory_mut(&mut self) -> Memory {
        Memory::Host {
            ptr: self.vec.as_mut_ptr(),
            len: self.len,
        }
    }
}

// SAFETY: the vector's initialised contents are valid for writes; length is not changed.
unsafe impl IoBufMut for Vec<u8> {
    fn io_memory_mut(&mut self) -> Memory {
        self.as_mut_slice().io_memory_mut()
    }
}

// SAFETY: as for slices.
unsafe impl IoBuf for Vec<u8> {
    fn io_memory(&self) -> Memory {
        self.as_slice().io_memory()
    }
}

// SAFETY: the pinned allocation is owned and valid for its length.
unsafe impl IoBufMut for PinnedBuffer {
    fn io_memory_mut(&mut self) -> Memory {
        Memory::Host {
            ptr: self.as_mut_ptr(),
            len: self.len(),
        }
    }
}

// SAFETY: as above.
unsafe impl IoBuf for PinnedBuffer {
    fn io_memory(&self) -> Memory {
        Memory::Host {
            ptr: self.as_ptr() as *mut u8,
            len: self.len(),
        }
    }
}

// SAFETY: the device allocation is owned and valid for its length.
unsafe impl IoBufMut for DeviceBuffer {
    fn io_memory_mut(&mut self) -> Memory {
        Memory::Device {
            device: self.device(),
            ptr: self.device_ptr(),
            len: self.len(),
        }
    }
}

// SAFETY: as above.
unsafe impl IoBuf for DeviceBuffer {
    fn io_memory(&self) -> Memory {
        Memory::Device {
            device: self.device(),
            ptr: self.device_ptr(),
            len: self.len(),
        }
    }
}

// SAFETY: the pooled allocation is owned by the value until it drops, valid
// for at least `len()` bytes, and does not move with the value.
unsafe impl IoBufMut for crate::cuda::PooledDeviceBuffer {
    fn io_memory_mut(&mut self) -> Memory {
        Memory::Device {
            device: self.device(),
            ptr: self.device_ptr(),
            len: self.len(),
        }
    }
}
