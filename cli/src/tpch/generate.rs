//! Writing the files: parallel writers, slices generated on rayon, temporary names, progress.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Instant;

use ::parquet::arrow::ArrowWriter;
use ::parquet::errors::ParquetError;
use arrow::error::ArrowError;
use arrow::record_batch::RecordBatch;
use indicatif::{HumanBytes, MultiProgress, ProgressBar, ProgressDrawTarget, ProgressStyle};
use rayon::prelude::*;

use super::options::{compression_name, default_parts, FileFormat, GenOptions};
use super::report::{FileReport, GenReport, TableReport};
use super::table::Table;
use super::{SLICE_ROWS, WAVE_SLICES};
use crate::error::{Error, Result};
use gdscan::engine::IoError;

/// One file to write: file `index` of `files` of `table`, generated as
/// tpchgen parts `index * slices + 1 ..= (index + 1) * slices` of
/// `files * slices`.
#[derive(Debug, Clone)]
struct FileJob {
    /// Position of the table in the run's table list (progress, report).
    slot: usize,
    table: Table,
    index: usize,
    files: usize,
    slices: usize,
    path: PathBuf,
    partial: PathBuf,
    /// The rows that size the file (see [`Table::sizing_rows`]).
    sizing_rows: u64,
}

impl FileJob {
    fn new(slot: usize, table: Table, index: usize, files: usize, sf: f64, dir: &Path) -> Self {
        let name = format!("part-{index}.parquet");
        Self::at(
            slot,
            table,
            index,
            files,
            sf,
            dir.join(&name),
            dir.join(name + ".partial"),
        )
    }

    fn at(
        slot: usize,
        table: Table,
        index: usize,
        files: usize,
        sf: f64,
        path: PathBuf,
        partial: PathBuf,
    ) -> Self {
        // orders_nested is sized by its lineitems, so that it is cut into
        // lineitem's files and tpchgen parts.
        let sizing_rows = table.sizing_rows(sf) / files.max(1) as u64;
        // Slices per file, keeping files × slices within tpchgen's i32 part numbers.
        let max_slices = (i32::MAX as usize / files.max(1)).max(1);
        let slices = if table.is_partitioned() {
            (sizing_rows.div_ceil(SLICE_ROWS).max(1) as usize).min(max_slices)
        } else {
            1
        };
        FileJob {
            slot,
            table,
            index,
            files,
            slices,
            path,
            partial,
            sizing_rows,
        }
    }

    /// tpchgen's part numbers (1-based) of this file, and the part count.
    fn tpch_parts(&self) -> (std::ops::Range<i32>, i32) {
        let count = (self.files * self.slices) as i32;
        let first = (self.index * self.slices) as i32 + 1;
        (first..first + self.slices as i32, count)
    }
}

/// Why a file was not written.
enum Failure {
    /// Another file failed first.
    Cancelled,
    /// This file failed.
    Error(Error),
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure::Error(e)
    }
}

/// A written file.
struct Written {
    rows: u64,
    bytes: u64,
    started: Instant,
    finished: Instant,
}

/// A `Write` that keeps the first I/O error it saw, since the parquet crate
/// turns some of them into text (e.g. when its buffer is flushed at close).
struct RecordingSink<W> {
    inner: W,
    error: Arc<Mutex<Option<std::io::Error>>>,
}

impl<W: Write> RecordingSink<W> {
    fn record<T>(&self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            let mut slot = self.error.lock().unwrap_or_else(|p| p.into_inner());
            if slot.is_none() {
                *slot = Some(match e.raw_os_error() {
                    Some(code) => std::io::Error::from_raw_os_error(code),
                    None => std::io::Error::new(e.kind(), e.to_string()),
                });
            }
        }
        r
    }
}

impl<W: Write> Write for RecordingSink<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.inner.write(buf);
        self.record(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.inner.flush();
        self.record(r)
    }
}

