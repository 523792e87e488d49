//! A structure written in Python, seen by the Rust core through the same [`Structure`] trait as
//! the native ones (docs/architecture.md, Where to add: the adapter calls back into Python), so every search and learner
//! works with it unchanged — only slower, since each call takes the GIL.
//!
//! The Python object follows `bicrit.structures.base.Structure`: `size_joint_feature`,
//! `capabilities`, `joint_feature(x, y)` (or the faster optional `joint_feature_sparse(x, y)`),
//! `terms(y, y_true)`, `predict_one(w, x)`, `oracle(w, x, y_true, coef, *, margin_coef, tiebreak,
//! ban, k, cone)` and optionally `check_label(x, y)`. Exceptions it raises are re-raised unchanged.

use std::sync::Arc;

use bicrit_core::{Capabilities, Error, Result, SparseVec, Terms};
use bicrit_structures::{Scored, Structure, TermQuery};
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};

use super::{AnyStructure, BindStructure, NativeStructure};
use crate::convert::{terms_from_dict, terms_to_dict};
use crate::errors;

/// A Python object (an input or a label) shared without holding the GIL.
#[derive(Clone)]
pub struct PyObj(pub Arc<Py<PyAny>>);

impl PyObj {
    fn new(obj: Py<PyAny>) -> Self {
        PyObj(Arc::new(obj))
    }
    fn bind<'py>(&self, py: Python<'py>) -> &Bound<'py, PyAny> {
        self.0.bind(py)
    }
}

impl PartialEq for PyObj {
    /// Label equality as the Python side defines it (`bicrit.structures.base.labels_equal`:
    /// `==`, reduced with `all` for arrays).
    fn eq(&self, other: &Self) -> bool {
        Python::attach(|py| {
            let eq = || -> PyResult<bool> {
                let f = PyModule::import(py, "bicrit.structures.base")?.getattr("labels_equal")?;
                f.call1((self.bind(py), other.bind(py)))?.extract()
            };
            eq().unwrap_or(false)
        })
    }
}

impl std::fmt::Debug for PyObj {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let r = Python::attach(|py| self.bind(py).repr().map(|s| s.to_string()));
        write!(f, "{}", r.unwrap_or_else(|_| "<python object>".to_string()))
    }
}

/// The adapter: a Python structure object with its sizes and capabilities read once.
pub struct PyStructure {
    obj: Py<PyAny>,
    name: String,
    size: usize,
    caps: Capabilities,
}

fn callback<T>(r: PyResult<T>) -> Result<T> {
    r.map_err(errors::stash)
}

/// What `oracle` must return, for the messages of wrong answers.
const ORACLE_ANSWERS: &str = "a list of (label, margin: float, terms: dict) answers";

/// One answer of a plugin oracle, its types checked: anything else is a `PluginTypeError`
/// naming the plugin (`who`), the answer and what came back.
fn answer_from_py(who: &str, k: usize, a: &Bound<'_, PyAny>) -> Result<Scored<PyObj>> {
    let py = a.py();
    let is_triple = (a.is_instance_of::<PyTuple>() || a.is_instance_of::<PyList>())
        && a.len().map(|n| n == 3).unwrap_or(false);
    if !is_triple {
        return Err(errors::plugin_type_error(
            &format!("{who}, answer {k},"),
            "a (label, margin, terms) triple",
            a,
        ));
    }
    let item = |j: usize| a.get_item(j).map_err(errors::stash);
    let label = item(0)?.unbind();
    let m = item(1)?;
    let margin: f64 = m
        .extract()
        .map_err(|_| errors::plugin_type_error(&format!("{who}, answer {k}, margin"), "a float", &m))?;
    let t = item(2)?;
    let terms = match t.cast::<PyDict>() {
        Ok(d) => terms_from_dict(py, Some(d)).map_err(|e| {
            if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) {
                errors::plugin_type_error(
                    &format!("{who}, answer {k}, terms"),
                    "a dict of term name -> float",
                    &t,
                )
            } else {
                errors::stash(e)
            }
        })?,
        Err(_) => {
            return Err(errors::plugin_type_error(
                &format!("{who}, answer {k}, terms"),
                "a dict of term name -> float",
                &t,
            ));
        }
    };
    if !margin.is_finite() {
        return Err(Error::input(format!("{who}, answer {k}: the margin is not finite ({margin})")));
    }
    Ok(Scored { label: PyObj::new(label), margin, terms })
}

