//! One scan decoded on several GPUs at once.
//!
//! An orchestration above the single-GPU decoder, behind
//! [`super::decode`] when `DecodeOptions::devices` names several GPUs:
//! the scan's row groups are spread over the devices by bytes
//! ([`crate::parquet::spread`]), each device runs its own single-GPU
//! decode of its share (its own fetch, pinned pool,
//! streams, kernels and nvCOMP) on its own thread, and the batches are
//! handed out in plan order, each on the GPU that decoded it
//! ([`DeviceBatch::device_ordinal`], and `device_id` in its C Device
//! array). A bad device ordinal is an error before any read.
//!
//! Each share's thread keeps at most `depth` finished batches ahead of the
//! consumer; consecutive row groups sit on different GPUs, so consuming in
//! plan order keeps every GPU busy.

use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use arrow::datatypes::{Schema, SchemaRef};
use serde::Serialize;

use super::one_gpu::{decode_one, output_schema};
use super::s7_filter_rows::ExactFilter;
use super::{DecodeError, DecodeInput, DecodeOptions, DecodeReport};
use crate::decode::array::DeviceBatch;
use crate::parquet::spread::{spread, Spread};
use crate::parquet::ScanPlan;

/// What one GPU did in a scan over several.
#[derive(Debug, Clone, Serialize)]
pub struct DeviceShare {
    /// The GPU (CUDA ordinal).
    pub device: usize,
    /// Row groups the spread gave it.
    pub row_groups: usize,
    /// Bytes the spread gave it (its row groups' planned reads).
    pub planned_bytes: u64,
    /// Its decoder's report so far (`bytes_read` is what its fetch read).
    pub report: DecodeReport,
}

/// Starts decoding `inputs` (files with their plans, one table) on the
/// GPUs `ordinals` (opened already), row groups spread by bytes. Every
/// column is checked before any read.
pub(crate) fn decode_multi(
    inputs: Vec<DecodeInput>,
    options: DecodeOptions,
    ordinals: Vec<usize>,
    filter: Option<ExactFilter>,
) -> Result<MultiStream, DecodeError> {
    let mut schema = None;
    for input in &inputs {
        let s = output_schema(input.source.location(), &input.metadata, &input.plan)?;
        schema.get_or_insert(s);
    }
    let schema = schema.unwrap_or_else(|| Arc::new(Schema::empty()));
    // With a filter, the batches hold the columns it keeps.
    let schema = match &filter {
        Some(f) => f.output(&schema).1,
        None => schema,
    };
    let plans: Vec<Arc<ScanPlan>> = inputs.iter().map(|i| i.plan.clone()).collect();
    let spread = spread(&plans, ordinals.len());
    let counts = spread.row_groups();
    let reports = Arc::new(Mutex::new(
        ordinals
            .iter()
            .enumerate()
            .map(|(share, &device)| DeviceShare {
                device,
                row_groups: counts[share],
                planned_bytes: spread.bytes[share],
                report: DecodeReport::default(),
            })
            .collect::<Vec<_>>(),
    ));
    let depth = options.depth.max(1);
    let mut receivers = Vec::with_capacity(ordinals.len());
    let mut threads = Vec::with_capacity(ordinals.len());
    for (share, &device) in ordinals.iter().enumerate() {
        let cut = spread.plans_of(&plans, share);
        let share_inputs: Vec<DecodeInput> = inputs
            .iter()
            .zip(cut)
            .map(|(i, plan)| DecodeInput {
                source: i.source.clone(),
                metadata: i.metadata.clone(),
                plan,
            })
            .collect();
        let opts = options.clone();
        let filter = filter.clone();
        let (tx, rx) = sync_channel(depth);
        let reports = reports.clone();
        let thread = std::thread::Builder::new()
            .name(format!("gdscan-decode-gpu{device}"))
            .spawn(move || {
                let mut stream = match decode_one(share_inputs, opts, device, filter) {
                    Ok(s) => s,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        return;
                    }
                };
                while let Some(item) = stream.next() {
                    let failed = item.is_err();
                    if let Some(r) = reports
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get_mut(share)
                    {
                        r.report = stream.report().clone();
                    }
                    if tx.send(item).is_err() || failed {
                        return;
                    }
                }
            })
            .map_err(|e| crate::engine::IoError::os("<decode>", "spawn thread", e))?;
        receivers.push(rx);
        threads.push(thread);
    }
    Ok(MultiStream {
        schema,
        spread,
        devices: ordinals,
        receivers,
        threads,
        next: 0,
        reports,
        failed: false,
    })
}

/// Device batches of a scan over several GPUs, one per row group, in plan
/// order; each lives on the GPU that decoded it. Dropping the stream stops
/// every share (and waits for their threads); batches already handed out
/// stay valid.
pub(crate) struct MultiStream {
    schema: SchemaRef,
    spread: Spread,
    devices: Vec<usize>,
    receivers: Vec<Receiver<Result<DeviceBatch, DecodeError>>>,
    threads: Vec<JoinHandle<()>>,
    next: usize,
    reports: Arc<Mutex<Vec<DeviceShare>>>,
    failed: bool,
}

impl std::fmt::Debug for MultiStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiStream")
            .field("devices", &self.devices)
            .field("next", &self.next)
            .finish()
    }
}

impl MultiStream {
    /// The batches' schema.
    pub(crate) fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// The GPUs, in share order.
    pub(crate) fn devices(&self) -> &[usize] {
        &self.devices
    }

    /// Which row group went to which share (index into [`Self::devices`]).
    pub(crate) fn spread(&self) -> &Spread {
        &self.spread
    }

    /// What each GPU has done so far.
    pub(crate) fn shares(&self) -> Vec<DeviceShare> {
        self.reports
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    /// The decoders' reports added together.
    pub(crate) fn report(&self) -> DecodeReport {
        let mut total = DecodeReport::default();
        for s in self.shares() {
            total.merge(&s.report);
        }
        total
    }
}

impl Iterator for MultiStream {
    type Item = Result<DeviceBatch, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let placement = *self.spread.placements.get(self.next)?;
        let share = placement.share;
        let item = match self.receivers[share].recv() {
            Ok(item) => item,
            Err(_) => {
                let done = self.spread.placements[..self.next]
                    .iter()
                    .filter(|p| p.share == share)
                    .count();
                Err(DecodeError::ShareEnded {
                    device: self.devices[share],
                    row_groups: self.spread.row_groups()[share] - done,
                })
            }
        };
        self.next += 1;
        if item.is_err() {
            // A failed row group on any GPU ends the scan: never partial data.
            self.failed = true;
        }
        Some(item)
    }
}

impl Drop for MultiStream {
    fn drop(&mut self) {
        // Closing the channels stops each share after its current row group.
        self.receivers.clear();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}
