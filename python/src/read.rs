//! `read_parquet` and `scan`: a file's row groups decoded on the GPU (the
//! crate's decoder) or on the CPU (arrow-rs over gdscan's reader), batch by
//! batch, without the GIL.

use std::sync::{Arc, Mutex};

use arrow::array::RecordBatch;
use arrow::datatypes::{Schema, SchemaRef};
use futures::StreamExt;
use gdscan::cuda::Devices;
use gdscan::decode::array::DeviceBatch;
use gdscan::decode::scan::{decode, DecodeOptions, DecodeStream};
use gdscan::parquet::{
    load_metadata, plan, GdsParquetReader, MetadataOptions, Predicate, Projection, ScanError,
    ScanRequest,
};
use gdscan::store::{LocalSource, Source, StoreOptions};
use parquet::arrow::arrow_reader::{
    ArrowReaderMetadata, ArrowReaderOptions, RowSelection, RowSelector,
};
use parquet::arrow::async_reader::ParquetRecordBatchStream;
use parquet::arrow::{ParquetRecordBatchStreamBuilder, ProjectionMask};
use pyo3::prelude::*;

use crate::errors::{array_to_py, decode_to_py, to_py, ParquetError};
use crate::table::{Batches, Table};

/// Where the batches come from.
enum Inner {
    Device(Box<DecodeStream>),
    /// One arrow-rs stream per file, read in turn (front first).
    Host(std::collections::VecDeque<HostStream>),
    Done,
}

/// A file's arrow-rs stream and its location (for errors).
struct HostStream {
    stream: Box<ParquetRecordBatchStream<GdsParquetReader>>,
    location: String,
}

/// Batches of a scan, one per kept row group, in file order:
/// `for table in gdscan.scan(...)` (each a one-batch `Table`).
#[pyclass(module = "gdscan._gdscan", name = "Scanner")]
pub(crate) struct Scanner {
    inner: Mutex<Inner>,
    /// The batches' schema, in the order the caller asked for.
    schema: SchemaRef,
    /// For each output column, its index in the decoded batches.
    order: Vec<usize>,
    device: Option<usize>,
}

/// The file's location: a local path goes through the engine with the
/// settings of `gdscan.defaults`; a URL through its store.
fn source_of(location: &str) -> PyResult<Arc<dyn Source>> {
    if location.contains("://") {
        let options = StoreOptions::from_env().map_err(to_py)?;
        return gdscan::store::open(location, &options).map_err(to_py);
    }
    let engine = crate::defaults::engine()?;
    let source = LocalSource::open(engine, location).map_err(to_py)?;
    Ok(Arc::new(source))
}

fn request(columns: Option<Vec<String>>, filter: Option<&str>) -> PyResult<ScanRequest> {
    let predicate = filter
        .map(|f| f.parse::<Predicate>())
        .transpose()
        .map_err(|e| {
            ParquetError::new_err(format!(
                "filter {:?}: {}",
                filter.unwrap_or(""),
                crate::errors::chain(&e)
            ))
        })?;
    Ok(ScanRequest {
        projection: match columns {
            Some(c) => Projection::Columns(c),
            None => Projection::All,
        },
        predicate,
        ..ScanRequest::default()
    })
}

/// The caller's column order over `decoded` (the file's order): the
/// schema in that order and each column's index in the decoded batches.
fn reorder(decoded: &SchemaRef, columns: Option<&[String]>) -> (SchemaRef, Vec<usize>) {
    let identity = || (decoded.clone(), (0..decoded.fields().len()).collect());
    let Some(columns) = columns else {
        return identity();
    };
    let order: Option<Vec<usize>> = columns.iter().map(|c| decoded.index_of(c).ok()).collect();
    match order {
        Some(order) if order.len() == decoded.fields().len() => {
            let fields: Vec<_> = order.iter().map(|&i| decoded.field(i).clone()).collect();
            let schema = Schema::new_with_metadata(fields, decoded.metadata().clone());
            (Arc::new(schema), order)
        }
        // Dotted leaf paths or repeated names: keep the decoded order.
        _ => identity(),
    }
}

/// Metadata options as the CLI's scan takes them: the page index only when
/// a filter can use it (arrow-rs reads pages through an offset index when it
/// is loaded, and some writers' offset indexes list no pages).
fn metadata_options(request: &ScanRequest) -> MetadataOptions {
    MetadataOptions {
        page_index: request.predicate.is_some(),
        ..MetadataOptions::default()
    }
}

/// arrow-rs's error for `location` as the library's (one of gdscan's that
/// travelled through arrow-rs unwrapped, arrow-rs's refusal of wide deltas
/// explained as `gdscan scan --host` explains it), sources kept in the text.
fn parquet_error(location: &str, e: parquet::errors::ParquetError) -> PyErr {
    to_py(gdscan::Error::from_parquet(location, e))
}