/// A parquet writer's error as a typed error naming `shown`: the I/O error
/// underneath when there is one (full disk: `write on FILE failed: No space
/// left on device`).
fn write_error(shown: &str, e: ParquetError, recorded: Option<std::io::Error>) -> Error {
    if let Some(io) = recorded {
        return Error::io(shown, "write", io);
    }
    match e {
        ParquetError::External(inner) => match inner.downcast::<std::io::Error>() {
            Ok(io) => Error::io(shown, "write", *io),
            Err(other) => Error::from_parquet(shown, ParquetError::External(other)),
        },
        other => Error::from_parquet(shown, other),
    }
}

/// Generates one wave of slices on rayon's pool; the receiver gets the batches in order.
fn spawn_wave(
    table: Table,
    scale_factor: f64,
    parts: std::ops::Range<i32>,
    part_count: i32,
) -> mpsc::Receiver<std::result::Result<Vec<RecordBatch>, ArrowError>> {
    let (tx, rx) = mpsc::sync_channel(1);
    rayon::spawn(move || {
        let generated = parts
            .into_par_iter()
            .map(|p| {
                table
                    .batches(scale_factor, p, part_count, SLICE_ROWS as usize)
                    .collect::<std::result::Result<Vec<_>, _>>()
            })
            .collect::<std::result::Result<Vec<Vec<RecordBatch>>, _>>()
            .map(|slices| slices.into_iter().flatten().collect());
        // The receiver is gone when its writer failed: nothing to do then.
        let _ = tx.send(generated);
    });
    rx
}

/// Writes `job`'s rows into `sink` (a Parquet file, footer included) and
/// returns the sink and the rows written. `on_batch(rows, bytes)` reports
/// progress: rows written and bytes flushed since the last call.
fn write_rows<W: Write + Send>(
    sink: W,
    job: &FileJob,
    scale_factor: f64,
    format: &FileFormat,
    cancel: &AtomicBool,
    on_batch: &dyn Fn(u64, u64),
) -> std::result::Result<(W, u64), Failure> {
    let shown = job.path.display().to_string();
    let recorded = Arc::new(Mutex::new(None));
    let sink = RecordingSink {
        inner: sink,
        error: Arc::clone(&recorded),
    };
    let fail = |e: ParquetError| {
        let io = recorded.lock().unwrap_or_else(|p| p.into_inner()).take();
        Failure::Error(write_error(&shown, e, io))
    };
    let stored = format.encoding.stored_schema(job.table);
    let props = format.props_for(job.table).clone();
    let mut writer = ArrowWriter::try_new(sink, Arc::clone(&stored), Some(props)).map_err(fail)?;
    let (parts, part_count) = job.tpch_parts();
    let waves: Vec<std::ops::Range<i32>> = parts
        .clone()
        .step_by(WAVE_SLICES)
        .map(|start| start..(start + WAVE_SLICES as i32).min(parts.end))
        .collect();
    let mut waves = waves.into_iter();
    let mut pending = waves
        .next()
        .map(|w| spawn_wave(job.table, scale_factor, w, part_count));
    let (mut rows, mut reported_bytes) = (0u64, 0u64);
    while let Some(rx) = pending.take() {
        let batches = rx
            .recv()
            .map_err(|_| {
                Error::io(
                    &shown,
                    "generate TPC-H rows",
                    std::io::Error::other("the generator stopped"),
                )
            })?
            .map_err(|e| Error::io(&shown, "generate TPC-H rows", std::io::Error::other(e)))?;
        // Generate the next wave while this one is encoded.
        pending = waves
            .next()
            .map(|w| spawn_wave(job.table, scale_factor, w, part_count));
        for batch in batches {
            if cancel.load(Ordering::Relaxed) {
                return Err(Failure::Cancelled);
            }
            let batch = format
                .encoding
                .stored_batch(batch, &stored)
                .map_err(|e| fail(ParquetError::External(Box::new(e))))?;
            writer.write(&batch).map_err(fail)?;
            rows += batch.num_rows() as u64;
            let bytes = writer.bytes_written() as u64;
            on_batch(batch.num_rows() as u64, bytes - reported_bytes);
            reported_bytes = bytes;
        }
    }
    let sink = writer.into_inner().map_err(fail)?;
    Ok((sink.inner, rows))
}

