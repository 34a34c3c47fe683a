//! The GPU decode pipeline: a scan's row groups in, device batches out.
//!
//! Per row group: the fetch lands its planned bytes in pinned host memory
//! (the engine's workers read them from the page cache or the disk, a store
//! from the network); the host walks the page headers there (no device
//! round trip per page) and plans the work; one copy takes the bytes to the
//! device, nvCOMP decompresses the compressed pages in batches, the kernels
//! decode every page into the row group's output columns, and one copy
//! brings back every page's status. All of it is queued on one of the
//! scan's streams behind one event; `depth` row groups are queued at once,
//! each on the next stream, so one row group's copy overlaps others'
//! kernels while the host plans the next and the fetch reads further
//! ahead. The only host waits are on each row group's own event, before
//! its batch is handed out (its status must be known to be clean).
//!
//! ```no_run
//! use gdscan::decode::scan::{open, DecodeOptions};
//! use gdscan::parquet::{Projection, ScanRequest};
//!
//! let request = ScanRequest {
//!     projection: Projection::Columns(vec!["l_quantity".into(), "l_shipdate".into()]),
//!     predicate: Some("l_shipdate >= DATE '1994-01-01'".parse()?),
//!     ..ScanRequest::default()
//! };
//! for batch in open("lineitem.parquet", request, DecodeOptions::default())? {
//!     let batch = batch?; // Arrow columns in GPU memory
//!     println!("{} rows on GPU {:?}", batch.num_rows(), batch.device_ordinal());
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod context;
mod error;
mod multi;
mod report;
mod row_group;

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Instant;

use arrow::datatypes::{Field, Schema, SchemaRef};
use parquet::file::metadata::ParquetMetaData;

pub use context::{DEVICE_POOL_BYTES, PINNED_POOL_BYTES};
pub use error::DecodeError;
pub use multi::{decode_multi, open_multi, DeviceShare, MultiDecodeStream};
pub use report::DecodeReport;

use context::{Gpu, PinnedAllocator};
use row_group::InFlight;

use crate::cuda::{Device, DevicePool, PooledPinnedBuffer};
use crate::decode::array::DeviceBatch;
use crate::decode::page::{check_chunk, column_type, DecodePlanError};
use crate::parquet::fetch::{fetch, FetchOptions, RowGroupStream, SourceScan};
use crate::parquet::metadata::{load, MetadataOptions};
use crate::parquet::{plan, ScanPlan, ScanRequest};
use crate::store::{Source, StoreOptions};

/// How a GPU decode runs.
#[derive(Debug, Clone)]
pub struct DecodeOptions {
    /// The GPU (CUDA ordinal).
    pub device: usize,
    /// The fetch underneath (bytes in flight, read-ahead).
    pub fetch: FetchOptions,
    /// Row groups queued on the GPU at once, each on the next of as many
    /// streams (at least 1; more overlap one row group's copy with others'
    /// kernels and fill the GPU with several row groups' pages). Device
    /// memory in use grows with it.
    pub depth: usize,
    /// Store settings for remote locations.
    pub store: StoreOptions,
    /// Walk every Snappy and LZ4 page on the host before nvCOMP decompresses
    /// it (default on): nvCOMP's behaviour on corrupt input is undefined
    /// (an out-of-bounds read that poisons the CUDA context was seen). Off
    /// only for input you trust; `GDSCAN_DECODE_TRUST_COMPRESSED=1` turns
    /// it off for the CLI and benchmarks.
    pub check_compressed: bool,
}

impl Default for DecodeOptions {
    fn default() -> Self {
        DecodeOptions {
            device: 0,
            fetch: FetchOptions::default(),
            depth: 4,
            store: StoreOptions::default(),
            check_compressed: std::env::var("GDSCAN_DECODE_TRUST_COMPRESSED").as_deref() != Ok("1"),
        }
    }
}

/// One file of a decode: where, its metadata and its plan.
#[derive(Debug, Clone)]
pub struct DecodeInput {
    /// The object (local file or remote).
    pub source: Arc<dyn Source>,
    /// Its metadata (with the page index when the plan prunes pages).
    pub metadata: Arc<ParquetMetaData>,
    /// What to read.
    pub plan: Arc<ScanPlan>,
}

/// Opens `location` (a path or URL), plans `request` and starts decoding
/// into device `options.device`.
pub fn open(
    location: &str,
    request: ScanRequest,
    options: DecodeOptions,
) -> Result<DecodeStream, DecodeError> {
    let source = crate::store::open(location, &options.store)?;
    let metadata = load(&source, MetadataOptions::default())?;
    let plan = plan(&metadata, &request).map_err(|source| DecodeError::Request {
        file: location.to_string(),
        source,
    })?;
    decode(
        vec![DecodeInput {
            source,
            metadata,
            plan: Arc::new(plan),
        }],
        options,
    )
}

