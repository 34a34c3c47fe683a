//! `Table` and `Column`: decoded batches in GPU memory (or host memory),
//! exported through the Arrow PyCapsule interface (`arrow_schema`,
//! `arrow_array`, `arrow_array_stream`, `arrow_device_array`,
//! `arrow_device_array_stream`), `__cuda_array_interface__` and DLPack.

use std::convert::Infallible;
use std::ffi::CString;
use std::sync::Arc;

use arrow::array::{Array, ArrayRef, RecordBatch, RecordBatchIterator, StructArray};
use arrow::datatypes::{DataType, SchemaRef};
use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};
use arrow::ffi_stream::FFI_ArrowArrayStream;
use gdscan::cuda::{Device, DevicePool, Stream};
use gdscan::decode::array::{ArrowDeviceType, DeviceBatch, DeviceBytes, MemoryLocation};
use gdscan::decode::ffi::{export_device_array, export_device_stream, ArrowDeviceArray};
use pyo3::exceptions::{PyBufferError, PyIndexError, PyKeyError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict, PyTuple};

use crate::dlpack;
use crate::errors::{array_to_py, to_py};

/// The batches of a table: decoded on the GPU, or on the CPU by arrow-rs.
#[derive(Clone)]
pub(crate) enum Batches {
    /// Device batches (one per row group).
    Device(Vec<DeviceBatch>),
    /// Host batches (one per row group).
    Host(Vec<RecordBatch>),
}

/// A table of decoded row groups.
#[pyclass(module = "gdscan._gdscan", name = "Table", frozen)]
pub(crate) struct Table {
    schema: SchemaRef,
    batches: Batches,
    device: Option<usize>,
}

impl Table {
    pub(crate) fn new(schema: SchemaRef, batches: Batches, device: Option<usize>) -> Table {
        Table {
            schema,
            batches,
            device,
        }
    }

    fn batch_count(&self) -> usize {
        match &self.batches {
            Batches::Device(b) => b.len(),
            Batches::Host(b) => b.len(),
        }
    }

    fn column_index(&self, key: &Bound<'_, PyAny>) -> PyResult<usize> {
        if let Ok(i) = key.extract::<usize>() {
            if i < self.schema.fields().len() {
                return Ok(i);
            }
            return Err(PyIndexError::new_err(format!(
                "column {i} of a table of {} columns",
                self.schema.fields().len()
            )));
        }
        let name: String = key.extract()?;
        self.schema
            .index_of(&name)
            .map_err(|_| PyKeyError::new_err(format!("no column {name:?}")))
    }

    /// The host batches, copied from the device when needed (waits).
    fn host_batches(&self, py: Python<'_>) -> PyResult<Vec<RecordBatch>> {
        match &self.batches {
            Batches::Host(b) => Ok(b.clone()),
            Batches::Device(b) => py
                .detach(|| {
                    b.iter()
                        .map(DeviceBatch::to_host)
                        .collect::<Result<Vec<_>, _>>()
                })
                .map_err(array_to_py),
        }
    }
}

fn schema_capsule<'py>(py: Python<'py>, schema: &SchemaRef) -> PyResult<Bound<'py, PyCapsule>> {
    let ffi = FFI_ArrowSchema::try_from(schema.as_ref())
        .map_err(|e| PyTypeError::new_err(format!("schema export: {e}")))?;
    PyCapsule::new(py, ffi, Some(CString::from(c"arrow_schema")))
}

fn host_array(batch: &RecordBatch) -> FFI_ArrowArray {
    FFI_ArrowArray::new(&StructArray::from(batch.clone()).into_data())
}

/// One batch of the table (concatenating host batches when several).
fn single_host_batch(schema: &SchemaRef, batches: &[RecordBatch]) -> PyResult<RecordBatch> {
    if batches.len() == 1 {
        return Ok(batches[0].clone());
    }
    arrow::compute::concat_batches(schema, batches)
        .map_err(|e| PyValueError::new_err(format!("concatenating batches: {e}")))
}

