//! What a group's row groups share once the group is launched: nvCOMP's
//! results and the buffers of its calls ([`GroupShared`]), and the event
//! guard that keeps buffers until the GPU is done with them
//! ([`SyncOnDrop`]).

use std::sync::Arc;

use crate::cuda::{Event, PooledDeviceBuffer, PooledPinnedBuffer};
use crate::decode::kernels::check::snappy_check_error;
use crate::decode::kernels::snappy_scan::{scan_result, SCAN_RESULT_WORDS};
use crate::decode::page::validate::CompressedError;

/// Waits for an event when dropped, unless it was already waited for: the
/// buffers of work that may still be running go back to their pools only
/// after it (an error path drops queued work without finishing it).
pub(crate) struct SyncOnDrop {
    event: Arc<Event>,
    waited: bool,
}

impl SyncOnDrop {
    pub(crate) fn new(event: Arc<Event>) -> SyncOnDrop {
        SyncOnDrop {
            event,
            waited: false,
        }
    }

    /// The event.
    pub(crate) fn event(&self) -> &Arc<Event> {
        &self.event
    }

    /// Blocks until the event has completed, for at most `limit`: false
    /// when `limit` passed first (dropping would then wait again: an
    /// abandoned row group is leaked instead, `InFlight::finish`).
    pub(crate) fn wait_for(
        &mut self,
        limit: std::time::Duration,
    ) -> Result<bool, crate::cuda::CudaError> {
        self.waited = self.event.wait_for(limit)?;
        Ok(self.waited)
    }
}

impl Drop for SyncOnDrop {
    fn drop(&mut self) {
        if !self.waited {
            // Nothing to report to: the error that dropped the work is the
            // one the caller sees.
            let _ = self.event.wait();
        }
    }
}

/// What the row groups of a group share: nvCOMP's results, and the buffers
/// of its calls, kept until the last row group of the group is finished.
#[derive(Default)]
pub(crate) struct GroupShared {
    /// Declared first: dropped (waited for) before the buffers.
    pub(super) _done: Option<SyncOnDrop>,
    /// Actual sizes (8 bytes per job), then statuses (4 bytes per job),
    /// then the Snappy check's results (16 bytes per job it checked), then
    /// the Snappy scan's (per page it scanned).
    pub(super) results: Option<PooledPinnedBuffer>,
    pub(super) statuses_at: usize,
    pub(super) checks_at: usize,
    /// Jobs checked by `gds_check_snappy`: the first ones (Snappy comes
    /// first, its whole pages before any pieces).
    pub(super) checked: usize,
    pub(super) scan_at: usize,
    /// Pages the Snappy scan checked.
    pub(super) scanned: usize,
    pub(super) _up: Option<PooledPinnedBuffer>,
    pub(super) _meta: Option<PooledDeviceBuffer>,
    pub(super) _temps: Vec<PooledDeviceBuffer>,
    pub(super) _uploaded: Option<Arc<Event>>,
    /// The group's copies, which the check stream waits for (when the
    /// checks run there).
    pub(super) _copied: Option<Event>,
}

impl GroupShared {
    /// nvCOMP's (status, actual size) of job `k` of the group; call only
    /// after a row group's event that follows the group's decompression.
    pub(crate) fn result(&self, k: usize) -> (i32, usize) {
        let Some(results) = &self.results else {
            return (0, 0);
        };
        let s = &results[self.statuses_at + 4 * k..self.statuses_at + 4 * k + 4];
        let a = &results[8 * k..8 * k + 8];
        (
            i32::from_le_bytes(s.try_into().expect("4 bytes")),
            u64::from_le_bytes(a.try_into().expect("8 bytes")) as usize,
        )
    }
}

impl GroupShared {
    /// The Snappy check's verdict on job `k` (None when it was not checked
    /// on the GPU or is sound); same conditions as [`GroupShared::result`].
    pub(crate) fn check_error(&self, k: usize, size: usize) -> Option<CompressedError> {
        let results = self.results.as_ref()?;
        if k >= self.checked {
            return None;
        }
        let at = self.checks_at + 16 * k;
        let word = |i: usize| {
            u32::from_le_bytes(
                results[at + 4 * i..at + 4 * i + 4]
                    .try_into()
                    .expect("4 bytes"),
            )
        };
        snappy_check_error([word(0), word(1), word(2), word(3)], size)
    }

    /// The Snappy scan's verdict on its page `p` (the fault, as the host
    /// check reports it, and whether the page was split); same conditions
    /// as [`GroupShared::result`].
    pub(crate) fn scan_result(&self, p: usize, size: usize) -> (Option<CompressedError>, bool) {
        let Some(results) = self.results.as_ref().filter(|_| p < self.scanned) else {
            return (None, false);
        };
        let at = self.scan_at + 4 * SCAN_RESULT_WORDS * p;
        let words: Vec<u32> = results[at..at + 4 * SCAN_RESULT_WORDS]
            .chunks_exact(4)
            .map(|w| u32::from_le_bytes(w.try_into().expect("4 bytes")))
            .collect();
        scan_result(&words, size)
    }
}
