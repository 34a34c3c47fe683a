//! A decode's libraries opened beside the GPU's context: the first decode
//! of a process needs CUDA's context, NVRTC (its version keys the kernel
//! cache, even when the kernels come from disk) and nvCOMP (its first
//! group), each a large library to load. Neither library needs the
//! context, so they open on threads of their own while the decode's thread
//! makes it; whoever needs one later waits for that thread's outcome (both
//! are loaded once per process, and an error stays for the caller to see).

use std::sync::Once;

/// Starts opening nvCOMP and NVRTC on threads of their own, once per
/// process; returns at once. Where a thread cannot start, the library
/// opens later where it is first needed, as without this.
///
/// Every decode calls it before it opens its GPU; a caller that knows a
/// decode will follow (a command that reads a footer first) calls it
/// earlier, so that the libraries open beside the GPU's context and the
/// footer read. Calling it again does nothing.
///
/// ```
/// // No GPU or library is needed: a library that cannot open is said by
/// // the decode that needs it.
/// gdscan::decode::scan::warm_up();
/// gdscan::decode::scan::warm_up();
/// ```
pub fn warm_up() {
    static STARTED: Once = Once::new();
    STARTED.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("gdscan-open-nvcomp".to_string())
            .spawn(|| {
                let _ = crate::nvcomp::Nvcomp::load();
            });
        let _ = std::thread::Builder::new()
            .name("gdscan-open-nvrtc".to_string())
            .spawn(|| {
                let _ = crate::decode::kernels::nvrtc::nvrtc_info();
            });
    });
}
