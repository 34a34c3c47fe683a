//! Settings of the file-I/O engine, read from KvikIO's environment variables.
//!
//! The engine follows KvikIO's configuration surface: the same variable names,
//! the same defaults (except the thread count, see below) and the same value
//! syntax, plus one gdscan-specific variable for the device read path.
//!
//! | Variable | Meaning | Default |
//! |----------|---------|---------|
//! | `KVIKIO_COMPAT_MODE` | `ON`: POSIX I/O only; `OFF`: cuFile (GDS) only, failing if it is unavailable; `AUTO`: cuFile when usable, POSIX otherwise | `AUTO` |
//! | `KVIKIO_NTHREADS` (alias `KVIKIO_NUM_THREADS`) | Worker threads of the I/O thread pool | [`Settings::default_num_threads`] (8 to 16) |
//! | `KVIKIO_TASK_SIZE` | Largest byte range one pool task reads or writes | 4 MiB (4194304) |
//! | `KVIKIO_GDS_THRESHOLD` | Requests smaller than this many bytes take the POSIX path even when cuFile is on (`0` disables the threshold) | 16 KiB (16384) |
//! | `KVIKIO_BOUNCE_BUFFER_SIZE` | Size in bytes of each pinned host bounce buffer used by POSIX device I/O | 16 MiB (16777216) |
//! | `KVIKIO_AUTO_DIRECT_IO_READ` | Open files with `O_DIRECT` for reads when size and alignment allow | `false` |
//! | `KVIKIO_AUTO_DIRECT_IO_WRITE` | Open files with `O_DIRECT` for writes when size and alignment allow | `true` |
//! | `GDSCAN_DEVICE_READ_PATH` | How POSIX reads into device memory move bytes: `auto`, `bounce` (pinned bounce buffers) or `mmap` (page-cache mapping copied straight to the device) | `auto` |
//! | `GDSCAN_CUFILE_<KEY>` | A cuFile parameter (cufile.json key, e.g. `GDSCAN_CUFILE_EXECUTION_PARALLEL_IO`) set before cuFile's driver opens; see [`crate::cufile::params`] | unset |
//!
//! # Value syntax
//!
//! * Sizes and counts are plain decimal integers (`4194304`, not `4M`);
//!   surrounding whitespace is ignored. Signs, fractions, and values that do
//!   not fit in `usize` are rejected. `0` is rejected for the thread count,
//!   the task size and the bounce-buffer size, and allowed for the GDS
//!   threshold.
//! * Booleans accept `true`/`false`, `yes`/`no`, `on`/`off` and `1`/`0`, in
//!   any letter case.
//! * `KVIKIO_COMPAT_MODE` accepts `on`/`off`/`auto` and the boolean spellings
//!   above, in any letter case.
//! * An unset variable means the default. A variable set to the empty string
//!   is an error: silently falling back to the default would hide typos.
//! * If both `KVIKIO_NTHREADS` and `KVIKIO_NUM_THREADS` are set they must
//!   agree; different values are a [`ConfigError::Conflict`].
//!
//! Human-friendly sizes such as `16MiB` are for the command line only; see
//! [`parse_size`].

mod cufile;
pub mod decode;
mod error;

pub use cufile::{spec, CuFileOverrides, ParamKind, ParamSpec, ParamValue, PARAMS};
pub use error::{ConfigError, SizeError};

use std::fmt;
use std::str::FromStr;

/// Environment variable selecting the [`CompatMode`].
const ENV_COMPAT_MODE: &str = "KVIKIO_COMPAT_MODE";
/// Environment variable holding the thread count.
const ENV_NTHREADS: &str = "KVIKIO_NTHREADS";
/// Alias of [`ENV_NTHREADS`].
const ENV_NUM_THREADS: &str = "KVIKIO_NUM_THREADS";
/// The environment variable of [`Settings::task_size`].
pub(crate) const ENV_TASK_SIZE: &str = "KVIKIO_TASK_SIZE";
/// Environment variable holding the GDS threshold in bytes.
const ENV_GDS_THRESHOLD: &str = "KVIKIO_GDS_THRESHOLD";
/// Environment variable holding the bounce-buffer size in bytes.
const ENV_BOUNCE_BUFFER_SIZE: &str = "KVIKIO_BOUNCE_BUFFER_SIZE";
/// Environment variable enabling `O_DIRECT` reads.
const ENV_AUTO_DIRECT_IO_READ: &str = "KVIKIO_AUTO_DIRECT_IO_READ";
/// Environment variable enabling `O_DIRECT` writes.
const ENV_AUTO_DIRECT_IO_WRITE: &str = "KVIKIO_AUTO_DIRECT_IO_WRITE";
/// Environment variable selecting the [`DeviceReadPath`].
const ENV_DEVICE_READ_PATH: &str = "GDSCAN_DEVICE_READ_PATH";

