//! The page cache: how much of a file's range is cached (counted without
//! touching the file), and dropping a file from it.

use std::fs::File;
use std::os::fd::AsRawFd;

use super::error::{IoError, Result};

/// `cachestat(2)`'s number (Linux 6.5; one number on every architecture, as
/// for every system call added since 5.1). The libc crate does not name it
/// for every target yet.
const SYS_CACHESTAT: libc::c_long = 451;

/// The range `cachestat(2)` is asked about.
#[repr(C)]
struct CachestatRange {
    off: u64,
    len: u64,
}

/// What `cachestat(2)` answers, in pages.
#[repr(C)]
#[derive(Default)]
struct Cachestat {
    nr_cache: u64,
    nr_dirty: u64,
    nr_writeback: u64,
    nr_evicted: u64,
    nr_recently_evicted: u64,
}

/// The pages of `[offset, offset + len)` that are in the page cache and the
/// pages the range covers, or `None` when the kernel cannot tell. Counting
/// reads nothing: an earlier probe (a one-byte `RWF_NOWAIT` read) started
/// the kernel's read-ahead on a miss and, on storage fast enough, found the
/// page it had just brought in. `cachestat(2)` first; where it is missing,
/// `mincore(2)` over a mapping of the range, which is never touched.
pub(crate) fn cached_pages(file: &File, offset: u64, len: u64) -> Option<(u64, u64)> {
    if len == 0 {
        return Some((0, 0));
    }
    let page = page_size();
    let first = offset / page;
    let end = offset.checked_add(len)?.div_ceil(page);
    let total = end - first;
    let cached = by_cachestat(file, first * page, total * page)
        .or_else(|| by_mincore(file, first * page, total * page, page))?;
    Some((cached.min(total), total))
}

fn page_size() -> u64 {
    // SAFETY: sysconf has no memory effects.
    let size = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    u64::try_from(size).ok().filter(|&s| s > 0).unwrap_or(4096)
}

fn by_cachestat(file: &File, offset: u64, len: u64) -> Option<u64> {
    let range = CachestatRange { off: offset, len };
    let mut stat = Cachestat::default();
    // SAFETY: both pointers are to live, properly laid out locals; the
    // descriptor is open; flags must be zero.
    let rc = unsafe {
        libc::syscall(
            SYS_CACHESTAT,
            file.as_raw_fd(),
            &range as *const CachestatRange,
            &mut stat as *mut Cachestat,
            0u32,
        )
    };
    (rc == 0).then_some(stat.nr_cache)
}

fn by_mincore(file: &File, offset: u64, len: u64, page: u64) -> Option<u64> {
    let file_len = file.metadata().ok()?.len();
    // Pages past the file's end are neither cached nor mappable.
    let len = len.min(file_len.saturating_sub(offset).div_ceil(page) * page);
    if len == 0 {
        return Some(0);
    }
    let map_len = usize::try_from(len).ok()?;
    // SAFETY: a read-only shared mapping of an open file at a page-aligned
    // offset; it is only handed to mincore, never read, and unmapped below.
    unsafe {
        let map = libc::mmap(
            std::ptr::null_mut(),
            map_len,
            libc::PROT_READ,
            libc::MAP_SHARED,
            file.as_raw_fd(),
            libc::off_t::try_from(offset).ok()?,
        );
        if map == libc::MAP_FAILED {
            return None;
        }
        let mut resident = vec![0u8; map_len.div_ceil(page as usize)];
        let rc = libc::mincore(map, map_len, resident.as_mut_ptr());
        libc::munmap(map, map_len);
        (rc == 0).then(|| resident.iter().filter(|&&b| b & 1 != 0).count() as u64)
    }
}

/// Drops the file's pages from the page cache (clean pages only, no root needed).
pub fn drop_from_cache(path: &std::path::Path) -> Result<()> {
    let shown = path.display().to_string();
    let f = std::fs::File::open(path).map_err(|e| IoError::from_open(&shown, e))?;
    // SAFETY: a valid descriptor; advice has no memory effects.
    let rc = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if rc != 0 {
        return Err(IoError::os(
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Both counts agree on a file partly in the cache: `mincore`, the
    /// fallback before Linux 6.5, and `cachestat` where the kernel has it.
    #[test]
    fn cachestat_and_mincore_count_the_same_pages() {
        // On tmpfs nothing is dropped: every page then counts as cached.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("counted");
        let page = page_size();
        let len = 64 * page as usize;
        let mut f = File::create(&path).unwrap();
        f.write_all(&vec![7u8; len]).unwrap();
        f.sync_all().unwrap();
        drop_from_cache(&path).unwrap();
        let f = File::open(&path).unwrap();
        // Bring back the first few pages.
        let mut buf = vec![0u8; 4 * page as usize];
        std::os::unix::fs::FileExt::read_exact_at(&f, &mut buf, 0).unwrap();
        let whole = (64 * page, page);
        let mincore = by_mincore(&f, 0, whole.0, whole.1).unwrap();
        assert!((4..=64).contains(&mincore), "{mincore} pages resident");
        if let Some(cachestat) = by_cachestat(&f, 0, whole.0) {
            assert_eq!(cachestat, mincore);
        }
        // A range past the end is counted as not cached, not mapped.
        assert_eq!(by_mincore(&f, 64 * page, 8 * page, page), Some(0));
        let (cached, total) = cached_pages(&f, page / 2, page).unwrap();
        assert_eq!(
            (cached, total),
            (2, 2),
            "an unaligned range counts whole pages"
        );
        assert_eq!(cached_pages(&f, 0, 0), Some((0, 0)));
    }
}
