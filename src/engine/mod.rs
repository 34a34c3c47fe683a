//! The dual-path I/O engine: file ranges into and out of host or device memory.
//!
//! Data flow of one request: [`FileHandle`] checks it and clips it to the
//! file; the route (host, device through bounce buffers, device from the
//! registered page cache) is chosen; the request goes to the [`Engine`]'s
//! worker pool, whose workers claim its tasks (`tasks`) and run them
//! (`transfer`, `posix`, `lane`); every byte is counted per path
//! (`counters`).

mod bounce;
mod counters;
mod cufile_loop;
mod direct;
mod error;
mod faults;
mod file_handle;
mod lane;
mod lazy_cufile;
mod memory;
mod mmap;
mod open_file;
mod page_cache;
mod pool;
mod posix;
mod request;
mod route;
mod submit;
mod tasks;
mod transfer;

use std::sync::{Arc, OnceLock};

pub(crate) use counters::counted_devices;
pub use counters::{device_counters, global_counters, IoPath, PathCounters, PathTotals};
pub use error::IoError;
#[doc(hidden)]
pub use faults::{Fault, FaultInjector};
pub use file_handle::FileHandle;
pub use memory::{FillBuffer, IoBuf, IoBufMut, Memory};
pub use open_file::OpenMode;
pub use page_cache::{drop_from_cache, on_tmpfs};
pub use request::IoFuture;
pub use route::{CuFileAvailability, DeviceRoute, RouteDecision};
pub use submit::{RangeRead, SubmittedReads};
pub use tasks::{Task, TaskSplit};

use crate::config::Settings;
use bounce::BouncePools;
use error::Result;
use lane::SLOTS_PER_LANE;
use pool::WorkerPool;

/// Settings plus the worker pool and the bounce-buffer pools they size.
///
/// One engine serves every device: a request's destination decides its
/// device, and what a device needs (each worker's lane to it: a stream and
/// two slots; its pool of pinned bounce buffers) is created on its first
/// request, so feeding two GPUs at once costs no setup for the second until
/// it is used.
#[derive(Debug)]
pub struct Engine {
    settings: Settings,
    bounce: Arc<BouncePools>,
    pool: WorkerPool,
}

impl Engine {
    /// Starts an engine: `settings.num_threads` workers and, per device, a
    /// bounce pool of two buffers per worker (allocated on first use).
    pub fn new(settings: Settings) -> Result<Arc<Engine>> {
        let bounce = Arc::new(BouncePools::new(
            settings.bounce_buffer_size,
            settings.num_threads * SLOTS_PER_LANE,
        ));
        let pool = WorkerPool::new(settings.num_threads, bounce.clone())?;
        Ok(Arc::new(Engine {
            settings,
            bounce,
            pool,
        }))
    }

    /// The process-wide engine, with settings read once from the environment.
    /// A bad environment value is a [`IoError::Config`] naming the variable.
    pub fn global() -> Result<Arc<Engine>> {
        static GLOBAL: OnceLock<Arc<Engine>> = OnceLock::new();
        if let Some(engine) = GLOBAL.get() {
            return Ok(engine.clone());
        }
        let engine = Engine::new(Settings::from_env()?)?;
        Ok(GLOBAL.get_or_init(|| engine).clone())
    }

    /// The settings this engine runs with.
    pub fn settings(&self) -> &Settings {
        &self.settings
    }

    /// Workers in the pool.
    pub fn threads(&self) -> usize {
        self.pool.len()
    }

    /// Pins every bounce buffer the pool may hold now, so that the first
    /// device read does not pay for pinning (tens to hundreds of
    /// milliseconds for the default 16 workers × 2 × 16 MiB). Returns the
    /// number of buffers.
    pub fn preallocate_bounce_buffers(&self, device: crate::cuda::Device) -> Result<usize> {
        self.bounce.of(device).fill()
    }

    /// Pinned bounce buffers allocated so far, over every device.
    pub fn bounce_buffers_allocated(&self) -> usize {
        self.bounce.allocated()
    }

    /// Pinned bounce buffers allocated so far for device `ordinal`.
    pub fn bounce_buffers_allocated_on(&self, ordinal: usize) -> usize {
        self.bounce.allocated_on(ordinal)
    }

    pub(crate) fn pool(&self) -> &WorkerPool {
        &self.pool
    }
}
