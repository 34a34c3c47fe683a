//! The reader factory DataFusion's Parquet scan calls for every file range.

use ::datafusion::datasource::listing::PartitionedFile;
use ::datafusion::datasource::physical_plan::ParquetFileReaderFactory;
use ::datafusion::error::Result;
use ::datafusion::physical_plan::metrics::ExecutionPlanMetricsSet;
use ::parquet::arrow::async_reader::AsyncFileReader;

use super::location::open_reader;
use super::metered::MeteredReader;
use super::metrics::ReaderMetrics;
use super::options::GdsTableOptions;
use super::to_datafusion;

/// Where a file of a [`GdsTable`](super::GdsTable) is, attached to its
/// `PartitionedFile` (whose object-store path cannot hold every location).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GdsLocation(pub String);

/// Opens gdscan's reader ([`open_reader`]) for each file range, wrapped so
/// that its reads show in the scan's metrics.
#[derive(Debug, Default)]
pub struct GdsReaderFactory {
    options: GdsTableOptions,
}

impl GdsReaderFactory {
    /// A factory whose readers use `options` (engine, coalescing).
    pub fn new(options: GdsTableOptions) -> Self {
        GdsReaderFactory { options }
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
        Ok(Box::new(MeteredReader::new(
            reader,
            ReaderMetrics::new(metrics, partition_index),
        )))
    }
}
