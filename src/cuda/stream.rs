//! Streams and events: every synchronisation in gdscan is one of these, explicit.

use cudarc::driver::sys;

use super::device::Device;
use super::driver::check;
use super::error::Result;

/// A non-blocking CUDA stream (no implicit synchronisation with the legacy
/// default stream: KvikIO's hidden default-stream syncs are its issue #818).
#[derive(Debug)]
pub struct Stream {
    device: Device,
    raw: sys::CUstream,
}

// SAFETY: streams may be used from any thread once their context is bound
// (every method binds it), and from several at once: the driver API is
// thread-safe, and work queued on one stream from two threads runs in the
// order the calls returned. `Stream` has no interior state of its own.
unsafe impl Send for Stream {}
// SAFETY: as for `Send`: every method through `&Stream` binds the context
// and makes one driver call on the handle, which the driver serialises.
unsafe impl Sync for Stream {}

impl Stream {
    /// Creates a stream on `device`.
    pub fn new(device: Device) -> Result<Stream> {
        Stream::with_priority(device, None)
    }

    /// Creates a stream on `device` at the device's highest priority: its
    /// blocks are scheduled ahead of those of streams made by
    /// [`Stream::new`] whose kernels wait for room (small, latency-bound
    /// work the host waits for, queued beside long decode kernels).
    pub fn with_high_priority(device: Device) -> Result<Stream> {
        device.bind()?;
        let (mut least, mut greatest) = (0i32, 0i32);
        // SAFETY: context bound; out pointers valid.
        check("cuCtxGetStreamPriorityRange", unsafe {
            sys::cuCtxGetStreamPriorityRange(&mut least, &mut greatest)
        })?;
        Stream::with_priority(device, Some(greatest))
    }

    /// A non-blocking stream on `device`, at `priority` (in the device's
    /// range) or the default.
    fn with_priority(device: Device, priority: Option<i32>) -> Result<Stream> {
        device.bind()?;
        let flags = sys::CUstream_flags::CU_STREAM_NON_BLOCKING as u32;
        let mut raw = std::ptr::null_mut();
        // SAFETY: context bound; out pointer valid; a priority given is
        // the device's own (`with_high_priority`).
        check("cuStreamCreate", unsafe {
            match priority {
                None => sys::cuStreamCreate(&mut raw, flags),
                Some(p) => sys::cuStreamCreateWithPriority(&mut raw, flags, p),
            }
        })?;
        Ok(Stream { device, raw })
    }

    /// The device this stream belongs to.
    pub fn device(&self) -> Device {
        self.device
    }

    /// Queues a host-to-device copy of `len` bytes.
    ///
    /// # Safety
    /// `src` must stay valid and unchanged, and `dst` must be a device
    /// allocation of at least `len` bytes, until the copy has completed
    /// (wait on an [`Event`] recorded after it).
    pub unsafe fn copy_to_device(&self, dst: u64, src: *const u8, len: usize) -> Result<()> {
        check(
            "cuMemcpyHtoDAsync",
            sys::cuMemcpyHtoDAsync_v2(dst, src.cast(), len, self.raw),
        )
    }

    /// Queues a device-to-host copy of `len` bytes.
    ///
    /// # Safety
    /// `dst` must stay valid for writes of `len` bytes until the copy has
    /// completed, and `src` must be a device allocation of at least `len` bytes.
    pub unsafe fn copy_to_host(&self, dst: *mut u8, src: u64, len: usize) -> Result<()> {
        check(
            "cuMemcpyDtoHAsync",
            sys::cuMemcpyDtoHAsync_v2(dst.cast(), src, len, self.raw),
        )
    }

    /// Queues a device-to-device copy of `len` bytes (both on this
    /// stream's device).
    ///
    /// # Safety
    /// `src` and `dst` must be device allocations of at least `len` bytes
    /// that stay allocated (and `src` unchanged) until the copy has completed.
    pub unsafe fn copy_device_to_device(&self, dst: u64, src: u64, len: usize) -> Result<()> {
        check(
            "cuMemcpyDtoDAsync",
            sys::cuMemcpyDtoDAsync_v2(dst, src, len, self.raw),
        )
    }

    /// Makes work queued on this stream after this call wait until `event`
    /// (recorded on any stream of the same device) has completed; the host
    /// does not wait.
    pub fn wait_event(&self, event: &Event) -> Result<()> {
        // SAFETY: both handles are alive and belong to the same context.
        check("cuStreamWaitEvent", unsafe {
            sys::cuStreamWaitEvent(self.raw, event.raw(), 0)
        })
    }

    /// Blocks until everything queued on this stream has finished.
    pub fn synchronize(&self) -> Result<()> {
        // SAFETY: the stream is alive.
        check("cuStreamSynchronize", unsafe {
            sys::cuStreamSynchronize(self.raw)
        })
    }

    pub(crate) fn raw(&self) -> sys::CUstream {
        self.raw
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: the stream is ours; destroy waits for queued work itself.
            unsafe {
                sys::cuStreamDestroy_v2(self.raw);
            }
        }
    }
}

/// A CUDA event, used to wait for one point in a stream (without timing,
/// unless made with [`Event::timed`]).
#[derive(Debug)]
pub struct Event {
    device: Device,
    raw: sys::CUevent,
    recorded: bool,
}

// SAFETY: events may be used from any thread.
unsafe impl Send for Event {}
// SAFETY: the methods taking `&self` (`raw`, `wait`, `device`) only read the
// handle and call thread-safe driver functions; the `recorded` flag changes
// only through `&mut self`.
unsafe impl Sync for Event {}

