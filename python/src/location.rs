//! Where a read's bytes come from: a local path through the engine of
//! `gdscan.defaults`, a URL through its store.

use std::sync::Arc;

use gdscan::store::{LocalSource, Source, StoreOptions};
use pyo3::prelude::*;

use crate::errors::to_py;

/// The file's location: a local path goes through the engine with the
/// settings of `gdscan.defaults`; a URL through its store.
pub(crate) fn source_of(location: &str) -> PyResult<Arc<dyn Source>> {
    if location.contains("://") {
        let options = StoreOptions::from_env().map_err(to_py)?;
        return gdscan::store::open(location, &options).map_err(to_py);
    }
    let engine = crate::defaults::engine()?;
    let source = LocalSource::open(engine, location).map_err(to_py)?;
    Ok(Arc::new(source))
}
