//! A surrogate written in Python, seen by the Rust searches through the [`Surrogate`] trait.
//!
//! Protocol (any object): `value(h, g) -> float` and `grad(h, g) -> (float, float)` (both may be
//! numpy-vectorised; they are called with Python floats), and optionally `name`,
//! `product_shift` (a number or None), `affine_in_h` (bool, default False), `convex_in_h` (bool,
//! default True) and `tangent(h, g)`. An exception
//! raised inside is kept ([`crate::errors::stash`]) and re-raised unchanged at the boundary.

use bicrit_core::{Error, Result};
use bicrit_surrogates::Surrogate;
use pyo3::prelude::*;

use crate::errors::{plugin_type_error, stash};
use crate::surrogates::PySurrogateBuiltin;

/// A surrogate from Python, owned: a built-in (`bicrit._native.Surrogate` or its subclass
/// `bicrit.Surrogate`) or the adapter around a Python-written one. Searches and learners borrow
/// it as `&dyn Surrogate`.
pub enum SurrogateRef {
    /// A built-in: runs without the GIL.
    Builtin(Py<PySurrogateBuiltin>),
    /// A Python object: every call takes the GIL.
    Python(PySurrogate),
}

impl SurrogateRef {
    /// Resolves a Python surrogate object (see the enum's documentation).
    pub fn from_py(surrogate: &Bound<'_, PyAny>) -> PyResult<Self> {
        if let Ok(b) = surrogate.cast::<PySurrogateBuiltin>() {
            return Ok(SurrogateRef::Builtin(b.clone().unbind()));
        }
        Ok(SurrogateRef::Python(PySurrogate::new(surrogate)?))
    }

    /// The surrogate as the core sees it.
    pub fn get(&self) -> &dyn Surrogate {
        match self {
            SurrogateRef::Builtin(b) => b.get().inner.as_ref(),
            SurrogateRef::Python(p) => p,
        }
    }
}

/// A Python surrogate.
pub struct PySurrogate {
    obj: Py<PyAny>,
    name: String,
    shift: Option<f64>,
    affine: bool,
    convex: bool,
    has_tangent: bool,
}

impl PySurrogate {
    /// Reads the optional attributes once; fails when `value` or `grad` is missing.
    pub fn new(obj: &Bound<'_, PyAny>) -> PyResult<Self> {
        for m in ["value", "grad"] {
            if !obj.hasattr(m)? {
                return Err(crate::errors::to_py(
                    obj.py(),
                    Error::input(format!(
                        "a surrogate must have methods value(h, g) and grad(h, g); {} has no '{m}'",
                        obj.get_type().name()?
                    )),
                ));
            }
        }
        let name = match obj.getattr_opt("name")? {
            Some(n) => n.str()?.to_string(),
            None => obj.get_type().name()?.to_string(),
        };
        let shift = match obj.getattr_opt("product_shift")? {
            Some(v) if !v.is_none() => Some(v.extract::<f64>()?),
            _ => None,
        };
        let affine = match obj.getattr_opt("affine_in_h")? {
            Some(v) => v.is_truthy()?,
            None => false,
        };
        let convex = match obj.getattr_opt("convex_in_h")? {
            Some(v) => v.is_truthy()?,
            None => true,
        };
        let has_tangent = obj.hasattr("tangent")?;
        Ok(PySurrogate { obj: obj.clone().unbind(), name, shift, affine, convex, has_tangent })
    }

    fn pair(&self, method: &str, h: f64, g: f64) -> Result<(f64, f64)> {
        Python::attach(|py| {
            let r = self.obj.bind(py).call_method1(method, (h, g)).map_err(stash)?;
            r.extract::<(f64, f64)>().map_err(|_| {
                plugin_type_error(&format!("surrogate '{}': {method}(h, g)", self.name), "(float, float)", &r)
            })
        })
    }
}

impl Surrogate for PySurrogate {
    fn name(&self) -> &str {
        &self.name
    }
    fn value(&self, h: f64, g: f64) -> f64 {
        self.try_value(h, g).unwrap_or(f64::NAN)
    }
    fn grad(&self, h: f64, g: f64) -> (f64, f64) {
        self.try_grad(h, g).unwrap_or((f64::NAN, f64::NAN))
    }
    fn product_shift(&self) -> Option<f64> {
        self.shift
    }
    fn affine_in_h(&self) -> bool {
        self.affine
    }
    fn convex_in_h(&self) -> bool {
        self.convex
    }
    fn tangent(&self, h: f64, g: f64) -> Option<f64> {
        if !self.has_tangent {
            return None;
        }
        Python::attach(|py| self.obj.bind(py).call_method1("tangent", (h, g)).ok()?.extract::<f64>().ok())
    }
    fn try_value(&self, h: f64, g: f64) -> Result<f64> {
        Python::attach(|py| {
            let r = self.obj.bind(py).call_method1("value", (h, g)).map_err(stash)?;
            r.extract::<f64>().map_err(|_| {
                plugin_type_error(&format!("surrogate '{}': value(h, g)", self.name), "a float", &r)
            })
        })
    }
    fn try_grad(&self, h: f64, g: f64) -> Result<(f64, f64)> {
        self.pair("grad", h, g)
    }
}
