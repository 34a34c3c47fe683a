//! A group of row groups through the GPU together: one nvCOMP call per
//! codec over every compressed page of the group, then each row group's
//! kernels on its own stream.
//!
//! nvCOMP decompresses a page (one chunk) with one small thread block, and
//! a Snappy page is a serial stream: a batch takes about as long as its
//! slowest page, whatever the number of pages, until the batch fills the
//! GPU. One row group's pages (a few hundred) left the H200 mostly idle
//! (measured with Nsight Compute: 10.6 ms for one row group's 212 Snappy
//! pages of SF 10 lineitem's Q6 columns, against 0.2 ms for the decode
//! kernel of the same pages), and nvCOMP runs on one stream (concurrent
//! calls on several streams read out of bounds), so row groups took turns.
//! A group hands nvCOMP thousands of pages at once, and a Snappy page over
//! 64 KiB goes to it as one job per 64 KiB piece of its output (Snappy
//! compressors work in 64 KiB fragments), so a 1 MiB page no longer
//! outlasts the rest of its batch.
//!
//! Order of the work (no host wait anywhere here), each step a stage of
//! [`GroupQueue`] after the host's sorting of the pages ([`GroupJobs`])
//! and layout of the arrays ([`GroupArrays`]):
//! 1. upload and check ([`GroupQueue::upload`], [`GroupQueue::check`]),
//!    on the upload stream: each row group's uploads
//!    ([`super::s2_upload_row_group::stage`]), then the group's job arrays; then,
//!    on the check stream after an event recorded behind those copies (on
//!    the upload stream itself with `check_stream` off): the pieces of the
//!    pages the host checked and split (`gds_snappy_pieces`); with
//!    [`CompressedCheck::Scan`] (the default) the Snappy scan of every
//!    Snappy page ([`crate::decode::kernels::KernelSet::snappy_scan`],
//!    which also writes the pieces of those that split, and with
//!    [`SnappyDecoder::Gdscan`] `gds_snappy_decode` right behind it, which
//!    decompresses them in place of nvCOMP), or with
//!    [`CompressedCheck::Gpu`] the check of the short Snappy pages
//!    (`gds_check_snappy`): a refused page is pointed at an empty stream,
//!    so nvCOMP never reads it; then the `uploaded` event. The next
//!    group's uploads so run beside this group's check and nvCOMP call,
//!    never behind its kernels;
//! 2. decompress ([`GroupQueue::decompress`]), on the nvCOMP stream,
//!    after `uploaded`: one call per codec, the actual sizes, statuses
//!    and check results down, the `decompressed` event;
//! 3. kernels ([`GroupQueue::kernels`]): each row group's stream waits
//!    for `decompressed` (or `uploaded`, when it has no compressed page),
//!    runs the kernels, copies its status down and records the row
//!    group's event;
//! 4. finish ([`InFlight::finish`], later): the row group's event waited
//!    for, its statuses checked, its batch built.
//!
//! With a timeline asked for ([`TraceGroup`]), timed events mark each
//! phase.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use super::compressed_check::CompressedCheck;
use super::decode_error::DecodeError;
use super::gpu_resources::Gpu;
use super::report::{codec_counts, RowGroupTimes};
use super::s2_upload_row_group::Staged;
use super::s4_group_results::{GroupShared, SyncOnDrop};
use super::s6_finish_row_group::{queue_row_group_kernels, InFlight};
use super::trace::{Trace, CHECK_STREAM, NVCOMP_STREAM, UPLOAD_STREAM};
use crate::config::decode::SnappyDecoder;
use crate::cuda::{Event, PooledDeviceBuffer, PooledPinnedBuffer, Stream};
use crate::decode::kernels::check::{piece_streams, PieceStream, PIECE_WORDS};
use crate::decode::kernels::snappy_scan::{
    ScanInput, ScanLayout, SCAN_RECORD_WORDS, SCAN_RESULT_WORDS, SCAN_SEGMENT_WORDS,
};
use crate::decode::kernels::{SnappyDecode, SnappyJobs, SnappyScan};
use crate::nvcomp::{BatchArgs, Codec};

/// Alignment of the sections of the group's nvCOMP arrays.
const ALIGN: usize = 256;

/// The device addresses of sections at `offsets` of an allocation at `base`.
fn dev<const N: usize>(base: u64, offsets: [usize; N]) -> [u64; N] {
    offsets.map(|o| base + o as u64)
}

fn align(n: usize) -> usize {
    n.next_multiple_of(ALIGN)
}

/// The decoder thread's host tables for queueing a group, kept from one
/// group to the next so that their memory is not faulted in afresh each
/// time (about 0.7 MB of them a group of SF 10 lineitem's columns).
#[derive(Default)]
pub(crate) struct QueueScratch {
    scan: ScanLayout,
    words: Vec<u64>,
}

