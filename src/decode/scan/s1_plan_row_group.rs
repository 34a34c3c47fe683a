//! The host's share of a row group, with no CUDA call: walk the page
//! headers, plan the pages, cut them to the selected rows, check every
//! Snappy and LZ4 page and decompress the pages nvCOMP cannot take. Pure, so the row groups of a group are planned on
//! worker threads at once (rayon) while the GPU works on the group before.

use std::ops::Range;

use parquet::file::metadata::ParquetMetaData;

use super::compressed_check::{Checks, CompressedCheck, DecompressPlace};
use super::decode_error::DecodeError;
use super::s1_plan_headers_from_file::plan_from_file;
use super::s1_plan_host_decompress::{decompress_host_pages, HostPages};
use crate::decode::page::validate::{
    check_lz4_block, snappy_pieces_batch, CompressedError, SnappyPieces, LANES,
};
use crate::decode::page::{plan_fetched, ChunkCodec, DecodePlan, DecodePlanError, HostCodec};
use crate::engine::FileHandle;
use crate::nvcomp::Codec;
use crate::parquet::fetch::ChunkSlice;
use crate::parquet::ScanPlan;

/// A row group planned on the host.
#[derive(Debug)]
pub(crate) struct HostPlan {
    pub(crate) plan: DecodePlan,
    /// One kernel task per page (or per page window).
    pub(crate) specs: Vec<TaskSpec>,
    /// Each column's output rows.
    pub(crate) column_rows: Vec<u64>,
    /// The batch's rows when page pruning keeps part of the row group
    /// (the selected rows; a plan cuts pages only where no leaf is
    /// repeated, so every leaf's entries are then these rows); `None`: the
    /// row group's.
    pub(crate) selected_rows: Option<u64>,
    /// Time walking the headers and planning (one thread).
    pub(crate) walk: std::time::Duration,
    /// Time checking the compressed pages and decompressing the host's
    /// (wall, several threads).
    pub(crate) check: std::time::Duration,
    /// Per job of `plan.jobs`: the pieces of a Snappy page the host walked
    /// and found to split (nvCOMP then takes the pieces as jobs of their
    /// own; see `s3_to_s5_queue_group.rs`); else `None`.
    pub(crate) pieces: Vec<Option<SnappyPieces>>,
    /// The pages the host decompressed (`plan.host_jobs`), for the stage
    /// to upload into scratch.
    pub(crate) host_pages: HostPages,
}

/// Where [`plan_host`] reads a row group's pages.
pub(crate) enum PageSource<'a> {
    /// The fetched bytes, in host memory.
    Host(&'a [u8]),
    /// The file (open as `handle`; `None` where it is not a local file)
    /// while its `len` fetched bytes land in device memory: the page
    /// headers only.
    File {
        handle: Option<&'a FileHandle>,
        len: usize,
    },
}

/// Plans row group `row_group` of `file` from its pages at `source`.
/// Compressed pages are checked here as `check` says (nvCOMP's behaviour
/// on corrupt input is undefined; see [`checked_on_host`]).
pub(crate) fn plan_host(
    file: &str,
    metadata: &ParquetMetaData,
    scan: &ScanPlan,
    row_group: usize,
    source: PageSource<'_>,
    chunks: &[ChunkSlice],
    checks: Checks,
) -> Result<HostPlan, DecodeError> {
    let started = std::time::Instant::now();
    let plan_error = |source| DecodeError::Plan {
        file: file.to_string(),
        source,
    };
    let (plan, host) = match source {
        PageSource::Host(host) => {
            let plan = plan_fetched(metadata, scan, row_group, host, chunks).map_err(plan_error)?;
            (verified_on_host(plan, checks), host)
        }
        PageSource::File { handle, len } => {
            let handle = handle.ok_or_else(|| {
                plan_error(DecodePlanError::BadRowGroup {
                    row_group,
                    what: "lands in device memory but is not in a local file".into(),
                })
            })?;
            let plan = plan_from_file(handle, file, metadata, scan, row_group, len, chunks)?;
            let plan = verified_on_host(plan, checks);
            bodies_on_device(&plan, checks).map_err(plan_error)?;
            (plan, &[][..])
        }
    };
    let selection = scan
        .row_groups
        .iter()
        .find(|r| r.index == row_group)
        .and_then(|r| r.rows.clone());
    let (specs, column_rows) = task_specs(&plan, selection.as_deref());
    let selected_rows = selection.as_deref().map(rows_selected);
    let walk = started.elapsed();
    let pieces = if checks.check != CompressedCheck::Off {
        check_compressed_pages(file, &plan, host, checks.split_bytes, |job| {
            checked_on_host(checks.check, job.codec, job.src_len, checks.gpu_max)
        })?
    } else {
        vec![None; plan.jobs.len()]
    };
    let host_pages = decompress_host_pages(file, &plan, host)?;
    Ok(HostPlan {
        plan,
        specs,
        column_rows,
        selected_rows,
        walk,
        check: started.elapsed() - walk,
        pieces,
        host_pages,
    })
}

