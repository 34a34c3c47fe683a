//! [`FilterGpu`]: what filtering uses on one GPU.

use std::sync::Arc;

use crate::cuda::{Device, DevicePool, Stream};
use crate::decode::kernels::KernelSet;

use super::FilterError;

/// The kernels, the stream and the device pool that filters run with on
/// one GPU. Every launch of [`FilterGpu::evaluate`] and
/// [`FilterGpu::compact`] is queued on its stream, behind whatever the
/// batch's ready event says, and the batches they return carry their own
/// ready event.
#[derive(Debug)]
pub struct FilterGpu {
    pub(super) kernels: Arc<KernelSet>,
    pub(super) stream: Stream,
    pub(super) pool: Arc<DevicePool>,
}

impl FilterGpu {
    /// Filtering on `kernels`' device, allocating from `pool` (same
    /// device), on a stream of its own at the device's highest priority:
    /// the decode stage waits for the filter's small kernels, which must
    /// not queue behind the next row groups' decode kernels.
    pub fn new(kernels: Arc<KernelSet>, pool: Arc<DevicePool>) -> Result<FilterGpu, FilterError> {
        let stream = Stream::with_high_priority(kernels.device())?;
        Ok(FilterGpu {
            kernels,
            stream,
            pool,
        })
    }

    /// The device.
    pub fn device(&self) -> Device {
        self.kernels.device()
    }
}
