//! A partition's GPU decode, on a thread of its own: take a slot of the
//! device, plan each file, decode them in one pipeline, copy each device
//! batch back, shape it and send it to the partition's stream through a
//! bounded channel. The decoder works ahead of the copy back, and both
//! run while DataFusion's operators consume the batches already sent.
//!
//! A file the decoder refuses before it sends a batch (it cannot plan it,
//! a column it does not cover, a GPU it cannot open or use) falls back to
//! the host: the thread sends the list of fallback files last. An error
//! after the partition sent batches ends the partition with that error,
//! never with rows missing.

use std::sync::Arc;
use std::time::Instant;

use ::datafusion::arrow::record_batch::RecordBatch;
use ::datafusion::error::DataFusionError;
use tokio::sync::mpsc::Sender;

use super::metrics::GpuMetrics;
use super::shape::{slices, Shaper};
use super::slots::GpuSlots;
use super::work::{names, Unit};
use crate::cuda::{Device, PinnedPool};
use crate::datafusion::error::SqlError;
use crate::datafusion::location::open_reader;
use crate::datafusion::options::GdsTableOptions;
use crate::decode::array::{DeviceArrayError, DeviceBatch};
use crate::decode::scan::{
    decode, decode_plan, DecodeError, DecodeInput, DecodeOptions, DecodeSource, FilterMode,
};
use crate::parquet::metadata::{load, MetadataOptions};
use crate::parquet::plan::{Projection, ScanRequest};
use crate::parquet::Predicate;

/// What the thread sends to the partition's stream.
#[derive(Debug)]
pub(crate) enum Msg {
    /// Rows in the scan's shape.
    Batch(RecordBatch),
    /// The partition failed after it had sent rows.
    Failed(DataFusionError),
    /// These units (indices) are to be read on the host; sent last.
    Cpu(Vec<usize>),
}

/// A partition's GPU decode.
#[derive(Debug)]
pub(crate) struct Job {
    pub(crate) units: Vec<Unit>,
    pub(crate) table: GdsTableOptions,
    pub(crate) decode: DecodeOptions,
    pub(crate) slots: Arc<GpuSlots>,
    pub(crate) shaper: Arc<Shaper>,
    pub(crate) batch_size: usize,
    pub(crate) metrics: GpuMetrics,
}

/// How the decode of the GPU units ended.
enum Ended {
    /// Every GPU unit decoded and sent.
    Done,
    /// Nothing was sent: every GPU unit falls back, for this reason.
    Refused(String),
    /// The stream is gone or failed: nothing more to send.
    Stop,
}

/// Plans `unit` for the decoder: its projected columns, planned row
/// groups and the pushed predicate; why not, when it cannot.
fn plan_unit(
    unit: &Unit,
    columns: &[String],
    table: &GdsTableOptions,
) -> Result<DecodeInput, String> {
    let location = unit
        .location
        .as_ref()
        .ok_or("not a file of a gdscan table")?;
    let row_groups = unit
        .row_groups
        .clone()
        .ok_or("gdscan could not plan the file")?;
    // error-source: a refusal is the fallback's reason, shown in metrics and logs as text
    let reader = open_reader(location, table).map_err(|e| e.to_string())?;
    let source = reader.source().clone();
    // error-source: the fallback's reason, as above
    let metadata = load(&source, MetadataOptions::default()).map_err(|e| e.to_string())?;
    let schema = metadata.file_metadata().schema_descr();
    let roots = schema.root_schema().get_fields();
    let present: Vec<String> = columns
        .iter()
        .filter(|c| roots.iter().any(|f| f.name() == c.as_str()))
        .cloned()
        .collect();
    if present.is_empty() {
        return Err("no column to decode (the query needs row counts only)".to_string());
    }
    let predicate = unit.predicate.as_ref().and_then(|p| p.fitting(schema));
    if unit.exact && predicate.as_ref() != unit.predicate.as_ref() {
        return Err("the pushed filters do not all fit the file's columns".to_string());
    }
    let request = ScanRequest {
        projection: Projection::Columns(present),
        row_groups: Some(row_groups),
        predicate,
        ..Default::default()
    };
    // The predicate's columns planned too: the GPU filters the rows on them.
    // error-source: the fallback's reason, as above
    let plan =
        decode_plan(&metadata, &request, &DecodeOptions::default()).map_err(|e| e.to_string())?;
    Ok(DecodeInput {
        source,
        metadata,
        plan: Arc::new(plan),
    })
}

