//! [`GdsTable`]: the DataFusion table provider over gdscan's reader.

use std::sync::Arc;

use ::datafusion::arrow::datatypes::{Schema, SchemaRef};
use ::datafusion::catalog::{Session, TableProvider};
use ::datafusion::common::config::TableParquetOptions;
use ::datafusion::common::{DFSchema, Statistics};
use ::datafusion::datasource::listing::PartitionedFile;
use ::datafusion::datasource::physical_plan::parquet::metadata::DFParquetMetadata;
use ::datafusion::datasource::physical_plan::parquet::{
    transform_binary_to_string, transform_schema_to_view,
};
use ::datafusion::datasource::physical_plan::{FileGroup, FileScanConfigBuilder, ParquetSource};
use ::datafusion::datasource::source::DataSourceExec;
use ::datafusion::execution::object_store::ObjectStoreUrl;
use ::datafusion::logical_expr::utils::conjunction;
use ::datafusion::logical_expr::{Expr, TableProviderFilterPushDown, TableType};
use ::datafusion::physical_plan::ExecutionPlan;
use ::parquet::arrow::parquet_to_arrow_schema;
use async_trait::async_trait;

use super::border::BorderExec;
use super::error::Result;
use super::error::SqlError;
use super::estimate::filtered_statistics;
use super::factory::{GdsLocation, GdsReaderFactory};
use super::file_plan::plan_file;
use super::gpu::{pushdown_of, PushedPredicate};
use super::location::{list_files, open_reader, TableFile};
use super::options::{GdsTableOptions, TableDecode};
use super::pushdown::predicate_from_filters;
use crate::parquet::metadata::{load, MetadataOptions};
use crate::parquet::ScanError;
use ::parquet::file::metadata::ParquetMetaData;

/// One file of the table with its metadata and statistics.
#[derive(Debug, Clone)]
struct FileEntry {
    file: TableFile,
    metadata: Arc<ParquetMetaData>,
    statistics: Arc<Statistics>,
}

/// A table of one Parquet file or a folder of them, scanned by DataFusion's
/// Parquet scan through gdscan's reader.
///
/// Registration reads every file's footer and page index once, through the
/// engine and into gdscan's metadata cache, for the schema (merged across
/// files, shaped by the session's Parquet options as DataFusion's own
/// tables are: view types, binary as string, metadata dropped) and the
/// statistics the planner uses (rows, bytes, min/max, nulls per column).
#[derive(Debug)]
pub struct GdsTable {
    location: String,
    schema: SchemaRef,
    files: Vec<FileEntry>,
    statistics: Statistics,
    factory: Arc<GdsReaderFactory>,
}

/// The Arrow schema a session's Parquet options give the files' schemas.
fn table_schema(schemas: Vec<Schema>, parquet: &TableParquetOptions) -> Result<Schema> {
    let global = &parquet.global;
    let schemas = schemas.into_iter().map(|s| {
        if global.skip_metadata {
            let fields: Vec<_> = s
                .fields()
                .iter()
                .map(|f| f.as_ref().clone().with_metadata(Default::default()))
                .collect();
            Schema::new(fields)
        } else {
            s
        }
    });
    let mut schema = Schema::try_merge(schemas).map_err(SqlError::Schema)?;
    if global.binary_as_string {
        schema = transform_binary_to_string(&schema);
    }
    if global.schema_force_view_types {
        schema = transform_schema_to_view(&schema);
    }
    Ok(schema)
}

impl GdsTable {
    /// Opens the table at `location` (a file, or a folder of files ending
    /// with `options.file_extension`), shaped by `parquet` (a session's
    /// Parquet options: `ctx.state().table_options().parquet`).
    pub fn try_new(
        location: &str,
        options: GdsTableOptions,
        parquet: &TableParquetOptions,
    ) -> Result<GdsTable> {
        let files = list_files(location, &options)?;
        let mut metadata = Vec::with_capacity(files.len());
        let mut schemas = Vec::with_capacity(files.len());
        for file in &files {
            let reader = open_reader(&file.location, &options)?;
            let meta = load(reader.source(), MetadataOptions::default())?;
            let file_meta = meta.file_metadata();
            let schema =
                parquet_to_arrow_schema(file_meta.schema_descr(), file_meta.key_value_metadata())
                    .map_err(|e| ScanError::from_parquet(&file.location, e))?;
            schemas.push(schema);
            metadata.push(meta);
        }
        let schema = Arc::new(table_schema(schemas, parquet)?);
        let mut entries = Vec::with_capacity(files.len());
        for (file, meta) in files.into_iter().zip(metadata) {
            let statistics = DFParquetMetadata::statistics_from_parquet_metadata(&meta, &schema)
                .map_err(|e| SqlError::Statistics {
                    path: file.location.clone(),
                    source: Box::new(e),
                })?;
            entries.push(FileEntry {
                file,
                metadata: meta,
                statistics: Arc::new(statistics),
            });
        }
        let statistics =
            Statistics::try_merge_iter(entries.iter().map(|e| e.statistics.as_ref()), &schema)
                .map_err(|e| SqlError::Statistics {
                    path: location.to_string(),
                    source: Box::new(e),
                })?;
        Ok(GdsTable {
            location: location.to_string(),
            schema,
            files: entries,
            statistics,
            factory: Arc::new(GdsReaderFactory::new(options)),
        })
    }

    /// The location the table was opened at.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// The options the table was opened with (its readers use them).
    pub fn options(&self) -> &GdsTableOptions {
        self.factory.options()
    }

