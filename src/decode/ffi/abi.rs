//! The `#[repr(C)]` structures of the Arrow C Device Data Interface.

use std::ffi::{c_char, c_int, c_void};

use arrow::ffi::{FFI_ArrowArray, FFI_ArrowSchema};

use super::ArrowDeviceType;

/// `struct ArrowDeviceArray`: an `ArrowArray` whose buffers live on a device.
///
/// 128 bytes on 64-bit targets: `array` at 0 (80 bytes), `device_id` at 80,
/// `device_type` at 88, `sync_event` at 96, `reserved` at 104. The struct
/// itself is host memory; only the buffers the array points to are on the
/// device. Dropping a value calls the array's `release` (if not released).
#[repr(C)]
#[derive(Debug)]
pub struct ArrowDeviceArray {
    /// The array; its `release` and `private_data` own everything, the
    /// event included.
    pub array: FFI_ArrowArray,
    /// The device's id (CUDA ordinal; -1 for the CPU).
    pub device_id: i64,
    /// The kind of memory the buffers are in.
    pub device_type: ArrowDeviceType,
    /// For CUDA: a `CUevent*` (pointer to the handle) the consumer must wait
    /// on before touching the buffers, or NULL when no wait is needed. The
    /// producer owns the event until release.
    pub sync_event: *mut c_void,
    /// Zero, for future use by the spec.
    pub reserved: [i64; 3],
}

// SAFETY: the structure is a handle on data owned through `private_data`;
// gdscan's exports are thread-safe (Arc-owned), and the C interface lets a
// structure move between threads.
unsafe impl Send for ArrowDeviceArray {}

impl ArrowDeviceArray {
    /// A released (empty) structure, e.g. to pass to a producer to fill.
    pub fn empty() -> ArrowDeviceArray {
        ArrowDeviceArray {
            array: FFI_ArrowArray::empty(),
            device_id: 0,
            device_type: ArrowDeviceType(0),
            sync_event: std::ptr::null_mut(),
            reserved: [0; 3],
        }
    }

    /// Whether the structure is released (its `release` is NULL).
    pub fn is_released(&self) -> bool {
        self.array.is_released()
    }

    /// Moves the structure out of `ptr`, leaving a released one there (the
    /// spec's move: the source's `release` becomes NULL, uncalled).
    ///
    /// # Safety
    /// `ptr` must point to a valid, properly aligned `ArrowDeviceArray`.
    pub unsafe fn from_raw(ptr: *mut ArrowDeviceArray) -> ArrowDeviceArray {
        std::ptr::replace(ptr, ArrowDeviceArray::empty())
    }

    /// Moves the structure into consumer memory at `out` without reading or
    /// dropping what was there.
    ///
    /// # Safety
    /// `out` must be valid for writes of an `ArrowDeviceArray` and aligned.
    pub unsafe fn write_to(self, out: *mut ArrowDeviceArray) {
        std::ptr::write(out, self)
    }
}

/// `get_schema` of [`ArrowDeviceArrayStream`].
pub(crate) type GetSchema =
    unsafe extern "C" fn(stream: *mut ArrowDeviceArrayStream, out: *mut FFI_ArrowSchema) -> c_int;
/// `get_next` of [`ArrowDeviceArrayStream`].
pub(crate) type GetNext =
    unsafe extern "C" fn(stream: *mut ArrowDeviceArrayStream, out: *mut ArrowDeviceArray) -> c_int;
/// `get_last_error` of [`ArrowDeviceArrayStream`].
pub(crate) type GetLastError =
    unsafe extern "C" fn(stream: *mut ArrowDeviceArrayStream) -> *const c_char;
/// `release` of [`ArrowDeviceArrayStream`].
pub(crate) type ReleaseStream = unsafe extern "C" fn(stream: *mut ArrowDeviceArrayStream);

