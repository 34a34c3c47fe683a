//! Registering device buffers with cuFile (`cuFileBufRegister`): optional,
//! it lets cuFile pin the buffer once instead of per request.

use super::error::CuFileError;
use super::error::Result;
use super::library::api;
use super::status::check;
use crate::cuda::DeviceBuffer;

/// Registers `buf` with cuFile until [`deregister_buffer`] is called.
/// Prefer [`BufferRegistration`], which deregisters on drop.
pub(crate) fn register_buffer(buf: &DeviceBuffer) -> Result<()> {
    let api = api().map_err(CuFileError::Unavailable)?;
    buf.device().bind()?;
    // SAFETY: a live device allocation of `len` bytes.
    check("cuFileBufRegister", unsafe {
        (api.buf_register)(buf.device_ptr() as *const _, buf.len(), 0)
    })?;
    Ok(())
}

/// Undoes [`register_buffer`].
pub(crate) fn deregister_buffer(buf: &DeviceBuffer) -> Result<()> {
    let api = api().map_err(CuFileError::Unavailable)?;
    buf.device().bind()?;
    // SAFETY: the pointer was registered by `register_buffer`.
    check("cuFileBufDeregister", unsafe {
        (api.buf_deregister)(buf.device_ptr() as *const _)
    })?;
    Ok(())
}

/// A scoped registration: the buffer is registered for the guard's lifetime.
#[derive(Debug)]
pub struct BufferRegistration<'a> {
    buf: &'a DeviceBuffer,
}

impl<'a> BufferRegistration<'a> {
    /// Registers `buf`.
    pub fn new(buf: &'a DeviceBuffer) -> Result<Self> {
        register_buffer(buf)?;
        Ok(BufferRegistration { buf })
    }
}

impl Drop for BufferRegistration<'_> {
    fn drop(&mut self) {
        if let Err(e) = deregister_buffer(self.buf) {
            tracing::warn!(error = %e, "cuFileBufDeregister failed");
        }
    }
}
