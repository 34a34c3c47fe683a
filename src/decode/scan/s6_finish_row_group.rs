//! A row group in flight: its GPU work queued by its group (decompression,
//! kernels, status copy-back, one event), then finished (the event waited
//! for, every page's status checked, the device batch built).
//!
//! Nothing here synchronises the device: the waits are
//! [`InFlight::finish`]'s on the row group's own event, after the next row
//! group has been queued behind it, and, for a row group with
//! DELTA_BYTE_ARRAY strings, [`InFlight::queue_pending`]'s on its values'
//! sizes, after the next group has been queued (`super::s5_delta_string_buffers`).

use std::sync::Arc;

use arrow::datatypes::DataType;

use super::decode_error::DecodeError;
use super::gpu_resources::Gpu;
use super::report::RowGroupTimes;
use super::s2_column_out::ColumnOut;
use super::s2_nested_columns::Where;
use super::s2_upload_row_group::Staged;
use super::s4_group_results::{GroupShared, SyncOnDrop};
use super::s5_delta_string_buffers::give_dba_buffers;
use crate::cuda::{CudaError, Event, PooledPinnedBuffer, Stream};
use crate::decode::array::{DeviceBatch, DeviceColumn, MemoryLocation, ReadyEvent};
use crate::decode::kernels::nest::parse_nest_status;
use crate::decode::kernels::parse_status;
use crate::decode::kernels::snappy_scan::job_output;
use crate::decode::page::DecodePlan;

/// A row group whose GPU work is queued: its group's decompression, its
/// kernels, its status copy and its event.
pub(crate) struct InFlight {
    /// Waits for the row group's event if dropped before [`finish`]
    /// (an error elsewhere): declared first, so it runs before the buffers
    /// below go back to their pools.
    pub(crate) done: SyncOnDrop,
    /// Its kernels are not queued yet: `done` is the event behind its
    /// DELTA_BYTE_ARRAY sizes ([`InFlight::queue_pending`]).
    pub(crate) kernels_pending: bool,
    pub(crate) staged: Staged,
    /// The group's nvCOMP results (and buffers, kept until the event).
    pub(crate) group: Arc<GroupShared>,
    /// Where each of `staged.jobs` is in the group's nvCOMP arrays: one
    /// index, or one per piece of a split Snappy page.
    pub(crate) nv_index: Vec<std::ops::Range<usize>>,
    /// Each of `staged.jobs`' page in the group's Snappy scan, if it was
    /// scanned on the GPU.
    pub(crate) scan_index: Vec<Option<usize>>,
    /// The kernels' status, copied back.
    pub(crate) down: PooledPinnedBuffer,
    pub(crate) times: RowGroupTimes,
    /// The last row group of its group.
    pub(crate) ends_group: bool,
    /// The group's index in its scan (for a timeout's error).
    pub(crate) group_index: usize,
}

impl InFlight {
    /// The error of a wait that passed `limit`.
    fn timeout(&self, limit: std::time::Duration) -> DecodeError {
        let plan = &self.staged.plan;
        DecodeError::DeviceTimeout {
            file: self.staged.file.clone(),
            row_group: plan.row_group,
            group: self.group_index,
            first_column: plan
                .columns
                .first()
                .map(|c| c.column.clone())
                .unwrap_or_default(),
            columns: plan.columns.len(),
            pages: plan.columns.iter().map(|c| c.pages.len()).sum(),
            limit,
        }
    }

    /// Queues the kernels of a row group left pending by its group on
    /// `stream` (after the event behind its DELTA_BYTE_ARRAY values'
    /// sizes, waited for at most `limit`): its values' buffers, its
    /// kernels, its status copy and its event. Nothing to do for the
    /// others.
    ///
    /// On `DecodeError::DeviceTimeout` the caller must leak the row group,
    /// as [`InFlight::finish`] does.
    pub(crate) fn queue_pending(
        &mut self,
        gpu: &Gpu,
        stream: &Stream,
        limit: std::time::Duration,
    ) -> Result<(), DecodeError> {
        if !self.kernels_pending {
            return Ok(());
        }
        if !self.done.wait_for(limit)? {
            return Err(self.timeout(limit));
        }
        self.queue_kernels_now(gpu, stream)
    }

    /// As [`InFlight::queue_pending`] without waiting: true when the sizes
    /// were there and the kernels are queued (or were already).
    pub(crate) fn try_queue_pending(
        &mut self,
        gpu: &Gpu,
        stream: &Stream,
    ) -> Result<bool, DecodeError> {
        if !self.kernels_pending {
            return Ok(true);
        }
        if !self.done.wait_for(std::time::Duration::ZERO)? {
            return Ok(false);
        }
        self.queue_kernels_now(gpu, stream)?;
        Ok(true)
    }

