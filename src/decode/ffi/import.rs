//! Import of C device arrays as device batches.

use std::ffi::c_void;
use std::fmt;
use std::sync::Arc;

use arrow::array::{layout, BufferSpec};
use arrow::datatypes::{DataType, Field, Schema, SchemaRef};
use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};

use super::ArrowDeviceArray;
use crate::cuda::wait_foreign_event;
use crate::cuda::Device;
use crate::decode::array::{
    child_fields, has_offsets, is_flat, read_bytes, DeviceArrayError, DeviceBatch, DeviceBytes,
    DeviceColumn, DeviceMemory, MemoryLocation, ReadyEvent, Result,
};

/// Imports a C device array described by `schema` (a struct, `+s`) as a
/// [`DeviceBatch`], without copying the data.
///
/// Takes ownership of `array`: its `release` is called exactly once, when
/// the last buffer of the returned batch drops (or at once on error). The
/// batch's ready event waits on the array's `sync_event`. Utf8View/BinaryView
/// variadic sizes are read from host memory (see the module documentation);
/// the data length of Utf8/Binary columns is read from the last offset, with a
/// device copy for CUDA memory.
///
/// # Safety
/// `array` must follow the C Device Data Interface: its pointers valid, its
/// buffers on the device it names and large enough for its type and length.
pub unsafe fn import_device_batch(
    schema: &FFI_ArrowSchema,
    array: ArrowDeviceArray,
) -> Result<DeviceBatch> {
    if array.is_released() {
        return Err(DeviceArrayError::Released);
    }
    let schema = Arc::new(Schema::try_from(schema)?);
    // SAFETY: the caller's contract.
    unsafe { import_device_batch_with_schema(schema, array) }
}

/// [`import_device_batch`] with the schema already imported (a stream
/// imports its schema once).
///
/// # Safety
/// As for [`import_device_batch`].
pub unsafe fn import_device_batch_with_schema(
    schema: SchemaRef,
    array: ArrowDeviceArray,
) -> Result<DeviceBatch> {
    if array.is_released() {
        return Err(DeviceArrayError::Released);
    }
    let location = MemoryLocation {
        device_type: array.device_type,
        device_id: array.device_id,
    };
    let sync_event = array.sync_event;
    // From here on, dropping `owner` (on error, or when the last buffer goes)
    // releases the array.
    let owner = Arc::new(ImportedArray(array));
    let top = &owner.0.array;
    let bad = |what: String| Err(DeviceArrayError::Import(what));
    let fields = schema.fields();
    if top.n_children != fields.len() as i64 {
        return bad(format!(
            "{} children for a schema of {} fields",
            top.n_children,
            fields.len()
        ));
    }
    if top.n_buffers != 1 {
        return bad(format!("a struct array with {} buffers", top.n_buffers));
    }
    if !top.dictionary.is_null() {
        return bad("a struct array with a dictionary".to_string());
    }
    let (Ok(num_rows), Ok(base_offset)) =
        (usize::try_from(top.length), usize::try_from(top.offset))
    else {
        return bad(format!(
            "negative length {} or offset {}",
            top.length, top.offset
        ));
    };
    // SAFETY: `n_buffers` is 1: `buffers` holds one pointer.
    let top_validity = unsafe { *top.buffers };
    if !top_validity.is_null() && top.null_count != 0 {
        return bad("nulls at the top level of a record batch".to_string());
    }
    let ready: Option<Arc<dyn ReadyEvent>> = if sync_event.is_null() {
        None
    } else if !location.device_type.is_cuda() {
        return bad(format!("a sync_event on {}", location.device_type));
    } else {
        // SAFETY: for CUDA devices `sync_event` is a `CUevent*` the producer
        // keeps alive until release (which `owner` delays).
        let handle = unsafe { *sync_event.cast::<*mut c_void>() };
        Some(Arc::new(ImportedEvent {
            handle: handle as usize,
            device_id: location.device_id,
            _owner: owner.clone(),
        }))
    };
    // Reading the last offset of a Utf8/Binary column reads device memory
    // the producer may still be writing: wait for it first.
    if let Some(ready) = &ready {
        if fields.iter().any(|f| has_offsets(f.data_type())) {
            ready.wait()?;
        }
    }
    let mut columns = Vec::with_capacity(fields.len());
    for (i, field) in fields.iter().enumerate() {
        // SAFETY: `children` holds `n_children` pointers.
        let child = unsafe { *top.children.add(i) };
        // SAFETY: the producer's children are valid arrays.
        let Some(child) = (unsafe { child.as_ref() }) else {
            return bad(format!("child {i} is NULL"));
        };
        let column = unsafe {
            // SAFETY: the caller's contract covers the children.
            import_column(field, child, base_offset, num_rows, location, &owner)
        }
        .map_err(|e| e.in_column(field.name()))?;
        columns.push(column);
    }
    DeviceBatch::try_new(schema, num_rows, columns, location, ready)
}

