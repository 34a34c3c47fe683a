//! `FileHandle`: one open file, read and written in parallel through the engine.

use std::fs::{File, OpenOptions};
use std::os::unix::fs::OpenOptionsExt;
use std::sync::{Arc, Mutex, OnceLock};

use super::counters::PathCounters;
use super::memory::{IoBuf, IoBufMut, Memory};
use super::posix::Descriptors;
use super::request::{IoFuture, Request, Route};
use super::route::{decide_cufile, decide_posix, CuFileAvailability, DeviceRoute, RouteDecision};
use super::tasks::TaskSplit;
use super::Engine;
use crate::config::CompatMode;
use crate::cufile::CuFileHandle;
use crate::error::{Error, Result};

/// How a file is opened, with the same letters as `fopen` and KvikIO.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// "r": read only; the file must exist.
    Read,
    /// "w": write only; created or truncated.
    Write,
    /// "r+": read and write; the file must exist.
    ReadWrite,
    /// "w+": read and write; created or truncated.
    ReadWriteCreate,
}

impl OpenMode {
    /// The mode's letters.
    pub fn as_str(self) -> &'static str {
        match self {
            OpenMode::Read => "r",
            OpenMode::Write => "w",
            OpenMode::ReadWrite => "r+",
            OpenMode::ReadWriteCreate => "w+",
        }
    }

    fn can_read(self) -> bool {
        !matches!(self, OpenMode::Write)
    }

    fn can_write(self) -> bool {
        !matches!(self, OpenMode::Read)
    }

    fn options(self) -> OpenOptions {
        let mut o = OpenOptions::new();
        match self {
            OpenMode::Read => o.read(true),
            OpenMode::Write => o.write(true).create(true).truncate(true),
            OpenMode::ReadWrite => o.read(true).write(true),
            OpenMode::ReadWriteCreate => o.read(true).write(true).create(true).truncate(true),
        };
        o
    }
}

impl std::str::FromStr for OpenMode {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "r" => Ok(OpenMode::Read),
            "w" => Ok(OpenMode::Write),
            "r+" => Ok(OpenMode::ReadWrite),
            "w+" => Ok(OpenMode::ReadWriteCreate),
            other => Err(Error::InvalidMode(other.to_string())),
        }
    }
}

/// One piece of a multi-range read: `len` bytes of the file at
/// `file_offset`, landing in the buffer at `buffer_offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RangeRead {
    /// Where the bytes are in the file.
    pub file_offset: u64,
    /// Where they land in the buffer.
    pub buffer_offset: usize,
    /// How many.
    pub len: usize,
}

/// Reads submitted by [`FileHandle::submit_ranges`], not yet awaited.
/// Dropping it waits for them, so the memory is never written after.
#[derive(Debug)]
pub struct PendingReads {
    requests: Vec<Arc<Request>>,
    error: Option<Error>,
}