impl QueueScratch {
    /// Lays the Snappy scan out for kernels compiled with `walk_starts`
    /// walks per segment.
    pub(crate) fn set_walk_starts(&mut self, walk_starts: usize) {
        self.scan.set_walk_starts(walk_starts);
    }
}

/// Queues the decompression and the kernels of `staged` (row groups whose
/// uploads are queued, `staged[i]` on `streams[i]`); the group's checks run
/// on `group_check_stream` when the GPU has its own check streams.
///
/// The stages, in order: [`GroupJobs::sort`] and [`GroupArrays::lay_out`]
/// on the host, then [`GroupQueue::upload`], [`GroupQueue::check`],
/// [`GroupQueue::decompress`] and [`GroupQueue::kernels`]; each row group
/// is then finished by [`InFlight::finish`].
pub(crate) fn launch_group(
    gpu: &Gpu,
    staged: Vec<Staged>,
    streams: &[&Stream],
    group_check_stream: &Stream,
    scratch: &mut QueueScratch,
    trace: Option<&mut TraceGroup<'_>>,
) -> Result<Vec<InFlight>, DecodeError> {
    let part_started = Instant::now();
    let mut jobs = GroupJobs::sort(gpu, &staged, &mut scratch.scan);
    let scan = &scratch.scan;
    let mut decompressed = None;
    let mut queue = GroupQueue {
        gpu,
        timeline: Timeline {
            trace,
            part_started,
        },
        uploaded: Event::new(gpu.device)?,
        shared: GroupShared::default(),
    };
    if jobs.n_jobs == 0 {
        // Nothing to decompress: the event right behind the row groups'
        // uploads.
        let up_stream = &gpu.upload_stream;
        queue.timeline.mark("uploaded", None, up_stream)?;
        queue.uploaded.record(up_stream)?;
    } else {
        // gds_snappy_decode reads the pieces in place: no streams of their own.
        let regions = if own_snappy_decoder(gpu, &jobs, scan) {
            0
        } else {
            scan.region_bytes
        };
        let pieces_buffer = match jobs.piece_bytes + regions {
            0 => None,
            n => Some(gpu.pool.allocate(n)?),
        };
        let pieces_base = pieces_buffer.as_ref().map_or(0, |b| b.device_ptr());
        let arrays = GroupArrays::lay_out(
            gpu,
            &staged,
            &mut jobs,
            scan,
            pieces_base,
            &mut scratch.words,
        );
        queue.timeline.end_part("queue_arrays");
        let upload = queue.upload(&scratch.words, &arrays)?;
        queue.check(group_check_stream, &arrays, scan, &upload, pieces_buffer)?;
        decompressed = Some(queue.decompress(&arrays, upload)?);
    }
    queue.kernels(staged, streams, jobs, decompressed)
}

/// Where the group's pages go to nvCOMP: sorted on the host before any
/// array is laid out, completed by [`GroupArrays::lay_out`], and handed to
/// the row groups in flight by [`GroupQueue::kernels`].
struct GroupJobs {
    /// Each page's nvCOMP jobs (by row group, then page): one per page, or
    /// one per piece of a split Snappy page; filled in by the layout.
    nv_index: Vec<Vec<Range<usize>>>,
    /// Each row group's pages that go to nvCOMP; counted by the layout.
    compressed_pages: Vec<usize>,
    /// Whether every Snappy page goes through the Snappy scan
    /// (`KernelSet::snappy_scan`), which checks it and splits it.
    scan_on_gpu: bool,
    /// Each page's number in the scan, if it is scanned.
    scan_of: Vec<Vec<Option<usize>>>,
    /// The scan's pages.
    scan_inputs: Vec<ScanInput>,
    /// Without the scan, the pieces of the Snappy pages the host walked
    /// and split, laid out in one buffer of `piece_bytes`.
    pieces: Vec<Vec<Option<Vec<PieceStream>>>>,
    piece_bytes: usize,
    n_pieces: usize,
    /// nvCOMP's jobs in all.
    n_jobs: usize,
}