/// Imports one child array as a column of rows `base_offset..+num_rows` of
/// the parent struct.
///
/// The steps: the child's header checked ([`child_rows`]), its buffer
/// list read ([`buffer_pointers`]), its null count and validity, its
/// layout's buffers ([`fixed_buffers`]) and its variadic ones
/// ([`variadic_buffers`]).
///
/// # Safety
/// `child` follows the C Data Interface for `field`'s type.
unsafe fn import_column(
    field: &Field,
    child: &FFI_ArrowArray,
    base_offset: usize,
    num_rows: usize,
    location: MemoryLocation,
    owner: &Arc<ImportedArray>,
) -> Result<DeviceColumn> {
    let data_type = field.data_type();
    let (child_len, offset, end) = child_rows(data_type, child, base_offset, num_rows)?;
    let spec = layout(data_type);
    // SAFETY: the caller's contract covers the buffer list.
    let pointers = unsafe { buffer_pointers(child, &spec)? };
    let n_buffers = pointers.len();
    let child_buffers = ChildBuffers {
        pointers,
        location,
        owner,
    };
    // The child's null count describes its own length; it holds for the
    // batch's rows only when those are all of them.
    let whole = base_offset == 0 && child_len == num_rows;
    let null_count = match child.null_count {
        // Producers disagree on a Null array's count (0 or its length).
        _ if *data_type == DataType::Null => None,
        n if n >= 0 && whole => Some(n as usize),
        -1 => None,
        n if n >= 0 => None,
        n => return bad(format!("null count {n}")),
    };
    let mut index = 0;
    let validity = if spec.can_contain_null_mask {
        index = 1;
        if pointers[0].is_null() {
            if null_count.is_some_and(|n| n > 0) {
                return bad("nulls without a validity bitmap".to_string());
            }
            None
        } else {
            Some(child_buffers.bytes(0, end.div_ceil(8))?)
        }
    } else {
        None
    };
    let null_count = if validity.is_none() && *data_type != DataType::Null {
        Some(0)
    } else {
        null_count
    };
    let mut buffers = Vec::with_capacity(n_buffers);
    fixed_buffers(
        data_type,
        &spec,
        &child_buffers,
        end,
        &mut index,
        &mut buffers,
    )?;
    if spec.variadic {
        // SAFETY: the caller's contract covers the sizes buffer.
        unsafe { variadic_buffers(&child_buffers, index, &mut buffers)? };
    }
    let Some(fields) = child_fields(data_type) else {
        return DeviceColumn::with_offset(
            data_type.clone(),
            offset,
            num_rows,
            null_count,
            validity,
            buffers,
        );
    };
    // Nested: each child imported whole; the parent's offset and offsets
    // say which of its values the rows reach.
    let mut children = Vec::with_capacity(fields.len());
    for (i, field) in fields.into_iter().enumerate() {
        // SAFETY: `child_rows` checked `n_children`; `children` holds that
        // many pointers.
        let grandchild = unsafe { *child.children.add(i) };
        // SAFETY: the producer's children are valid arrays.
        let Some(grandchild) = (unsafe { grandchild.as_ref() }) else {
            return bad(format!("child {i} is NULL"));
        };
        let Ok(len) = usize::try_from(grandchild.length) else {
            return bad(format!("child {i} has length {}", grandchild.length));
        };
        // SAFETY: the caller's contract covers the children.
        let column = unsafe { import_column(field, grandchild, 0, len, location, owner) }
            .map_err(|e| e.in_column(field.name()))?;
        children.push(column);
    }
    DeviceColumn::with_children_at(
        data_type.clone(),
        offset,
        num_rows,
        null_count,
        validity,
        buffers,
        children,
    )
}

/// An import error.
fn bad<T>(what: String) -> Result<T> {
    Err(DeviceArrayError::Import(what))
}

