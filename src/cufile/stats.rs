//! cuFile's own statistics (levels 1 and 3): what stage 2 actually did.

use std::mem::MaybeUninit;

use cudarc::cufile::sys::{CUfileStatsLevel1_t, CUfileStatsLevel3_t};
use serde::Serialize;

use super::error::CuFileError;
use super::error::Result;
use super::library::api;
use super::status::check;

/// The variable cuFile users set to choose a stats level; gdscan honours it.
pub(crate) const STATS_LEVEL_ENV: &str = "CUFILE_STATS_LEVEL";

/// Per-GPU read and write counts (level 3).
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct GpuStats {
    /// Index in cuFile's table.
    pub index: usize,
    /// The GPU's UUID, hex.
    pub uuid: String,
    /// Bytes read into this GPU.
    pub read_bytes: u64,
    /// All reads.
    pub n_total_reads: u64,
    /// Reads served by nvidia-fs (real GDS).
    pub n_nvfs_reads: u64,
    /// Reads served by cuFile's POSIX compat path.
    pub n_posix_reads: u64,
    /// Peer-to-peer reads.
    pub n_p2p_reads: u64,
    /// Unaligned reads.
    pub n_unaligned_reads: u64,
    /// Failed reads.
    pub n_reads_err: u64,
    /// All writes.
    pub n_total_writes: u64,
    /// Writes via nvidia-fs.
    pub n_nvfs_writes: u64,
    /// Writes via the POSIX compat path.
    pub n_posix_writes: u64,
}

/// The counters read back from cuFile.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct CuFileStats {
    /// The level in force (0 = off).
    pub level: i32,
    /// Successful read operations (level ≥ 1).
    pub read_ops: u64,
    /// Failed read operations.
    pub read_errors: u64,
    /// Bytes read (level ≥ 1).
    pub read_bytes: u64,
    /// Successful write operations.
    pub write_ops: u64,
    /// Bytes written.
    pub write_bytes: u64,
    /// Per GPU (level 3 only).
    pub gpus: Vec<GpuStats>,
}

impl CuFileStats {
    /// The counts accumulated since `before` (an earlier [`read`]).
    pub fn since(&self, before: &CuFileStats) -> CuFileStats {
        let gpus = self
            .gpus
            .iter()
            .map(|g| {
                let b = before
                    .gpus
                    .iter()
                    .find(|x| x.index == g.index)
                    .cloned()
                    .unwrap_or_default();
                GpuStats {
                    index: g.index,
                    uuid: g.uuid.clone(),
                    read_bytes: g.read_bytes.saturating_sub(b.read_bytes),
                    n_total_reads: g.n_total_reads.saturating_sub(b.n_total_reads),
                    n_nvfs_reads: g.n_nvfs_reads.saturating_sub(b.n_nvfs_reads),
                    n_posix_reads: g.n_posix_reads.saturating_sub(b.n_posix_reads),
                    n_p2p_reads: g.n_p2p_reads.saturating_sub(b.n_p2p_reads),
                    n_unaligned_reads: g.n_unaligned_reads.saturating_sub(b.n_unaligned_reads),
                    n_reads_err: g.n_reads_err.saturating_sub(b.n_reads_err),
                    n_total_writes: g.n_total_writes.saturating_sub(b.n_total_writes),
                    n_nvfs_writes: g.n_nvfs_writes.saturating_sub(b.n_nvfs_writes),
                    n_posix_writes: g.n_posix_writes.saturating_sub(b.n_posix_writes),
                }
            })
            .collect();
        CuFileStats {
            level: self.level,
            read_ops: self.read_ops.saturating_sub(before.read_ops),
            read_errors: self.read_errors.saturating_sub(before.read_errors),
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            write_ops: self.write_ops.saturating_sub(before.write_ops),
            write_bytes: self.write_bytes.saturating_sub(before.write_bytes),
            gpus,
        }
    }

    /// Reads summed over GPUs: (total, nvfs, posix).
    pub fn read_split(&self) -> (u64, u64, u64) {
        self.gpus.iter().fold((0, 0, 0), |(t, n, p), g| {
            (t + g.n_total_reads, n + g.n_nvfs_reads, p + g.n_posix_reads)
        })
    }
}

/// The level to use: `CUFILE_STATS_LEVEL` when set (0..=3), else 3 when
/// `requested`, else None (leave cuFile's setting alone).
pub(crate) fn wanted_level(
    env: Option<&str>,
    requested: bool,
) -> std::result::Result<Option<i32>, String> {
    match env.map(str::trim) {
        Some(text) => match text.parse::<i32>() {
            Ok(level @ 0..=3) => Ok(Some(level)),
            _ => Err(format!(
                "invalid value {text:?} for {STATS_LEVEL_ENV}: expected 0, 1, 2 or 3"
            )),
        },
        None => Ok(requested.then_some(3)),
    }
}

