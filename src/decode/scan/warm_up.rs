//! A decode's libraries opened beside the GPU's context: the first decode
//! of a process needs CUDA's context, NVRTC (its version keys the kernel
//! cache, even when the kernels come from disk) and nvCOMP (its first
//! group), each a large library to load. Neither library needs the
//! context, so they open on threads of their own while the decode's thread
//! makes it; whoever needs one later waits for that thread's outcome (both
//! are loaded once per process, and an error stays for the caller to see).
//!
//! An opening never outlives the call that started it: both libraries are
//! C++ whose constructors register exit handlers while they run, so a
//! process that exits during an opening runs those handlers under the
//! constructors (a double free, a segfault or a hang at exit, e.g. of a
//! command that fell back to the CPU for want of a GPU while NVRTC was
//! still opening). [`WarmUp`]'s drop waits.

use std::sync::Once;

/// Starts opening nvCOMP and NVRTC on threads of their own, once per
/// process, and returns at once with a guard: dropping it waits until both
/// have opened or failed (at once when they have). Where a thread cannot
/// start, the library opens later where it is first needed, as without
/// this.
///
/// Every decode calls it before it opens its GPU and drops the guard once
/// the GPU is open (or could not be); a caller that knows a decode will
/// follow (a command that reads a footer first) calls it earlier and keeps
/// the guard until it is done, so that the libraries open beside the GPU's
/// context and the footer read, and never while the process exits.
///
/// ```
/// // No GPU or library is needed: a library that cannot open is said by
/// // the decode that needs it.
/// let opening = gdscan::decode::scan::warm_up();
/// let again = gdscan::decode::scan::warm_up();
/// drop(again);
/// drop(opening); // both libraries have opened or failed by now
/// ```
pub fn warm_up() -> WarmUp {
    static SPAWN: Once = Once::new();
    SPAWN.call_once(|| {
        let _ = std::thread::Builder::new()
            .name("gdscan-open-nvcomp".to_string())
            .spawn(open_nvcomp);
        let _ = std::thread::Builder::new()
            .name("gdscan-open-nvrtc".to_string())
            .spawn(open_nvrtc);
    });
    WarmUp { _private: () }
}

/// The libraries' openings started by [`warm_up`]: dropping it waits for
/// their outcome, so that no library is left opening behind the caller.
#[must_use = "dropping it at once waits for the libraries: keep it while the GPU opens"]
#[derive(Debug)]
pub struct WarmUp {
    _private: (),
}

impl Drop for WarmUp {
    fn drop(&mut self) {
        // A guard exists only once the threads were started. Each library
        // is loaded once per process: these wait for the opening thread's
        // outcome (or open it here if its thread could not start).
        open_nvcomp();
        open_nvrtc();
    }
}

fn open_nvcomp() {
    let _ = crate::nvcomp::Nvcomp::load();
}

fn open_nvrtc() {
    let _ = crate::decode::kernels::nvrtc::nvrtc_info();
}