impl GroupJobs {
    /// Sorts the pages of `staged` between the Snappy scan, the host's
    /// pieces and whole jobs, and lays out the scan's tables in `scan`.
    fn sort(gpu: &Gpu, staged: &[Staged], scan: &mut ScanLayout) -> GroupJobs {
        let nv_index: Vec<Vec<Range<usize>>> =
            staged.iter().map(|s| vec![0..0; s.jobs.len()]).collect();
        let compressed_pages = vec![0usize; staged.len()];
        let scan_on_gpu = gpu.check == CompressedCheck::Scan;
        let split = gpu.snappy_split > 0;
        let mut scan_inputs = Vec::new();
        let scan_of: Vec<Vec<Option<usize>>> = staged
            .iter()
            .map(|s| {
                s.jobs
                    .iter()
                    .map(|job| {
                        (scan_on_gpu && job.codec == Codec::Snappy).then(|| {
                            scan_inputs.push(ScanInput {
                                src: job.src,
                                len: job.src_len,
                                size: job.dst_len,
                                dst: job.dst,
                            });
                            scan_inputs.len() - 1
                        })
                    })
                    .collect()
            })
            .collect();
        scan.refill(&scan_inputs, split, 0);
        let mut piece_bytes = 0usize;
        let pieces: Vec<Vec<Option<Vec<PieceStream>>>> = staged
            .iter()
            .map(|s| {
                s.jobs
                    .iter()
                    .map(|job| match &job.pieces {
                        Some(p) if job.codec == Codec::Snappy && p.count() > 1 && !scan_on_gpu => {
                            Some(piece_streams(p, job.src_len, job.dst_len, &mut piece_bytes))
                        }
                        _ => None,
                    })
                    .collect()
            })
            .collect();
        let n_pieces: usize = pieces.iter().flatten().flatten().map(Vec::len).sum();
        let n_split = pieces.iter().flatten().filter(|p| p.is_some()).count();
        let n_pages: usize = staged.iter().map(|s| s.jobs.len()).sum();
        let n_jobs = n_pages - n_split + n_pieces - scan.n_pages() + scan.n_jobs();
        GroupJobs {
            nv_index,
            compressed_pages,
            scan_on_gpu,
            scan_of,
            scan_inputs,
            pieces,
            piece_bytes,
            n_pieces,
            n_jobs,
        }
    }
}

/// One nvCOMP call of the group.
#[derive(Clone, Copy)]
struct Call {
    codec: Codec,
    /// Its first job among the group's.
    first: usize,
    /// Its jobs.
    n: usize,
    /// The word its arrays start at.
    at: usize,
    /// Its largest output, and its outputs' total.
    max_dst: usize,
    total: usize,
}

/// The layout of the group's arrays: the words uploaded (the nvCOMP calls'
/// job arrays, the host pieces' tasks, the scan's tables), then the
/// results copied back (actual sizes, statuses, check and scan results),
/// then the scan's own sections, all in one device allocation.
struct GroupArrays {
    calls: Vec<Call>,
    /// Host-split pieces (their tasks at `pieces_word`).
    n_pieces: usize,
    /// A zero byte: the empty Snappy stream refused pages are pointed at.
    dummy_word: usize,
    pieces_word: usize,
    /// The scan's page table, and the page of each of its segments.
    table_word: usize,
    seg_word: usize,
    /// The words' bytes, and their section's length.
    up_bytes_len: usize,
    up_len: usize,
    /// Offsets in the results (from their start, after the words).
    statuses_at: usize,
    checks_at: usize,
    scan_at: usize,
    results_len: usize,
    /// Pages `gds_check_snappy` checks.
    checked: usize,
    /// The scan's segments, and its sections' offsets.
    segs: usize,
    offsets: [usize; 12],
    /// Whether `gds_snappy_decode` decompresses the scanned pages (the
    /// Snappy call's jobs, all of them the scan's), not nvCOMP.
    own_snappy: bool,
    /// The scan's pages and jobs.
    scan_pages: usize,
    scan_jobs: usize,
    /// The whole allocation.
    scan_len: usize,
}

