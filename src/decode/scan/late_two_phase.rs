//! [`FilterMode::Late`](super::FilterMode::Late): late materialization.
//! Phase 1 decodes only the predicate's columns of every row group the
//! statistics keep, evaluates the predicate on the GPU into a mask per row
//! group, reads the masks back and compacts the projected filter columns;
//! the host turns the masks into the rows phase 2 needs
//! ([`late_rows`]: exactly the kept rows where that makes few decode
//! tasks, else the payload pages holding a kept row); phase 2 plans,
//! fetches and decodes the payload columns for those rows only (a row
//! group without a kept row, and every payload page without one, is never
//! fetched, decompressed or decoded) and compacts them where whole pages
//! were decoded. Each row group's batch joins both phases' columns in the
//! file's column order.

use std::collections::{HashMap, VecDeque};
use std::ops::Range;
use std::sync::Arc;

use arrow::datatypes::{Schema, SchemaRef};

use super::decode_error::DecodeError;
use super::gpu_resources::shared_device_pool;
use super::planned_stream::PlannedStream;
use super::{DecodeInput, DecodeOptions, DecodeReport, DeviceShare, FilterMode};
use crate::cuda::Device;
use crate::decode::array::DeviceBatch;
use crate::decode::filter::{FilterGpu, GpuPredicate};
use crate::decode::kernels::KernelSet;
use crate::parquet::late::{compaction, late_rows, LateRows};
use crate::parquet::payload::PayloadPolicy;
use crate::parquet::plan::PlanError;
use crate::parquet::spread::Spread;
use crate::parquet::{plan, Predicate, Projection, ScanPlan, ScanRequest};

/// One row group after phase 1.
#[derive(Debug)]
struct Phase1 {
    input: usize,
    row_group: usize,
    kept: Vec<Range<i64>>,
    /// The projected filter columns, compacted (None when none is
    /// projected).
    filter_columns: Option<DeviceBatch>,
}

/// Where each output column comes from: phase 1's filter columns or phase
/// 2's payload, by index.
#[derive(Debug, Clone, Copy)]
enum Phase {
    Filter(usize),
    Payload(usize),
}

/// A late-materialized scan: phase 1 done, phase 2 streaming.
#[derive(Debug)]
pub(crate) struct LateScan {
    schema: SchemaRef,
    columns: Vec<Phase>,
    rows: VecDeque<Phase1>,
    payload: Option<PlannedStream>,
    /// The GPUs the phases run on (opened already).
    ordinals: Vec<usize>,
    plans: Vec<Arc<ScanPlan>>,
    gpus: HashMap<usize, FilterGpu>,
    options: DecodeOptions,
    report: DecodeReport,
    failed: bool,
}

/// The file's top-level column names, in order, that `keep` names (all
/// when None).
fn top_level(input: &DecodeInput, keep: Option<&[String]>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in input.metadata.file_metadata().schema_descr().columns() {
        let Some(top) = c.path().parts().first() else {
            continue;
        };
        if !out.contains(top) && keep.is_none_or(|k| k.contains(top)) {
            out.push(top.clone());
        }
    }
    out
}

fn request_error(input: &DecodeInput) -> impl Fn(PlanError) -> DecodeError + '_ {
    move |source| DecodeError::Request {
        file: input.source.location().to_string(),
        source,
    }
}

/// What phase 1 leaves: per row group of the plans (in order), its mask
/// on the host and its compacted projected filter columns.
type Masks = Vec<(usize, usize, Vec<u8>, Option<DeviceBatch>)>;

