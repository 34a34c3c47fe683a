//! What a fetch reads (an object and its plan) and how it streams.

use std::sync::Arc;

use crate::parquet::plan::ScanPlan;
use crate::store::Source;

/// How the fetch streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FetchOptions {
    /// Bytes of row groups alive at once (read, queued or held by the
    /// consumer); a single larger row group still goes through alone.
    pub max_bytes_in_flight: u64,
    /// Most row groups whose reads are in flight at once (read ahead of
    /// the consumer).
    pub prefetch: usize,
    /// Bytes of reads the producer keeps in flight, as long as `prefetch`
    /// and `max_bytes_in_flight` allow: enough for every worker to have
    /// several tasks queued, so narrow projections (a few small chunks per
    /// row group) still keep reads and copies overlapped.
    pub read_ahead_bytes: u64,
}

impl Default for FetchOptions {
    fn default() -> Self {
        FetchOptions {
            max_bytes_in_flight: 2 << 30,
            prefetch: 64,
            read_ahead_bytes: 512 << 20,
        }
    }
}

/// One object of a fetch (a local file or a remote object): where to read
/// and what.
#[derive(Debug, Clone)]
pub struct SourceScan {
    /// The object.
    pub source: Arc<dyn Source>,
    /// Its plan.
    pub plan: Arc<ScanPlan>,
}

impl SourceScan {
    /// `plan` of `source`.
    pub fn new(source: Arc<dyn Source>, plan: Arc<ScanPlan>) -> Self {
        SourceScan { source, plan }
    }
}