impl PyStructure {
    /// Reads `name`, `size_joint_feature` and `capabilities` from an initialised structure object.
    pub fn new(py: Python<'_>, obj: Py<PyAny>) -> PyResult<Self> {
        let b = obj.bind(py);
        let name: String = b.getattr("name").and_then(|n| n.extract()).unwrap_or_else(|_| "python".into());
        let size_obj = b.getattr("size_joint_feature")?;
        let size: usize = size_obj.extract().map_err(|_| {
            errors::to_py(
                py,
                errors::plugin_type_error(
                    &format!("plugin structure '{name}': size_joint_feature"),
                    "an int >= 0",
                    &size_obj,
                ),
            )
        })?;
        let caps_obj = b.getattr("capabilities")?;
        let flag = |k: &str| -> PyResult<bool> {
            Ok(caps_obj.get_item(k).ok().map(|v| v.is_truthy()).transpose()?.unwrap_or(false))
        };
        let caps = Capabilities {
            ban: flag("ban")?,
            kbest: flag("kbest")?,
            cone: flag("cone")?,
            relaxed: flag("relaxed")?,
            // A Python structure has no frontier query in its protocol (yet).
            frontier: false,
        };
        Ok(PyStructure { obj, name, size, caps })
    }

    /// A copy of w for the plugin (writing into it cannot corrupt the model).
    fn w_array<'py>(&self, py: Python<'py>, w: &[f64]) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_slice(py, w)
    }
}

impl Structure for PyStructure {
    type Label = PyObj;
    type Data = Vec<PyObj>;

    fn name(&self) -> &str {
        &self.name
    }

    fn n_instances(&self, data: &Vec<PyObj>) -> usize {
        data.len()
    }

    fn size_joint_feature(&self) -> usize {
        self.size
    }

    fn capabilities(&self) -> Capabilities {
        self.caps
    }

    fn check_label(&self, data: &Vec<PyObj>, i: usize, y: &PyObj) -> Result<()> {
        Python::attach(|py| {
            let b = self.obj.bind(py);
            if b.hasattr("check_label").unwrap_or(false) {
                callback(b.call_method1("check_label", (data[i].bind(py), y.bind(py))).map(|_| ()))
            } else {
                Ok(())
            }
        })
    }

