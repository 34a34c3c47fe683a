//! The GPU decoder's variables (`GDSCAN_DECODE_*`, `GDSCAN_STRING_*`, ...)
//! and the setting types they name.
//!
//! [`DecodeVars::from_lookup`] parses every variable strictly: a value
//! outside a variable's choices is a [`ConfigError::Invalid`] naming it,
//! never a silent fallback. `decode::scan::DecodeOptions::from_env` applies
//! what is set; nothing in the decoder reads the environment itself.
//!
//! ```
//! use gdscan::config::decode::{CompressedCheck, DecodeVars};
//!
//! let vars = DecodeVars::from_lookup(|name| {
//!     (name == "GDSCAN_DECODE_CHECK").then(|| "host".to_string())
//! })?;
//! assert_eq!(vars.check, Some(CompressedCheck::Host));
//! assert!(DecodeVars::from_lookup(|_| Some("nonsense".to_string())).is_err());
//! # Ok::<(), gdscan::config::ConfigError>(())
//! ```

use std::path::PathBuf;

use super::{invalid, ConfigError};

/// Where Snappy and LZ4 pages are checked before nvCOMP sees them (a walk
/// over their elements proving that every read and write of the
/// decompressor stays inside the page): `GDSCAN_DECODE_CHECK`.
///
/// The host's check costs CPU time per byte; the GPU's warp check lasts as
/// long as the longest page it is given; the scan spreads the GPU's walk
/// over every part of every page.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CompressedCheck {
    /// Every Snappy and LZ4 page on the host's worker threads (rayon),
    /// before the upload.
    Host,
    /// Snappy pages up to the GPU check limit on the GPU after the upload,
    /// a warp per page, before nvCOMP; longer ones and LZ4 on the host.
    Gpu,
    /// Every Snappy page on the GPU by the Snappy scan (a thread per 2 KiB
    /// of each stream, speculative walks joined), which also finds the
    /// 64 KiB pieces nvCOMP then takes as jobs of their own; LZ4 on the
    /// host. The default.
    #[default]
    Scan,
    /// No check: only for input you trust.
    Off,
}

/// Where ZSTD and GZIP pages are decompressed: `GDSCAN_ZSTD`,
/// `GDSCAN_GZIP`.
///
/// nvCOMP does not verify these streams: a corrupt Zstd page can come out
/// of it as other bytes than libzstd makes of it (or its kernel can write
/// outside its shared memory and never end, seen under compute-sanitizer),
/// and its Gzip decoder skips the member's CRC-32. So by default the
/// host's worker threads decompress them with the reference decoders
/// (libzstd, flate2), which refuse what they cannot verify, and the
/// decompressed pages go up with the row group.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum DecompressPlace {
    /// The host, verified. The default.
    #[default]
    Host,
    /// nvCOMP on the GPU, unverified: faster, for input you trust.
    Gpu,
}

/// What decompresses the Snappy pages the scan checked
/// (`CompressedCheck::Scan`): `GDSCAN_SNAPPY_DECODER`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SnappyDecoder {
    /// nvCOMP's batched call, one job per 64 KiB piece. The default.
    #[default]
    Nvcomp,
    /// gdscan's own kernel (`gds_snappy_decode`): a warp per piece, the
    /// elements found from the scan's bitmaps rather than parsed again.
    /// Pages the scan did not check still go to nvCOMP.
    Gdscan,
}

impl std::str::FromStr for CompressedCheck {
    type Err = String;

    /// `host`, `gpu`, `scan` or `off`, in any letter case.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.to_ascii_lowercase().as_str() {
            "host" => Ok(CompressedCheck::Host),
            "gpu" => Ok(CompressedCheck::Gpu),
            "scan" => Ok(CompressedCheck::Scan),
            "off" => Ok(CompressedCheck::Off),
            other => Err(format!("{other}: expected host, gpu, scan or off")),
        }
    }
}