impl PendingReads {
    /// Waits for every read; returns the bytes read or the first error.
    pub fn wait(mut self) -> Result<u64> {
        let mut first_err = self.error.take();
        let mut total = 0u64;
        for req in std::mem::take(&mut self.requests) {
            match req.wait() {
                Ok(n) => total += n as u64,
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(total),
        }
    }
}

impl Drop for PendingReads {
    fn drop(&mut self) {
        for req in self.requests.drain(..) {
            let _ = req.wait();
        }
    }
}

/// What the workers share about an open file.
#[derive(Debug)]
pub(crate) struct FileShared {
    pub path: String,
    pub fds: Descriptors,
    pub counters: PathCounters,
    /// The cuFile registration, once a device request made one.
    pub cufile: OnceLock<CuFileHandle>,
}

/// An open file served by an [`Engine`].
#[derive(Debug)]
pub struct FileHandle {
    engine: Arc<Engine>,
    shared: Arc<FileShared>,
    mode: OpenMode,
    direct_unavailable: Option<String>,
    /// Whether cuFile can serve the file: known at open under compat ON,
    /// otherwise decided on the first device request, which opens cuFile's
    /// driver (once per process) and registers the file (a handle only
    /// ever read into host memory touches neither: a registration costs
    /// milliseconds, the driver's opening more).
    cufile: OnceLock<CuFileAvailability>,
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
        let buffered = mode
            .options()
            .open(path.as_ref())
            .map_err(|e| Error::from_open(&path_str, e))?;
        let meta = buffered
            .metadata()
            .map_err(|e| Error::io(&path_str, "fstat", e))?;
        if meta.is_dir() {
            return Err(Error::IsDirectory { path: path_str });
        }
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
        let cufile = OnceLock::new();
        if settings.compat_mode == CompatMode::On {
            let _ = cufile.set(CuFileAvailability::Disabled);
        }
        Ok(FileHandle {
            engine,
            shared: Arc::new(FileShared {
                path: path_str,
                fds: Descriptors { buffered, direct },
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

    /// Whether `[offset, offset + len)` is in the page cache, probed without
    /// waiting (`preadv2` with `RWF_NOWAIT`) one byte every `step` bytes and
    /// at the end: true only when every probe found its page cached (a read
    /// of the range would then be a memory copy, not I/O). False when a
    /// probe misses, the range is empty, or the kernel cannot tell.
    pub fn is_cached(&self, offset: u64, len: u64, step: u64) -> bool {
        if len == 0 {
            return false;
        }
        let step = step.max(4096);
        let last = offset + len - 1;
        let mut at = offset;
        loop {
            if !probe_cached(&self.shared.fds.buffered, at.min(last)) {
                return false;
            }
            if at >= last {
                return true;
            }
            at = (at + step).min(last);
        }
    }

    /// Whether cuFile serves this file, or why not (stage 1's input). The
    /// first call opens cuFile's driver (once per process) and registers the
    /// file. A cuFile parameter that cuFile refuses shows here as
    /// unavailable, with its reason, and fails every device request.
    pub fn cufile(&self) -> &CuFileAvailability {
        self.cufile.get_or_init(|| {
            match open_cufile_driver(self.engine.settings()) {
                Ok(Some(unavailable)) => return unavailable,
                Err(refused) => return CuFileAvailability::Unavailable(refused.to_string()),
                Ok(None) => {}
            }
            match CuFileHandle::register(
                std::path::Path::new(&self.shared.path),
                self.mode.can_read(),
                self.mode.can_write(),
            ) {
                Ok(handle) => {
                    let _ = self.shared.cufile.set(handle);
                    CuFileAvailability::Ready
                }
                Err(why) => CuFileAvailability::Unavailable(why),
            }
        })
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
            .map_err(|e| Error::io(&self.shared.path, "fstat", e))
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
    /// returned [`PendingReads`] is waited for or dropped (dropping waits).
    pub unsafe fn submit_ranges(
        &self,
        memory: Memory,
        ranges: &[RangeRead],
    ) -> Result<PendingReads> {
        let mut requests = Vec::with_capacity(ranges.len());
        for r in ranges {
            let end = r.buffer_offset.checked_add(r.len);
            if end.is_none_or(|end| end > memory.len()) {
                return Err(Error::BufferTooSmall {
                    path: self.shared.path.clone(),
                    buffer: memory.len(),
                    requested: end.unwrap_or(usize::MAX),
                });
            }
            let req =
                self.prepare_read(memory.slice(r.buffer_offset, r.len), r.len, r.file_offset)?;
            let got = req.split.total_len();
            if got < r.len {
                return Err(Error::ShortRead {
                    path: self.shared.path.clone(),
                    offset: r.file_offset,
                    expected: r.len,
                    got,
                });
            }
            requests.push(Arc::new(req));
        }
        let mut pending = PendingReads {
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
        match decide_cufile(settings, self.cufile_for_request()?, &self.shared.path, len)? {
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

    /// [`FileHandle::cufile`] for a device request: a cuFile parameter that
    /// cuFile refuses is an error, not a fallback (the driver's outcome is
    /// cached, so asking again costs nothing).
    fn cufile_for_request(&self) -> Result<&CuFileAvailability> {
        if matches!(
            self.cufile.get(),
            None | Some(CuFileAvailability::Unavailable(_))
        ) {
            open_cufile_driver(self.engine.settings())?;
        }
        Ok(self.cufile())
    }

    fn record(&self, decision: &RouteDecision) {
        tracing::debug!(path = %self.shared.path, ?decision, "device route");
        *self.last_route.lock().unwrap_or_else(|e| e.into_inner()) = Some(decision.clone());
    }

    /// The checks every request passes first: the mode allows it, and it
    /// is not empty.
    fn check_request(&self, allowed: bool, op: &'static str, size: usize) -> Result<()> {
        if !allowed {
            return Err(Error::ModeNotAllowed {
                path: self.shared.path.clone(),
                mode: self.mode.as_str(),
                op,
            });
        }
        if size == 0 {
            return Err(Error::EmptyRequest {
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
            return Err(Error::OffsetPastEof {
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
            return Err(Error::BufferTooSmall {
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
                (DeviceRoute::CuFile, _) => Route::ReadCuFile,
                (_, Some(m)) => {
                    // Page-aligned task boundaries keep registrations disjoint.
                    let page = super::mmap::page_size();
                    task_size = task_size.div_ceil(page) * page;
                    Route::ReadDeviceMmap(m)
                }
                (_, None) => Route::ReadDeviceBounce,
            }
        } else {
            Route::ReadHost
        };
        // Registrations (mmap) and O_DIRECT want aligned task boundaries;
        // buffered bounce and host reads split from the request's start.
        let split = match route {
            Route::ReadDeviceBounce | Route::ReadHost if !settings.auto_direct_io_read => {
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
            return Err(Error::RangeOverflow {
                path: self.shared.path.clone(),
                offset,
                size,
            });
        }
        if memory.len() < size {
            return Err(Error::BufferTooSmall {
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
                DeviceRoute::CuFile => Route::WriteCuFile,
                _ => Route::WriteDevice,
            }
        } else {
            Route::WriteHost
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

/// Whether the byte at `offset` is cached: a one-byte `RWF_NOWAIT` read.
fn probe_cached(file: &File, offset: u64) -> bool {
    use std::os::fd::AsRawFd;
    let mut byte = 0u8;
    let iov = libc::iovec {
        iov_base: (&mut byte as *mut u8).cast(),
        iov_len: 1,
    };
    // SAFETY: one iovec over a live local byte; the descriptor is open.
    let n = unsafe {
        libc::preadv2(
            file.as_raw_fd(),
            &iov,
            1,
            offset as libc::off_t,
            libc::RWF_NOWAIT,
        )
    };
    n == 1
}

/// Opens cuFile's driver (once per process; later calls get the first
/// outcome): None when it is open (the handle may register its file), or
/// why cuFile cannot serve files. A cuFile parameter that cuFile refuses is
/// an error, not a fallback. Compat ON never gets here: its handles are
/// `Disabled` from their opening.
fn open_cufile_driver(settings: &crate::config::Settings) -> Result<Option<CuFileAvailability>> {
    match crate::cufile::driver::open(&settings.cufile) {
        Err(e @ Error::CuFileParam { .. }) => Err(e),
        Err(Error::CuFileUnavailable(why)) => Ok(Some(CuFileAvailability::Unavailable(why))),
        Err(other) => Ok(Some(CuFileAvailability::Unavailable(other.to_string()))),
        Ok(_) => Ok(None),
    }
}

fn open_direct(path: &std::path::Path, mode: OpenMode) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(mode.can_read())
        .write(mode.can_write())
        .custom_flags(libc::O_DIRECT);
    o.open(path)
}
