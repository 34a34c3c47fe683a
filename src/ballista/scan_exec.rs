//! [`GdsScanExec`]: gdscan's scan as a plan node of its own, so that
//! Ballista ships it through gdscan's physical codec.
//!
//! A gdscan table's scan is DataFusion's `DataSourceExec` with gdscan's
//! reader factory. DataFusion's protobuf writes a `DataSourceExec` itself
//! and drops the reader factory and what gdscan attached to the files, so
//! the executors would read with DataFusion's reader. Once the scheduler
//! has optimized a plan (every rule has seen the plain `DataSourceExec`),
//! [`MarkGdsScans`] puts each gdscan scan under a [`GdsScanExec`], which
//! only the physical codec writes (the scan below it is DataFusion's to
//! write, after Ballista's scheduler has cut it to a task's partitions).

use std::fmt;
use std::sync::Arc;

use ::datafusion::common::config::ConfigOptions;
use ::datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use ::datafusion::common::{internal_err, Statistics};
use ::datafusion::datasource::physical_plan::ParquetSource;
use ::datafusion::datasource::source::DataSourceExec;
use ::datafusion::error::Result;
use ::datafusion::execution::{SendableRecordBatchStream, TaskContext};
use ::datafusion::physical_expr::PhysicalExpr;
use ::datafusion::physical_optimizer::PhysicalOptimizerRule;
use ::datafusion::physical_plan::statistics::StatisticsArgs;
use ::datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};

use ::datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use futures::StreamExt;

use super::report::{record, ScanReport};
use crate::datafusion::{BorderExec, GdsReaderFactory};

/// A gdscan scan (a `DataSourceExec` of a `ParquetSource` with gdscan's
/// reader factory) under a node of its own: everything is the scan's
/// (partitions, statistics, metrics, rows); the node only passes them on.
///
/// The scan stays a child, not hidden inside: Ballista's scheduler cuts
/// each task's plan down to the task's partitions by rewriting the
/// `DataSourceExec` leaves it can see (their file groups), and a task that
/// runs partitions `[2, 3]` of a stage executes them as its local
/// partitions `[0, 1]`. Hidden in a leaf of gdscan's, the scan would keep
/// every file group: tasks would read the first groups again and never the
/// last ones.
#[derive(Debug)]
pub struct GdsScanExec {
    input: Arc<dyn ExecutionPlan>,
}

impl GdsScanExec {
    /// Puts `scan`, a gdscan scan ([`is_gds_scan`]), under the node.
    pub fn new(scan: Arc<dyn ExecutionPlan>) -> Self {
        GdsScanExec { input: scan }
    }

    /// The `DataSourceExec` below.
    pub fn input(&self) -> &Arc<dyn ExecutionPlan> {
        &self.input
    }
}

/// The reader factory of a gdscan scan: a `DataSourceExec` of a
/// `ParquetSource` whose files gdscan's table attached its factory to.
pub(super) fn gds_factory(plan: &dyn ExecutionPlan) -> Option<Arc<GdsReaderFactory>> {
    let exec = plan.downcast_ref::<DataSourceExec>()?;
    let (config, source) = exec.downcast_to_file_source::<ParquetSource>()?;
    source.parquet_file_reader_factory()?;
    config
        .file_groups
        .iter()
        .flat_map(|g| g.iter())
        .find_map(|f| f.extension::<Arc<GdsReaderFactory>>().cloned())
}

/// Whether `plan` is a gdscan scan.
pub fn is_gds_scan(plan: &dyn ExecutionPlan) -> bool {
    gds_factory(plan).is_some()
}

impl DisplayAs for GdsScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        write!(f, "GdsScanExec")
    }
}

impl ExecutionPlan for GdsScanExec {
    fn name(&self) -> &str {
        "GdsScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn benefits_from_input_partitioning(&self) -> Vec<bool> {
        vec![false]
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        match <[Arc<dyn ExecutionPlan>; 1]>::try_from(children) {
            Ok([child]) => Ok(Arc::new(GdsScanExec::new(child))),
            Err(children) => internal_err!(
                "GdsScanExec has one child (the scan), got {}",
                children.len()
            ),
        }
    }

    fn apply_expressions(
        &self,
        _f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        // The scan's expressions are its own (a child's).
        Ok(TreeNodeRecursion::Continue)
    }

    fn reset_state(self: Arc<Self>) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(Arc::new(GdsScanExec::new(
            self.input.clone().reset_state()?,
        )))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        // Behind gdscan's border on the executors too (the node below
        // arrives there as DataFusion's plain scan).
        let stream = BorderExec::wrap(self.input.clone()).execute(partition, context)?;
        let schema = stream.schema();
        let done = Reported {
            scan: self.input.clone(),
            partition,
        };
        // `done` lives as long as the stream: when the partition ends (or
        // is dropped), its counters are final and reported.
        let stream = stream.map(move |batch| {
            let _ = &done;
            batch
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }

    fn statistics_from_inputs(
        &self,
        input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        match input_stats.first() {
            Some(stats) => Ok(stats.clone()),
            None => self.input.statistics_from_inputs(input_stats, args),
        }
    }

    fn fetch(&self) -> Option<usize> {
        self.input.fetch()
    }
}

/// Reports a scan partition's counters when dropped.
struct Reported {
    scan: Arc<dyn ExecutionPlan>,
    partition: usize,
}

impl Drop for Reported {
    fn drop(&mut self) {
        if let Some(metrics) = self.scan.metrics() {
            record(ScanReport::from_metrics(&metrics, self.partition));
        }
    }
}

/// The physical optimizer rule, last on the scheduler, that wraps every
/// gdscan scan in a [`GdsScanExec`].
#[derive(Debug, Default)]
pub struct MarkGdsScans;

impl PhysicalOptimizerRule for MarkGdsScans {
    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_down(|p| {
            if p.is::<GdsScanExec>() {
                // Marked already (the rule ran before): leave it.
                Ok(Transformed::new(p, false, TreeNodeRecursion::Jump))
            } else if is_gds_scan(p.as_ref()) {
                Ok(Transformed::new(
                    Arc::new(GdsScanExec::new(p)) as Arc<dyn ExecutionPlan>,
                    true,
                    TreeNodeRecursion::Jump,
                ))
            } else {
                Ok(Transformed::no(p))
            }
        })
        .map(|t| t.data)
    }

    fn name(&self) -> &str {
        "gdscan_mark_scans"
    }

    fn schema_check(&self) -> bool {
        true
    }
}
