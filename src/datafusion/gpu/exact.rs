//! Which filters the GPU path evaluates exactly.

use ::datafusion::logical_expr::{Expr, TableProviderFilterPushDown};

use crate::config::decode::TableDecode;

/// Whether the GPU path yields exactly the rows `filter` selects, so that
/// DataFusion may drop its own `FilterExec` for it.
///
/// None yet: the decoder's predicate only prunes (row groups and pages),
/// its batches are a superset of the matching rows.
// TODO(issue 58): once the GPU filter is exact, return true for the
// filters the GPU evaluator takes. The CPU fallback of a file must then
// filter too (DataFusion no longer does): give the fallback scan the
// filter as a row filter, or filter its batches on the host.
pub(crate) fn gpu_exact(_filter: &Expr) -> bool {
    false
}

/// How a table that decodes with `decode` takes `filter`.
pub(crate) fn pushdown_of(decode: TableDecode, filter: &Expr) -> TableProviderFilterPushDown {
    match decode {
        TableDecode::Gpu | TableDecode::Auto if gpu_exact(filter) => {
            TableProviderFilterPushDown::Exact
        }
        _ => TableProviderFilterPushDown::Inexact,
    }
}
