//! Which filters a table that decodes on the GPU takes exactly.
//!
//! A filter is exact when gdscan's predicate holds it in full
//! ([`translates_exactly`]): DataFusion then drops its `FilterExec` (and
//! the columns only the filter read), so every path of the scan must yield
//! exactly the rows it keeps. The GPU path evaluates the pushed predicate
//! on the device (a file it cannot filter exactly goes to the host), and
//! the host path reads with the scan's predicate as arrow-rs row filters
//! ([`exact_on_host`]).

use std::sync::Arc;

use ::datafusion::arrow::datatypes::Schema;
use ::datafusion::datasource::physical_plan::{
    FileScanConfig, FileScanConfigBuilder, FileSource, ParquetSource,
};
use ::datafusion::logical_expr::{Expr, TableProviderFilterPushDown};

use crate::config::decode::TableDecode;
use crate::datafusion::pushdown::translates_exactly;

/// How a table of `schema` that decodes with `decode` takes `filter`.
pub(crate) fn pushdown_of(
    decode: TableDecode,
    filter: &Expr,
    schema: &Schema,
) -> TableProviderFilterPushDown {
    match decode {
        TableDecode::Gpu | TableDecode::Auto if translates_exactly(filter, schema) => {
            TableProviderFilterPushDown::Exact
        }
        _ => TableProviderFilterPushDown::Inexact,
    }
}

/// `config` read on the host with its source's predicate applied to every
/// row (DataFusion's row filters in arrow-rs's reader, which read the
/// filter's columns beside the projection), for a scan whose filters are
/// exact. None when the source has no predicate to apply.
pub(crate) fn exact_on_host(
    config: &FileScanConfig,
    source: &ParquetSource,
) -> Option<FileScanConfig> {
    FileSource::filter(source)?;
    let source = source.clone().with_pushdown_filters(true);
    Some(
        FileScanConfigBuilder::from(config.clone())
            .with_source(Arc::new(source))
            .build(),
    )
}
