//! The process-wide limit on GPU decodes at once per device.
//!
//! Each GPU decode starts its own pipeline (streams, a device pool of up
//! to `depth` groups of `group_bytes`, pinned staging): DataFusion's
//! partitions each starting one would oversubscribe the device. A
//! partition takes a slot of its device before it starts its decode and
//! gives it back when the decode ends (or is dropped); the others wait.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, OnceLock, PoisonError};

/// The slots of one device (a counting semaphore).
#[derive(Debug)]
pub(crate) struct GpuSlots {
    free: Mutex<usize>,
    freed: Condvar,
}

/// A slot held: given back when dropped.
#[derive(Debug)]
pub(crate) struct SlotGuard {
    slots: Arc<GpuSlots>,
}

impl GpuSlots {
    fn new(size: usize) -> Self {
        GpuSlots {
            free: Mutex::new(size.max(1)),
            freed: Condvar::new(),
        }
    }

    /// The slots of the devices named `devices` (the decode options'
    /// device list as text), made with `size` slots on first use.
    pub(crate) fn of(devices: &str, size: usize) -> Arc<GpuSlots> {
        static ALL: OnceLock<Mutex<HashMap<String, Arc<GpuSlots>>>> = OnceLock::new();
        let mut all = ALL
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        all.entry(devices.to_string())
            .or_insert_with(|| Arc::new(GpuSlots::new(size)))
            .clone()
    }

    /// Waits for a free slot and takes it.
    pub(crate) fn acquire(self: &Arc<Self>) -> SlotGuard {
        let mut free = self.free.lock().unwrap_or_else(PoisonError::into_inner);
        while *free == 0 {
            free = self
                .freed
                .wait(free)
                .unwrap_or_else(PoisonError::into_inner);
        }
        *free -= 1;
        SlotGuard {
            slots: self.clone(),
        }
    }
}

impl Drop for SlotGuard {
    fn drop(&mut self) {
        let mut free = self
            .slots
            .free
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        *free += 1;
        self.slots.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    use super::*;

    #[test]
    fn no_more_than_size_holders_at_once() {
        let slots = Arc::new(GpuSlots::new(2));
        let inside = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let threads: Vec<_> = (0..6)
            .map(|_| {
                let (slots, inside, most) = (slots.clone(), inside.clone(), most.clone());
                std::thread::spawn(move || {
                    let _slot = slots.acquire();
                    let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(20));
                    inside.fetch_sub(1, Ordering::SeqCst);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(most.load(Ordering::SeqCst), 2);
        assert_eq!(*slots.free.lock().unwrap(), 2);
    }

    #[test]
    fn one_set_per_device_list_sized_by_its_first_user() {
        let a = GpuSlots::of("test-slots-7", 3);
        let b = GpuSlots::of("test-slots-7", 9);
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(*b.free.lock().unwrap(), 3);
        assert_eq!(*GpuSlots::of("test-slots-8", 0).free.lock().unwrap(), 1);
    }
}