/// An arrow-rs stream over the rows the plan keeps (row groups, and pages
/// within them, pruned by the filter: the same rows as the GPU decoder).
fn host_stream(
    location: &str,
    request: &ScanRequest,
) -> PyResult<ParquetRecordBatchStream<GdsParquetReader>> {
    let source = source_of(location)?;
    let metadata = load_metadata(&source, metadata_options(request)).map_err(to_py)?;
    let plan = plan(&metadata, request).map_err(|e| to_py(e.in_file(location)))?;
    let schema = metadata.file_metadata().schema_descr_ptr();
    let arrow_meta = ArrowReaderMetadata::try_new(metadata.clone(), ArrowReaderOptions::new())
        .map_err(|e| parquet_error(location, e))?;
    let mut selectors = Vec::new();
    for rg in &plan.row_groups {
        match &rg.rows {
            None => selectors.push(RowSelector::select(rg.num_rows as usize)),
            Some(ranges) => {
                let mut at = 0i64;
                for r in ranges {
                    if r.start > at {
                        selectors.push(RowSelector::skip((r.start - at) as usize));
                    }
                    selectors.push(RowSelector::select((r.end - r.start) as usize));
                    at = r.end;
                }
                if rg.num_rows > at {
                    selectors.push(RowSelector::skip((rg.num_rows - at) as usize));
                }
            }
        }
    }
    let batch_size = plan
        .row_groups
        .iter()
        .map(|r| r.num_rows as usize)
        .max()
        .unwrap_or(0)
        .max(1);
    let mut builder = ParquetRecordBatchStreamBuilder::new_with_metadata(
        GdsParquetReader::new(source).with_metadata(arrow_meta.metadata().clone()),
        arrow_meta,
    )
    .with_projection(ProjectionMask::leaves(&schema, plan.leaves.clone()))
    .with_row_groups(plan.row_groups.iter().map(|r| r.index).collect());
    // One batch per row group. arrow-rs clamps the batch size to the
    // footer's row count, which some writers leave at 0
    // (repeated_no_annotation.parquet): then keep its default.
    if metadata.file_metadata().num_rows() >= batch_size as i64 {
        builder = builder.with_batch_size(batch_size);
    }
    if plan.row_groups.iter().any(|r| r.rows.is_some()) {
        builder = builder.with_row_selection(RowSelection::from(selectors));
    }
    builder.build().map_err(|e| parquet_error(location, e))
}

impl Scanner {
    /// Plans the scan of every location and opens their sources (no row
    /// group read yet). Every file must decode to the same schema.
    pub(crate) fn open(
        py: Python<'_>,
        locations: &[String],
        columns: Option<Vec<String>>,
        filter: Option<&str>,
        device: Option<usize>,
    ) -> PyResult<Scanner> {
        if locations.is_empty() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "no file to read: the list of locations is empty",
            ));
        }
        let request = request(columns.clone(), filter)?;
        let (inner, decoded) = match device {
            Some(ordinal) => {
                // Local paths use the engine of `gdscan.defaults`.
                let stream = py.detach(|| -> PyResult<DecodeStream> {
                    let options = DecodeOptions {
                        devices: Devices::one(ordinal),
                        ..DecodeOptions::from_env().map_err(to_py)?
                    };
                    if let [location] = locations {
                        if location.contains("://") {
                            return decode(location, request, options).map_err(decode_to_py);
                        }
                    }
                    let mut inputs = Vec::with_capacity(locations.len());
                    for location in locations {
                        let source = source_of(location)?;
                        let metadata =
                            load_metadata(&source, metadata_options(&request)).map_err(to_py)?;
                        let plan =
                            plan(&metadata, &request).map_err(|e| to_py(e.in_file(location)))?;
                        inputs.push(gdscan::decode::scan::DecodeInput {
                            source,
                            metadata,
                            plan: Arc::new(plan),
                        });
                    }
                    decode(inputs, request, options).map_err(decode_to_py)
                })?;
                let schema = stream.schema().clone();
                (Inner::Device(Box::new(stream)), schema)
            }
            None => {
                let streams = py.detach(|| -> PyResult<Vec<HostStream>> {
                    locations
                        .iter()
                        .map(|location| {
                            Ok(HostStream {
                                stream: Box::new(host_stream(location, &request)?),
                                location: location.clone(),
                            })
                        })
                        .collect()
                })?;
                let schema = streams[0].stream.schema().clone();
                if let Some(other) = streams
                    .iter()
                    .find(|s| s.stream.schema().fields() != schema.fields())
                {
                    return Err(ParquetError::new_err(format!(
                        "{}: its columns differ from {}'s: every file of one read must have the same schema",
                        other.location, streams[0].location
                    )));
                }
                (Inner::Host(streams.into()), schema)
            }
        };
        let (schema, order) = reorder(&decoded, columns.as_deref());
        Ok(Scanner {
            inner: Mutex::new(inner),
            schema,
            order,
            device,
        })
    }

    /// The schema of the batches.
    pub(crate) fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The next batch, or None at the end (GIL released while it decodes).
    pub(crate) fn next_batch(&self, py: Python<'_>) -> PyResult<Option<Batches>> {
        let schema = self.schema.clone();
        let order = &self.order;
        let cell = &self.inner;
        py.detach(|| -> PyResult<Option<Batches>> {
            let mut inner = cell.lock().unwrap_or_else(|e| e.into_inner());
            let result = next_of(&mut inner, schema, order);
            if !matches!(result, Ok(Some(_))) {
                // An error ends the scan: never batches after a failed one.
                *inner = Inner::Done;
            }
            result
        })
    }
}

