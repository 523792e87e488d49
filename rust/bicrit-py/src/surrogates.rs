//! Bindings of the surrogates family: `bicrit._native.Surrogate`, a built-in ψ by name.

use bicrit_core::{error::check_finite, Error};
use bicrit_surrogates::Surrogate;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{self, to_py};

/// Two arrays (∂ψ/∂h, ∂ψ/∂g).
type ArrayPair<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

/// A built-in surrogate ψ(h, g).
#[pyclass(name = "Surrogate", module = "bicrit._native", frozen, subclass)]
pub struct PySurrogateBuiltin {
    pub(crate) inner: Box<dyn Surrogate>,
}

fn eval_arrays(
    s: &dyn Surrogate,
    h: &[f64],
    g: &[f64],
    f: impl Fn(&dyn Surrogate, f64, f64) -> (f64, f64),
) -> bicrit_core::Result<(Vec<f64>, Vec<f64>)> {
    if h.len() != g.len() {
        return Err(Error::input(format!("h has {} values but g has {}", h.len(), g.len())));
    }
    check_finite("h", h)?;
    check_finite("g", g)?;
    let mut a = Vec::with_capacity(h.len());
    let mut b = Vec::with_capacity(h.len());
    for (i, (&x, &y)) in h.iter().zip(g).enumerate() {
        let (u, v) = f(s, x, y);
        if u.is_nan() || v.is_nan() {
            return Err(Error::input(format!(
                "surrogate '{}' is undefined at (h, g) = ({x}, {y}) (position {i}): outside its domain",
                s.name()
            )));
        }
        a.push(u);
        b.push(v);
    }
    Ok((a, b))
}

#[pymethods]
impl PySurrogateBuiltin {
    /// Builds the surrogate `name` with parameters `params` (a dict of floats).
    #[new]
    #[pyo3(signature = (name, params=None))]
    fn new(py: Python<'_>, name: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let mut p: Vec<(String, f64)> = Vec::new();
        if let Some(d) = params {
            for (k, v) in d.iter() {
                let key: String = k.extract()?;
                let val: f64 = v.extract().map_err(|_| {
                    to_py(
                        py,
                        Error::param(format!(
                            "surrogate '{name}': parameter {key} must be a number, got {v}"
                        )),
                    )
                })?;
                p.push((key, val));
            }
        }
        let refs: Vec<(&str, f64)> = p.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        let inner = bicrit_surrogates::by_name(name, &refs).map_err(|e| to_py(py, e))?;
        Ok(PySurrogateBuiltin { inner })
    }

    /// Registry name.
    #[getter]
    fn name(&self) -> String {
        self.inner.name().to_string()
    }

    /// Parameters as a dict.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in self.inner.params() {
            d.set_item(k, v)?;
        }
        Ok(d)
    }

    /// s when ψ = (h + s)·g exactly, else None.
    #[getter]
    fn product_shift(&self) -> Option<f64> {
        self.inner.product_shift()
    }

    /// Whether ψ is affine in h.
    #[getter]
    fn affine_in_h(&self) -> bool {
        self.inner.affine_in_h()
    }

    /// Whether ψ is convex in h (the loss convex in w).
    #[getter]
    fn convex_in_h(&self) -> bool {
        self.inner.convex_in_h()
    }

    /// ψ on 1-D arrays.
    fn value_array<'py>(
        &self,
        py: Python<'py>,
        h: PyReadonlyArray1<'py, f64>,
        g: PyReadonlyArray1<'py, f64>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let (h, g) = (h.as_slice()?.to_vec(), g.as_slice()?.to_vec());
        let s = self.inner.as_ref();
        let (v, _) = errors::native(py, || eval_arrays(s, &h, &g, |s, x, y| (s.value(x, y), 0.0)))?;
        Ok(PyArray1::from_vec(py, v))
    }

    /// (∂ψ/∂h, ∂ψ/∂g) on 1-D arrays.
    fn grad_array<'py>(
        &self,
        py: Python<'py>,
        h: PyReadonlyArray1<'py, f64>,
        g: PyReadonlyArray1<'py, f64>,
    ) -> PyResult<ArrayPair<'py>> {
        let (h, g) = (h.as_slice()?.to_vec(), g.as_slice()?.to_vec());
        let s = self.inner.as_ref();
        let (a, b) = errors::native(py, || eval_arrays(s, &h, &g, |s, x, y| s.grad(x, y)))?;
        Ok((PyArray1::from_vec(py, a), PyArray1::from_vec(py, b)))
    }

    fn __repr__(&self) -> String {
        let p: Vec<String> = self.inner.params().iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("Surrogate('{}'{}{})", self.inner.name(), if p.is_empty() { "" } else { ", " }, p.join(", "))
    }
}

/// Adds the surrogate classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySurrogateBuiltin>()?;
    m.add("SURROGATE_NAMES", bicrit_surrogates::NAMES.to_vec())?;
    Ok(())
}
