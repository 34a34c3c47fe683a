//! Owning types for pinned host memory, device memory and registered host ranges.

use cudarc::driver::sys;

use super::device::Device;
use super::driver::{check, error_name};
use super::error::{CudaError, Result};
use super::numa::with_preferred_node;

/// Page-locked host memory from `cuMemHostAlloc` (portable to all contexts),
/// page-aligned, so it also serves O_DIRECT.
#[derive(Debug)]
pub struct PinnedBuffer {
    device: Device,
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the buffer is plain memory owned by this value.
unsafe impl Send for PinnedBuffer {}
// SAFETY: shared access only reads.
unsafe impl Sync for PinnedBuffer {}

impl PinnedBuffer {
    /// Allocates `len` bytes (at least 1) of pinned memory, on the NUMA
    /// node nearest `device` when the host has several (see
    /// [`Device::numa`]).
    pub fn new(device: Device, len: usize) -> Result<PinnedBuffer> {
        device.bind()?;
        let node = device.numa().ok().and_then(|p| p.preferred_node());
        let mut ptr = std::ptr::null_mut();
        // SAFETY: context bound; out pointer valid.
        let status = with_preferred_node(node, || unsafe {
            sys::cuMemHostAlloc(&mut ptr, len.max(1), sys::CU_MEMHOSTALLOC_PORTABLE)
        });
        if status != sys::CUresult::CUDA_SUCCESS {
            return Err(CudaError::PinnedMemory {
                bytes: len,
                name: error_name(status),
                code: status as i32,
            });
        }
        Ok(PinnedBuffer {
            device,
            ptr: ptr.cast(),
            len,
        })
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Raw pointer to the first byte.
    pub fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    /// Mutable raw pointer to the first byte.
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    /// The bytes.
    pub fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` is valid for `len` bytes for the buffer's lifetime.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }

    /// The bytes, mutably.
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and we hold the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl Drop for PinnedBuffer {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: allocated by cuMemHostAlloc, freed once.
            unsafe {
                sys::cuMemFreeHost(self.ptr.cast());
            }
        }
    }
}

/// A device allocation from `cuMemAlloc`.
#[derive(Debug)]
pub struct DeviceBuffer {
    device: Device,
    ptr: u64,
    len: usize,
}

// SAFETY: a device pointer is a plain address owned by this value.
unsafe impl Send for DeviceBuffer {}
// SAFETY: shared access does not mutate through `&self` except by explicit unsafe copies.
unsafe impl Sync for DeviceBuffer {}

impl DeviceBuffer {
    /// Allocates `len` bytes (at least 1) on `device`; running out of device
    /// memory is [`CudaError::OutOfMemory`] with the free byte count.
    pub fn new(device: Device, len: usize) -> Result<DeviceBuffer> {
        device.bind()?;
        let mut ptr = 0u64;
        // SAFETY: context bound; out pointer valid.
        let status = unsafe { sys::cuMemAlloc_v2(&mut ptr, len.max(1)) };
        match status {
            sys::CUresult::CUDA_SUCCESS => Ok(DeviceBuffer { device, ptr, len }),
            sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY => Err(CudaError::OutOfMemory {
                device: device.ordinal(),
                requested: len,
                free: device.memory_info().map(|(free, _)| free).unwrap_or(0),
            }),
            other => check("cuMemAlloc", other).map(|_| unreachable!()),
        }
    }

    /// The device the memory lives on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device address of the first byte.
    pub fn device_ptr(&self) -> u64 {
        self.ptr
    }

    /// Sets every byte to `value` (synchronous).
    pub fn fill(&mut self, value: u8) -> Result<()> {
        self.device.bind()?;
        // SAFETY: `ptr` is our allocation of `len` bytes.
        check("cuMemsetD8", unsafe {
            sys::cuMemsetD8_v2(self.ptr, value, self.len)
        })
    }

    /// Copies `dst.len()` bytes starting at `offset` back to host memory (synchronous).
    pub fn copy_to_host(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        self.check_range(offset, dst.len())?;
        self.device.bind()?;
        // SAFETY: range checked above; `dst` is valid for writes.
        check("cuMemcpyDtoH", unsafe {
            sys::cuMemcpyDtoH_v2(dst.as_mut_ptr().cast(), self.ptr + offset as u64, dst.len())
        })
    }

    /// Copies `src` into the buffer at `offset` (synchronous).
    pub fn copy_from_host(&mut self, offset: usize, src: &[u8]) -> Result<()> {
        self.check_range(offset, src.len())?;
        self.device.bind()?;
        // SAFETY: range checked above; `src` is valid for reads.
        check("cuMemcpyHtoD", unsafe {
            sys::cuMemcpyHtoD_v2(self.ptr + offset as u64, src.as_ptr().cast(), src.len())
        })
    }

    fn check_range(&self, offset: usize, len: usize) -> Result<()> {
        match offset.checked_add(len) {
            Some(end) if end <= self.len => Ok(()),
            _ => Err(CudaError::OutOfRange {
                buffer_kind: "<device buffer>",
                buffer: self.len,
                requested: offset.saturating_add(len),
            }),
        }
    }
}

impl Drop for DeviceBuffer {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: allocated by cuMemAlloc, freed once.
            unsafe {
                sys::cuMemFree_v2(self.ptr);
            }
        }
    }
}

/// A host range page-locked in place with `cuMemHostRegister` (read-only),
/// unregistered on drop. Used to DMA straight out of the page cache.
#[derive(Debug)]
pub struct HostRegistration {
    device: Device,
    ptr: *mut u8,
    len: usize,
}

// SAFETY: the registration is a handle on memory the caller keeps alive.
unsafe impl Send for HostRegistration {}

impl HostRegistration {
    /// Registers `len` bytes at `ptr` (both page-aligned) for reads by the GPU.
    ///
    /// # Safety
    /// The range must stay mapped until the registration is dropped, and the
    /// caller must not drop it while a copy from the range is in flight.
    pub unsafe fn register_read_only(device: Device, ptr: *const u8, len: usize) -> Result<Self> {
        device.bind()?;
        check(
            "cuMemHostRegister",
            sys::cuMemHostRegister_v2(
                ptr as *mut _,
                len,
                sys::CU_MEMHOSTREGISTER_READ_ONLY | sys::CU_MEMHOSTREGISTER_PORTABLE,
            ),
        )?;
        Ok(HostRegistration {
            device,
            ptr: ptr as *mut u8,
            len,
        })
    }

    /// Length of the registered range.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the range is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for HostRegistration {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: registered by us, unregistered once.
            unsafe {
                sys::cuMemHostUnregister(self.ptr.cast());
            }
        }
    }
}
