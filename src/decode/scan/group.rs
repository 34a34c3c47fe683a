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
//! Order of the work (no host wait anywhere here):
//! 1. on the upload stream: each row group's uploads
//!    ([`super::stage::stage`]), then the group's job arrays; then,
//!    on the check stream after an event recorded behind those copies (on
//!    the upload stream itself with `check_stream` off): the pieces of the
//!    pages the host checked and split (`gds_snappy_pieces`); with
//!    [`CompressedCheck::Scan`] (the default) the Snappy scan of every
//!    Snappy page ([`crate::decode::kernels::KernelSet::snappy_scan`],
//!    which also writes the pieces of those that split), or with
//!    [`CompressedCheck::Gpu`] the check of the short Snappy pages
//!    (`gds_check_snappy`): a refused page is pointed at an empty stream,
//!    so nvCOMP never reads it; then the `uploaded` event. The next
//!    group's uploads so run beside this group's check and nvCOMP call,
//!    never behind its kernels;
//! 2. on the nvCOMP stream, after `uploaded`: one call per codec, the
//!    actual sizes, statuses and check results down, the `decompressed`
//!    event;
//! 3. each row group's stream waits for `decompressed` (or `uploaded`,
//!    when it has no compressed page), runs the kernels, copies its status
//!    down and records the row group's event.
//!
//! With a timeline asked for ([`TraceGroup`]), timed events mark each
//! phase.

use std::ops::Range;
use std::sync::Arc;
use std::time::Instant;

use super::compressed_check::CompressedCheck;
use super::context::Gpu;
use super::error::DecodeError;
use super::group_shared::{GroupShared, SyncOnDrop};
use super::in_flight::InFlight;
use super::report::RowGroupTimes;
use super::stage::Staged;
use super::trace::{Trace, CHECK_STREAM, NVCOMP_STREAM, UPLOAD_STREAM};
use crate::cuda::{Event, Stream};
use crate::decode::kernels::check::{piece_streams, PieceStream, PIECE_WORDS};
use crate::decode::kernels::snappy_scan::{
    ScanInput, ScanLayout, SCAN_RESULT_WORDS, SCAN_WALK_WORDS,
};
use crate::decode::kernels::{SnappyJobs, SnappyScan};
use crate::nvcomp::{BatchArgs, Codec};

/// Alignment of the sections of the group's nvCOMP arrays.
const ALIGN: usize = 256;

