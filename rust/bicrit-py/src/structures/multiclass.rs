//! Bindings of the `multiclass` structure.

use bicrit_structures::Multiclass;
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;

use super::{AnyStructure, BindStructure, NativeStructure};
use crate::convert::csr_from_py;
use crate::errors;

impl BindStructure for Multiclass {
    fn data_from_py(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Self::Data> {
        csr_from_py(py, x, "X")
    }

    fn one_from_py(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Self::Data> {
        let m = csr_from_py(py, x, "x")?;
        if m.n_rows() != 1 {
            return Err(errors::to_py(
                py,
                bicrit_core::Error::input(format!("x must be one instance, got {} rows", m.n_rows())),
            ));
        }
        Ok(m)
    }

    fn label_from_py(&self, py: Python<'_>, y: &Bound<'_, PyAny>) -> PyResult<usize> {
        let v: i64 = y.extract()?;
        if v < 0 || v as usize >= self.n_classes() {
            return Err(errors::to_py(
                py,
                bicrit_core::Error::input(format!("label {v} outside the classes 0..{}", self.n_classes())),
            ));
        }
        Ok(v as usize)
    }

    fn label_to_py(&self, py: Python<'_>, y: &usize) -> PyResult<Py<PyAny>> {
        Ok((*y as i64).into_pyobject(py)?.into_any().unbind())
    }

    fn labels_from_py(&self, py: Python<'_>, ys: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
        let arr: PyReadonlyArray1<'_, i64> = ys.extract()?;
        arr.as_array().iter().map(|&v| self.label_from_py(py, &v.into_pyobject(py)?.into_any())).collect()
    }

    fn labels_to_py(&self, py: Python<'_>, ys: &[usize]) -> PyResult<Py<PyAny>> {
        let v: Vec<i64> = ys.iter().map(|&y| y as i64).collect();
        Ok(v.into_pyarray(py).into_any().unbind())
    }
}

/// The `multiclass` structure over `n_classes` classes and `n_features` features.
#[pyfunction]
pub fn multiclass_structure(
    py: Python<'_>,
    n_classes: usize,
    n_features: usize,
) -> PyResult<NativeStructure> {
    let s = Multiclass::new(n_classes, n_features).map_err(|e| errors::to_py(py, e))?;
    Ok(NativeStructure::wrap(AnyStructure::Multiclass(s)))
}
