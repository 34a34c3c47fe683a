//! What one partition of a GPU scan reads: its files (or file ranges) as
//! DataFusion's scan assigned them, each with what gdscan's table attached
//! (its location, its planned row groups, the pushed predicate).

use std::sync::Arc;

use ::datafusion::datasource::listing::PartitionedFile;
use ::datafusion::datasource::physical_plan::FileGroup;

use crate::datafusion::factory::GdsLocation;
use crate::datafusion::file_plan::FileScanPlan;
use crate::parquet::predicate::Predicate;

/// The filters of a scan as gdscan's predicate, attached to each file of
/// a table that decodes on the GPU (the decoder filters with it; Ballista's
/// codec carries it to the executors).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PushedPredicate {
    /// The translatable conjuncts of the scan's filters.
    pub predicate: Predicate,
    /// Whether some of them were pushed down exactly: then DataFusion keeps
    /// no filter of its own for them, and every path of the scan must yield
    /// exactly the rows `predicate` keeps.
    pub exact: bool,
}

/// One file (or file range) of a partition.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    /// The file as DataFusion has it (what the host path reads).
    pub(crate) file: PartitionedFile,
    /// gdscan's location of it.
    pub(crate) location: Option<String>,
    /// The file as shown (no credentials).
    pub(crate) shown: String,
    /// The row groups gdscan planned in the file's range (None: no plan).
    pub(crate) row_groups: Option<Vec<usize>>,
    /// The pushed predicate.
    pub(crate) predicate: Option<Predicate>,
    /// Whether the scan must yield exactly the rows of `predicate`.
    pub(crate) exact: bool,
}

/// The units of `group`, in order.
pub(crate) fn units(group: &FileGroup) -> Vec<Unit> {
    group
        .iter()
        .map(|f| {
            let location = f.extension::<GdsLocation>().map(|l| l.0.clone());
            let shown = match &location {
                Some(l) => crate::store::redact(l),
                None => f.object_meta.location.to_string(),
            };
            let range = f.range.as_ref().map(|r| r.start as u64..r.end as u64);
            let pushed = f.extension::<Arc<PushedPredicate>>();
            let row_groups = f
                .extension::<Arc<FileScanPlan>>()
                .map(|p| p.in_range(range).iter().map(|rg| rg.index).collect());
            Unit {
                file: f.clone(),
                location,
                shown,
                row_groups,
                predicate: pushed.map(|p| p.predicate.clone()),
                exact: pushed.is_some_and(|p| p.exact),
            }
        })
        .collect()
}

/// The units' names, for errors: one, or the first and how many more.
pub(crate) fn names(units: &[Unit]) -> String {
    match units {
        [] => "<no file>".to_string(),
        [one] => one.shown.clone(),
        [first, rest @ ..] => format!("{} (or one of {} more files)", first.shown, rest.len()),
    }
}