impl GroupArrays {
    /// Lays out the group's arrays, their words written to `words`, and
    /// completes `jobs`' nvCOMP indices; `pieces_base` is the device
    /// address of the buffer of pieces and scan regions.
    fn lay_out(
        gpu: &Gpu,
        staged: &[Staged],
        jobs: &mut GroupJobs,
        scan: &ScanLayout,
        pieces_base: u64,
        words: &mut Vec<u64>,
    ) -> GroupArrays {
        let region_base = pieces_base + jobs.piece_bytes as u64;
        words.clear();
        let (calls, whole_snappy, piece_tasks) = job_arrays(staged, jobs, scan, pieces_base, words);
        let n_jobs = jobs.n_jobs;
        let dummy_word = words.len();
        words.push(0);
        let pieces_word = words.len();
        words.extend_from_slice(&piece_tasks);
        let table_word = words.len();
        scan.extend_page_table(words, region_base);
        let seg_word = words.len();
        scan.extend_seg_pages(words);
        let up_bytes_len = 8 * words.len();
        let up_len = align(up_bytes_len);
        let statuses_at = align(8 * n_jobs);
        // gds_check_snappy takes the whole Snappy pages (those the host
        // did not split); the host checked its longer ones.
        let checked = match calls.first() {
            Some(c) if c.codec == Codec::Snappy && gpu.check == CompressedCheck::Gpu => {
                whole_snappy
            }
            _ => 0,
        };
        let checks_at = align(statuses_at + 4 * n_jobs);
        let scan_at = align(checks_at + 16 * checked);
        let results_len = scan_at + 4 * SCAN_RESULT_WORDS * scan.n_pages();
        // The scan's own arrays, after the results.
        let segs = scan.n_segs();
        let own_snappy = own_snappy_decoder(gpu, jobs, scan);
        let sections = [
            4 * scan.bitmap_words,                    // bitmap
            4 * scan.n_walks(),                       // exits
            4 * SCAN_RECORD_WORDS * scan.n_walks(),   // outputs
            4 * (1 + scan.n_later_walks()),           // rest
            4 * segs,                                 // entries
            8 * segs,                                 // meets
            8 * segs,                                 // outs
            8 * segs,                                 // before
            16 * segs,                                // faults
            4 * scan.starts,                          // starts
            8 * PIECE_WORDS as usize * scan.n_jobs(), // tasks
            // real: the element starts, for gds_snappy_decode
            if own_snappy {
                4 * SCAN_SEGMENT_WORDS * segs
            } else {
                0
            },
        ];
        let mut offsets = [0usize; 12];
        let mut scan_len = align(up_len + results_len);
        for (o, len) in offsets.iter_mut().zip(sections) {
            *o = scan_len;
            scan_len = align(scan_len + len);
        }
        GroupArrays {
            calls,
            n_pieces: jobs.n_pieces,
            dummy_word,
            pieces_word,
            table_word,
            seg_word,
            up_bytes_len,
            up_len,
            statuses_at,
            checks_at,
            scan_at,
            results_len,
            checked,
            segs,
            offsets,
            own_snappy,
            scan_pages: scan.n_pages(),
            scan_jobs: scan.n_jobs(),
            scan_len,
        }
    }

    /// Jobs of `codec`'s call (its arrays' length).
    fn n_jobs_of(&self, codec: Codec) -> usize {
        self.calls
            .iter()
            .find(|c| c.codec == codec)
            .map_or(0, |c| c.n)
    }
}

/// Whether the group's scanned Snappy pages go to `gds_snappy_decode`
/// rather than nvCOMP: asked for ([`SnappyDecoder::Gdscan`]) and every
/// Snappy page of the group scanned (the Snappy call then holds only the
/// scan's jobs).
fn own_snappy_decoder(gpu: &Gpu, jobs: &GroupJobs, scan: &ScanLayout) -> bool {
    gpu.snappy_decoder == SnappyDecoder::Gdscan && jobs.scan_on_gpu && scan.n_pages() > 0
}

/// `gds_snappy_decode`'s arrays when it decodes the group's scanned pages:
/// the scan's sections and the Snappy call's (its output pointers, and its
/// sizes and statuses among the results, where nvCOMP's would go).
fn snappy_decode_args(arrays: &GroupArrays, upload: &GroupUpload) -> Option<SnappyDecode> {
    if !arrays.own_snappy {
        return None;
    }
    let call = arrays.calls.iter().find(|c| c.codec == Codec::Snappy)?;
    let at = dev(upload.meta_ptr, arrays.offsets);
    Some(SnappyDecode {
        pages: upload.word(arrays.table_word),
        n_pages: arrays.scan_pages as u32,
        n_jobs: arrays.scan_jobs as u32,
        entries: at[4],
        starts: at[9],
        verdicts: upload.results_dev + arrays.scan_at as u64,
        real: at[11],
        dst: upload.word(call.at + 3 * call.n),
        actual: upload.results_dev + 8 * call.first as u64,
        statuses: upload.results_dev + (arrays.statuses_at + 4 * call.first) as u64,
    })
}