/// Whether `plan` needs no page body on the host under `checks` (the
/// landing chose device memory from the chunks' codecs; this holds it to
/// that): else the first page that does.
fn bodies_on_device(plan: &DecodePlan, checks: Checks) -> Result<(), DecodePlanError> {
    let needs_host = |column: usize, page: usize, codec: &'static str| DecodePlanError::NotOnHost {
        column: plan.columns[column].column.clone(),
        row_group: plan.row_group,
        page,
        codec,
    };
    if let Some(j) = plan.host_jobs.first() {
        let codec = match j.codec {
            HostCodec::Brotli => "BROTLI",
            HostCodec::Lz4Legacy => "LZ4",
            HostCodec::GzipMembers => "GZIP",
            HostCodec::Zstd => "ZSTD",
        };
        return Err(needs_host(j.column, j.page, codec));
    }
    let checked = plan
        .jobs
        .iter()
        .find(|j| checked_on_host(checks.check, j.codec, j.src_len, checks.gpu_max));
    match checked {
        Some(j) => Err(needs_host(
            j.column,
            j.page,
            ChunkCodec::Gpu(j.codec).name(),
        )),
        None => Ok(()),
    }
}

/// `plan` with the nvCOMP jobs of the codecs `checks` sends to the host
/// (ZSTD and GZIP by default: nvCOMP does not verify their streams) moved
/// to its host jobs.
fn verified_on_host(mut plan: DecodePlan, checks: Checks) -> DecodePlan {
    let on_host = |codec: Codec| match codec {
        Codec::Zstd if checks.zstd == DecompressPlace::Host => Some(HostCodec::Zstd),
        Codec::Gzip if checks.gzip == DecompressPlace::Host => Some(HostCodec::GzipMembers),
        _ => None,
    };
    let jobs = std::mem::take(&mut plan.jobs);
    for job in jobs {
        match on_host(job.codec) {
            Some(host) => plan.host_jobs.push(job.with_codec(host)),
            None => plan.jobs.push(job),
        }
    }
    plan
}

/// Whether a page of `codec`, `stored` bytes long, is checked on the host
/// under `check`: every Snappy and LZ4 page for [`CompressedCheck::Host`];
/// for [`CompressedCheck::Gpu`] LZ4 pages and Snappy pages longer than
/// `gpu_max` (the GPU's `gds_check_snappy` takes the others); for
/// [`CompressedCheck::Scan`] LZ4 pages (the GPU's Snappy scan takes every
/// Snappy page); none for [`CompressedCheck::Off`]. Other codecs have no
/// check (nvCOMP's Zstd and Deflate decoders bound their reads themselves).
pub(crate) fn checked_on_host(
    check: CompressedCheck,
    codec: Codec,
    stored: usize,
    gpu_max: usize,
) -> bool {
    match (check, codec) {
        (CompressedCheck::Off, _) => false,
        (_, Codec::Lz4) => true,
        (CompressedCheck::Host, Codec::Snappy) => true,
        (CompressedCheck::Gpu, Codec::Snappy) => stored > gpu_max,
        _ => false,
    }
}

/// One kernel task: a page of a column, whole or a window of its rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TaskSpec {
    /// Column index in the plan.
    pub(crate) column: usize,
    /// Index in the column's `pages`.
    pub(crate) page: usize,
    /// First output row.
    pub(crate) out_row: u64,
    /// (rows skipped, rows taken) when only part of the page is written.
    pub(crate) window: Option<(u32, u32)>,
}

