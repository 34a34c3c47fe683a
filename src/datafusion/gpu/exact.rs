//! Which filters the GPU path evaluates exactly.

use ::datafusion::logical_expr::{Expr, TableProviderFilterPushDown};

use crate::config::decode::TableDecode;

/// Whether the GPU path yields exactly the rows `filter` selects, so that
/// DataFusion may drop its own `FilterExec` for it.
///
/// None yet: the GPU path filters its batches exactly (the decoder's
/// exact filter), but a file that falls back to the host is read pruned
/// only, so DataFusion's `FilterExec` must stay.
// TODO(issue 59): return true for the filters the GPU evaluator takes once
// the CPU fallback of a file filters too (the filter as a row filter of the
// fallback scan, or its batches filtered on the host).
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
