//! Loading libcufile at run time into a table of function pointers.
//!
//! cudarc's own loader does not try `libcufile.so.0`, the name that ldconfig
//! and the pip package `nvidia-cufile` provide (and that KvikIO opens), and it
//! panics when nothing loads. So gdscan opens the library itself with
//! libloading and reuses cudarc's `cufile::sys` types for the structures.
//! Status returns are read as plain integers ([`RawStatus`]), so an unknown
//! code from a newer library can never be an invalid enum value.

use std::ffi::{c_char, c_int, c_void};
use std::sync::OnceLock;

use cudarc::cufile::sys::{
    CUfileDescr_t, CUfileDrvProps_t, CUfileStatsLevel1_t, CUfileStatsLevel3_t,
};

/// Library names tried in order: the name ldconfig and the pip package
/// `nvidia-cufile` provide (and KvikIO opens), then the development name.
pub(crate) const LIBRARY_NAMES: [&str; 2] = ["libcufile.so.0", "libcufile.so"];

/// Environment variable naming a libcufile to load instead.
pub(crate) const LIBRARY_ENV: &str = "GDSCAN_CUFILE_LIBRARY";

/// `CUfileError_t` as two plain integers: the cuFile code and the CUDA code.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RawStatus {
    /// cuFile's code (0 is success, 5001.. are errors).
    pub err: i32,
    /// The CUDA driver's code when `err` is CU_FILE_CUDA_DRIVER_ERROR.
    pub cu_err: i32,
}

type StatusFn0 = unsafe extern "C" fn() -> RawStatus;

/// The cuFile entry points gdscan uses.
#[allow(missing_docs)]
pub struct Api {
    pub path: String,
    pub driver_open: StatusFn0,
    pub driver_close: StatusFn0,
    pub driver_get_properties: unsafe extern "C" fn(*mut CUfileDrvProps_t) -> RawStatus,
    pub get_version: Option<unsafe extern "C" fn(*mut c_int) -> RawStatus>,
    pub handle_register: unsafe extern "C" fn(*mut *mut c_void, *mut CUfileDescr_t) -> RawStatus,
    pub handle_deregister: unsafe extern "C" fn(*mut c_void),
    pub buf_register: unsafe extern "C" fn(*const c_void, usize, c_int) -> RawStatus,
    pub buf_deregister: unsafe extern "C" fn(*const c_void) -> RawStatus,
    pub read: unsafe extern "C" fn(*mut c_void, *mut c_void, usize, i64, i64) -> isize,
    pub write: unsafe extern "C" fn(*mut c_void, *const c_void, usize, i64, i64) -> isize,
    pub get_size_t: unsafe extern "C" fn(u32, *mut usize) -> RawStatus,
    pub get_bool: unsafe extern "C" fn(u32, *mut bool) -> RawStatus,
    pub get_string: unsafe extern "C" fn(u32, *mut c_char, c_int) -> RawStatus,
    pub set_size_t: unsafe extern "C" fn(u32, usize) -> RawStatus,
    pub set_bool: unsafe extern "C" fn(u32, bool) -> RawStatus,
    pub set_string: unsafe extern "C" fn(u32, *const c_char) -> RawStatus,
    pub get_min_max: unsafe extern "C" fn(u32, *mut usize, *mut usize) -> RawStatus,
    pub set_stats_level: unsafe extern "C" fn(c_int) -> RawStatus,
    pub get_stats_level: unsafe extern "C" fn(*mut c_int) -> RawStatus,
    pub stats_start: StatusFn0,
    pub stats_reset: StatusFn0,
    pub stats_stop: StatusFn0,
    pub get_stats_l1: unsafe extern "C" fn(*mut CUfileStatsLevel1_t) -> RawStatus,
    pub get_stats_l3: unsafe extern "C" fn(*mut CUfileStatsLevel3_t) -> RawStatus,
    _library: libloading::Library,
}

impl std::fmt::Debug for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Api")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

/// Candidate paths: the override first, then [`LIBRARY_NAMES`].
pub(crate) fn library_candidates() -> Vec<String> {
    let mut out = Vec::new();
    if let Ok(p) = std::env::var(LIBRARY_ENV) {
        if !p.is_empty() {
            out.push(p);
        }
    }
    out.extend(LIBRARY_NAMES.iter().map(|s| s.to_string()));
    out
}

/// The loaded API, or why it could not be loaded (cached).
pub fn api() -> Result<&'static Api, String> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Api, String> {
    let candidates = library_candidates();
    let mut errors = Vec::new();
    for name in &candidates {
        // SAFETY: loading libcufile runs its initialisers, which have no preconditions.
        match unsafe { libloading::Library::new(name) } {
            Ok(lib) => return bind(name, lib),
            Err(e) => {
                let detail = std::error::Error::source(&e)
                    .map(|s| s.to_string())
                    .unwrap_or_else(|| e.to_string());
                errors.push(detail)
            }
        }
    }
    Err(format!("libcufile not found (tried {})", errors.join("; ")))
}

fn bind(path: &str, lib: libloading::Library) -> Result<Api, String> {
    macro_rules! sym {
        ($name:literal) => {
            // SAFETY: the symbol's type is the one declared in cufile.h.
            // error-source: a load failure is kept once per process as text
            // (CuFileError is Clone + Eq), with every candidate tried.
            *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                .map_err(|e| format!("{path} lacks {}: {e}", $name))?
        };
    }
    macro_rules! optional {
        ($name:literal) => {
            // SAFETY: as above.
            unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                .ok()
                .map(|s| *s)
        };
    }
    let driver_close = optional!("cuFileDriverClose_v2").unwrap_or(sym!("cuFileDriverClose"));
    Ok(Api {
        path: path.to_string(),
        driver_open: sym!("cuFileDriverOpen"),
        driver_close,
        driver_get_properties: sym!("cuFileDriverGetProperties"),
        get_version: optional!("cuFileGetVersion"),
        handle_register: sym!("cuFileHandleRegister"),
        handle_deregister: sym!("cuFileHandleDeregister"),
        buf_register: sym!("cuFileBufRegister"),
        buf_deregister: sym!("cuFileBufDeregister"),
        read: sym!("cuFileRead"),
        write: sym!("cuFileWrite"),
        get_size_t: sym!("cuFileGetParameterSizeT"),
        get_bool: sym!("cuFileGetParameterBool"),
        get_string: sym!("cuFileGetParameterString"),
        set_size_t: sym!("cuFileSetParameterSizeT"),
        set_bool: sym!("cuFileSetParameterBool"),
        set_string: sym!("cuFileSetParameterString"),
        get_min_max: sym!("cuFileGetParameterMinMaxValue"),
        set_stats_level: sym!("cuFileSetStatsLevel"),
        get_stats_level: sym!("cuFileGetStatsLevel"),
        stats_start: sym!("cuFileStatsStart"),
        stats_reset: sym!("cuFileStatsReset"),
        stats_stop: sym!("cuFileStatsStop"),
        get_stats_l1: sym!("cuFileGetStatsL1"),
        get_stats_l3: sym!("cuFileGetStatsL3"),
        _library: lib,
    })
}