    /// The table's files (locations and sizes), sorted.
    pub fn files(&self) -> Vec<TableFile> {
        self.files.iter().map(|f| f.file.clone()).collect()
    }

    /// The files as DataFusion's scan takes them: statistics attached, the
    /// location for gdscan's reader factory and, where gdscan can plan the
    /// file, its plan: the row groups and rows gdscan's pruning keeps (a
    /// `ParquetAccessPlan`, which DataFusion's own pruning can only narrow)
    /// and the bytes each kept row group needs, for read-ahead.
    fn partitioned_files(
        &self,
        columns: Option<&[String]>,
        pushed: Option<&PushedPredicate>,
        read_ahead: bool,
    ) -> Vec<PartitionedFile> {
        let predicate = pushed.map(|p| &p.predicate);
        self.files
            .iter()
            .map(|f| {
                // The path DataFusion shows (EXPLAIN, metrics, errors) has
                // no credentials; gdscan's reader takes the location itself.
                let shown = crate::store::redact(&f.file.location);
                let mut file = PartitionedFile::new(shown, f.file.size)
                    .with_statistics(f.statistics.clone())
                    .with_extension(GdsLocation(f.file.location.clone()))
                    .with_extension(self.factory.clone());
                if let (Some(p), TableDecode::Gpu | TableDecode::Auto) =
                    (pushed, self.options().decode)
                {
                    file = file.with_extension(Arc::new(p.clone()));
                }
                match plan_file(&f.metadata, columns, predicate, read_ahead) {
                    Some((access, plan)) => {
                        file.with_extension(access).with_extension(Arc::new(plan))
                    }
                    None => file,
                }
            })
            .collect()
    }
}

#[async_trait]
impl TableProvider for GdsTable {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    /// DataFusion's Parquet scan with gdscan's reader factory. The filters
    /// prune twice: gdscan's row-group and page pruning plans each file
    /// (see [`predicate_from_filters`] for what it translates) and hands
    /// DataFusion the rows to read; DataFusion's physical filter pushdown
    /// then prunes what it can on top (statistics, page index, bloom
    /// filters, dynamic filters; row filters when the session's
    /// `pushdown_filters` is on). The files are spread over the session's
    /// target partitions (and split into byte ranges by its optimizer),
    /// the projection and limit go to the scan; without a limit each reader
    /// reads its next row group ahead. The scan is behind gdscan's border
    /// ([`BorderExec`]): a panic of arrow-rs's decoders on a corrupt page
    /// ends the query with a typed error.
    async fn scan(
        &self,
        state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        limit: Option<usize>,
    ) -> ::datafusion::error::Result<Arc<dyn ExecutionPlan>> {
        let predicate = predicate_from_filters(filters, &self.schema);
        let decode = self.options().decode;
        let exact: Vec<Expr> = filters
            .iter()
            .filter(|f| pushdown_of(decode, f, &self.schema) == TableProviderFilterPushDown::Exact)
            .cloned()
            .collect();
        let columns: Option<Vec<String>> = projection.map(|p| {
            p.iter()
                .map(|&i| self.schema.field(i).name().clone())
                .collect()
        });
        let pushed = predicate.clone().map(|predicate| PushedPredicate {
            predicate,
            exact: !exact.is_empty(),
        });
        let files = self.partitioned_files(columns.as_deref(), pushed.as_ref(), limit.is_none());
        let mut source = ParquetSource::new(self.schema.clone())
            .with_table_parquet_options(state.table_options().parquet.clone())
            .with_parquet_file_reader_factory(self.factory.clone());
        let mut statistics = self.statistics.clone();
        // The exact filters, which DataFusion no longer applies, as the
        // scan's predicate: each path of the scan applies it (see
        // `gpu::exact`), and the table's statistics become what DataFusion
        // would estimate above a scan with that filter (`estimate`).
        if let Some(all) = conjunction(exact) {
            let schema = DFSchema::try_from(self.schema.as_ref().clone())?;
            let predicate = state.create_physical_expr(all, &schema)?;
            let selectivity = state
                .config()
                .options()
                .optimizer
                .default_filter_selectivity;
            statistics =
                filtered_statistics(&self.schema, &self.statistics, &predicate, selectivity)
                    .unwrap_or_else(|_| statistics.to_inexact());
            source = source.with_predicate(predicate);
        }
        let groups = FileGroup::new(files).split_files(state.config().target_partitions().max(1));
        let config =
            FileScanConfigBuilder::new(ObjectStoreUrl::local_filesystem(), Arc::new(source))
                .with_file_groups(groups)
                .with_statistics(statistics)
                .with_projection_indices(projection.cloned())?
                .with_limit(limit)
                .build();
        Ok(BorderExec::wrap(DataSourceExec::from_data_source(config)))
    }

    /// A table that decodes on the CPU takes every filter inexactly: the
    /// scan prunes with it and DataFusion still filters the rows above it.
    /// One that decodes on the GPU (or auto) takes exactly the filters
    /// gdscan's predicate holds in full: the GPU evaluates them on every
    /// row, and files read on the host apply them as row filters (see
    /// `gpu::exact`).
    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> ::datafusion::error::Result<Vec<TableProviderFilterPushDown>> {
        let decode = self.options().decode;
        Ok(filters
            .iter()
            .map(|f| pushdown_of(decode, f, &self.schema))
            .collect())
    }

    fn statistics(&self) -> Option<Statistics> {
        Some(self.statistics.clone())
    }
}
