//! The physical codec: a [`GdsScanExec`] travels from the scheduler to the
//! executors as a header with what DataFusion's protobuf of its child
//! `DataSourceExec` (files, byte ranges, projection, predicate, Parquet
//! options; written by DataFusion as the node's input) drops: the reader's
//! options and, per file of each group, gdscan's location, access plan and
//! read-ahead plan. The executor puts them back and gives the scan gdscan's
//! reader factory again.

use std::sync::Arc;

use ::datafusion::datasource::listing::PartitionedFile;
use ::datafusion::datasource::physical_plan::parquet::ParquetAccessPlan;
use ::datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use ::datafusion::datasource::source::DataSourceExec;
use ::datafusion::error::Result;
use ::datafusion::execution::TaskContext;
use ::datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};

use super::error::{ClusterError, WireError};
use super::scan_exec::{gds_factory, GdsScanExec};
use super::wire::{self, FileExtras, Scan, TableOptions, SCAN_TAG};
use crate::datafusion::{FileScanPlan, GdsLocation, GdsReaderFactory, PushedPredicate};

/// Ballista's physical codec with gdscan's scans: a [`GdsScanExec`] is
/// written by gdscan, everything else by `inner` (Ballista's own).
#[derive(Debug)]
pub struct GdsPhysicalCodec {
    inner: Arc<dyn PhysicalExtensionCodec>,
}

impl GdsPhysicalCodec {
    /// gdscan's scans on top of `inner`.
    pub fn new(inner: Arc<dyn PhysicalExtensionCodec>) -> Self {
        GdsPhysicalCodec { inner }
    }
}

impl Default for GdsPhysicalCodec {
    /// gdscan's scans on top of Ballista's codec.
    fn default() -> Self {
        GdsPhysicalCodec::new(Arc::new(
            ballista_core::serde::BallistaPhysicalExtensionCodec::default(),
        ))
    }
}

fn wire_error(what: &'static str) -> ClusterError {
    WireError::Plan(what).into()
}

/// What gdscan attached to each file of `exec`'s groups.
fn extras(exec: &DataSourceExec) -> Result<Vec<Vec<FileExtras>>> {
    let (config, _) = exec
        .downcast_to_file_source::<ParquetSource>()
        .ok_or_else(|| wire_error("a gdscan scan without a Parquet source"))?;
    Ok(config
        .file_groups
        .iter()
        .map(|group| {
            group
                .iter()
                .map(|f| {
                    FileExtras::new(
                        f.extension::<GdsLocation>().map(|l| l.0.clone()),
                        f.extension::<ParquetAccessPlan>(),
                        f.extension::<Arc<FileScanPlan>>().map(|p| p.as_ref()),
                    )
                })
                .collect()
        })
        .collect())
}

/// The predicate gdscan's table pushed to `exec`'s files (the same for
/// each), if any.
fn pushed(exec: &DataSourceExec) -> Option<PushedPredicate> {
    let (config, _) = exec.downcast_to_file_source::<ParquetSource>()?;
    config
        .file_groups
        .iter()
        .flat_map(|g| g.iter())
        .find_map(|f| f.extension::<Arc<PushedPredicate>>())
        .map(|p| p.as_ref().clone())
}

/// `file` with what gdscan attached to it back.
fn restore(
    file: &PartitionedFile,
    extras: &FileExtras,
    factory: &Arc<GdsReaderFactory>,
    pushed: Option<&Arc<PushedPredicate>>,
) -> PartitionedFile {
    let mut file = file.clone().with_extension(factory.clone());
    if let Some(pushed) = pushed {
        file = file.with_extension(pushed.clone());
    }
    if let Some(location) = &extras.location {
        file = file.with_extension(GdsLocation(location.clone()));
    }
    if let Some(access) = extras.access_plan() {
        file = file.with_extension(access);
    }
    if let Some(plan) = extras.scan_plan() {
        file = file.with_extension(Arc::new(plan));
    }
    file
}

/// The decoded `DataSourceExec` as gdscan's scan: its Parquet source with
/// gdscan's reader factory, its files with their extras.
fn rebuild(plan: Arc<dyn ExecutionPlan>, scan: Scan) -> Result<Arc<dyn ExecutionPlan>> {
    let exec = plan
        .downcast_ref::<DataSourceExec>()
        .ok_or_else(|| wire_error("a gdscan scan that is not a DataSourceExec"))?;
    let (config, source) = exec
        .downcast_to_file_source::<ParquetSource>()
        .ok_or_else(|| wire_error("a gdscan scan without a Parquet source"))?;
    if config.file_groups.len() != scan.groups.len() {
        return Err(ClusterError::from(WireError::Count {
            what: "file groups",
            plan: config.file_groups.len(),
            header: scan.groups.len(),
        })
        .into());
    }
    let factory = Arc::new(GdsReaderFactory::new(scan.options.into_options()?));
    let pushed = scan.pushed.map(Arc::new);
    let mut groups = Vec::with_capacity(scan.groups.len());
    for (group, extras) in config.file_groups.iter().zip(&scan.groups) {
        if group.len() != extras.len() {
            return Err(ClusterError::from(WireError::Count {
                what: "files in a group",
                plan: group.len(),
                header: extras.len(),
            })
            .into());
        }
        let files: Vec<PartitionedFile> = group
            .iter()
            .zip(extras)
            .map(|(f, x)| restore(f, x, &factory, pushed.as_ref()))
            .collect();
        let mut rebuilt = FileGroup::new(files);
        if let Some(statistics) = group.file_statistics(None) {
            rebuilt = rebuilt.with_statistics(Arc::new(statistics.clone()));
        }
        groups.push(rebuilt);
    }
    let source = source.clone().with_parquet_file_reader_factory(factory);
    // Each partition reads its own file group, as the scheduler assigned
    // them (DataFusion's work stealing between partitions, off when the
    // order is to be preserved, would move files between them).
    let config = FileScanConfigBuilder::from(config.clone())
        .with_source(Arc::new(source))
        .with_file_groups(groups)
        .with_preserve_order(true)
        .build();
    Ok(DataSourceExec::from_data_source(config))
}

impl PhysicalExtensionCodec for GdsPhysicalCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let Some(bytes) = wire::untag(buf, SCAN_TAG) else {
            return self.inner.try_decode(buf, inputs, ctx, proto_converter);
        };
        let (scan, _): (Scan, _) = wire::decode(bytes)?;
        // The scan itself came as the node's child, written by DataFusion
        // (files, byte ranges, projection, predicate) and cut by the
        // scheduler to the task's partitions.
        let [child] = inputs else {
            return Err(ClusterError::from(WireError::Count {
                what: "children of a GdsScanExec",
                plan: inputs.len(),
                header: 1,
            })
            .into());
        };
        Ok(Arc::new(GdsScanExec::new(rebuild(child.clone(), scan)?)))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some(scan) = node.downcast_ref::<GdsScanExec>() else {
            return self.inner.try_encode(node, buf, proto_converter);
        };
        let input = scan.input();
        let factory = gds_factory(input.as_ref())
            .ok_or_else(|| wire_error("a GdsScanExec over something else"))?;
        let exec = input
            .downcast_ref::<DataSourceExec>()
            .ok_or_else(|| wire_error("a GdsScanExec over something else"))?;
        let header = Scan {
            options: TableOptions::from(factory.options()),
            groups: extras(exec)?,
            pushed: pushed(exec),
        };
        wire::encode(SCAN_TAG, &header, &[], buf)?;
        Ok(())
    }
}