/// How a row group's string walks (the prefixes of PLAIN byte arrays in
/// its byte-array dictionaries and pages) run: `GDSCAN_STRING_WALKS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StringWalks {
    /// A block per dictionary, then (in a second launch) a block per page:
    /// `gds_dict_views`, `gds_byte_array_walk` (`apart`).
    Apart,
    /// Both in one launch, a block per dictionary and per page
    /// (`gds_string_walks`; `together`): one launch instead of two.
    Together,
    /// A block per 16 KiB chunk of every dictionary and page, joined by a
    /// thread per item (`gds_spread_spec`, `gds_spread_join`,
    /// `gds_spread_emit`; `spread`, the default): no block walks a whole
    /// long page or dictionary.
    #[default]
    Spread,
}

/// Which device memory pool a scan allocates from: `GDSCAN_DEVICE_POOL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DevicePoolMode {
    /// The device's pool, shared by every scan on it (the default).
    #[default]
    Shared,
    /// A pool of the scan's own, freed when the scan ends.
    Scan,
}

/// Whether a one-GPU decode runs a pipeline of its own or joins the
/// device's shared one: `GDSCAN_DECODE_PIPELINE`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PipelineMode {
    /// Every decode opens its own streams, staging threads and queue of
    /// groups on the GPU (the default).
    #[default]
    Own,
    /// Decodes on a device share one pipeline: one set of streams, one
    /// queue of groups (`depth` of them on the GPU at once for all), fed
    /// by every decode's planner in turn; each decode keeps its own fetch,
    /// planner, filter and report.
    Shared,
}

/// Values the decode kernels are compiled with: the compiled module is
/// cached per distinct value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelConfig {
    /// Whether the PLAIN string walk is block-parallel (`true`) or one
    /// thread per page: `GDSCAN_STRING_WALK=parallel|serial`.
    pub string_walk_parallel: bool,
    /// Bytes of a page the string walks stage in shared memory per step:
    /// 16384 or 32768 (`GDSCAN_STRING_CHUNK`).
    pub string_chunk: u32,
    /// Speculative walks per segment of the Snappy scan, 1 to 4
    /// (`GDSCAN_SCAN_STARTS`).
    pub scan_starts: usize,
    /// Blocks of the page kernel an SM must hold at once, 2 to 4
    /// (`GDSCAN_DECODE_MIN_BLOCKS`): the compiler's register cap per thread
    /// is 64K / (256 × this), so fewer blocks give it more registers.
    pub decode_min_blocks: u32,
    /// Blocks of the nesting kernels (`gds_nest_count`, `gds_nest_scan`,
    /// `gds_nest_write`) an SM must hold at once, 1 to 8, or 0 to leave
    /// their register cap to the compiler (`GDSCAN_NEST_MIN_BLOCKS`).
    /// Left to itself ptxas spills `gds_nest_write` (48 bytes a thread
    /// read back at 48 registers) and `gds_nest_count`; 4 spills nothing.
    pub nest_min_blocks: u32,
}

impl KernelConfig {
    /// The defaults: a parallel walk, 16 KiB chunks, three starts, four
    /// page-kernel blocks an SM, the nesting kernels' registers left to the
    /// compiler.
    pub const DEFAULT: KernelConfig = KernelConfig {
        string_walk_parallel: true,
        string_chunk: 16384,
        scan_starts: 3,
        decode_min_blocks: 4,
        nest_min_blocks: 0,
    };
}

impl Default for KernelConfig {
    fn default() -> Self {
        KernelConfig::DEFAULT
    }
}

/// Where a GPU decode lands its row groups: `GDSCAN_DECODE_LANDING`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum LandingMode {
    /// Device memory wherever the host needs no page body: local files
    /// whose compressed pages nvCOMP takes as stored and the GPU checks
    /// (Snappy under the `scan` or `off` check, uncompressed pages, Zstd
    /// with `GDSCAN_ZSTD=gpu`, LZ4_RAW with the check off). The engine
    /// moves them through its reused bounce buffers (the raw scan's
    /// route) and the host reads only the page headers, from the file.
    /// Elsewhere pinned host memory. The default.
    #[default]
    Auto,
    /// Pinned host memory always: the host walks the pages there and one
    /// copy takes each row group up.
    Pinned,
}