/// Sets the level (see `wanted_level`) and starts the counters, once per
/// process (starting twice is not idempotent in cuFile 1.15: a second start
/// left the level at 0 on the H200). Returns the level in force. Call after
/// the driver opened; measure a span as the difference of two [`read`]s
/// ([`CuFileStats::since`]).
pub fn start(requested: bool) -> Result<i32> {
    static STARTED: std::sync::OnceLock<std::result::Result<(), CuFileError>> =
        std::sync::OnceLock::new();
    STARTED
        .get_or_init(|| {
            let api = api().map_err(CuFileError::Unavailable)?;
            let env = std::env::var(STATS_LEVEL_ENV).ok();
            let level =
                wanted_level(env.as_deref(), requested).map_err(CuFileError::Unavailable)?;
            let unusable = |e| CuFileError::Unusable(Box::new(e));
            // SAFETY: plain calls into an open driver.
            unsafe {
                if let Some(level) = level {
                    check("cuFileSetStatsLevel", (api.set_stats_level)(level)).map_err(unusable)?;
                }
                check("cuFileStatsStart", (api.stats_start)()).map_err(unusable)?;
            }
            Ok(())
        })
        .clone()?;
    current_level()
}

/// The stats level in force.
pub(crate) fn current_level() -> Result<i32> {
    let api = api().map_err(CuFileError::Unavailable)?;
    let mut level = 0;
    // SAFETY: valid out pointer.
    check("cuFileGetStatsLevel", unsafe {
        (api.get_stats_level)(&mut level)
    })?;
    Ok(level)
}

/// Reads the counters for the level in force.
pub fn read() -> Result<CuFileStats> {
    let api = api().map_err(CuFileError::Unavailable)?;
    let level = current_level()?;
    let mut out = CuFileStats {
        level,
        ..Default::default()
    };
    if level >= 3 {
        // The level-3 structure is large (per-GPU tables): keep it on the heap.
        let mut l3: Box<MaybeUninit<CUfileStatsLevel3_t>> = Box::new(MaybeUninit::zeroed());
        // SAFETY: a valid, zeroed structure of the right type.
        check("cuFileGetStatsL3", unsafe {
            (api.get_stats_l3)(l3.as_mut_ptr())
        })?;
        // SAFETY: integers only; zeroed or filled, valid.
        let l3 = unsafe { l3.assume_init() };
        fill_l1(&mut out, &l3.detailed.basic);
        let n = (l3.num_gpus as usize).min(l3.per_gpu_stats.len());
        out.gpus = l3.per_gpu_stats[..n]
            .iter()
            .enumerate()
            .map(|(index, g)| GpuStats {
                index,
                uuid: g.uuid.iter().map(|b| format!("{:02x}", *b as u8)).collect(),
                read_bytes: g.read_bytes,
                n_total_reads: g.n_total_reads,
                n_nvfs_reads: g.n_nvfs_reads,
                n_posix_reads: g.n_posix_reads,
                n_p2p_reads: g.n_p2p_reads,
                n_unaligned_reads: g.n_unaligned_reads,
                n_reads_err: g.n_reads_err,
                n_total_writes: g.n_total_writes,
                n_nvfs_writes: g.n_nvfs_writes,
                n_posix_writes: g.n_posix_writes,
            })
            .collect();
    } else if level >= 1 {
        let mut l1 = MaybeUninit::<CUfileStatsLevel1_t>::zeroed();
        // SAFETY: as above.
        check("cuFileGetStatsL1", unsafe {
            (api.get_stats_l1)(l1.as_mut_ptr())
        })?;
        // SAFETY: as above.
        fill_l1(&mut out, &unsafe { l1.assume_init() });
    }
    Ok(out)
}

fn fill_l1(out: &mut CuFileStats, l1: &CUfileStatsLevel1_t) {
    out.read_ops = l1.read_ops.ok;
    out.read_errors = l1.read_ops.err;
    out.read_bytes = l1.read_bytes;
    out.write_ops = l1.write_ops.ok;
    out.write_bytes = l1.write_bytes;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_honours_the_environment_then_the_request() {
        assert_eq!(wanted_level(None, false), Ok(None));
        assert_eq!(wanted_level(None, true), Ok(Some(3)));
        assert_eq!(wanted_level(Some("1"), true), Ok(Some(1)));
        assert_eq!(wanted_level(Some(" 2 "), false), Ok(Some(2)));
        assert!(wanted_level(Some("7"), true)
            .unwrap_err()
            .contains(STATS_LEVEL_ENV));
        assert!(wanted_level(Some("x"), true).is_err());
    }

    #[test]
    fn since_subtracts_per_gpu() {
        let before = CuFileStats {
            level: 3,
            read_ops: 2,
            gpus: vec![GpuStats {
                index: 0,
                n_total_reads: 5,
                n_posix_reads: 5,
                ..Default::default()
            }],
            ..Default::default()
        };
        let after = CuFileStats {
            level: 3,
            read_ops: 7,
            gpus: vec![GpuStats {
                index: 0,
                n_total_reads: 9,
                n_posix_reads: 9,
                ..Default::default()
            }],
            ..Default::default()
        };
        let d = after.since(&before);
        assert_eq!(d.read_ops, 5);
        assert_eq!(d.read_split(), (4, 0, 4));
    }

    #[test]
    fn read_split_sums_gpus() {
        let s = CuFileStats {
            gpus: vec![
                GpuStats {
                    n_total_reads: 3,
                    n_posix_reads: 3,
                    ..Default::default()
                },
                GpuStats {
                    n_total_reads: 2,
                    n_nvfs_reads: 2,
                    ..Default::default()
                },
            ],
            ..Default::default()
        };
        assert_eq!(s.read_split(), (5, 2, 3));
    }
}
