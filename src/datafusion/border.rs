//! [`BorderExec`]: a gdscan scan whose streams stop panics at gdscan's
//! border.
//!
//! arrow-rs's page decoders panic on some corrupt pages (an index out of
//! bounds, found by fuzzing: `fuzz/findings/reader`). They run while
//! DataFusion polls a scan's stream, so a panic there would take down the
//! query, the process that runs it (`gdscan sql`, a Ballista executor) and
//! print a panic message. [`BorderExec`] runs every poll of its scan's
//! streams inside [`crate::border::catch`]: a panic ends the partition's
//! stream with gdscan's typed error (naming the partition's files) and
//! nothing is printed. An error the scan's stream yields where arrow-rs
//! refused wide DELTA_BINARY_PACKED deltas gets the explanation gdscan's
//! own CPU scan gives ([`ScanError::wide_deltas`]), the error kept as its
//! source.
//!
//! The node is the scan itself to every reader of the plan: its downcast
//! identity is the `DataSourceExec` it wraps (DataFusion's
//! [`ExecutionPlan::downcast_delegate`]), its name, display, properties,
//! statistics and metrics are the scan's, and each optimizer hook
//! (projection, filter, limit and sort pushdown, repartitioning, dynamic
//! filters) is the scan's with the result wrapped again. DataFusion's
//! protobuf writes the `DataSourceExec` below (it follows the delegate), so
//! a plan shipped to Ballista's executors arrives without the node; their
//! `GdsScanExec` puts its streams behind the same border.

use std::any::Any;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use ::datafusion::arrow::datatypes::SchemaRef;
use ::datafusion::arrow::record_batch::RecordBatch;
use ::datafusion::common::config::ConfigOptions;
use ::datafusion::common::tree_node::TreeNodeRecursion;
use ::datafusion::common::Statistics;
use ::datafusion::datasource::physical_plan::ParquetSource;
use ::datafusion::datasource::source::DataSourceExec;
use ::datafusion::error::Result;
use ::datafusion::execution::{RecordBatchStream, SendableRecordBatchStream, TaskContext};
use ::datafusion::physical_expr::PhysicalExpr;
use ::datafusion::physical_expr_common::sort_expr::PhysicalSortExpr;
use ::datafusion::physical_plan::execution_plan::{
    CardinalityEffect, ChildrenPropertiesMode, InvariantLevel, ReplaceChildrenOptions,
};
use ::datafusion::physical_plan::filter_pushdown::{
    ChildPushdownResult, FilterDescription, FilterPushdownPhase, FilterPushdownPropagation,
};
use ::datafusion::physical_plan::metrics::MetricsSet;
use ::datafusion::physical_plan::projection::ProjectionExec;
use ::datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties, SortOrderPushdownResult,
    StatisticsArgs,
};
use futures::{Stream, StreamExt};

use super::factory::GdsLocation;
use super::gpu;
use super::to_datafusion;
use crate::border::{catch, Panicked};
use crate::parquet::ScanError;

/// A scan (gdscan's `DataSourceExec`) whose streams turn a panic into a
/// typed error, silently. The module's docs say how it stays the scan
/// to DataFusion's optimizer, gdscan's metrics and Ballista.
#[derive(Debug)]
pub struct BorderExec {
    scan: Arc<dyn ExecutionPlan>,
}

impl BorderExec {
    /// Puts `scan` behind the border (a plan that is one already is
    /// returned as it is).
    pub fn wrap(scan: Arc<dyn ExecutionPlan>) -> Arc<dyn ExecutionPlan> {
        if (scan.as_ref() as &dyn Any).is::<BorderExec>() {
            scan
        } else {
            Arc::new(BorderExec { scan })
        }
    }

    /// The scan behind the border.
    pub fn scan(&self) -> &Arc<dyn ExecutionPlan> {
        &self.scan
    }
}

/// The files `partition` of `scan` reads, as shown to users (no
/// credentials).
fn files_of(scan: &Arc<dyn ExecutionPlan>, partition: usize) -> String {
    let names: Vec<String> = scan
        .downcast_ref::<DataSourceExec>()
        .and_then(|exec| exec.downcast_to_file_source::<ParquetSource>())
        .and_then(|(config, _)| config.file_groups.get(partition))
        .map(|group| {
            group
                .iter()
                .map(|f| match f.extension::<GdsLocation>() {
                    Some(GdsLocation(location)) => crate::store::redact(location),
                    None => f.object_meta.location.to_string(),
                })
                .collect()
        })
        .unwrap_or_default();
    files_shown(&names, partition)
}