/// What the decoder's variables set (`None`: unset).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct DecodeVars {
    /// `GDSCAN_DECODE_CHECK`.
    pub check: Option<CompressedCheck>,
    /// `GDSCAN_CHECK_STREAM`: `own` (true) or `upload` (false).
    pub check_stream: Option<bool>,
    /// `GDSCAN_CHECK_STREAMS`: 1 to 8.
    pub check_streams: Option<usize>,
    /// `GDSCAN_DECODE_RAMP`: 0 or 1.
    pub ramp_up: Option<bool>,
    /// `GDSCAN_DECODE_RAMP_DOWN`: 0 or 1.
    pub ramp_down: Option<bool>,
    /// `GDSCAN_DECODE_STREAMS`: at least 1.
    pub streams: Option<usize>,
    /// `GDSCAN_STAGE_THREADS`: 1 to 16.
    pub stage_threads: Option<usize>,
    /// `GDSCAN_DECODE_TRACE`: a file path.
    pub trace: Option<PathBuf>,
    /// `GDSCAN_STRING_WALKS`.
    pub string_walks: Option<StringWalks>,
    /// `GDSCAN_STRING_WALK`: `parallel` (true) or `serial` (false).
    pub string_walk_parallel: Option<bool>,
    /// `GDSCAN_STRING_CHUNK`: 16384 or 32768.
    pub string_chunk: Option<u32>,
    /// `GDSCAN_SCAN_STARTS`: 1 to 4.
    pub scan_starts: Option<usize>,
    /// `GDSCAN_DECODE_MIN_BLOCKS`: 2 to 4.
    pub decode_min_blocks: Option<u32>,
    /// `GDSCAN_NEST_MIN_BLOCKS`: 0 to 8.
    pub nest_min_blocks: Option<u32>,
    /// `GDSCAN_GPU_CHECK_MAX`: bytes.
    pub gpu_check_max: Option<usize>,
    /// `GDSCAN_SNAPPY_SPLIT`: 0 or 1.
    pub snappy_split: Option<bool>,
    /// `GDSCAN_SNAPPY_DECODER`: `nvcomp` or `gdscan`.
    pub snappy_decoder: Option<SnappyDecoder>,
    /// `GDSCAN_DEVICE_POOL`: `shared` or `scan`.
    pub device_pool: Option<DevicePoolMode>,
    /// `GDSCAN_DEVICE_TIMEOUT`: seconds (a positive decimal number).
    pub device_timeout: Option<std::time::Duration>,
    /// `GDSCAN_ZSTD`: `host` or `gpu`.
    pub zstd: Option<DecompressPlace>,
    /// `GDSCAN_GZIP`: `host` or `gpu`.
    pub gzip: Option<DecompressPlace>,
    /// `GDSCAN_DECODE_LANDING`: `auto` or `pinned`.
    pub landing: Option<LandingMode>,
    /// `GDSCAN_DECODE_PIPELINE`: `own` or `shared`.
    pub pipeline: Option<PipelineMode>,
}

/// Every variable [`DecodeVars::from_lookup`] reads.
pub const DECODE_VARIABLES: [&str; 23] = [
    "GDSCAN_DECODE_CHECK",
    "GDSCAN_CHECK_STREAM",
    "GDSCAN_CHECK_STREAMS",
    "GDSCAN_DECODE_RAMP",
    "GDSCAN_DECODE_RAMP_DOWN",
    "GDSCAN_DECODE_STREAMS",
    "GDSCAN_STAGE_THREADS",
    "GDSCAN_DECODE_TRACE",
    "GDSCAN_STRING_WALKS",
    "GDSCAN_STRING_WALK",
    "GDSCAN_STRING_CHUNK",
    "GDSCAN_SCAN_STARTS",
    "GDSCAN_DECODE_MIN_BLOCKS",
    "GDSCAN_NEST_MIN_BLOCKS",
    "GDSCAN_GPU_CHECK_MAX",
    "GDSCAN_SNAPPY_SPLIT",
    "GDSCAN_SNAPPY_DECODER",
    "GDSCAN_DEVICE_POOL",
    "GDSCAN_DEVICE_TIMEOUT",
    "GDSCAN_ZSTD",
    "GDSCAN_GZIP",
    "GDSCAN_DECODE_LANDING",
    "GDSCAN_DECODE_PIPELINE",
];

/// One of `choices` (exact), as its value.
fn choice<T: Copy>(name: &str, value: &str, choices: &[(&str, T)]) -> Result<T, ConfigError> {
    choices
        .iter()
        .find(|(word, _)| *word == value.trim())
        .map(|&(_, v)| v)
        .ok_or_else(|| {
            let words: Vec<&str> = choices.iter().map(|(w, _)| *w).collect();
            invalid(
                name,
                value,
                &format!("expected one of {}", words.join(", ")),
            )
        })
}