/// Checks a child's header for rows `base_offset..+num_rows` of the
/// batch: a flat type, not released, no children, its length covering the
/// rows. Hands on (the child's length, the rows' first value, their end).
fn child_rows(
    data_type: &DataType,
    child: &FFI_ArrowArray,
    base_offset: usize,
    num_rows: usize,
) -> Result<(usize, usize, usize)> {
    let children = match child_fields(data_type) {
        Some(fields) => fields.len(),
        None if is_flat(data_type) => 0,
        None => {
            return Err(DeviceArrayError::Unsupported {
                data_type: data_type.clone(),
            })
        }
    };
    if child.release.is_none() {
        return Err(DeviceArrayError::Released);
    }
    if !child.dictionary.is_null() {
        return bad("a dictionary on a type without one".to_string());
    }
    if child.n_children != children as i64 {
        return bad(format!(
            "{} children where the type has {children}",
            child.n_children
        ));
    }
    if children > 0 && child.children.is_null() {
        return bad("a NULL children list".to_string());
    }
    let (Ok(child_len), Ok(child_offset)) =
        (usize::try_from(child.length), usize::try_from(child.offset))
    else {
        return bad(format!(
            "negative length {} or offset {}",
            child.length, child.offset
        ));
    };
    if base_offset
        .checked_add(num_rows)
        .is_none_or(|end| end > child_len)
    {
        return bad(format!(
            "{child_len} values for rows {base_offset}..+{num_rows} of the batch"
        ));
    }
    let Some(offset) = child_offset.checked_add(base_offset) else {
        return bad("offset overflow".to_string());
    };
    let Some(end) = offset.checked_add(num_rows) else {
        return bad("offset overflow".to_string());
    };
    Ok((child_len, offset, end))
}

/// The child's buffer pointers, their count checked against the type's
/// layout `spec`.
///
/// # Safety
/// `child.buffers` holds `child.n_buffers` pointers.
unsafe fn buffer_pointers<'a>(
    child: &'a FFI_ArrowArray,
    spec: &arrow::array::DataTypeLayout,
) -> Result<&'a [*const c_void]> {
    let fixed = usize::from(spec.can_contain_null_mask) + spec.buffers.len();
    let n_buffers = usize::try_from(child.n_buffers).unwrap_or(usize::MAX);
    let count_ok = if spec.variadic {
        // views, the variadic buffers, then the sizes buffer
        n_buffers != usize::MAX && n_buffers > fixed
    } else {
        n_buffers == fixed
    };
    if !count_ok {
        return bad(format!(
            "{} buffers where the type has {fixed}{}",
            child.n_buffers,
            if spec.variadic {
                " + variadic + sizes"
            } else {
                ""
            }
        ));
    }
    Ok(if n_buffers == 0 {
        &[]
    } else if child.buffers.is_null() {
        return bad("a NULL buffer list".to_string());
    } else {
        // SAFETY: `buffers` holds `n_buffers` pointers.
        unsafe { std::slice::from_raw_parts(child.buffers.cast_const(), n_buffers) }
    })
}

/// A child's buffers, handed out as device bytes that keep the imported
/// array alive.
struct ChildBuffers<'a> {
    pointers: &'a [*const c_void],
    location: MemoryLocation,
    owner: &'a Arc<ImportedArray>,
}

impl ChildBuffers<'_> {
    /// Buffer `index`, `len` bytes of it.
    fn bytes(&self, index: usize, len: usize) -> Result<DeviceBytes> {
        let address = self.pointers[index].expose_provenance() as u64;
        if address == 0 && len > 0 {
            return Err(DeviceArrayError::Import(format!(
                "buffer {index} is NULL but needs {len} bytes"
            )));
        }
        Ok(DeviceBytes::new(Arc::new(ImportedMemory {
            address,
            len,
            location: self.location,
            _owner: self.owner.clone(),
        })))
    }
}

/// Appends the buffers of the type's layout `spec` (after the validity,
/// from buffer `index` on, which it advances), sized for values up to
/// `end`.
fn fixed_buffers(
    data_type: &DataType,
    spec: &arrow::array::DataTypeLayout,
    child: &ChildBuffers<'_>,
    end: usize,
    index: &mut usize,
    buffers: &mut Vec<DeviceBytes>,
) -> Result<()> {
    for (i, buffer_spec) in spec.buffers.iter().enumerate() {
        let len = match buffer_spec {
            BufferSpec::FixedWidth { byte_width, .. } => {
                let values = if i == 0 && has_offsets(data_type) {
                    // Some producers pass NULL offsets for an empty array.
                    if end == 0 && child.pointers[*index].is_null() {
                        0
                    } else {
                        end + 1
                    }
                } else {
                    end
                };
                values.checked_mul(*byte_width)
            }
            BufferSpec::BitMap => Some(end.div_ceil(8)),
            BufferSpec::AlwaysNull => Some(0),
            BufferSpec::VariableWidth => {
                // The data of Utf8/Binary: up to the last offset.
                let offsets = buffers.first().ok_or_else(|| {
                    DeviceArrayError::Import("data before its offsets".to_string())
                })?;
                Some(last_offset(data_type, offsets, end)?)
            }
        };
        let Some(len) = len else {
            return bad("buffer size overflow".to_string());
        };
        buffers.push(child.bytes(*index, len)?);
        *index += 1;
    }
    Ok(())
}

