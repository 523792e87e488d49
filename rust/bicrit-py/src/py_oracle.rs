//! An oracle written in Python, seen by the Rust searches through [`LambdaOracle`].
//!
//! Protocol (documented for users in `bicrit.searches`):
//! * `query(lam, ban=(), k=1, cone=None)` returns a list of `(label, h, g)`, best first, at most
//!   `k` long (empty when no label qualifies). `lam` is a float; `0.0` and `math.inf` are the
//!   lexicographic queries (largest h then g; largest g then h). `ban` is a tuple of labels
//!   previously returned; `cone` is a `bicrit.searches.Cone(lo, hi, lo_closed, hi_closed)` on
//!   (h + 1, g).
//! * `capabilities` (optional attribute): a dict or object with booleans `ban`, `kbest`, `cone`,
//!   `relaxed`, `frontier` (missing: False).
//! * `gold()` (optional): the gold label as `(label, h, g)`, or None.
//! * `evaluate(labels)` (optional): the current `(h, g)` of earlier labels (warm starts).
//! * `frontier()` (with the `frontier` capability): a list of `(label, h, g)`, one label of
//!   largest h for every attainable g (the `frontier` search).
//!
//! Labels are opaque Python objects. Exceptions raised inside are re-raised unchanged.

use std::sync::Arc;

use bicrit_core::{Capabilities, Error, Lambda, LambdaOracle, PlaneQuery, Point, Result};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};

use crate::errors::{plugin_type_error, stash};

/// An opaque Python label (cheap to clone, no GIL needed).
#[derive(Clone, Debug)]
pub struct PyLabel(pub Arc<Py<PyAny>>);

/// A Python oracle (used with the GIL held).
pub struct PyOracle<'py> {
    obj: Bound<'py, PyAny>,
    caps: Capabilities,
    what: String,
}

fn flag(caps: &Bound<'_, PyAny>, key: &str) -> PyResult<bool> {
    if let Ok(d) = caps.cast::<PyDict>() {
        return match d.get_item(key)? {
            Some(v) => v.is_truthy(),
            None => Ok(false),
        };
    }
    match caps.getattr_opt(key)? {
        Some(v) => v.is_truthy(),
        None => Ok(false),
    }
}

impl<'py> PyOracle<'py> {
    /// Reads `capabilities`; fails when `query` is missing.
    pub fn new(obj: &Bound<'py, PyAny>) -> PyResult<Self> {
        let what = obj.get_type().name()?.to_string();
        if !obj.hasattr("query")? {
            return Err(crate::errors::to_py(
                obj.py(),
                Error::input(format!(
                    "an oracle must have a method query(lam, ban=(), k=1, cone=None); {what} has none"
                )),
            ));
        }
        let caps = match obj.getattr_opt("capabilities")? {
            Some(c) if !c.is_none() => Capabilities {
                ban: flag(&c, "ban")?,
                kbest: flag(&c, "kbest")?,
                cone: flag(&c, "cone")?,
                relaxed: flag(&c, "relaxed")?,
                frontier: flag(&c, "frontier")?,
            },
            _ => Capabilities::default(),
        };
        Ok(PyOracle { obj: obj.clone(), caps, what })
    }

    fn triple(&self, item: &Bound<'py, PyAny>) -> Result<Point<PyLabel>> {
        let t: (Bound<'py, PyAny>, f64, f64) = item.extract().map_err(|_| {
            plugin_type_error(
                &format!("oracle {}: each answer", self.what),
                "a (label, h: float, g: float) triple",
                item,
            )
        })?;
        Ok(Point { label: PyLabel(Arc::new(t.0.unbind())), h: t.1, g: t.2 })
    }
}

impl<'py> LambdaOracle for PyOracle<'py> {
    type Label = PyLabel;

    fn capabilities(&self) -> Capabilities {
        self.caps
    }