impl LateScan {
    /// Runs phase 1 over `inputs` and starts phase 2.
    pub(crate) fn start(
        inputs: Vec<DecodeInput>,
        predicate: Predicate,
        keep: Option<Vec<String>>,
        options: DecodeOptions,
    ) -> Result<LateScan, DecodeError> {
        let filter_names: Vec<String> = predicate.columns().iter().map(|c| c.to_string()).collect();
        let Some(first) = inputs.first() else {
            return Err(DecodeError::Late {
                why: "a late scan needs a file".into(),
            });
        };
        let wanted = top_level(first, keep.as_deref());
        let payload_names: Vec<String> = wanted
            .iter()
            .filter(|c| !filter_names.contains(c))
            .cloned()
            .collect();
        let mut scan = LateScan {
            schema: Arc::new(Schema::empty()),
            columns: Vec::new(),
            rows: VecDeque::new(),
            payload: None,
            plans: Vec::new(),
            gpus: HashMap::new(),
            ordinals: options
                .devices
                .open()?
                .iter()
                .map(|d| d.ordinal())
                .collect(),
            options: DecodeOptions {
                filter: FilterMode::PruneOnly,
                ..options
            },
            report: DecodeReport::default(),
            failed: false,
        };
        let (plans1, masks, filter_schema) =
            scan.phase1(&inputs, &predicate, &filter_names, &wanted)?;
        let payload_schema = scan.phase2(&inputs, &plans1, masks, &payload_names)?;
        scan.join_schema(&wanted, &filter_schema, payload_schema.as_ref());
        Ok(scan)
    }

    /// The filter kernels on `batch`'s GPU.
    fn gpu(&mut self, batch: &DeviceBatch) -> Result<&FilterGpu, DecodeError> {
        let ordinal = batch.device_ordinal().unwrap_or(0);
        if !self.gpus.contains_key(&ordinal) {
            let device = Device::get(ordinal)?;
            let kernels = KernelSet::get(device, self.options.kernels)?;
            let gpu = FilterGpu::new(kernels, shared_device_pool(device))?;
            self.gpus.insert(ordinal, gpu);
        }
        Ok(&self.gpus[&ordinal])
    }

    /// Phase 1: the predicate's columns decoded, masks evaluated and read
    /// back, projected filter columns compacted. Returns phase 1's plans,
    /// the masks and the compacted filter columns' schema.
    fn phase1(
        &mut self,
        inputs: &[DecodeInput],
        predicate: &Predicate,
        filter_names: &[String],
        wanted: &[String],
    ) -> Result<(Vec<Arc<ScanPlan>>, Masks, SchemaRef), DecodeError> {
        let request = ScanRequest {
            projection: Projection::Columns(filter_names.to_vec()),
            predicate: Some(predicate.clone()),
            ..ScanRequest::default()
        };
        let mut planned = Vec::with_capacity(inputs.len());
        let mut order = Vec::new();
        for (i, input) in inputs.iter().enumerate() {
            let p = Arc::new(plan(&input.metadata, &request).map_err(request_error(input))?);
            order.extend(p.row_groups.iter().map(|r| (i, r.index)));
            planned.push(DecodeInput {
                source: input.source.clone(),
                metadata: input.metadata.clone(),
                plan: p,
            });
        }
        let plans: Vec<Arc<ScanPlan>> = planned.iter().map(|i| i.plan.clone()).collect();
        let mut stream =
            PlannedStream::start(planned, self.options.clone(), self.ordinals.clone(), None)?;
        let decoded = stream.schema().clone();
        let program = GpuPredicate::compile(predicate, &decoded)?;
        // A wanted column phase 1 decoded whole: named whole by the
        // predicate. A struct the predicate reads a field of (`s.b`)
        // comes out of phase 1 with that field only: phase 2 decodes it
        // whole, as payload.
        let projected: Vec<usize> = (0..decoded.fields().len())
            .filter(|&i| {
                let name = decoded.field(i).name();
                wanted.contains(name) && filter_names.contains(name)
            })
            .collect();
        let filter_schema = Arc::new(Schema::new(
            projected
                .iter()
                .map(|&i| decoded.field(i).clone())
                .collect::<Vec<_>>(),
        ));
        let expected = order.len();
        let mut masks = Vec::with_capacity(expected);
        for ((input, row_group), batch) in order.into_iter().zip(stream.by_ref()) {
            let batch = batch?;
            let gpu = self.gpu(&batch)?;
            let mask = gpu.evaluate(&program, &batch)?;
            let host = gpu.mask_to_host(&mask)?;
            let filter_columns = if projected.is_empty() {
                None
            } else {
                let cut = batch.project(&projected)?;
                gpu.compact(&cut, &mask)?
            };
            let f = &mut self.report.filter;
            f.batches_in += 1;
            f.rows_in += batch.num_rows() as u64;
            masks.push((input, row_group, host, filter_columns));
        }
        // One batch per planned row group, no more, no less: anything else
        // would drop or misplace rows.
        if masks.len() != expected || stream.next().is_some() {
            return Err(DecodeError::Late {
                why: format!(
                    "phase 1 handed out {} batches for {expected} planned row groups",
                    masks.len()
                ),
            });
        }
        self.report.merge(&stream.report());
        Ok((plans, masks, filter_schema))
    }

