//! `read_parquet` and `scan`: a file's row groups decoded on the GPU (the
//! crate's decoder) or on the CPU (arrow-rs over gdscan's reader), batch by
//! batch, without the GIL.

use std::sync::{Arc, Mutex};

use arrow::array::RecordBatch;
use arrow::datatypes::{Schema, SchemaRef};
use futures::StreamExt;
use gdscan::cuda::Devices;
use gdscan::decode::array::DeviceBatch;
use gdscan::decode::scan::{decode, decode_plan, DecodeOptions, DecodeStream, FilterMode};
use gdscan::parquet::{
    load_metadata, GdsParquetReader, Predicate, Projection, ScanError, ScanRequest,
};
use parquet::arrow::async_reader::ParquetRecordBatchStream;
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

use crate::dnf::TaggedTerm;
use crate::errors::{array_to_py, decode_to_py, to_py, ParquetError};
use crate::host::{host_stream, metadata_options, parquet_error};
use crate::location::source_of;
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

/// The filter of a read: `filter`'s text or `filters`' DNF (not both).
pub(crate) enum Filter<'py> {
    /// No filter.
    None,
    /// gdscan's predicate text.
    Text(String),
    /// pyarrow's DNF, tagged by `gdscan/_filters.py`.
    Dnf(Vec<Vec<TaggedTerm<'py>>>),
}

impl<'py> Filter<'py> {
    /// The filter of `filter=` and `filters=` (a TypeError for both).
    pub(crate) fn of(
        filter: Option<String>,
        filters: Option<Vec<Vec<TaggedTerm<'py>>>>,
    ) -> PyResult<Filter<'py>> {
        match (filter, filters) {
            (Some(_), Some(_)) => Err(PyTypeError::new_err(
                "pass filter= (gdscan's predicate text) or filters= (pyarrow's DNF), not both",
            )),
            (Some(text), None) => Ok(Filter::Text(text)),
            (None, Some(dnf)) => Ok(Filter::Dnf(dnf)),
            (None, None) => Ok(Filter::None),
        }
    }

    /// The predicate, if any.
    fn predicate(self) -> PyResult<Option<Predicate>> {
        match self {
            Filter::None => Ok(None),
            Filter::Text(text) => text.parse::<Predicate>().map(Some).map_err(|e| {
                ParquetError::new_err(format!("filter {text:?}: {}", crate::errors::chain(&e)))
            }),
            Filter::Dnf(dnf) => crate::dnf::predicate(dnf).map(Some),
        }
    }
}

fn request(columns: Option<Vec<String>>, filter: Filter<'_>) -> PyResult<ScanRequest> {
    let predicate = filter.predicate()?;
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

impl Scanner {
    /// Plans the scan of every location and opens their sources (no row
    /// group read yet). Every file must decode to the same schema.
    pub(crate) fn open(
        py: Python<'_>,
        locations: &[String],
        columns: Option<Vec<String>>,
        filter: Filter<'_>,
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
                        // Exactly the rows where the predicate is TRUE.
                        filter: FilterMode::Exact,
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
                        // The predicate's columns too: the GPU filters on them.
                        let plan = decode_plan(&metadata, &request, &options)
                            .map_err(|e| to_py(e.in_file(location)))?;
                        inputs.push(gdscan::decode::scan::DecodeInput {
                            source,
                            metadata,
                            plan: Arc::new(plan),
                        });
                    }
                    decode(inputs, request, options).map_err(decode_to_py)
                })?;
                // With a filter, the batches hold the projected columns only.
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
        // The next error or non-empty batch (a row group that keeps no row
        // of the filter yields nothing).
        Inner::Device(stream) => match stream
            .by_ref()
            .find(|b| !b.as_ref().is_ok_and(|b| b.num_rows() == 0))
        {
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
                    // A row group the filter keeps no row of yields nothing.
                    if batch.num_rows() == 0 {
                        continue;
                    }
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
#[pyo3(signature = (locations, columns = None, filter = None, device = None, filters = None))]
pub(crate) fn _scan<'py>(
    py: Python<'py>,
    locations: Vec<String>,
    columns: Option<Vec<String>>,
    filter: Option<String>,
    device: Option<usize>,
    filters: Option<Vec<Vec<TaggedTerm<'py>>>>,
) -> PyResult<Scanner> {
    let filter = Filter::of(filter, filters)?;
    Scanner::open(py, &locations, columns, filter, device)
}

/// Reads every kept row group into one table (see `gdscan.read_parquet`).
#[pyfunction]
#[pyo3(signature = (locations, columns = None, filter = None, device = None, filters = None))]
pub(crate) fn _read_parquet<'py>(
    py: Python<'py>,
    locations: Vec<String>,
    columns: Option<Vec<String>>,
    filter: Option<String>,
    device: Option<usize>,
    filters: Option<Vec<Vec<TaggedTerm<'py>>>>,
) -> PyResult<Table> {
    let filter = Filter::of(filter, filters)?;
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
