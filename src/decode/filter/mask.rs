//! [`DeviceMask`]: which rows of a batch a filter keeps, on the device.

use crate::decode::array::DeviceBytes;

/// Which rows of a batch a filter keeps: one byte per row on the batch's
/// device, 1 where the predicate is TRUE, 0 where it is FALSE or unknown
/// (NULL), and the number of kept rows once it is known on the host.
#[derive(Debug, Clone)]
pub struct DeviceMask {
    bytes: DeviceBytes,
    len: usize,
}

impl DeviceMask {
    /// A mask of `len` rows held in the first `len` bytes of `bytes`.
    pub(crate) fn new(bytes: DeviceBytes, len: usize) -> DeviceMask {
        debug_assert!(bytes.len() >= len);
        DeviceMask { bytes, len }
    }

    /// The rows the mask covers (the batch's rows).
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the mask covers no row.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The mask's bytes (`len` of them, one per row).
    pub fn bytes(&self) -> &DeviceBytes {
        &self.bytes
    }
}
