//! How a GPU decode runs ([`DecodeOptions`]): plain data, with
//! [`DecodeOptions::from_env`] for the `GDSCAN_*` and `KVIKIO_*` variables.

use std::path::PathBuf;

use super::compressed_check::{CompressedCheck, DecompressPlace, GPU_CHECK_MAX_BYTES};
use crate::config::decode::{
    DecodeVars, DevicePoolMode, KernelConfig, LandingMode, PipelineMode, SnappyDecoder, StringWalks,
};
use crate::config::ConfigError;
use crate::cuda::Devices;
use crate::parquet::fetch::FetchOptions;
use crate::store::StoreOptions;

/// Streams a scan's row groups' kernels take in turn by default.
const STREAMS: usize = 8;

/// Check streams the groups take in turn by default.
const CHECK_STREAMS: usize = 4;

/// Threads that stage a group's row groups by default.
const STAGE_THREADS: usize = 4;
/// The default [`DecodeOptions::device_timeout`].
const DEVICE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// How a GPU decode runs. [`DecodeOptions::default`] reads nothing from
/// the environment; [`DecodeOptions::from_env`] applies the variables
/// documented in docs/settings.md.
///
/// ```
/// use gdscan::cuda::Devices;
/// use gdscan::decode::scan::DecodeOptions;
///
/// let options = DecodeOptions {
///     devices: "0,1".parse::<Devices>()?,
///     depth: 2,
///     ..DecodeOptions::default()
/// };
/// assert_eq!(options.devices, Devices::List(vec![0, 1]));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    /// The GPUs (CUDA ordinals): one decodes every row group; several
    /// share the row groups, spread by bytes. Device 0 by default.
    pub devices: Devices,
    /// The fetch underneath (bytes in flight, read-ahead).
    pub fetch: FetchOptions,
    /// Groups of row groups queued on the GPU at once (at least 1). A
    /// group's work is a chain (copy, check, nvCOMP, kernels), each link
    /// using a small part of the GPU, so several groups at once overlap: 4
    /// by default. Device memory in use grows with it.
    pub depth: usize,
    /// Bytes of row groups (as stored) decoded together: their compressed
    /// pages go to nvCOMP in one batch, which fills the GPU only with
    /// thousands of pages. The fetch's `max_bytes_in_flight` is raised,
    /// where it is smaller, to (`depth` + 2) × (`group_bytes` + the largest
    /// row group): the groups on the GPU, the one the decoder gathers and
    /// the one planned ahead.
    pub group_bytes: u64,
    /// Whether the first three groups are smaller (an eighth, a quarter and
    /// a half of `group_bytes`), so the GPU starts on the first after a
    /// small part of the fetch. On by default.
    pub ramp_up: bool,
    /// Whether the last groups are smaller (half of what remains once less
    /// than two groups do, down to an eighth of `group_bytes`), so that
    /// the scan's last batch comes sooner after the fetch's last byte. Off
    /// by default.
    pub ramp_down: bool,
    /// Store settings for remote locations.
    pub store: StoreOptions,
    /// Where every Snappy and LZ4 page is checked before nvCOMP
    /// decompresses it: nvCOMP's behaviour on corrupt input is undefined.
    pub check: CompressedCheck,
    /// With [`CompressedCheck::Gpu`], the longest stored Snappy page the
    /// GPU checks (longer ones are checked on the host):
    /// [`GPU_CHECK_MAX_BYTES`] by default.
    pub gpu_check_max: usize,
    /// Whether checked Snappy pages over 64 KiB are split into 64 KiB
    /// pieces for nvCOMP (each a job of its own). On by default.
    pub snappy_split: bool,
    /// What decompresses the Snappy pages the scan checked: nvCOMP (the
    /// default) or gdscan's own kernel, which finds the elements from the
    /// scan's bitmaps (`GDSCAN_SNAPPY_DECODER`).
    pub snappy_decoder: SnappyDecoder,
    /// Whether a group's checks and pieces kernels run on a stream of
    /// their own once the group's copies are done, rather than behind them
    /// on the upload stream. On by default.
    pub check_stream: bool,
    /// Check streams the groups take in turn (with `check_stream`), 1 to 8:
    /// 4 by default.
    pub check_streams: usize,
    /// How the row groups' string walks (the length prefixes of PLAIN byte
    /// arrays, in dictionaries and pages) run.
    pub string_walks: StringWalks,
    /// Values the kernels are compiled with (compiled once per distinct
    /// value).
    pub kernels: KernelConfig,
    /// Streams the row groups' kernels take in turn (uploads and nvCOMP
    /// have one each): 8 by default.
    pub streams: usize,
    /// Threads that stage a group's row groups at once (allocate their
    /// device memory, build their kernel tasks, queue their copies), 1 to
    /// 16; 1 stages on the decoder's thread. 4 by default.
    pub stage_threads: usize,
    /// Which device memory pool the scan allocates from.
    pub device_pool: DevicePoolMode,
    /// Where ZSTD pages are decompressed: the host, verified (the
    /// default), or nvCOMP, unverified ([`DecompressPlace`]).
    pub zstd: DecompressPlace,
    /// Where GZIP pages are decompressed (as `zstd`).
    pub gzip: DecompressPlace,
    /// Where the row groups land: device memory where the host needs no
    /// page body ([`LandingMode::Auto`], the default), or pinned host
    /// memory always.
    pub landing: LandingMode,
    /// The longest the decoder waits for the GPU to finish one row group
    /// (its copies, decompression and kernels, and the work queued ahead
    /// of it); past it the scan ends with `DecodeError::DeviceTimeout`.
    /// 10 s by default: SF 10 lineitem's row groups take a few
    /// milliseconds each, so only a GPU that never finishes (or one shared
    /// with far heavier work) reaches it.
    pub device_timeout: std::time::Duration,
    /// A file to write the scan's timeline to when it ends (GPU events per
    /// group and row group, the decoder's waits; JSON lines, see
    /// `benches/trace_summary.py`); none records nothing.
    pub trace: Option<PathBuf>,
    /// What the request's predicate does: [`FilterMode::Exact`] (the
    /// default) hands out exactly the rows it selects, evaluated on the
    /// GPU; [`FilterMode::PruneOnly`] only skips the row groups and pages
    /// whose statistics rule it out (a superset of the rows).
    pub filter: FilterMode,
    /// Whether a one-GPU decode runs its own pipeline (the default) or
    /// joins its device's shared one ([`PipelineMode::Shared`]: for many
    /// decodes at once, such as a query's partitions, where DataFusion's
    /// scans take it by default). A decode with a `trace` or several GPUs
    /// runs its own.
    pub pipeline: PipelineMode,
}

