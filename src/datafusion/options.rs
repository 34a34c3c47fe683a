//! What a [`GdsTable`](super::GdsTable) is registered with.

use std::sync::Arc;

use super::read_ahead::ReadAheadPolicy;
pub use crate::config::decode::TableDecode;
use crate::config::ConfigError;
use crate::cuda::Devices;
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
    /// Task size of the engine's reads of local files (None: the engine's
    /// own). [`TABLE_TASK_SIZE`] by default; [`GdsTableOptions::from_env`]
    /// leaves it None when `KVIKIO_TASK_SIZE` is set.
    pub task_size: Option<usize>,
    /// Where pages are decoded: the host (the default), gdscan's GPU
    /// decoder, or the GPU when one is usable (`GDSCAN_DATAFUSION_DECODE`,
    /// `gdscan sql --decode`). Files the GPU path cannot take are decoded
    /// on the host (docs/datafusion.md).
    pub decode: TableDecode,
    /// GPU decodes the process runs at once per device, over every table
    /// and query ([`GPU_SCANS`] by default; `GDSCAN_DATAFUSION_GPU_SCANS`).
    /// Fixed for a device by the first scan that decodes on it.
    pub gpu_scans: usize,
    /// Bytes of pinned host memory the GPU path's batches may hold at once
    /// per device ([`PINNED_COPY_BACK`] by default;
    /// `GDSCAN_DATAFUSION_PINNED_COPY_BACK`, `0` for none): a batch is
    /// copied back straight into pinned memory that its arrays then point
    /// into while the pinned bytes out stay under this, else through
    /// pinned staging into ordinary memory.
    pub pinned_copy_back: usize,
    /// The GPUs the GPU path decodes on (`GDSCAN_DATAFUSION_DEVICES`: `0`
    /// by default, a list such as `0,1`, or `all`): partition `p` decodes
    /// on the `p mod n`-th of the `n` listed, so a query's partitions
    /// spread over them.
    pub devices: Devices,
}

/// The default [`GdsTableOptions::pinned_copy_back`]: 8 GiB per device.
pub const PINNED_COPY_BACK: usize = 8 << 30;

/// The default [`GdsTableOptions::gpu_scans`]: sixteen decodes per GPU, so
/// that DataFusion's partitions (one per core by default) decode, copy back
/// and feed their operators side by side: a decode holds its slot while its
/// partition's consumer is busy, so with fewer slots than busy partitions
/// the others wait (BENCHMARKS.md measures both).
pub const GPU_SCANS: usize = 16;

/// The default task size of a table's local reads: 16 MiB, so that most
/// column chunks are read in one system call. DataFusion's partitions
/// already keep many reads in flight; cutting each chunk into the engine's
/// 4 MiB tasks as well made cold scans slower on the H200 (TPC-H SF 10 cold,
/// six iterations: Q17 0.89 → 1.13, Q6 1.89 → 2.15, Q18 1.01 → 1.08 against
/// DataFusion's own reader; BENCHMARKS.md).
pub const TABLE_TASK_SIZE: usize = 16 << 20;

impl GdsTableOptions {
    /// The defaults with the environment's variables applied: the store's
    /// (`GDSCAN_STORE_*`), `GDSCAN_READ_AHEAD`, `GDSCAN_DATAFUSION_DECODE`,
    /// `GDSCAN_DATAFUSION_GPU_SCANS`, `GDSCAN_DATAFUSION_PINNED_COPY_BACK`,
    /// `GDSCAN_DATAFUSION_DEVICES`, and no task size of the
    /// table's own when `KVIKIO_TASK_SIZE` is set (the engine's applies).
    ///
    /// ```
    /// use gdscan::datafusion::GdsTableOptions;
    ///
    /// let options = GdsTableOptions::from_env()?;
    /// assert_eq!(options.file_extension, ".parquet");
    /// # Ok::<(), gdscan::config::ConfigError>(())
    /// ```
    pub fn from_env() -> Result<GdsTableOptions, ConfigError> {
        let vars = crate::config::decode::TableVars::from_env()?;
        let devices = match &vars.devices {
            None => Devices::default(),
            Some(s) => s.parse::<Devices>().map_err(|e| ConfigError::Invalid {
                name: "GDSCAN_DATAFUSION_DEVICES".to_string(),
                value: s.clone(),
                reason: e.to_string(),
            })?,
        };
        Ok(GdsTableOptions {
            store: StoreOptions::from_env()?,
            read_ahead: vars.read_ahead.unwrap_or_default(),
            task_size: default_task_size(vars.engine_task_size_set),
            decode: vars.decode.unwrap_or_default(),
            gpu_scans: vars.gpu_scans.unwrap_or(GPU_SCANS),
            pinned_copy_back: vars.pinned_copy_back.unwrap_or(PINNED_COPY_BACK),
            devices,
            ..GdsTableOptions::default()
        })
    }

    /// The task size a table's local reads take by default when
    /// `KVIKIO_TASK_SIZE` is (`true`) or is not set.
    pub fn default_task_size(engine_task_size_set: bool) -> Option<usize> {
        default_task_size(engine_task_size_set)
    }
}

fn default_task_size(engine_task_size_set: bool) -> Option<usize> {
    (!engine_task_size_set).then_some(TABLE_TASK_SIZE)
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
            read_ahead: ReadAheadPolicy::default(),
            task_size: Some(TABLE_TASK_SIZE),
            decode: TableDecode::Cpu,
            gpu_scans: GPU_SCANS,
            pinned_copy_back: PINNED_COPY_BACK,
            devices: Devices::default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_read_in_16_mib_tasks_unless_kvikio_task_size_is_set() {
        assert_eq!(default_task_size(false), Some(16 << 20));
        assert_eq!(default_task_size(true), None);
    }
}
