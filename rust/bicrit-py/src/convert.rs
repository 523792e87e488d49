//! Argument conversions shared by the bindings: CSR tuples, weight vectors, term dictionaries.
//! The Python layer normalises inputs first (scipy → `(indptr, indices, data, n_cols)` with
//! int64/int32/float64 arrays); here they are checked again, because native code trusts them.

use bicrit_core::{CsrMatrix, Terms};
use numpy::{PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::errors;

/// Reads `(indptr, indices, data, n_cols)` into an owned, validated [`CsrMatrix`].
pub fn csr_from_py(py: Python<'_>, obj: &Bound<'_, PyAny>, what: &str) -> PyResult<CsrMatrix> {
    let t = obj.cast::<PyTuple>().map_err(|_| {
        PyValueError::new_err(format!("{what}: expected a CSR tuple (indptr, indices, data, n_cols)"))
    })?;
    if t.len() != 4 {
        return Err(PyValueError::new_err(format!("{what}: CSR tuple must have 4 items, got {}", t.len())));
    }
    let indptr: PyReadonlyArray1<'_, i64> = t.get_item(0)?.extract()?;
    let indices: PyReadonlyArray1<'_, i32> = t.get_item(1)?.extract()?;
    let data: PyReadonlyArray1<'_, f64> = t.get_item(2)?.extract()?;
    let n_cols: usize = t.get_item(3)?.extract()?;
    let m = CsrMatrix::new(
        what,
        indptr.as_array().to_vec(),
        indices.as_array().to_vec(),
        data.as_array().to_vec(),
        n_cols,
    );
    m.map_err(|e| errors::to_py(py, e))
}

/// Borrows a weight vector, checking its length and that it is finite.
pub fn weights<'a>(py: Python<'_>, w: &'a PyReadonlyArray1<'_, f64>, expected: usize) -> PyResult<&'a [f64]> {
    if w.len() != expected {
        return Err(errors::to_py(
            py,
            bicrit_core::Error::input(format!(
                "w has length {} but the joint feature size is {expected}",
                w.len()
            )),
        ));
    }
    let s = w.as_slice().map_err(|_| PyValueError::new_err("w must be a contiguous float64 array"))?;
    bicrit_core::error::check_finite("w", s).map_err(|e| errors::to_py(py, e))?;
    Ok(s)
}

/// Reads a `{name: coefficient}` dictionary over [`Terms::NAMES`]; unknown names are an error.
pub fn terms_from_dict(py: Python<'_>, d: Option<&Bound<'_, PyDict>>) -> PyResult<Terms> {
    let mut a = [0.0; 3];
    if let Some(d) = d {
        for (k, v) in d.iter() {
            let name: String = k.extract()?;
            let Some(pos) = Terms::NAMES.iter().position(|n| *n == name) else {
                return Err(errors::to_py(
                    py,
                    bicrit_core::Error::input(format!(
                        "unknown term {name:?}; the terms are {}",
                        Terms::NAMES.join(", ")
                    )),
                ));
            };
            let value: f64 = v.extract()?;
            if !value.is_finite() {
                return Err(errors::to_py(
                    py,
                    bicrit_core::Error::input(format!("coefficient of {name:?} is not finite ({value})")),
                ));
            }
            a[pos] = value;
        }
    }
    Ok(Terms::from_array(a))
}

/// Terms as a `{name: value}` dictionary.
pub fn terms_to_dict<'py>(py: Python<'py>, t: &Terms) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (n, v) in Terms::NAMES.iter().zip(t.to_array()) {
        d.set_item(n, v)?;
    }
    Ok(d)
}

/// Runs `f` on a rayon pool of `n_jobs` threads (`None`/≤ 0: the global pool).
pub fn with_threads<T: Send>(n_jobs: Option<i64>, f: impl FnOnce() -> T + Send) -> bicrit_core::Result<T> {
    match n_jobs {
        Some(n) if n > 0 => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n as usize)
                .build()
                .map_err(|e| bicrit_core::Error::solver(format!("cannot start {n} threads: {e}")))?;
            Ok(pool.install(f))
        }
        _ => Ok(f()),
    }
}