/// Default task size: 4 MiB.
const DEFAULT_TASK_SIZE: usize = 4 * 1024 * 1024;
/// Default GDS threshold: 16 KiB.
const DEFAULT_GDS_THRESHOLD: usize = 16 * 1024;
/// Default bounce-buffer size: 16 MiB.
const DEFAULT_BOUNCE_BUFFER_SIZE: usize = 16 * 1024 * 1024;
/// Lower bound of the automatic thread count.
const MIN_DEFAULT_THREADS: usize = 8;
/// Upper bound of the automatic thread count.
const MAX_DEFAULT_THREADS: usize = 16;
/// Cores the default thread count leaves to the reads' consumer.
const CONSUMER_CORES: usize = 4;
/// Largest thread count accepted from any source.
const MAX_THREADS: usize = 4096;

/// Whether the engine uses cuFile (GPUDirect Storage) or POSIX I/O
/// (`KVIKIO_COMPAT_MODE`).
///
/// Parsing is case-insensitive: `on`/`true`/`yes`/`1` give [`CompatMode::On`],
/// `off`/`false`/`no`/`0` give [`CompatMode::Off`], and `auto` gives
/// [`CompatMode::Auto`]. It displays as `ON`, `OFF` or `AUTO`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum CompatMode {
    /// Compatibility mode on: POSIX I/O only, cuFile is never used.
    On,
    /// Compatibility mode off: cuFile only; opening fails if it is unusable.
    Off,
    /// Use cuFile when the driver and file system support it, POSIX otherwise
    /// (the default, as in KvikIO).
    #[default]
    Auto,
}

impl fmt::Display for CompatMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CompatMode::On => "ON",
            CompatMode::Off => "OFF",
            CompatMode::Auto => "AUTO",
        })
    }
}

impl FromStr for CompatMode {
    type Err = ConfigError;

    /// Parses a compat mode; errors name `KVIKIO_COMPAT_MODE`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let trimmed = text.trim();
        if trimmed.eq_ignore_ascii_case("auto") {
            return Ok(CompatMode::Auto);
        }
        match bool_word(trimmed) {
            Some(true) => Ok(CompatMode::On),
            Some(false) => Ok(CompatMode::Off),
            None => Err(invalid(
                ENV_COMPAT_MODE,
                text,
                "expected ON, OFF or AUTO (or true/false, yes/no, 1/0)",
            )),
        }
    }
}

/// How POSIX reads whose destination is device memory move their bytes
/// (`GDSCAN_DEVICE_READ_PATH`).
///
/// Parsing is case-insensitive (`auto`, `bounce`, `mmap`); it displays in
/// lower case.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceReadPath {
    /// Let the engine choose per file and request (the default).
    #[default]
    Auto,
    /// `pread` into pinned host bounce buffers, then copy host-to-device.
    Bounce,
    /// Map the file and copy from the page-cache mapping to the device.
    Mmap,
}

impl fmt::Display for DeviceReadPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DeviceReadPath::Auto => "auto",
            DeviceReadPath::Bounce => "bounce",
            DeviceReadPath::Mmap => "mmap",
        })
    }
}

impl FromStr for DeviceReadPath {
    type Err = ConfigError;

