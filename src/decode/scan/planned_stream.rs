//! [`PlannedStream`]: one pass of the decoder over planned inputs, on one
//! GPU or spread over several.

use arrow::datatypes::SchemaRef;

use super::multi_gpu::{decode_multi, MultiStream};
use super::one_gpu::{decode_one, GpuStream};
use super::s7_filter_rows::ExactFilter;
use super::shared_pipeline::{decode_shared, SharedStream};
use super::PipelineMode;
use super::{DecodeError, DecodeInput, DecodeOptions, DecodeReport, DeviceShare};
use crate::decode::array::DeviceBatch;
use crate::parquet::spread::{spread, Spread};

/// Device batches of one pass over planned inputs, in plan order.
#[derive(Debug)]
pub(crate) enum PlannedStream {
    /// One GPU, and the trivial spread of its row groups.
    One(Box<GpuStream>, Spread),
    /// One GPU's shared pipeline, and the trivial spread.
    Shared(Box<SharedStream>, Spread),
    /// Several GPUs.
    Many(MultiStream),
}

impl PlannedStream {
    /// Starts decoding `inputs` on the GPUs `ordinals` (opened already),
    /// each batch filtered by `filter` when given.
    pub(crate) fn start(
        inputs: Vec<DecodeInput>,
        options: DecodeOptions,
        ordinals: Vec<usize>,
        filter: Option<ExactFilter>,
    ) -> Result<PlannedStream, DecodeError> {
        let [device] = ordinals[..] else {
            return Ok(PlannedStream::Many(decode_multi(
                inputs, options, ordinals, filter,
            )?));
        };
        let plans: Vec<_> = inputs.iter().map(|i| i.plan.clone()).collect();
        let spread = spread(&plans, 1);
        // A trace is a decode's own timeline: such a decode runs its own
        // pipeline.
        Ok(
            if options.pipeline == PipelineMode::Shared && options.trace.is_none() {
                let shared = decode_shared(inputs, options, device, filter)?;
                PlannedStream::Shared(Box::new(shared), spread)
            } else {
                let one = decode_one(inputs, options, device, filter)?;
                PlannedStream::One(Box::new(one), spread)
            },
        )
    }

    /// The batches' schema.
    pub(crate) fn schema(&self) -> &SchemaRef {
        match self {
            PlannedStream::One(s, _) => s.schema(),
            PlannedStream::Shared(s, _) => s.schema(),
            PlannedStream::Many(s) => s.schema(),
        }
    }

    /// The GPUs, in share order.
    pub(crate) fn devices(&self) -> Vec<usize> {
        match self {
            PlannedStream::One(s, _) => vec![s.device()],
            PlannedStream::Shared(s, _) => vec![s.device()],
            PlannedStream::Many(s) => s.devices().to_vec(),
        }
    }

    /// Which row group went to which share.
    pub(crate) fn spread(&self) -> &Spread {
        match self {
            PlannedStream::One(_, spread) | PlannedStream::Shared(_, spread) => spread,
            PlannedStream::Many(s) => s.spread(),
        }
    }

    /// What each GPU has done so far (one share per GPU).
    pub(crate) fn shares(&self) -> Vec<DeviceShare> {
        match self {
            PlannedStream::One(s, spread) => vec![DeviceShare {
                device: s.device(),
                row_groups: spread.row_groups().first().copied().unwrap_or(0),
                planned_bytes: spread.bytes.first().copied().unwrap_or(0),
                report: s.report().clone(),
            }],
            PlannedStream::Shared(s, spread) => vec![DeviceShare {
                device: s.device(),
                row_groups: spread.row_groups().first().copied().unwrap_or(0),
                planned_bytes: spread.bytes.first().copied().unwrap_or(0),
                report: s.report(),
            }],
            PlannedStream::Many(s) => s.shares(),
        }
    }

    /// The decoders' reports so far, added together.
    pub(crate) fn report(&self) -> DecodeReport {
        match self {
            PlannedStream::One(s, _) => s.report().clone(),
            PlannedStream::Shared(s, _) => s.report(),
            PlannedStream::Many(s) => s.report(),
        }
    }
}

impl Iterator for PlannedStream {
    type Item = Result<DeviceBatch, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            PlannedStream::One(s, _) => s.next(),
            PlannedStream::Shared(s, _) => s.next(),
            PlannedStream::Many(s) => s.next(),
        }
    }
}
