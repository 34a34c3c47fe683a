//! `FileHandle`: one open file, read and written in parallel through the engine.

use std::sync::{Arc, Mutex, OnceLock};

use super::counters::PathCounters;
use super::error::{IoError, Result};
use super::lazy_cufile::LazyCuFile;
use super::memory::{IoBuf, IoBufMut, Memory};
use super::open_file::{open_checked, open_direct, FileShared, OpenMode};
use super::page_cache::cached_pages;
use super::posix::Descriptors;
use super::request::{IoFuture, Request, Transfer};
use super::route::{decide_cufile, decide_posix, CuFileAvailability, DeviceRoute, RouteDecision};
use super::submit::{RangeRead, SubmittedReads};
use super::tasks::TaskSplit;
use super::Engine;

/// An open file served by an [`Engine`].
#[derive(Debug)]
pub struct FileHandle {
    engine: Arc<Engine>,
    shared: Arc<FileShared>,
    mode: OpenMode,
    direct_unavailable: Option<String>,
    /// Whether cuFile can serve the file, settled on the first device
    /// request.
    cufile: LazyCuFile,
    last_route: Mutex<Option<RouteDecision>>,
    /// This handle's task size, when it differs from the engine's.
    task_size: Option<usize>,
}

impl FileHandle {
    /// Opens `path` with mode "r", "w", "r+" or "w+" on the process-wide
    /// engine (settings from the environment).
    pub fn open(path: impl AsRef<std::path::Path>, mode: &str) -> Result<FileHandle> {
        let mode = mode.parse()?;
        Self::open_with(Engine::global()?, path, mode)
    }

    /// Opens `path` on a given engine.
    pub fn open_with(
        engine: Arc<Engine>,
        path: impl AsRef<std::path::Path>,
        mode: OpenMode,
    ) -> Result<FileHandle> {
        let path_str = path.as_ref().display().to_string();
        // Refuses FIFOs, sockets, character devices and /proc files before
        // anything could block on them.
        let buffered = open_checked(path.as_ref(), mode)?;
        let meta = buffered
            .metadata()
            .map_err(|e| IoError::os(&path_str, "fstat", e))?;
        let settings = engine.settings();
        let wants_direct = (mode.can_read() && settings.auto_direct_io_read)
            || (mode.can_write() && settings.auto_direct_io_write);
        let (direct, direct_unavailable) = if wants_direct && meta.is_file() {
            match open_direct(path.as_ref(), mode) {
                Ok(f) => (Some(f), None),
                Err(e) => (None, Some(format!("O_DIRECT refused: {e}"))),
            }
        } else {
            (None, None)
        };
        // cuFile's driver opens on the first device request (or the first
        // `cufile()` call), not here: a handle only ever read into host
        // memory never pays for it.
        let cufile = LazyCuFile::new(settings);
        Ok(FileHandle {
            engine,
            shared: Arc::new(FileShared {
                path: path_str,
                fds: Descriptors {
                    buffered,
                    direct,
                    faults: OnceLock::new(),
                },
                counters: PathCounters::default(),
                cufile: OnceLock::new(),
            }),
            mode,
            direct_unavailable,
            cufile,
            last_route: Mutex::new(None),
            task_size: None,
        })
    }

    /// Test seam: every later `pread`/`pwrite` the engine makes for this
    /// handle's file asks `injector` first (see `engine::faults`). Set
    /// once; false when an injector was already set.
    #[doc(hidden)]
    pub fn inject_faults(&self, injector: Arc<dyn super::faults::FaultInjector>) -> bool {
        self.shared.fds.faults.set(injector).is_ok()
    }

    /// The path as given.
    pub fn path(&self) -> &str {
        &self.shared.path
    }

    /// The open mode.
    pub fn mode(&self) -> OpenMode {
        self.mode
    }

