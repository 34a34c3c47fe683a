//! `ArrowDeviceArrayStream`: export of an iterator of device batches, and a
//! reader of such streams.

use std::error::Error as StdError;
use std::ffi::{c_char, c_int, CStr, CString};

use arrow::datatypes::{Schema, SchemaRef};
use arrow::ffi::FFI_ArrowSchema;

use super::{
    export_device_array, import_device_batch_with_schema, ArrowDeviceArray, ArrowDeviceArrayStream,
    ArrowDeviceType,
};
use crate::decode::array::{DeviceArrayError, DeviceBatch, Result};

type Batches = Box<dyn Iterator<Item = std::result::Result<DeviceBatch, String>> + Send>;

/// What an exported stream owns.
struct StreamPrivate {
    schema: SchemaRef,
    device_type: ArrowDeviceType,
    batches: Batches,
    last_error: Option<CString>,
}

/// Exports `batches` (e.g. a scan's row groups) as a C device stream of
/// `schema`, every array on `device_type`.
///
/// `get_next` pulls the next batch on the calling thread; an `Err` from the
/// iterator (or a batch whose fields or device type differ from the
/// stream's) makes `get_next` return `EIO`/`EINVAL`, and `get_last_error`
/// then gives the error with its sources. The end of the iterator is a
/// released array. A panic in the iterator is caught, reported the same way,
/// and ends the stream. Dropping the returned value (or the consumer's
/// `release`) drops the iterator and any batch not yet taken.
pub fn export_device_stream<I, E>(
    schema: SchemaRef,
    device_type: ArrowDeviceType,
    batches: I,
) -> ArrowDeviceArrayStream
where
    I: IntoIterator<Item = std::result::Result<DeviceBatch, E>>,
    I::IntoIter: Send + 'static,
    E: StdError + 'static,
{
    let batches: Batches = Box::new(
        batches
            .into_iter()
            .map(|item| item.map_err(|e| error_chain(&e))),
    );
    let private = Box::new(StreamPrivate {
        schema,
        device_type,
        batches,
        last_error: None,
    });
    ArrowDeviceArrayStream {
        device_type,
        get_schema: Some(get_schema),
        get_next: Some(get_next),
        get_last_error: Some(get_last_error),
        release: Some(release_stream),
        private_data: Box::into_raw(private).cast(),
    }
}

/// An error's message followed by its sources, `": "`-separated.
fn error_chain(error: &dyn StdError) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        // `#[error(transparent)]` and "{0}" wrappers repeat their source.
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

/// The private data of a live exported stream.
///
/// # Safety
/// `stream` is one of ours and not released.
unsafe fn private<'a>(stream: *mut ArrowDeviceArrayStream) -> Option<&'a mut StreamPrivate> {
    // SAFETY: the caller's contract.
    let stream = unsafe { stream.as_mut()? };
    // SAFETY: ours: a Box<StreamPrivate> until release.
    unsafe { stream.private_data.cast::<StreamPrivate>().as_mut() }
}

impl StreamPrivate {
    fn fail(&mut self, message: String, code: c_int) -> c_int {
        let message = message.replace('\0', " ");
        self.last_error = CString::new(message).ok();
        code
    }

    fn next_array(&mut self) -> std::result::Result<ArrowDeviceArray, (String, c_int)> {
        match self.batches.next() {
            None => Ok(ArrowDeviceArray::empty()),
            Some(Err(message)) => Err((message, libc::EIO)),
            Some(Ok(batch)) => {
                if batch.schema().fields() != self.schema.fields() {
                    return Err((
                        format!(
                            "a batch with fields {:?} in a stream of {:?}",
                            batch.schema().fields(),
                            self.schema.fields()
                        ),
                        libc::EINVAL,
                    ));
                }
                if batch.location().device_type != self.device_type {
                    return Err((
                        format!(
                            "a batch on {} in a stream on {}",
                            batch.location().device_type,
                            self.device_type
                        ),
                        libc::EINVAL,
                    ));
                }
                Ok(export_device_array(&batch))
            }
        }
    }
}

unsafe extern "C" fn get_schema(
    stream: *mut ArrowDeviceArrayStream,
    out: *mut FFI_ArrowSchema,
) -> c_int {
    // SAFETY: the C interface calls this on a live stream of ours.
    let Some(private) = (unsafe { private(stream) }) else {
        return libc::EINVAL;
    };
    if out.is_null() {
        return private.fail("get_schema: NULL output".to_string(), libc::EINVAL);
    }
    match FFI_ArrowSchema::try_from(private.schema.as_ref()) {
        Ok(schema) => {
            // SAFETY: `out` is consumer memory for one schema, possibly
            // uninitialised: written without dropping.
            unsafe { std::ptr::write(out, schema) };
            0
        }
        Err(e) => private.fail(format!("get_schema: {e}"), libc::EINVAL),
    }
}

unsafe extern "C" fn get_next(
    stream: *mut ArrowDeviceArrayStream,
    out: *mut ArrowDeviceArray,
) -> c_int {
    // SAFETY: the C interface calls this on a live stream of ours.
    let Some(private) = (unsafe { private(stream) }) else {
        return libc::EINVAL;
    };
    if out.is_null() {
        return private.fail("get_next: NULL output".to_string(), libc::EINVAL);
    }
    let next = crate::border::catch(|| private.next_array());
    match next {
        Ok(Ok(array)) => {
            // SAFETY: `out` is consumer memory for one array, possibly
            // uninitialised: written without dropping.
            unsafe { array.write_to(out) };
            0
        }
        Ok(Err((message, code))) => private.fail(message, code),
        Err(_) => {
            private.batches = Box::new(std::iter::empty());
            private.fail(
                "the batch iterator panicked; the stream has ended".to_string(),
                libc::EIO,
            )
        }
    }
}

