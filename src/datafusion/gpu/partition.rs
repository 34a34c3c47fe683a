//! A partition of a gdscan scan whose table decodes on the GPU: decides
//! whether the partition can take the GPU path at all, and starts it (a
//! decode thread and the stream it feeds) or the host path.

use std::sync::Arc;

use ::datafusion::datasource::physical_plan::{
    FileGroup, FileScanConfig, FileScanConfigBuilder, FileSource, ParquetSource,
};
use ::datafusion::datasource::source::DataSourceExec;
use ::datafusion::error::Result;
use ::datafusion::execution::{SendableRecordBatchStream, TaskContext};
use ::datafusion::physical_plan::ExecutionPlan;
use tokio::sync::mpsc::Receiver;

use super::exact::exact_on_host;
use super::job::{Job, Msg};
use super::metrics::GpuMetrics;
use super::probe::usable_gpu;
use super::shape::Shaper;
use super::slots::GpuSlots;
use super::stream::{counted, partition_stream, Fallback, Start};
use super::work::{names, units, Unit};
use crate::config::decode::TableDecode;
use crate::cuda::Devices;
use crate::datafusion::error::SqlError;
use crate::datafusion::factory::GdsReaderFactory;
use crate::decode::scan::{DecodeOptions, PipelineMode};

/// Runs partition `partition` of the scan `scan` on the host (the
/// border's own execution of a scan).
pub(crate) type HostScan =
    fn(&Arc<dyn ExecutionPlan>, usize, Arc<TaskContext>) -> Result<SendableRecordBatchStream>;

/// The factory of a gdscan scan's files, when `scan` is one.
fn gds_scan(
    scan: &dyn ExecutionPlan,
) -> Option<(&FileScanConfig, &ParquetSource, Arc<GdsReaderFactory>)> {
    let exec = scan.downcast_ref::<DataSourceExec>()?;
    let (config, source) = exec.downcast_to_file_source::<ParquetSource>()?;
    let factory = config
        .file_groups
        .iter()
        .flat_map(|g| g.iter())
        .find_map(|f| f.extension::<Arc<GdsReaderFactory>>().cloned())?;
    Some((config, source, factory))
}

/// Why the whole partition reads on the host, or None.
fn host_only(decode: TableDecode, source: &ParquetSource) -> Option<String> {
    if decode == TableDecode::Auto {
        if let Err(reason) = usable_gpu() {
            return Some(reason.to_string());
        }
    }
    if source.table_parquet_options().global.pushdown_filters {
        return Some("DataFusion's filter pushdown (row filters in its reader) is on".to_string());
    }
    None
}

/// Partition `partition` of `scan` on the GPU path, when `scan` is a
/// gdscan scan whose table decodes on the GPU (`Gpu` or `Auto`); None for
/// any other scan. Files the GPU path cannot take go to `host`.
pub(crate) fn execute(
    scan: &Arc<dyn ExecutionPlan>,
    partition: usize,
    context: Arc<TaskContext>,
    host: HostScan,
) -> Result<Option<SendableRecordBatchStream>> {
    let Some((config, source, factory)) = gds_scan(scan.as_ref()) else {
        return Ok(None);
    };
    let options = factory.options();
    if options.decode == TableDecode::Cpu {
        return Ok(None);
    }
    let Some(group) = config.file_groups.get(partition) else {
        return Ok(None);
    };
    let metrics = GpuMetrics::new(source.metrics(), partition);
    let units = units(group);
    let shaper = Shaper::new(config.file_schema(), FileSource::projection(source));
    // The partitions share their device's pipeline unless the environment
    // says otherwise: one set of streams and one queue of groups for all
    // (BENCHMARKS.md, the shared pipeline's figures).
    let shared = DecodeOptions {
        pipeline: PipelineMode::Shared,
        ..DecodeOptions::default()
    };
    let decode = DecodeOptions::from_env_over(shared).map(|mut decode| {
        decode.devices = partition_device(&options.devices, partition);
        decode
    });
    let reason = host_only(options.decode, source)
        .or_else(|| {
            shaper
                .as_ref()
                .err()
                .map(|e| format!("the scan's projection: {e}"))
        })
        .or_else(|| decode.as_ref().err().map(|e| e.to_string()));
    // With exact filters the host path applies the scan's predicate too.
    let exact = units.iter().any(|u| u.exact);
    let config = match exact.then(|| exact_on_host(config, source)) {
        None => config.clone(),
        Some(Some(exact)) => exact,
        Some(None) => {
            let files = names(&units);
            return Err(SqlError::ExactWithoutPredicate { files }.into());
        }
    };
    let (Ok(shaper), Ok(decode), None) = (shaper, decode, reason.clone()) else {
        let reason = reason.unwrap_or_default();
        for unit in &units {
            metrics.on_cpu(&unit.shown, &reason);
        }
        let stream = if exact {
            // The partition's files as a scan of their own (a new scan's
            // partition would take other partitions' files too: DataFusion
            // lets a partition steal the files of those not running).
            let all = (0..units.len()).collect();
            host_fallback(config, units, host)(all, context)?
        } else {
            host(scan, partition, context)?
        };
        return Ok(Some(counted(stream, metrics.cpu_rows)));
    };
    let batch_size = config
        .batch_size
        .unwrap_or_else(|| context.session_config().batch_size());
    let job = Job {
        units: units.clone(),
        table: options.clone(),
        slots: GpuSlots::of(&decode.devices.to_string(), options.gpu_scans),
        decode,
        shaper: Arc::new(shaper),
        batch_size,
        metrics: metrics.clone(),
    };
    let files = names(&units);
    let start: Start = Box::new(move || spawn(job, files));
    let limit = config.limit;
    let fallback = host_fallback(config, units, host);
    Ok(Some(partition_stream(
        scan.schema(),
        start,
        fallback,
        context,
        metrics.cpu_rows,
        limit,
    )))
}