    /// Parses a device read path; errors name `GDSCAN_DEVICE_READ_PATH`.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let trimmed = text.trim();
        if trimmed.eq_ignore_ascii_case("auto") {
            Ok(DeviceReadPath::Auto)
        } else if trimmed.eq_ignore_ascii_case("bounce") {
            Ok(DeviceReadPath::Bounce)
        } else if trimmed.eq_ignore_ascii_case("mmap") {
            Ok(DeviceReadPath::Mmap)
        } else {
            Err(invalid(
                ENV_DEVICE_READ_PATH,
                text,
                "expected auto, bounce or mmap",
            ))
        }
    }
}

/// Builds a [`ConfigError::Invalid`].
fn invalid(name: &str, value: &str, reason: &str) -> ConfigError {
    ConfigError::Invalid {
        name: name.to_owned(),
        value: value.to_owned(),
        reason: reason.to_owned(),
    }
}

/// The engine's settings. [`Settings::default`] gives every default without
/// looking at the environment; [`Settings::from_env`] reads the variables
/// listed in the [module documentation](self).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Settings {
    /// cuFile or POSIX (`KVIKIO_COMPAT_MODE`, default [`CompatMode::Auto`]).
    pub compat_mode: CompatMode,
    /// Worker threads of the I/O pool (`KVIKIO_NTHREADS`, alias
    /// `KVIKIO_NUM_THREADS`; default [`Settings::default_num_threads`]).
    pub num_threads: usize,
    /// Largest byte range of one pool task (`KVIKIO_TASK_SIZE`, default
    /// 4 MiB).
    pub task_size: usize,
    /// Requests below this many bytes use POSIX even with cuFile on
    /// (`KVIKIO_GDS_THRESHOLD`, default 16 KiB; `0` disables it).
    pub gds_threshold: usize,
    /// Size of each pinned bounce buffer in bytes
    /// (`KVIKIO_BOUNCE_BUFFER_SIZE`, default 16 MiB).
    pub bounce_buffer_size: usize,
    /// Use `O_DIRECT` for reads when possible (`KVIKIO_AUTO_DIRECT_IO_READ`,
    /// default `false`).
    pub auto_direct_io_read: bool,
    /// Use `O_DIRECT` for writes when possible (`KVIKIO_AUTO_DIRECT_IO_WRITE`,
    /// default `true`).
    pub auto_direct_io_write: bool,
    /// How POSIX reads into device memory move bytes
    /// (`GDSCAN_DEVICE_READ_PATH`, default [`DeviceReadPath::Auto`]).
    pub device_read_path: DeviceReadPath,
    /// cuFile's own parameters to set before its driver opens
    /// (`GDSCAN_CUFILE_<KEY>`, see [`crate::cufile::params`]; default none).
    pub cufile: cufile::CuFileOverrides,
}

impl Default for Settings {
    /// Every setting at its default; the environment is not read.
    fn default() -> Self {
        Settings {
            compat_mode: CompatMode::Auto,
            num_threads: Settings::default_num_threads(),
            task_size: DEFAULT_TASK_SIZE,
            gds_threshold: DEFAULT_GDS_THRESHOLD,
            bounce_buffer_size: DEFAULT_BOUNCE_BUFFER_SIZE,
            auto_direct_io_read: false,
            auto_direct_io_write: true,
            device_read_path: DeviceReadPath::Auto,
            cufile: cufile::CuFileOverrides::default(),
        }
    }
}

impl Settings {
    /// Reads the settings from the process environment (see the
    /// [module documentation](self) for the variables). A variable whose
    /// value is not valid Unicode is reported as [`ConfigError::Invalid`].
    pub fn from_env() -> Result<Settings, ConfigError> {
        check_unicode(&ALL_VARIABLES)?;
        Settings::from_lookup(|name| std::env::var(name).ok())
    }

    /// Reads the settings through `lookup`, which maps a variable name to its
    /// value (`None` when unset). This is [`Settings::from_env`] without the
    /// process environment, so callers and tests can supply any map.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<String>) -> Result<Settings, ConfigError> {
        let mut settings = Settings::default();

