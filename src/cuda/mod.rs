//! The only place that talks to the CUDA driver.
//!
//! Layered like cudarc itself: cudarc's `driver::sys` (loaded at run time) is
//! the raw layer; [`driver`] turns its status codes into [`CudaError`]s and
//! checks that the library exists before anything touches it (cudarc panics
//! when a library is missing, we never do); `device`, `stream` and
//! `memory` are small owning types with `Drop`; `pool` caches device
//! allocations so that steady scans never call `cuMemFree`, `pinned_pool`
//! pinned host ones, both by one device-free policy (`pool_policy`,
//! counted in `pool_stats`).

mod device;
mod devices;
pub mod driver;
mod error;
mod memory;
pub mod module;
mod numa;
mod per_device;
mod pinned_pool;
mod pool;
mod pool_policy;
mod pool_stats;
mod stream;

pub use device::Device;
pub use devices::{Devices, DevicesParseError};
pub use error::CudaError;
pub use memory::{DeviceBuffer, HostRegistration, PinnedBuffer};
pub use numa::NumaPlacement;
pub(crate) use per_device::PerDevice;
pub use pinned_pool::{PinnedPool, PooledPinnedBuffer, SHARED_PINNED_POOL_BYTES};
pub use pool::{DevicePool, PooledDeviceBuffer};
pub use pool_stats::PoolStats;
pub(crate) use stream::wait_foreign_event;
pub use stream::{Event, Stream};