impl Job {
    /// Runs the decode, sending to `tx`; returns when done, failed or
    /// when the stream is dropped.
    pub(crate) fn run(self, tx: Sender<Msg>) {
        let _slot = self.slots.acquire();
        let columns = self.shaper.columns();
        let mut gpu = Vec::new();
        let mut cpu: Vec<(usize, String)> = Vec::new();
        for (i, unit) in self.units.iter().enumerate() {
            if unit.row_groups.as_ref().is_some_and(Vec::is_empty) {
                continue; // nothing planned in its range: no rows on either path
            }
            match plan_unit(unit, &columns, &self.table) {
                Ok(input) => gpu.push((i, input)),
                Err(reason) => cpu.push((i, reason)),
            }
        }
        match self.decode_all(&mut gpu, &mut cpu, &tx) {
            Ended::Stop => return,
            Ended::Refused(reason) => cpu.extend(gpu.drain(..).map(|(i, _)| (i, reason.clone()))),
            Ended::Done => {}
        }
        for (i, _) in &gpu {
            self.metrics.on_gpu(&self.units[*i].shown);
        }
        if cpu.is_empty() {
            return;
        }
        cpu.sort_by_key(|(i, _)| *i);
        for (i, reason) in &cpu {
            self.metrics.on_cpu(&self.units[*i].shown, reason);
        }
        let _ = tx.blocking_send(Msg::Cpu(cpu.into_iter().map(|(i, _)| i).collect()));
    }

    /// The decode's request: the scan's columns and, when every GPU file
    /// takes the same pushed predicate, that predicate, which the GPU then
    /// applies exactly. (With exact filters every GPU file takes the
    /// predicate whole, `plan_unit` saw to it; otherwise DataFusion's
    /// FilterExec stays above the scan, so files that take different parts
    /// may go unfiltered.)
    fn request(&self, gpu: &[(usize, DecodeInput)]) -> ScanRequest {
        let fitting = |(i, input): &(usize, DecodeInput)| -> Option<Predicate> {
            let schema = input.metadata.file_metadata().schema_descr();
            self.units[*i]
                .predicate
                .as_ref()
                .and_then(|p| p.fitting(schema))
        };
        let first = gpu.first().and_then(fitting);
        let same = gpu.iter().all(|unit| fitting(unit) == first);
        ScanRequest {
            projection: Projection::Columns(self.shaper.columns()),
            predicate: first.filter(|_| same),
            ..Default::default()
        }
    }

    /// Starts the decoder on `gpu`'s inputs; a file it refuses as
    /// unsupported moves to `cpu` and the rest start again; a predicate
    /// the GPU does not evaluate leaves the rows to DataFusion's filter.
    fn start(
        &self,
        gpu: &mut Vec<(usize, DecodeInput)>,
        cpu: &mut Vec<(usize, String)>,
    ) -> Result<Option<crate::decode::scan::DecodeStream>, String> {
        let mut options = self.decode.clone();
        if self.exact() && options.filter == FilterMode::PruneOnly {
            options.filter = FilterMode::Exact;
        }
        loop {
            if gpu.is_empty() {
                return Ok(None);
            }
            let inputs: Vec<DecodeInput> = gpu.iter().map(|(_, input)| input.clone()).collect();
            let request = self.request(gpu);
            match decode(DecodeSource::Planned(inputs), request, options.clone()) {
                Ok(stream) => return Ok(Some(stream)),
                // Exact filters must be applied: the files go to the host,
                // which applies them (`exact::exact_on_host`).
                Err(DecodeError::Filter(e)) if self.exact() => {
                    return Err(format!("the GPU does not evaluate the pushed filters: {e}"));
                }
                Err(DecodeError::Filter(_)) if options.filter != FilterMode::PruneOnly => {
                    options.filter = FilterMode::PruneOnly;
                }
                Err(DecodeError::Unsupported { file, column, what }) => {
                    let at = gpu.iter().position(|(_, i)| i.source.location() == file);
                    let reason =
                        format!("column {column}: {what} is not supported by the GPU decoder");
                    match at {
                        Some(at) => cpu.push((gpu.remove(at).0, reason)),
                        None => return Err(reason),
                    }
                }
                Err(e) => return Err(e.to_string()),
            }
        }
    }

