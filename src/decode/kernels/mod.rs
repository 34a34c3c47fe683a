//! The decode kernels: CUDA C compiled at run time with NVRTC, and their
//! launch wrappers.
//!
//! # What runs, per row group
//!
//! The host fills one [`PageTask`] per kept data page (and one [`DictTask`]
//! per BYTE_ARRAY dictionary page), uploads the arrays, zeroes the validity
//! bitmaps and BOOLEAN value bitmaps, and queues on one stream
//! ([`KernelSet::decode_row_group`] does the four in order):
//!
//! 1. `gds_dict_views` (one block per byte-array dictionary): the
//!    dictionary's PLAIN values become 16-byte views, so that dictionary pages
//!    of strings are a 16-byte gather like any fixed-width dictionary page;
//! 2. `gds_byte_array_walk` (one block per PLAIN byte-array page, staging
//!    it in shared memory): the value offsets of the page, into its scratch
//!    (by default, [`StringWalks::Spread`], both walks are spread over a
//!    block per 16 KiB chunk of every section instead, three launches
//!    `gds_spread_*`; [`StringWalks`] says the other ways);
//! 3. `gds_decode_pages` (one block of 256 threads per page, whatever its
//!    kind): definition levels → validity bits and value indices (block scan),
//!    then values PLAIN or by dictionary, converted, to their rows;
//! 4. `gds_gather_status` (one thread per task): every page's `[error,
//!    error_index, null_count, value_count]` and every dictionary's `[error,
//!    0, 0, found]` into one array, which the host copies back once (after
//!    an event) to check the whole row group.
//!
//! No kernel synchronises the device; ordering is the stream's.
//!
//! # Output layout (what the host must provide)
//!
//! - fixed width: `out_width` bytes per row at `out_values` (16-byte
//!   aligned), rows `out_row..out_row + num_values`; null rows are zeroed;
//! - booleans and validity: Arrow bitmaps (LSB first) written with `atomicOr`
//!   in 4-byte words: zeroed before the launch, 4-byte aligned, sized with
//!   [`launch::bitmap_bytes`];
//! - byte arrays: 16-byte views (Arrow's Utf8View/BinaryView layout: length;
//!   then ≤ 12 bytes inline, or a 4-byte prefix, the buffer index and the
//!   offset from `view_buffer_base`). PLAIN views point into the page's
//!   `data`; dictionary views into the dictionary page's data. Null rows get
//!   an all-zero view (an empty inline value).
//!
//! # Errors
//!
//! Every read is checked against its section's length and the dictionary's
//! size; every loop is bounded by the page's bytes or values. A corrupt page
//! gets the first error found in its `error` word ([`PageErrorCode`]) and the
//! level index in `error_index`; its output rows are then undefined (never
//! written outside the page's rows).
//!
//! # Compilation
//!
//! [`KernelSet::get`] compiles the sources once per process and target with
//! NVRTC ([`nvrtc`]; PTX for `compute_XX` from the device's compute
//! capability, or a cubin when NVRTC is newer than the driver) and loads the
//! result once per device.

pub mod check;
pub mod disk_cache;
pub mod error;
pub mod launch;
pub mod layout;
pub mod nest;
pub mod nvrtc;
pub mod snappy_scan;
pub mod task;

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, OnceLock};

use crate::cuda::driver;
use crate::cuda::module::{Function, LaunchConfig, Module};
use crate::cuda::{Device, Stream};

pub use error::KernelError;
pub use nvrtc::{CodeKind, Target};
pub use task::{
    Conversion, DictTask, Encoding, Kind, PageErrorCode, PageTask, FLAG_ROW_WINDOW, FLAG_V1_LEVELS,
    FLAG_V1_REP_LEVELS,
};

/// The decode kernels loaded on one device.
#[derive(Debug)]
pub struct KernelSet {
    device: Device,
    target: Target,
    config: KernelConfig,
    module: Module,
    decode_pages: Function,
    dba_sizes: Function,
    byte_array_walk: Function,
    dict_views: Function,
    string_walks: Function,
    /// `gds_spread_spec`, `gds_spread_join`, `gds_spread_emit`.
    spread: [Function; 3],
    gather_status: Function,
    /// `gds_nest_count`, `gds_nest_scan`, `gds_nest_write`
    /// (`cuda/nest.cu`).
    nest: [Function; 3],
    check_snappy: Function,
    snappy_pieces: Function,
    /// The scan's kernels, in launch order (`cuda/snappy_scan.cu`).
    scan: [Function; 8],
    snappy_decode: Function,
}

/// Device addresses of a Snappy batch's arrays, for
/// [`KernelSet::check_snappy`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnappyJobs {
    /// `n_jobs` compressed pointers (rewritten for refused jobs).
    pub src: u64,
    /// `n_jobs` compressed sizes (rewritten for refused jobs).
    pub src_len: u64,
    /// `n_jobs` uncompressed sizes (the page headers').
    pub dst_len: u64,
    /// Jobs.
    pub n_jobs: u32,
    /// `n_jobs` × [`check::CHECK_WORDS`] words of results.
    pub results: u64,
    /// A device byte holding 0: an empty Snappy stream.
    pub dummy: u64,
    /// Jobs with longer streams are left alone (reported sound): the
    /// caller has checked them elsewhere.
    pub max_len: u64,
}

