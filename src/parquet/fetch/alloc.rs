//! Where a fetch's row groups land: host memory, pinned host memory or a
//! GPU's caching pool, and how their bytes are read back for checks.

use std::sync::Arc;

use crate::cuda::{Device, DevicePool, PinnedPool, PooledDeviceBuffer, PooledPinnedBuffer};
use crate::engine::{IoBufMut, IoError, Memory};
use crate::parquet::error::Result;

/// Where a row group's bytes land.
pub trait Allocator: Send + 'static {
    /// The buffer type.
    type Buffer: IoBufMut + ReadBack + Send + 'static;
    /// One buffer of `len` bytes.
    fn allocate(&self, len: usize) -> Result<Self::Buffer>;
}

/// A row-group buffer whose bytes can be copied back into host memory: for
/// checksums and checks of what landed, never on a scan's hot path.
pub trait ReadBack {
    /// Copies `dst.len()` bytes starting at `offset` into `dst`
    /// (synchronous); a range outside the buffer is an error.
    fn read_back(&self, offset: usize, dst: &mut [u8]) -> Result<()>;
}

/// [`ReadBack::read_back`] of host bytes (`what` names them in the error).
fn read_back_host(bytes: &[u8], what: &str, offset: usize, dst: &mut [u8]) -> Result<()> {
    let end = offset.checked_add(dst.len());
    match end.and_then(|end| bytes.get(offset..end)) {
        Some(src) => {
            dst.copy_from_slice(src);
            Ok(())
        }
        None => Err(IoError::BufferTooSmall {
            path: what.into(),
            buffer: bytes.len(),
            requested: offset.saturating_add(dst.len()),
        }
        .into()),
    }
}

impl ReadBack for Vec<u8> {
    fn read_back(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        read_back_host(self, "<host buffer>", offset, dst)
    }
}

impl ReadBack for PooledDeviceBuffer {
    fn read_back(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        Ok(self.copy_to_host(offset, dst)?)
    }
}

/// Host memory (`Vec<u8>`).
#[derive(Debug, Clone, Copy, Default)]
pub struct HostAllocator;

impl Allocator for HostAllocator {
    type Buffer = Vec<u8>;
    fn allocate(&self, len: usize) -> Result<Vec<u8>> {
        Ok(vec![0u8; len])
    }
}

/// Device memory on one GPU, from a caching pool: a row group's buffer goes
/// back to the pool when the consumer drops it, and the next row group (of
/// this or a later scan through a clone of the allocator) reuses it, so a
/// steady scan never calls `cuMemFree`, which would stall every copy in
/// flight. Drop a row group only after GPU work reading it has finished.
#[derive(Debug, Clone)]
pub struct DeviceAllocator {
    pool: Arc<DevicePool>,
}

/// Bytes of idle row-group buffers a [`DeviceAllocator`] keeps for reuse:
/// as much as the default fetch may hold at once, so that a steady scan
/// allocates nothing.
const CACHED_ROW_GROUP_BYTES: usize = 2 << 30;

impl DeviceAllocator {
    /// An allocator with its own pool on `device`.
    pub fn new(device: Device) -> Self {
        DeviceAllocator {
            pool: DevicePool::new(device, CACHED_ROW_GROUP_BYTES),
        }
    }

    /// An allocator drawing from `pool`.
    pub fn with_pool(pool: Arc<DevicePool>) -> Self {
        DeviceAllocator { pool }
    }

    /// The pool underneath.
    pub fn pool(&self) -> &Arc<DevicePool> {
        &self.pool
    }
}

impl Allocator for DeviceAllocator {
    type Buffer = PooledDeviceBuffer;
    fn allocate(&self, len: usize) -> Result<PooledDeviceBuffer> {
        Ok(self.pool.allocate(len)?)
    }
}

/// Pinned (page-locked) host memory from a caching pool: what the GPU
/// decoder's fetch lands row groups in (their page headers are read on the
/// host, then the bytes go to the device in one copy at the bus's rate).
/// As with [`DeviceAllocator`], a buffer goes back to the pool when the
/// consumer drops its row group, so a steady scan pins nothing new.
///
/// ```no_run
/// use gdscan::cuda::Device;
/// use gdscan::parquet::fetch::{Allocator, PinnedAllocator};
///
/// let alloc = PinnedAllocator::new(Device::get(0)?, 1 << 30);
/// let buffer = alloc.allocate(4 << 20)?;
/// assert_eq!(buffer.len(), 4 << 20);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct PinnedAllocator {
    pool: Arc<PinnedPool>,
}

impl PinnedAllocator {
    /// An allocator with its own pool for `device`'s context, keeping up
    /// to `max_cached_bytes` of idle buffers.
    pub fn new(device: Device, max_cached_bytes: usize) -> Self {
        PinnedAllocator {
            pool: PinnedPool::new(device, max_cached_bytes),
        }
    }

    /// An allocator drawing from `pool`.
    pub fn with_pool(pool: Arc<PinnedPool>) -> Self {
        PinnedAllocator { pool }
    }

    /// The pool underneath.
    pub fn pool(&self) -> &Arc<PinnedPool> {
        &self.pool
    }
}

impl Allocator for PinnedAllocator {
    type Buffer = PooledPinnedBuffer;
    fn allocate(&self, len: usize) -> Result<PooledPinnedBuffer> {
        Ok(self.pool.allocate(len)?)
    }
}

// SAFETY: the pinned allocation is owned by the value (heap, never inline)
// and valid for its length.
unsafe impl IoBufMut for PooledPinnedBuffer {
    fn io_memory_mut(&mut self) -> Memory {
        Memory::Host {
            ptr: self.as_mut_ptr(),
            len: self.len(),
        }
    }
}

impl ReadBack for PooledPinnedBuffer {
    fn read_back(&self, offset: usize, dst: &mut [u8]) -> Result<()> {
        read_back_host(self, "<pinned buffer>", offset, dst)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parquet::ScanError;

    #[test]
    fn host_read_back_copies_inside_and_refuses_outside() {
        let bytes: Vec<u8> = (0u8..16).collect();
        let mut dst = [0u8; 4];
        bytes.read_back(12, &mut dst).unwrap();
        assert_eq!(dst, [12, 13, 14, 15]);
        for offset in [13, usize::MAX] {
            match bytes.read_back(offset, &mut dst) {
                Err(ScanError::Io(IoError::BufferTooSmall {
                    buffer, requested, ..
                })) => {
                    assert_eq!(buffer, 16);
                    assert_eq!(requested, offset.saturating_add(4));
                }
                other => panic!("offset {offset}: {other:?}"),
            }
        }
    }
}
