//! What the decoder did: pages, bytes and time per stage, and where each
//! codec ran.

use std::time::Duration;

use serde::Serialize;

use crate::cuda::PoolStats;
use crate::decode::page::DecodePlan;

/// Host-side measurements of one row group.
#[derive(Debug, Clone, Default)]
pub(crate) struct RowGroupTimes {
    /// Allocating device memory and queueing the uploads.
    pub(crate) stage: Duration,
    /// Queueing nvCOMP and the kernels (its share of the group's).
    pub(crate) queue: Duration,
    /// Walking the headers and planning, on one worker thread.
    pub(crate) walk: Duration,
    /// Checking the compressed pages (wall time on the worker threads).
    pub(crate) check: Duration,
    /// Waiting for the row group's event (GPU work not hidden behind the
    /// host's work on the next row group).
    pub(crate) wait: Duration,
    /// Data pages decoded.
    pub(crate) pages: usize,
    /// Pages decompressed by nvCOMP.
    pub(crate) compressed_pages: usize,
    /// Of those, Snappy pages decompressed in 64 KiB pieces.
    pub(crate) pages_split: usize,
    /// nvCOMP jobs: pages whole and pieces.
    pub(crate) nvcomp_jobs: usize,
    /// Compressed pages per codec and where they ran.
    pub(crate) codecs: Vec<CodecCount>,
}

/// Where a codec's pages were decompressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum CodecPlace {
    /// On the GPU, by nvCOMP.
    Gpu,
    /// On the host, before the upload.
    Cpu,
}

impl std::fmt::Display for CodecPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CodecPlace::Gpu => "GPU",
            CodecPlace::Cpu => "CPU",
        })
    }
}

/// The compressed pages of one codec decompressed in one place.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CodecCount {
    /// The chunk's compression, as Parquet names it (`SNAPPY`, `LZ4` for
    /// legacy LZ4, `LZ4_RAW`, ...).
    pub codec: String,
    /// Where its pages ran.
    pub place: CodecPlace,
    /// Pages (dictionary and data; a v2 page's values only).
    pub pages: usize,
    /// Their stored bytes (a Hadoop-framed LZ4 page's blocks, without
    /// their 8-byte prefixes).
    pub compressed_bytes: u64,
    /// Their decompressed bytes.
    pub decompressed_bytes: u64,
}

/// Adds `more` into `counts`, joining the same codec and place.
fn add_counts(counts: &mut Vec<CodecCount>, more: &[CodecCount]) {
    for m in more {
        match counts
            .iter_mut()
            .find(|c| c.codec == m.codec && c.place == m.place)
        {
            Some(c) => {
                c.pages += m.pages;
                c.compressed_bytes += m.compressed_bytes;
                c.decompressed_bytes += m.decompressed_bytes;
            }
            None => counts.push(m.clone()),
        }
    }
}

/// The compressed pages of a row group's plan per codec and place: the
/// nvCOMP jobs (a page of several jobs, Hadoop-framed LZ4, counts once)
/// and the host's.
pub(crate) fn codec_counts(plan: &DecodePlan) -> Vec<CodecCount> {
    let name = |column: usize| {
        plan.columns[column]
            .codec
            .map_or("UNCOMPRESSED", |c| c.name())
            .to_string()
    };
    let mut counts = Vec::new();
    let mut last = None;
    for j in &plan.jobs {
        let first = last != Some((j.column, j.page));
        last = Some((j.column, j.page));
        add_counts(
            &mut counts,
            &[CodecCount {
                codec: name(j.column),
                place: CodecPlace::Gpu,
                pages: usize::from(first),
                compressed_bytes: j.src_len as u64,
                decompressed_bytes: j.dst_len as u64,
            }],
        );
    }
    for j in &plan.host_jobs {
        add_counts(
            &mut counts,
            &[CodecCount {
                codec: name(j.column),
                place: CodecPlace::Cpu,
                pages: 1,
                compressed_bytes: j.src_len as u64,
                decompressed_bytes: j.dst_len as u64,
            }],
        );
    }
    counts
}