/// The job arrays, codec by codec, written to `words`: [src ptrs][src
/// lens][dst lens][dst ptrs]. Snappy's first: the scan's jobs (their
/// streams and sizes written by the scan), or the host-checked pages whole
/// and then the pieces of those the host split. Returns the calls, the
/// whole Snappy pages (the first jobs) and the pieces' tasks.
fn job_arrays(
    staged: &[Staged],
    jobs: &mut GroupJobs,
    scan: &ScanLayout,
    pieces_base: u64,
    words: &mut Vec<u64>,
) -> (Vec<Call>, usize, Vec<u64>) {
    let mut piece_tasks: Vec<u64> = Vec::with_capacity(4 * jobs.n_pieces);
    let mut calls = Vec::new();
    let mut whole_snappy = 0usize;
    let mut k = 0usize;
    for codec in [Codec::Snappy, Codec::Zstd, Codec::Lz4, Codec::Gzip] {
        // (src, src_len, dst, dst_len) of each nvCOMP job.
        let mut picked: Vec<(u64, usize, u64, usize)> = Vec::new();
        if codec == Codec::Snappy && jobs.scan_on_gpu {
            picked.extend(scan.job_outputs.iter().map(|&(dst, len)| (0, 0, dst, len)));
            for (r, s) in staged.iter().enumerate() {
                for j in 0..s.jobs.len() {
                    if let Some(p) = jobs.scan_of[r][j] {
                        let page_jobs = &scan.page_jobs[p];
                        jobs.nv_index[r][j] = k + page_jobs.start..k + page_jobs.end;
                        jobs.compressed_pages[r] += 1;
                    }
                }
            }
        }
        for (r, s) in staged.iter().enumerate() {
            for (j, job) in s.jobs.iter().enumerate() {
                if job.codec == codec && jobs.pieces[r][j].is_none() && jobs.scan_of[r][j].is_none()
                {
                    jobs.nv_index[r][j] = k + picked.len()..k + picked.len() + 1;
                    jobs.compressed_pages[r] += 1;
                    picked.push((job.src, job.src_len, job.dst, job.dst_len));
                }
            }
        }
        if codec == Codec::Snappy {
            whole_snappy = picked.len();
            for (r, s) in staged.iter().enumerate() {
                for (j, job) in s.jobs.iter().enumerate() {
                    let Some(laid) = jobs.pieces[r][j].take() else {
                        continue;
                    };
                    let first = k + picked.len();
                    jobs.nv_index[r][j] = first..first + laid.len();
                    jobs.compressed_pages[r] += 1;
                    for p in laid {
                        let stream = pieces_base + p.at as u64;
                        piece_tasks.extend([
                            job.src + p.elements.start as u64,
                            stream,
                            p.elements.len() as u64,
                            p.out_len as u64,
                        ]);
                        picked.push((stream, p.len, job.dst + p.out_at as u64, p.out_len));
                    }
                }
            }
        }
        if picked.is_empty() {
            continue;
        }
        let at = words.len();
        words.extend(picked.iter().map(|j| j.0));
        words.extend(picked.iter().map(|j| j.1 as u64));
        words.extend(picked.iter().map(|j| j.3 as u64));
        words.extend(picked.iter().map(|j| j.2));
        let mut max_dst = picked.iter().map(|j| j.3).max().unwrap_or(0);
        if codec == Codec::Snappy {
            // A scanned page that does not split becomes one job of its
            // whole size on the GPU: nvCOMP's scratch must allow it.
            max_dst = max_dst.max(jobs.scan_inputs.iter().map(|p| p.size).max().unwrap_or(0));
        }
        let total: usize = picked.iter().map(|j| j.3).sum();
        calls.push(Call {
            codec,
            first: k,
            n: picked.len(),
            at,
            max_dst,
            total,
        });
        k += picked.len();
    }
    (calls, whole_snappy, piece_tasks)
}

/// The group's arrays on the device, handed from the upload to the check
/// and the decompression.
struct GroupUpload {
    /// The pinned words, and the device allocation laid out by
    /// [`GroupArrays`].
    up: PooledPinnedBuffer,
    meta: PooledDeviceBuffer,
    meta_ptr: u64,
    /// Where the results start on the device.
    results_dev: u64,
}

impl GroupUpload {
    /// The device address of word `i` of the uploaded words.
    fn word(&self, i: usize) -> u64 {
        self.meta_ptr + 8 * i as u64
    }
}

/// The group's timeline, when one is asked for, and the start of the
/// current part of the decoder thread's queueing (the trace's `queue_*`
/// spans).
struct Timeline<'q, 't> {
    trace: Option<&'q mut TraceGroup<'t>>,
    part_started: Instant,
}

impl Timeline<'_, '_> {
    /// Marks `stream` with `what` for row group `r` (`None`: the group).
    fn mark(
        &mut self,
        what: &'static str,
        r: Option<usize>,
        stream: &Stream,
    ) -> Result<(), DecodeError> {
        if let Some(t) = self.trace.as_deref_mut() {
            t.mark(what, r, stream)?;
        }
        Ok(())
    }

    /// Ends the part of the queueing called `what` and starts the next.
    fn end_part(&mut self, what: &'static str) {
        if let Some(t) = self.trace.as_deref_mut() {
            t.span(what, self.part_started);
        }
        self.part_started = Instant::now();
    }
}