/// What a decode does with its request's predicate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FilterMode {
    /// Statistics prune what they can, then the GPU evaluates the
    /// predicate on the decoded rows and keeps exactly the rows where it
    /// is TRUE. The predicate's columns are decoded for it (and dropped
    /// after, when the projection does not name them); a predicate the
    /// GPU cannot evaluate fails the decode before any read.
    #[default]
    Exact,
    /// Statistics prune row groups and pages; the rows of what is kept are
    /// handed out unfiltered (a superset of the selected rows).
    PruneOnly,
    /// Late materialization: the predicate's columns of every row group
    /// are decoded and evaluated first; then only the payload pages
    /// holding a selected row are fetched, decompressed and decoded (the
    /// row groups without one not at all), and joined with the filter's
    /// columns. Pays where the selected rows cluster (a sorted or
    /// correlated column) beyond what statistics can see; costs a second
    /// pass where every page holds a selected row. One GPU pass per phase;
    /// phase 1's masks (a byte per row) are held on the host and its
    /// projected filter columns, compacted, on the device until phase 2
    /// hands out their row groups.
    Late,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            devices: Devices::default(),
            fetch: FetchOptions::default(),
            depth: 4,
            group_bytes: 128 << 20,
            ramp_up: true,
            ramp_down: false,
            store: StoreOptions::default(),
            check: CompressedCheck::default(),
            gpu_check_max: GPU_CHECK_MAX_BYTES,
            snappy_split: true,
            snappy_decoder: SnappyDecoder::Nvcomp,
            check_stream: true,
            check_streams: CHECK_STREAMS,
            string_walks: StringWalks::default(),
            kernels: KernelConfig::DEFAULT,
            streams: STREAMS,
            stage_threads: STAGE_THREADS,
            device_pool: DevicePoolMode::default(),
            device_timeout: DEVICE_TIMEOUT,
            zstd: DecompressPlace::Host,
            gzip: DecompressPlace::Host,
            landing: LandingMode::Auto,
            trace: None,
            filter: FilterMode::Exact,
            pipeline: PipelineMode::Own,
        }
    }
}

