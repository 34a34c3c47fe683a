//! What passes between the shared pipeline's driver and a decode's reader:
//! the driver's wake-up counter ([`Wake`]) and each decode's outbox of
//! finished groups ([`Outbox`]). No GPU here: the reader's side is
//! `shared_pipeline::SharedStream`, the driver's `shared_driver`.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use super::{DecodeError, DecodeReport};
use crate::decode::array::DeviceBatch;

/// Locks `m`, whatever a panicking holder left.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A counter the driver waits on: bumped by planners, readers and new
/// decodes.
#[derive(Debug, Default)]
pub(crate) struct Wake {
    generation: Mutex<u64>,
    changed: Condvar,
}

impl Wake {
    pub(crate) fn seen(&self) -> u64 {
        *lock(&self.generation)
    }

    pub(crate) fn bump(&self) {
        *lock(&self.generation) += 1;
        self.changed.notify_all();
    }

    /// Waits until the counter passes `seen`, at most `limit`.
    pub(crate) fn wait_past(&self, seen: u64, limit: Duration) {
        let guard = lock(&self.generation);
        let _ = self
            .changed
            .wait_timeout_while(guard, limit, |g| *g == seen)
            .map_err(PoisonError::into_inner);
    }
}

/// What the driver hands one decode's reader.
#[derive(Debug, Default)]
pub(crate) struct Outbox {
    pub(crate) state: Mutex<OutState>,
    pub(crate) ready: Condvar,
}

#[derive(Debug, Default)]
pub(crate) struct OutState {
    /// Finished groups not taken yet (a failure ends the list).
    pub(crate) groups: VecDeque<Result<Vec<DeviceBatch>, DecodeError>>,
    /// Groups taken by the reader (or kept no row) so far.
    pub(crate) taken: usize,
    /// Nothing more will come.
    pub(crate) ended: bool,
    /// The reader was dropped: nothing more is wanted.
    pub(crate) reader_gone: bool,
    /// The decode's report as of its last finished group.
    pub(crate) report: DecodeReport,
}

impl Outbox {
    /// Puts a finished group (or the decode's failure) in.
    pub(crate) fn put(&self, group: Result<Vec<DeviceBatch>, DecodeError>, report: &DecodeReport) {
        let mut st = lock(&self.state);
        st.report = report.clone();
        match group {
            // After the end nothing more is handed out.
            _ if st.ended => {}
            // Nothing to read, or nobody to read it: taken at once.
            Ok(batches) if batches.is_empty() || st.reader_gone => st.taken += 1,
            other => st.groups.push_back(other),
        }
        drop(st);
        self.ready.notify_all();
    }

    /// Ends the decode, with `failure` last when given.
    pub(crate) fn end(&self, failure: Option<DecodeError>) {
        let mut st = lock(&self.state);
        if let Some(e) = failure {
            st.groups.push_back(Err(e));
        }
        st.ended = true;
        drop(st);
        self.ready.notify_all();
    }
}