    /// The engine serving this handle.
    pub fn engine(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Why O_DIRECT is not used although the settings ask for it, if so.
    pub fn direct_unavailable(&self) -> Option<&str> {
        self.direct_unavailable.as_deref()
    }

    /// Whether every page of `[offset, offset + len)` is in the page cache
    /// (a read of the range would then be a memory copy, not I/O), counted
    /// without reading the file (`cachestat(2)`, else `mincore(2)`). False
    /// when a page is missing, the range is empty, or the kernel cannot tell.
    pub fn is_cached(&self, offset: u64, len: u64) -> bool {
        self.cached_pages(offset, len)
            .is_some_and(|(cached, total)| total > 0 && cached == total)
    }

    /// How many of the pages `[offset, offset + len)` covers are in the page
    /// cache, and how many it covers; `None` when the kernel cannot tell.
    pub fn cached_pages(&self, offset: u64, len: u64) -> Option<(u64, u64)> {
        cached_pages(&self.shared.fds.buffered, offset, len)
    }

    /// Whether cuFile serves this file, or why not (stage 1's input). The
    /// first call opens cuFile's driver (once per process) and registers the
    /// file; under AUTO on a host whose kernel has no nvidia-fs module the
    /// driver opens in the background instead, and the answer is the bounce
    /// route until it is open. A cuFile parameter that cuFile refuses shows here as
    /// unavailable, with its reason, and fails every device request.
    pub fn cufile(&self) -> &CuFileAvailability {
        self.cufile
            .get(self.engine.settings(), &self.shared, self.mode)
    }

    /// [`FileHandle::cufile`], waiting where cuFile's driver is still
    /// opening in the background (AUTO without nvidia-fs) for its outcome.
    pub fn cufile_settled(&self) -> &CuFileAvailability {
        self.cufile
            .settled(self.engine.settings(), &self.shared, self.mode)
    }

    /// The route the last device request took, with its reason.
    pub fn last_route(&self) -> Option<RouteDecision> {
        self.last_route
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// This handle's per-path counters.
    pub fn counters(&self) -> &PathCounters {
        &self.shared.counters
    }

    /// The file's current size in bytes.
    pub fn file_size(&self) -> Result<u64> {
        self.shared
            .fds
            .buffered
            .metadata()
            .map(|m| m.len())
            .map_err(|e| IoError::os(&self.shared.path, "fstat", e))
    }

    /// Cuts this handle's requests into tasks of `task_size` bytes, at
    /// least one, instead of the engine's [`Settings::task_size`]: for
    /// callers that already read many files or ranges in parallel and want
    /// each range read in fewer, longer system calls.
    ///
    /// [`Settings::task_size`]: crate::config::Settings::task_size
    pub fn with_task_size(mut self, task_size: usize) -> Self {
        self.task_size = Some(task_size.max(1));
        self
    }

    /// The task size of this handle's requests.
    pub fn task_size(&self) -> usize {
        self.task_size
            .unwrap_or_else(|| self.engine.settings().task_size)
    }

    /// Reads `size` bytes at `offset` into `buf` (host or device memory) and
    /// returns the bytes read: `size`, or fewer when the file ends first.
    pub fn pread<B: IoBufMut + ?Sized>(
        &self,
        buf: &mut B,
        size: usize,
        offset: u64,
    ) -> Result<usize> {
        let memory = buf.io_memory_mut();
        let req = Arc::new(self.prepare_read(memory, size, offset)?);
        self.engine.pool().submit(req.clone())?;
        req.wait()
    }

    /// Reads up to `dst.len()` bytes at `offset` on the calling thread
    /// (the buffered descriptor, no round trip through the workers): for
    /// small reads that must not queue behind the workers' large ones,
    /// such as the page headers a decoder walks while the row groups land
    /// on the device. Returns the bytes read, fewer only where the file
    /// ends.
    pub fn pread_here(&self, dst: &mut [u8], offset: u64) -> Result<usize> {
        super::posix::read_into(&self.shared.fds, &self.shared.path, offset, dst, false)
    }

    /// Reads several exact ranges into one buffer. Every range is submitted
    /// before any is awaited, so small ranges share the worker pool; a range
    /// outside the buffer, or beyond the end of the file, is an error (a
    /// truncated file never yields a partial buffer). Returns the bytes read.
    pub fn pread_ranges<B: IoBufMut + ?Sized>(
        &self,
        buf: &mut B,
        ranges: &[RangeRead],
    ) -> Result<u64> {
        // SAFETY: `buf` stays mutably borrowed until the reads are awaited here.
        unsafe { self.submit_ranges(buf.io_memory_mut(), ranges) }?.wait()
    }

    /// Submits reads of several exact ranges into `memory` without waiting,
    /// so that callers can keep several buffers' reads in flight at once.
    ///
    /// # Safety
    /// `memory` must stay valid, and untouched by anything else, until the
    /// returned [`SubmittedReads`] is waited for or dropped (dropping waits).
    pub unsafe fn submit_ranges(
        &self,
        memory: Memory,
        ranges: &[RangeRead],
    ) -> Result<SubmittedReads> {
        let mut requests = Vec::with_capacity(ranges.len());
        for r in ranges {
            let end = r.buffer_offset.checked_add(r.len);
            if end.is_none_or(|end| end > memory.len()) {
                return Err(IoError::BufferTooSmall {
                    path: self.shared.path.clone(),
                    buffer: memory.len(),
                    requested: end.unwrap_or(usize::MAX),
                });
            }
            let req =
                self.prepare_read(memory.slice(r.buffer_offset, r.len), r.len, r.file_offset)?;
            let got = req.split.total_len();
            if got < r.len {
                return Err(IoError::ShortRead {
                    path: self.shared.path.clone(),
                    offset: r.file_offset,
                    expected: r.len,
                    got,
                });
            }
            requests.push(Arc::new(req));
        }
        let mut pending = SubmittedReads {
            requests: Vec::with_capacity(requests.len()),
            error: None,
        };
        for req in requests {
            match self.engine.pool().submit(req.clone()) {
                Ok(()) => pending.requests.push(req),
                Err(e) => {
                    pending.error = Some(e);
                    break;
                }
            }
        }
        Ok(pending)
    }

    /// Writes `size` bytes from `buf` (host or device memory) at `offset`.
    pub fn pwrite<B: IoBuf + ?Sized>(&self, buf: &B, size: usize, offset: u64) -> Result<usize> {
        let req = Arc::new(self.prepare_write(buf.io_memory(), size, offset)?);
        self.engine.pool().submit(req.clone())?;
        req.wait()
    }

    /// Starts a read into an owned buffer; the future hands the buffer back
    /// with the bytes read.
    pub fn pread_async<B: IoBufMut + Send + 'static>(
        &self,
        mut buf: B,
        size: usize,
        offset: u64,
    ) -> Result<IoFuture<B>> {
        let memory = buf.io_memory_mut();
        let req = Arc::new(self.prepare_read(memory, size, offset)?);
        req.keep_alive(Box::new(buf));
        self.engine.pool().submit(req.clone())?;
        Ok(IoFuture::new(req))
    }

    /// Starts a write from an owned buffer; the future hands the buffer back
    /// with the bytes written.
    pub fn pwrite_async<B: IoBuf + Send + 'static>(
        &self,
        buf: B,
        size: usize,
        offset: u64,
    ) -> Result<IoFuture<B>> {
        let req = Arc::new(self.prepare_write(buf.io_memory(), size, offset)?);
        req.keep_alive(Box::new(buf));
        self.engine.pool().submit(req.clone())?;
        Ok(IoFuture::new(req))
    }