/// Writes `job` to its partial name, syncs it and renames it to its final
/// name; on any failure the partial file is removed.
fn write_file(
    job: &FileJob,
    scale_factor: f64,
    format: &FileFormat,
    cancel: &AtomicBool,
    on_batch: &dyn Fn(u64, u64),
) -> std::result::Result<Written, Failure> {
    let started = Instant::now();
    let shown = job.path.display().to_string();
    let result = (|| {
        let file = std::fs::File::create(&job.partial).map_err(|e| Error::from_open(&shown, e))?;
        let (file, rows) = write_rows(file, job, scale_factor, format, cancel, on_batch)?;
        file.sync_all().map_err(|e| Error::io(&shown, "sync", e))?;
        let bytes = file
            .metadata()
            .map_err(|e| Error::io(&shown, "stat", e))?
            .len();
        drop(file);
        std::fs::rename(&job.partial, &job.path).map_err(|e| Error::io(&shown, "rename", e))?;
        Ok::<_, Failure>((rows, bytes))
    })();
    match result {
        Ok((rows, bytes)) => Ok(Written {
            rows,
            bytes,
            started,
            finished: Instant::now(),
        }),
        Err(f) => {
            let _ = std::fs::remove_file(&job.partial);
            Err(f)
        }
    }
}

/// Progress bars, one per table; hidden when quiet or when stderr is not a terminal.
struct Progress {
    _multi: MultiProgress,
    bars: Vec<ProgressBar>,
    /// Bytes flushed so far, per table (the message while it runs).
    bytes: Vec<AtomicU64>,
    /// Files not yet complete, rows and bytes of the complete ones, per table.
    remaining: Vec<AtomicUsize>,
    done_rows: Vec<AtomicU64>,
    done_bytes: Vec<AtomicU64>,
}

impl Progress {
    /// Bars for `tables` of `files` files each.
    fn new(tables: &[Table], files: &[usize], scale_factor: f64, quiet: bool) -> Self {
        let target = if quiet || !std::io::stderr().is_terminal() {
            ProgressDrawTarget::hidden()
        } else {
            ProgressDrawTarget::stderr()
        };
        Self::with_target(tables, files, scale_factor, target)
    }

    fn hidden(tables: &[Table], files: &[usize], scale_factor: f64) -> Self {
        Self::with_target(tables, files, scale_factor, ProgressDrawTarget::hidden())
    }

    fn with_target(
        tables: &[Table],
        files: &[usize],
        scale_factor: f64,
        target: ProgressDrawTarget,
    ) -> Self {
        let multi = MultiProgress::with_draw_target(target);
        let style = ProgressStyle::with_template(
            "{prefix:>9} [{bar:32}] {human_pos:>11}/{human_len:11} rows {msg:>11} {elapsed:>4}",
        )
        .expect("progress template is valid")
        .progress_chars("=> ");
        let bars = tables
            .iter()
            .map(|t| {
                let bar = multi.add(ProgressBar::new(t.estimated_rows(scale_factor)));
                bar.set_style(style.clone());
                bar.set_prefix(t.name());
                bar.set_message(HumanBytes(0).to_string());
                bar
            })
            .collect();
        Progress {
            _multi: multi,
            bars,
            bytes: tables.iter().map(|_| AtomicU64::new(0)).collect(),
            remaining: files.iter().map(|&n| AtomicUsize::new(n)).collect(),
            done_rows: tables.iter().map(|_| AtomicU64::new(0)).collect(),
            done_bytes: tables.iter().map(|_| AtomicU64::new(0)).collect(),
        }
    }

