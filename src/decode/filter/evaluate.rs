//! The program run on the GPU into a row mask: the batch checked against
//! the compiled schema, the program, column table and literals uploaded in
//! one copy, `gds_filter_eval` launched on the filter's stream.

use super::column_table::ColumnTable;
use super::{DeviceMask, FilterError, FilterGpu, GpuPredicate};
use crate::cuda::PooledDeviceBuffer;
use crate::decode::array::{DeviceArrayError, DeviceBatch, DeviceBytes};
use crate::decode::kernels::FilterLaunch;

/// The bytes uploaded for one evaluation: the program, the column table,
/// the buffer table, a zeroed status word, the literals (each section at an
/// 8-byte boundary), and where each starts.
struct Upload {
    bytes: Vec<u8>,
    columns: usize,
    buffers: usize,
    status: usize,
    literals: usize,
}

impl Upload {
    fn new(predicate: &GpuPredicate, table: &ColumnTable) -> Upload {
        let mut bytes = predicate.program_le();
        let section = |bytes: &mut Vec<u8>, part: &[u8]| {
            bytes.resize(bytes.len().next_multiple_of(8), 0);
            let at = bytes.len();
            bytes.extend_from_slice(part);
            at
        };
        let columns = section(&mut bytes, &table.column_bytes());
        let buffers = section(&mut bytes, &table.buffer_bytes());
        let status = section(&mut bytes, &[0u8; 8]);
        let literals = section(&mut bytes, predicate.literals());
        Upload {
            bytes,
            columns,
            buffers,
            status,
            literals,
        }
    }
}

fn batch_error(problem: String) -> FilterError {
    FilterError::Batch(DeviceArrayError::Batch(problem))
}

/// Whether `batch` has the fields (names and types, in order) `predicate`
/// was compiled for.
fn check_schema(predicate: &GpuPredicate, batch: &DeviceBatch) -> Result<(), FilterError> {
    let ours = predicate.schema().fields();
    let theirs = batch.schema().fields();
    let same = ours.len() == theirs.len()
        && ours
            .iter()
            .zip(theirs.iter())
            .all(|(a, b)| a.name() == b.name() && a.data_type() == b.data_type());
    if same {
        Ok(())
    } else {
        Err(batch_error(format!(
            "the batch's schema {:?} is not the filter's {:?}",
            batch.schema(),
            predicate.schema()
        )))
    }
}

impl FilterGpu {
    /// `predicate`'s value per row of `batch`, as a mask: 1 where it is
    /// TRUE, 0 where FALSE or unknown. `batch` must be in this filter's
    /// device memory with the schema `predicate` was compiled for
    /// ([`FilterError::Batch`] otherwise). Waits for the batch's ready
    /// event, and returns once the mask is written (the stream is
    /// synchronised).
    pub fn evaluate(
        &self,
        predicate: &GpuPredicate,
        batch: &DeviceBatch,
    ) -> Result<DeviceMask, FilterError> {
        let queued = self.queue_evaluate(predicate, batch)?;
        self.stream.synchronize()?;
        queued.check_status()?;
        Ok(queued.mask().clone())
    }