    /// The route a device read of `size` bytes at `offset` would take now,
    /// with its reason (stage 1), without reading.
    pub fn device_route(&self, size: usize, offset: u64) -> Result<RouteDecision> {
        let len = self.clamp_read(size, offset)?;
        Ok(self.decide_device(len, offset, false)?.0)
    }

    /// Stage 1 for a device request; the mapping comes with the zero-copy route.
    fn decide_device(
        &self,
        len: usize,
        offset: u64,
        write: bool,
    ) -> Result<(RouteDecision, Option<super::mmap::Mapping>)> {
        let settings = self.engine.settings();
        match decide_cufile(
            settings,
            self.cufile.for_request(settings, &self.shared, self.mode)?,
            &self.shared.path,
            len,
        )? {
            Ok(decision) => Ok((decision, None)),
            Err(why) if write => Ok((
                RouteDecision {
                    route: DeviceRoute::Bounce,
                    reason: format!("{why}; device writes go through bounce buffers"),
                },
                None,
            )),
            Err(why) => decide_posix(
                &why,
                settings.device_read_path,
                &self.shared.fds.buffered,
                &self.shared.path,
                offset,
                len,
            ),
        }
    }

    fn record(&self, decision: &RouteDecision) {
        tracing::debug!(path = %self.shared.path, ?decision, "device route");
        *self.last_route.lock().unwrap_or_else(|e| e.into_inner()) = Some(decision.clone());
    }

