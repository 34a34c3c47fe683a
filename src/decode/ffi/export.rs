//! Export of device batches as C device arrays.

use std::ffi::c_void;
use std::sync::Arc;

use arrow::array::layout;
use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};

use super::ArrowDeviceArray;
use crate::decode::array::{DeviceBatch, DeviceBytes, DeviceColumn, ReadyEvent, Result};

/// Exports `batch` as a C schema (arrow's, from the batch's schema: a struct
/// `+s` with the schema's metadata) and a C device array (a struct array of
/// the batch's rows whose children are the columns).
///
/// The array owns clones of the batch's buffers and event until the consumer
/// releases it: dropping `batch` afterwards frees nothing the consumer uses.
pub fn export_device_batch(batch: &DeviceBatch) -> Result<(FFI_ArrowSchema, ArrowDeviceArray)> {
    let schema = FFI_ArrowSchema::try_from(batch.schema().as_ref())?;
    Ok((schema, export_device_array(batch)))
}

/// Exports `batch`'s data only (see [`export_device_batch`]).
pub fn export_device_array(batch: &DeviceBatch) -> ArrowDeviceArray {
    let ready = batch.ready().cloned();
    // The children live in a Vec never resized after this, so the pointers
    // into its heap buffer stay valid when the Vec moves into the private data.
    let mut children: Vec<FFI_ArrowArray> = batch
        .columns()
        .iter()
        .map(|column| export_column(column, ready.clone()))
        .collect();
    let child_ptrs: Vec<*mut FFI_ArrowArray> = children
        .iter_mut()
        .map(|c| c as *mut FFI_ArrowArray)
        .collect();
    // A heap cell holding the CUevent handle: `sync_event` points to it.
    let event_cell = ready.as_ref().map(|e| Box::new(e.handle()));
    let mut private = Box::new(BatchPrivate {
        buffers: [std::ptr::null()],
        _children: children,
        child_ptrs,
        event_cell,
        _ready: ready,
    });
    let sync_event = private
        .event_cell
        .as_mut()
        .map_or(std::ptr::null_mut(), |cell| {
            (&mut **cell as *mut *mut c_void).cast::<c_void>()
        });
    let location = batch.location();
    let array = FFI_ArrowArray {
        length: batch.num_rows() as i64,
        null_count: 0,
        offset: 0,
        n_buffers: 1,
        n_children: private.child_ptrs.len() as i64,
        buffers: private.buffers.as_mut_ptr(),
        children: if private.child_ptrs.is_empty() {
            std::ptr::null_mut()
        } else {
            private.child_ptrs.as_mut_ptr()
        },
        dictionary: std::ptr::null_mut(),
        release: Some(release_batch),
        private_data: Box::into_raw(private).cast(),
    };
    ArrowDeviceArray {
        array,
        device_id: location.device_id,
        device_type: location.device_type,
        sync_event,
        reserved: [0; 3],
    }
}

/// What the top-level struct array owns. Fields drop in order: the children
/// first (releasing those the consumer did not move out), then the event.
struct BatchPrivate {
    buffers: [*const c_void; 1],
    /// Owned only to be dropped (each `FFI_ArrowArray` releases on drop).
    _children: Vec<FFI_ArrowArray>,
    child_ptrs: Vec<*mut FFI_ArrowArray>,
    event_cell: Option<Box<*mut c_void>>,
    _ready: Option<Arc<dyn ReadyEvent>>,
}

/// What one column's array owns: its buffer pointer list, the host buffer of
/// variadic sizes for views, its children's arrays (nested columns), and
/// the buffers and event themselves. The children drop first.
struct ColumnPrivate {
    buffers: Vec<*const c_void>,
    /// Owned only to be dropped (each `FFI_ArrowArray` releases on drop).
    _children: Vec<FFI_ArrowArray>,
    child_ptrs: Vec<*mut FFI_ArrowArray>,
    _variadic_sizes: Vec<i64>,
    _keep: Vec<DeviceBytes>,
    _ready: Option<Arc<dyn ReadyEvent>>,
}