/// A group being queued: the state its stages hand on to one another.
struct GroupQueue<'q, 't> {
    gpu: &'q Gpu,
    timeline: Timeline<'q, 't>,
    /// The event everything after the check waits for: the group's
    /// uploads (queued on the upload stream by `stage`), its job arrays
    /// and their check.
    uploaded: Event,
    /// What the group's row groups will share, filled in stage by stage.
    shared: GroupShared,
}

impl GroupQueue<'_, '_> {
    /// Upload: the group's `words` into a pinned buffer and up to the
    /// device on the upload stream, behind the row groups' own uploads.
    /// Hands the buffers on to the check and the decompression.
    fn upload(&mut self, words: &[u64], arrays: &GroupArrays) -> Result<GroupUpload, DecodeError> {
        let gpu = self.gpu;
        let up_bytes_len = arrays.up_bytes_len;
        let meta = gpu.pool.allocate(arrays.scan_len)?;
        let meta_ptr = meta.device_ptr();
        let results_dev = meta_ptr + arrays.up_len as u64;
        let mut up = gpu.pinned.allocate(up_bytes_len)?;
        // The words straight into the pinned buffer (no byte vector between:
        // about 0.7 MB a group of SF 10 lineitem).
        for (bytes, w) in up[..up_bytes_len].chunks_exact_mut(8).zip(words.iter()) {
            bytes.copy_from_slice(&w.to_le_bytes());
        }
        // SAFETY: `up` and `meta` live in `shared` until the group's event.
        unsafe {
            gpu.upload_stream
                .copy_to_device(meta_ptr, up.as_ptr(), up_bytes_len)?
        };
        self.timeline.mark("copied", None, &gpu.upload_stream)?;
        Ok(GroupUpload {
            up,
            meta,
            meta_ptr,
            results_dev,
        })
    }

    /// Check: behind the copies on the upload stream, or on
    /// `group_check_stream` once they are done (with the GPU's own check
    /// streams), the pieces of the pages the host split, the Snappy scan
    /// of every Snappy page or the GPU check of the short ones; then the
    /// `uploaded` event behind them, which the decompression and the
    /// kernels wait for. The pieces' buffer and where the check results
    /// lie go into `shared`.
    fn check(
        &mut self,
        group_check_stream: &Stream,
        arrays: &GroupArrays,
        scan: &ScanLayout,
        upload: &GroupUpload,
        pieces_buffer: Option<PooledDeviceBuffer>,
    ) -> Result<(), DecodeError> {
        let gpu = self.gpu;
        let up_stream = &gpu.upload_stream;
        let word = |i: usize| upload.word(i);
        // Where the checks and pieces kernels run: behind the copies on the
        // upload stream, or on the check stream once the copies are done.
        let check_stream = if gpu.own_check_stream {
            let mut copied = Event::new(gpu.device)?;
            copied.record(up_stream)?;
            group_check_stream.wait_event(&copied)?;
            self.shared._copied = Some(copied);
            group_check_stream
        } else {
            up_stream
        };
        // The host-split pages' pieces become streams of their own, after
        // the row groups' uploads on this stream.
        // SAFETY: the tasks name the row groups' uploaded bytes and the
        // pieces' buffer, both kept in `shared` or `Staged` until the
        // group's event.
        unsafe {
            gpu.kernels.snappy_pieces(
                check_stream,
                word(arrays.pieces_word),
                arrays.n_pieces as u32,
            )?
        };
        if scan.n_pages() > 0 {
            let at = dev(upload.meta_ptr, arrays.offsets);
            let n_snappy = arrays.n_jobs_of(Codec::Snappy);
            let scan_args = SnappyScan {
                pages: word(arrays.table_word),
                n_pages: scan.n_pages() as u32,
                seg_page: word(arrays.seg_word),
                n_segs: arrays.segs as u32,
                bitmap: at[0],
                exits: at[1],
                outputs: at[2],
                rest: at[3],
                entries: at[4],
                meets: at[5],
                outs: at[6],
                before: at[7],
                faults: at[8],
                starts: at[9],
                verdicts: upload.results_dev + arrays.scan_at as u64,
                src: word(0),
                src_len: word(n_snappy),
                dst_len: word(2 * n_snappy),
                tasks: at[10],
                n_jobs: scan.n_jobs() as u32,
                dummy: word(arrays.dummy_word),
                real: if arrays.own_snappy { at[11] } else { 0 },
            };
            match self.timeline.trace.as_deref_mut() {
                // SAFETY: the Snappy call's arrays come first in `words`;
                // every section was sized by the layout; the pages' bytes
                // and the pieces' buffer live until the group's event.
                None => unsafe { gpu.kernels.snappy_scan(check_stream, &scan_args)? },
                // SAFETY: as the arm above (the marks only record events).
                Some(t) => unsafe {
                    gpu.kernels
                        .snappy_scan_marked(check_stream, &scan_args, |kernel| {
                            Ok(t.mark(kernel, None, check_stream)?)
                        })?
                },
            }
            if let Some(args) = snappy_decode_args(arrays, upload) {
                // gdscan's decoder right behind the scan, on the same stream:
                // unlike nvCOMP it may run beside other groups' work, so the
                // groups' check streams decode at once.
                // SAFETY: as the scan's; the outputs live in the row
                // groups' `Staged` until the group's event.
                unsafe { gpu.kernels.snappy_decode(check_stream, &args)? };
                self.timeline.mark("snappy_decode", None, check_stream)?;
            }
        }
        // The check runs beside the previous group's nvCOMP call (which
        // leaves most of the GPU idle).
        if arrays.checked > 0 {
            let n = arrays.n_jobs_of(Codec::Snappy);
            // SAFETY: the arrays and the pages they point to live until
            // the group's event; the results have room for the checks.
            unsafe {
                gpu.kernels.check_snappy(
                    check_stream,
                    SnappyJobs {
                        src: word(0),
                        src_len: word(n),
                        dst_len: word(2 * n),
                        n_jobs: arrays.checked as u32,
                        results: upload.results_dev + arrays.checks_at as u64,
                        dummy: word(arrays.dummy_word),
                        max_len: gpu.gpu_check_max as u64,
                    },
                )?
            };
            self.timeline.mark("warp_check", None, check_stream)?;
        }
        if let Some(b) = pieces_buffer {
            self.shared._temps.push(b);
        }
        self.shared.checks_at = arrays.checks_at;
        self.shared.checked = arrays.checked;
        self.shared.scan_at = arrays.scan_at;
        self.shared.scanned = scan.n_pages();
        // The mark before the event, so that it is never later than the
        // work waiting for the event.
        self.timeline.mark("uploaded", None, check_stream)?;
        self.uploaded.record(check_stream)?;
        Ok(())
    }

