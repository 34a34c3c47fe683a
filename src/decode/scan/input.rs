//! One file of a decode ([`DecodeInput`]).

use std::sync::Arc;

use parquet::file::metadata::ParquetMetaData;

use crate::parquet::ScanPlan;
use crate::store::Source;

/// One file of a decode: where, its metadata and its plan.
#[derive(Debug, Clone)]
pub struct DecodeInput {
    /// The object (local file or remote).
    pub source: Arc<dyn Source>,
    /// Its metadata (with the page index when the plan prunes pages).
    pub metadata: Arc<ParquetMetaData>,
    /// What to read.
    pub plan: Arc<ScanPlan>,
}
