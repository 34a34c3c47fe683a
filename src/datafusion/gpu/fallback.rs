//! Why a file was decoded on the host instead of the GPU, said once per
//! process and reason (a `tracing` warning: `gdscan sql` prints it on
//! standard error).

use std::collections::HashSet;
use std::sync::{Mutex, OnceLock, PoisonError};

/// Logs `reason` for `file` unless the same reason was logged before.
pub(crate) fn log_once(file: &str, reason: &str) {
    static SEEN: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    let first = SEEN
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(reason.to_string());
    if first {
        tracing::warn!("gdscan: {file}: decoded on the CPU instead of the GPU: {reason}");
    }
}