    /// The sizes are in: buffers, kernels, status copy, event on `stream`,
    /// which first waits for the row group's own stream.
    fn queue_kernels_now(&mut self, gpu: &Gpu, stream: &Stream) -> Result<(), DecodeError> {
        stream.wait_event(self.done.event())?;
        give_dba_buffers(gpu, stream, &mut self.staged)?;
        let event = queue_row_group_kernels(gpu, stream, &self.staged, &mut self.down, None)?;
        self.done = SyncOnDrop::new(Arc::new(event));
        self.kernels_pending = false;
        Ok(())
    }

    /// Rows of the batch.
    pub(crate) fn rows(&self) -> usize {
        self.staged.rows
    }

    /// Bytes of the decoded columns' own buffers (values and validity).
    pub(crate) fn output_bytes(&self) -> usize {
        self.staged.output_bytes
    }

    /// Waits for the row group's event (at most `limit`), checks every
    /// page and builds the batch.
    ///
    /// Past `limit` the row group is abandoned: its buffers are leaked
    /// rather than handed back to pools the unfinished work still writes
    /// (`DecodeError::DeviceTimeout`).
    pub(crate) fn finish(
        mut self,
        device: usize,
        limit: std::time::Duration,
    ) -> Result<(DeviceBatch, RowGroupTimes), DecodeError> {
        debug_assert!(!self.kernels_pending, "queue_pending first");
        let waited = std::time::Instant::now();
        if !self.done.wait_for(limit)? {
            let error = self.timeout(limit);
            std::mem::forget(self);
            return Err(error);
        }
        self.times.wait = waited.elapsed();
        self.check_jobs()?;
        let nulls = self.page_nulls()?;
        let staged = &mut self.staged;
        let plan = &staged.plan;
        let columns = match &staged.nest {
            Some(nest) => {
                let status = parse_nest_status(
                    &self.down[staged.page_status_len..staged.status_len],
                    nest.n_tasks(),
                )
                .ok_or(DecodeError::StatusSize)?;
                let mut outs: Vec<Option<ColumnOut>> = staged.columns.drain(..).map(Some).collect();
                let at = Where {
                    file: &staged.file,
                    plan,
                };
                nest.build(at, &status, &mut outs, &nulls)?
            }
            None => flat_columns(plan, staged.columns.drain(..), &staged.column_rows, &nulls)?,
        };
        let ready: Arc<dyn ReadyEvent> = self.done.event().clone();
        let batch = DeviceBatch::try_new(
            staged.schema.clone(),
            staged.rows,
            columns,
            MemoryLocation::cuda(device),
            Some(ready),
        )?;
        Ok((batch, self.times.clone()))
    }

    /// Checks every decompression job of the row group, in order: the GPU's
    /// verdict on its compressed stream (the Snappy scan's or check's), then
    /// nvCOMP's status and output size of each of its pieces; counts the
    /// nvCOMP jobs and the pages split into pieces.
    fn check_jobs(&mut self) -> Result<(), DecodeError> {
        let staged = &self.staged;
        let plan = &staged.plan;
        let rg = plan.row_group;
        for ((job, ks), scanned) in staged.jobs.iter().zip(&self.nv_index).zip(&self.scan_index) {
            let (fault, split) = match scanned {
                Some(p) => self.group.scan_result(*p, job.dst_len),
                None => (self.group.check_error(ks.start, job.dst_len), false),
            };
            if let Some(source) = fault {
                return Err(DecodeError::CorruptCompressed {
                    file: staged.file.clone(),
                    column: plan.columns[job.column].column.clone(),
                    row_group: rg,
                    page: job.page,
                    source,
                });
            }
            // A split page's pieces each make `piece` bytes but the last; a
            // scanned page that was not split is its first job, whole.
            let pieces = ks.len();
            self.times.nvcomp_jobs += if scanned.is_some() && !split {
                1
            } else {
                pieces
            };
            self.times.pages_split += usize::from(split || (scanned.is_none() && pieces > 1));
            let mut what = None;
            for (i, k) in ks.clone().enumerate() {
                let (status, actual) = self.group.result(k);
                let expected = match (scanned, &job.pieces) {
                    (Some(_), _) => job_output(i, job.dst_len, split),
                    (None, Some(b)) if pieces > 1 => b.out_len(i, job.dst_len),
                    _ => job.dst_len,
                };
                what = if status != 0 {
                    Some(format!(
                        "{}",
                        crate::nvcomp::NvcompStatus::from_code(status)
                    ))
                } else if actual != expected && pieces == 1 {
                    Some(format!(
                        "{actual} bytes decompressed, the page header says {}",
                        job.dst_len
                    ))
                } else if actual != expected {
                    Some(format!(
                        "{actual} bytes decompressed in piece {i} of {pieces}, {expected} expected"
                    ))
                } else {
                    None
                };
                if what.is_some() {
                    break;
                }
            }
            if let Some(what) = what {
                return Err(DecodeError::Decompress {
                    file: staged.file.clone(),
                    column: plan.columns[job.column].column.clone(),
                    row_group: rg,
                    page: job.page,
                    what,
                });
            }
        }
        Ok(())
    }