/// The Arrow schema a decode of `plan` produces, or the first column
/// outside the decoder's coverage (checked from the metadata, before any
/// I/O).
pub fn output_schema(
    location: &str,
    metadata: &ParquetMetaData,
    plan: &ScanPlan,
) -> Result<SchemaRef, DecodeError> {
    let unsupported = |e: DecodePlanError| match e {
        DecodePlanError::Unsupported { column, what } => DecodeError::Unsupported {
            file: location.to_string(),
            column,
            what,
        },
        source => DecodeError::Plan {
            file: location.to_string(),
            source,
        },
    };
    for chunk in &plan.chunks {
        let meta = metadata.row_group(chunk.row_group).column(chunk.leaf);
        check_chunk(meta).map_err(unsupported)?;
    }
    let descr = metadata.file_metadata().schema_descr();
    let mut fields = Vec::with_capacity(plan.leaves.len());
    for &leaf in &plan.leaves {
        let column = descr.column(leaf);
        let ty = column_type(&column).map_err(unsupported)?;
        fields.push(Field::new(column.name(), ty.data_type, ty.nullable));
    }
    Ok(Arc::new(Schema::new(fields)))
}

/// Starts decoding `inputs` (files with their plans, streamed as one
/// table) into device `options.device`. Every column is checked against
/// the decoder's coverage first: an unsupported one fails here, before any
/// read.
pub fn decode(
    inputs: Vec<DecodeInput>,
    options: DecodeOptions,
) -> Result<DecodeStream, DecodeError> {
    let mut schema = None;
    for input in &inputs {
        let s = output_schema(input.source.location(), &input.metadata, &input.plan)?;
        schema.get_or_insert(s);
    }
    let schema = schema.unwrap_or_else(|| Arc::new(Schema::empty()));
    let device = Device::get(options.device)?;
    let pool = DevicePool::new(device, DEVICE_POOL_BYTES);
    let gpu = Gpu::new(device, pool, options.check_compressed, options.depth)?;
    let scans: Vec<SourceScan> = inputs
        .iter()
        .map(|i| SourceScan {
            source: i.source.clone(),
            plan: i.plan.clone(),
        })
        .collect();
    let fetch = fetch(scans, PinnedAllocator(gpu.pinned.clone()), options.fetch);
    Ok(DecodeStream {
        gpu,
        inputs,
        fetch,
        queue: VecDeque::new(),
        depth: options.depth.max(1),
        launched: 0,
        schema,
        report: DecodeReport::default(),
        failed: false,
    })
}

/// Device batches, one per row group, in plan order. Dropping the stream
/// stops the fetch; batches already handed out stay valid.
pub struct DecodeStream {
    gpu: Gpu,
    inputs: Vec<DecodeInput>,
    fetch: RowGroupStream<PooledPinnedBuffer>,
    queue: VecDeque<InFlight>,
    depth: usize,
    launched: usize,
    schema: SchemaRef,
    report: DecodeReport,
    failed: bool,
}

impl std::fmt::Debug for DecodeStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DecodeStream")
            .field("device", &self.gpu.device.ordinal())
            .field("queued", &self.queue.len())
            .finish()
    }
}

impl DecodeStream {
    /// The batches' schema.
    pub fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    /// What the decoder has done so far.
    pub fn report(&self) -> &DecodeReport {
        &self.report
    }

    /// The GPU the batches land on.
    pub fn device(&self) -> usize {
        self.gpu.device.ordinal()
    }

    /// Queues row groups until `depth` are on the GPU or the fetch ends.
    fn fill(&mut self) -> Result<(), DecodeError> {
        while self.queue.len() < self.depth {
            let waited = Instant::now();
            let Some(fetched) = self.fetch.next() else {
                return Ok(());
            };
            self.report.io_wait_seconds += waited.elapsed().as_secs_f64();
            let fetched = fetched?;
            self.report.bytes_read += fetched.bytes_read;
            let input = &self.inputs[fetched.file];
            let item = row_group::launch(
                &self.gpu,
                input.source.location(),
                &input.metadata,
                &input.plan,
                fetched,
                &self.gpu.streams[self.launched % self.gpu.streams.len()],
            )?;
            self.launched += 1;
            self.queue.push_back(item);
        }
        Ok(())
    }

    fn step(&mut self) -> Option<Result<DeviceBatch, DecodeError>> {
        if let Err(e) = self.fill() {
            return Some(Err(e));
        }
        let item = self.queue.pop_front()?;
        let (rows, bytes) = (item.rows, item.output_bytes);
        Some(
            item.finish(self.gpu.device.ordinal())
                .map(|(batch, times)| {
                    self.report.add(rows, bytes, &times);
                    batch
                }),
        )
    }
}

impl Iterator for DecodeStream {
    type Item = Result<DeviceBatch, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        let item = self.step();
        if matches!(item, Some(Err(_))) {
            // A failed row group ends the stream: never partial data after it.
            self.failed = true;
            self.queue.clear();
        }
        item
    }
}
