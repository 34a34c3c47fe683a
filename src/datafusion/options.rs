//! What a [`GdsTable`](super::GdsTable) is registered with.

use std::sync::Arc;

use super::read_ahead::ReadAheadPolicy;
use crate::engine::Engine;
use crate::parquet::CoalesceOptions;
use crate::store::StoreOptions;

/// Options of a gdscan table.
#[derive(Debug, Clone)]
pub struct GdsTableOptions {
    /// Files of a folder that belong to the table: names ending with this.
    pub file_extension: String,
    /// How the reader merges DataFusion's byte ranges into requests to a
    /// remote store (each request costs a round trip: gaps up to 1 MiB are
    /// bridged).
    pub coalesce: CoalesceOptions,
    /// How the reader merges them into engine reads of a local file: only
    /// ranges that touch (a gap costs a copy of bytes nobody asked for, a
    /// separate read only a system call).
    pub local_coalesce: CoalesceOptions,
    /// The engine that serves local reads (None: the process-wide one,
    /// with settings from the `KVIKIO_*` environment).
    pub engine: Option<Arc<Engine>>,
    /// How objects of remote stores (URLs) are read.
    pub store: StoreOptions,
    /// When each reader reads its next planned row group while DataFusion
    /// decodes the current one (default: when it is not in the page cache;
    /// `GDSCAN_READ_AHEAD=0|uncached|always`).
    pub read_ahead: ReadAheadPolicy,
}

impl Default for GdsTableOptions {
    fn default() -> Self {
        GdsTableOptions {
            file_extension: ".parquet".to_string(),
            coalesce: CoalesceOptions::default(),
            local_coalesce: CoalesceOptions {
                max_gap: 0,
                ..CoalesceOptions::default()
            },
            engine: None,
            store: StoreOptions::default(),
            read_ahead: ReadAheadPolicy::from_env(),
        }
    }
}