/// Device addresses of the Snappy scan's arrays, for
/// [`KernelSet::snappy_scan`]; sizes from [`snappy_scan::ScanLayout`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnappyScan {
    /// The page table ([`snappy_scan::SCAN_PAGE_WORDS`] words a page).
    pub pages: u64,
    /// Pages.
    pub n_pages: u32,
    /// The page of each segment (u32).
    pub seg_page: u64,
    /// Segments.
    pub n_segs: u32,
    /// The bitmaps of the speculative walks (u32 words).
    pub bitmap: u64,
    /// Per segment, [`snappy_scan::SCAN_STARTS`] each (by default): where its
    /// speculative walks left it (u32; a later walk that stopped on walk
    /// 0's path: the top bit and where it stopped).
    pub exits: u64,
    /// Per speculative walk (as `exits`),
    /// [`snappy_scan::SCAN_RECORD_WORDS`] u32: its elements' output bytes,
    /// those of its first elements, its elements' copy margins.
    pub outputs: u64,
    /// The later walks left to walk whole: a count, then their numbers
    /// (u32, 1 + [`snappy_scan::ScanLayout::n_later_walks`]).
    pub rest: u64,
    /// Per segment: where the real chain enters it (u32).
    pub entries: u64,
    /// Per segment, 2 u32: where the real chain met a speculative walk
    /// (`u32::MAX` where none), and which.
    pub meets: u64,
    /// Per segment: its output bytes (u64).
    pub outs: u64,
    /// Per segment: the page's output bytes before it (u64).
    pub before: u64,
    /// Per segment: its first fault (4 u32).
    pub faults: u64,
    /// Piece starts (u32).
    pub starts: u64,
    /// Per page: [`snappy_scan::SCAN_RESULT_WORDS`] result words.
    pub verdicts: u64,
    /// The Snappy call's arrays: compressed pointers, sizes, output sizes.
    pub src: u64,
    /// See `src`.
    pub src_len: u64,
    /// See `src`.
    pub dst_len: u64,
    /// Per job, a task of `gds_snappy_pieces` ([`check::PIECE_WORDS`] u64).
    pub tasks: u64,
    /// Jobs of the Snappy call the pages have.
    pub n_jobs: u32,
    /// A device byte holding 0: an empty Snappy stream.
    pub dummy: u64,
    /// Per segment, [`snappy_scan::SCAN_SEGMENT_WORDS`] u32: the real
    /// chain's element starts, for [`KernelSet::snappy_decode`]; 0 when
    /// nvCOMP decodes the pages (the scan then writes every job for it).
    pub real: u64,
}

/// Device addresses of a scanned Snappy batch's arrays, for
/// [`KernelSet::snappy_decode`]: the scan's (as [`SnappyScan`]) and the
/// Snappy call's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SnappyDecode {
    /// The scan's page table.
    pub pages: u64,
    /// Pages.
    pub n_pages: u32,
    /// Jobs of the pages (numbered from the first page's).
    pub n_jobs: u32,
    /// The scan's `entries`, `starts`, `verdicts` and `real`.
    pub entries: u64,
    /// See `entries`.
    pub starts: u64,
    /// See `entries`.
    pub verdicts: u64,
    /// See `entries`.
    pub real: u64,
    /// The Snappy call's output pointers (u64 a job).
    pub dst: u64,
    /// The Snappy call's output bytes (u64 a job), written.
    pub actual: u64,
    /// The Snappy call's statuses (i32 a job, nvCOMP's codes), written.
    pub statuses: u64,
}

/// Device addresses and counts of one row group's kernel work, for
/// [`KernelSet::decode_row_group`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RowGroupLaunch {
    /// Device address of `n_tasks` [`PageTask`]s.
    pub tasks: u64,
    /// Page tasks.
    pub n_tasks: u32,
    /// Device address of `n_dicts` [`DictTask`]s (0 when none).
    pub dicts: u64,
    /// Byte-array dictionary tasks.
    pub n_dicts: u32,
    /// Device address of the status array: [`launch::status_bytes`] bytes,
    /// 16-byte aligned.
    pub status: u64,
    /// Whether any task is a PLAIN byte-array page (runs the walk).
    pub has_plain_byte_arrays: bool,
    /// How the string walks run.
    pub walks: StringWalks,
    /// The spread walk's tables ([`StringWalks::Spread`]; unused otherwise).
    pub spread: SpreadLaunch,
    /// The nesting kernels' work (none when the row group has no nested
    /// leaf).
    pub nest: NestLaunch,
}

/// Device addresses and counts of a row group's nesting work
/// ([`nest`]'s kernels, after the pages).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NestLaunch {
    /// Device address of `n_tasks` [`nest::NestTask`]s.
    pub tasks: u64,
    /// Nest tasks.
    pub n_tasks: u32,
    /// The most entries of a task (the tiles' grid).
    pub max_entries: u32,
}

/// Device addresses of a row group's spread-walk tables
/// ([`launch::SpreadTable`] gives their sizes).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SpreadLaunch {
    /// The item table: `n_dicts + n_tasks + 1` u32, each item's first chunk
    /// (dictionaries first, then the page tasks; the last entry is the
    /// number of chunks).
    pub first: u64,
    /// Chunks of every item.
    pub n_chunks: u32,
    /// [`launch::SPREAD_STATE_WORDS`] u32 per chunk.
    pub state: u64,
    /// A chunk's bitmap per chunk ([`launch::spread_bitmap_bytes`]).
    pub bits: u64,
}

pub use crate::config::decode::{KernelConfig, StringWalks};

impl KernelSet {
    /// The kernels on `device`, compiled with `config`: compiled on the
    /// first call in the process per target and config, and loaded on the
    /// first call per device and config; later calls return the same set.
    pub fn get(device: Device, config: KernelConfig) -> Result<Arc<KernelSet>, KernelError> {
        type Sets = HashMap<(usize, KernelConfig), Arc<KernelSet>>;
        static SETS: OnceLock<Mutex<Sets>> = OnceLock::new();
        let sets = SETS.get_or_init(|| Mutex::new(HashMap::new()));
        let mut map = sets.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(set) = map.get(&(device.ordinal(), config)) {
            return Ok(set.clone());
        }
        let set = Arc::new(Self::load(device, config)?);
        map.insert((device.ordinal(), config), set.clone());
        Ok(set)
    }

