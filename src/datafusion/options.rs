//! What a [`GdsTable`](super::GdsTable) is registered with.

use std::sync::Arc;

use crate::engine::Engine;
use crate::parquet::CoalesceOptions;
use crate::store::StoreOptions;

/// Options of a gdscan table.
#[derive(Debug, Clone)]
pub struct GdsTableOptions {
    /// Files of a folder that belong to the table: names ending with this.
    pub file_extension: String,
    /// How the reader merges DataFusion's byte ranges into engine requests.
    pub coalesce: CoalesceOptions,
    /// The engine that serves local reads (None: the process-wide one,
    /// with settings from the `KVIKIO_*` environment).
    pub engine: Option<Arc<Engine>>,
    /// How objects of remote stores (URLs) are read.
    pub store: StoreOptions,
    /// Whether each reader reads its next planned row group while
    /// DataFusion decodes the current one (on by default; off with
    /// `GDSCAN_READ_AHEAD=0`).
    pub read_ahead: bool,
}

impl Default for GdsTableOptions {
    fn default() -> Self {
        GdsTableOptions {
            file_extension: ".parquet".to_string(),
            coalesce: CoalesceOptions::default(),
            engine: None,
            store: StoreOptions::default(),
            read_ahead: std::env::var("GDSCAN_READ_AHEAD").map_or(true, |v| v != "0"),
        }
    }
}