unsafe extern "C" fn get_last_error(stream: *mut ArrowDeviceArrayStream) -> *const c_char {
    // SAFETY: the C interface calls this on a live stream of ours.
    match unsafe { private(stream) } {
        Some(private) => private
            .last_error
            .as_ref()
            .map_or(std::ptr::null(), |e| e.as_ptr()),
        None => std::ptr::null(),
    }
}

unsafe extern "C" fn release_stream(stream: *mut ArrowDeviceArrayStream) {
    // SAFETY: the C interface passes a stream of ours.
    let Some(stream) = (unsafe { stream.as_mut() }) else {
        return;
    };
    if stream.release.is_none() {
        return;
    }
    let private = std::mem::replace(&mut stream.private_data, std::ptr::null_mut());
    stream.release = None;
    if !private.is_null() {
        // A panic while dropping the iterator must not unwind into C.
        let _ = crate::border::catch(|| {
            // SAFETY: created by Box::into_raw in export_device_stream, freed
            // once (the pointer was just cleared).
            drop(unsafe { Box::from_raw(private.cast::<StreamPrivate>()) });
        });
    }
}

/// Reads a C device stream (any producer's) as an iterator of device batches.
///
/// Owns the stream and releases it on drop. Each `next` calls `get_next`
/// and imports the array ([`import_device_batch_with_schema`]); an error code
/// becomes [`DeviceArrayError::Stream`] with `get_last_error`'s text, and
/// ends the iteration.
#[derive(Debug)]
pub struct DeviceStreamReader {
    stream: ArrowDeviceArrayStream,
    schema: SchemaRef,
    done: bool,
}

impl DeviceStreamReader {
    /// Takes `stream` and reads its schema.
    ///
    /// # Safety
    /// `stream` must follow the C Device Data Interface (valid callbacks,
    /// arrays valid for [`import_device_batch_with_schema`]).
    pub unsafe fn try_new(stream: ArrowDeviceArrayStream) -> Result<DeviceStreamReader> {
        let Some(get_schema) = stream.get_schema.filter(|_| !stream.is_released()) else {
            return Err(DeviceArrayError::Released);
        };
        let mut reader = DeviceStreamReader {
            stream,
            schema: SchemaRef::new(Schema::empty()),
            done: false,
        };
        let mut schema = FFI_ArrowSchema::empty();
        // SAFETY: the stream is live; `schema` is a valid output.
        let code = unsafe { get_schema(&mut reader.stream, &mut schema) };
        if code != 0 {
            return Err(reader.stream_error("get_schema", code));
        }
        reader.schema = SchemaRef::new(Schema::try_from(&schema)?);
        Ok(reader)
    }

    /// Moves the stream out of `ptr` (leaving it released) and reads it.
    ///
    /// # Safety
    /// `ptr` points to a valid stream; as for [`DeviceStreamReader::try_new`].
    pub unsafe fn from_raw(ptr: *mut ArrowDeviceArrayStream) -> Result<DeviceStreamReader> {
        // SAFETY: the caller's contract.
        unsafe { DeviceStreamReader::try_new(ArrowDeviceArrayStream::from_raw(ptr)) }
    }

    /// The stream's schema.
    pub fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }

    /// The device type the stream says its arrays are on.
    pub fn device_type(&self) -> ArrowDeviceType {
        self.stream.device_type
    }

    fn stream_error(&mut self, callback: &'static str, code: c_int) -> DeviceArrayError {
        let message = match self.stream.get_last_error {
            Some(last) => {
                // SAFETY: called right after a failed call on this stream,
                // as the spec allows; the stream is ours and not released.
                let text = unsafe { last(&mut self.stream) };
                if text.is_null() {
                    String::new()
                } else {
                    // SAFETY: a NUL-terminated string valid until the next call.
                    unsafe { CStr::from_ptr(text) }
                        .to_string_lossy()
                        .into_owned()
                }
            }
            None => String::new(),
        };
        DeviceArrayError::Stream {
            callback,
            code,
            message,
        }
    }
}

impl Iterator for DeviceStreamReader {
    type Item = Result<DeviceBatch>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let Some(get_next) = self.stream.get_next.filter(|_| !self.stream.is_released()) else {
            self.done = true;
            return Some(Err(DeviceArrayError::Released));
        };
        let mut array = ArrowDeviceArray::empty();
        // SAFETY: the stream is live; `array` is a valid output (released,
        // so the producer overwriting it leaks nothing).
        let code = unsafe { get_next(&mut self.stream, &mut array) };
        if code != 0 {
            self.done = true;
            return Some(Err(self.stream_error("get_next", code)));
        }
        if array.is_released() {
            self.done = true;
            return None;
        }
        if array.device_type != self.stream.device_type {
            self.done = true;
            return Some(Err(DeviceArrayError::Import(format!(
                "an array on {} in a stream on {}",
                array.device_type, self.stream.device_type
            ))));
        }
        // SAFETY: `try_new`'s contract covers the stream's arrays.
        Some(unsafe { import_device_batch_with_schema(self.schema.clone(), array) })
    }
}