fn pointer(bytes: &DeviceBytes) -> *const c_void {
    std::ptr::with_exposed_provenance(bytes.address() as usize)
}

fn export_column(column: &DeviceColumn, ready: Option<Arc<dyn ReadyEvent>>) -> FFI_ArrowArray {
    let spec = layout(column.data_type());
    let mut buffers = Vec::with_capacity(column.buffers().len() + 2);
    if spec.can_contain_null_mask {
        buffers.push(column.validity().map_or(std::ptr::null(), pointer));
    }
    buffers.extend(column.buffers().iter().map(pointer));
    let variadic_sizes: Vec<i64> = if spec.variadic {
        column
            .variadic_buffers()
            .iter()
            .map(|b| b.len() as i64)
            .collect()
    } else {
        Vec::new()
    };
    if spec.variadic {
        // Host memory (see the module documentation); NULL when there are no
        // variadic buffers, as the C Data Interface allows for empty buffers.
        buffers.push(if variadic_sizes.is_empty() {
            std::ptr::null()
        } else {
            variadic_sizes.as_ptr().cast()
        });
    }
    // As for the batch: the Vec is never resized after the pointers are taken.
    let mut children: Vec<FFI_ArrowArray> = column
        .children()
        .iter()
        .map(|child| export_column(child, ready.clone()))
        .collect();
    let child_ptrs: Vec<*mut FFI_ArrowArray> = children
        .iter_mut()
        .map(|c| c as *mut FFI_ArrowArray)
        .collect();
    let own = column.validity().into_iter().chain(column.buffers());
    let mut private = Box::new(ColumnPrivate {
        buffers,
        _children: children,
        child_ptrs,
        _variadic_sizes: variadic_sizes,
        _keep: own.cloned().collect(),
        _ready: ready,
    });
    FFI_ArrowArray {
        length: column.len() as i64,
        null_count: column.null_count().map_or(-1, |n| n as i64),
        offset: column.offset() as i64,
        n_buffers: private.buffers.len() as i64,
        n_children: private.child_ptrs.len() as i64,
        buffers: private.buffers.as_mut_ptr(),
        children: if private.child_ptrs.is_empty() {
            std::ptr::null_mut()
        } else {
            private.child_ptrs.as_mut_ptr()
        },
        dictionary: std::ptr::null_mut(),
        release: Some(release_column),
        private_data: Box::into_raw(private).cast(),
    }
}

/// Release callback of a column (child) array.
unsafe extern "C" fn release_column(array: *mut FFI_ArrowArray) {
    // SAFETY: the C interface passes a live, exported array of ours.
    unsafe { release_private::<ColumnPrivate>(array) }
}

/// Release callback of the top-level struct array: dropping its private data
/// releases the children it still holds.
unsafe extern "C" fn release_batch(array: *mut FFI_ArrowArray) {
    // SAFETY: as above.
    unsafe { release_private::<BatchPrivate>(array) }
}

/// Frees `array`'s private data (of type `P`) and marks it released.
///
/// # Safety
/// `array` is null or one of our exported arrays whose private data is a
/// `Box<P>` not yet freed.
unsafe fn release_private<P>(array: *mut FFI_ArrowArray) {
    // SAFETY: the caller's contract.
    let Some(array) = (unsafe { array.as_mut() }) else {
        return;
    };
    if array.release.is_none() {
        return;
    }
    let private = std::mem::replace(&mut array.private_data, std::ptr::null_mut());
    array.release = None;
    if !private.is_null() {
        // Dropping Arcs and C arrays cannot unwind across the C boundary
        // (a panic here would abort): nothing in these drops panics.
        // SAFETY: created by Box::into_raw in this module, freed once (the
        // pointer was just cleared).
        drop(unsafe { Box::from_raw(private.cast::<P>()) });
    }
}