    /// The host step and phase 2: the kept rows of every row group, phase
    /// 2 planned for them and started. Returns the payload's schema (None
    /// without payload columns).
    fn phase2(
        &mut self,
        inputs: &[DecodeInput],
        plans1: &[Arc<ScanPlan>],
        masks: Masks,
        payload_names: &[String],
    ) -> Result<Option<SchemaRef>, DecodeError> {
        let payload = Projection::Columns(payload_names.to_vec());
        let mut planned = Vec::with_capacity(inputs.len());
        let mut kept_of: HashMap<(usize, usize), Vec<Range<i64>>> = HashMap::new();
        let mut filter_of: HashMap<(usize, usize), Option<DeviceBatch>> = HashMap::new();
        let mut order = Vec::new();
        for (i, input) in inputs.iter().enumerate() {
            let of_input: Vec<(usize, &[u8])> = masks
                .iter()
                .filter(|m| m.0 == i)
                .map(|m| (m.1, m.2.as_slice()))
                .collect();
            let names = if payload_names.is_empty() {
                Projection::Columns(Vec::new())
            } else {
                payload.clone()
            };
            let late: LateRows = late_rows(
                &input.metadata,
                &plans1[i],
                &names,
                of_input,
                PayloadPolicy::default(),
            )
            .map_err(request_error(input))?;
            let f = &mut self.report.filter;
            f.late_pages_skipped += late.skipped.pages;
            f.late_bytes_skipped += late.skipped.bytes;
            for rg in &late.row_groups {
                if !rg.kept.is_empty() {
                    order.push((i, rg.row_group));
                    kept_of.insert((i, rg.row_group), rg.kept.clone());
                }
            }
            if !payload_names.is_empty() {
                let request = ScanRequest {
                    projection: payload.clone(),
                    rows: Some(late.rows),
                    ..ScanRequest::default()
                };
                let p = plan(&input.metadata, &request).map_err(request_error(input))?;
                planned.push(DecodeInput {
                    source: input.source.clone(),
                    metadata: input.metadata.clone(),
                    plan: Arc::new(p),
                });
            }
        }
        for (i, rg, _, filter_columns) in masks {
            filter_of.insert((i, rg), filter_columns);
        }
        let f = &mut self.report.filter;
        f.batches_empty = f.batches_in - order.len();
        self.rows = order
            .into_iter()
            .map(|(input, row_group)| Phase1 {
                input,
                row_group,
                kept: kept_of.remove(&(input, row_group)).unwrap_or_default(),
                filter_columns: filter_of.remove(&(input, row_group)).flatten(),
            })
            .collect();
        if payload_names.is_empty() {
            return Ok(None);
        }
        self.plans = planned.iter().map(|i| i.plan.clone()).collect();
        let stream =
            PlannedStream::start(planned, self.options.clone(), self.ordinals.clone(), None)?;
        let schema = stream.schema().clone();
        self.payload = Some(stream);
        Ok(Some(schema))
    }