    fn joint_feature(&self, data: &Vec<PyObj>, i: usize, y: &PyObj) -> Result<SparseVec> {
        Python::attach(|py| {
            let b = self.obj.bind(py);
            let x = data[i].bind(py);
            let mut v = SparseVec::new();
            if b.hasattr("joint_feature_sparse").unwrap_or(false) {
                let got = callback(b.call_method1("joint_feature_sparse", (x, y.bind(py))))?;
                let (idx, val): (Vec<usize>, Vec<f64>) = got.extract().map_err(|_| {
                    errors::plugin_type_error(
                        &format!("plugin structure '{}': joint_feature_sparse", self.name),
                        "(indices: list of int >= 0, values: list of float)",
                        &got,
                    )
                })?;
                if idx.len() != val.len() || idx.iter().any(|&j| j >= self.size) {
                    return Err(Error::input(format!(
                        "plugin structure '{}': joint_feature_sparse returned bad indices",
                        self.name
                    )));
                }
                v.indices = idx;
                v.values = val;
            } else {
                let got = callback(b.call_method1("joint_feature", (x, y.bind(py))))?;
                let arr: PyReadonlyArray1<'_, f64> = PyModule::import(py, "numpy")
                    .and_then(|np| np.call_method1("asarray", (&got, "float64")))
                    .and_then(|r| r.extract::<PyReadonlyArray1<'_, f64>>().map_err(PyErr::from))
                    .map_err(|_| {
                        errors::plugin_type_error(
                            &format!("plugin structure '{}': joint_feature", self.name),
                            "a 1-D array of floats",
                            &got,
                        )
                    })?;
                let a = arr.as_array();
                if a.len() != self.size {
                    return Err(Error::input(format!(
                        "plugin structure '{}': joint_feature has length {}, size_joint_feature is {}",
                        self.name,
                        a.len(),
                        self.size
                    )));
                }
                for (j, &val) in a.iter().enumerate() {
                    if val != 0.0 {
                        v.push(j, val);
                    }
                }
            }
            bicrit_core::error::check_finite("plugin joint feature", &v.values)?;
            Ok(v)
        })
    }

    fn terms(&self, y: &PyObj, y_true: &PyObj) -> Result<Terms> {
        Python::attach(|py| {
            let got = callback(self.obj.bind(py).call_method1("terms", (y.bind(py), y_true.bind(py))))?;
            let who = format!("plugin structure '{}': terms", self.name);
            let expected = "a dict of term name -> float";
            let Ok(d) = got.cast::<PyDict>() else {
                return Err(errors::plugin_type_error(&who, expected, &got));
            };
            terms_from_dict(py, Some(d)).map_err(|e| {
                if e.is_instance_of::<pyo3::exceptions::PyTypeError>(py) {
                    errors::plugin_type_error(&who, expected, &got)
                } else {
                    errors::stash(e)
                }
            })
        })
    }

    fn predict(&self, w: &[f64], data: &Vec<PyObj>, i: usize) -> Result<PyObj> {
        Python::attach(|py| {
            let r = self.obj.bind(py).call_method1("predict_one", (self.w_array(py, w), data[i].bind(py)));
            Ok(PyObj::new(callback(r)?.unbind()))
        })
    }

    fn oracle(
        &self,
        w: &[f64],
        data: &Vec<PyObj>,
        i: usize,
        y_true: &PyObj,
        q: &TermQuery<'_, PyObj>,
    ) -> Result<Vec<Scored<PyObj>>> {
        Python::attach(|py| {
            let kwargs = PyDict::new(py);
            let run = || -> PyResult<Bound<'_, PyAny>> {
                kwargs.set_item("margin_coef", q.primary.margin)?;
                if let Some(s) = &q.secondary {
                    kwargs.set_item("tiebreak", (s.margin, terms_to_dict(py, &s.terms)?))?;
                }
                if !q.ban.is_empty() {
                    let ban: Vec<&Bound<'_, PyAny>> = q.ban.iter().map(|l| l.bind(py)).collect();
                    kwargs.set_item("ban", PyList::new(py, ban)?)?;
                }
                kwargs.set_item("k", q.k)?;
                if let Some(c) = &q.cone {
                    let cone_cls = PyModule::import(py, "bicrit.structures.base")?.getattr("Cone")?;
                    kwargs.set_item("cone", cone_cls.call1((c.lo, c.hi, c.lo_closed, c.hi_closed))?)?;
                }
                let coef = terms_to_dict(py, &q.primary.terms)?;
                self.obj.bind(py).call_method(
                    "oracle",
                    (self.w_array(py, w), data[i].bind(py), y_true.bind(py), coef),
                    Some(&kwargs),
                )
            };
            let found = callback(run())?; // the plugin's own exceptions pass unchanged
            let who = format!("plugin structure '{}': oracle", self.name);
            let listed = found.is_instance_of::<PyList>() || found.is_instance_of::<PyTuple>();
            let iter = match found.try_iter() {
                Ok(it)
                    if listed
                        || !(found.is_instance_of::<PyDict>() || found.is_instance_of::<PyString>()) =>
                {
                    it
                }
                _ => return Err(errors::plugin_type_error(&who, ORACLE_ANSWERS, &found)),
            };
            let mut answers = Vec::new();
            for (k, a) in iter.enumerate() {
                answers.push(answer_from_py(&who, k, &callback(a)?)?);
            }
            answers.truncate(q.k.max(1));
            Ok(answers)
        })
    }
}

impl BindStructure for PyStructure {
    fn data_from_py(&self, _py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Vec<PyObj>> {
        x.try_iter()?.map(|o| Ok(PyObj::new(o?.unbind()))).collect()
    }

    fn one_from_py(&self, _py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Vec<PyObj>> {
        Ok(vec![PyObj::new(x.clone().unbind())])
    }

    fn label_from_py(&self, _py: Python<'_>, y: &Bound<'_, PyAny>) -> PyResult<PyObj> {
        Ok(PyObj::new(y.clone().unbind()))
    }

    fn label_to_py(&self, py: Python<'_>, y: &PyObj) -> PyResult<Py<PyAny>> {
        Ok(y.0.clone_ref(py))
    }
}

/// Wraps an initialised Python structure object so that native searches and learners can drive it.
#[pyfunction]
pub fn python_structure(py: Python<'_>, obj: Py<PyAny>) -> PyResult<NativeStructure> {
    Ok(NativeStructure::wrap(AnyStructure::Python(PyStructure::new(py, obj)?)))
}
