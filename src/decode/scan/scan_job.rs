//! One decode's side of a one-GPU pipeline ([`ScanJob`]): its inputs, the
//! fetch and the planner working ahead of the GPU, the output's schema and
//! exact filter, and its report. The GPU's side (streams, the queue of
//! groups in flight) is `gpu_queue`'s: a decode of its own has one job, the
//! device's shared pipeline many.

use std::sync::Arc;
use std::time::Instant;

use arrow::datatypes::SchemaRef;

use super::gpu_resources::JobResources;
use super::s0_land::{self, Landing};
use super::s1_plan_ahead::{self, PlanAhead, PlannedGroup, Polled};
use super::s7_filter_rows::{ExactFilter, RowFilter};
use super::{DecodeError, DecodeInput, DecodeOptions, DecodeReport};
use crate::cuda::{DevicePool, PinnedPool, PoolStats};
use crate::decode::array::DeviceBatch;
use crate::decode::page::nesting::GpuNesting;
use crate::parquet::fetch::{fetch, SourceScan};

use super::report::RowGroupTimes;

/// What a decode's inputs put out: the schema they share, and each one's
/// nesting plan (None: flat).
pub(crate) type Outputs = (SchemaRef, Vec<Option<Arc<GpuNesting>>>);

/// A row group the GPU finished for a job.
pub(crate) struct FinishedRowGroup {
    pub(crate) batch: DeviceBatch,
    pub(crate) rows: usize,
    pub(crate) bytes: usize,
    pub(crate) times: RowGroupTimes,
}

/// One decode's inputs, planner, output and report.
pub(crate) struct ScanJob {
    pub(crate) inputs: Arc<Vec<DecodeInput>>,
    /// After the GPU's queue (the caller drops that first): the queued
    /// work's fetched bytes go back to the fetch's budget before the
    /// planner is joined.
    planned: PlanAhead,
    /// The decoded columns' schema (before the filter's projection).
    pub(crate) schema: SchemaRef,
    /// Per input, its projection's nesting plan (None: flat).
    pub(crate) nestings: Vec<Option<Arc<GpuNesting>>>,
    /// The exact filter, when the request has a predicate.
    filter: Option<RowFilter>,
    pub(crate) report: DecodeReport,
    /// The GPU's pools, and their counters when the job started.
    pools: (Arc<DevicePool>, Arc<PinnedPool>),
    pools_at_start: (PoolStats, PoolStats),
}

impl std::fmt::Debug for ScanJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScanJob")
            .field("inputs", &self.inputs.len())
            .field("filter", &self.filter.is_some())
            .finish()
    }
}

/// What a job's next group is, asked without waiting.
pub(crate) enum NextGroup<G = PlannedGroup> {
    /// Planned: its seconds waited and planning are in the report.
    Ready(G),
    /// The planner is still working on it.
    NotYet,
    /// The job's row groups are all planned and handed over.
    End,
    /// The planner failed.
    Failed(DecodeError),
}