/// Partition `partition` of `scan` on the host (arrow-rs's decoders),
/// behind the border.
fn host_execute(
    scan: &Arc<dyn ExecutionPlan>,
    partition: usize,
    context: Arc<TaskContext>,
) -> Result<SendableRecordBatchStream> {
    let files = files_of(scan, partition);
    let stream = catch(|| scan.execute(partition, context))
        .map_err(|panic| panic_error(&files, panic))??;
    Ok(border_stream(stream, files))
}

/// One file by its name; several as the first and how many more.
fn files_shown(names: &[String], partition: usize) -> String {
    match names {
        [] => format!("<partition {partition}>"),
        [one] => one.clone(),
        [first, rest @ ..] => format!("{first} (or one of {} more files)", rest.len()),
    }
}

/// The typed error a panic inside a scan of `files` becomes.
fn panic_error(files: &str, panic: Panicked) -> ::datafusion::error::DataFusionError {
    to_datafusion(ScanError::from_parquet(
        files,
        ::parquet::errors::ParquetError::External(Box::new(panic)),
    ))
}

/// An error of the scan of `files`, explained where arrow-rs refused wide
/// deltas while DataFusion decoded (the same message as gdscan's own CPU
/// scan, DataFusion's error kept as the source); any other as it is.
fn explained(
    files: &str,
    e: ::datafusion::error::DataFusionError,
) -> ::datafusion::error::DataFusionError {
    match ScanError::wide_deltas(files, e) {
        Ok(ours) => to_datafusion(ours),
        Err(e) => e,
    }
}

/// A scan partition's stream, polled inside the border. After a panic it
/// yields the typed error once and ends (the panicked stream is dropped,
/// inside the border too).
struct BorderStream {
    inner: Option<SendableRecordBatchStream>,
    schema: SchemaRef,
    files: String,
}

impl Stream for BorderStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let Some(inner) = self.inner.as_mut() else {
            return Poll::Ready(None);
        };
        match catch(|| inner.poll_next_unpin(cx)) {
            Ok(Poll::Ready(Some(Err(e)))) => Poll::Ready(Some(Err(explained(&self.files, e)))),
            Ok(poll) => poll,
            Err(panic) => {
                let inner = self.inner.take();
                let _ = catch(move || drop(inner));
                Poll::Ready(Some(Err(panic_error(&self.files, panic))))
            }
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.inner {
            Some(inner) => inner.size_hint(),
            None => (0, Some(0)),
        }
    }
}

impl RecordBatchStream for BorderStream {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

impl Drop for BorderStream {
    fn drop(&mut self) {
        if let Some(inner) = self.inner.take() {
            let _ = catch(move || drop(inner));
        }
    }
}

/// Puts a partition's stream behind the border.
fn border_stream(stream: SendableRecordBatchStream, files: String) -> SendableRecordBatchStream {
    let schema = stream.schema();
    Box::pin(BorderStream {
        inner: Some(stream),
        schema,
        files,
    })
}

fn wrap_some(plan: Option<Arc<dyn ExecutionPlan>>) -> Option<Arc<dyn ExecutionPlan>> {
    plan.map(BorderExec::wrap)
}

impl DisplayAs for BorderExec {
    fn fmt_as(&self, t: DisplayFormatType, f: &mut fmt::Formatter) -> fmt::Result {
        self.scan.fmt_as(t, f)
    }
}

impl ExecutionPlan for BorderExec {
    fn name(&self) -> &str {
        self.scan.name()
    }

    fn downcast_delegate(&self) -> Option<&dyn ExecutionPlan> {
        Some(self.scan.as_ref())
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.scan.properties()
    }

    fn check_invariants(&self, check: InvariantLevel) -> Result<()> {
        self.scan.check_invariants(check)
    }

    fn dynamic_expressions_produced(&self) -> Vec<Arc<dyn PhysicalExpr>> {
        self.scan.dynamic_expressions_produced()
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        // A leaf, as the scan is.
        Vec::new()
    }

    fn replace_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
        options: ReplaceChildrenOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(BorderExec::wrap(
            self.scan.clone().replace_children(children, options)?,
        ))
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        self.replace_children(
            children,
            ReplaceChildrenOptions::new(ChildrenPropertiesMode::Recompute),
        )
    }

    fn apply_expressions(
        &self,
        f: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        self.scan.apply_expressions(f)
    }

    fn reset_state(self: Arc<Self>) -> Result<Arc<dyn ExecutionPlan>> {
        Ok(BorderExec::wrap(self.scan.clone().reset_state()?))
    }