    /// The kernels' status of every dictionary and data page, copied back:
    /// the first error as a typed one, else each plan column's null count.
    fn page_nulls(&self) -> Result<Vec<usize>, DecodeError> {
        let staged = &self.staged;
        let plan = &staged.plan;
        let rg = plan.row_group;
        let (pages, dicts) = parse_status(
            &self.down[..staged.page_status_len],
            staged.work_launch.n_tasks,
            staged.work_launch.n_dicts,
        )
        .ok_or(DecodeError::StatusSize)?;
        for (k, s) in dicts.iter().enumerate() {
            if let Some(code) = s.error() {
                let ci = staged.dict_columns[k];
                return Err(corrupt(&staged.file, plan, ci, 0, rg, code, s.error_index));
            }
        }
        let mut nulls = vec![0usize; plan.columns.len()];
        for (k, s) in pages.iter().enumerate() {
            let task = staged.task_pages[k];
            let (ci, page) = (task.column, task.page);
            if let Some(code) = s.error() {
                return Err(corrupt(
                    &staged.file,
                    plan,
                    ci,
                    page,
                    rg,
                    code,
                    s.error_index,
                ));
            }
            if let Some(defined) = task.defined.filter(|&d| d != s.count) {
                return Err(DecodeError::CorruptPage {
                    file: staged.file.clone(),
                    column: plan.columns[ci].column.clone(),
                    row_group: rg,
                    page,
                    what: format!(
                        "the definition levels define {} values, the v2 page header {defined}",
                        s.count
                    ),
                    index: 0,
                });
            }
            nulls[ci] += s.null_count as usize;
        }
        Ok(nulls)
    }
}

/// The flat columns of a row group: each plan column's output as it is.
fn flat_columns(
    plan: &DecodePlan,
    outs: impl Iterator<Item = ColumnOut>,
    column_rows: &[u64],
    nulls: &[usize],
) -> Result<Vec<DeviceColumn>, DecodeError> {
    let mut columns = Vec::with_capacity(plan.columns.len());
    for (ci, (c, out)) in plan.columns.iter().zip(outs).enumerate() {
        if c.ty.is_null() {
            // The carrier's values are dropped: a Null array has none.
            columns.push(DeviceColumn::nulls(column_rows[ci] as usize));
            continue;
        }
        let mut buffers = vec![out.values];
        buffers.extend(out.variadic);
        let data_type: DataType = c.ty.data_type.clone();
        columns.push(DeviceColumn::new(
            data_type,
            column_rows[ci] as usize,
            Some(nulls[ci]),
            out.validity,
            buffers,
        )?);
    }
    Ok(columns)
}

/// Queues a staged row group's kernels on `stream` (its inputs there
/// already), then the copy of its status into `down` and its event,
/// returned. With `mark`, timed events for the trace: `kernels_start`,
/// then one after each kernel (named).
pub(crate) fn queue_row_group_kernels(
    gpu: &Gpu,
    stream: &Stream,
    s: &Staged,
    down: &mut PooledPinnedBuffer,
    mark: Option<&mut dyn FnMut(&'static str) -> Result<(), CudaError>>,
) -> Result<Event, DecodeError> {
    match mark {
        // SAFETY: the tasks describe the row group's allocations, kept in
        // `s` until its event.
        None => unsafe { gpu.kernels.decode_row_group(stream, &s.work_launch)? },
        Some(mark) => {
            mark("kernels_start")?;
            // SAFETY: as above.
            unsafe {
                gpu.kernels
                    .decode_row_group_marked(stream, &s.work_launch, |kernel| Ok(mark(kernel)?))?
            };
        }
    }
    let status_len = s.status_len.max(1);
    // SAFETY: `down` and the status area are kept until the event.
    unsafe { stream.copy_to_host(down.as_mut_ptr(), s.work_launch.status, status_len)? };
    let mut event = Event::new(gpu.device)?;
    event.record(stream)?;
    Ok(event)
}

fn corrupt(
    file: &str,
    plan: &DecodePlan,
    ci: usize,
    page: usize,
    row_group: usize,
    code: Result<crate::decode::kernels::PageErrorCode, u32>,
    index: u32,
) -> DecodeError {
    DecodeError::CorruptPage {
        file: file.to_string(),
        column: plan.columns[ci].column.clone(),
        row_group,
        page,
        what: match code {
            Ok(c) => c.describe().to_string(),
            Err(n) => format!("unknown kernel error {n}"),
        },
        index,
    }
}