        if let Some(value) = lookup(ENV_COMPAT_MODE) {
            settings.compat_mode = value.parse()?;
        }
        if let Some(threads) = num_threads_from_lookup(&lookup)? {
            settings.num_threads = threads;
        }
        if let Some(value) = lookup(ENV_TASK_SIZE) {
            settings.task_size = parse_bytes(ENV_TASK_SIZE, &value, false)?;
        }
        if let Some(value) = lookup(ENV_GDS_THRESHOLD) {
            settings.gds_threshold = parse_bytes(ENV_GDS_THRESHOLD, &value, true)?;
        }
        if let Some(value) = lookup(ENV_BOUNCE_BUFFER_SIZE) {
            settings.bounce_buffer_size = parse_bytes(ENV_BOUNCE_BUFFER_SIZE, &value, false)?;
        }
        if let Some(value) = lookup(ENV_AUTO_DIRECT_IO_READ) {
            settings.auto_direct_io_read = parse_bool(ENV_AUTO_DIRECT_IO_READ, &value)?;
        }
        if let Some(value) = lookup(ENV_AUTO_DIRECT_IO_WRITE) {
            settings.auto_direct_io_write = parse_bool(ENV_AUTO_DIRECT_IO_WRITE, &value)?;
        }
        if let Some(value) = lookup(ENV_DEVICE_READ_PATH) {
            settings.device_read_path = value.parse()?;
        }
        settings.cufile = cufile::CuFileOverrides::from_lookup(&lookup)?;

        // Every range rule was enforced above with the variable's name; this
        // keeps the builder's rules authoritative should they ever grow.
        SettingsBuilder { settings }.build()
    }

    /// Starts a [`SettingsBuilder`] from the defaults (not the environment).
    pub fn builder() -> SettingsBuilder {
        SettingsBuilder::default()
    }

    /// The thread count used when neither `KVIKIO_NTHREADS` nor
    /// `KVIKIO_NUM_THREADS` is set.
    ///
    /// Rule: [`std::thread::available_parallelism`] (which honours the CPU
    /// affinity mask and cgroup CPU quota) less four cores, clamped to
    /// `8..=16` (8 if it cannot be determined).
    ///
    /// Why not KvikIO's default of 1: a single thread serialises every read
    /// behind one `pread` or copy at a time and is KvikIO's most common
    /// performance complaint. Why at least 8, even on fewer cores: a read
    /// from the page cache holds its thread for the whole copy, and
    /// concurrent readers (DataFusion's partitions, each with a read and a
    /// read-ahead) then queue behind each other's large reads; on a 2-core
    /// machine, 2 threads left TPC-H Q3/Q5 5 % behind DataFusion's own
    /// reader (a blocking thread per request), 8 caught up. Why no more than
    /// 16: reads served from the page cache into one GPU are bound by a
    /// single PCIe x16 link, which 16 threads already saturate; more threads
    /// add contention, not bandwidth. Why four cores fewer: whatever
    /// consumes the reads needs cores while they run: with as many workers
    /// as cores, the workers copying a scan's first row groups into pinned
    /// memory starve the GPU decoder's own planning threads, while four
    /// workers fewer leave the raw scan's speed unchanged (BENCHMARKS.md).
    pub fn default_num_threads() -> usize {
        threads_for_cores(std::thread::available_parallelism().ok().map(|n| n.get()))
    }
}

/// The default thread count on `cores` cores (unknown: the minimum).
fn threads_for_cores(cores: Option<usize>) -> usize {
    cores
        .map_or(MIN_DEFAULT_THREADS, |n| n.saturating_sub(CONSUMER_CORES))
        .clamp(MIN_DEFAULT_THREADS, MAX_DEFAULT_THREADS)
}

/// Refuses a variable of `names` whose value is not valid Unicode, so
/// that it is reported instead of being mistaken for an unset one.
fn check_unicode(names: &[&str]) -> Result<(), ConfigError> {
    for name in names {
        if let Some(raw) = std::env::var_os(name) {
            if raw.to_str().is_none() {
                return Err(invalid(
                    name,
                    &raw.to_string_lossy(),
                    "value is not valid UTF-8",
                ));
            }
        }
    }
    Ok(())
}

