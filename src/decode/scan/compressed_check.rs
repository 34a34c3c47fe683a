//! Where Snappy and LZ4 pages are checked before nvCOMP sees them
//! ([`CompressedCheck`]), and the limits of the GPU's share of the checks.

pub use crate::config::decode::{CompressedCheck, DecompressPlace};

/// With [`CompressedCheck::Gpu`], Snappy pages whose stored stream is
/// longer than this are checked on the host instead: the GPU's check walks
/// a page with one warp, so it lasts as long as the group's longest page
/// (with l_comment's 1 MiB pages it outlasted nvCOMP's call), while the
/// host's cost is its total bytes. `GDSCAN_GPU_CHECK_MAX` (bytes) sets
/// another limit; a smaller one makes the host's share bound the decode, a
/// larger one the GPU's longest page.
pub const GPU_CHECK_MAX_BYTES: usize = 128 << 10;

/// How a scan checks its compressed pages: where, the GPU's limit and the
/// Snappy pieces' size (from `DecodeOptions`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Checks {
    /// Where pages are checked.
    pub(crate) check: CompressedCheck,
    /// With [`CompressedCheck::Gpu`], the longest stored Snappy page the
    /// GPU checks.
    pub(crate) gpu_max: usize,
    /// Output bytes of a split Snappy page's pieces, 0 to keep pages whole.
    pub(crate) split_bytes: usize,
    /// Where ZSTD pages are decompressed.
    pub(crate) zstd: DecompressPlace,
    /// Where GZIP pages are decompressed.
    pub(crate) gzip: DecompressPlace,
}

impl Checks {
    /// `check` with the default limit and pieces.
    #[cfg(test)]
    pub(crate) fn new(check: CompressedCheck) -> Checks {
        Checks {
            check,
            gpu_max: GPU_CHECK_MAX_BYTES,
            split_bytes: crate::decode::page::validate::SNAPPY_BLOCK,
            zstd: DecompressPlace::Host,
            gzip: DecompressPlace::Host,
        }
    }
}