/// A count in `range`.
fn count(
    name: &str,
    value: &str,
    range: std::ops::RangeInclusive<usize>,
) -> Result<usize, ConfigError> {
    match value.trim().parse::<usize>() {
        Ok(n) if range.contains(&n) => Ok(n),
        _ => Err(invalid(
            name,
            value,
            &format!(
                "expected a number from {} to {}",
                range.start(),
                range.end()
            ),
        )),
    }
}

const ZERO_ONE: [(&str, bool); 2] = [("0", false), ("1", true)];

impl DecodeVars {
    /// Reads the variables from the process environment (a value that is
    /// not valid UTF-8 is refused).
    pub fn from_env() -> Result<DecodeVars, ConfigError> {
        super::check_unicode(&DECODE_VARIABLES)?;
        DecodeVars::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the variables through `lookup` (`None`: unset).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<DecodeVars, ConfigError> {
        let mut v = DecodeVars::default();
        let get = |name: &str| lookup(name);
        if let Some(s) = get("GDSCAN_DECODE_CHECK") {
            let check = s.trim().parse::<CompressedCheck>();
            v.check = Some(check.map_err(|_| {
                invalid("GDSCAN_DECODE_CHECK", &s, "expected host, gpu, scan or off")
            })?);
        }
        if let Some(s) = get("GDSCAN_CHECK_STREAM") {
            let own = [("own", true), ("upload", false)];
            v.check_stream = Some(choice("GDSCAN_CHECK_STREAM", &s, &own)?);
        }
        if let Some(s) = get("GDSCAN_CHECK_STREAMS") {
            v.check_streams = Some(count("GDSCAN_CHECK_STREAMS", &s, 1..=8)?);
        }
        if let Some(s) = get("GDSCAN_DECODE_RAMP") {
            v.ramp_up = Some(choice("GDSCAN_DECODE_RAMP", &s, &ZERO_ONE)?);
        }
        if let Some(s) = get("GDSCAN_DECODE_RAMP_DOWN") {
            v.ramp_down = Some(choice("GDSCAN_DECODE_RAMP_DOWN", &s, &ZERO_ONE)?);
        }
        if let Some(s) = get("GDSCAN_DECODE_STREAMS") {
            v.streams = Some(count("GDSCAN_DECODE_STREAMS", &s, 1..=1024)?);
        }
        if let Some(s) = get("GDSCAN_STAGE_THREADS") {
            v.stage_threads = Some(count("GDSCAN_STAGE_THREADS", &s, 1..=16)?);
        }
        if let Some(s) = get("GDSCAN_DECODE_TRACE") {
            if s.is_empty() {
                return Err(invalid("GDSCAN_DECODE_TRACE", &s, "expected a file path"));
            }
            v.trace = Some(PathBuf::from(s));
        }
        if let Some(s) = get("GDSCAN_STRING_WALKS") {
            let walks = [
                ("apart", StringWalks::Apart),
                ("together", StringWalks::Together),
                ("spread", StringWalks::Spread),
            ];
            v.string_walks = Some(choice("GDSCAN_STRING_WALKS", &s, &walks)?);
        }
        if let Some(s) = get("GDSCAN_STRING_WALK") {
            let walk = [("parallel", true), ("serial", false)];
            v.string_walk_parallel = Some(choice("GDSCAN_STRING_WALK", &s, &walk)?);
        }
        if let Some(s) = get("GDSCAN_STRING_CHUNK") {
            let chunks = [("16384", 16384), ("32768", 32768)];
            v.string_chunk = Some(choice("GDSCAN_STRING_CHUNK", &s, &chunks)?);
        }
        if let Some(s) = get("GDSCAN_SCAN_STARTS") {
            v.scan_starts = Some(count("GDSCAN_SCAN_STARTS", &s, 1..=4)?);
        }
        if let Some(s) = get("GDSCAN_DECODE_MIN_BLOCKS") {
            v.decode_min_blocks = Some(count("GDSCAN_DECODE_MIN_BLOCKS", &s, 2..=4)? as u32);
        }
        if let Some(s) = get("GDSCAN_NEST_MIN_BLOCKS") {
            v.nest_min_blocks = Some(count("GDSCAN_NEST_MIN_BLOCKS", &s, 0..=8)? as u32);
        }
        if let Some(s) = get("GDSCAN_GPU_CHECK_MAX") {
            v.gpu_check_max = Some(count("GDSCAN_GPU_CHECK_MAX", &s, 0..=usize::MAX)?);
        }
        if let Some(s) = get("GDSCAN_SNAPPY_SPLIT") {
            v.snappy_split = Some(choice("GDSCAN_SNAPPY_SPLIT", &s, &ZERO_ONE)?);
        }
        if let Some(s) = get("GDSCAN_SNAPPY_DECODER") {
            let decoders = [
                ("nvcomp", SnappyDecoder::Nvcomp),
                ("gdscan", SnappyDecoder::Gdscan),
            ];
            v.snappy_decoder = Some(choice("GDSCAN_SNAPPY_DECODER", &s, &decoders)?);
        }
        if let Some(s) = get("GDSCAN_DEVICE_POOL") {
            let pools = [
                ("shared", DevicePoolMode::Shared),
                ("scan", DevicePoolMode::Scan),
            ];
            v.device_pool = Some(choice("GDSCAN_DEVICE_POOL", &s, &pools)?);
        }
        let places = [
            ("host", DecompressPlace::Host),
            ("gpu", DecompressPlace::Gpu),
        ];
        if let Some(s) = get("GDSCAN_ZSTD") {
            v.zstd = Some(choice("GDSCAN_ZSTD", &s, &places)?);
        }
        if let Some(s) = get("GDSCAN_GZIP") {
            v.gzip = Some(choice("GDSCAN_GZIP", &s, &places)?);
        }
        if let Some(s) = get("GDSCAN_DECODE_LANDING") {
            let landings = [("auto", LandingMode::Auto), ("pinned", LandingMode::Pinned)];
            v.landing = Some(choice("GDSCAN_DECODE_LANDING", &s, &landings)?);
        }
        if let Some(s) = get("GDSCAN_DECODE_PIPELINE") {
            let pipelines = [("own", PipelineMode::Own), ("shared", PipelineMode::Shared)];
            v.pipeline = Some(choice("GDSCAN_DECODE_PIPELINE", &s, &pipelines)?);
        }
        if let Some(s) = get("GDSCAN_DEVICE_TIMEOUT") {
            let seconds = s.trim().parse::<f64>().ok();
            let limit = seconds
                .filter(|x| x.is_finite() && *x > 0.0 && *x < 1e9)
                .map(std::time::Duration::from_secs_f64);
            v.device_timeout = Some(limit.ok_or_else(|| {
                invalid(
                    "GDSCAN_DEVICE_TIMEOUT",
                    &s,
                    "expected a positive number of seconds",
                )
            })?);
        }
        Ok(v)
    }

    /// The kernel values these variables set, over `base`.
    pub fn kernels(&self, base: KernelConfig) -> KernelConfig {
        KernelConfig {
            string_walk_parallel: self
                .string_walk_parallel
                .unwrap_or(base.string_walk_parallel),
            string_chunk: self.string_chunk.unwrap_or(base.string_chunk),
            scan_starts: self.scan_starts.unwrap_or(base.scan_starts),
            decode_min_blocks: self.decode_min_blocks.unwrap_or(base.decode_min_blocks),
            nest_min_blocks: self.nest_min_blocks.unwrap_or(base.nest_min_blocks),
        }
    }
}

/// How the DataFusion provider reads ahead: `GDSCAN_READ_AHEAD`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReadAheadPolicy {
    /// Never.
    Off,
    /// Row groups not already in the page cache (the default).
    #[default]
    Uncached,
    /// Every planned row group, cached or not.
    Always,
}

