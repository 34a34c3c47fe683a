//! The statistics of a scan whose filters are pushed down exactly: what
//! DataFusion's `FilterExec` would estimate above the same table.
//!
//! A filter DataFusion keeps above a scan shrinks the row estimate the
//! planner sees (by interval analysis of the predicate over the columns'
//! min/max, else by the session's default selectivity); a filter the scan
//! takes exactly leaves no `FilterExec`, and the table's whole row count
//! would make the filtered side of a join look larger than the other: the
//! hash join would then build on the wrong side (TPC-H Q12 built on all of
//! `orders` instead of the few `lineitem` rows the filter keeps). Asking
//! DataFusion's own `FilterExec` for the estimate keeps the plans the same
//! as with DataFusion's reader.

use std::sync::Arc;

use ::datafusion::arrow::datatypes::SchemaRef;
use ::datafusion::common::Statistics;
use ::datafusion::datasource::physical_plan::{FileScanConfigBuilder, ParquetSource};
use ::datafusion::datasource::source::DataSourceExec;
use ::datafusion::error::Result;
use ::datafusion::execution::object_store::ObjectStoreUrl;
use ::datafusion::physical_expr::PhysicalExpr;
use ::datafusion::physical_plan::filter::FilterExec;
use ::datafusion::physical_plan::{StatisticsArgs, StatisticsContext};

/// The statistics `FilterExec` estimates for `predicate` (over the
/// table's `schema`) above a scan of a table with `statistics`, with the
/// session's `default_selectivity` (percent); inexact.
pub(crate) fn filtered_statistics(
    schema: &SchemaRef,
    statistics: &Statistics,
    predicate: &Arc<dyn PhysicalExpr>,
    default_selectivity: u8,
) -> Result<Statistics> {
    // A scan of no file that reports the table's statistics: the filter's
    // input as the planner would see DataFusion's own scan.
    let config = FileScanConfigBuilder::new(
        ObjectStoreUrl::local_filesystem(),
        Arc::new(ParquetSource::new(schema.clone())),
    )
    .with_statistics(statistics.clone())
    .build();
    let input = DataSourceExec::from_data_source(config);
    let filter = FilterExec::try_new(predicate.clone(), input)?
        .with_default_selectivity(default_selectivity)?;
    let estimated = StatisticsContext::new().compute(&filter, &StatisticsArgs::new())?;
    Ok(estimated.as_ref().clone().to_inexact())
}