/// Appends a view type's variadic buffers (from buffer `index` on), sized
/// by the last buffer, the host array of their sizes.
///
/// # Safety
/// The sizes buffer is host memory holding one int64 per variadic buffer.
unsafe fn variadic_buffers(
    child: &ChildBuffers<'_>,
    index: usize,
    buffers: &mut Vec<DeviceBytes>,
) -> Result<()> {
    let sizes_index = child.pointers.len() - 1;
    let count = sizes_index - index;
    let sizes = child.pointers[sizes_index].cast::<i64>();
    if count > 0 && sizes.is_null() {
        return bad("no variadic buffer sizes".to_string());
    }
    for k in 0..count {
        // SAFETY: the sizes buffer is host memory holding one int64 per
        // variadic buffer (see the module documentation).
        let size = unsafe { sizes.add(k).read_unaligned() };
        let Ok(size) = usize::try_from(size) else {
            return bad(format!("variadic buffer {k} has size {size}"));
        };
        buffers.push(child.bytes(index + k, size)?);
    }
    Ok(())
}

/// The value of offset `end` of an offsets buffer: the data length used.
fn last_offset(data_type: &DataType, offsets: &DeviceBytes, end: usize) -> Result<usize> {
    let large = matches!(data_type, DataType::LargeUtf8 | DataType::LargeBinary);
    let width = if large { 8 } else { 4 };
    if offsets.len() < (end + 1) * width || offsets.address() == 0 {
        return Ok(0);
    }
    let raw = read_bytes(
        offsets.location(),
        offsets.address() + (end * width) as u64,
        width,
    )?;
    let value = if large {
        i64::from_le_bytes(raw[..8].try_into().unwrap_or_default())
    } else {
        i64::from(i32::from_le_bytes(raw[..4].try_into().unwrap_or_default()))
    };
    usize::try_from(value)
        .map_err(|_| DeviceArrayError::Import(format!("negative last offset {value}")))
}

/// The imported C array; dropping it calls the producer's `release` once.
struct ImportedArray(ArrowDeviceArray);

// SAFETY: only dropped (released) after construction, from whichever thread
// drops the last owner; the C interface allows release from any thread.
unsafe impl Sync for ImportedArray {}

impl fmt::Debug for ImportedArray {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ImportedArray")
    }
}

/// One buffer of an imported array.
#[derive(Debug)]
struct ImportedMemory {
    address: u64,
    len: usize,
    location: MemoryLocation,
    _owner: Arc<ImportedArray>,
}

// SAFETY: the producer keeps the buffer allocated and unchanged until
// release, which waits for `_owner`.
unsafe impl DeviceMemory for ImportedMemory {
    fn address(&self) -> u64 {
        self.address
    }
    fn len(&self) -> usize {
        self.len
    }
    fn location(&self) -> MemoryLocation {
        self.location
    }
}

/// The producer's sync event (its `CUevent` handle, alive until release).
#[derive(Debug)]
struct ImportedEvent {
    handle: usize,
    device_id: i64,
    _owner: Arc<ImportedArray>,
}

// SAFETY: the handle is the producer's CUevent, alive until release, which
// waits for `_owner`.
unsafe impl ReadyEvent for ImportedEvent {
    fn handle(&self) -> *mut c_void {
        std::ptr::with_exposed_provenance_mut(self.handle)
    }

    fn wait(&self) -> Result<()> {
        let ordinal = usize::try_from(self.device_id)
            .map_err(|_| DeviceArrayError::Import(format!("CUDA device id {}", self.device_id)))?;
        let device = Device::get(ordinal)?;
        // SAFETY: see the impl's safety comment.
        unsafe { wait_foreign_event(device, self.handle().cast()) }?;
        Ok(())
    }
}