/// `struct ArrowDeviceArrayStream`: a pull-style stream of device arrays of
/// one schema, all on one device type.
///
/// 48 bytes on 64-bit targets: `device_type` at 0, then the four callbacks
/// at 8, 16, 24, 32 and `private_data` at 40. Dropping a value calls
/// `release` (if not released).
#[repr(C)]
#[derive(Debug)]
pub struct ArrowDeviceArrayStream {
    /// The device type of every array the stream produces.
    pub device_type: ArrowDeviceType,
    /// Writes the stream's schema into `out`; 0 or an errno code.
    pub get_schema: Option<GetSchema>,
    /// Writes the next array into `out` (released at the end of the
    /// stream); 0 or an errno code.
    pub get_next: Option<GetNext>,
    /// The text of the last error (valid until the next call), or NULL.
    pub get_last_error: Option<GetLastError>,
    /// Frees the stream; NULL once released.
    pub release: Option<ReleaseStream>,
    /// The producer's state.
    pub private_data: *mut c_void,
}

// SAFETY: as for `ArrowDeviceArray`; the stream may move between threads,
// calls are serialised by the `&mut` access its users need.
unsafe impl Send for ArrowDeviceArrayStream {}

impl ArrowDeviceArrayStream {
    /// A released (empty) stream, e.g. to pass to a producer to fill.
    pub fn empty() -> ArrowDeviceArrayStream {
        ArrowDeviceArrayStream {
            device_type: ArrowDeviceType(0),
            get_schema: None,
            get_next: None,
            get_last_error: None,
            release: None,
            private_data: std::ptr::null_mut(),
        }
    }

    /// Whether the stream is released.
    pub fn is_released(&self) -> bool {
        self.release.is_none()
    }

    /// Moves the stream out of `ptr`, leaving a released one there.
    ///
    /// # Safety
    /// `ptr` must point to a valid, properly aligned `ArrowDeviceArrayStream`.
    pub unsafe fn from_raw(ptr: *mut ArrowDeviceArrayStream) -> ArrowDeviceArrayStream {
        std::ptr::replace(ptr, ArrowDeviceArrayStream::empty())
    }

    /// Moves the stream into consumer memory at `out` without reading or
    /// dropping what was there.
    ///
    /// # Safety
    /// `out` must be valid for writes of an `ArrowDeviceArrayStream` and aligned.
    pub unsafe fn write_to(self, out: *mut ArrowDeviceArrayStream) {
        std::ptr::write(out, self)
    }
}

impl Drop for ArrowDeviceArrayStream {
    fn drop(&mut self) {
        if let Some(release) = self.release {
            // SAFETY: a live stream's release callback, called once: it sets
            // `release` to NULL.
            unsafe { release(self) };
        }
    }
}

// The spec's layout, checked at compile time (64-bit targets).
#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::{align_of, offset_of, size_of};
    assert!(size_of::<FFI_ArrowArray>() == 80);
    assert!(size_of::<ArrowDeviceArray>() == 128);
    assert!(align_of::<ArrowDeviceArray>() == 8);
    assert!(offset_of!(ArrowDeviceArray, array) == 0);
    assert!(offset_of!(ArrowDeviceArray, device_id) == 80);
    assert!(offset_of!(ArrowDeviceArray, device_type) == 88);
    assert!(offset_of!(ArrowDeviceArray, sync_event) == 96);
    assert!(offset_of!(ArrowDeviceArray, reserved) == 104);
    assert!(size_of::<ArrowDeviceType>() == 4);
    assert!(size_of::<ArrowDeviceArrayStream>() == 48);
    assert!(offset_of!(ArrowDeviceArrayStream, device_type) == 0);
    assert!(offset_of!(ArrowDeviceArrayStream, get_schema) == 8);
    assert!(offset_of!(ArrowDeviceArrayStream, get_next) == 16);
    assert!(offset_of!(ArrowDeviceArrayStream, get_last_error) == 24);
    assert!(offset_of!(ArrowDeviceArrayStream, release) == 32);
    assert!(offset_of!(ArrowDeviceArrayStream, private_data) == 40);
};
