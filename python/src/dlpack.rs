//! DLPack (the unversioned `dltensor` capsule, DLPack 0.8's ABI): a
//! one-dimensional tensor over a column's values, owning a reference to
//! them until the consumer calls the deleter.

use std::ffi::{c_void, CStr};

use pyo3::ffi;
use pyo3::prelude::*;

/// `DLDevice`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct DLDevice {
    pub(crate) device_type: i32,
    pub(crate) device_id: i32,
}

/// `DLDataType`: type code (0 int, 1 uint, 2 float), bits, lanes.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct DLDataType {
    pub(crate) code: u8,
    pub(crate) bits: u8,
    pub(crate) lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

/// What a tensor owns: its shape and whatever keeps the memory alive.
struct Context {
    shape: [i64; 1],
    _keep: Box<dyn Send + Sync>,
}

const NAME: &CStr = c"dltensor";

unsafe extern "C" fn deleter(tensor: *mut DLManagedTensor) {
    if tensor.is_null() {
        return;
    }
    // SAFETY: `tensor` and its context were made by `capsule` with
    // Box::into_raw, and the deleter is called once (by the consumer, or by
    // the capsule's destructor when no consumer took it).
    let tensor = unsafe { Box::from_raw(tensor) };
    // SAFETY: `capsule` set `manager_ctx` from `Box::into_raw` of a
    // `Context`, freed only here, once with its tensor.
    drop(unsafe { Box::from_raw(tensor.manager_ctx.cast::<Context>()) });
}

unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    // A consumer that took the tensor renamed the capsule ("used_dltensor")
    // and owns it now; otherwise it is still ours to free.
    // SAFETY: called by Python with the capsule being destroyed.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, NAME.as_ptr()) == 1 {
            let tensor =
                ffi::PyCapsule_GetPointer(capsule, NAME.as_ptr()).cast::<DLManagedTensor>();
            if let Some(delete) = (*tensor).deleter {
                delete(tensor);
            }
        }
    }
}

/// A `dltensor` capsule over `len` elements of `dtype` at `address` on
/// `device`, keeping `keep` alive until the tensor is deleted.
pub(crate) fn capsule(
    py: Python<'_>,
    address: u64,
    len: usize,
    dtype: DLDataType,
    device: DLDevice,
    keep: Box<dyn Send + Sync>,
) -> PyResult<Py<PyAny>> {
    let ctx = Box::into_raw(Box::new(Context {
        shape: [len as i64],
        _keep: keep,
    }));
    let tensor = Box::into_raw(Box::new(DLManagedTensor {
        dl_tensor: DLTensor {
            data: address as *mut c_void,
            device,
            ndim: 1,
            dtype,
            // SAFETY: `ctx` is live until the deleter frees it with the tensor.
            shape: unsafe { (*ctx).shape.as_mut_ptr() },
            strides: std::ptr::null_mut(),
            byte_offset: 0,
        },
        manager_ctx: ctx.cast(),
        deleter: Some(deleter),
    }));
    // SAFETY: a valid pointer, a static name, a destructor that frees it
    // unless a consumer took it.
    let capsule =
        unsafe { ffi::PyCapsule_New(tensor.cast(), NAME.as_ptr(), Some(capsule_destructor)) };
    if capsule.is_null() {
        // SAFETY: the capsule was not made: the tensor is still ours.
        unsafe { deleter(tensor) };
        return Err(PyErr::fetch(py));
    }
    // SAFETY: a new reference we own.
    Ok(unsafe { Py::from_owned_ptr(py, capsule) })
}