/// Every variable [`Settings::from_lookup`] reads.
const ALL_VARIABLES: [&str; 9] = [
    ENV_COMPAT_MODE,
    ENV_NTHREADS,
    ENV_NUM_THREADS,
    ENV_TASK_SIZE,
    ENV_GDS_THRESHOLD,
    ENV_BOUNCE_BUFFER_SIZE,
    ENV_AUTO_DIRECT_IO_READ,
    ENV_AUTO_DIRECT_IO_WRITE,
    ENV_DEVICE_READ_PATH,
];

/// Reads `KVIKIO_NTHREADS` and its alias `KVIKIO_NUM_THREADS`; `None` when
/// neither is set.
fn num_threads_from_lookup(
    lookup: &impl Fn(&str) -> Option<String>,
) -> Result<Option<usize>, ConfigError> {
    let primary = lookup(ENV_NTHREADS)
        .map(|value| parse_threads(ENV_NTHREADS, &value).map(|n| (n, value)))
        .transpose()?;
    let alias = lookup(ENV_NUM_THREADS)
        .map(|value| parse_threads(ENV_NUM_THREADS, &value).map(|n| (n, value)))
        .transpose()?;
    match (primary, alias) {
        (Some((a, first_value)), Some((b, second_value))) if a != b => Err(ConfigError::Conflict {
            first: ENV_NTHREADS.to_owned(),
            first_value,
            second: ENV_NUM_THREADS.to_owned(),
            second_value,
        }),
        (Some((n, _)), _) | (None, Some((n, _))) => Ok(Some(n)),
        (None, None) => Ok(None),
    }
}

/// Parses a thread count: a positive decimal integer of at most 4096.
fn parse_threads(name: &str, value: &str) -> Result<usize, ConfigError> {
    let reason = "expected a positive integer number of threads";
    match parse_decimal(value) {
        Some(0) | None => Err(invalid(name, value, reason)),
        Some(n) if n > MAX_THREADS => Err(invalid(
            name,
            value,
            &format!("at most {MAX_THREADS} threads are allowed"),
        )),
        Some(n) => Ok(n),
    }
}

/// Parses a byte count; `0` is accepted only when `allow_zero`.
fn parse_bytes(name: &str, value: &str, allow_zero: bool) -> Result<usize, ConfigError> {
    let reason = if allow_zero {
        "expected a non-negative integer number of bytes"
    } else {
        "expected a positive integer number of bytes"
    };
    match parse_decimal(value) {
        Some(0) if !allow_zero => Err(invalid(name, value, reason)),
        Some(n) => Ok(n),
        None => Err(invalid(name, value, reason)),
    }
}