/// Jobs of `codec`'s call (its arrays' length).
fn n_jobs_of(calls: &[(Codec, usize, usize, usize, usize, usize)], codec: Codec) -> usize {
    calls.iter().find(|c| c.0 == codec).map_or(0, |c| c.2)
}

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
pub(crate) fn launch_group(
    gpu: &Gpu,
    staged: Vec<Staged>,
    streams: &[&Stream],
    group_check_stream: &Stream,
    scratch: &mut QueueScratch,
    mut trace: Option<&mut TraceGroup<'_>>,
) -> Result<Vec<InFlight>, DecodeError> {
    let pool = &gpu.pool;
    // The decoder thread's time in each part of the queueing (the trace's
    // `queue_*` spans).
    let mut part_started = Instant::now();
    let nv_stream = &gpu.nvcomp_stream;
    // nvCOMP's jobs: one per page, or one per piece of a split Snappy page.
    let mut nv_index: Vec<Vec<Range<usize>>> =
        staged.iter().map(|s| vec![0..0; s.jobs.len()]).collect();
    let mut compressed_pages = vec![0usize; staged.len()];
    // With the scan, every Snappy page goes through it
    // (`KernelSet::snappy_scan`), which checks it and splits it; `scan_of`
    // is each job's page in the scan.
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
    scratch.scan.refill(&scan_inputs, split, 0);
    let scan = &scratch.scan;
    // Otherwise Snappy pages the host walked and split: their pieces, laid
    // out in one buffer.
    let mut piece_bytes = 0usize;
    let mut pieces: Vec<Vec<Option<Vec<PieceStream>>>> = staged
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
    let mut shared = GroupShared {
        _done: None,
        results: None,
        statuses_at: 0,
        checks_at: 0,
        checked: 0,
        scan_at: 0,
        scanned: 0,
        _up: None,
        _meta: None,
        _temps: Vec::new(),
        _uploaded: None,
        _copied: None,
    };
    let mut decompressed = None;
    let up_stream = &gpu.upload_stream;
    // The event everything after waits for: the group's uploads (queued on
    // the upload stream by `stage`), its job arrays and their check.
    let mut uploaded = Event::new(gpu.device)?;
    if n_jobs == 0 {
        if let Some(t) = trace.as_deref_mut() {
            t.mark("uploaded", None, up_stream)?;
        }
        uploaded.record(up_stream)?;
    } else {
        let pieces_buffer = match piece_bytes + scan.region_bytes {
            0 => None,
            n => Some(pool.allocate(n)?),
        };
        let pieces_base = pieces_buffer.as_ref().map_or(0, |b| b.device_ptr());
        let region_base = pieces_base + piece_bytes as u64;
        // 2. The job arrays, codec by codec: [src ptrs][src lens][dst lens][dst ptrs].
        // Snappy's first: the scan's jobs (their streams and sizes written
        // by the scan), or the host-checked pages whole and then the pieces
        // of those the host split.
        let words = &mut scratch.words;
        words.clear();
        let mut piece_tasks: Vec<u64> = Vec::with_capacity(4 * n_pieces);
        let mut calls = Vec::new();
        let mut whole_snappy = 0usize;
        let mut k = 0usize;
        for codec in [Codec::Snappy, Codec::Zstd, Codec::Lz4, Codec::Gzip] {
            // (src, src_len, dst, dst_len) of each nvCOMP job.
            let mut picked: Vec<(u64, usize, u64, usize)> = Vec::new();
            if codec == Codec::Snappy && scan_on_gpu {
                picked.extend(scan.job_outputs.iter().map(|&(dst, len)| (0, 0, dst, len)));
                for (r, s) in staged.iter().enumerate() {
                    for j in 0..s.jobs.len() {
                        if let Some(p) = scan_of[r][j] {
                            let jobs = &scan.page_jobs[p];
                            nv_index[r][j] = k + jobs.start..k + jobs.end;
                            compressed_pages[r] += 1;
                        }
                    }
                }
            }
            for (r, s) in staged.iter().enumerate() {
                for (j, job) in s.jobs.iter().enumerate() {
                    if job.codec == codec && pieces[r][j].is_none() && scan_of[r][j].is_none() {
                        nv_index[r][j] = k + picked.len()..k + picked.len() + 1;
                        compressed_pages[r] += 1;
                        picked.push((job.src, job.src_len, job.dst, job.dst_len));
                    }
                }
            }
            if codec == Codec::Snappy {
                whole_snappy = picked.len();
                for (r, s) in staged.iter().enumerate() {
                    for (j, job) in s.jobs.iter().enumerate() {
                        let Some(laid) = pieces[r][j].take() else {
                            continue;
                        };
                        let first = k + picked.len();
                        nv_index[r][j] = first..first + laid.len();
                        compressed_pages[r] += 1;
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
                max_dst = max_dst.max(scan_inputs.iter().map(|p| p.size).max().unwrap_or(0));
            }
            let total: usize = picked.iter().map(|j| j.3).sum();
            calls.push((codec, k, picked.len(), at, max_dst, total));
            k += picked.len();
        }
        // A zero byte: the empty Snappy stream refused pages are pointed at.
        let dummy_word = words.len();
        words.push(0);
        let pieces_word = words.len();
        words.extend_from_slice(&piece_tasks);
        // The scan's page table and the page of each of its segments.
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
            Some(&(Codec::Snappy, ..)) if gpu.check == CompressedCheck::Gpu => whole_snappy,
            _ => 0,
        };
        let checks_at = align(statuses_at + 4 * n_jobs);
        let scan_at = align(checks_at + 16 * checked);
        let results_len = scan_at + 4 * SCAN_RESULT_WORDS * scan.n_pages();
        // The scan's own arrays, after the results.
        let segs = scan.n_segs();
        let sections = [
            4 * scan.bitmap_words,                    // bitmap
            4 * scan.n_walks(),                       // exits
            4 * SCAN_WALK_WORDS * scan.n_walks(),     // outputs
            4 * segs,                                 // entries
            8 * segs,                                 // meets
            8 * segs,                                 // outs
            8 * segs,                                 // before
            16 * segs,                                // faults
            4 * scan.starts,                          // starts
            8 * PIECE_WORDS as usize * scan.n_jobs(), // tasks
        ];
        let mut offsets = [0usize; 10];
        let mut scan_len = align(up_len + results_len);
        for (o, len) in offsets.iter_mut().zip(sections) {
            *o = scan_len;
            scan_len = align(scan_len + len);
        }
        if let Some(t) = trace.as_deref_mut() {
            t.span("queue_arrays", part_started);
        }
        part_started = Instant::now();
        let meta = pool.allocate(scan_len)?;
        let meta_ptr = meta.device_ptr();
        let results_dev = meta_ptr + up_len as u64;
        let mut up = gpu.pinned.allocate(up_bytes_len)?;
        // The words straight into the pinned buffer (no byte vector between:
        // about 0.7 MB a group of SF 10 lineitem).
        for (bytes, w) in up[..up_bytes_len].chunks_exact_mut(8).zip(words.iter()) {
            bytes.copy_from_slice(&w.to_le_bytes());
        }
        // SAFETY: `up` and `meta` live in `shared` until the group's event.
        unsafe { up_stream.copy_to_device(meta_ptr, up.as_ptr(), up_bytes_len)? };
        let word = |i: usize| meta_ptr + 8 * i as u64;
        if let Some(t) = trace.as_deref_mut() {
            t.mark("copied", None, up_stream)?;
        }
        // Where the checks and pieces kernels run: behind the copies on the
        // upload stream, or on the check stream once the copies are done.
        let check_stream = if gpu.own_check_stream {
            let mut copied = Event::new(gpu.device)?;
            copied.record(up_stream)?;
            group_check_stream.wait_event(&copied)?;
            shared._copied = Some(copied);
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
            gpu.kernels
                .snappy_pieces(check_stream, word(pieces_word), n_pieces as u32)?
        };
        if scan.n_pages() > 0 {
            let n = scan.n_jobs();
            let at = dev(meta_ptr, offsets);
            let scan_args = SnappyScan {
                pages: word(table_word),
                n_pages: scan.n_pages() as u32,
                seg_page: word(seg_word),
                n_segs: segs as u32,
                bitmap: at[0],
                exits: at[1],
                outputs: at[2],
                entries: at[3],
                meets: at[4],
                outs: at[5],
                before: at[6],
                faults: at[7],
                starts: at[8],
                verdicts: results_dev + scan_at as u64,
                src: word(0),
                src_len: word(n_jobs_of(&calls, Codec::Snappy)),
                dst_len: word(2 * n_jobs_of(&calls, Codec::Snappy)),
                tasks: at[9],
                n_jobs: n as u32,
                dummy: word(dummy_word),
            };
            // SAFETY (both arms): the Snappy call's arrays come first in
            // `words`; every section was sized by the layout; the pages'
            // bytes and the pieces' buffer live until the group's event.
            match trace.as_deref_mut() {
                None => unsafe { gpu.kernels.snappy_scan(check_stream, &scan_args)? },
                Some(t) => unsafe {
                    gpu.kernels
                        .snappy_scan_marked(check_stream, &scan_args, |kernel| {
                            Ok(t.mark(kernel, None, check_stream)?)
                        })?
                },
            }
        }
        // The check runs beside the previous group's nvCOMP call (which
        // leaves most of the GPU idle).
        if checked > 0 {
            let n = n_jobs_of(&calls, Codec::Snappy);
            // SAFETY: the arrays and the pages they point to live until
            // the group's event; `results_dev` has room for the checks.
            unsafe {
                gpu.kernels.check_snappy(
                    check_stream,
                    SnappyJobs {
                        src: word(0),
                        src_len: word(n),
                        dst_len: word(2 * n),
                        n_jobs: checked as u32,
                        results: results_dev + checks_at as u64,
                        dummy: word(dummy_word),
                        max_len: gpu.gpu_check_max as u64,
                    },
                )?
            };
            if let Some(t) = trace.as_deref_mut() {
                t.mark("warp_check", None, check_stream)?;
            }
        }
        if let Some(b) = pieces_buffer {
            shared._temps.push(b);
        }
        shared.checks_at = checks_at;
        shared.checked = checked;
        shared.scan_at = scan_at;
        shared.scanned = scan.n_pages();
        // The mark before the event, so that it is never later than the
        // work waiting for the event.
        if let Some(t) = trace.as_deref_mut() {
            t.mark("uploaded", None, check_stream)?;
        }
        uploaded.record(check_stream)?;
        nv_stream.wait_event(&uploaded)?;
        if let Some(t) = trace.as_deref_mut() {
            t.span("queue_checks", part_started);
        }
        part_started = Instant::now();
        if let Some(t) = trace.as_deref_mut() {
            t.mark("nvcomp_start", None, nv_stream)?;
        }
        for (codec, first, n, at, max_dst, total) in calls {
            let nvcomp = gpu.nvcomp(codec)?;
            let temp_bytes = nvcomp.temp_bytes(codec, n, max_dst, total)?;
            let temp = pool.allocate(temp_bytes.max(1))?;
            let args = BatchArgs {
                compressed_ptrs: word(at),
                compressed_bytes: word(at + n),
                uncompressed_capacity: word(at + 2 * n),
                uncompressed_ptrs: word(at + 3 * n),
                actual_uncompressed: results_dev + 8 * first as u64,
                num_chunks: n,
                temp_ptr: temp.device_ptr(),
                temp_bytes: temp.len(),
                statuses: results_dev + (statuses_at + 4 * first) as u64,
            };
            // SAFETY: every array and buffer named lives in `shared` or in
            // the row groups' `Staged` until their events.
            unsafe { nvcomp.decompress_async(codec, &args, nv_stream)? };
            shared._temps.push(temp);
        }
        let mut results = gpu.pinned.allocate(results_len)?;
        // SAFETY: `results` lives in `shared` until the group's event.
        unsafe { nv_stream.copy_to_host(results.as_mut_ptr(), results_dev, results_len)? };
        if let Some(t) = trace.as_deref_mut() {
            t.mark("nvcomp_end", None, nv_stream)?;
        }
        let mut done = Event::new(gpu.device)?;
        done.record(nv_stream)?;
        let done = Arc::new(done);
        shared._done = Some(SyncOnDrop::new(done.clone()));
        shared.results = Some(results);
        shared.statuses_at = statuses_at;
        shared._up = Some(up);
        shared._meta = Some(meta);
        decompressed = Some(done);
        if let Some(t) = trace.as_deref_mut() {
            t.span("queue_nvcomp", part_started);
        }
        part_started = Instant::now();
    }
    let uploaded = Arc::new(uploaded);
    shared._uploaded = Some(uploaded.clone());
    let shared = Arc::new(shared);

    // 3. Kernels, status and event per row group.
    let last = staged.len().saturating_sub(1);
    let mut queued = Vec::with_capacity(staged.len());
    for (r, ((s, stream), nv_index)) in staged.into_iter().zip(streams).zip(nv_index).enumerate() {
        for &(at, len) in &s.zero {
            // SAFETY: a range of the row group's output, kept in `s`.
            unsafe { stream.memset_async(at, 0, len)? };
        }
        match &decompressed {
            Some(done) if !s.jobs.is_empty() => stream.wait_event(done)?,
            _ => stream.wait_event(&uploaded)?,
        }
        match trace.as_deref_mut() {
            // SAFETY: the tasks describe the row group's allocations, kept
            // in `s` until its event.
            None => unsafe { gpu.kernels.decode_row_group(stream, &s.work_launch)? },
            Some(t) => {
                t.mark("kernels_start", Some(r), stream)?;
                // SAFETY: as above.
                unsafe {
                    gpu.kernels
                        .decode_row_group_marked(stream, &s.work_launch, |kernel| {
                            Ok(t.mark(kernel, Some(r), stream)?)
                        })?
                };
            }
        }
        let status_len = s.status_len.max(1);
        let mut down = gpu.pinned.allocate(status_len)?;
        // SAFETY: `down` and the status area are kept until the event.
        unsafe { stream.copy_to_host(down.as_mut_ptr(), s.work_launch.status, status_len)? };
        let mut event = Event::new(gpu.device)?;
        event.record(stream)?;
        let times = RowGroupTimes {
            walk: s.walk,
            check: s.check,
            pages: s.work_launch.n_tasks as usize,
            compressed_pages: compressed_pages[r],
            ..RowGroupTimes::default()
        };
        queued.push(InFlight {
            done: SyncOnDrop::new(Arc::new(event)),
            staged: s,
            group: shared.clone(),
            nv_index,
            scan_index: scan_of[r].clone(),
            down,
            times,
            ends_group: r == last,
        });
    }
    if let Some(t) = trace {
        t.span("queue_kernels", part_started);
    }
    Ok(queued)
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
