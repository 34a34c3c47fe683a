//! What a scan keeps per GPU: its stream, its pools, the kernels loaded on
//! it and nvCOMP (loaded when a compressed page first needs it).

use std::sync::{Arc, OnceLock};

use super::compressed_check::{Checks, CompressedCheck, DecompressPlace};
use super::decode_error::DecodeError;
use super::options::DecodeOptions;
use crate::config::decode::SnappyDecoder;
use crate::cuda::{Device, DevicePool, PerDevice, PinnedPool, Stream};
use crate::decode::kernels::{KernelSet, StringWalks};
use crate::nvcomp::{Codec, Nvcomp, NvcompError};

/// Idle device memory the decoder's pool keeps per device for reuse, at
/// least: [`device_pool_bytes`] gives larger devices more.
pub(crate) const DEVICE_POOL_BYTES: usize = 4 << 30;
/// The most idle device memory the decoder's pool keeps per device.
pub(crate) const DEVICE_POOL_MAX_BYTES: usize = 16 << 30;

/// Idle device memory the decoder's pool keeps on a device of `total`
/// bytes: an eighth of it, within [`DEVICE_POOL_BYTES`] and
/// [`DEVICE_POOL_MAX_BYTES`]. A scan's working set grows with the groups
/// it keeps queued (`DecodeOptions::depth`): with four queued, Q1's columns
/// of SF 10 lineitem peaked at 8.2 GB on the H200, and a 4 GiB cap then
/// freed and made again about 150 buffers a scan (`cuMemFree` waits for
/// the whole device): 0.057 s instead of 0.044 s.
pub(crate) fn device_pool_bytes(total: usize) -> usize {
    (total / 8).clamp(DEVICE_POOL_BYTES, DEVICE_POOL_MAX_BYTES)
}

/// A decoder's device pool on `device`, keeping [`device_pool_bytes`] of
/// its memory idle (the least when its size cannot be read).
pub(crate) fn new_device_pool(device: Device) -> Arc<DevicePool> {
    let total = device.memory_info().map_or(0, |(_, total)| total);
    DevicePool::new(device, device_pool_bytes(total))
}
/// Streams for the kernels queued after their row group's value sizes
/// (`Gpu::late_streams`).
const LATE_STREAMS: usize = 4;

/// What a decode's own side takes from its GPU: the kernels (for its
/// filter), the pools (where its row groups land; its report's counters)
/// and how its planner checks compressed pages.
#[derive(Debug, Clone)]
pub(crate) struct JobResources {
    pub(crate) kernels: Arc<KernelSet>,
    pub(crate) pool: Arc<DevicePool>,
    pub(crate) pinned: Arc<PinnedPool>,
    pub(crate) checks: Checks,
}

/// One GPU's resources for a scan.
#[derive(Debug)]
pub(crate) struct Gpu {
    pub(crate) device: Device,
    /// Streams the row groups take in turn: one row group's copy overlaps
    /// another's decompression and kernels, and the kernels of several row
    /// groups fill the GPU together.
    pub(crate) streams: Vec<Stream>,
    /// The one stream nvCOMP runs on: concurrent nvCOMP calls on several
    /// streams read out of bounds on valid Snappy pages (seen on the H200
    /// with compute-sanitizer), so row groups take turns on it, ordered
    /// with events against their own streams.
    pub(crate) nvcomp_stream: Stream,
    /// The stream every row group's uploads (its bytes, its tasks) are
    /// queued on: apart from the row groups'
    /// streams, so that the next group's copies never wait behind the
    /// kernels queued for the group before (measured: they did, and
    /// nvCOMP then sat idle 3-4 ms per group).
    pub(crate) upload_stream: Stream,
    /// Where the groups' checks and pieces kernels run, after each group's
    /// copies, when `own_check_stream` (`DecodeOptions::check_stream`):
    /// the next group's copies (the copy engine) then run beside them (the
    /// SMs) instead of behind them. The groups take them in turn
    /// (`DecodeOptions::check_streams`), so that the scans of groups in
    /// flight overlap. Otherwise unused.
    pub(crate) check_streams: Vec<Stream>,
    pub(crate) own_check_stream: bool,
    /// Where the kernels of row groups with DELTA_BYTE_ARRAY strings run,
    /// queued once their values' sizes are known (`InFlight::queue_pending`),
    /// in turn: after their own stream's event, never behind the later
    /// row groups queued on that stream meanwhile.
    pub(crate) late_streams: Vec<Stream>,
    /// How the row groups' string walks run (`DecodeOptions::string_walks`).
    pub(crate) string_walks: StringWalks,
    pub(crate) pool: Arc<DevicePool>,
    pub(crate) pinned: Arc<PinnedPool>,
    pub(crate) kernels: Arc<KernelSet>,
    /// Where Snappy and LZ4 pages are checked before nvCOMP sees them.
    pub(crate) check: CompressedCheck,
    /// With [`CompressedCheck::Gpu`], the longest Snappy page the GPU checks.
    pub(crate) gpu_check_max: usize,
    /// Output bytes of a split Snappy page's pieces (0: pages whole).
    pub(crate) snappy_split: usize,
    /// What decompresses the scanned Snappy pages.
    pub(crate) snappy_decoder: SnappyDecoder,
    /// Where ZSTD and GZIP pages are decompressed.
    places: (DecompressPlace, DecompressPlace),
    nvcomp: OnceLock<Result<Arc<Nvcomp>, NvcompError>>,
}