    fn add(&self, slot: usize, rows: u64, bytes: u64) {
        let bar = &self.bars[slot];
        bar.inc(rows);
        if bar.position() > bar.length().unwrap_or(0) {
            bar.set_length(bar.position());
        }
        if bytes > 0 {
            let total = self.bytes[slot].fetch_add(bytes, Ordering::Relaxed) + bytes;
            bar.set_message(HumanBytes(total).to_string());
        }
    }

    /// A file of table `slot` is complete; the table's bar finishes with its last file.
    fn file_done(&self, slot: usize, rows: u64, bytes: u64) {
        let rows = self.done_rows[slot].fetch_add(rows, Ordering::Relaxed) + rows;
        let bytes = self.done_bytes[slot].fetch_add(bytes, Ordering::Relaxed) + bytes;
        if self.remaining[slot].fetch_sub(1, Ordering::AcqRel) == 1 {
            let bar = &self.bars[slot];
            bar.set_length(rows);
            bar.set_position(rows);
            bar.set_message(HumanBytes(bytes).to_string());
            bar.finish();
        }
    }

    fn abandon(&self) {
        for bar in &self.bars {
            if !bar.is_finished() {
                bar.abandon();
            }
        }
    }
}

/// Runs `jobs` on up to rayon's thread count of writer threads and returns
/// each job's outcome once every writer has stopped (after the first error,
/// the others stop at their next batch and the jobs not started are cancelled).
fn run_jobs(
    jobs: &[FileJob],
    scale_factor: f64,
    format: &FileFormat,
    progress: &Progress,
) -> Vec<Option<std::result::Result<Written, Failure>>> {
    let next = AtomicUsize::new(0);
    let cancel = AtomicBool::new(false);
    let outcomes: Vec<Mutex<Option<std::result::Result<Written, Failure>>>> =
        jobs.iter().map(|_| Mutex::new(None)).collect();
    let writers = rayon::current_num_threads().clamp(1, jobs.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..writers {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(job) = jobs.get(i) else { break };
                let outcome = if cancel.load(Ordering::Relaxed) {
                    Err(Failure::Cancelled)
                } else {
                    let on_batch = |rows, bytes| progress.add(job.slot, rows, bytes);
                    write_file(job, scale_factor, format, &cancel, &on_batch)
                };
                match &outcome {
                    Ok(w) => progress.file_done(job.slot, w.rows, w.bytes),
                    Err(Failure::Error(_)) => cancel.store(true, Ordering::Relaxed),
                    Err(Failure::Cancelled) => {}
                }
                *outcomes[i].lock().unwrap_or_else(|p| p.into_inner()) = Some(outcome);
            });
        }
    });
    outcomes
        .into_iter()
        .map(|m| m.into_inner().unwrap_or_else(|p| p.into_inner()))
        .collect()
}