/// Where the DataFusion provider decodes pages: `GDSCAN_DATAFUSION_DECODE`
/// (and `gdscan sql --decode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TableDecode {
    /// arrow-rs on the host, every file (the default).
    #[default]
    Cpu,
    /// gdscan's GPU decoder; a file it cannot take, or a process without a
    /// usable GPU, falls back to the host and says why.
    Gpu,
    /// The GPU when the process has a usable one (the driver, a device and
    /// NVRTC), else the host.
    Auto,
}

impl TableDecode {
    /// The choice's name: `cpu`, `gpu` or `auto`.
    pub fn name(self) -> &'static str {
        match self {
            TableDecode::Cpu => "cpu",
            TableDecode::Gpu => "gpu",
            TableDecode::Auto => "auto",
        }
    }

    /// The choice named `word` (any case, spaces around ignored).
    pub fn from_name(word: &str) -> Option<TableDecode> {
        match word.trim().to_ascii_lowercase().as_str() {
            "cpu" => Some(TableDecode::Cpu),
            "gpu" => Some(TableDecode::Gpu),
            "auto" => Some(TableDecode::Auto),
            _ => None,
        }
    }
}

impl std::str::FromStr for TableDecode {
    type Err = ConfigError;

    /// Parses a `--decode` value (the error names the flag).
    fn from_str(s: &str) -> Result<TableDecode, ConfigError> {
        TableDecode::from_name(s)
            .ok_or_else(|| invalid("--decode", s, "expected one of cpu, gpu, auto"))
    }
}