    /// [`FilterGpu::evaluate`] queued, not waited for: the mask is written
    /// once the filter's stream has passed the kernel, and its status
    /// word must be checked then ([`QueuedMask::status`]).
    pub(super) fn queue_evaluate(
        &self,
        predicate: &GpuPredicate,
        batch: &DeviceBatch,
    ) -> Result<QueuedMask<'_>, FilterError> {
        check_schema(predicate, batch)?;
        let ordinal = self.device().ordinal();
        if batch.device_ordinal() != Some(ordinal) {
            return Err(batch_error(format!(
                "the batch is in {:?} memory, the filter on CUDA device {ordinal}",
                batch.location()
            )));
        }
        let rows = batch.num_rows();
        let n_rows = u32::try_from(rows).map_err(|_| FilterError::Unsupported {
            part: format!("a batch of {rows} rows"),
            why: "batches of more than 2^32 - 1 rows".to_string(),
        })?;
        let mask = self.pool.allocate(rows)?;
        if rows == 0 {
            return Ok(QueuedMask {
                gpu: self,
                mask: DeviceMask::new(DeviceBytes::from_pooled(mask), 0),
                upload: None,
            });
        }
        let table = predicate.table(batch)?;
        let upload = Upload::new(predicate, &table);
        let count = |n: usize, what: &str| {
            u32::try_from(n).map_err(|_| FilterError::Unsupported {
                part: format!("{n} {what}"),
                why: "more than 2^32 - 1".to_string(),
            })
        };
        let work = |base: u64| -> Result<FilterLaunch, FilterError> {
            Ok(FilterLaunch {
                program: base,
                n_steps: count(predicate.steps(), "steps")?,
                columns: base + upload.columns as u64,
                n_columns: count(table.columns.len(), "columns")?,
                buffers: base + upload.buffers as u64,
                n_buffers: count(table.buffers.len(), "data buffers")?,
                literals: base + upload.literals as u64,
                literals_len: count(predicate.literals().len(), "literal bytes")?,
                n_rows,
                mask: mask.device_ptr(),
                status: base + upload.status as u64,
            })
        };
        batch.wait()?;
        let device = self.pool.allocate(upload.bytes.len())?;
        let work = work(device.device_ptr())?;
        // SAFETY: `device` holds `upload.bytes.len()` bytes; `upload.bytes`
        // is alive and unchanged until the synchronisation below.
        let copied = unsafe {
            self.stream.copy_to_device(
                device.device_ptr(),
                upload.bytes.as_ptr(),
                upload.bytes.len(),
            )
        };
        let launched = copied.map_err(FilterError::from).and_then(|()| {
            // SAFETY: the program, tables, literals and status lie in
            // `device` at the offsets `Upload` gives, with the counts `work`
            // says; the column table's addresses are the batch's buffers,
            // whose lengths it carries (checked by `DeviceColumn` against the
            // columns' types and lengths), alive while `batch` is borrowed;
            // `mask` holds `rows` bytes reserved for this launch. The stream
            // is synchronised below before any of them can be dropped or
            // reused.
            let queued = unsafe { self.kernels.filter_eval(&self.stream, &work) };
            queued.map_err(FilterError::from)
        });
        if let Err(e) = launched {
            // Nothing may still read the upload when it goes back.
            let _ = self.stream.synchronize();
            return Err(e);
        }
        Ok(QueuedMask {
            gpu: self,
            mask: DeviceMask::new(DeviceBytes::from_pooled(mask), rows),
            upload: Some((device, upload.status)),
        })
    }
}

/// A mask whose kernel is queued on the filter's stream: the upload it
/// reads is held until the stream has passed it (dropping one waits for
/// the stream first).
pub(super) struct QueuedMask<'a> {
    gpu: &'a FilterGpu,
    mask: DeviceMask,
    /// The uploaded program and tables, and its status word's offset
    /// (None: no kernel ran, an empty batch).
    upload: Option<(PooledDeviceBuffer, usize)>,
}

impl QueuedMask<'_> {
    /// The mask (written once the filter's stream has passed the kernel).
    pub(super) fn mask(&self) -> &DeviceMask {
        &self.mask
    }

    /// The device address of the kernel's status word (None: no kernel
    /// ran), to be read once the stream has passed it.
    pub(super) fn status(&self) -> Option<u64> {
        self.upload
            .as_ref()
            .map(|(upload, at)| upload.device_ptr() + *at as u64)
    }

    /// Reads the status word (the stream must have passed the kernel).
    fn check_status(&self) -> Result<(), FilterError> {
        let Some((upload, at)) = &self.upload else {
            return Ok(());
        };
        let mut word = [0u8; 4];
        upload.copy_to_host(*at, &mut word)?;
        status_word(u32::from_le_bytes(word))
    }
}

impl Drop for QueuedMask<'_> {
    fn drop(&mut self) {
        if self.upload.is_some() {
            // Best effort: no kernel may still read the upload or write the
            // mask when they go back to the pool.
            let _ = self.gpu.stream.synchronize();
        }
    }
}

/// The evaluator kernel's status word: 0, or a corrupt program or column
/// table found (never rows selected from it).
pub(super) fn status_word(word: u32) -> Result<(), FilterError> {
    if word == 0 {
        return Ok(());
    }
    Err(batch_error(format!(
        "the filter kernel found a corrupt program or column table (status {word:#x})"
    )))
}
