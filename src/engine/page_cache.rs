//! The page cache: whether a file's pages are cached (probed without
//! waiting), and dropping a file from it.

use std::fs::File;
use std::os::fd::AsRawFd;

use crate::error::{Error, Result};

/// Whether the byte at `offset` is cached: a one-byte `RWF_NOWAIT` read.
pub(crate) fn probe_cached(file: &File, offset: u64) -> bool {
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

/// Drops the file's pages from the page cache (clean pages only, no root needed).
pub fn drop_from_cache(path: &std::path::Path) -> Result<()> {
    let shown = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| Error::from_open(&shown, e))?;
    // SAFETY: a valid descriptor; advice has no memory effects.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(Error::io(
            &shown,
            "posix_fadvise",
            std::io::Error::from_raw_os_error(rc),
        ));
    }
    Ok(())
}

/// Whether the file lives on tmpfs, whose pages cannot be dropped.
pub fn on_tmpfs(path: &std::path::Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else {
        return false;
    };
    let mut st = std::mem::MaybeUninit::<libc::statfs>::zeroed();
    // SAFETY: valid C string and out pointer.
    let rc = unsafe { libc::statfs(c.as_ptr(), st.as_mut_ptr()) };
    // SAFETY: filled on success.
    rc == 0 && unsafe { st.assume_init() }.f_type == libc::TMPFS_MAGIC
}