/// The next batch of `inner`, its columns in `order`.
fn next_of(inner: &mut Inner, schema: SchemaRef, order: &[usize]) -> PyResult<Option<Batches>> {
    match inner {
        Inner::Device(stream) => match stream.next() {
            None => Ok(None),
            Some(batch) => {
                let batch = batch.map_err(decode_to_py)?;
                let columns = order.iter().map(|&i| batch.columns()[i].clone()).collect();
                let batch = DeviceBatch::try_new(
                    schema,
                    batch.num_rows(),
                    columns,
                    batch.location(),
                    batch.ready().cloned(),
                )
                .map_err(array_to_py)?;
                Ok(Some(Batches::Device(vec![batch])))
            }
        },
        Inner::Host(streams) => loop {
            let Some(front) = streams.front_mut() else {
                return Ok(None);
            };
            // arrow-rs's decoders panic on some corrupt pages (fuzzing's
            // findings): each poll runs inside gdscan's border, and a panic
            // ends the scan with the file's typed error, printing nothing.
            let next =
                futures::executor::block_on(gdscan::border::CatchPanic::new(front.stream.next()));
            match next {
                Err(panic) => {
                    let location = front.location.clone();
                    let dropped = std::mem::take(streams);
                    let _ = gdscan::border::catch(move || drop(dropped));
                    return Err(to_py(gdscan::Error::from_parquet(
                        &location,
                        parquet::errors::ParquetError::External(Box::new(panic)),
                    )));
                }
                Ok(None) => {
                    streams.pop_front();
                }
                Ok(Some(batch)) => {
                    let location = front.location.as_str();
                    let batch = batch.map_err(|e| parquet_error(location, e))?;
                    let batch = RecordBatch::try_new(
                        schema,
                        order.iter().map(|&i| batch.column(i).clone()).collect(),
                    )
                    .map_err(|source| {
                        to_py(ScanError::Arrow {
                            path: location.to_string(),
                            source,
                        })
                    })?;
                    return Ok(Some(Batches::Host(vec![batch])));
                }
            }
        },
        Inner::Done => Ok(None),
    }
}

#[pymethods]
impl Scanner {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&self, py: Python<'_>) -> PyResult<Option<Table>> {
        Ok(self
            .next_batch(py)?
            .map(|b| Table::new(self.schema.clone(), b, self.device)))
    }

    /// The CUDA ordinal of the batches, or None for host memory.
    #[getter]
    fn device(&self) -> Option<usize> {
        self.device
    }
}

/// Opens a scan (see `gdscan.scan`) of one or more locations.
#[pyfunction]
#[pyo3(signature = (locations, columns = None, filter = None, device = None))]
pub(crate) fn _scan(
    py: Python<'_>,
    locations: Vec<String>,
    columns: Option<Vec<String>>,
    filter: Option<&str>,
    device: Option<usize>,
) -> PyResult<Scanner> {
    Scanner::open(py, &locations, columns, filter, device)
}

/// Reads every kept row group into one table (see `gdscan.read_parquet`).
#[pyfunction]
#[pyo3(signature = (locations, columns = None, filter = None, device = None))]
pub(crate) fn _read_parquet(
    py: Python<'_>,
    locations: Vec<String>,
    columns: Option<Vec<String>>,
    filter: Option<&str>,
    device: Option<usize>,
) -> PyResult<Table> {
    let scanner = Scanner::open(py, &locations, columns, filter, device)?;
    let mut device_batches = Vec::new();
    let mut host_batches = Vec::new();
    while let Some(b) = scanner.next_batch(py)? {
        match b {
            Batches::Device(b) => device_batches.extend(b),
            Batches::Host(b) => host_batches.extend(b),
        }
    }
    let batches = match device {
        Some(_) => Batches::Device(device_batches),
        None => Batches::Host(host_batches),
    };
    Ok(Table::new(scanner.schema(), batches, device))
}

/// Whether a CUDA driver with at least one device is present.
#[pyfunction]
pub(crate) fn cuda_available() -> bool {
    gdscan::cuda::driver::is_available()
        && gdscan::cuda::driver::device_count().is_ok_and(|n| n > 0)
}