    fn load(device: Device, config: KernelConfig) -> Result<KernelSet, KernelError> {
        let info = nvrtc::nvrtc_info()?;
        let driver = driver::driver_version()?;
        let capability = device.compute_capability()?;
        let target = nvrtc::choose_target(capability, driver, info.version, &info.archs)?;
        let compiled = nvrtc::compile(target, config)?;
        let module = match target.code {
            CodeKind::Ptx => {
                let ptx = compiled.ptx().ok_or(KernelError::Compile {
                    target: target.arch_name(),
                    log: "NVRTC's PTX is not UTF-8".to_string(),
                })?;
                Module::load_ptx(device, ptx)?
            }
            CodeKind::Cubin => Module::load_cubin(device, &compiled.image)?,
        };
        Ok(KernelSet {
            device,
            target,
            config,
            decode_pages: module.function("gds_decode_pages")?,
            dba_sizes: module.function("gds_dba_sizes")?,
            byte_array_walk: module.function("gds_byte_array_walk")?,
            dict_views: module.function("gds_dict_views")?,
            string_walks: module.function("gds_string_walks")?,
            spread: [
                module.function("gds_spread_spec")?,
                module.function("gds_spread_join")?,
                module.function("gds_spread_emit")?,
            ],
            gather_status: module.function("gds_gather_status")?,
            nest: [
                module.function("gds_nest_count")?,
                module.function("gds_nest_scan")?,
                module.function("gds_nest_write")?,
            ],
            check_snappy: module.function("gds_check_snappy")?,
            snappy_pieces: module.function("gds_snappy_pieces")?,
            scan: [
                module.function("gds_snappy_spec")?,
                module.function("gds_snappy_spec_later")?,
                module.function("gds_snappy_spec_rest")?,
                module.function("gds_snappy_chain")?,
                module.function("gds_snappy_outs")?,
                module.function("gds_snappy_prefix")?,
                module.function("gds_snappy_verify")?,
                module.function("gds_snappy_finish")?,
            ],
            snappy_decode: module.function("gds_snappy_decode")?,
            module,
        })
    }

    /// The device the kernels are loaded on.
    pub fn device(&self) -> Device {
        self.device
    }

    /// The values the kernels were compiled with.
    pub fn config(&self) -> KernelConfig {
        self.config
    }

    /// What NVRTC compiled for (e.g. `compute_90`).
    pub fn target(&self) -> Target {
        self.target
    }