    /// The checks every request passes first: the mode allows it, and it
    /// is not empty.
    fn check_request(&self, allowed: bool, op: &'static str, size: usize) -> Result<()> {
        if !allowed {
            return Err(IoError::ModeNotAllowed {
                path: self.shared.path.clone(),
                mode: self.mode.as_str(),
                op,
            });
        }
        if size == 0 {
            return Err(IoError::EmptyRequest {
                path: self.shared.path.clone(),
            });
        }
        Ok(())
    }

    /// Checks a read and returns its length clipped to the end of the file.
    fn clamp_read(&self, size: usize, offset: u64) -> Result<usize> {
        self.check_request(self.mode.can_read(), "reading", size)?;
        let file_size = self.file_size()?;
        if offset >= file_size {
            return Err(IoError::OffsetPastEof {
                path: self.shared.path.clone(),
                offset,
                file_size,
            });
        }
        Ok(size.min((file_size - offset).min(usize::MAX as u64) as usize))
    }

    fn prepare_read(&self, memory: Memory, size: usize, offset: u64) -> Result<Request> {
        let len = self.clamp_read(size, offset)?;
        if memory.len() < len {
            return Err(IoError::BufferTooSmall {
                path: self.shared.path.clone(),
                buffer: memory.len(),
                requested: len,
            });
        }
        let settings = self.engine.settings();
        let mut task_size = self.task_size();
        let route = if memory.is_device() {
            let (decision, mapping) = self.decide_device(len, offset, false)?;
            self.record(&decision);
            match (decision.route, mapping) {
                (DeviceRoute::CuFile, _) => Transfer::ReadCuFile,
                (_, Some(m)) => {
                    // Page-aligned task boundaries keep registrations disjoint.
                    let page = super::mmap::page_size();
                    task_size = task_size.div_ceil(page) * page;
                    Transfer::ReadDeviceMmap(m)
                }
                (_, None) => Transfer::ReadDeviceBounce,
            }
        } else {
            Transfer::ReadHost
        };
        // Registrations (mmap) and O_DIRECT want aligned task boundaries;
        // buffered bounce and host reads split from the request's start.
        let split = match route {
            Transfer::ReadDeviceBounce | Transfer::ReadHost if !settings.auto_direct_io_read => {
                TaskSplit::relative(offset, len, task_size)
            }
            _ => TaskSplit::new(offset, len, task_size),
        };
        Ok(Request::new(
            self.shared.clone(),
            route,
            memory,
            split,
            settings.auto_direct_io_read,
            settings.bounce_buffer_size,
        ))
    }

    fn prepare_write(&self, memory: Memory, size: usize, offset: u64) -> Result<Request> {
        self.check_request(self.mode.can_write(), "writing", size)?;
        if offset
            .checked_add(size as u64)
            .is_none_or(|end| end > i64::MAX as u64)
        {
            return Err(IoError::RangeOverflow {
                path: self.shared.path.clone(),
                offset,
                size,
            });
        }
        if memory.len() < size {
            return Err(IoError::BufferTooSmall {
                path: self.shared.path.clone(),
                buffer: memory.len(),
                requested: size,
            });
        }
        let settings = self.engine.settings();
        let route = if memory.is_device() {
            let (decision, _) = self.decide_device(size, offset, true)?;
            self.record(&decision);
            match decision.route {
                DeviceRoute::CuFile => Transfer::WriteCuFile,
                _ => Transfer::WriteDevice,
            }
        } else {
            Transfer::WriteHost
        };
        Ok(Request::new(
            self.shared.clone(),
            route,
            memory,
            TaskSplit::new(offset, size, self.task_size()),
            settings.auto_direct_io_write,
            settings.bounce_buffer_size,
        ))
    }
}
