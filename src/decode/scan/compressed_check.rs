//! Where Snappy and LZ4 pages are checked before nvCOMP sees them
//! ([`CompressedCheck`]), and the limits of the GPU's share of the checks.

/// Where Snappy and LZ4 pages are checked before nvCOMP sees them (a walk
/// over their elements proving that every read and write of the
/// decompressor stays inside the page).
///
/// The two sides are bound differently: the host's check costs CPU time per
/// byte (about 0.7 GB/s a core on copy-heavy pages), the GPU's (a warp per
/// page) lasts as long as the longest page it is given. So the default
/// splits the work: Snappy pages up to [`GPU_CHECK_MAX_BYTES`] stored on the
/// GPU, beside the previous group's nvCOMP call, the longer ones (and LZ4)
/// on the host. [`CompressedCheck::Scan`] spreads the GPU's walk over every part of
/// every page instead (slower so far: see its variant).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum CompressedCheck {
    /// Every Snappy and LZ4 page on the host's worker threads (rayon),
    /// before the upload.
    Host,
    /// Snappy pages up to [`GPU_CHECK_MAX_BYTES`] on the GPU after the
    /// upload, a warp per page, before nvCOMP (a refused page is never
    /// handed to it); longer ones and LZ4 on the host.
    Gpu,
    /// Every Snappy page on the GPU by the Snappy scan
    /// ([`crate::decode::kernels::snappy_scan`]: a thread per 2 KiB of each
    /// stream, four speculative walks each, so no thread walks a whole long
    /// page, and the host does none of it), which also finds the 64 KiB
    /// pieces nvCOMP then takes as jobs of their own; LZ4 on the host. The
    /// default: it keeps the host out of the check and no warp walks a
    /// whole long page.
    #[default]
    Scan,
    /// No check: only for input you trust.
    Off,
}

/// With [`CompressedCheck::Gpu`], Snappy pages whose stored stream is
/// longer than this are checked on the host instead: the GPU's check walks
/// a page with one warp, so it lasts as long as the group's longest page
/// (with l_comment's 1 MiB pages it outlasted nvCOMP's call), while the
/// host's cost is its total bytes. `GDSCAN_GPU_CHECK_MAX` (bytes) sets
/// another limit; a smaller one makes the host's share bound the decode, a
/// larger one the GPU's longest page.
pub const GPU_CHECK_MAX_BYTES: usize = 128 << 10;

/// The limit in effect ([`GPU_CHECK_MAX_BYTES`], or `GDSCAN_GPU_CHECK_MAX`).
pub(crate) fn gpu_check_max_bytes() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("GDSCAN_GPU_CHECK_MAX")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(GPU_CHECK_MAX_BYTES)
    })
}

/// Output bytes of the pieces a checked Snappy page is split into for
/// nvCOMP ([`crate::decode::page::validate::SNAPPY_BLOCK`], 64 KiB), or 0
/// to keep pages whole (`GDSCAN_SNAPPY_SPLIT=0`). nvCOMP gives each job one
/// small block, a serial walk of its stream, so a 1 MiB page would take as
/// long as the rest of its batch; in 64 KiB pieces its sixteen pieces run
/// at once.
pub(crate) fn snappy_split_bytes() -> usize {
    use crate::decode::page::validate::SNAPPY_BLOCK;
    static SPLIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *SPLIT.get_or_init(|| match std::env::var("GDSCAN_SNAPPY_SPLIT").as_deref() {
        Ok("0") => 0,
        _ => SNAPPY_BLOCK,
    })
}

impl CompressedCheck {
    /// `GDSCAN_DECODE_CHECK` (`host`, `gpu`, `scan` or `off`), else
    /// [`CompressedCheck::Scan`].
    pub fn from_env() -> CompressedCheck {
        std::env::var("GDSCAN_DECODE_CHECK")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or_default()
    }
}

impl std::str::FromStr for CompressedCheck {
    type Err = String;
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