impl Gpu {
    /// The resources on `device` (kernels compiled on the process's first
    /// call, loaded on the device's first).
    pub(crate) fn new(
        device: Device,
        pool: Arc<DevicePool>,
        options: &DecodeOptions,
    ) -> Result<Gpu, DecodeError> {
        let pinned = PinnedPool::shared(device);
        let streams = options.streams;
        let check_streams = options.check_streams;
        Ok(Gpu {
            device,
            streams: (0..streams.max(1))
                .map(|_| Stream::new(device))
                .collect::<Result<_, _>>()?,
            nvcomp_stream: Stream::new(device)?,
            upload_stream: Stream::new(device)?,
            check_streams: (0..check_streams.max(1))
                .map(|_| Stream::new(device))
                .collect::<Result<_, _>>()?,
            own_check_stream: options.check_stream,
            late_streams: (0..LATE_STREAMS)
                .map(|_| Stream::new(device))
                .collect::<Result<_, _>>()?,
            string_walks: options.string_walks,
            pinned,
            pool,
            kernels: KernelSet::get(device, options.kernels)?,
            check: options.check,
            gpu_check_max: options.gpu_check_max,
            snappy_split: if options.snappy_split {
                crate::decode::page::validate::SNAPPY_BLOCK
            } else {
                0
            },
            snappy_decoder: options.snappy_decoder,
            places: (options.zstd, options.gzip),
            nvcomp: OnceLock::new(),
        })
    }

    /// How the scan's planner checks compressed pages.
    pub(crate) fn checks(&self) -> Checks {
        Checks {
            check: self.check,
            gpu_max: self.gpu_check_max,
            split_bytes: self.snappy_split,
            zstd: self.places.0,
            gzip: self.places.1,
        }
    }

    /// What a decode's own side ([`super::scan_job::ScanJob`]) takes from
    /// this GPU.
    pub(crate) fn job_resources(&self) -> JobResources {
        JobResources {
            kernels: self.kernels.clone(),
            pool: self.pool.clone(),
            pinned: self.pinned.clone(),
            checks: self.checks(),
        }
    }

    /// The check stream of group `group` (they take the streams in turn).
    pub(crate) fn check_stream_for(&self, group: usize) -> &Stream {
        &self.check_streams[group % self.check_streams.len()]
    }

    /// nvCOMP, able to decompress `codec`.
    pub(crate) fn nvcomp(&self, codec: Codec) -> Result<Arc<Nvcomp>, DecodeError> {
        // An unsupported codec is refused by nvCOMP's own calls
        // (`NvcompError::CodecUnavailable`, naming the missing symbol).
        let _ = codec;
        Ok(self.nvcomp.get_or_init(Nvcomp::load).clone()?)
    }
}

/// The process's device pool for `device` (made on first use): every scan
/// shares it, so a scan after the first allocates nothing while its
/// working set fits in [`device_pool_bytes`] (`cuMemAlloc` of a large
/// buffer costs tenths of a millisecond, and `cuMemFree` waits for the
/// whole device). [`release_cached_memory`] gives the idle part back.
pub(crate) fn shared_device_pool(device: Device) -> Arc<DevicePool> {
    DEVICE_POOLS.get_or_make(device, || new_device_pool(device))
}

/// Frees the device and pinned memory that the decoder's pools keep idle
/// for the next scans (buffers still held by batches stay theirs and go
/// back to the pools when released). A process that is done decoding, or
/// that needs the memory for something else, calls this.
///
/// ```no_run
/// gdscan::decode::scan::release_cached_memory();
/// ```
pub fn release_cached_memory() {
    for pool in shared_device_pools() {
        pool.trim();
    }
    PinnedPool::trim_shared();
}

/// The process's shared device pools made so far ([`shared_device_pool`]),
/// one per device that has one.
pub(crate) fn shared_device_pools() -> Vec<Arc<DevicePool>> {
    DEVICE_POOLS.all()
}

/// The device pools made so far, per device ordinal.
static DEVICE_POOLS: PerDevice<DevicePool> = PerDevice::new();

#[cfg(test)]
mod pool_size_tests {
    use super::*;

    #[test]
    fn the_device_pool_is_an_eighth_of_the_card_within_its_bounds() {
        assert_eq!(device_pool_bytes(16 << 30), DEVICE_POOL_BYTES);
        assert_eq!(device_pool_bytes(80 << 30), 10 << 30);
        assert_eq!(device_pool_bytes(141 << 30), 16 << 30);
    }
}
