//! Masks between host and device: a mask read back (the late scan's host
//! step turns it into rows to fetch) and a host-built mask uploaded (the
//! late scan's payload compaction).

use super::{DeviceMask, FilterError, FilterGpu};
use crate::decode::array::DeviceBytes;

impl FilterGpu {
    /// `mask`'s bytes on the host (one per row, 1 = kept).
    pub fn mask_to_host(&self, mask: &DeviceMask) -> Result<Vec<u8>, FilterError> {
        let mut out = vec![0u8; mask.len()];
        if out.is_empty() {
            return Ok(out);
        }
        // SAFETY: `out` holds `mask.len()` bytes and the mask's buffer at
        // least as many (DeviceMask's invariant); both stay alive until the
        // synchronize below, which also orders the copy after the kernels
        // queued on this stream that wrote the mask.
        unsafe {
            self.stream
                .copy_to_host(out.as_mut_ptr(), mask.bytes().address(), out.len())?
        };
        self.stream.synchronize()?;
        Ok(out)
    }

    /// `bytes` (one per row, not 0 = keep) as a mask on this GPU.
    pub fn upload_mask(&self, bytes: &[u8]) -> Result<DeviceMask, FilterError> {
        let buffer = self.pool.allocate(bytes.len().max(1))?;
        if !bytes.is_empty() {
            // SAFETY: `buffer` holds at least `bytes.len()` bytes; `bytes`
            // is borrowed until the synchronize below.
            unsafe {
                self.stream
                    .copy_to_device(buffer.device_ptr(), bytes.as_ptr(), bytes.len())?
            };
        }
        self.stream.synchronize()?;
        Ok(DeviceMask::new(
            DeviceBytes::from_pooled(buffer),
            bytes.len(),
        ))
    }
}