/// The variables of the DataFusion provider's table options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TableVars {
    /// `GDSCAN_READ_AHEAD`: `0`/`off`, `1`/`uncached` or `always`.
    pub read_ahead: Option<ReadAheadPolicy>,
    /// `GDSCAN_DATAFUSION_DECODE`: `cpu`, `gpu` or `auto`.
    pub decode: Option<TableDecode>,
    /// `GDSCAN_DATAFUSION_GPU_SCANS`: GPU decodes the process runs at once
    /// per device, 1 to 64.
    pub gpu_scans: Option<usize>,
    /// `GDSCAN_DATAFUSION_PINNED_COPY_BACK`: bytes of pinned host memory the
    /// GPU path's batches may hold at once per device (a size, `0`: none).
    pub pinned_copy_back: Option<usize>,
    /// `GDSCAN_DATAFUSION_DEVICES`: the GPUs the GPU path spreads the
    /// partitions over, as given (`0,1`, `all`; parsed by the table's
    /// options, `datafusion::GdsTableOptions::from_env`).
    pub devices: Option<String>,
    /// Whether `KVIKIO_TASK_SIZE` is set (the engine's task size then
    /// applies to a table's local reads).
    pub engine_task_size_set: bool,
}

impl TableVars {
    /// Reads the variables from the process environment.
    pub fn from_env() -> Result<TableVars, ConfigError> {
        super::check_unicode(&[
            "GDSCAN_READ_AHEAD",
            super::ENV_TASK_SIZE,
            "GDSCAN_DATAFUSION_DECODE",
            "GDSCAN_DATAFUSION_GPU_SCANS",
            "GDSCAN_DATAFUSION_PINNED_COPY_BACK",
            "GDSCAN_DATAFUSION_DEVICES",
        ])?;
        TableVars::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the variables through `lookup` (`None`: unset).
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<TableVars, ConfigError> {
        let read_ahead = match lookup("GDSCAN_READ_AHEAD") {
            None => None,
            Some(s) => {
                let policies = [
                    ("0", ReadAheadPolicy::Off),
                    ("off", ReadAheadPolicy::Off),
                    ("1", ReadAheadPolicy::Uncached),
                    ("uncached", ReadAheadPolicy::Uncached),
                    ("always", ReadAheadPolicy::Always),
                ];
                Some(choice("GDSCAN_READ_AHEAD", &s, &policies)?)
            }
        };
        let decode = match lookup("GDSCAN_DATAFUSION_DECODE") {
            None => None,
            Some(s) => Some(TableDecode::from_name(&s).ok_or_else(|| {
                invalid(
                    "GDSCAN_DATAFUSION_DECODE",
                    &s,
                    "expected one of cpu, gpu, auto",
                )
            })?),
        };
        let gpu_scans = match lookup("GDSCAN_DATAFUSION_GPU_SCANS") {
            None => None,
            Some(s) => Some(count("GDSCAN_DATAFUSION_GPU_SCANS", &s, 1..=64)?),
        };
        let pinned_copy_back = match lookup("GDSCAN_DATAFUSION_PINNED_COPY_BACK") {
            None => None,
            Some(s) => Some(super::parse_bytes(
                "GDSCAN_DATAFUSION_PINNED_COPY_BACK",
                &s,
                true,
            )?),
        };
        Ok(TableVars {
            read_ahead,
            decode,
            gpu_scans,
            pinned_copy_back,
            devices: lookup("GDSCAN_DATAFUSION_DEVICES"),
            engine_task_size_set: lookup(super::ENV_TASK_SIZE).is_some(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars(pairs: &[(&str, &str)]) -> Result<DecodeVars, ConfigError> {
        DecodeVars::from_lookup(|name| {
            pairs
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        })
    }

    #[test]
    fn unset_is_none() {
        assert_eq!(vars(&[]).unwrap(), DecodeVars::default());
    }

    #[test]
    fn documented_values_are_accepted() {
        let v = vars(&[
            ("GDSCAN_DECODE_CHECK", "GPU"),
            ("GDSCAN_CHECK_STREAM", "upload"),
            ("GDSCAN_CHECK_STREAMS", "8"),
            ("GDSCAN_DECODE_RAMP", "0"),
            ("GDSCAN_DECODE_RAMP_DOWN", "1"),
            ("GDSCAN_DECODE_STREAMS", "2"),
            ("GDSCAN_STAGE_THREADS", "16"),
            ("GDSCAN_DECODE_TRACE", "/tmp/t.jsonl"),
            ("GDSCAN_STRING_WALKS", "apart"),
            ("GDSCAN_STRING_WALK", "serial"),
            ("GDSCAN_STRING_CHUNK", "32768"),
            ("GDSCAN_SCAN_STARTS", "4"),
            ("GDSCAN_DECODE_MIN_BLOCKS", "2"),
            ("GDSCAN_NEST_MIN_BLOCKS", "4"),
            ("GDSCAN_GPU_CHECK_MAX", "0"),
            ("GDSCAN_SNAPPY_SPLIT", "0"),
            ("GDSCAN_SNAPPY_DECODER", "gdscan"),
            ("GDSCAN_DEVICE_POOL", "scan"),
            ("GDSCAN_DEVICE_TIMEOUT", "2.5"),
            ("GDSCAN_ZSTD", "gpu"),
            ("GDSCAN_GZIP", "host"),
            ("GDSCAN_DECODE_PIPELINE", "shared"),
        ])
        .unwrap();
        assert_eq!(v.pipeline, Some(PipelineMode::Shared));
        assert_eq!(v.check, Some(CompressedCheck::Gpu));
        assert_eq!(v.check_stream, Some(false));
        assert_eq!(v.check_streams, Some(8));
        assert_eq!((v.ramp_up, v.ramp_down), (Some(false), Some(true)));
        assert_eq!((v.streams, v.stage_threads), (Some(2), Some(16)));
        assert_eq!(v.trace, Some(PathBuf::from("/tmp/t.jsonl")));
        assert_eq!(v.string_walks, Some(StringWalks::Apart));
        assert_eq!(v.gpu_check_max, Some(0));
        assert_eq!(v.snappy_split, Some(false));
        assert_eq!(v.snappy_decoder, Some(SnappyDecoder::Gdscan));
        assert_eq!(v.device_pool, Some(DevicePoolMode::Scan));
        assert_eq!(
            v.device_timeout,
            Some(std::time::Duration::from_millis(2500))
        );
        assert_eq!(
            (v.zstd, v.gzip),
            (Some(DecompressPlace::Gpu), Some(DecompressPlace::Host))
        );
        let k = v.kernels(KernelConfig::DEFAULT);
        assert_eq!(
            (
                k.string_walk_parallel,
                k.string_chunk,
                k.scan_starts,
                k.decode_min_blocks,
                k.nest_min_blocks
            ),
            (false, 32768, 4, 2, 4)
        );
    }

    #[test]
    fn a_bad_value_names_the_variable() {
        for (name, bad) in [
            ("GDSCAN_DECODE_CHECK", "hots"),
            ("GDSCAN_CHECK_STREAM", "mine"),
            ("GDSCAN_CHECK_STREAMS", "9"),
            ("GDSCAN_DECODE_RAMP", "yes"),
            ("GDSCAN_DECODE_RAMP_DOWN", "2"),
            ("GDSCAN_DECODE_STREAMS", "0"),
            ("GDSCAN_STAGE_THREADS", "17"),
            ("GDSCAN_DECODE_TRACE", ""),
            ("GDSCAN_STRING_WALKS", "both"),
            ("GDSCAN_STRING_WALK", "fast"),
            ("GDSCAN_STRING_CHUNK", "4096"),
            ("GDSCAN_SCAN_STARTS", "5"),
            ("GDSCAN_DECODE_MIN_BLOCKS", "1"),
            ("GDSCAN_NEST_MIN_BLOCKS", "9"),
            ("GDSCAN_GPU_CHECK_MAX", "-1"),
            ("GDSCAN_SNAPPY_SPLIT", "on"),
            ("GDSCAN_SNAPPY_DECODER", "cpu"),
            ("GDSCAN_DEVICE_TIMEOUT", "0"),
            ("GDSCAN_ZSTD", "cpu"),
            ("GDSCAN_GZIP", "nvcomp"),
            ("GDSCAN_DEVICE_TIMEOUT", "-3"),
            ("GDSCAN_DEVICE_TIMEOUT", "NaN"),
            ("GDSCAN_DEVICE_POOL", "own"),
            ("GDSCAN_DECODE_PIPELINE", "one"),
        ] {
            match vars(&[(name, bad)]) {
                Err(ConfigError::Invalid { name: n, value, .. }) => {
                    assert_eq!((n.as_str(), value.as_str()), (name, bad));
                }
                other => panic!("{name}={bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn read_ahead_is_strict() {
        let table =
            |v: &str| TableVars::from_lookup(|n| (n == "GDSCAN_READ_AHEAD").then(|| v.to_string()));
        assert_eq!(
            table("always").unwrap().read_ahead,
            Some(ReadAheadPolicy::Always)
        );
        assert_eq!(table("0").unwrap().read_ahead, Some(ReadAheadPolicy::Off));
        assert!(table("sometimes").is_err());
    }

    #[test]
    fn the_datafusion_decode_choice_and_gpu_scans_parse() {
        let table = |pairs: &[(&str, &str)]| {
            TableVars::from_lookup(|n| {
                pairs
                    .iter()
                    .find(|(k, _)| *k == n)
                    .map(|(_, v)| v.to_string())
            })
        };
        let unset = table(&[]).unwrap();
        assert_eq!((unset.decode, unset.gpu_scans), (None, None));
        for (word, choice) in [
            ("cpu", TableDecode::Cpu),
            (" GPU ", TableDecode::Gpu),
            ("Auto", TableDecode::Auto),
        ] {
            let vars = table(&[("GDSCAN_DATAFUSION_DECODE", word)]).unwrap();
            assert_eq!(vars.decode, Some(choice));
            assert_eq!(word.parse::<TableDecode>().unwrap(), choice);
            assert_eq!(TableDecode::from_name(choice.name()), Some(choice));
        }
        let bad = table(&[("GDSCAN_DATAFUSION_DECODE", "tpu")]).unwrap_err();
        assert!(
            bad.to_string().contains("GDSCAN_DATAFUSION_DECODE"),
            "{bad}"
        );
        assert!("tpu".parse::<TableDecode>().is_err());
        let scans = table(&[("GDSCAN_DATAFUSION_GPU_SCANS", "4")]).unwrap();
        assert_eq!(scans.gpu_scans, Some(4));
        assert!(table(&[("GDSCAN_DATAFUSION_GPU_SCANS", "0")]).is_err());
        assert!(table(&[("GDSCAN_DATAFUSION_GPU_SCANS", "x")]).is_err());
        let pinned = |v: &str| table(&[("GDSCAN_DATAFUSION_PINNED_COPY_BACK", v)]);
        assert_eq!(pinned("0").unwrap().pinned_copy_back, Some(0));
        assert_eq!(pinned(" 4096 ").unwrap().pinned_copy_back, Some(4096));
        let bad = pinned("-1").unwrap_err();
        assert!(bad.to_string().contains("PINNED_COPY_BACK"), "{bad}");
        assert_eq!(table(&[]).unwrap().pinned_copy_back, None);
        assert_eq!(TableDecode::default(), TableDecode::Cpu);
    }
}