/// The kernel tasks of a plan and each column's output rows. Without a
/// row selection every kept page is written whole at its `out_row`. With
/// one (page pruning: each column keeps the pages that overlap the
/// selected rows, and columns' pages end at different rows), every page is
/// cut to the selected rows it holds, so all columns hold exactly the same
/// rows, in order.
pub(crate) fn task_specs(
    plan: &DecodePlan,
    selection: Option<&[Range<i64>]>,
) -> (Vec<TaskSpec>, Vec<u64>) {
    let mut specs = Vec::new();
    let mut rows = Vec::with_capacity(plan.columns.len());
    for (ci, c) in plan.columns.iter().enumerate() {
        let Some(selection) = selection else {
            specs.extend(c.pages.iter().enumerate().map(|(pi, p)| TaskSpec {
                column: ci,
                page: pi,
                out_row: p.out_row,
                window: None,
            }));
            rows.push(c.rows);
            continue;
        };
        let selected_before = |row: i64| -> u64 {
            selection
                .iter()
                .map(|r| (row.min(r.end) - r.start).max(0) as u64)
                .sum()
        };
        for (pi, p) in c.pages.iter().enumerate() {
            let first = p.first_row.unwrap_or(p.out_row) as i64;
            let end = first + i64::from(p.num_rows);
            for r in selection {
                let (lo, hi) = (r.start.max(first), r.end.min(end));
                if lo >= hi {
                    continue;
                }
                specs.push(TaskSpec {
                    column: ci,
                    page: pi,
                    out_row: selected_before(lo),
                    window: Some(((lo - first) as u32, (hi - lo) as u32)),
                });
            }
        }
        rows.push(rows_selected(selection));
    }
    (specs, rows)
}

/// Rows in a row group's selected ranges.
fn rows_selected(selection: &[Range<i64>]) -> u64 {
    selection
        .iter()
        .map(|r| (r.end - r.start).max(0) as u64)
        .sum()
}

/// Pages a rayon task of the check walks: two per interleaved walk, so a
/// task's walks stay interleaved while its long pages finish.
const PAGES_PER_TASK: usize = 2 * LANES;