/// Parses a plain decimal `usize`, ignoring surrounding whitespace. Signs,
/// fractions, empty text and overflow give `None`.
fn parse_decimal(value: &str) -> Option<usize> {
    let digits = value.trim();
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// Parses a boolean variable; errors name `name`.
fn parse_bool(name: &str, value: &str) -> Result<bool, ConfigError> {
    bool_word(value.trim())
        .ok_or_else(|| invalid(name, value, "expected true/false, yes/no, on/off or 1/0"))
}

/// Recognises the boolean spellings, case-insensitively.
fn bool_word(word: &str) -> Option<bool> {
    const TRUE: [&str; 4] = ["true", "yes", "on", "1"];
    const FALSE: [&str; 4] = ["false", "no", "off", "0"];
    if TRUE.iter().any(|t| word.eq_ignore_ascii_case(t)) {
        Some(true)
    } else if FALSE.iter().any(|f| word.eq_ignore_ascii_case(f)) {
        Some(false)
    } else {
        None
    }
}

/// Builds [`Settings`] field by field, validating them in
/// [`SettingsBuilder::build`]. Start it with [`Settings::builder`] (defaults)
/// or [`SettingsBuilder::from_env`] (environment).
#[derive(Debug, Clone, Default)]
pub struct SettingsBuilder {
    /// The settings being built.
    settings: Settings,
}

impl SettingsBuilder {
    /// Starts from the settings in the process environment.
    pub fn from_env() -> Result<Self, ConfigError> {
        Settings::from_env().map(|settings| SettingsBuilder { settings })
    }

    /// Sets [`Settings::compat_mode`].
    pub fn compat_mode(mut self, compat_mode: CompatMode) -> Self {
        self.settings.compat_mode = compat_mode;
        self
    }

    /// Sets [`Settings::num_threads`] (1 to 4096, checked by `build`).
    pub fn num_threads(mut self, num_threads: usize) -> Self {
        self.settings.num_threads = num_threads;
        self
    }

    /// Sets [`Settings::task_size`] in bytes (positive, checked by `build`).
    pub fn task_size(mut self, task_size: usize) -> Self {
        self.settings.task_size = task_size;
        self
    }

    /// Sets [`Settings::gds_threshold`] in bytes (`0` allowed).
    pub fn gds_threshold(mut self, gds_threshold: usize) -> Self {
        self.settings.gds_threshold = gds_threshold;
        self
    }

    /// Sets [`Settings::bounce_buffer_size`] in bytes (positive, checked by
    /// `build`).
    pub fn bounce_buffer_size(mut self, bounce_buffer_size: usize) -> Self {
        self.settings.bounce_buffer_size = bounce_buffer_size;
        self
    }

    /// Sets [`Settings::auto_direct_io_read`].
    pub fn auto_direct_io_read(mut self, auto_direct_io_read: bool) -> Self {
        self.settings.auto_direct_io_read = auto_direct_io_read;
        self
    }

    /// Sets [`Settings::auto_direct_io_write`].
    pub fn auto_direct_io_write(mut self, auto_direct_io_write: bool) -> Self {
        self.settings.auto_direct_io_write = auto_direct_io_write;
        self
    }

    /// Sets [`Settings::cufile`] (cuFile parameters applied before its driver opens).
    pub fn cufile(mut self, overrides: cufile::CuFileOverrides) -> Self {
        self.settings.cufile = overrides;
        self
    }

    /// Sets [`Settings::device_read_path`].
    pub fn device_read_path(mut self, device_read_path: DeviceReadPath) -> Self {
        self.settings.device_read_path = device_read_path;
        self
    }

    /// Validates and returns the settings. `num_threads` must be in
    /// `1..=4096`; `task_size` and `bounce_buffer_size` must be positive.
    /// Errors are [`ConfigError::Invalid`] naming the field.
    pub fn build(self) -> Result<Settings, ConfigError> {
        let s = &self.settings;
        if s.num_threads == 0 {
            return Err(invalid("num_threads", "0", "must be at least 1"));
        }
        if s.num_threads > MAX_THREADS {
            return Err(invalid(
                "num_threads",
                &s.num_threads.to_string(),
                &format!("must be at most {MAX_THREADS}"),
            ));
        }
        if s.task_size == 0 {
            return Err(invalid("task_size", "0", "must be at least 1 byte"));
        }
        if s.bounce_buffer_size == 0 {
            return Err(invalid(
                "bounce_buffer_size",
                "0",
                "must be at least 1 byte",
            ));
        }
        Ok(self.settings)
    }
}

/// Parses a human-readable size for the command line, returning bytes.
///
/// Accepts a decimal integer with an optional unit, case-insensitively and
/// with surrounding whitespace ignored (also between number and unit): `B`;
/// `K`, `KB`, `KiB`; `M`, `MB`, `MiB`; `G`, `GB`, `GiB`; `T`, `TB`, `TiB`.
/// Every unit is binary (`4KB` is 4096 bytes). Empty text, signs, fractions,
/// unknown units and results above `u64::MAX` are errors. `0` is accepted;
/// callers decide whether it makes sense.
pub fn parse_size(text: &str) -> Result<u64, SizeError> {
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(SizeError::Empty);
    }
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(split);
    let unit = unit.trim_start();
    let text = text.to_owned();
    if digits.is_empty() {
        return Err(SizeError::NotANumber { text });
    }
    if unit.starts_with(['.', ',']) {
        return Err(SizeError::Fractional { text });
    }
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(SizeError::UnknownUnit {
                text,
                unit: unit.to_owned(),
            })
        }
    };
    let Ok(number) = digits.parse::<u64>() else {
        return Err(SizeError::TooLarge { text });
    };
    number
        .checked_mul(1u64 << shift)
        .ok_or(SizeError::TooLarge { text })
}

#[cfg(test)]
mod tests;
