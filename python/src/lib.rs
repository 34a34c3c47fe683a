//! The `gdscan._gdscan` extension module: gdscan from Python. The Python
//! package `gdscan` (python/gdscan/) wraps it.

#![warn(clippy::undocumented_unsafe_blocks)]

mod buffer;
mod cufile;
mod defaults;
mod dlpack;
mod dnf;
mod errors;
mod host;
mod location;
mod read;
mod table;

use pyo3::prelude::*;

#[pymodule]
fn _gdscan(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<cufile::CuFile>()?;
    m.add_class::<cufile::IOFuture>()?;
    m.add_class::<table::Table>()?;
    m.add_class::<table::Column>()?;
    m.add_class::<read::Scanner>()?;
    m.add_function(wrap_pyfunction!(read::_read_parquet, m)?)?;
    m.add_function(wrap_pyfunction!(read::_scan, m)?)?;
    m.add_function(wrap_pyfunction!(read::cuda_available, m)?)?;
    m.add_function(wrap_pyfunction!(defaults::get, m)?)?;
    m.add_function(wrap_pyfunction!(defaults::set_one, m)?)?;
    m.add("SETTINGS", defaults::NAMES.to_vec())?;
    Ok(())
}