/// Removes whatever is at `path` (a folder and its contents, or a file).
fn remove_path(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Prepares `opts.out`: creates it, or checks that it is empty (unless
/// `force`); with `force`, replaces only the folders of `tables`.
fn prepare_out(opts: &GenOptions, tables: &[Table]) -> Result<()> {
    let out = &opts.out;
    let shown = out.display().to_string();
    if out.is_dir() {
        let mut entries =
            std::fs::read_dir(out).map_err(|e| Error::io(&shown, "read folder", e))?;
        if entries.next().is_some() && !opts.force {
            return Err(Error::io(
                &shown,
                "tpch gen",
                std::io::Error::new(
                    std::io::ErrorKind::DirectoryNotEmpty,
                    "the folder is not empty; use --force to overwrite (only the folders of the tables generated are replaced)",
                ),
            ));
        }
    } else {
        std::fs::create_dir_all(out).map_err(|e| Error::io(&shown, "create folder", e))?;
    }
    for t in tables {
        let dir = out.join(t.name());
        let shown = dir.display().to_string();
        remove_path(&dir).map_err(|e| Error::io(&shown, "remove", e))?;
        std::fs::create_dir(&dir).map_err(|e| match e.kind() {
            std::io::ErrorKind::PermissionDenied => IoError::PermissionDenied {
                path: shown.clone(),
            }
            .into(),
            _ => Error::io(&shown, "create folder", e),
        })?;
    }
    Ok(())
}

/// Writes the TPC-H tables `opts.tables` at `opts.scale_factor` as Parquet
/// under `opts.out` (`OUT/<table>/part-<i>.parquet`), in parallel, with a
/// progress bar on a terminal. See the module documentation for the layout,
/// the defaults and what happens on errors.
pub fn generate(opts: &GenOptions) -> Result<GenReport> {
    opts.validate()?;
    let started = Instant::now();
    let mut tables: Vec<Table> = Vec::new();
    for t in &opts.tables {
        if !tables.contains(t) {
            tables.push(*t);
        }
    }
    prepare_out(opts, &tables)?;
    let sf = opts.scale_factor;
    let mut jobs = Vec::new();
    for (slot, &table) in tables.iter().enumerate() {
        let files = match (table.is_partitioned(), opts.parts) {
            (false, _) => 1,
            (true, Some(k)) => k,
            (true, None) => default_parts(table, sf),
        };
        let dir = opts.out.join(table.name());
        jobs.extend((0..files).map(|i| FileJob::new(slot, table, i, files, sf, &dir)));
    }
    // Largest files first, so that the small ones fill in at the end.
    jobs.sort_by_key(|j| std::cmp::Reverse(j.sizing_rows));
    let files: Vec<usize> = (0..tables.len())
        .map(|slot| jobs.iter().filter(|j| j.slot == slot).count())
        .collect();
    let progress = Progress::new(&tables, &files, sf, opts.quiet);
    let outcomes = run_jobs(&jobs, sf, &opts.file_format(), &progress);

    let mut complete = vec![true; tables.len()];
    let mut first_error = None;
    let mut files: Vec<Vec<(usize, FileReport, Instant, Instant)>> =
        tables.iter().map(|_| Vec::new()).collect();
    for (job, outcome) in jobs.iter().zip(outcomes) {
        match outcome {
            Some(Ok(w)) => files[job.slot].push((
                job.index,
                FileReport {
                    path: job.path.clone(),
                    rows: w.rows,
                    bytes: w.bytes,
                },
                w.started,
                w.finished,
            )),
            Some(Err(Failure::Error(e))) => {
                complete[job.slot] = false;
                first_error.get_or_insert(e);
            }
            Some(Err(Failure::Cancelled)) | None => complete[job.slot] = false,
        }
    }
    if let Some(e) = first_error {
        progress.abandon();
        // Remove the tables left incomplete: a reader must never see part of a table.
        for (slot, t) in tables.iter().enumerate() {
            if !complete[slot] {
                let _ = remove_path(&opts.out.join(t.name()));
            }
        }
        return Err(e);
    }

    let mut reports = Vec::with_capacity(tables.len());
    for (slot, &table) in tables.iter().enumerate() {
        let mut table_files = std::mem::take(&mut files[slot]);
        table_files.sort_by_key(|f| f.0);
        let first = table_files.iter().map(|f| f.2).min().unwrap_or(started);
        let last = table_files.iter().map(|f| f.3).max().unwrap_or(first);
        let dir = opts.out.join(table.name());
        // Make the renames durable.
        std::fs::File::open(&dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(&dir.display().to_string(), "sync folder", e))?;
        let files: Vec<FileReport> = table_files.into_iter().map(|f| f.1).collect();
        let rows = files.iter().map(|f| f.rows).sum();
        let bytes = files.iter().map(|f| f.bytes).sum();
        reports.push(TableReport {
            table,
            files,
            rows,
            bytes,
            seconds: (last - first).as_secs_f64(),
        });
    }
    Ok(GenReport {
        scale_factor: sf,
        out: opts.out.clone(),
        compression: compression_name(opts.compression),
        encoding: opts.encoding.name().to_string(),
        row_group_rows: opts.row_group_rows,
        tables: reports,
        seconds: started.elapsed().as_secs_f64(),
    })
}

/// Writes TPC-H lineitem at `scale_factor` to `path` (Snappy, page
/// statistics, [`ROW_GROUP_ROWS`](super::ROW_GROUP_ROWS) rows per row group) unless it exists.
/// The file is written under a temporary name and renamed when complete.
/// Returns whether it was written.
pub fn ensure_lineitem(scale_factor: f64, path: &Path) -> Result<bool> {
    if path.is_file() {
        return Ok(false);
    }
    let shown = path.display().to_string();
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(&shown, "create folder", e))?;
    }
    let opts = GenOptions {
        tables: vec![Table::LineItem],
        ..GenOptions::new(scale_factor, path.parent().unwrap_or(Path::new(".")))
    };
    opts.validate()?;
    let job = FileJob::at(
        0,
        Table::LineItem,
        0,
        1,
        scale_factor,
        path.to_path_buf(),
        path.with_extension("partial"),
    );
    let progress = Progress::hidden(&opts.tables, &[1], scale_factor);
    match run_jobs(&[job], scale_factor, &opts.file_format(), &progress)
        .pop()
        .flatten()
    {
        Some(Ok(_)) => Ok(true),
        Some(Err(Failure::Error(e))) => Err(e),
        Some(Err(Failure::Cancelled)) | None => Err(Error::io(
            &shown,
            "write",
            std::io::Error::other("the writer stopped"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::super::options::parse_compression;
    use super::*;
    use ::parquet::basic::{Compression, ZstdLevel};

    #[test]
    fn tiny_lineitem_is_written_whole_and_readable() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("lineitem.parquet");
        assert!(ensure_lineitem(0.001, &path).unwrap());
        assert!(!ensure_lineitem(0.001, &path).unwrap(), "kept when present");
        let reader = ::parquet::file::serialized_reader::SerializedFileReader::new(
            std::fs::File::open(&path).unwrap(),
        )
        .unwrap();
        use ::parquet::file::reader::FileReader;
        let rows = reader.metadata().file_metadata().num_rows();
        assert!(
            (5_000..7_000).contains(&rows),
            "about 6000 lineitems at SF 0.001, got {rows}"
        );
        assert_eq!(
            reader
                .metadata()
                .file_metadata()
                .schema_descr()
                .num_columns(),
            16
        );
    }

    #[test]
    fn table_names_round_trip() {
        for t in Table::ALL.into_iter().chain(Table::DERIVED) {
            assert_eq!(t.to_string().parse::<Table>().unwrap(), t);
        }
        assert_eq!(
            "orders_nested".parse::<Table>().unwrap(),
            Table::OrdersNested
        );
        assert!(!Table::ALL.contains(&Table::OrdersNested));
        assert_eq!("LineItem".parse::<Table>().unwrap(), Table::LineItem);
        assert_eq!("partsupp".parse::<Table>().unwrap(), Table::PartSupp);
        let e = "lineitems".parse::<Table>().unwrap_err();
        assert!(e.contains("lineitems") && e.contains("partsupp"), "{e}");
        assert!(e.contains("orders_nested"), "{e}");
    }

    #[test]
    fn compression_parses() {
        assert_eq!(
            parse_compression("none").unwrap(),
            Compression::UNCOMPRESSED
        );
        assert_eq!(parse_compression("SNAPPY").unwrap(), Compression::SNAPPY);
        assert_eq!(
            parse_compression("zstd").unwrap(),
            Compression::ZSTD(ZstdLevel::default())
        );
        assert_eq!(
            parse_compression("zstd:9").unwrap(),
            Compression::ZSTD(ZstdLevel::try_new(9).unwrap())
        );
        assert_eq!(
            compression_name(parse_compression("zstd:9").unwrap()),
            "zstd:9"
        );
        for bad in ["zstd:0", "zstd:23", "zstd:x", "snappy:3", "gzip", ""] {
            assert!(parse_compression(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn default_parts_follow_the_rule() {
        assert_eq!(default_parts(Table::Nation, 100.0), 1);
        assert_eq!(default_parts(Table::Region, 100.0), 1);
        assert_eq!(default_parts(Table::LineItem, 0.01), 1);
        // SF 1: 6 M lineitems / 4 Mi rows per file.
        assert_eq!(default_parts(Table::LineItem, 1.0), 2);
        assert_eq!(default_parts(Table::Orders, 1.0), 1);
        assert_eq!(default_parts(Table::LineItem, 10.0), 15);
        assert_eq!(default_parts(Table::Orders, 10.0), 4);
        // orders_nested is cut into lineitem's files.
        for sf in [0.01, 1.0, 10.0, 100.0] {
            assert_eq!(
                default_parts(Table::OrdersNested, sf),
                default_parts(Table::LineItem, sf)
            );
        }
    }

    #[test]
    fn orders_nested_files_are_generated_from_lineitems_parts() {
        // The same tpchgen parts as lineitem's file of the same number, so
        // that each nested file holds the orders of that lineitem file.
        let dir = Path::new("/nonexistent");
        for (sf, files) in [(0.01, 1), (1.0, 2), (10.0, 15), (1.0, 7)] {
            for i in 0..files {
                let flat = FileJob::new(0, Table::LineItem, i, files, sf, dir);
                let nested = FileJob::new(0, Table::OrdersNested, i, files, sf, dir);
                assert_eq!(nested.tpch_parts(), flat.tpch_parts(), "SF {sf} file {i}");
            }
        }
    }

    #[test]
    fn slices_cover_the_table_once() {
        // The slices of all files are tpchgen's parts 1..=files*slices, each once.
        let dir = Path::new("/nonexistent");
        let files = 3;
        let mut seen = Vec::new();
        for i in 0..files {
            let job = FileJob::new(0, Table::LineItem, i, files, 1.0, dir);
            let (parts, count) = job.tpch_parts();
            assert_eq!(count as usize, files * job.slices);
            seen.extend(parts);
        }
        let count = seen.len() as i32;
        assert_eq!(seen, (1..=count).collect::<Vec<_>>());
    }

    /// Writes up to `room` bytes, then fails like a full disk.
    struct FullDisk {
        room: usize,
    }

    impl Write for FullDisk {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if self.room == 0 {
                return Err(std::io::Error::from_raw_os_error(libc::ENOSPC));
            }
            let n = buf.len().min(self.room);
            self.room -= n;
            Ok(n)
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_full_disk_is_a_typed_error_naming_the_file() {
        let job = FileJob::new(0, Table::Orders, 0, 1, 0.01, Path::new("/out/orders"));
        let format = GenOptions::new(0.01, "/out").file_format();
        let cancel = AtomicBool::new(false);
        for room in [0, 100, 50_000] {
            let failure = write_rows(FullDisk { room }, &job, 0.01, &format, &cancel, &|_, _| {})
                .err()
                .expect("a full disk fails the write");
            let Failure::Error(e) = failure else {
                panic!("cancelled instead of failing")
            };
            match &e {
                Error::Gdscan(gdscan::Error::Io(IoError::Os { path, source, .. })) => {
                    assert_eq!(path, "/out/orders/part-0.parquet");
                    assert_eq!(source.raw_os_error(), Some(libc::ENOSPC), "{e}");
                }
                other => panic!("expected Error::Io(IoError::Os), got {other:?}"),
            }
            assert!(e.to_string().contains("No space left on device"), "{e}");
        }
    }
}