    /// Whether the scan's filters were pushed down exactly.
    fn exact(&self) -> bool {
        self.units.iter().any(|u| u.exact)
    }

    /// Decodes the GPU units and sends their batches.
    fn decode_all(
        &self,
        gpu: &mut Vec<(usize, DecodeInput)>,
        cpu: &mut Vec<(usize, String)>,
        tx: &Sender<Msg>,
    ) -> Ended {
        let mut stream = match self.start(gpu, cpu) {
            Ok(Some(stream)) => stream,
            Ok(None) => return Ended::Done,
            Err(reason) => return Ended::Refused(reason),
        };
        if let Some(reason) = self.shaper.refuses(stream.schema()) {
            return Ended::Refused(reason);
        }
        let files = || {
            let units: Vec<Unit> = gpu.iter().map(|(i, _)| self.units[*i].clone()).collect();
            names(&units)
        };
        let mut sent = false;
        loop {
            let waited = Instant::now();
            let next = stream.next();
            self.metrics.decode_time.add_duration(waited.elapsed());
            let batch = match next {
                None => return Ended::Done,
                Some(Ok(batch)) => batch,
                Some(Err(e)) if !sent => return Ended::Refused(e.to_string()),
                Some(Err(e)) => {
                    let source = Box::new(e);
                    return fail(
                        tx,
                        SqlError::GpuDecode {
                            files: files(),
                            source,
                        },
                    );
                }
            };
            let copying = Instant::now();
            let host = self.copy_back(&batch);
            self.metrics.copy_back_time.add_duration(copying.elapsed());
            if let Ok(host) = &host {
                self.metrics.copy_back_bytes.add(host_bytes(host));
            }
            let shaped = match host {
                Ok(host) => self.shaper.shape(&host),
                Err(e) if !sent => return Ended::Refused(e.to_string()),
                Err(source) => {
                    return fail(
                        tx,
                        SqlError::GpuCopyBack {
                            files: files(),
                            source,
                        },
                    )
                }
            };
            let shaped = match shaped {
                Ok(shaped) => shaped,
                Err(e) if !sent => return Ended::Refused(e.to_string()),
                Err(e) => {
                    let source = Box::new(e);
                    return fail(
                        tx,
                        SqlError::GpuShape {
                            files: files(),
                            source,
                        },
                    );
                }
            };
            self.metrics.gpu_rows.add(shaped.num_rows());
            for piece in slices(&shaped, self.batch_size) {
                if tx.blocking_send(Msg::Batch(piece)).is_err() {
                    return Ended::Stop; // the query is done with this partition
                }
                sent = true;
            }
        }
    }

    /// `batch` in host memory: straight into pinned memory from the
    /// device's shared pool while the pinned bytes out stay under the
    /// table's `pinned_copy_back`, else through pinned staging into
    /// ordinary memory.
    fn copy_back(&self, batch: &DeviceBatch) -> Result<RecordBatch, DeviceArrayError> {
        let Some(ordinal) = batch.device_ordinal() else {
            return batch.to_host(); // host-readable memory: a plain copy
        };
        let pool = PinnedPool::shared(Device::get(ordinal)?);
        if pool.in_use_bytes() + batch.byte_size() <= self.table.pinned_copy_back {
            batch.to_host_pinned(&pool)
        } else {
            batch.to_host()
        }
    }
}

/// The bytes `batch`'s arrays hold (their buffers' lengths, children
/// included): what the copy back brought to the host.
fn host_bytes(batch: &RecordBatch) -> usize {
    fn of(data: &::datafusion::arrow::array::ArrayData) -> usize {
        data.buffers().iter().map(|b| b.len()).sum::<usize>()
            + data.nulls().map_or(0, |n| n.buffer().len())
            + data.child_data().iter().map(of).sum::<usize>()
    }
    batch.columns().iter().map(|c| of(&c.to_data())).sum()
}

/// Sends `e` as the partition's end.
fn fail(tx: &Sender<Msg>, e: SqlError) -> Ended {
    let _ = tx.blocking_send(Msg::Failed(e.into()));
    Ended::Stop
}
