//! A test seam on the engine's POSIX system calls (hidden from the
//! documentation): a [`FaultInjector`] set on a handle
//! (`FileHandle::inject_faults`) is asked before every `pread` and `pwrite`
//! the engine makes for that handle's file, and may fail the call with an
//! errno or shorten it. The injector may also act on the file itself
//! (truncate it, rename another file over its path) before answering.
//! ARCHITECTURE.md says why this is always compiled and per handle.

/// What an injected system call does instead of running as asked.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Fail with this errno (`libc::EIO`, `libc::EINTR`, `libc::ENOSPC`, ...)
    /// without calling the kernel.
    Errno(i32),
    /// Call the kernel with at most this many bytes (a short read or
    /// write; 0 reads as end of file, writes as "wrote nothing").
    Short(usize),
}

/// Decides, per system call, whether to inject a fault.
#[doc(hidden)]
pub trait FaultInjector: Send + Sync + std::fmt::Debug {
    /// Before a `pread` of `len` bytes at `offset`: `None` runs it as asked.
    fn on_read(&self, offset: u64, len: usize) -> Option<Fault>;
    /// Before a `pwrite` of `len` bytes at `offset`: `None` runs it as asked.
    fn on_write(&self, offset: u64, len: usize) -> Option<Fault>;
}