impl Event {
    /// Creates an event on `device`.
    pub fn new(device: Device) -> Result<Event> {
        Event::create(device, sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32)
    }

    /// Creates an event on `device` whose waits ([`Event::synchronize`],
    /// [`Event::wait`]) put the thread to sleep until the GPU reaches it
    /// instead of spinning: for threads that wait long next to others that
    /// need the CPU (DataFusion's partitions copying batches back).
    pub fn blocking(device: Device) -> Result<Event> {
        Event::create(
            device,
            sys::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32
                | sys::CUevent_flags::CU_EVENT_BLOCKING_SYNC as u32,
        )
    }

    /// Creates an event on `device` that keeps a timestamp, for
    /// [`Event::elapsed_ms_since`] (timing costs a little at every record:
    /// use [`Event::new`] where only ordering matters).
    pub fn timed(device: Device) -> Result<Event> {
        Event::create(device, sys::CUevent_flags::CU_EVENT_DEFAULT as u32)
    }

    fn create(device: Device, flags: u32) -> Result<Event> {
        device.bind()?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: context bound; out pointer valid.
        check("cuEventCreate", unsafe {
            sys::cuEventCreate(&mut raw, flags)
        })?;
        Ok(Event {
            device,
            raw,
            recorded: false,
        })
    }

    /// Milliseconds from `start` to this event; both must be timed
    /// ([`Event::timed`]), recorded, complete and on the same device.
    pub fn elapsed_ms_since(&self, start: &Event) -> Result<f32> {
        self.device.bind()?;
        let mut ms = 0f32;
        // SAFETY: both events are alive; the out pointer is valid.
        check("cuEventElapsedTime", unsafe {
            sys::cuEventElapsedTime_v2(&mut ms, start.raw, self.raw)
        })?;
        Ok(ms)
    }

    /// Records the event at the current end of `stream`.
    pub fn record(&mut self, stream: &Stream) -> Result<()> {
        // SAFETY: both handles are alive and belong to the same context.
        check("cuEventRecord", unsafe {
            sys::cuEventRecord(self.raw, stream.raw())
        })?;
        self.recorded = true;
        Ok(())
    }

    /// Blocks until the work before the last [`Event::record`] has finished;
    /// returns at once if the event was never recorded.
    pub fn synchronize(&mut self) -> Result<()> {
        if !self.recorded {
            return Ok(());
        }
        // SAFETY: the event is alive.
        check("cuEventSynchronize", unsafe {
            sys::cuEventSynchronize(self.raw)
        })?;
        self.recorded = false;
        Ok(())
    }

    /// Blocks until the work before the last recording has finished, through
    /// a shared reference (so that an `Arc<Event>` can be waited on by any of
    /// its owners). An event never recorded counts as complete: the driver
    /// returns at once.
    pub fn wait(&self) -> Result<()> {
        self.device.bind()?;
        // SAFETY: the event is alive.
        check("cuEventSynchronize", unsafe {
            sys::cuEventSynchronize(self.raw)
        })
    }

    /// As [`Event::wait`], for at most `limit`: true when the work has
    /// finished, false when `limit` passed first (the work may still be
    /// running). It polls the event, yielding the thread between polls for
    /// the first millisecond and sleeping 50 µs at a time after, which is
    /// how the driver's default spin-then-yield wait treats a CPU thread.
    pub fn wait_for(&self, limit: std::time::Duration) -> Result<bool> {
        self.device.bind()?;
        let started = std::time::Instant::now();
        loop {
            // SAFETY: the event is alive.
            match unsafe { sys::cuEventQuery(self.raw) } {
                sys::CUresult::CUDA_SUCCESS => return Ok(true),
                sys::CUresult::CUDA_ERROR_NOT_READY => {}
                other => return check("cuEventQuery", other).map(|_| false),
            }
            let waited = started.elapsed();
            if waited >= limit {
                return Ok(false);
            }
            if waited < std::time::Duration::from_millis(1) {
                std::thread::yield_now();
            } else {
                std::thread::sleep(std::time::Duration::from_micros(50));
            }
        }
    }

    /// The device the event belongs to.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The raw `CUevent` handle, for interfaces that pass events across
    /// libraries (the Arrow C Device Data Interface's `sync_event` points to
    /// one). The handle stays valid while this `Event` lives.
    pub fn raw(&self) -> sys::CUevent {
        self.raw
    }

    /// Whether the work before the last [`Event::record`] has finished
    /// (without blocking); true if the event was never recorded.
    pub fn is_complete(&mut self) -> Result<bool> {
        if !self.recorded {
            return Ok(true);
        }
        // SAFETY: the event is alive.
        match unsafe { sys::cuEventQuery(self.raw) } {
            sys::CUresult::CUDA_SUCCESS => {
                self.recorded = false;
                Ok(true)
            }
            sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
            other => check("cuEventQuery", other).map(|_| false),
        }
    }
}

/// Blocks until `raw`, an event created by someone else (another library, in
/// a context of `device`), has completed.
///
/// # Safety
/// `raw` must be a live `CUevent` handle for the whole call.
pub(crate) unsafe fn wait_foreign_event(device: Device, raw: sys::CUevent) -> Result<()> {
    device.bind()?;
    check("cuEventSynchronize", sys::cuEventSynchronize(raw))
}

impl Drop for Event {
    fn drop(&mut self) {
        if self.device.bind().is_ok() {
            // SAFETY: the event is ours.
            unsafe {
                sys::cuEventDestroy_v2(self.raw);
            }
        }
    }
}