    /// The loaded module.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The kernels as (name, function), e.g. to read their register counts.
    pub fn functions(&self) -> [(&'static str, &Function); 23] {
        [
            ("gds_decode_pages", &self.decode_pages),
            ("gds_dba_sizes", &self.dba_sizes),
            ("gds_byte_array_walk", &self.byte_array_walk),
            ("gds_dict_views", &self.dict_views),
            ("gds_string_walks", &self.string_walks),
            ("gds_spread_spec", &self.spread[0]),
            ("gds_spread_join", &self.spread[1]),
            ("gds_spread_emit", &self.spread[2]),
            ("gds_gather_status", &self.gather_status),
            ("gds_nest_count", &self.nest[0]),
            ("gds_nest_scan", &self.nest[1]),
            ("gds_nest_write", &self.nest[2]),
            ("gds_check_snappy", &self.check_snappy),
            ("gds_snappy_pieces", &self.snappy_pieces),
            ("gds_snappy_spec", &self.scan[0]),
            ("gds_snappy_spec_later", &self.scan[1]),
            ("gds_snappy_spec_rest", &self.scan[2]),
            ("gds_snappy_chain", &self.scan[3]),
            ("gds_snappy_outs", &self.scan[4]),
            ("gds_snappy_prefix", &self.scan[5]),
            ("gds_snappy_verify", &self.scan[6]),
            ("gds_snappy_finish", &self.scan[7]),
            ("gds_snappy_decode", &self.snappy_decode),
        ]
    }

    /// Queues `gds_check_snappy` over the `n_jobs` jobs of a Snappy batch
    /// (nvCOMP's arrays: compressed pointers and sizes, uncompressed sizes,
    /// each `n_jobs` 8-byte words). A refused job's pointer and size are
    /// rewritten to `dummy`, a one-byte empty stream; `results` receives
    /// [`check::CHECK_WORDS`] words per job ([`check::snappy_check_error`]).
    ///
    /// # Safety
    /// Every address must be live device memory of the sizes said, each
    /// compressed pointer valid for its size, kept alive and unused by
    /// other work until the stream has passed this launch.
    pub unsafe fn check_snappy(
        &self,
        stream: &Stream,
        jobs: SnappyJobs,
    ) -> Result<(), KernelError> {
        if jobs.n_jobs == 0 {
            return Ok(());
        }
        // One warp per job.
        let blocks = jobs.n_jobs.div_ceil(check::CHECK_BLOCK / 32);
        let config = LaunchConfig::linear(blocks.min(launch::MAX_GRID), check::CHECK_BLOCK);
        let SnappyJobs {
            mut src,
            mut src_len,
            mut dst_len,
            mut n_jobs,
            mut results,
            mut dummy,
            mut max_len,
        } = jobs;
        self.launch(
            &self.check_snappy,
            stream,
            config,
            &mut [
                ptr(&mut src),
                ptr(&mut src_len),
                ptr(&mut dst_len),
                ptr(&mut n_jobs),
                ptr(&mut results),
                ptr(&mut dummy),
                ptr(&mut max_len),
            ],
        )
    }

    /// Queues the Snappy scan (`cuda/snappy_scan.cu`: six kernels, a thread
    /// per segment or per page) and then `gds_snappy_pieces` over its
    /// tasks: every page checked, its verdict and split in `verdicts`, its
    /// jobs in the Snappy call's arrays rewritten (refused pages pointed at
    /// `dummy`) and split pages' pieces written as streams of their own.
    ///
    /// # Safety
    /// Every address must be live device memory of the sizes
    /// [`snappy_scan::ScanLayout`] gives, the page table and segment table
    /// uploaded, the pages' streams and the pieces' buffer valid, all kept
    /// alive and unused by other work until the stream has passed the
    /// launches.
    pub unsafe fn snappy_scan(&self, stream: &Stream, a: &SnappyScan) -> Result<(), KernelError> {
        // SAFETY: as the caller promised.
        unsafe { self.snappy_scan_marked(stream, a, |_| Ok(())) }
    }

    /// [`KernelSet::snappy_scan`], calling `after(kernel)` once each of its
    /// kernels is queued (`scan_spec` after the three speculative launches,
    /// `scan_chain`, `scan_outs`, `scan_prefix`, `scan_verify`,
    /// `scan_finish`, `scan_pieces`), so that the decoder's trace can time
    /// them one by one.
    ///
    /// # Safety
    /// As [`KernelSet::snappy_scan`].
    pub unsafe fn snappy_scan_marked(
        &self,
        stream: &Stream,
        a: &SnappyScan,
        mut after: impl FnMut(&'static str) -> Result<(), KernelError>,
    ) -> Result<(), KernelError> {
        if a.n_pages == 0 {
            return Ok(());
        }
        let per = |n: u32| {
            LaunchConfig::linear(
                n.div_ceil(snappy_scan::SCAN_BLOCK)
                    .clamp(1, launch::MAX_GRID),
                snappy_scan::SCAN_BLOCK,
            )
        };
        let (segs, pages) = (per(a.n_segs), per(a.n_pages));
        let mut v = *a;
        let [spec, spec_later, spec_rest, chain, outs, prefix, verify, finish] = &self.scan;
        // Walk 0 of every segment, then the later walks, which stop on
        // walk 0's path, then those still out of step after a few
        // elements, packed into full warps (snappy_scan.cu).
        let later = v
            .n_segs
            .saturating_mul((self.config.scan_starts as u32).saturating_sub(1));
        for (kernel, threads) in [(spec, v.n_segs), (spec_later, later), (spec_rest, later)] {
            if threads == 0 {
                continue;
            }
            self.launch(
                kernel,
                stream,
                per(threads),
                &mut [
                    ptr(&mut v.pages),
                    ptr(&mut v.seg_page),
                    ptr(&mut v.n_segs),
                    ptr(&mut v.bitmap),
                    ptr(&mut v.exits),
                    ptr(&mut v.outputs),
                    ptr(&mut v.rest),
                ],
            )?;
        }
        after("scan_spec")?;
        self.launch(
            chain,
            stream,
            pages,
            &mut [
                ptr(&mut v.pages),
                ptr(&mut v.n_pages),
                ptr(&mut v.bitmap),
                ptr(&mut v.exits),
                ptr(&mut v.outputs),
                ptr(&mut v.entries),
                ptr(&mut v.meets),
                ptr(&mut v.outs),
                ptr(&mut v.verdicts),
            ],
        )?;
        after("scan_chain")?;
        if v.n_segs > 0 {
            self.launch(
                outs,
                stream,
                segs,
                &mut [
                    ptr(&mut v.pages),
                    ptr(&mut v.seg_page),
                    ptr(&mut v.n_segs),
                    ptr(&mut v.bitmap),
                    ptr(&mut v.outputs),
                    ptr(&mut v.meets),
                    ptr(&mut v.outs),
                ],
            )?;
        }
        after("scan_outs")?;
        self.launch(
            prefix,
            stream,
            pages,
            &mut [
                ptr(&mut v.pages),
                ptr(&mut v.n_pages),
                ptr(&mut v.outs),
                ptr(&mut v.before),
            ],
        )?;
        after("scan_prefix")?;
        if v.n_segs > 0 {
            self.launch(
                verify,
                stream,
                segs,
                &mut [
                    ptr(&mut v.pages),
                    ptr(&mut v.seg_page),
                    ptr(&mut v.n_segs),
                    ptr(&mut v.entries),
                    ptr(&mut v.before),
                    ptr(&mut v.bitmap),
                    ptr(&mut v.exits),
                    ptr(&mut v.outputs),
                    ptr(&mut v.meets),
                    ptr(&mut v.faults),
                    ptr(&mut v.starts),
                    ptr(&mut v.verdicts),
                    ptr(&mut v.real),
                ],
            )?;
        }
        after("scan_verify")?;
        let mut own_decoder = u32::from(v.real != 0);
        self.launch(
            finish,
            stream,
            pages,
            &mut [
                ptr(&mut v.pages),
                ptr(&mut v.n_pages),
                ptr(&mut v.faults),
                ptr(&mut v.before),
                ptr(&mut v.outs),
                ptr(&mut v.starts),
                ptr(&mut v.verdicts),
                ptr(&mut v.src),
                ptr(&mut v.src_len),
                ptr(&mut v.dst_len),
                ptr(&mut v.tasks),
                ptr(&mut v.dummy),
                ptr(&mut own_decoder),
            ],
        )?;
        after("scan_finish")?;
        self.snappy_pieces(stream, v.tasks, v.n_jobs)?;
        after("scan_pieces")
    }

    /// Queues `gds_snappy_decode` (`cuda/snappy_decode.cu`, a warp per
    /// job) over the jobs of a scan queued with `real` set: every page the
    /// scan found sound decompressed into the Snappy call's output
    /// pointers, each job's output bytes and status (nvCOMP's codes)
    /// written to the call's arrays, as nvCOMP writes them.
    ///
    /// # Safety
    /// The scan's arrays as [`KernelSet::snappy_scan`] asks, that scan
    /// queued before on this stream (or waited for), and the Snappy call's
    /// arrays and every output buffer live device memory of the sizes the
    /// layout gives, kept alive and unused by other work until the stream
    /// has passed the launch.
    pub unsafe fn snappy_decode(
        &self,
        stream: &Stream,
        a: &SnappyDecode,
    ) -> Result<(), KernelError> {
        if a.n_pages == 0 || a.n_jobs == 0 {
            return Ok(());
        }
        let warps = snappy_scan::UNSNAP_BLOCK / 32;
        let config = LaunchConfig::linear(
            a.n_jobs.div_ceil(warps).clamp(1, launch::MAX_GRID),
            snappy_scan::UNSNAP_BLOCK,
        );
        let mut v = *a;
        self.launch(
            &self.snappy_decode,
            stream,
            config,
            &mut [
                ptr(&mut v.pages),
                ptr(&mut v.n_pages),
                ptr(&mut v.n_jobs),
                ptr(&mut v.entries),
                ptr(&mut v.starts),
                ptr(&mut v.verdicts),
                ptr(&mut v.real),
                ptr(&mut v.dst),
                ptr(&mut v.actual),
                ptr(&mut v.statuses),
            ],
        )
    }

    /// Queues `gds_snappy_pieces` over `n_tasks` tasks at `tasks`
    /// ([`check::PIECE_WORDS`] words each: the piece's elements, where its
    /// stream goes, their length, its output length; see
    /// [`check::piece_streams`]).
    ///
    /// # Safety
    /// Every address must be live device memory of the sizes said (the
    /// destination [`check::varint_len`] bytes longer than the elements),
    /// kept alive and unused by other work until the stream has passed
    /// this launch.
    pub unsafe fn snappy_pieces(
        &self,
        stream: &Stream,
        tasks: u64,
        n_tasks: u32,
    ) -> Result<(), KernelError> {
        if n_tasks == 0 {
            return Ok(());
        }
        let config = LaunchConfig::linear(n_tasks.min(launch::MAX_GRID), check::PIECES_BLOCK);
        let (mut a, mut b) = (tasks, n_tasks);
        self.launch(
            &self.snappy_pieces,
            stream,
            config,
            &mut [ptr(&mut a), ptr(&mut b)],
        )
    }

    /// Queues `gds_dict_views` over `n_dicts` dictionary tasks at `dicts`.
    ///
    /// # Safety
    /// `dicts` must hold `n_dicts` [`DictTask`]s in device memory whose
    /// addresses and lengths describe live device allocations, all kept alive
    /// and unused by other work until the stream has passed this launch.
    pub unsafe fn dict_views(
        &self,
        stream: &Stream,
        dicts: u64,
        n_dicts: u32,
    ) -> Result<(), KernelError> {
        let Some(config) = launch::dict_views_config(n_dicts) else {
            return Ok(());
        };
        let (mut a, mut b) = (dicts, n_dicts);
        self.launch(
            &self.dict_views,
            stream,
            config,
            &mut [ptr(&mut a), ptr(&mut b)],
        )
    }

    /// Queues `gds_byte_array_walk` over `n_tasks` page tasks at `tasks`
    /// (only PLAIN byte-array pages do work).
    ///
    /// # Safety
    /// As [`KernelSet::decode_pages`].
    pub unsafe fn byte_array_walk(
        &self,
        stream: &Stream,
        tasks: u64,
        n_tasks: u32,
    ) -> Result<(), KernelError> {
        let Some(config) = launch::byte_array_walk_config(n_tasks) else {
            return Ok(());
        };
        let (mut a, mut b) = (tasks, n_tasks);
        self.launch(
            &self.byte_array_walk,
            stream,
            config,
            &mut [ptr(&mut a), ptr(&mut b)],
        )
    }

    /// Queues `gds_string_walks`: [`KernelSet::dict_views`] over `n_dicts`
    /// dictionaries and [`KernelSet::byte_array_walk`] over `n_tasks` page
    /// tasks in one launch, a block each, so that the two run at once.
    ///
    /// # Safety
    /// As [`KernelSet::dict_views`] and [`KernelSet::byte_array_walk`].
    pub unsafe fn string_walks(
        &self,
        stream: &Stream,
        dicts: u64,
        n_dicts: u32,
        tasks: u64,
        n_tasks: u32,
    ) -> Result<(), KernelError> {
        let Some(config) = launch::string_walks_config(n_dicts, n_tasks) else {
            return Ok(());
        };
        let (mut a, mut b, mut c, mut d) = (dicts, n_dicts, tasks, n_tasks);
        self.launch(
            &self.string_walks,
            stream,
            config,
            &mut [ptr(&mut a), ptr(&mut b), ptr(&mut c), ptr(&mut d)],
        )
    }

    /// Queues the spread walk (`cuda/byte_array_spread.cu`: a block per
    /// chunk, a thread per item, a block per chunk) over a row group's
    /// dictionaries and page tasks, with the tables of `work.spread`: the
    /// same results as [`KernelSet::dict_views`] and
    /// [`KernelSet::byte_array_walk`].
    ///
    /// # Safety
    /// As [`KernelSet::dict_views`] and [`KernelSet::byte_array_walk`];
    /// `work.spread`'s tables as [`SpreadLaunch`] says, the item table
    /// uploaded, all alive until the stream has passed the launches.
    pub unsafe fn spread_walks(
        &self,
        stream: &Stream,
        work: &RowGroupLaunch,
    ) -> Result<(), KernelError> {
        let Some(items) = launch::spread_join_config(work.n_dicts, work.n_tasks) else {
            return Ok(());
        };
        let chunks = launch::spread_chunks_config(work.spread.n_chunks);
        let SpreadLaunch {
            mut first,
            mut state,
            mut bits,
            ..
        } = work.spread;
        let (mut dicts, mut n_dicts, mut tasks, mut n_tasks) =
            (work.dicts, work.n_dicts, work.tasks, work.n_tasks);
        let configs = [chunks, Some(items), chunks];
        for (function, config) in self.spread.iter().zip(configs) {
            let Some(config) = config else { continue };
            self.launch(
                function,
                stream,
                config,
                &mut [
                    ptr(&mut dicts),
                    ptr(&mut n_dicts),
                    ptr(&mut tasks),
                    ptr(&mut n_tasks),
                    ptr(&mut first),
                    ptr(&mut state),
                    ptr(&mut bits),
                ],
            )?;
        }
        Ok(())
    }

    /// Queues `gds_decode_pages` over `n_tasks` page tasks at `tasks`. PLAIN
    /// byte-array pages need [`KernelSet::byte_array_walk`] queued before on
    /// the same stream, dictionary byte-array pages their dictionary's
    /// [`KernelSet::dict_views`].
    ///
    /// # Safety
    /// `tasks` must hold `n_tasks` [`PageTask`]s in device memory whose
    /// addresses and lengths describe live device allocations (inputs
    /// readable, outputs writable and not used by other work), all kept alive
    /// until the stream has passed this launch.
    pub unsafe fn decode_pages(
        &self,
        stream: &Stream,
        tasks: u64,
        n_tasks: u32,
    ) -> Result<(), KernelError> {
        let Some(config) = launch::decode_pages_config(n_tasks) else {
            return Ok(());
        };
        let (mut a, mut b) = (tasks, n_tasks);
        self.launch(
            &self.decode_pages,
            stream,
            config,
            &mut [ptr(&mut a), ptr(&mut b)],
        )
    }

    /// Queues `gds_dba_sizes` over `n_tasks` page tasks at `tasks`: the
    /// lengths of every BYTE_ARRAY DELTA_BYTE_ARRAY page decoded into its
    /// scratch, its values' count and bytes written into its task
    /// (`plain_count`, `value_bytes`). The host reads them back and gives
    /// each such page its values' buffer (`dict`, `dict_len`) before
    /// [`KernelSet::decode_row_group`].
    ///
    /// # Safety
    /// As [`KernelSet::decode_pages`].
    pub unsafe fn dba_sizes(
        &self,
        stream: &Stream,
        tasks: u64,
        n_tasks: u32,
    ) -> Result<(), KernelError> {
        let Some(config) = launch::decode_pages_config(n_tasks) else {
            return Ok(());
        };
        let (mut a, mut b) = (tasks, n_tasks);
        self.launch(
            &self.dba_sizes,
            stream,
            config,
            &mut [ptr(&mut a), ptr(&mut b)],
        )
    }

    /// Queues `gds_gather_status`: [`launch::STATUS_WORDS`] words per page
    /// task then per dictionary task, into `out`.
    ///
    /// # Safety
    /// `tasks` and `dicts` as for the other launches; `out` a device
    /// allocation of [`launch::status_bytes`] bytes, 16-byte aligned, alive
    /// until the stream has passed this launch.
    pub unsafe fn gather_status(
        &self,
        stream: &Stream,
        tasks: u64,
        n_tasks: u32,
        dicts: u64,
        n_dicts: u32,
        out: u64,
    ) -> Result<(), KernelError> {
        let Some(config) = launch::gather_status_config(n_tasks, n_dicts) else {
            return Ok(());
        };
        let (mut a, mut b, mut c, mut d, mut e) = (tasks, n_tasks, dicts, n_dicts, out);
        self.launch(
            &self.gather_status,
            stream,
            config,
            &mut [
                ptr(&mut a),
                ptr(&mut b),
                ptr(&mut c),
                ptr(&mut d),
                ptr(&mut e),
            ],
        )
    }

    /// Queues a row group's kernels in order: dictionary views, the walk
    /// (when there are PLAIN byte-array pages), the pages, the status.
    ///
    /// # Safety
    /// As each of the four launches.
    pub unsafe fn decode_row_group(
        &self,
        stream: &Stream,
        work: &RowGroupLaunch,
    ) -> Result<(), KernelError> {
        // SAFETY: as the caller promised.
        unsafe { self.decode_row_group_marked(stream, work, |_| Ok(())) }
    }

    /// [`KernelSet::decode_row_group`], calling `after(kernel)` once each
    /// kernel is queued (with the kernel's name), so that a caller can
    /// record events between them (the decoder's trace does).
    ///
    /// # Safety
    /// As [`KernelSet::decode_row_group`].
    pub unsafe fn decode_row_group_marked(
        &self,
        stream: &Stream,
        work: &RowGroupLaunch,
        mut after: impl FnMut(&'static str) -> Result<(), KernelError>,
    ) -> Result<(), KernelError> {
        // SAFETY (every launch): as the caller promised.
        match work.walks {
            StringWalks::Together => {
                let walked = if work.has_plain_byte_arrays {
                    work.n_tasks
                } else {
                    0
                };
                unsafe { self.string_walks(stream, work.dicts, work.n_dicts, work.tasks, walked)? };
                after("string_walks")?;
            }
            StringWalks::Spread => {
                unsafe { self.spread_walks(stream, work)? };
                after("string_walks")?;
            }
            StringWalks::Apart => {
                unsafe { self.dict_views(stream, work.dicts, work.n_dicts)? };
                after("dict_views")?;
                if work.has_plain_byte_arrays {
                    unsafe { self.byte_array_walk(stream, work.tasks, work.n_tasks)? };
                    after("byte_array_walk")?;
                }
            }
        }
        unsafe { self.decode_pages(stream, work.tasks, work.n_tasks)? };
        after("decode_pages")?;
        if work.nest.n_tasks > 0 {
            unsafe { self.nest(stream, &work.nest)? };
            after("nest")?;
        }
        unsafe {
            self.gather_status(
                stream,
                work.tasks,
                work.n_tasks,
                work.dicts,
                work.n_dicts,
                work.status,
            )?
        };
        after("gather_status")
    }

    /// Queues the nesting kernels of a row group ([`nest`]): the count,
    /// scan and write of `work`'s nest tasks, over the level bytes
    /// `gds_decode_pages` wrote for the page tasks with level outputs.
    ///
    /// # Safety
    /// The nest tasks, their level bytes, outputs, tiles and status live
    /// device memory of the sizes [`nest`] says (status and bitmaps
    /// zeroed), queued after the pages' decode on `stream`, all kept alive
    /// until the stream has passed these launches.
    pub unsafe fn nest(&self, stream: &Stream, work: &NestLaunch) -> Result<(), KernelError> {
        let (Some(tiles), Some(scan)) = (
            nest::nest_tiles_config(work.n_tasks, work.max_entries),
            nest::nest_scan_config(work.n_tasks),
        ) else {
            return Ok(());
        };
        for (function, config) in [
            (&self.nest[0], tiles),
            (&self.nest[1], scan),
            (&self.nest[2], tiles),
        ] {
            let (mut a, mut b) = (work.tasks, work.n_tasks);
            unsafe { self.launch(function, stream, config, &mut [ptr(&mut a), ptr(&mut b)])? };
        }
        Ok(())
    }

    unsafe fn launch(
        &self,
        function: &Function,
        stream: &Stream,
        config: LaunchConfig,
        params: &mut [*mut c_void],
    ) -> Result<(), KernelError> {
        function.launch(stream, config, params)?;
        Ok(())
    }
}

fn ptr<T>(value: &mut T) -> *mut c_void {
    (value as *mut T).cast()
}

/// One task's entry of the status array `gds_gather_status` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TaskStatus {
    /// 0, or a [`PageErrorCode`] as written.
    pub error: u32,
    /// The level index of the error (pages).
    pub error_index: u32,
    /// Null rows (pages).
    pub null_count: u32,
    /// Values decoded (pages), entries found (dictionaries).
    pub count: u32,
}

impl TaskStatus {
    /// The error, if any (`Err(code)` for a number no kernel writes).
    pub fn error(&self) -> Option<Result<PageErrorCode, u32>> {
        (self.error != 0).then(|| PageErrorCode::from_code(self.error).ok_or(self.error))
    }
}

/// Splits the status array copied back (bytes, little-endian words) into
/// the page tasks' and the dictionary tasks' entries; `None` when its length
/// is not [`launch::status_bytes`]`(n_tasks, n_dicts)`.
pub fn parse_status(
    bytes: &[u8],
    n_tasks: u32,
    n_dicts: u32,
) -> Option<(Vec<TaskStatus>, Vec<TaskStatus>)> {
    if bytes.len() as u64 != launch::status_bytes(n_tasks, n_dicts) {
        return None;
    }
    let word = |b: &[u8]| u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
    let entry_bytes = (launch::STATUS_WORDS * 4) as usize;
    let mut all = bytes.chunks_exact(entry_bytes).map(|e| TaskStatus {
        error: word(&e[0..4]),
        error_index: word(&e[4..8]),
        null_count: word(&e[8..12]),
        count: word(&e[12..16]),
    });
    let pages: Vec<TaskStatus> = all.by_ref().take(n_tasks as usize).collect();
    let dicts: Vec<TaskStatus> = all.collect();
    Some((pages, dicts))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_parsing() {
        let mut bytes = Vec::new();
        for w in [0u32, 0, 3, 17, 11, 5, 0, 5, 12, 0, 0, 2] {
            bytes.extend_from_slice(&w.to_le_bytes());
        }
        let (pages, dicts) = parse_status(&bytes, 2, 1).unwrap();
        assert_eq!(pages.len(), 2);
        assert_eq!(dicts.len(), 1);
        assert_eq!(pages[0].error(), None);
        assert_eq!(pages[0].null_count, 3);
        assert_eq!(pages[0].count, 17);
        assert_eq!(pages[1].error(), Some(Ok(PageErrorCode::DictIndex)));
        assert_eq!(pages[1].error_index, 5);
        assert_eq!(dicts[0].error(), Some(Ok(PageErrorCode::DictOverrun)));
        assert_eq!(dicts[0].count, 2);
        assert!(parse_status(&bytes, 3, 1).is_none());
        assert!(parse_status(&bytes[..40], 2, 1).is_none());
        let odd = TaskStatus {
            error: 999,
            ..TaskStatus::default()
        };
        assert_eq!(odd.error(), Some(Err(999)));
    }

    #[test]
    fn a_ptxas_report_gives_each_functions_spills_and_registers() {
        let report = "ptxas info    : Compiling entry function 'gds_a' for 'sm_90'\n\
            ptxas info    : Function properties for gds_a\n\
            ptxas         .     256 bytes stack frame, 96 bytes spill stores, 36 bytes spill loads\n\
            ptxas info    : Used 64 registers, used 1 barriers, 256 bytes cumulative stack size\n\
            ptxas info    : Function properties for helper\n\
            ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
        assert_eq!(
            nvrtc::FunctionResources::find(report, "gds_a"),
            Some(nvrtc::FunctionResources {
                spill_stores: 96,
                spill_loads: 36,
                registers: 64
            })
        );
        // A device function has no "Used" line; an absent one no line at all.
        assert_eq!(nvrtc::FunctionResources::find(report, "helper"), None);
        assert_eq!(nvrtc::FunctionResources::find(report, "gds_b"), None);
    }

    /// The page kernel keeps its tile loop's state in registers at every
    /// cap `GDSCAN_DECODE_MIN_BLOCKS` sets (64 a thread by default): spill
    /// loads are local-memory reads on every tile, which an inlined wide
    /// conversion or the values' places held in registers bring back. Read
    /// from NVRTC's cubin for sm_90 (the H200), no GPU needed; skips as
    /// `every_kernel_compiles_with_nvrtc`. `gds_snappy_decode` spills
    /// nothing, nor do the nesting kernels at `GDSCAN_NEST_MIN_BLOCKS=4`.
    #[test]
    fn the_page_kernel_spills_little_at_its_register_cap() {
        let required = std::env::var("GDSCAN_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
        for min_blocks in [4, 3, 2] {
            let config = KernelConfig {
                decode_min_blocks: min_blocks,
                nest_min_blocks: 4,
                ..KernelConfig::DEFAULT
            };
            let report = match nvrtc::ptxas_report(90, config) {
                Ok(report) => report,
                Err(e) if !required => {
                    eprintln!("SKIPPED the_page_kernel_spills_little_at_its_register_cap: {e} (GDSCAN_REQUIRE_NVRTC=1 makes this a failure)");
                    return;
                }
                Err(e) => panic!("GDSCAN_REQUIRE_NVRTC=1 but {e}"),
            };
            let pages = nvrtc::FunctionResources::find(&report, "gds_decode_pages")
                .unwrap_or_else(|| panic!("no gds_decode_pages in ptxas's report:\n{report}"));
            eprintln!("gds_decode_pages for sm_90, {min_blocks} blocks an SM: {pages:?}");
            // An SM has 64 K registers; ptxas allocates them in eights.
            let cap = (65536 / (launch::DECODE_BLOCK * min_blocks)) & !7;
            assert!(pages.registers <= cap, "{min_blocks} blocks: {pages:?}");
            assert!(pages.spill_loads <= 64, "{min_blocks} blocks: {pages:?}");
            if min_blocks == 4 {
                // The Snappy decoder too (its warps wait on loads; local
                // memory would add to every element).
                let unsnap = nvrtc::FunctionResources::find(&report, "gds_snappy_decode")
                    .unwrap_or_else(|| panic!("no gds_snappy_decode in ptxas's report:\n{report}"));
                eprintln!("gds_snappy_decode for sm_90: {unsnap:?}");
                assert_eq!(
                    (unsnap.spill_stores, unsnap.spill_loads),
                    (0, 0),
                    "{unsnap:?}"
                );
                // The nesting kernels at GDSCAN_NEST_MIN_BLOCKS=4.
                for nest in ["gds_nest_count", "gds_nest_scan", "gds_nest_write"] {
                    let r = nvrtc::FunctionResources::find(&report, nest)
                        .unwrap_or_else(|| panic!("no {nest} in ptxas's report"));
                    eprintln!("{nest} for sm_90, 4 blocks an SM: {r:?}");
                    assert_eq!((r.spill_stores, r.spill_loads), (0, 0), "{nest}: {r:?}");
                }
            }
        }
    }

    /// CI's NVRTC check: every kernel source compiles to PTX (the layout
    /// asserts of the generated header included) and the PTX declares every
    /// entry point. Skips, saying why, when NVRTC is absent, unless
    /// GDSCAN_REQUIRE_NVRTC=1 (set by .ci/run), which makes absence a failure.
    #[test]
    fn every_kernel_compiles_with_nvrtc() {
        let required = std::env::var("GDSCAN_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
        let info = match nvrtc::nvrtc_info() {
            Ok(info) => info,
            Err(e) if !required => {
                eprintln!("SKIPPED every_kernel_compiles_with_nvrtc: {e} (GDSCAN_REQUIRE_NVRTC=1 makes this a failure)");
                return;
            }
            Err(e) => panic!("GDSCAN_REQUIRE_NVRTC=1 but {e}"),
        };
        let target = nvrtc::host_target(&info.archs).expect("NVRTC lists no architecture");
        let compiled = match nvrtc::compile_uncached(target, KernelConfig::DEFAULT) {
            Ok(c) => c,
            Err(e) => panic!("{e}"),
        };
        let ptx = compiled.ptx().expect("PTX text");
        // For reading the machine code without a GPU (registers, spills):
        // `ptxas -v --gpu-name sm_90` on the file (docs/gpu-decode.md).
        if let Some(path) = std::env::var_os("GDSCAN_PTX_OUT") {
            std::fs::write(&path, ptx).expect("GDSCAN_PTX_OUT is writable");
        }
        for entry in nvrtc::entry_points() {
            assert!(nvrtc::ptx_has_entry(ptx, entry), "PTX lacks {entry}");
        }
        let isa = nvrtc::ptx_isa_version(ptx).expect(".version line");
        assert!(
            compiled.log.is_empty(),
            "NVRTC warnings for {target}:\n{}",
            compiled.log
        );
        eprintln!(
            "NVRTC {}.{} compiled {} kernels for {target}: {} bytes of PTX, ISA {}.{}",
            info.version.0,
            info.version.1,
            nvrtc::entry_points().count(),
            ptx.len(),
            isa.0,
            isa.1
        );
    }

    /// The layout asserts really bite: a header claiming another offset
    /// makes the compile fail (so a drift between the Rust and C structs
    /// cannot pass CI). Skips like the test above.
    #[test]
    fn a_layout_drift_fails_the_compile() {
        let required = std::env::var("GDSCAN_REQUIRE_NVRTC").is_ok_and(|v| v == "1");
        let info = match nvrtc::nvrtc_info() {
            Ok(info) => info,
            Err(e) if !required => {
                eprintln!("SKIPPED a_layout_drift_fails_the_compile: {e}");
                return;
            }
            Err(e) => panic!("GDSCAN_REQUIRE_NVRTC=1 but {e}"),
        };
        let target = nvrtc::host_target(&info.archs).expect("NVRTC lists no architecture");
        let header = task::generated_header(KernelConfig::DEFAULT).replace(
            "GDS_OFFSETOF(PageTask, error) == 144",
            "GDS_OFFSETOF(PageTask, error) == 148",
        );
        let err = nvrtc::compile_with_header(target, &header).unwrap_err();
        match err {
            KernelError::Compile { log, .. } => {
                assert!(
                    log.contains("static assertion failed")
                        && log.contains("PageTask.error is not at the Rust offset"),
                    "{log}"
                )
            }
            other => panic!("expected a compile error, got {other}"),
        }
    }
}
