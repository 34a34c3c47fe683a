//! gdscan's typed errors as Python exceptions: one class per layer, all
//! subclasses of `gdscan.GdscanError`, the message carrying the error and
//! its sources.

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    _gdscan,
    GdscanError,
    PyException,
    "Base class of gdscan's errors."
);
create_exception!(_gdscan, ConfigError, GdscanError, "A setting is invalid.");
create_exception!(
    _gdscan,
    CudaError,
    GdscanError,
    "The CUDA driver is missing or a call failed."
);
create_exception!(
    _gdscan,
    CuFileError,
    GdscanError,
    "cuFile is missing or a call failed."
);
create_exception!(
    _gdscan,
    IoError,
    GdscanError,
    "A file cannot be opened, read or written."
);
create_exception!(
    _gdscan,
    StoreError,
    GdscanError,
    "A location leads nowhere or a store request failed."
);
create_exception!(
    _gdscan,
    ParquetError,
    GdscanError,
    "Not valid Parquet, or a scan that does not fit the file."
);
create_exception!(_gdscan, DecodeError, GdscanError, "The GPU decoder failed.");

/// `error` and its sources, `": "`-separated, each cause once.
pub(crate) use gdscan::error::chain;

/// The Python exception for a crate error, by layer.
pub(crate) fn to_py(error: impl Into<gdscan::Error>) -> PyErr {
    let error: gdscan::Error = error.into();
    let text = chain(&error);
    match error {
        gdscan::Error::Config(_) => ConfigError::new_err(text),
        gdscan::Error::Cuda(_) => CudaError::new_err(text),
        gdscan::Error::CuFile(_) => CuFileError::new_err(text),
        gdscan::Error::Io(_) => IoError::new_err(text),
        gdscan::Error::Store(_) => StoreError::new_err(text),
        gdscan::Error::Parquet(_) => ParquetError::new_err(text),
        gdscan::Error::Decode(_) => DecodeError::new_err(text),
        _ => GdscanError::new_err(text),
    }
}

/// The Python exception for a decoder error.
pub(crate) fn decode_to_py(error: gdscan::decode::scan::DecodeError) -> PyErr {
    // An I/O, store or Parquet failure under the decoder keeps its own class.
    to_py(gdscan::Error::decode(error))
}

/// The Python exception for an error of the device arrays.
pub(crate) fn array_to_py(error: gdscan::decode::array::DeviceArrayError) -> PyErr {
    DecodeError::new_err(chain(&error))
}

/// Registers the exception classes in the module.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("GdscanError", py.get_type::<GdscanError>())?;
    m.add("ConfigError", py.get_type::<ConfigError>())?;
    m.add("CudaError", py.get_type::<CudaError>())?;
    m.add("CuFileError", py.get_type::<CuFileError>())?;
    m.add("IoError", py.get_type::<IoError>())?;
    m.add("StoreError", py.get_type::<StoreError>())?;
    m.add("ParquetError", py.get_type::<ParquetError>())?;
    m.add("DecodeError", py.get_type::<DecodeError>())?;
    Ok(())
}
