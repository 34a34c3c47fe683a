//! Python objects as memory the engine reads into or writes from: anything
//! exporting `__cuda_array_interface__` (CuPy, PyTorch, Numba: device
//! memory) or the buffer protocol (NumPy, bytearray, bytes: host memory).

use std::ffi::c_int;

use gdscan::cuda::Device;
use gdscan::engine::{IoBuf, IoBufMut, Memory};
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::errors::to_py;

/// A Python object's memory, with what keeps it alive and exported: the
/// object itself (device memory) or its held `Py_buffer` (host memory).
pub(crate) struct PyMemory {
    memory: Memory,
    _owner: Owner,
}

enum Owner {
    Cuda(#[allow(dead_code)] Py<PyAny>),
    Buffer(#[allow(dead_code)] HeldBuffer),
}

/// A `Py_buffer` obtained with `PyObject_GetBuffer`, released (under the
/// GIL) on drop.
struct HeldBuffer(Box<ffi::Py_buffer>);

// SAFETY: the view is only released, under the GIL, in `drop`; the memory
// it describes is what the engine uses, and the exporter keeps it in place
// while the view is held.
unsafe impl Send for HeldBuffer {}
// SAFETY: nothing reads or writes the view through a shared reference.
unsafe impl Sync for HeldBuffer {}

impl Drop for HeldBuffer {
    fn drop(&mut self) {
        Python::attach(|_| {
            // SAFETY: the view was filled by a successful PyObject_GetBuffer
            // and is released exactly once, here.
            unsafe { ffi::PyBuffer_Release(&mut *self.0) }
        });
    }
}

impl PyMemory {
    /// The memory's length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.memory.len()
    }

    /// Whether the memory is on a device.
    pub(crate) fn is_device(&self) -> bool {
        self.memory.is_device()
    }

    /// The part of the memory from `offset` on (KvikIO's `dev_offset`).
    pub(crate) fn skip(mut self, offset: usize) -> PyResult<PyMemory> {
        if offset > self.memory.len() {
            return Err(PyValueError::new_err(format!(
                "offset {offset} is past the end of a buffer of {} bytes",
                self.memory.len()
            )));
        }
        self.memory = self.memory.slice(offset, self.memory.len() - offset);
        Ok(self)
    }
}

// SAFETY: the range is the object's exported memory, kept alive and in
// place by `_owner` (a held buffer view, or a reference to the device
// array) for as long as the value lives; the caller does not touch it while
// a request owns it.
unsafe impl IoBufMut for PyMemory {
    fn io_memory_mut(&mut self) -> Memory {
        self.memory
    }
}

// SAFETY: as above.
unsafe impl IoBuf for PyMemory {
    fn io_memory(&self) -> Memory {
        self.memory
    }
}

/// The memory of `obj`, for a read (`writable`) or a write.
pub(crate) fn memory_of(obj: &Bound<'_, PyAny>, writable: bool) -> PyResult<PyMemory> {
    if let Ok(cai) = obj.getattr("__cuda_array_interface__") {
        let cai = cai
            .cast_into::<PyDict>()
            .map_err(|_| PyTypeError::new_err("__cuda_array_interface__ is not a dict"))?;
        return cuda_memory(obj, &cai, writable);
    }
    host_memory(obj, writable)
}

/// Device memory described by a `__cuda_array_interface__` dict.
fn cuda_memory(
    obj: &Bound<'_, PyAny>,
    cai: &Bound<'_, PyDict>,
    writable: bool,
) -> PyResult<PyMemory> {
    let item = |key: &str| -> PyResult<Bound<'_, PyAny>> {
        cai.get_item(key)?
            .ok_or_else(|| PyTypeError::new_err(format!("__cuda_array_interface__ has no '{key}'")))
    };
    let data = item("data")?.cast_into::<PyTuple>()?;
    let ptr: u64 = data.get_item(0)?.extract()?;
    let readonly: bool = data.get_item(1)?.extract()?;
    if writable && readonly {
        return Err(PyBufferError::new_err("the device array is read-only"));
    }
    let shape: Vec<usize> = item("shape")?.extract()?;
    let typestr: String = item("typestr")?.extract()?;
    let itemsize: usize = typestr
        .get(2..)
        .and_then(|s| s.parse().ok())
        .filter(|&n: &usize| n > 0)
        .ok_or_else(|| PyTypeError::new_err(format!("unknown typestr {typestr:?}")))?;
    if let Some(strides) = cai.get_item("strides")? {
        if !strides.is_none() {
            let strides: Vec<isize> = strides.extract()?;
            let mut expected = itemsize as isize;
            for (dim, stride) in shape.iter().zip(&strides).rev() {
                if *dim > 1 && *stride != expected {
                    return Err(PyBufferError::new_err(
                        "the device array is not C-contiguous",
                    ));
                }
                expected *= *dim as isize;
            }
        }
    }
    let len = shape.iter().product::<usize>() * itemsize;
    let ordinal = device_ordinal(obj)?;
    let device = Device::get(ordinal).map_err(|e| to_py(e))?;
    Ok(PyMemory {
        memory: Memory::Device { device, ptr, len },
        _owner: Owner::Cuda(obj.clone().unbind()),
    })
}

/// The CUDA ordinal of a device array: CuPy's `.device.id`, PyTorch's
/// `.get_device()`, Numba's `.gpu_data` context; 0 on a one-GPU machine.
fn device_ordinal(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    if let Ok(device) = obj.getattr("device") {
        if let Ok(id) = device.getattr("id").and_then(|i| i.extract::<usize>()) {
            return Ok(id);
        }
        if let Ok(index) = device.getattr("index").and_then(|i| i.extract::<usize>()) {
            return Ok(index);
        }
    }
    if let Ok(n) = obj
        .call_method0("get_device")
        .and_then(|i| i.extract::<usize>())
    {
        return Ok(n);
    }
    let count = gdscan::cuda::driver::device_count().map_err(|e| to_py(e))?;
    if count == 1 {
        return Ok(0);
    }
    Err(PyTypeError::new_err(
        "cannot tell which GPU the device array is on (no .device.id or .get_device())",
    ))
}

/// Host memory through the buffer protocol (C-contiguous; writable for reads).
fn host_memory(obj: &Bound<'_, PyAny>, writable: bool) -> PyResult<PyMemory> {
    let mut view: Box<ffi::Py_buffer> = Box::new(
        // SAFETY: Py_buffer is plain data; PyObject_GetBuffer fills it.
        unsafe { std::mem::zeroed() },
    );
    let mut flags: c_int = ffi::PyBUF_C_CONTIGUOUS;
    if writable {
        flags |= ffi::PyBUF_WRITABLE;
    }
    // SAFETY: `obj` is a live object and `view` a zeroed Py_buffer we own.
    let status = unsafe { ffi::PyObject_GetBuffer(obj.as_ptr(), &mut *view, flags) };
    if status != 0 {
        let why = PyErr::take(obj.py());
        return Err(PyTypeError::new_err(format!(
            "expected an object with __cuda_array_interface__ or a {}C-contiguous buffer{}",
            if writable { "writable " } else { "" },
            why.map(|e| format!(" ({e})")).unwrap_or_default()
        )));
    }
    let memory = Memory::Host {
        ptr: view.buf.cast(),
        len: view.len as usize,
    };
    Ok(PyMemory {
        memory,
        _owner: Owner::Buffer(HeldBuffer(view)),
    })
}
