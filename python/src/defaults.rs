//! `gdscan.defaults`: the engine's settings under KvikIO's names, read
//! from the `KVIKIO_*` environment first, changed at run time by
//! `set(...)`. Files opened afterwards use an engine with the new settings;
//! files already open keep theirs.

use std::sync::{Arc, Mutex};

use gdscan::{CompatMode, Engine, Settings};
use pyo3::exceptions::{PyKeyError, PyTypeError};
use pyo3::prelude::*;

use crate::errors::to_py;

struct State {
    settings: Settings,
    engine: Option<Arc<Engine>>,
}

static STATE: Mutex<Option<State>> = Mutex::new(None);

/// The settings' names, as KvikIO spells them.
pub(crate) const NAMES: [&str; 7] = [
    "compat_mode",
    "num_threads",
    "task_size",
    "gds_threshold",
    "bounce_buffer_size",
    "auto_direct_io_read",
    "auto_direct_io_write",
];

fn with_state<R>(f: impl FnOnce(&mut State) -> PyResult<R>) -> PyResult<R> {
    let mut guard = STATE.lock().unwrap_or_else(|e| e.into_inner());
    if guard.is_none() {
        let settings = Settings::from_env().map_err(|e| to_py(e))?;
        *guard = Some(State {
            settings,
            engine: None,
        });
    }
    f(guard.as_mut().expect("initialised above"))
}

/// The engine for new files: made on first use from the current settings.
pub(crate) fn engine() -> PyResult<Arc<Engine>> {
    with_state(|state| {
        if let Some(engine) = &state.engine {
            return Ok(engine.clone());
        }
        let engine = Engine::new(state.settings.clone()).map_err(to_py)?;
        state.engine = Some(engine.clone());
        Ok(engine)
    })
}

/// The value of setting `name`.
#[pyfunction]
pub(crate) fn get(py: Python<'_>, name: &str) -> PyResult<Py<PyAny>> {
    with_state(|state| {
        let s = &state.settings;
        Ok(match name {
            "compat_mode" => s
                .compat_mode
                .to_string()
                .into_pyobject(py)?
                .into_any()
                .unbind(),
            "num_threads" => s.num_threads.into_pyobject(py)?.into_any().unbind(),
            "task_size" => s.task_size.into_pyobject(py)?.into_any().unbind(),
            "gds_threshold" => s.gds_threshold.into_pyobject(py)?.into_any().unbind(),
            "bounce_buffer_size" => s.bounce_buffer_size.into_pyobject(py)?.into_any().unbind(),
            "auto_direct_io_read" => s
                .auto_direct_io_read
                .into_pyobject(py)?
                .to_owned()
                .into_any()
                .unbind(),
            "auto_direct_io_write" => s
                .auto_direct_io_write
                .into_pyobject(py)?
                .to_owned()
                .into_any()
                .unbind(),
            other => return Err(unknown(other)),
        })
    })
}

fn unknown(name: &str) -> PyErr {
    PyKeyError::new_err(format!(
        "unknown setting {name:?} (gdscan has: {})",
        NAMES.join(", ")
    ))
}

/// Sets one setting; the next file opened uses a new engine with it. A bad
/// value is a `ConfigError` and changes nothing.
#[pyfunction]
pub(crate) fn set_one(name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
    with_state(|state| {
        let mut s = state.settings.clone();
        let int = |v: &Bound<'_, PyAny>| -> PyResult<usize> {
            v.extract::<usize>().map_err(|_| {
                PyTypeError::new_err(format!("{name} takes a non-negative int, got {v}"))
            })
        };
        match name {
            "compat_mode" => {
                let text = if let Ok(b) = value.extract::<bool>() {
                    if b { "ON" } else { "OFF" }.to_string()
                } else if let Ok(t) = value.extract::<String>() {
                    t
                } else {
                    // KvikIO's CompatMode enum members have a name.
                    value.getattr("name")?.extract::<String>()?
                };
                s.compat_mode = text.parse::<CompatMode>().map_err(|e| to_py(e))?;
            }
            "num_threads" => s.num_threads = int(value)?,
            "task_size" => s.task_size = int(value)?,
            "gds_threshold" => s.gds_threshold = int(value)?,
            "bounce_buffer_size" => s.bounce_buffer_size = int(value)?,
            "auto_direct_io_read" => s.auto_direct_io_read = value.is_truthy()?,
            "auto_direct_io_write" => s.auto_direct_io_write = value.is_truthy()?,
            other => return Err(unknown(other)),
        }
        let checked = Settings::builder()
            .compat_mode(s.compat_mode)
            .num_threads(s.num_threads)
            .task_size(s.task_size)
            .gds_threshold(s.gds_threshold)
            .bounce_buffer_size(s.bounce_buffer_size)
            .auto_direct_io_read(s.auto_direct_io_read)
            .auto_direct_io_write(s.auto_direct_io_write)
            .device_read_path(s.device_read_path)
            .cufile(s.cufile.clone())
            .build()
            .map_err(|e| to_py(e))?;
        if checked != state.settings {
            state.settings = checked;
            state.engine = None;
        }
        Ok(())
    })
}
