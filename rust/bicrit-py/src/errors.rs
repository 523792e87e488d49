//! The one place where Rust errors and panics become Python exceptions.
//!
//! Exception classes are defined in Python (`bicrit/errors.py`, where they can inherit from both
//! `BicritError` and `ValueError`); here each [`bicrit_core::Error`] variant is mapped to one.
//! Errors raised by Python plugins called back from Rust are stashed with [`stash`] and the
//! original exception is re-raised unchanged at the boundary.

use std::collections::HashMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use bicrit_core::Error;
use pyo3::prelude::*;
use pyo3::types::PyModule;

static NEXT_ID: AtomicU64 = AtomicU64::new(1);
static STASHED: Mutex<Option<HashMap<u64, PyErr>>> = Mutex::new(None);

/// Keeps a Python exception raised inside a callback and returns the Rust error that carries it
/// through the core; [`to_py`] re-raises the original.
#[allow(dead_code)] // used by the plugin adapters
pub fn stash(err: PyErr) -> Error {
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let message = err.to_string();
    let mut guard = STASHED.lock().unwrap_or_else(|p| p.into_inner());
    guard.get_or_insert_with(HashMap::new).insert(id, err);
    Error::Callback { id, message }
}

/// A `bicrit.errors.PluginTypeError` carried through the core like a plugin's own exception:
/// a callback answered with a value of the wrong type. `plugin` names the object and the method,
/// `expected` the type, `got` what came back.
pub fn plugin_type_error(plugin: &str, expected: &str, got: &Bound<'_, PyAny>) -> Error {
    let py = got.py();
    let mut shown = got.repr().map(|r| r.to_string()).unwrap_or_else(|_| "?".into());
    if shown.chars().count() > 60 {
        shown = shown.chars().take(57).collect::<String>() + "...";
    }
    let ty = got.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "?".into());
    stash(exception(py, "PluginTypeError", format!("{plugin} must return {expected}; got {ty} {shown}")))
}

fn exception(py: Python<'_>, class: &str, message: String) -> PyErr {
    let made = PyModule::import(py, "bicrit.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|cls| cls.call1((message.clone(),)));
    match made {
        Ok(exc) => PyErr::from_value(exc),
        Err(e) => e,
    }
}

/// Converts a core error into the matching `bicrit.errors` exception.
pub fn to_py(py: Python<'_>, err: Error) -> PyErr {
    match err {
        Error::InvalidInput(m) => exception(py, "InvalidInputError", m),
        Error::InvalidParameter(m) => exception(py, "InvalidParameterError", m),
        Error::Incompatible(m) => exception(py, "IncompatibleError", m),
        Error::Unsupported(m) => exception(py, "UnsupportedQueryError", m),
        Error::Solver(m) => exception(py, "SolverError", m),
        Error::Callback { id, message } => {
            let mut guard = STASHED.lock().unwrap_or_else(|p| p.into_inner());
            match guard.as_mut().and_then(|m| m.remove(&id)) {
                Some(original) => original,
                None => exception(py, "PluginError", message),
            }
        }
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic payload".to_string()
    }
}

/// Runs native work with the GIL released, turning errors and panics into Python exceptions.
pub fn native<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    T: Send,
    F: FnOnce() -> bicrit_core::Result<T> + Send,
{
    match py.detach(move || catch_unwind(AssertUnwindSafe(f))) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_py(py, e)),
        Err(payload) => Err(panic_to_py(py, payload)),
    }
}

/// The `bicrit.errors.NativePanic` for a panic caught in native code.
pub fn panic_to_py(py: Python<'_>, payload: Box<dyn std::any::Any + Send>) -> PyErr {
    exception(
        py,
        "NativePanic",
        format!("internal error in bicrit's native code (please report it): {}", panic_message(payload)),
    )
}

/// Like [`native`] but keeps the GIL: for work that calls back into Python (plugins).
#[allow(dead_code)] // used by the plugin adapters
pub fn with_gil<T, F>(py: Python<'_>, f: F) -> PyResult<T>
where
    F: FnOnce() -> bicrit_core::Result<T>,
{
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(to_py(py, e)),
        Err(payload) => Err(panic_to_py(py, payload)),
    }
}