impl ScanJob {
    /// Starts `inputs`' fetch and planner for the GPU of `gpu` (their output
    /// checked already: `schema`, `nestings`), filtered by `filter`. The
    /// fetch lets through the bytes of `held` groups (those the job may
    /// have on the GPU or waiting for its reader) and two more (the one
    /// planned, the one gathered). With `notify`, the planner calls it
    /// after each group it hands over.
    pub(crate) fn start(
        inputs: Vec<DecodeInput>,
        (schema, nestings): Outputs,
        options: &DecodeOptions,
        gpu: &JobResources,
        filter: Option<ExactFilter>,
        held: usize,
        notify: Option<s1_plan_ahead::Notify>,
    ) -> Result<ScanJob, DecodeError> {
        let filter = match &filter {
            Some(f) => Some(RowFilter::new(
                f,
                &schema,
                gpu.kernels.clone(),
                gpu.pool.clone(),
            )?),
            None => None,
        };
        let scans: Vec<SourceScan> = inputs
            .iter()
            .map(|i| SourceScan {
                source: i.source.clone(),
                plan: i.plan.clone(),
            })
            .collect();
        // The GPU's queue holds `held` of the job's groups while the next is
        // gathered, and the planner works on the one after: the fetch must
        // let that many bytes through, or it would wait for row groups the
        // queue holds (and the planner could not run ahead of the GPU).
        let largest = inputs
            .iter()
            .flat_map(|i| i.plan.row_groups.iter().map(|r| r.bytes))
            .max()
            .unwrap_or(0);
        let mut fetch_options = options.fetch;
        let groups = held.max(1) as u64 + 2;
        let needed = groups.saturating_mul(options.group_bytes.saturating_add(largest));
        fetch_options.max_bytes_in_flight = fetch_options.max_bytes_in_flight.max(needed);
        // Row groups land in device memory where the host reads no page body
        // (it reads their headers from the file), else in pinned host memory
        // (the host walks the pages there, one copy takes them up).
        let landing = s0_land::choose(options.landing, &inputs, gpu.checks);
        let allocator = match landing {
            Landing::Device => s0_land::LandingAllocator::Device(gpu.pool.clone()),
            Landing::Pinned => s0_land::LandingAllocator::Pinned(gpu.pinned.clone()),
        };
        let fetch = fetch(scans, [allocator], fetch_options);
        let inputs = Arc::new(inputs);
        let pools_at_start = (gpu.pool.stats(), gpu.pinned.stats());
        let planned = PlanAhead::start(
            fetch,
            inputs.clone(),
            gpu.checks,
            options.group_bytes,
            s1_plan_ahead::Ramp {
                up: options.ramp_up,
                down: options.ramp_down,
            },
            notify,
        );
        Ok(ScanJob {
            inputs,
            planned,
            schema,
            nestings,
            filter,
            report: DecodeReport {
                landing: Some(landing),
                ..DecodeReport::default()
            },
            pools: (gpu.pool.clone(), gpu.pinned.clone()),
            pools_at_start,
        })
    }

    /// The batches' schema.
    pub(crate) fn output_schema(&self) -> &SchemaRef {
        match &self.filter {
            Some(f) => f.schema(),
            None => &self.schema,
        }
    }

    /// Whether the job filters its rows (its batches then come a group at
    /// a time).
    pub(crate) fn filters(&self) -> bool {
        self.filter.is_some()
    }

    /// The next planned group, waiting for it when `wait`; the seconds
    /// waited and the planner's own go in the report.
    pub(crate) fn next_group(&mut self, wait: bool) -> NextGroup {
        let waited = Instant::now();
        let polled = if wait {
            match self.planned.next() {
                Some(group) => Polled::Ready(group),
                None => Polled::End,
            }
        } else {
            self.planned.poll()
        };
        match polled {
            Polled::NotYet => NextGroup::NotYet,
            Polled::End => NextGroup::End,
            Polled::Ready(Err(e)) => NextGroup::Failed(e),
            Polled::Ready(Ok(group)) => {
                if wait {
                    self.report.io_wait_seconds += waited.elapsed().as_secs_f64();
                }
                self.report.fetch_wait_seconds += group.fetch_wait;
                self.report.plan_seconds += group.plan;
                self.report.bytes_read += group
                    .row_groups
                    .iter()
                    .map(|p| p.fetched.bytes_read)
                    .sum::<u64>();
                NextGroup::Ready(group)
            }
        }
    }

    /// A finished group's row groups (in order) as the batches handed out:
    /// counted in the report, and with a filter cut to the selected rows
    /// (those keeping none left out).
    pub(crate) fn take_group(
        &mut self,
        finished: Vec<FinishedRowGroup>,
    ) -> Result<Vec<DeviceBatch>, DecodeError> {
        let batches = finished
            .into_iter()
            .map(|f| {
                self.report.add(f.rows, f.bytes, &f.times);
                f.batch
            })
            .collect();
        self.report.device_pool = self.pools.0.stats().since(&self.pools_at_start.0);
        self.report.pinned_pool = self.pools.1.stats().since(&self.pools_at_start.1);
        match &self.filter {
            Some(filter) => filter.apply_many(batches, &mut self.report.filter),
            None => Ok(batches),
        }
    }
}