    /// Decompress: on the nvCOMP stream, after `uploaded`, one nvCOMP call
    /// per codec, then the actual sizes, statuses and check results down
    /// to the host. The calls' buffers and the group's upload go into
    /// `shared`, kept until the returned `decompressed` event, which the
    /// row groups' kernels wait for.
    fn decompress(
        &mut self,
        arrays: &GroupArrays,
        upload: GroupUpload,
    ) -> Result<Arc<Event>, DecodeError> {
        let gpu = self.gpu;
        let nv_stream = &gpu.nvcomp_stream;
        let word = |i: usize| upload.word(i);
        nv_stream.wait_event(&self.uploaded)?;
        self.timeline.end_part("queue_checks");
        self.timeline.mark("nvcomp_start", None, nv_stream)?;
        for &Call {
            codec,
            first,
            n,
            at,
            max_dst,
            total,
        } in &arrays.calls
        {
            if codec == Codec::Snappy && arrays.own_snappy {
                // Decoded behind the scan, on the check stream (`check`).
                continue;
            }
            let nvcomp = gpu.nvcomp(codec)?;
            let temp_bytes = nvcomp.temp_bytes(codec, n, max_dst, total)?;
            let temp = gpu.pool.allocate(temp_bytes.max(1))?;
            let args = BatchArgs {
                compressed_ptrs: word(at),
                compressed_bytes: word(at + n),
                uncompressed_capacity: word(at + 2 * n),
                uncompressed_ptrs: word(at + 3 * n),
                actual_uncompressed: upload.results_dev + 8 * first as u64,
                num_chunks: n,
                temp_ptr: temp.device_ptr(),
                temp_bytes: temp.len(),
                statuses: upload.results_dev + (arrays.statuses_at + 4 * first) as u64,
            };
            // SAFETY: every array and buffer named lives in `shared` or in
            // the row groups' `Staged` until their events.
            unsafe { nvcomp.decompress_async(codec, &args, nv_stream)? };
            self.shared._temps.push(temp);
        }
        let results_len = arrays.results_len;
        let mut results = gpu.pinned.allocate(results_len)?;
        // SAFETY: `results` lives in `shared` until the group's event.
        unsafe { nv_stream.copy_to_host(results.as_mut_ptr(), upload.results_dev, results_len)? };
        self.timeline.mark("nvcomp_end", None, nv_stream)?;
        let mut done = Event::new(gpu.device)?;
        done.record(nv_stream)?;
        let done = Arc::new(done);
        self.shared._done = Some(SyncOnDrop::new(done.clone()));
        self.shared.results = Some(results);
        self.shared.statuses_at = arrays.statuses_at;
        self.shared._up = Some(upload.up);
        self.shared._meta = Some(upload.meta);
        self.timeline.end_part("queue_nvcomp");
        Ok(done)
    }

