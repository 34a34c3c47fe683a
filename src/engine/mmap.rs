//! Read-only memory maps of a file range.
//!
//! The zero-copy device path maps the file, registers each task's pages with
//! `cuMemHostRegister(READ_ONLY)` and lets the GPU DMA straight out of the
//! page cache: one pass over host memory instead of the bounce path's three
//! (kernel copy into the bounce buffer, then DMA out of it).

use std::fs::File;
use std::os::fd::AsRawFd;

use super::error::{IoError, Result};

/// The system page size.
pub(super) fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *PAGE.get_or_init(|| {
        // SAFETY: sysconf has no preconditions.
        let v = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if v > 0 {
            v as usize
        } else {
            4096
        }
    })
}

/// A read-only shared mapping covering `[offset, offset + len)` of a file
/// (widened to page boundaries), unmapped on drop.
#[derive(Debug)]
pub(crate) struct Mapping {
    base: *mut u8,
    map_len: usize,
    /// File offset of `base`.
    map_offset: u64,
}

// SAFETY: the mapping is read-only memory owned by this value.
unsafe impl Send for Mapping {}
// SAFETY: only read through shared references.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps the range. The caller keeps the range inside the file's size
    /// (touching pages past the end of a file raises SIGBUS).
    pub(crate) fn new(file: &File, path: &str, offset: u64, len: usize) -> Result<Mapping> {
        let page = page_size() as u64;
        let map_offset = offset / page * page;
        let map_len = (offset - map_offset) as usize + len;
        // SAFETY: a fresh read-only shared mapping of a valid descriptor.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                map_len.max(1),
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                map_offset as libc::off_t,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(IoError::os(path, "mmap", std::io::Error::last_os_error()));
        }
        Ok(Mapping {
            base: base.cast(),
            map_len,
            map_offset,
        })
    }

    /// The address of file offset `offset` (which must lie inside the mapping).
    pub(crate) fn address_of(&self, offset: u64) -> *const u8 {
        debug_assert!(offset >= self.map_offset);
        debug_assert!(((offset - self.map_offset) as usize) <= self.map_len);
        // SAFETY: inside the mapping, as asserted.
        unsafe { self.base.add((offset - self.map_offset) as usize) }
    }
}

impl Drop for Mapping {
    fn drop(&mut self) {
        // SAFETY: we own the mapping and unmap it once.
        unsafe {
            libc::munmap(self.base.cast(), self.map_len.max(1));
        }
    }
}

/// Rounds `addr..addr+len` out to whole pages: (page-aligned start, length).
pub(super) fn page_span(addr: usize, len: usize) -> (usize, usize) {
    let page = page_size();
    let start = addr / page * page;
    let end = (addr + len).div_ceil(page) * page;
    (start, end - start)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn maps_a_range_and_reads_the_file_bytes() {
        let mut f = tempfile::tempfile().unwrap();
        let data: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        f.write_all(&data).unwrap();
        let m = Mapping::new(&f, "tmp", 5000, 10_000).unwrap();
        // SAFETY: inside the mapping and the file.
        let got = unsafe { std::slice::from_raw_parts(m.address_of(5000), 10_000) };
        assert_eq!(got, &data[5000..15_000]);
    }

    #[test]
    fn page_span_rounds_out() {
        let p = page_size();
        assert_eq!(page_span(p + 1, 10), (p, p));
        assert_eq!(page_span(p, p), (p, p));
        assert_eq!(page_span(p - 1, 2), (0, 2 * p));
    }
}