/// The GPU partition `partition` decodes on: the `partition mod n`-th of
/// the table's `n` devices (`all`: every device the driver reports; where
/// it cannot say, device 0, whose opening then says why).
fn partition_device(devices: &Devices, partition: usize) -> Devices {
    let ordinals = match devices {
        Devices::List(list) => list.clone(),
        Devices::All => crate::cuda::driver::device_count()
            .map(|n| (0..n).collect())
            .unwrap_or_default(),
    };
    match ordinals.get(partition % ordinals.len().max(1)) {
        Some(&ordinal) => Devices::List(vec![ordinal]),
        None => Devices::default(),
    }
}

/// Starts `job` on a thread of its own (a panic there ends the partition
/// with a typed error); the receiving end of what it sends.
fn spawn(job: Job, files: String) -> Result<Receiver<Msg>> {
    let (tx, rx) = tokio::sync::mpsc::channel(2);
    let shown = files.clone();
    let on_panic = tx.clone();
    std::thread::Builder::new()
        .name("gdscan-gpu-scan".to_string())
        .spawn(move || {
            if let Err(panic) = crate::border::catch(|| job.run(tx)) {
                let source = Box::new(panic);
                let e = SqlError::GpuThread {
                    files: shown,
                    source,
                };
                let _ = on_panic.blocking_send(Msg::Failed(e.into()));
            }
        })
        .map_err(|e| SqlError::GpuThread {
            files,
            source: Box::new(e),
        })?;
    Ok(rx)
}

/// The host scan of some of the partition's units: the same scan over
/// those files only (its metrics land in the scan's set).
fn host_fallback(config: FileScanConfig, units: Vec<Unit>, host: HostScan) -> Fallback {
    Box::new(move |picked: Vec<usize>, context: Arc<TaskContext>| {
        let files = picked
            .iter()
            .filter_map(|&i| units.get(i).map(|u| u.file.clone()))
            .collect();
        let config = FileScanConfigBuilder::from(config)
            .with_file_groups(vec![FileGroup::new(files)])
            .build();
        let subset: Arc<dyn ExecutionPlan> = DataSourceExec::from_data_source(config);
        host(&subset, 0, context)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partitions_take_the_tables_devices_in_turn() {
        let two = Devices::List(vec![1, 0]);
        let picked: Vec<Devices> = (0..5).map(|p| partition_device(&two, p)).collect();
        let one = |o| Devices::List(vec![o]);
        assert_eq!(picked, vec![one(1), one(0), one(1), one(0), one(1)]);
        assert_eq!(partition_device(&Devices::default(), 7), one(0));
    }
}
