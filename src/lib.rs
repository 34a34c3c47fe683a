//! # gdscan
//!
//! Parquet data from storage into NVIDIA GPU memory, fast and with proof of
//! the path taken.
//!
//! The layers, bottom to top (each uses only the ones before it):
//! [`config`] (KvikIO's `KVIKIO_*` settings) → [`cuda`] (the driver,
//! loaded at run time) → [`cufile`] (GPUDirect Storage, loaded at run
//! time) → [`engine`] (a [`FileHandle`] reads file ranges into host or
//! device memory through a worker pool: POSIX bounce buffers, the page
//! cache registered in place, or cuFile, every byte counted per path) →
//! [`store`] (one [`Source`](store::Source) for a local file on the engine
//! or an object in any object store) → [`parquet`] (metadata, a plan
//! without I/O, the fetch of its byte ranges into device or host memory,
//! and an arrow-rs `AsyncFileReader`) → `nvcomp` (nvCOMP, loaded at run
//! time) → [`decode`] (the GPU decoder: pages into Arrow columns in GPU
//! memory, exported through the Arrow C Device Data Interface; see
//! [`decode::scan::decode`], on one GPU or spread over several) →
//! `datafusion` (a table provider on the
//! reader; feature `datafusion`). [`report`] joins what was decided
//! and what happened into one verdict: did GPUDirect Storage carry the
//! bytes? Every failure is an [`Error`] whose variant names its layer.
//!
//! CUDA and cuFile are loaded at run time: the crate builds and its host
//! paths run on machines without them; asking for a device there is a
//! [`CudaError::Unavailable`](crate::cuda::CudaError::Unavailable), never a
//! panic. A library user that needs no SQL takes `default-features = false`;
//! the command line, the benchmarks and TPC-H generation are the
//! `gdscan-cli` crate (cli/).
//!
//! # Read a file range (the engine)
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("data.bin");
//! # std::fs::write(&path, vec![7u8; 1 << 20])?;
//! use gdscan::FileHandle;
//!
//! let handle = FileHandle::open(&path, "r")?; // settings from KVIKIO_* variables
//! let mut host = vec![0u8; 64 << 10];
//! let n = handle.pread(&mut host, 64 << 10, 4096)?;
//! assert_eq!(n, 64 << 10);
//! # if gdscan::cuda::driver::is_available() {
//! // The same call into GPU memory; stage 1 picks cuFile or a POSIX route
//! // and says why.
//! let mut device = gdscan::cuda::DeviceBuffer::new(gdscan::cuda::Device::get(0)?, 64 << 10)?;
//! handle.pread(&mut device, 64 << 10, 4096)?;
//! println!("{:?}", handle.last_route());
//! # }
//! # Ok(())
//! # }
//! ```
//!
//! # Plan a scan, then fetch its bytes
//!
//! Planning reads only the footer: projection, row groups and pages pruned
//! by a filter, the byte ranges coalesced into requests. The fetch lands
//! each kept row group in one buffer, with a table of where every column
//! chunk (and page) is.
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("t.parquet");
//! # // A file of 1000 rows (column `id`: 0..1000) in row groups of 100.
//! # let schema = std::sync::Arc::new(arrow::datatypes::Schema::new(vec![
//! #     arrow::datatypes::Field::new("id", arrow::datatypes::DataType::Int64, false),
//! # ]));
//! # let ids = arrow::array::Int64Array::from((0..1000).collect::<Vec<i64>>());
//! # let batch = arrow::record_batch::RecordBatch::try_new(schema.clone(), vec![std::sync::Arc::new(ids)])?;
//! # let props = parquet::file::properties::WriterProperties::builder()
//! #     .set_max_row_group_row_count(Some(100))
//! #     .build();
//! # let mut writer = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path)?, schema, Some(props))?;
//! # writer.write(&batch)?;
//! # writer.close()?;
//! use std::sync::Arc;
//! use gdscan::parquet::{
//!     fetch, load_metadata, plan, FetchOptions, HostAllocator, Projection, ScanRequest,
//!     SourceScan,
//! };
//!
//! // A path or file:// URL reads through the engine; s3://, gs://, az://,
//! // http(s):// through object_store.
//! let source = gdscan::store::open(path.to_str().unwrap(), &Default::default())?;
//! let metadata = load_metadata(&source, Default::default())?;
//! let request = ScanRequest {
//!     projection: Projection::Columns(vec!["id".into()]),
//!     predicate: Some("id >= 900".parse()?),
//!     ..Default::default()
//! };
//! let plan = Arc::new(plan(&metadata, &request)?);
//! assert!(plan.totals.row_groups_pruned_by_statistics > 0);
//! // `DeviceAllocator::new(Device::get(0)?)` lands them in GPU memory instead.
//! for row_group in fetch([SourceScan::new(source, plan.clone())], [HostAllocator], FetchOptions::default()) {
//!     let row_group = row_group?;
//!     for slice in &row_group.chunks {
//!         let chunk = &plan.chunks[slice.chunk];
//!         let bytes = row_group.chunk_bytes(slice)?;
//!         println!("{} ({:?}, {:?}): {} bytes", chunk.column, chunk.physical_type, chunk.codec, bytes.len());
//!     }
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # Decode with arrow-rs (`AsyncFileReader`)
//!
//! ```
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("t.parquet");
//! # // A file of 1000 rows (column `id`: 0..1000) in row groups of 100.
//! # let schema = std::sync::Arc::new(arrow::datatypes::Schema::new(vec![
//! #     arrow::datatypes::Field::new("id", arrow::datatypes::DataType::Int64, false),
//! # ]));
//! # let ids = arrow::array::Int64Array::from((0..1000).collect::<Vec<i64>>());
//! # let batch = arrow::record_batch::RecordBatch::try_new(schema.clone(), vec![std::sync::Arc::new(ids)])?;
//! # let props = parquet::file::properties::WriterProperties::builder()
//! #     .set_max_row_group_row_count(Some(100))
//! #     .build();
//! # let mut writer = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path)?, schema, Some(props))?;
//! # writer.write(&batch)?;
//! # writer.close()?;
//! use futures::TryStreamExt;
//! use gdscan::parquet::GdsParquetReader;
//! use parquet::arrow::ParquetRecordBatchStreamBuilder;
//!
//! let reader = GdsParquetReader::open(path.to_str().unwrap(), &Default::default())?;
//! let batches: Vec<_> = futures::executor::block_on(async {
//!     ParquetRecordBatchStreamBuilder::new(reader).await?.build()?.try_collect().await
//! })?;
//! assert_eq!(batches.iter().map(|b| b.num_rows()).sum::<usize>(), 1000);
//! # Ok(())
//! # }
//! ```
//!
//! # SQL with DataFusion (feature `datafusion`)
//!
//! ```
//! # #[cfg(feature = "datafusion")]
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let path = dir.path().join("t.parquet");
//! # // A file of 1000 rows (column `id`: 0..1000) in row groups of 100.
//! # let schema = std::sync::Arc::new(arrow::datatypes::Schema::new(vec![
//! #     arrow::datatypes::Field::new("id", arrow::datatypes::DataType::Int64, false),
//! # ]));
//! # let ids = arrow::array::Int64Array::from((0..1000).collect::<Vec<i64>>());
//! # let batch = arrow::record_batch::RecordBatch::try_new(schema.clone(), vec![std::sync::Arc::new(ids)])?;
//! # let props = parquet::file::properties::WriterProperties::builder()
//! #     .set_max_row_group_row_count(Some(100))
//! #     .build();
//! # let mut writer = parquet::arrow::ArrowWriter::try_new(std::fs::File::create(&path)?, schema, Some(props))?;
//! # writer.write(&batch)?;
//! # writer.close()?;
//! use gdscan::datafusion::{context, register_parquet, run_sql, runtime, GdsTableOptions};
//!
//! let ctx = context(None);
//! register_parquet(&ctx, "t", path.to_str().unwrap(), GdsTableOptions::default())?;
//! let batches = runtime()?.block_on(run_sql(&ctx, "SELECT count(*) FROM t WHERE id < 100"))?;
//! assert_eq!(batches[0].num_rows(), 1);
//! # Ok(())
//! # }
//! # #[cfg(not(feature = "datafusion"))]
//! # fn main() {}
//! ```

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]
#![warn(unreachable_pub)]

#[cfg(feature = "ballista")]
pub mod ballista;
pub mod border;
pub mod checksum;
pub mod config;
pub mod cuda;
pub mod cufile;
#[cfg(feature = "datafusion")]
pub mod datafusion;
pub mod decode;
pub mod engine;
pub mod error;
#[cfg(feature = "internals")]
pub mod nvcomp;
#[cfg(not(feature = "internals"))]
#[allow(unreachable_pub, unused_imports, dead_code)]
pub(crate) mod nvcomp;
pub mod parquet;
pub mod report;
pub mod store;

pub use config::{CompatMode, DeviceReadPath, Settings, SettingsBuilder};
pub use engine::{Engine, FileHandle, IoPath, OpenMode};
pub use error::{Error, Result};