    /// The output's columns in the file's order, each from its phase.
    fn join_schema(&mut self, wanted: &[String], filter: &SchemaRef, payload: Option<&SchemaRef>) {
        let mut fields = Vec::new();
        for name in wanted {
            if let Ok(i) = filter.index_of(name) {
                fields.push(filter.field(i).clone());
                self.columns.push(Phase::Filter(i));
            } else if let Some((p, i)) = payload.and_then(|p| Some((p, p.index_of(name).ok()?))) {
                fields.push(p.field(i).clone());
                self.columns.push(Phase::Payload(i));
            }
        }
        self.schema = Arc::new(Schema::new(fields));
    }

    /// The batches' schema.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// Both phases' reports, with the filter's counts: pages, bytes and
    /// times of both; rows and row groups those phase 1 covered (phase 2
    /// decodes the same row groups' payload for the kept rows only, and
    /// counting them again would say the scan covered more rows than the
    /// files hold).
    pub(crate) fn report(&self) -> DecodeReport {
        let mut report = self.report.clone();
        if let Some(p) = &self.payload {
            report.merge(&p.report());
            report.rows = self.report.rows;
            report.row_groups = self.report.row_groups;
        }
        report
    }

    /// Phase 2's shares of its GPUs.
    pub(crate) fn shares(&self) -> Vec<DeviceShare> {
        self.payload
            .as_ref()
            .map(PlannedStream::shares)
            .unwrap_or_default()
    }

    /// Phase 2's spread of its row groups.
    pub(crate) fn spread(&self) -> Option<&Spread> {
        self.payload.as_ref().map(PlannedStream::spread)
    }

    /// The next row group's batch: its payload (compacted when whole pages
    /// were decoded) joined with its filter columns.
    fn step(&mut self) -> Option<Result<DeviceBatch, DecodeError>> {
        let row = self.rows.pop_front();
        let Some(row) = row else {
            // Every row group handed out: phase 2 must be done too.
            return match self.payload.as_mut().and_then(Iterator::next) {
                Some(Ok(_)) => Some(Err(DecodeError::Late {
                    why: "phase 2 handed out more batches than row groups kept rows".into(),
                })),
                Some(Err(e)) => Some(Err(e)),
                None => None,
            };
        };
        let payload = match self.payload.as_mut().map(Iterator::next) {
            None => None,
            Some(Some(Ok(batch))) => Some(batch),
            Some(Some(Err(e))) => return Some(Err(e)),
            Some(None) => {
                return Some(Err(DecodeError::Late {
                    why: "phase 2 ended before its last row group".into(),
                }))
            }
        };
        Some(self.join(row, payload))
    }

    fn join(
        &mut self,
        row: Phase1,
        payload: Option<DeviceBatch>,
    ) -> Result<DeviceBatch, DecodeError> {
        let payload = match payload {
            Some(batch) => {
                let plan = &self.plans[row.input];
                match compaction(plan, row.row_group, &row.kept) {
                    None => Some(batch),
                    Some(mask) => {
                        let gpu = self.gpu(&batch)?;
                        let mask = gpu.upload_mask(&mask)?;
                        gpu.compact(&batch, &mask)?
                    }
                }
            }
            None => None,
        };
        let rows: usize = row.kept.iter().map(|r| (r.end - r.start) as usize).sum();
        let mut columns = Vec::with_capacity(self.columns.len());
        let mut location = None;
        for from in &self.columns {
            let (batch, i) = match from {
                Phase::Filter(i) => (row.filter_columns.as_ref(), *i),
                Phase::Payload(i) => (payload.as_ref(), *i),
            };
            let Some(batch) = batch else {
                return Err(DecodeError::Late {
                    why: format!("row group {}: a phase's columns are missing", row.row_group),
                });
            };
            location = Some(batch.location());
            columns.push(batch.columns()[i].clone());
        }
        self.report.filter.rows_out += rows as u64;
        let location = location.unwrap_or(crate::decode::array::MemoryLocation::cuda(0));
        Ok(DeviceBatch::try_new(
            self.schema.clone(),
            rows,
            columns,
            location,
            None,
        )?)
    }
}

impl Iterator for LateScan {
    type Item = Result<DeviceBatch, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.step();
        if matches!(item, Some(Err(_))) {
            self.failed = true;
        }
        item
    }
}