    fn repartitioned(
        &self,
        target_partitions: usize,
        config: &ConfigOptions,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        Ok(wrap_some(
            self.scan.repartitioned(target_partitions, config)?,
        ))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        // A table that decodes on the GPU: its own path (whose fallback
        // files come back here, through `host_execute`).
        if let Some(stream) = gpu::execute(&self.scan, partition, context.clone(), host_execute)? {
            return Ok(stream);
        }
        host_execute(&self.scan, partition, context)
    }

    fn metrics(&self) -> Option<MetricsSet> {
        self.scan.metrics()
    }

    fn statistics_from_inputs(
        &self,
        input_stats: &[Arc<Statistics>],
        args: &StatisticsArgs,
    ) -> Result<Arc<Statistics>> {
        self.scan.statistics_from_inputs(input_stats, args)
    }

    fn supports_limit_pushdown(&self) -> bool {
        self.scan.supports_limit_pushdown()
    }

    fn with_fetch(&self, limit: Option<usize>) -> Option<Arc<dyn ExecutionPlan>> {
        wrap_some(self.scan.with_fetch(limit))
    }

    fn fetch(&self) -> Option<usize> {
        self.scan.fetch()
    }

    fn cardinality_effect(&self) -> CardinalityEffect {
        self.scan.cardinality_effect()
    }

    fn try_swapping_with_projection(
        &self,
        projection: &ProjectionExec,
    ) -> Result<Option<Arc<dyn ExecutionPlan>>> {
        Ok(wrap_some(
            self.scan.try_swapping_with_projection(projection)?,
        ))
    }

    fn gather_filters_for_pushdown(
        &self,
        phase: FilterPushdownPhase,
        parent_filters: Vec<Arc<dyn PhysicalExpr>>,
        config: &ConfigOptions,
    ) -> Result<FilterDescription> {
        self.scan
            .gather_filters_for_pushdown(phase, parent_filters, config)
    }

    fn handle_child_pushdown_result(
        &self,
        phase: FilterPushdownPhase,
        child_pushdown_result: ChildPushdownResult,
        config: &ConfigOptions,
    ) -> Result<FilterPushdownPropagation<Arc<dyn ExecutionPlan>>> {
        let mut propagation =
            self.scan
                .handle_child_pushdown_result(phase, child_pushdown_result, config)?;
        propagation.updated_node = wrap_some(propagation.updated_node);
        Ok(propagation)
    }

    fn with_new_state(&self, state: Arc<dyn Any + Send + Sync>) -> Option<Arc<dyn ExecutionPlan>> {
        wrap_some(self.scan.with_new_state(state))
    }

    fn try_pushdown_sort(
        &self,
        order: &[PhysicalSortExpr],
    ) -> Result<SortOrderPushdownResult<Arc<dyn ExecutionPlan>>> {
        self.scan
            .try_pushdown_sort(order)?
            .try_map(|plan| Ok(BorderExec::wrap(plan)))
    }

    fn with_preserve_order(&self, preserve_order: bool) -> Option<Arc<dyn ExecutionPlan>> {
        wrap_some(self.scan.with_preserve_order(preserve_order))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_shown_by_name_or_first_and_count() {
        assert_eq!(files_shown(&[], 3), "<partition 3>");
        assert_eq!(files_shown(&["a.parquet".into()], 0), "a.parquet");
        assert_eq!(
            files_shown(&["a".into(), "b".into(), "c".into()], 0),
            "a (or one of 2 more files)"
        );
    }

    #[test]
    fn a_panicking_stream_ends_with_a_typed_error() {
        use ::datafusion::arrow::datatypes::Schema;
        use ::datafusion::physical_plan::stream::RecordBatchStreamAdapter;

        let schema = Arc::new(Schema::empty());
        let panics = futures::stream::poll_fn(|_| -> Poll<Option<Result<RecordBatch>>> {
            panic!("index out of bounds: the len is 0 but the index is 1")
        });
        let inner = Box::pin(RecordBatchStreamAdapter::new(schema, panics));
        let mut stream = border_stream(inner, "f.parquet".into());
        let items: Vec<_> = futures::executor::block_on(async {
            let mut items = Vec::new();
            while let Some(item) = stream.next().await {
                items.push(item);
            }
            items
        });
        assert_eq!(items.len(), 1);
        let err = items[0].as_ref().unwrap_err().to_string();
        assert!(err.contains("f.parquet"), "{err}");
        assert!(err.contains("stopped by an internal check"), "{err}");
        assert!(err.contains("index out of bounds"), "{err}");
    }
}