    fn query(&mut self, q: &PlaneQuery<'_, PyLabel>) -> Result<Vec<Point<PyLabel>>> {
        let py = self.obj.py();
        let lam = match q.lambda {
            Lambda::Zero => 0.0,
            Lambda::Finite(l) => l,
            Lambda::Infinity => f64::INFINITY,
        };
        let inner = || -> PyResult<Bound<'py, PyAny>> {
            let kwargs = PyDict::new(py);
            let ban = PyTuple::new(py, q.ban.iter().map(|l| l.0.bind(py).clone()))?;
            kwargs.set_item("ban", ban)?;
            kwargs.set_item("k", q.k)?;
            match q.cone {
                Some(c) => {
                    let cone = py.import("bicrit.searches")?.getattr("Cone")?.call1((
                        c.lo,
                        c.hi,
                        c.lo_closed,
                        c.hi_closed,
                    ))?;
                    kwargs.set_item("cone", cone)?;
                }
                None => kwargs.set_item("cone", py.None())?,
            }
            self.obj.call_method("query", (lam,), Some(&kwargs))
        };
        let out = inner().map_err(stash)?;
        let items: Vec<Bound<'py, PyAny>> =
            out.try_iter().and_then(|it| it.collect::<PyResult<Vec<_>>>()).map_err(|_| {
                plugin_type_error(&format!("oracle {}.query", self.what), "a list of (label, h, g)", &out)
            })?;
        items.iter().map(|i| self.triple(i)).collect()
    }

    fn gold(&self) -> Option<Point<PyLabel>> {
        // A failing gold() is reported by the search through `gold_checked`.
        let g = self.obj.getattr_opt("gold").ok()??;
        let r = g.call0().ok()?;
        if r.is_none() {
            return None;
        }
        let t: (Bound<'py, PyAny>, f64, f64) = r.extract().ok()?; // checked by check_gold
        Some(Point { label: PyLabel(Arc::new(t.0.unbind())), h: t.1, g: t.2 })
    }

    fn evaluate(&mut self, labels: &[PyLabel], coords: &mut Vec<(f64, f64)>) -> Result<bool> {
        let py = self.obj.py();
        if !self.obj.hasattr("evaluate").map_err(stash)? {
            return Ok(false);
        }
        let list = PyTuple::new(py, labels.iter().map(|l| l.0.bind(py).clone())).map_err(stash)?;
        let out = self.obj.call_method1("evaluate", (list,)).map_err(stash)?;
        let pairs: Vec<(f64, f64)> = out.extract().map_err(|_| {
            plugin_type_error(
                &format!("oracle {}.evaluate", self.what),
                "a list of (h: float, g: float)",
                &out,
            )
        })?;
        if pairs.len() != labels.len() {
            return Err(Error::input(format!(
                "oracle {}.evaluate returned {} pairs for {} labels",
                self.what,
                pairs.len(),
                labels.len()
            )));
        }
        coords.extend(pairs);
        Ok(true)
    }
    fn frontier(&mut self) -> Result<Vec<Point<PyLabel>>> {
        if !self.caps.frontier {
            return Err(Error::unsupported(format!(
                "oracle {} does not declare the frontier capability",
                self.what
            )));
        }
        let out = self.obj.call_method0("frontier").map_err(stash)?;
        let items: Vec<Bound<'py, PyAny>> =
            out.try_iter().and_then(|it| it.collect::<PyResult<Vec<_>>>()).map_err(|_| {
                plugin_type_error(&format!("oracle {}.frontier", self.what), "a list of (label, h, g)", &out)
            })?;
        items.iter().map(|i| self.triple(i)).collect()
    }
}

impl PyOracle<'_> {
    /// Calls `gold()` up front so that an exception it raises propagates (the trait's `gold`
    /// cannot return an error).
    pub fn check_gold(&self) -> PyResult<()> {
        if let Some(g) = self.obj.getattr_opt("gold")? {
            let r = g.call0()?;
            if !r.is_none() {
                self.triple(&r).map_err(|e| crate::errors::to_py(self.obj.py(), e))?;
            }
        }
        Ok(())
    }
}