impl DecodeOptions {
    /// The defaults with every decoder and store variable of the process
    /// environment applied (docs/settings.md). A bad value is a
    /// [`ConfigError`] naming the variable.
    ///
    /// ```
    /// use gdscan::decode::scan::DecodeOptions;
    ///
    /// // In an environment where none is set (or each holds a valid value):
    /// let options = DecodeOptions::from_env()?;
    /// assert!(options.depth >= 1);
    /// # Ok::<(), gdscan::config::ConfigError>(())
    /// ```
    pub fn from_env() -> Result<DecodeOptions, ConfigError> {
        DecodeOptions::from_env_over(DecodeOptions::default())
    }

    /// `base` with the environment applied over it: what a variable sets
    /// replaces `base`'s value, the rest stays (the store's options come
    /// from the environment). For callers whose defaults differ from
    /// [`DecodeOptions::default`], such as DataFusion's partitions, which
    /// share their device's pipeline unless `GDSCAN_DECODE_PIPELINE` says
    /// otherwise.
    ///
    /// ```
    /// use gdscan::decode::scan::{DecodeOptions, PipelineMode};
    ///
    /// let base = DecodeOptions { pipeline: PipelineMode::Shared, ..DecodeOptions::default() };
    /// let options = DecodeOptions::from_env_over(base)?;
    /// if std::env::var_os("GDSCAN_DECODE_PIPELINE").is_none() {
    ///     assert_eq!(options.pipeline, PipelineMode::Shared);
    /// }
    /// # Ok::<(), gdscan::config::ConfigError>(())
    /// ```
    pub fn from_env_over(base: DecodeOptions) -> Result<DecodeOptions, ConfigError> {
        let mut options = DecodeOptions {
            store: StoreOptions::from_env()?,
            ..base
        };
        options.apply(&DecodeVars::from_env()?);
        Ok(options)
    }

    /// These options with what `vars` sets.
    pub fn apply(&mut self, vars: &DecodeVars) {
        let o = self;
        o.check = vars.check.unwrap_or(o.check);
        o.check_stream = vars.check_stream.unwrap_or(o.check_stream);
        o.check_streams = vars.check_streams.unwrap_or(o.check_streams);
        o.ramp_up = vars.ramp_up.unwrap_or(o.ramp_up);
        o.ramp_down = vars.ramp_down.unwrap_or(o.ramp_down);
        o.streams = vars.streams.unwrap_or(o.streams);
        o.stage_threads = vars.stage_threads.unwrap_or(o.stage_threads);
        if let Some(trace) = &vars.trace {
            o.trace = Some(trace.clone());
        }
        o.string_walks = vars.string_walks.unwrap_or(o.string_walks);
        o.kernels = vars.kernels(o.kernels);
        o.gpu_check_max = vars.gpu_check_max.unwrap_or(o.gpu_check_max);
        o.snappy_split = vars.snappy_split.unwrap_or(o.snappy_split);
        o.snappy_decoder = vars.snappy_decoder.unwrap_or(o.snappy_decoder);
        o.device_pool = vars.device_pool.unwrap_or(o.device_pool);
        o.device_timeout = vars.device_timeout.unwrap_or(o.device_timeout);
        o.zstd = vars.zstd.unwrap_or(o.zstd);
        o.gzip = vars.gzip.unwrap_or(o.gzip);
        o.landing = vars.landing.unwrap_or(o.landing);
        o.pipeline = vars.pipeline.unwrap_or(o.pipeline);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_reads_no_variable() {
        // A value from_env would refuse: the default must not look at it.
        std::env::set_var("GDSCAN_DECODE_STREAMS", "not a number");
        let options = DecodeOptions::default();
        std::env::remove_var("GDSCAN_DECODE_STREAMS");
        assert_eq!(options.streams, STREAMS);
    }

    #[test]
    fn apply_sets_what_is_set() {
        let vars = DecodeVars::from_lookup(|name| match name {
            "GDSCAN_DECODE_CHECK" => Some("off".to_string()),
            "GDSCAN_SCAN_STARTS" => Some("2".to_string()),
            _ => None,
        })
        .unwrap();
        let mut options = DecodeOptions::default();
        options.apply(&vars);
        assert_eq!(options.check, CompressedCheck::Off);
        assert_eq!(options.kernels.scan_starts, 2);
        assert_eq!(options.streams, STREAMS);
    }
}