    /// Kernels: on each row group's stream, its bitmaps zeroed, a wait for
    /// `decompressed` (or `uploaded`, when it has no compressed page), its
    /// kernels, its status down to the host and its event. Hands on the
    /// row groups in flight, for [`InFlight::finish`].
    fn kernels(
        self,
        staged: Vec<Staged>,
        streams: &[&Stream],
        jobs: GroupJobs,
        decompressed: Option<Arc<Event>>,
    ) -> Result<Vec<InFlight>, DecodeError> {
        let GroupQueue {
            gpu,
            mut timeline,
            uploaded,
            mut shared,
        } = self;
        let uploaded = Arc::new(uploaded);
        shared._uploaded = Some(uploaded.clone());
        let shared = Arc::new(shared);
        let last = staged.len().saturating_sub(1);
        let mut queued = Vec::with_capacity(staged.len());
        let rows = staged.into_iter().zip(streams).zip(jobs.nv_index);
        for (r, ((mut s, stream), nv_index)) in rows.enumerate() {
            for &(at, len) in &s.zero {
                // SAFETY: a range of the row group's output, kept in `s`.
                unsafe { stream.memset_async(at, 0, len)? };
            }
            match &decompressed {
                Some(done) if !s.jobs.is_empty() => stream.wait_event(done)?,
                _ => stream.wait_event(&uploaded)?,
            }
            let status_len = s.status_len.max(1);
            let mut down = gpu.pinned.allocate(status_len)?;
            let pending = s.dba;
            let event = if pending {
                // Its kernels wait for its values' sizes: queued later
                // (`InFlight::queue_pending`), after the next group.
                super::s5_delta_string_buffers::queue_dba_sizes(gpu, stream, &mut s)?;
                let mut sized = Event::new(gpu.device)?;
                sized.record(stream)?;
                sized
            } else {
                match timeline.trace.as_deref_mut() {
                    None => queue_row_group_kernels(gpu, stream, &s, &mut down, None)?,
                    Some(t) => {
                        let mut mark = |what: &'static str| t.mark(what, Some(r), stream);
                        queue_row_group_kernels(gpu, stream, &s, &mut down, Some(&mut mark))?
                    }
                }
            };
            let times = RowGroupTimes {
                walk: s.walk,
                check: s.check,
                pages: s.work_launch.n_tasks as usize,
                compressed_pages: jobs.compressed_pages[r],
                codecs: codec_counts(&s.plan),
                ..RowGroupTimes::default()
            };
            queued.push(InFlight {
                done: SyncOnDrop::new(Arc::new(event)),
                kernels_pending: pending,
                staged: s,
                group: shared.clone(),
                nv_index,
                scan_index: jobs.scan_of[r].clone(),
                down,
                times,
                ends_group: r == last,
                group_index: 0,
            });
        }
        timeline.end_part("queue_kernels");
        Ok(queued)
    }
}

/// A group's view of the scan's trace: the group's number, its first row
/// group's number and the stream indices, so that marks are labelled.
pub(crate) struct TraceGroup<'a> {
    pub(crate) trace: &'a mut Trace,
    pub(crate) group: usize,
    pub(crate) first_row_group: usize,
    pub(crate) nv_stream: &'a Stream,
    pub(crate) check_stream: &'a Stream,
    pub(crate) streams: &'a [Stream],
}

impl TraceGroup<'_> {
    /// Records a span of the decoder's thread for the group, from `start`
    /// to now.
    fn span(&mut self, what: &'static str, start: Instant) {
        self.trace.span(what, self.group, start);
    }

    /// Marks `stream` (one of the scan's streams, or nvCOMP's) with `what`
    /// for row group `r` of the group (`None`: the group as a whole).
    fn mark(
        &mut self,
        what: &'static str,
        r: Option<usize>,
        stream: &Stream,
    ) -> Result<(), crate::cuda::CudaError> {
        let index = if std::ptr::eq(stream, self.nv_stream) {
            NVCOMP_STREAM
        } else if std::ptr::eq(stream, self.check_stream) {
            CHECK_STREAM
        } else {
            self.streams
                .iter()
                .position(|s| std::ptr::eq(s, stream))
                .unwrap_or(UPLOAD_STREAM)
        };
        self.trace.mark(
            what,
            self.group,
            r.map(|r| self.first_row_group + r),
            index,
            stream,
        )
    }
}
