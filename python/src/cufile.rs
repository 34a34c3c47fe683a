//! `gdscan.CuFile`: KvikIO's file handle, on gdscan's engine. Every read
//! and write releases the GIL while the engine works.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use gdscan::engine::IoFuture as EngineFuture;
use gdscan::{FileHandle, OpenMode};
use pyo3::exceptions::{PyNotImplementedError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::buffer::{memory_of, PyMemory};
use crate::errors::to_py;

/// An open file read and written into host or device memory.
#[pyclass(module = "gdscan._gdscan", name = "CuFile")]
pub(crate) struct CuFile {
    handle: Option<Arc<FileHandle>>,
    path: String,
    flags: String,
}

/// The byte count of a call: `size`, or the whole buffer when None.
fn request_size(size: Option<usize>, memory: &PyMemory) -> PyResult<usize> {
    match size {
        None => Ok(memory.len()),
        Some(n) if n <= memory.len() => Ok(n),
        Some(n) => Err(PyValueError::new_err(format!(
            "size {n} is larger than the buffer ({} bytes)",
            memory.len()
        ))),
    }
}

/// Per-call task sizes are not offered (the engine's is set through
/// `gdscan.defaults`); asking for one is an error, never ignored.
fn no_task_size(task_size: Option<usize>) -> PyResult<()> {
    match task_size {
        None => Ok(()),
        Some(_) => Err(PyNotImplementedError::new_err(
            "a per-call task_size is not supported: use gdscan.defaults.set(\"task_size\", n)",
        )),
    }
}

impl CuFile {
    fn handle(&self) -> PyResult<&Arc<FileHandle>> {
        self.handle
            .as_ref()
            .ok_or_else(|| PyValueError::new_err(format!("I/O on closed file {}", self.path)))
    }

    fn start_read(
        &self,
        buf: &Bound<'_, PyAny>,
        size: Option<usize>,
        offset: u64,
    ) -> PyResult<IOFuture> {
        let handle = self.handle()?.clone();
        let memory = memory_of(buf, true)?;
        let size = request_size(size, &memory)?;
        let future = buf
            .py()
            .detach(|| handle.pread_async(memory, size, offset))
            .map_err(to_py)?;
        Ok(IOFuture::new(future))
    }

    fn start_write(
        &self,
        buf: &Bound<'_, PyAny>,
        size: Option<usize>,
        offset: u64,
    ) -> PyResult<IOFuture> {
        let handle = self.handle()?.clone();
        let memory = memory_of(buf, false)?;
        let size = request_size(size, &memory)?;
        let future = buf
            .py()
            .detach(|| handle.pwrite_async(memory, size, offset))
            .map_err(to_py)?;
        Ok(IOFuture::new(future))
    }
}

#[pymethods]
impl CuFile {
    /// Opens `file` (a path) with `flags` "r", "w", "r+" or "w+", on an
    /// engine with the settings of `gdscan.defaults`.
    #[new]
    #[pyo3(signature = (file, flags = "r"))]
    fn new(py: Python<'_>, file: std::path::PathBuf, flags: &str) -> PyResult<CuFile> {
        let mode: OpenMode = flags.parse().map_err(to_py)?;
        let engine = crate::defaults::engine()?;
        let path = file.display().to_string();
        let handle = py
            .detach(|| FileHandle::open_with(engine, &file, mode))
            .map_err(to_py)?;
        Ok(CuFile {
            handle: Some(Arc::new(handle)),
            path,
            flags: flags.to_string(),
        })
    }

    /// Closes the file (pending futures keep it open until they finish).
    fn close(&mut self) {
        self.handle = None;
    }

    /// Whether the file is closed.
    #[getter]
    fn closed(&self) -> bool {
        self.handle.is_none()
    }

    /// The open flags as given.
    fn open_flags(&self) -> String {
        self.flags.clone()
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    #[pyo3(signature = (*_args))]
    fn __exit__(&mut self, _args: &Bound<'_, pyo3::types::PyTuple>) -> bool {
        self.close();
        false
    }

    /// The file's size in bytes.
    fn nbytes(&self, py: Python<'_>) -> PyResult<u64> {
        let handle = self.handle()?.clone();
        py.detach(|| handle.file_size()).map_err(to_py)
    }

    /// Reads `size` bytes (default: the buffer's size) at `file_offset`
    /// into `buf` and returns the bytes read (fewer at the end of the file).
    #[pyo3(signature = (buf, size = None, file_offset = 0, task_size = None))]
    fn read(
        &self,
        py: Python<'_>,
        buf: &Bound<'_, PyAny>,
        size: Option<usize>,
        file_offset: u64,
        task_size: Option<usize>,
    ) -> PyResult<usize> {
        no_task_size(task_size)?;
        self.start_read(buf, size, file_offset)?.wait(py)
    }

    /// Starts a read and returns its `IOFuture` at once.
    #[pyo3(signature = (buf, size = None, file_offset = 0, task_size = None))]
    fn pread(
        &self,
        buf: &Bound<'_, PyAny>,
        size: Option<usize>,
        file_offset: u64,
        task_size: Option<usize>,
    ) -> PyResult<IOFuture> {
        no_task_size(task_size)?;
        self.start_read(buf, size, file_offset)
    }

    /// Writes `size` bytes (default: the buffer's size) of `buf` at
    /// `file_offset`; returns the bytes written.
    #[pyo3(signature = (buf, size = None, file_offset = 0, task_size = None))]
    fn write(
        &self,
        py: Python<'_>,
        buf: &Bound<'_, PyAny>,
        size: Option<usize>,
        file_offset: u64,
        task_size: Option<usize>,
    ) -> PyResult<usize> {
        no_task_size(task_size)?;
        self.start_write(buf, size, file_offset)?.wait(py)
    }

    /// Starts a write and returns its `IOFuture` at once.
    #[pyo3(signature = (buf, size = None, file_offset = 0, task_size = None))]
    fn pwrite(
        &self,
        buf: &Bound<'_, PyAny>,
        size: Option<usize>,
        file_offset: u64,
        task_size: Option<usize>,
    ) -> PyResult<IOFuture> {
        no_task_size(task_size)?;
        self.start_write(buf, size, file_offset)
    }

    /// KvikIO's direct cuFile read into device memory at `dev_offset`:
    /// here one engine request (stage 1 still picks cuFile or POSIX and
    /// says why in `stats()`); device buffers only, as in KvikIO.
    #[pyo3(signature = (buf, size = None, file_offset = 0, dev_offset = 0))]
    fn raw_read(
        &self,
        py: Python<'_>,
        buf: &Bound<'_, PyAny>,
        size: Option<usize>,
        file_offset: u64,
        dev_offset: usize,
    ) -> PyResult<usize> {
        let handle = self.handle()?.clone();
        let mut memory = memory_of(buf, true)?.skip(dev_offset)?;
        if !memory.is_device() {
            return Err(PyValueError::new_err(
                "raw_read takes device memory (an object with __cuda_array_interface__)",
            ));
        }
        let size = request_size(size, &memory)?;
        py.detach(|| handle.pread(&mut memory, size, file_offset))
            .map_err(to_py)
    }

    /// KvikIO's direct cuFile write from device memory at `dev_offset`.
    #[pyo3(signature = (buf, size = None, file_offset = 0, dev_offset = 0))]
    fn raw_write(
        &self,
        py: Python<'_>,
        buf: &Bound<'_, PyAny>,
        size: Option<usize>,
        file_offset: u64,
        dev_offset: usize,
    ) -> PyResult<usize> {
        let handle = self.handle()?.clone();
        let memory = memory_of(buf, false)?.skip(dev_offset)?;
        if !memory.is_device() {
            return Err(PyValueError::new_err(
                "raw_write takes device memory (an object with __cuda_array_interface__)",
            ));
        }
        let size = request_size(size, &memory)?;
        py.detach(|| handle.pwrite(&memory, size, file_offset))
            .map_err(to_py)
    }

    /// The path report as a dict: stage 1 (route and reason), stage 2
    /// (what cuFile does), the bytes per path and the verdict.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let handle = self.handle()?.clone();
        let json = py.detach(|| {
            let source = gdscan::store::LocalSource::new(handle)?;
            let report = gdscan::report::build(&source, None);
            Ok::<_, gdscan::Error>(serde_json::to_string(&report))
        });
        let json = json
            .map_err(to_py)?
            .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
        let loads = py.import("json")?.getattr("loads")?;
        Ok(loads.call1((json,))?.cast_into::<PyDict>()?)
    }

    fn __repr__(&self) -> String {
        format!(
            "gdscan.CuFile({:?}, {:?}{})",
            self.path,
            self.flags,
            if self.handle.is_none() {
                ", closed"
            } else {
                ""
            }
        )
    }
}

/// The future of `pread`/`pwrite`: `get()` waits (without the GIL) and
/// returns the bytes moved; `done()` says whether it finished.
#[pyclass(module = "gdscan._gdscan", name = "IOFuture")]
pub(crate) struct IOFuture {
    future: Option<EngineFuture<PyMemory>>,
    outcome: Option<PyResult<usize>>,
}

impl IOFuture {
    fn new(future: EngineFuture<PyMemory>) -> IOFuture {
        IOFuture {
            future: Some(future),
            outcome: None,
        }
    }

    fn settle(&mut self, result: Result<(PyMemory, usize), gdscan::engine::IoError>) {
        self.future = None;
        // The buffer (and its hold on the Python object) is dropped here.
        self.outcome = Some(result.map(|(_buffer, n)| n).map_err(to_py));
    }

    fn wait(&mut self, py: Python<'_>) -> PyResult<usize> {
        if let Some(future) = self.future.take() {
            let result = py.detach(|| futures::executor::block_on(future));
            self.settle(result);
        }
        match &self.outcome {
            Some(Ok(n)) => Ok(*n),
            Some(Err(e)) => Err(e.clone_ref(py)),
            None => unreachable!("settled above"),
        }
    }
}

#[pymethods]
impl IOFuture {
    /// Waits for the request; returns the bytes read or written.
    fn get(&mut self, py: Python<'_>) -> PyResult<usize> {
        self.wait(py)
    }

    /// Whether the request has finished (does not wait).
    fn done(&mut self) -> bool {
        if let Some(future) = self.future.as_mut() {
            let mut cx = Context::from_waker(futures::task::noop_waker_ref());
            if let Poll::Ready(result) = Pin::new(future).poll(&mut cx) {
                self.settle(result);
            }
        }
        self.future.is_none()
    }
}