#[pymethods]
impl Table {
    /// Rows in the table.
    #[getter]
    fn num_rows(&self) -> usize {
        match &self.batches {
            Batches::Device(b) => b.iter().map(DeviceBatch::num_rows).sum(),
            Batches::Host(b) => b.iter().map(RecordBatch::num_rows).sum(),
        }
    }

    /// Columns in the table.
    #[getter]
    fn num_columns(&self) -> usize {
        self.schema.fields().len()
    }

    /// The column names.
    #[getter]
    fn column_names(&self) -> Vec<String> {
        self.schema
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }

    /// The CUDA ordinal of the columns, or None for host memory.
    #[getter]
    fn device(&self) -> Option<usize> {
        self.device
    }

    /// Batches (row groups) in the table.
    #[getter]
    fn num_batches(&self) -> usize {
        self.batch_count()
    }

    /// Batch `i` as a table of its own (no copy).
    fn batch(&self, i: usize) -> PyResult<Table> {
        let batches = match &self.batches {
            Batches::Device(b) => b.get(i).map(|b| Batches::Device(vec![b.clone()])),
            Batches::Host(b) => b.get(i).map(|b| Batches::Host(vec![b.clone()])),
        }
        .ok_or_else(|| PyIndexError::new_err(format!("batch {i} of {}", self.batch_count())))?;
        Ok(Table::new(self.schema.clone(), batches, self.device))
    }

    /// The table with every Map column (at any depth) as the list of its
    /// key-value structs over the same memory (no copy): cuDF's form of a
    /// map, which pylibcudf's Arrow import needs (it refuses Map).
    fn maps_as_lists(&self) -> PyResult<Table> {
        let schema = gdscan::decode::array::schema_as_lists(&self.schema);
        let batches = match &self.batches {
            Batches::Device(b) => Batches::Device(
                b.iter()
                    .map(DeviceBatch::maps_as_lists)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(array_to_py)?,
            ),
            Batches::Host(b) => Batches::Host(
                b.iter()
                    .map(gdscan::decode::array::host_maps_as_lists)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(array_to_py)?,
            ),
        };
        Ok(Table::new(schema, batches, self.device))
    }

    /// A column by name or index: its values as one buffer (a view of the
    /// batch's memory for a one-batch table; one device or host copy
    /// joining the batches otherwise), with `__cuda_array_interface__`
    /// (device) and `__dlpack__`. Waits until the values are written.
    fn column(&self, py: Python<'_>, key: &Bound<'_, PyAny>) -> PyResult<Column> {
        let index = self.column_index(key)?;
        let field = self.schema.field(index);
        let name = field.name().clone();
        let data_type = field.data_type().clone();
        match &self.batches {
            Batches::Host(batches) => {
                let arrays: Vec<&dyn Array> =
                    batches.iter().map(|b| b.column(index).as_ref()).collect();
                let array: ArrayRef = if arrays.len() == 1 {
                    batches[0].column(index).clone()
                } else if arrays.is_empty() {
                    arrow::array::new_empty_array(&data_type)
                } else {
                    arrow::compute::concat(&arrays)
                        .map_err(|e| PyValueError::new_err(format!("column {name}: {e}")))?
                };
                Column::host(name, array)
            }
            Batches::Device(batches) => {
                let ordinal = self.device.unwrap_or(0);
                py.detach(|| Column::device(name, data_type, ordinal, index, batches))
            }
        }
    }

