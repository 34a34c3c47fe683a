//! Stand-ins for device memory's owners in CPU tests (here and in
//! `decode::ffi`).

use std::ffi::c_void;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::ReadyEvent;

/// Counts drops of fake memory and events.
#[derive(Debug, Default)]
pub(crate) struct Drops(pub(crate) AtomicUsize);

impl Drops {
    pub(crate) fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// A "CUevent" whose handle is a made-up pointer.
#[derive(Debug)]
pub(crate) struct FakeEvent {
    pub(crate) handle: usize,
    pub(crate) drops: Arc<Drops>,
}

impl FakeEvent {
    pub(crate) fn new() -> FakeEvent {
        FakeEvent {
            handle: 0xe7e7_0000,
            drops: Arc::default(),
        }
    }
}

impl Drop for FakeEvent {
    fn drop(&mut self) {
        self.drops.0.fetch_add(1, Ordering::SeqCst);
    }
}

// SAFETY: never waited on by the driver in these tests.
unsafe impl ReadyEvent for FakeEvent {
    fn handle(&self) -> *mut c_void {
        std::ptr::with_exposed_provenance_mut(self.handle)
    }
    fn wait(&self) -> super::Result<()> {
        Ok(())
    }
}
