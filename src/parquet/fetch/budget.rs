//! The bound on bytes in flight: a producer takes a permit per row group,
//! and the consumer's drop of the row group gives it back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

#[derive(Debug, Default)]
pub(super) struct Budget {
    used: Mutex<u64>,
    pub(super) freed: Condvar,
}

/// A share of the in-flight budget, returned on drop.
#[derive(Debug)]
pub struct Permit {
    budget: Arc<Budget>,
    bytes: u64,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut used = self.budget.used.lock().unwrap_or_else(|e| e.into_inner());
        *used -= self.bytes;
        self.budget.freed.notify_all();
    }
}

impl Budget {
    pub(super) fn try_acquire(self: &Arc<Self>, bytes: u64, max: u64) -> Option<Permit> {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        if *used > 0 && *used + bytes > max {
            return None;
        }
        *used += bytes;
        Some(Permit {
            budget: self.clone(),
            bytes,
        })
    }

    pub(super) fn acquire(
        self: &Arc<Self>,
        bytes: u64,
        max: u64,
        cancel: &AtomicBool,
    ) -> Option<Permit> {
        let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        while *used > 0 && *used + bytes > max {
            if cancel.load(Ordering::Relaxed) {
                return None;
            }
            used = self
                .freed
                .wait_timeout(used, std::time::Duration::from_millis(50))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        *used += bytes;
        Some(Permit {
            budget: self.clone(),
            bytes,
        })
    }
}