    /// The schema as an `arrow_schema` capsule.
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        schema_capsule(py, &self.schema)
    }

    /// The table as one Arrow C device array: `(arrow_schema,
    /// arrow_device_array)` capsules. A device table must hold one batch
    /// (use `__arrow_c_device_stream__` or `batch(i)` otherwise); a host
    /// table's batches are joined.
    #[pyo3(signature = (requested_schema = None, **kwargs))]
    fn __arrow_c_device_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
        kwargs: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = (requested_schema, kwargs);
        let schema = schema_capsule(py, &self.schema)?;
        let array = match &self.batches {
            Batches::Device(b) => {
                if b.len() != 1 {
                    return Err(PyValueError::new_err(format!(
                        "a device table of {} batches is not one array: use __arrow_c_device_stream__ or batch(i)",
                        b.len()
                    )));
                }
                export_device_array(&b[0])
            }
            Batches::Host(b) => ArrowDeviceArray {
                array: host_array(&single_host_batch(&self.schema, b)?),
                device_id: -1,
                device_type: ArrowDeviceType::CPU,
                sync_event: std::ptr::null_mut(),
                reserved: [0; 3],
            },
        };
        let array = PyCapsule::new(py, array, Some(CString::from(c"arrow_device_array")))?;
        PyTuple::new(py, [schema.into_any(), array.into_any()])
    }

    /// The batches as an `arrow_device_array_stream` capsule (a host
    /// table's batches are copied into the stream's buffers; flat types).
    #[pyo3(signature = (requested_schema = None, **kwargs))]
    fn __arrow_c_device_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
        kwargs: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = (requested_schema, kwargs);
        let stream = match &self.batches {
            Batches::Device(b) => export_device_stream(
                self.schema.clone(),
                ArrowDeviceType::CUDA,
                b.clone().into_iter().map(Ok::<_, Infallible>),
            ),
            Batches::Host(b) => export_device_stream(
                self.schema.clone(),
                ArrowDeviceType::CPU,
                b.clone().into_iter().map(|b| DeviceBatch::from_host(&b)),
            ),
        };
        PyCapsule::new(
            py,
            stream,
            Some(CString::from(c"arrow_device_array_stream")),
        )
    }

    /// Host tables: `(arrow_schema, arrow_array)` capsules of the joined
    /// batches. Device tables: an error (use `to_arrow()` to copy back).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyTuple>> {
        let _ = requested_schema;
        let Batches::Host(b) = &self.batches else {
            return Err(PyTypeError::new_err(
                "a device table has no host array: use to_arrow() to copy it back",
            ));
        };
        let schema = schema_capsule(py, &self.schema)?;
        let array = host_array(&single_host_batch(&self.schema, b)?);
        let array = PyCapsule::new(py, array, Some(CString::from(c"arrow_array")))?;
        PyTuple::new(py, [schema.into_any(), array.into_any()])
    }

    /// Host tables: an `arrow_array_stream` capsule of the batches.
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        if let Batches::Device(_) = &self.batches {
            return Err(PyTypeError::new_err(
                "a device table has no host stream: use to_arrow() to copy it back",
            ));
        }
        self._host_stream(py)
    }

    /// An `arrow_array_stream` capsule of the batches in host memory,
    /// copied back from the device when they are there (for `to_arrow()`).
    fn _host_stream<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        let batches = self.host_batches(py)?;
        let reader = RecordBatchIterator::new(batches.into_iter().map(Ok), self.schema.clone());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        PyCapsule::new(py, stream, Some(CString::from(c"arrow_array_stream")))
    }

    /// Copies the table into a `pyarrow.Table` (from the GPU when the
    /// columns are there; the copy runs without the GIL).
    fn to_arrow<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let capsule = self._host_stream(py)?;
        let reader = py
            .import("pyarrow")?
            .getattr("RecordBatchReader")?
            .call_method1("_import_from_c_capsule", (capsule,))?;
        reader.call_method0("read_all")
    }

    fn __len__(&self) -> usize {
        self.num_rows()
    }

    fn __repr__(&self) -> String {
        format!(
            "gdscan.Table({} rows, {} columns, {} batches, {})",
            self.num_rows(),
            self.num_columns(),
            self.batch_count(),
            match self.device {
                Some(d) => format!("GPU {d}"),
                None => "host memory".to_string(),
            }
        )
    }
}

