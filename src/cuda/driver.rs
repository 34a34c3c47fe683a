//! Loading and initialising the CUDA driver, and turning its status codes into errors.

use std::sync::OnceLock;

use cudarc::driver::sys;

use super::error::{CudaError, Result};

static INIT: OnceLock<std::result::Result<(), String>> = OnceLock::new();

/// Makes sure libcuda is present and `cuInit` succeeded; the answer is cached.
///
/// Never panics: a missing library or a machine without a GPU is an
/// [`CudaError::Unavailable`] that says which.
pub fn ensure() -> Result<()> {
    INIT.get_or_init(|| {
        // SAFETY: only probes whether the shared library can be opened.
        if !unsafe { sys::is_culib_present() } {
            return Err("libcuda (the NVIDIA driver library) was not found".to_string());
        }
        // SAFETY: the library is present, so cudarc's loader will not panic.
        let status = unsafe { sys::cuInit(0) };
        match status {
            sys::CUresult::CUDA_SUCCESS => Ok(()),
            sys::CUresult::CUDA_ERROR_NO_DEVICE => {
                Err("no CUDA-capable GPU (cuInit: CUDA_ERROR_NO_DEVICE)".to_string())
            }
            other => Err(format!(
                "cuInit failed: {} ({})",
                error_name(other),
                other as i32
            )),
        }
    })
    .clone()
    .map_err(CudaError::Unavailable)
}

/// The variable that sets how many hardware work queues a CUDA context
/// gets (8 when unset).
pub(crate) const MAX_CONNECTIONS_VAR: &str = "CUDA_DEVICE_MAX_CONNECTIONS";

/// The number of hardware work queues gdscan asks for: the decoder runs
/// 10 streams per GPU (8 for row groups, one for nvCOMP, one for
/// uploads), and with the driver's 8 queues some share one, so work in
/// one waits behind unrelated work in another (measured on the H200, SF 10
/// lineitem, all columns: 0.283 s with 8 queues, 0.190 s with 32).
pub(crate) const MAX_CONNECTIONS: &str = "32";

/// Sets `CUDA_DEVICE_MAX_CONNECTIONS` to `MAX_CONNECTIONS` (32) unless the
/// user has set it. The driver reads it when a context is created, so this
/// only helps before the process's first CUDA call; and since changing the
/// environment races with other threads reading it, call it at the start
/// of `main`, before any thread starts (the `gdscan` binary does).
/// Returns the value in effect.
///
/// ```
/// let value = gdscan::cuda::driver::request_hardware_queues();
/// assert_eq!(std::env::var("CUDA_DEVICE_MAX_CONNECTIONS").unwrap(), value);
/// ```
pub fn request_hardware_queues() -> String {
    match std::env::var(MAX_CONNECTIONS_VAR) {
        Ok(v) => v,
        Err(_) => {
            std::env::set_var(MAX_CONNECTIONS_VAR, MAX_CONNECTIONS);
            MAX_CONNECTIONS.to_string()
        }
    }
}

/// Whether the driver loads and at least one GPU answers.
pub fn is_available() -> bool {
    ensure().is_ok() && device_count().map(|n| n > 0).unwrap_or(false)
}

/// Number of CUDA devices.
pub fn device_count() -> Result<usize> {
    ensure()?;
    let mut count = 0;
    // SAFETY: the driver is initialised; `count` is a valid out pointer.
    check("cuDeviceGetCount", unsafe {
        sys::cuDeviceGetCount(&mut count)
    })?;
    Ok(count.max(0) as usize)
}

/// The driver's CUDA version as (major, minor), e.g. (13, 0).
pub fn driver_version() -> Result<(i32, i32)> {
    ensure()?;
    let mut version = 0;
    // SAFETY: the driver is initialised; `version` is a valid out pointer.
    check("cuDriverGetVersion", unsafe {
        sys::cuDriverGetVersion(&mut version)
    })?;
    Ok((version / 1000, (version % 1000) / 10))
}

/// The symbolic name of a status code, e.g. `CUDA_ERROR_OUT_OF_MEMORY`.
pub(crate) fn error_name(status: sys::CUresult) -> String {
    format!("{status:?}")
}

/// Converts a driver status into `Ok` or an [`CudaError::Call`] naming the call.
pub fn check(call: &'static str, status: sys::CUresult) -> Result<()> {
    if status == sys::CUresult::CUDA_SUCCESS {
        Ok(())
    } else {
        Err(CudaError::Call {
            call,
            name: error_name(status),
            code: status as i32,
        })
    }
}