/// Walks every page of the plan that `picked` takes (Snappy and LZ4; in
/// parallel, the Snappy pages' walks interleaved a few to a thread:
/// [`snappy_pieces_batch`]) and refuses the row group at the first one, in
/// plan order, whose elements would reach outside the page or produce
/// another size than its header says. Returns, per job, where the
/// `split`-byte pieces of a Snappy page's output start in its stream, for
/// pages longer than `split` that split so (`split` 0: none).
fn check_compressed_pages(
    file: &str,
    plan: &DecodePlan,
    host: &[u8],
    split: usize,
    picked: impl Fn(&crate::decode::page::plan::DecompressJob) -> bool + Sync,
) -> Result<Vec<Option<SnappyPieces>>, DecodeError> {
    use rayon::prelude::*;
    type Verdict = Result<Option<SnappyPieces>, CompressedError>;
    let mut checked: Vec<Verdict> = vec![Ok(None); plan.jobs.len()];
    // The picked pages' streams, by codec. The plan placed every job
    // inside the row group's bytes; one that is not is refused.
    let (mut snappy, mut lz4) = (Vec::new(), Vec::new());
    for (i, j) in plan.jobs.iter().enumerate() {
        if !picked(j) {
            continue;
        }
        let Some(src) = host.get(j.src_offset..j.src_offset + j.src_len) else {
            checked[i] = Err(CompressedError::Truncated { at: 0 });
            continue;
        };
        match j.codec {
            Codec::Snappy => snappy.push((i, (src, j.dst_len))),
            Codec::Lz4 => lz4.push((i, (src, j.dst_len))),
            _ => {}
        }
    }
    let snappy_verdicts: Vec<Vec<Verdict>> = snappy
        .par_chunks(PAGES_PER_TASK)
        .map(|task| {
            let pages: Vec<(&[u8], usize)> = task.iter().map(|(_, page)| *page).collect();
            snappy_pieces_batch(&pages, split)
        })
        .collect();
    for ((i, _), verdict) in snappy.iter().zip(snappy_verdicts.into_iter().flatten()) {
        checked[*i] = verdict;
    }
    let lz4_verdicts: Vec<Verdict> = lz4
        .par_iter()
        .map(|(_, (src, size))| check_lz4_block(src, *size).map(|()| None))
        .collect();
    for ((i, _), verdict) in lz4.iter().zip(lz4_verdicts) {
        checked[*i] = verdict;
    }
    let mut pieces = Vec::with_capacity(checked.len());
    for (j, result) in plan.jobs.iter().zip(checked) {
        match result {
            Ok(b) => pieces.push(b),
            Err(source) => {
                return Err(DecodeError::CorruptCompressed {
                    file: file.to_string(),
                    column: plan.columns[j.column].column.clone(),
                    row_group: plan.row_group,
                    page: j.page,
                    source,
                })
            }
        }
    }
    Ok(pieces)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zstd_and_gzip_pages_go_to_the_host_unless_asked_for_the_gpu() {
        let job = |codec, page| crate::decode::page::DecompressJob {
            codec,
            column: 0,
            page,
            src_offset: 10 * page,
            src_len: 10,
            dst_offset: 20 * page,
            dst_len: 20,
        };
        let plan = DecodePlan {
            row_group: 0,
            columns: Vec::new(),
            jobs: vec![
                job(Codec::Zstd, 0),
                job(Codec::Snappy, 1),
                job(Codec::Gzip, 2),
                job(Codec::Lz4, 3),
            ],
            host_jobs: Vec::new(),
            scratch_bytes: 80,
        };
        let checks = Checks::new(CompressedCheck::Scan);
        let routed = verified_on_host(plan.clone(), checks);
        let on_gpu: Vec<(Codec, usize)> = routed.jobs.iter().map(|j| (j.codec, j.page)).collect();
        assert_eq!(on_gpu, [(Codec::Snappy, 1), (Codec::Lz4, 3)]);
        let on_host: Vec<(HostCodec, usize, usize)> = routed
            .host_jobs
            .iter()
            .map(|j| (j.codec, j.page, j.dst_offset))
            .collect();
        assert_eq!(
            on_host,
            [(HostCodec::Zstd, 0, 0), (HostCodec::GzipMembers, 2, 40)]
        );
        let trusted = Checks {
            zstd: DecompressPlace::Gpu,
            gzip: DecompressPlace::Gpu,
            ..checks
        };
        assert_eq!(verified_on_host(plan.clone(), trusted), plan);
    }

    /// A Snappy file of a few long pages and many short ones, planned and
    /// checked as the decoder does; returns its metadata, scan plan and
    /// row group 0's fetched bytes and chunks.
    fn snappy_row_group() -> (
        ParquetMetaData,
        ScanPlan,
        Vec<u8>,
        Vec<crate::parquet::fetch::ChunkSlice>,
    ) {
        use arrow::array::{ArrayRef, Int64Array, StringArray};
        use parquet::arrow::ArrowWriter;
        use parquet::basic::Compression;
        use parquet::file::properties::WriterProperties;
        let n = 60_000i64;
        let text: Vec<String> = (0..n)
            .map(|i| format!("row {i} says {}", "abcdefgh".repeat((i % 7) as usize)))
            .collect();
        let batch = arrow::record_batch::RecordBatch::try_from_iter([
            (
                "id",
                std::sync::Arc::new(Int64Array::from_iter_values(0..n)) as ArrayRef,
            ),
            (
                "text",
                std::sync::Arc::new(StringArray::from(text)) as ArrayRef,
            ),
        ])
        .unwrap();
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_dictionary_enabled(false)
            .set_data_page_row_count_limit(4_000)
            .set_write_batch_size(1_000)
            .build();
        let mut bytes = Vec::new();
        let mut w = ArrowWriter::try_new(&mut bytes, batch.schema(), Some(props)).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        let bytes = bytes::Bytes::from(bytes);
        let md = parquet::file::metadata::ParquetMetaDataReader::new()
            .parse_and_finish(&bytes)
            .unwrap();
        let scan =
            crate::parquet::plan::plan(&md, &crate::parquet::plan::ScanRequest::default()).unwrap();
        let lay = crate::parquet::fetch::layout(&scan, &scan.row_groups[0]);
        let mut buf = Vec::new();
        for r in &lay.reads {
            let start = r.file_offset as usize;
            buf.extend_from_slice(&bytes[start..start + r.len]);
        }
        (md, scan, buf, lay.chunks)
    }

    /// Every Snappy page's verdict and pieces, through the interleaved
    /// walks on the worker threads, equal the single walk's of the same
    /// page; a corrupted long page is refused with its column and page.
    #[test]
    fn the_host_check_is_the_single_walks_page_by_page() {
        use crate::decode::page::validate::{snappy_pieces, SNAPPY_BLOCK};
        let (md, scan, buf, chunks) = snappy_row_group();
        let planned = plan_host(
            "t.parquet",
            &md,
            &scan,
            0,
            PageSource::Host(&buf),
            &chunks,
            Checks::new(CompressedCheck::Host),
        )
        .unwrap();
        let jobs = &planned.plan.jobs;
        let snappy = jobs.iter().filter(|j| j.codec == Codec::Snappy).count();
        assert!(snappy > 2 * PAGES_PER_TASK, "{snappy} Snappy pages");
        for (j, pieces) in jobs.iter().zip(&planned.pieces) {
            let src = &buf[j.src_offset..j.src_offset + j.src_len];
            assert_eq!(
                pieces,
                &snappy_pieces(src, j.dst_len, SNAPPY_BLOCK).unwrap()
            );
        }
        assert!(planned.pieces.iter().any(Option::is_some), "no page split");
        // Corrupt the last page of the text column: a copy's offset byte
        // set past everything produced.
        let (page, victim) = jobs
            .iter()
            .enumerate()
            .filter(|(_, j)| planned.plan.columns[j.column].column == "text")
            .max_by_key(|(_, j)| j.src_offset)
            .unwrap();
        let src = &buf[victim.src_offset..victim.src_offset + victim.src_len];
        let mut broken = buf.clone();
        let mut flipped = false;
        for at in 8..src.len() {
            let mut bad = src.to_vec();
            bad[at] ^= 0x80;
            if snappy_pieces(&bad, victim.dst_len, SNAPPY_BLOCK).is_err() {
                broken[victim.src_offset + at] ^= 0x80;
                flipped = true;
                break;
            }
        }
        assert!(flipped);
        match plan_host(
            "t.parquet",
            &md,
            &scan,
            0,
            PageSource::Host(&broken),
            &chunks,
            Checks::new(CompressedCheck::Host),
        ) {
            Err(DecodeError::CorruptCompressed {
                column,
                row_group,
                page: p,
                ..
            }) => {
                assert_eq!(
                    (column.as_str(), row_group, p),
                    ("text", 0, victim.page),
                    "job {page}"
                );
            }
            other => panic!("{other:?}"),
        }
    }

    /// A plan landing on the device must need no page body on the host:
    /// a host job (Zstd decompressed on the host by default) or a page the
    /// check reads there (Snappy under the host check) is `NotOnHost`,
    /// naming the page; Snappy under the scan check passes.
    #[test]
    fn device_landing_refuses_plans_that_read_bodies_on_the_host() {
        let job = |codec: Codec, page: usize| crate::decode::page::DecompressJob {
            codec,
            column: 0,
            page,
            src_offset: 0,
            src_len: 10,
            dst_offset: 0,
            dst_len: 20,
        };
        let (md, scan, buf, chunks) = snappy_row_group();
        let off = Checks::new(CompressedCheck::Off);
        let base = plan_host("t", &md, &scan, 0, PageSource::Host(&buf), &chunks, off)
            .unwrap()
            .plan;
        let plan = |jobs: Vec<crate::decode::page::DecompressJob<Codec>>| DecodePlan {
            jobs,
            host_jobs: Vec::new(),
            ..base.clone()
        };
        let first = base.columns[0].column.clone();
        let scan_check = Checks::new(CompressedCheck::Scan);
        assert!(bodies_on_device(&plan(vec![job(Codec::Snappy, 1)]), scan_check).is_ok());
        let zstd = verified_on_host(plan(vec![job(Codec::Zstd, 2)]), scan_check);
        let host_check = Checks::new(CompressedCheck::Host);
        for (p, checks, want) in [
            (zstd, scan_check, ("ZSTD", 2)),
            (plan(vec![job(Codec::Snappy, 3)]), host_check, ("SNAPPY", 3)),
        ] {
            match bodies_on_device(&p, checks) {
                Err(DecodePlanError::NotOnHost {
                    column,
                    codec,
                    page,
                    ..
                }) => assert_eq!((column, codec, page), (first.clone(), want.0, want.1)),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn the_gpu_takes_short_snappy_pages_and_the_host_the_rest() {
        let max = 128 << 10;
        for stored in [0, 1, max - 1, max] {
            assert!(!checked_on_host(
                CompressedCheck::Gpu,
                Codec::Snappy,
                stored,
                max
            ));
            assert!(checked_on_host(
                CompressedCheck::Host,
                Codec::Snappy,
                stored,
                max
            ));
        }
        for stored in [max + 1, 1 << 20, usize::MAX] {
            assert!(checked_on_host(
                CompressedCheck::Gpu,
                Codec::Snappy,
                stored,
                max
            ));
            // The scan takes every Snappy page, whatever its length.
            assert!(!checked_on_host(
                CompressedCheck::Scan,
                Codec::Snappy,
                stored,
                max
            ));
        }
        for check in [
            CompressedCheck::Host,
            CompressedCheck::Gpu,
            CompressedCheck::Scan,
        ] {
            assert!(checked_on_host(check, Codec::Lz4, 1, max));
            for codec in [Codec::Zstd, Codec::Gzip] {
                assert!(!checked_on_host(check, codec, 1 << 20, max));
            }
        }
        for codec in [Codec::Snappy, Codec::Lz4] {
            assert!(!checked_on_host(CompressedCheck::Off, codec, 1 << 20, max));
        }
    }
}
