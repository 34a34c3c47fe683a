//! Reads of several ranges submitted at once, awaited together.

use std::sync::Arc;

use super::error::{IoError, Result};
use super::request::Request;

/// One piece of a multi-range read: `len` bytes of the file at
/// `file_offset`, landing in the buffer at `buffer_offset`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct RangeRead {
    /// Where the bytes are in the file.
    pub file_offset: u64,
    /// Where they land in the buffer.
    pub buffer_offset: usize,
    /// How many.
    pub len: usize,
}

/// Reads submitted by `FileHandle::submit_ranges`, not yet awaited.
/// Dropping it waits for them, so the memory is never written after.
#[derive(Debug)]
pub struct SubmittedReads {
    pub(crate) requests: Vec<Arc<Request>>,
    pub(crate) error: Option<IoError>,
}

impl SubmittedReads {
    /// Waits for every read; returns the bytes read or the first error.
    pub fn wait(mut self) -> Result<u64> {
        let mut first_err = self.error.take();
        let mut total = 0u64;
        for req in std::mem::take(&mut self.requests) {
            match req.wait() {
                Ok(n) => total += n as u64,
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(total),
        }
    }
}

impl Drop for SubmittedReads {
    fn drop(&mut self) {
        for req in self.requests.drain(..) {
            let _ = req.wait();
        }
    }
}