/// What keeps a column's values alive.
enum Keep {
    Device(#[allow(dead_code)] DeviceBytes),
    Host(#[allow(dead_code)] ArrayRef),
}

/// One column's values in one buffer.
#[pyclass(module = "gdscan._gdscan", name = "Column", frozen)]
pub(crate) struct Column {
    name: String,
    data_type: DataType,
    len: usize,
    null_count: usize,
    location: MemoryLocation,
    /// Address of the first value.
    address: u64,
    keep: Arc<Keep>,
}

/// The NumPy typestr and DLPack type of a fixed-width type, or None.
fn element(data_type: &DataType) -> Option<(&'static str, dlpack::DLDataType, usize)> {
    let t = |s, code, bits: u8| {
        Some((
            s,
            dlpack::DLDataType {
                code,
                bits,
                lanes: 1,
            },
            bits as usize / 8,
        ))
    };
    match data_type {
        DataType::Int8 => t("|i1", 0, 8),
        DataType::Int16 => t("<i2", 0, 16),
        DataType::Int32 | DataType::Date32 | DataType::Time32(_) => t("<i4", 0, 32),
        DataType::Int64
        | DataType::Date64
        | DataType::Time64(_)
        | DataType::Timestamp(_, _)
        | DataType::Duration(_) => t("<i8", 0, 64),
        DataType::UInt8 => t("|u1", 1, 8),
        DataType::UInt16 => t("<u2", 1, 16),
        DataType::UInt32 => t("<u4", 1, 32),
        DataType::UInt64 => t("<u8", 1, 64),
        DataType::Float16 => t("<f2", 2, 16),
        DataType::Float32 => t("<f4", 2, 32),
        DataType::Float64 => t("<f8", 2, 64),
        _ => None,
    }
}

impl Column {
    fn host(name: String, array: ArrayRef) -> PyResult<Column> {
        let data_type = array.data_type().clone();
        let data = array.to_data();
        let (address, len) = match (element(&data_type), data.buffers().first()) {
            (Some((_, _, size)), Some(values)) => (
                values.as_ptr() as u64 + (data.offset() * size) as u64,
                data.len(),
            ),
            _ => (0, data.len()),
        };
        Ok(Column {
            name,
            data_type,
            len,
            null_count: data.null_count(),
            location: MemoryLocation::CPU,
            address,
            keep: Arc::new(Keep::Host(array)),
        })
    }

    /// Column `index` of device `batches`: a view of the one batch's
    /// values, or a device copy joining several (fixed-width types).
    fn device(
        name: String,
        data_type: DataType,
        ordinal: usize,
        index: usize,
        batches: &[DeviceBatch],
    ) -> PyResult<Column> {
        for b in batches {
            b.wait().map_err(array_to_py)?;
        }
        let columns: Vec<_> = batches.iter().filter_map(|b| b.column(index)).collect();
        let len = columns.iter().map(|c| c.len()).sum();
        let null_count = columns.iter().map(|c| c.null_count().unwrap_or(0)).sum();
        let location = MemoryLocation::cuda(ordinal);
        let Some((_, _, size)) = element(&data_type) else {
            // No single buffer to point at: the column still reports its
            // type, length and nulls; its exports say why they refuse.
            return Ok(Column {
                name,
                data_type,
                len,
                null_count,
                location,
                address: 0,
                keep: Arc::new(Keep::Host(arrow::array::new_empty_array(&DataType::Null))),
            });
        };
        if columns.len() == 1 {
            let values = columns[0].buffers()[0].clone();
            return Ok(Column {
                name,
                data_type,
                len,
                null_count,
                location,
                address: values.address() + (columns[0].offset() * size) as u64,
                keep: Arc::new(Keep::Device(values)),
            });
        }
        let join = || -> gdscan::Result<DeviceBytes> {
            let device = Device::get(ordinal)?;
            let pool = DevicePool::new(device, 0);
            let out = pool.allocate((len * size).max(1))?;
            let stream = Stream::new(device)?;
            let mut at = 0u64;
            for c in &columns {
                let bytes = c.len() * size;
                if bytes > 0 {
                    let src = c.buffers()[0].address() + (c.offset() * size) as u64;
                    // SAFETY: `out` holds `len * size` bytes, the sources are
                    // the batches' live buffers; synchronised below, before
                    // either could be freed.
                    unsafe { stream.copy_device_to_device(out.device_ptr() + at, src, bytes)? };
                }
                at += bytes as u64;
            }
            stream.synchronize()?;
            Ok(DeviceBytes::from_pooled(out))
        };
        let values = join().map_err(to_py)?;
        Ok(Column {
            name,
            data_type,
            len,
            null_count,
            location,
            address: values.address(),
            keep: Arc::new(Keep::Device(values)),
        })
    }

    /// The element type, or why the values cannot be exported as an array.
    fn exportable(&self) -> PyResult<(&'static str, dlpack::DLDataType)> {
        let Some((typestr, dtype, _)) = element(&self.data_type) else {
            return Err(PyTypeError::new_err(format!(
                "column {}: {} is not a fixed-width numeric type (use the Arrow exports)",
                self.name, self.data_type
            )));
        };
        if self.null_count > 0 {
            return Err(PyTypeError::new_err(format!(
                "column {} has {} nulls, which an array without a mask cannot show (use the Arrow exports)",
                self.name, self.null_count
            )));
        }
        Ok((typestr, dtype))
    }
}

#[pymethods]
impl Column {
    /// The column's name.
    #[getter]
    fn name(&self) -> String {
        self.name.clone()
    }

    /// The Arrow type, as arrow-rs writes it.
    #[getter]
    fn arrow_type(&self) -> String {
        self.data_type.to_string()
    }

    /// Nulls in the column.
    #[getter]
    fn null_count(&self) -> usize {
        self.null_count
    }

    fn __len__(&self) -> usize {
        self.len
    }

    /// CUDA Array Interface v3 (device columns of fixed-width types without
    /// nulls); the values are ready, so no stream is given.
    #[getter]
    fn __cuda_array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        if self.location.cuda_ordinal().is_none() {
            return Err(pyo3::exceptions::PyAttributeError::new_err(
                "a host column has no __cuda_array_interface__",
            ));
        }
        let (typestr, _) = self.exportable()?;
        let d = PyDict::new(py);
        d.set_item("shape", (self.len,))?;
        d.set_item("typestr", typestr)?;
        d.set_item("data", (self.address, false))?;
        d.set_item("strides", py.None())?;
        d.set_item("version", 3)?;
        d.set_item("stream", py.None())?;
        Ok(d)
    }

    /// DLPack's device: `(2, ordinal)` for CUDA, `(1, 0)` for the host.
    fn __dlpack_device__(&self) -> (i32, i32) {
        match self.location.cuda_ordinal() {
            Some(o) => (2, o as i32),
            None => (1, 0),
        }
    }

    /// A `dltensor` capsule over the values (no copy). The values are
    /// ready, so the consumer's `stream` needs no wait.
    #[pyo3(signature = (stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__(
        &self,
        py: Python<'_>,
        stream: Option<Bound<'_, PyAny>>,
        max_version: Option<Bound<'_, PyAny>>,
        dl_device: Option<(i32, i32)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let _ = (stream, max_version);
        let here = self.__dlpack_device__();
        if dl_device.is_some_and(|d| d != here) {
            return Err(PyBufferError::new_err(format!(
                "the column is on DLPack device {here:?}, not {dl_device:?}"
            )));
        }
        if copy == Some(true) {
            return Err(PyBufferError::new_err(
                "gdscan exports views only (copy=True)",
            ));
        }
        let (_, dtype) = self.exportable()?;
        let device = dlpack::DLDevice {
            device_type: here.0,
            device_id: here.1,
        };
        dlpack::capsule(
            py,
            self.address,
            self.len,
            dtype,
            device,
            Box::new(self.keep.clone()),
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "gdscan.Column({:?}, {}, {} values, {})",
            self.name, self.data_type, self.len, self.location
        )
    }
}
