//! A file registered with cuFile (`cuFileHandleRegister` on an O_DIRECT descriptor).

use std::ffi::c_void;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use cudarc::cufile::sys::{CUfileDescr_t, CUfileDescr_t__bindgen_ty_1, CUfileFileHandleType};

use super::library::{api, Api};
use super::status::describe;

/// A registered file; deregistered on drop.
#[derive(Debug)]
pub struct CuFileHandle {
    raw: *mut c_void,
    api: &'static Api,
    _file: File,
}

// SAFETY: cuFile handles may be used from several threads at once (cuFile's
// documented thread-safety for cuFileRead/Write on one handle).
unsafe impl Send for CuFileHandle {}
// SAFETY: as above.
unsafe impl Sync for CuFileHandle {}

impl CuFileHandle {
    /// Opens `path` with O_DIRECT and registers it. The error is the reason,
    /// in words, with cuFile's code where there is one.
    pub fn register(path: &Path, read: bool, write: bool) -> Result<CuFileHandle, String> {
        let api = api()?;
        let file = OpenOptions::new()
            .read(read)
            .write(write)
            .custom_flags(libc::O_DIRECT)
            .open(path)
            .map_err(|e| {
                if e.raw_os_error() == Some(libc::EINVAL) {
                    "O_DIRECT refused by the file system".to_string()
                } else {
                    format!("cannot open with O_DIRECT: {e}")
                }
            })?;
        let mut descr = CUfileDescr_t {
            type_: CUfileFileHandleType::CU_FILE_HANDLE_TYPE_OPAQUE_FD,
            handle: CUfileDescr_t__bindgen_ty_1 {
                fd: file.as_raw_fd(),
            },
            fs_ops: std::ptr::null(),
        };
        let mut raw = std::ptr::null_mut();
        // SAFETY: valid descriptor and out pointer; the fd outlives the handle.
        let status = unsafe { (api.handle_register)(&mut raw, &mut descr) };
        if status.err != 0 {
            return Err(format!("cuFileHandleRegister failed: {}", describe(status)));
        }
        Ok(CuFileHandle {
            raw,
            api,
            _file: file,
        })
    }

    /// Reads `size` bytes at `file_offset` into device memory at
    /// `base + base_offset`. Returns cuFile's raw result (bytes or a negative code).
    ///
    /// # Safety
    /// `base + base_offset .. + size` must be device memory owned by the caller.
    pub unsafe fn read_raw(
        &self,
        base: u64,
        size: usize,
        file_offset: u64,
        base_offset: usize,
    ) -> isize {
        (self.api.read)(
            self.raw,
            base as *mut c_void,
            size,
            file_offset as i64,
            base_offset as i64,
        )
    }

    /// Writes `size` bytes from device memory at `base + base_offset` to
    /// `file_offset`. Returns cuFile's raw result.
    ///
    /// # Safety
    /// As for [`CuFileHandle::read_raw`].
    pub unsafe fn write_raw(
        &self,
        base: u64,
        size: usize,
        file_offset: u64,
        base_offset: usize,
    ) -> isize {
        (self.api.write)(
            self.raw,
            base as *const c_void,
            size,
            file_offset as i64,
            base_offset as i64,
        )
    }
}

impl Drop for CuFileHandle {
    fn drop(&mut self) {
        // SAFETY: registered by us, deregistered once.
        unsafe { (self.api.handle_deregister)(self.raw) }
    }
}
