//! One shared value per device ordinal for the whole process (the pools
//! every scan of a device shares), made on first use.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::Device;

/// A process-wide map from device ordinal to one shared `T`.
pub(crate) struct PerDevice<T>(OnceLock<Mutex<HashMap<usize, Arc<T>>>>);

impl<T> PerDevice<T> {
    /// An empty map (for a `static`).
    pub(crate) const fn new() -> Self {
        PerDevice(OnceLock::new())
    }

    fn map(&self) -> MutexGuard<'_, HashMap<usize, Arc<T>>> {
        // A panic while the map was held leaves it whole: keep using it.
        self.0
            .get_or_init(|| Mutex::new(HashMap::new()))
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// `device`'s value, made by `make` the first time.
    pub(crate) fn get_or_make(&self, device: Device, make: impl FnOnce() -> Arc<T>) -> Arc<T> {
        self.map()
            .entry(device.ordinal())
            .or_insert_with(make)
            .clone()
    }

    /// Every value made so far.
    pub(crate) fn all(&self) -> Vec<Arc<T>> {
        self.map().values().cloned().collect()
    }
}
