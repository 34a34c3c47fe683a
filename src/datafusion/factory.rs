//! The reader factory DataFusion's Parquet scan calls for every file range.

use ::datafusion::datasource::listing::PartitionedFile;
use ::datafusion::datasource::physical_plan::ParquetFileReaderFactory;
use ::datafusion::error::Result;
use ::datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use ::parquet::arrow::async_reader::AsyncFileReader;

use std::sync::Arc;

use super::file_plan::FileScanPlan;
use super::location::open_reader;
use super::metered::MeteredReader;
use super::metrics::ReaderMetrics;
use super::options::GdsTableOptions;
use super::read_ahead::ReadAhead;
use super::to_datafusion;

/// Where a file of a [`GdsTable`](super::GdsTable) is, attached to its
/// `PartitionedFile` (whose object-store path cannot hold every location).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GdsLocation(pub String);

/// Opens gdscan's reader ([`open_reader`]) for each file range, wrapped so
/// that its reads show in the scan's metrics and, when the file carries
/// gdscan's plan ([`FileScanPlan`]), so that it reads the range's next row
/// group ahead.
#[derive(Debug, Default)]
pub struct GdsReaderFactory {
    options: GdsTableOptions,
}

impl GdsReaderFactory {
    /// A factory whose readers use `options` (engine, coalescing).
    pub fn new(options: GdsTableOptions) -> Self {
        GdsReaderFactory { options }
    }

    /// The options its readers use.
    pub fn options(&self) -> &GdsTableOptions {
        &self.options
    }
}

impl ParquetFileReaderFactory for GdsReaderFactory {
    fn create_reader(
        &self,
        partition_index: usize,
        file: PartitionedFile,
        _metadata_size_hint: Option<usize>,
        metrics: &ExecutionPlanMetricsSet,
    ) -> Result<Box<dyn AsyncFileReader + Send>> {
        let location = match file.extension::<GdsLocation>() {
            Some(GdsLocation(location)) => location.clone(),
            None => format!("/{}", file.object_meta.location),
        };
        let reader = open_reader(&location, &self.options).map_err(to_datafusion)?;
        let metered = MeteredReader::new(reader, ReaderMetrics::new(metrics, partition_index));
        let read_ahead = match file.extension::<Arc<FileScanPlan>>() {
            Some(plan) if plan.read_ahead => {
                let range = file.range.as_ref().map(|r| r.start as u64..r.end as u64);
                ReadAhead::new(plan.in_range(range), self.options.read_ahead)
            }
            _ => ReadAhead::disabled(),
        };
        Ok(Box::new(metered.with_read_ahead(read_ahead)))
    }
}
