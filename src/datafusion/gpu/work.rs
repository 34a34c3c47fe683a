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
/// a table that decodes on the GPU (the decoder prunes with it; the
/// Ballista codec does not carry it: executors prune by the planned row
/// groups).
#[derive(Debug, Clone)]
pub struct PushedPredicate(pub Predicate);

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
            let row_groups = f
                .extension::<Arc<FileScanPlan>>()
                .map(|p| p.in_range(range).iter().map(|rg| rg.index).collect());
            Unit {
                file: f.clone(),
                location,
                shown,
                row_groups,
                predicate: f.extension::<Arc<PushedPredicate>>().map(|p| p.0.clone()),
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