/// The decoder's report of a scan.
#[derive(Debug, Clone, Default, Serialize)]
pub struct DecodeReport {
    /// Where the scan's row groups landed (device memory, or pinned host
    /// memory where the host reads page bodies); with several GPUs,
    /// pinned host memory where any share's did. None before a scan.
    pub landing: Option<super::Landing>,
    /// Row groups decoded (late materialization: those its first phase,
    /// the predicate's columns, decoded).
    pub row_groups: usize,
    /// Rows decoded (late materialization: the rows its first phase
    /// covered; the second decodes the payload of the kept ones).
    pub rows: u64,
    /// Data pages decoded by the kernels.
    pub pages: usize,
    /// Pages decompressed on the GPU by nvCOMP (a Hadoop-framed legacy LZ4
    /// page may be several jobs).
    pub pages_decompressed_nvcomp: usize,
    /// Of those, Snappy pages nvCOMP took in 64 KiB pieces (a job each).
    pub pages_split: usize,
    /// nvCOMP's jobs: the pages it took whole, and the pieces.
    pub nvcomp_jobs: usize,
    /// Bytes the fetch read for the decoded row groups (the plan's bytes).
    pub bytes_read: u64,
    /// Bytes of the decoded device columns.
    pub output_bytes: u64,
    /// Seconds the decoder waited for its next row group, fetched and
    /// planned (the I/O, or planning when it falls behind).
    pub io_wait_seconds: f64,
    /// Seconds the planning thread waited for the fetch (ahead of the
    /// decoder: on its path only as far as `io_wait_seconds` shows).
    pub fetch_wait_seconds: f64,
    /// Seconds the decoder's thread spent staging and queueing GPU work.
    pub host_seconds: f64,
    /// Walking headers, planning, checking compressed pages: wall time of
    /// the planning thread, a group at a time on every worker thread. Done
    /// a group ahead of the decoder, overlapping the GPU's work; not part
    /// of `host_seconds`.
    pub plan_seconds: f64,
    /// Of `host_seconds`: allocating device memory and queueing uploads.
    pub stage_seconds: f64,
    /// Thread time walking page headers and planning, summed over row
    /// groups (planned several at once, so more than `plan_seconds`).
    pub walk_thread_seconds: f64,
    /// Time checking compressed pages, summed over row groups (each on
    /// several threads).
    pub check_thread_seconds: f64,
    /// Of `host_seconds`: queueing nvCOMP and the kernels.
    pub queue_seconds: f64,
    /// Seconds the host waited for GPU work (decompression and kernels not
    /// hidden behind the host's other work).
    pub gpu_wait_seconds: f64,
    /// Compressed pages per codec and where they were decompressed (GPU:
    /// nvCOMP; CPU: BROTLI, legacy LZ4 without the Hadoop framing, GZIP
    /// pages of several members).
    pub codecs: Vec<CodecCount>,
    /// The device pool during the scan: buffers it had to allocate (a
    /// scan after the first allocates little while its working set fits
    /// the pool) and buffers it freed.
    pub device_pool: PoolStats,
    /// The pinned pool during the scan, likewise (shared with every scan
    /// on the device running at the same time).
    pub pinned_pool: PoolStats,
    /// The exact filter on the GPU (all zero without a predicate, or with
    /// `DecodeOptions::filter` at `FilterMode::PruneOnly`).
    pub filter: FilterReport,
    /// Seconds the decode's start spent opening the GPU (CUDA's driver and
    /// the device's context; about 0 once the process has it open).
    pub context_seconds: f64,
    /// Seconds the decode's start spent on the GPU's resources after the
    /// context: kernels loaded (or compiled), streams, the pools.
    pub resources_seconds: f64,
    /// Whether the decode ran on its device's shared pipeline
    /// (`GDSCAN_DECODE_PIPELINE=shared`). Its staging, queueing and GPU
    /// waits are then the pipeline's driver's for this decode's groups,
    /// and `io_wait_seconds` stays 0 (the driver never waits on one
    /// decode's planner while another's has a group ready).
    pub shared_pipeline: bool,
}

/// What the GPU filter did in a scan.
#[derive(Debug, Clone, Default, Serialize)]
pub struct FilterReport {
    /// Decoded batches (row groups) the filter saw.
    pub batches_in: usize,
    /// Of those, batches that kept no row (not handed out).
    pub batches_empty: usize,
    /// Rows decoded (after the statistics' pruning), before the filter.
    pub rows_in: u64,
    /// Rows the predicate selects: the rows handed out.
    pub rows_out: u64,
    /// Seconds evaluating and compacting, host wall time.
    pub seconds: f64,
    /// With late materialization: payload data pages the statistics kept
    /// that no selected row needed, so never fetched, decompressed or
    /// decoded.
    pub late_pages_skipped: usize,
    /// Their bytes.
    pub late_bytes_skipped: u64,
}

