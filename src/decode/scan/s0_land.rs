//! Where a decode's row groups land, chosen per scan before the fetch:
//! device memory where the host needs no page body, else pinned host
//! memory ([`LandingMode`]).
//!
//! Landing on the device, the engine moves the bytes through its reused
//! bounce buffers (the raw scan's route: host memory is crossed once, in
//! buffers the caches keep warm), and the host reads only the page headers,
//! from the file ([`super::s1_plan_headers_from_file`]). Landing in pinned memory, the
//! engine's copies fill cold pinned buffers and the decoder's upload reads
//! them again: host memory is crossed three times, and that shared
//! bandwidth, not PCIe, can pace the fetch (BENCHMARKS.md has the figures).

use std::sync::Arc;

use parquet::basic::Compression;
use parquet::file::metadata::ParquetMetaData;

use super::compressed_check::{Checks, DecompressPlace};
use super::input::DecodeInput;
use super::s1_plan_row_group::checked_on_host;
use crate::config::decode::LandingMode;
use crate::cuda::{DevicePool, PinnedPool, PooledDeviceBuffer, PooledPinnedBuffer};
use crate::engine::{IoBufMut, Memory};
use crate::nvcomp::Codec;
use crate::parquet::fetch::{Allocator, ReadBack};
use crate::parquet::ScanPlan;
use crate::store::LocalSource;

/// Where a scan's row groups land.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Landing {
    /// Pinned host memory: the host walks the pages there.
    Pinned,
    /// Device memory: the host reads the page headers from the file.
    Device,
}

/// Where `inputs` land under `mode`: [`Landing::Device`] when every input
/// is a local file and every planned chunk's codec is one whose pages the
/// host never reads under `checks` (see [`LandingMode::Auto`]).
pub(crate) fn choose(mode: LandingMode, inputs: &[DecodeInput], checks: Checks) -> Landing {
    let device = mode == LandingMode::Auto
        && inputs.iter().all(|i| {
            LocalSource::of(i.source.as_ref()).is_some()
                && bodies_stay_on_device(&i.metadata, &i.plan, checks)
        });
    if device {
        Landing::Device
    } else {
        Landing::Pinned
    }
}

/// Whether no page of `plan`'s chunks needs its body on the host under
/// `checks` (decompressed, checked or framed there).
fn bodies_stay_on_device(metadata: &ParquetMetaData, plan: &ScanPlan, checks: Checks) -> bool {
    plan.chunks.iter().all(|c| {
        let codec = metadata.row_group(c.row_group).column(c.leaf).compression();
        stays_on_device(codec, checks)
    })
}

/// Whether pages of `codec` are never read on the host under `checks`.
fn stays_on_device(codec: Compression, checks: Checks) -> bool {
    // The longest page: a check that takes long pages to the host does.
    let checked_on_device =
        |codec: Codec| !checked_on_host(checks.check, codec, usize::MAX, checks.gpu_max);
    match codec {
        Compression::UNCOMPRESSED => true,
        Compression::SNAPPY => checked_on_device(Codec::Snappy),
        Compression::LZ4_RAW => checked_on_device(Codec::Lz4),
        Compression::ZSTD(_) => checks.zstd == DecompressPlace::Gpu,
        // Gzip's and legacy LZ4's framing is read on the host; Brotli and
        // LZO are the host's.
        _ => false,
    }
}

/// The fetch's allocator for a [`Landing`], from the decoder's pools.
#[derive(Debug, Clone)]
pub(crate) enum LandingAllocator {
    Pinned(Arc<PinnedPool>),
    Device(Arc<DevicePool>),
}

/// A row group's buffer where it landed. On the device it is shared: the
/// batch's string views (`DeviceBytes` over it) keep pointing into it
/// after the fetch's hold on the row group ends.
#[derive(Debug)]
pub(crate) enum Landed {
    Pinned(PooledPinnedBuffer),
    Device(Arc<PooledDeviceBuffer>),
}

impl Allocator for LandingAllocator {
    type Buffer = Landed;
    fn allocate(&self, len: usize) -> crate::parquet::error::Result<Landed> {
        Ok(match self {
            LandingAllocator::Pinned(pool) => Landed::Pinned(pool.allocate(len)?),
            LandingAllocator::Device(pool) => Landed::Device(Arc::new(pool.allocate(len)?)),
        })
    }
}

// SAFETY: either variant's memory is owned by the value (a pinned heap
// allocation, or a device allocation no other owner touches while the
// fetch fills it: the `Arc` is made by `allocate` and shared only after
// the row group has landed), valid for its length, and does not move.
unsafe impl IoBufMut for Landed {
    fn io_memory_mut(&mut self) -> Memory {
        match self {
            Landed::Pinned(buffer) => buffer.io_memory_mut(),
            Landed::Device(buffer) => Memory::Device {
                device: buffer.device(),
                ptr: buffer.device_ptr(),
                len: buffer.len(),
            },
        }
    }
}

impl ReadBack for Landed {
    fn read_back(&self, offset: usize, dst: &mut [u8]) -> crate::parquet::error::Result<()> {
        match self {
            Landed::Pinned(buffer) => buffer.read_back(offset, dst),
            Landed::Device(buffer) => buffer.as_ref().read_back(offset, dst),
        }
    }
}

impl Landed {
    /// The buffer's length.
    pub(crate) fn len(&self) -> usize {
        match self {
            Landed::Pinned(buffer) => buffer.len(),
            Landed::Device(buffer) => buffer.len(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::scan::CompressedCheck;
    use parquet::basic::{GzipLevel, ZstdLevel};

    fn checks(check: CompressedCheck, zstd: DecompressPlace) -> Checks {
        Checks {
            zstd,
            ..Checks::new(check)
        }
    }

    #[test]
    fn only_codecs_the_host_never_reads_land_on_the_device() {
        let scan = checks(CompressedCheck::Scan, DecompressPlace::Host);
        assert!(stays_on_device(Compression::UNCOMPRESSED, scan));
        assert!(stays_on_device(Compression::SNAPPY, scan));
        // LZ4 is checked on the host, Zstd decompressed there by default.
        assert!(!stays_on_device(Compression::LZ4_RAW, scan));
        assert!(!stays_on_device(
            Compression::ZSTD(ZstdLevel::default()),
            scan
        ));
        assert!(!stays_on_device(
            Compression::GZIP(GzipLevel::default()),
            scan
        ));
        assert!(!stays_on_device(Compression::LZ4, scan));
        assert!(!stays_on_device(
            Compression::BROTLI(Default::default()),
            scan
        ));
        // The host and gpu checks read Snappy pages on the host (all, or
        // the long ones).
        for check in [CompressedCheck::Host, CompressedCheck::Gpu] {
            assert!(!stays_on_device(
                Compression::SNAPPY,
                checks(check, DecompressPlace::Host)
            ));
        }
        let off = checks(CompressedCheck::Off, DecompressPlace::Gpu);
        assert!(stays_on_device(Compression::LZ4_RAW, off));
        assert!(stays_on_device(
            Compression::ZSTD(ZstdLevel::default()),
            off
        ));
        assert!(!stays_on_device(
            Compression::GZIP(GzipLevel::default()),
            off
        ));
    }
}
