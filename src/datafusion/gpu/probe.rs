//! Whether this process has a usable GPU for [`TableDecode::Auto`]
//! (asked once per process): the CUDA driver loads, a device answers and
//! NVRTC (which compiles the decoder's kernels) loads. nvCOMP is needed
//! only for compressed pages; a decode that needs it and lacks it fails
//! before its first batch, and the scan then falls back to the host.
//!
//! [`TableDecode::Auto`]: crate::config::decode::TableDecode::Auto

use std::sync::OnceLock;

/// `Ok` when the process can decode on a GPU, else why not.
pub(crate) fn usable_gpu() -> Result<(), &'static str> {
    static PROBED: OnceLock<Result<(), String>> = OnceLock::new();
    PROBED
        .get_or_init(probe)
        .as_ref()
        .map(|_| ())
        .map_err(String::as_str)
}

fn probe() -> Result<(), String> {
    match crate::cuda::driver::device_count() {
        Ok(0) => return Err("no usable GPU: the driver reports no CUDA device".to_string()),
        Ok(_) => {}
        Err(e) => return Err(format!("no usable GPU: {e}")),
    }
    // error-source: the fallback's reason, shown in metrics and logs as text
    crate::decode::kernels::nvrtc::nvrtc_info()
        .map(|_| ())
        .map_err(|e| format!("no usable GPU: {e}"))
}