impl FilterReport {
    fn merge(&mut self, other: &FilterReport) {
        self.batches_in += other.batches_in;
        self.batches_empty += other.batches_empty;
        self.rows_in += other.rows_in;
        self.rows_out += other.rows_out;
        self.seconds += other.seconds;
        self.late_pages_skipped += other.late_pages_skipped;
        self.late_bytes_skipped += other.late_bytes_skipped;
    }
}

impl DecodeReport {
    /// Adds `other`'s counts and times to these (several devices' reports
    /// into one).
    pub fn merge(&mut self, other: &DecodeReport) {
        self.landing = match (self.landing, other.landing) {
            (Some(a), Some(b)) if a != b => Some(super::Landing::Pinned),
            (a, b) => a.or(b),
        };
        self.row_groups += other.row_groups;
        self.rows += other.rows;
        self.pages += other.pages;
        self.pages_decompressed_nvcomp += other.pages_decompressed_nvcomp;
        self.pages_split += other.pages_split;
        self.nvcomp_jobs += other.nvcomp_jobs;
        self.bytes_read += other.bytes_read;
        self.output_bytes += other.output_bytes;
        self.io_wait_seconds += other.io_wait_seconds;
        self.fetch_wait_seconds += other.fetch_wait_seconds;
        self.host_seconds += other.host_seconds;
        self.plan_seconds += other.plan_seconds;
        self.stage_seconds += other.stage_seconds;
        self.queue_seconds += other.queue_seconds;
        self.walk_thread_seconds += other.walk_thread_seconds;
        self.check_thread_seconds += other.check_thread_seconds;
        self.gpu_wait_seconds += other.gpu_wait_seconds;
        add_counts(&mut self.codecs, &other.codecs);
        self.device_pool = self.device_pool.plus(&other.device_pool);
        self.pinned_pool = self.pinned_pool.plus(&other.pinned_pool);
        self.filter.merge(&other.filter);
        self.context_seconds += other.context_seconds;
        self.resources_seconds += other.resources_seconds;
        self.shared_pipeline |= other.shared_pipeline;
    }

    pub(crate) fn add(&mut self, rows: usize, bytes: usize, t: &RowGroupTimes) {
        self.row_groups += 1;
        self.rows += rows as u64;
        self.pages += t.pages;
        self.pages_decompressed_nvcomp += t.compressed_pages;
        self.pages_split += t.pages_split;
        self.nvcomp_jobs += t.nvcomp_jobs;
        self.output_bytes += bytes as u64;
        self.host_seconds += (t.stage + t.queue).as_secs_f64();
        self.stage_seconds += t.stage.as_secs_f64();
        self.queue_seconds += t.queue.as_secs_f64();
        self.walk_thread_seconds += t.walk.as_secs_f64();
        self.check_thread_seconds += t.check.as_secs_f64();
        self.gpu_wait_seconds += t.wait.as_secs_f64();
        add_counts(&mut self.codecs, &t.codecs);
    }
}

#[cfg(test)]
mod tests {
    use super::super::Landing;
    use super::DecodeReport;

    fn landed(landing: Option<Landing>, rows: u64) -> DecodeReport {
        DecodeReport {
            landing,
            rows,
            ..DecodeReport::default()
        }
    }

    /// Shares' reports add up; their landing is kept where they agree and
    /// is pinned memory where any share's was.
    #[test]
    fn merged_reports_add_and_say_where_rows_landed() {
        let cases = [
            (None, Some(Landing::Device), Some(Landing::Device)),
            (
                Some(Landing::Device),
                Some(Landing::Device),
                Some(Landing::Device),
            ),
            (
                Some(Landing::Device),
                Some(Landing::Pinned),
                Some(Landing::Pinned),
            ),
            (
                Some(Landing::Pinned),
                Some(Landing::Device),
                Some(Landing::Pinned),
            ),
            (Some(Landing::Pinned), None, Some(Landing::Pinned)),
            (None, None, None),
        ];
        for (a, b, want) in cases {
            let mut total = landed(a, 2);
            total.merge(&landed(b, 3));
            assert_eq!((total.landing, total.rows), (want, 5), "{a:?} + {b:?}");
        }
    }
}
