//! Bindings of the structures family: one pyclass, [`NativeStructure`], wrapping any native
//! structure ([`AnyStructure`]). Its methods are written once, generically over
//! [`BindStructure`], and dispatched with [`dispatch!`]; each structure only provides its
//! constructor function and its conversions (one file per structure).
//!
//! Adding a structure: implement `bicrit_structures::Structure` in the structures crate, add a
//! variant here and an arm to [`dispatch!`], implement [`BindStructure`] and a constructor
//! `#[pyfunction]` in its own file, and register that function in `lib.rs`.

pub mod chain;
pub mod dependency;
pub mod hierarchy;
pub mod instance;
pub mod multiclass;
pub mod multilabel;
pub mod python;

use std::sync::Arc;

use bicrit_core::{Cone, Objective, Terms};
use bicrit_structures::{
    Chain, Dependency, HierarchyStructure, Multiclass, Multilabel, Scored, Structure, TermQuery,
};
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::convert::{terms_from_dict, terms_to_dict, weights, with_threads};
use crate::errors;

/// Conversions between Python objects and a structure's Rust data and labels.
pub trait BindStructure: Structure + Sized {
    /// Inputs of many instances (as normalised by the Python wrapper).
    fn data_from_py(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Self::Data>;
    /// Input of one instance, as a one-instance dataset.
    fn one_from_py(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Self::Data>;
    /// One label.
    fn label_from_py(&self, py: Python<'_>, y: &Bound<'_, PyAny>) -> PyResult<Self::Label>;
    /// One label back to Python.
    fn label_to_py(&self, py: Python<'_>, y: &Self::Label) -> PyResult<Py<PyAny>>;

    /// Labels of many instances (default: any iterable of labels).
    fn labels_from_py(&self, py: Python<'_>, ys: &Bound<'_, PyAny>) -> PyResult<Vec<Self::Label>> {
        ys.try_iter()?.map(|y| self.label_from_py(py, &y?)).collect()
    }
    /// Labels of many instances back to Python (default: a list).
    fn labels_to_py(&self, py: Python<'_>, ys: &[Self::Label]) -> PyResult<Py<PyAny>> {
        let items = ys.iter().map(|y| self.label_to_py(py, y)).collect::<PyResult<Vec<_>>>()?;
        Ok(PyList::new(py, items)?.into_any().unbind())
    }
}

/// Every native structure.
pub enum AnyStructure {
    /// `multiclass`.
    Multiclass(Multiclass),
    /// A structure written in Python (a plugin), called back under the GIL.
    Python(python::PyStructure),
    /// `chain`.
    Chain(Chain),
    /// `hierarchy`.
    Hierarchy(Box<HierarchyStructure>),
    /// `dependency`.
    Dependency(Dependency),
    /// `multilabel`.
    Multilabel(Multilabel),
}

/// Runs `$body` with `$s` bound to the concrete structure inside an [`AnyStructure`].
#[macro_export]
macro_rules! dispatch {
    ($any:expr, $s:ident => $body:expr) => {
        match $any {
            $crate::structures::AnyStructure::Multiclass($s) => $body,
            $crate::structures::AnyStructure::Python($s) => $body,
            $crate::structures::AnyStructure::Chain($s) => $body,
            $crate::structures::AnyStructure::Hierarchy($s) => {
                let $s = &**$s;
                $body
            }
            $crate::structures::AnyStructure::Dependency($s) => $body,
            $crate::structures::AnyStructure::Multilabel($s) => $body,
        }
    };
}

/// A native label structure (see `bicrit.structures` for the Python protocol it serves).
#[pyclass(name = "NativeStructure", module = "bicrit._native", frozen)]
pub struct NativeStructure {
    pub inner: Arc<AnyStructure>,
}

impl NativeStructure {
    pub fn wrap(s: AnyStructure) -> Self {
        NativeStructure { inner: Arc::new(s) }
    }
}

/// Arguments of an oracle query as they come from Python.
pub struct QueryArgs<'py> {
    margin_coef: f64,
    coef: Option<Bound<'py, PyDict>>,
    tiebreak: Option<Bound<'py, PyTuple>>,
    ban: Option<Bound<'py, PyAny>>,
    k: usize,
    cone: Option<(f64, bool, f64, bool)>,
}

struct Query<L> {
    primary: Objective,
    secondary: Option<Objective>,
    ban: Vec<L>,
    k: usize,
    cone: Option<Cone>,
}

impl<L> Query<L> {
    fn term_query(&self) -> TermQuery<'_, L> {
        TermQuery {
            primary: self.primary,
            secondary: self.secondary,
            ban: &self.ban,
            k: self.k,
            cone: self.cone,
        }
    }
}

fn build_query<S: BindStructure>(py: Python<'_>, s: &S, a: &QueryArgs<'_>) -> PyResult<Query<S::Label>> {
    let bad = |m: String| errors::to_py(py, bicrit_core::Error::input(m));
    if !a.margin_coef.is_finite() {
        return Err(bad(format!("margin_coef is not finite ({})", a.margin_coef)));
    }
    let primary = Objective { margin: a.margin_coef, terms: terms_from_dict(py, a.coef.as_ref())? };
    let secondary = match &a.tiebreak {
        None => None,
        Some(t) => {
            let m: f64 = t.get_item(0)?.extract()?;
            let d = t.get_item(1)?;
            let d =
                d.cast::<PyDict>().map_err(|_| bad("tiebreak must be (margin_coef, {term: coef})".into()))?;
            Some(Objective { margin: m, terms: terms_from_dict(py, Some(d))? })
        }
    };
    let ban = match &a.ban {
        None => Vec::new(),
        Some(b) => s.labels_from_py(py, b)?,
    };
    if a.k == 0 {
        return Err(bad("k must be at least 1".into()));
    }
    let cone = a.cone.map(|(lo, lo_closed, hi, hi_closed)| Cone { lo, lo_closed, hi, hi_closed });
    if let Some(c) = &cone {
        if c.lo.is_nan() || c.hi.is_nan() || c.lo > c.hi {
            return Err(bad(format!("cone slopes must satisfy lo ≤ hi, got ({}, {})", c.lo, c.hi)));
        }
    }
    Ok(Query { primary, secondary, ban, k: a.k, cone })
}

fn answers_to_py<S: BindStructure>(py: Python<'_>, s: &S, found: &[Scored<S::Label>]) -> PyResult<Py<PyAny>> {
    let items = found
        .iter()
        .map(|a| {
            let t = (s.label_to_py(py, &a.label)?, a.margin, terms_to_dict(py, &a.terms)?);
            Ok(t.into_pyobject(py)?.into_any().unbind())
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.into_any().unbind())
}

fn checked_one<S: BindStructure>(
    py: Python<'_>,
    s: &S,
    x: &Bound<'_, PyAny>,
    y: Option<&Bound<'_, PyAny>>,
) -> PyResult<(S::Data, Option<S::Label>)> {
    let data = s.one_from_py(py, x)?;
    let label = match y {
        None => None,
        Some(y) => {
            let l = s.label_from_py(py, y)?;
            s.check_label(&data, 0, &l).map_err(|e| errors::to_py(py, e))?;
            Some(l)
        }
    };
    Ok((data, label))
}

fn checked_many<S: BindStructure>(
    py: Python<'_>,
    s: &S,
    x: &Bound<'_, PyAny>,
    ys: Option<&Bound<'_, PyAny>>,
) -> PyResult<(S::Data, Vec<S::Label>)> {
    let data = s.data_from_py(py, x)?;
    let n = s.n_instances(&data);
    let labels = match ys {
        None => Vec::new(),
        Some(ys) => {
            let labels = s.labels_from_py(py, ys)?;
            if labels.len() != n {
                return Err(errors::to_py(
                    py,
                    bicrit_core::Error::input(format!(
                        "X has {n} instances but Y has {} labels",
                        labels.len()
                    )),
                ));
            }
            for (i, l) in labels.iter().enumerate() {
                s.check_label(&data, i, l).map_err(|e| {
                    errors::to_py(py, bicrit_core::Error::input(format!("instance {i}: {e}")))
                })?;
            }
            labels
        }
    };
    Ok((data, labels))
}

#[pymethods]
impl NativeStructure {
    /// Registry name of the structure.
    #[getter]
    fn name(&self) -> String {
        dispatch!(&*self.inner, s => s.name().to_string())
    }

    /// Length of φ(x, y).
    #[getter]
    fn size_joint_feature(&self) -> usize {
        dispatch!(&*self.inner, s => s.size_joint_feature())
    }

    /// Optional queries the oracle answers: {ban, kbest, cone, relaxed}.
    #[getter]
    fn capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = dispatch!(&*self.inner, s => s.capabilities());
        let d = PyDict::new(py);
        d.set_item("ban", c.ban)?;
        d.set_item("kbest", c.kbest)?;
        d.set_item("cone", c.cone)?;
        d.set_item("relaxed", c.relaxed)?;
        d.set_item("frontier", c.frontier)?;
        Ok(d)
    }

    /// φ(x, y) as (indices, values), indices may repeat.
    fn joint_feature_sparse(
        &self,
        py: Python<'_>,
        x: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
    ) -> PyResult<(Vec<usize>, Vec<f64>)> {
        dispatch!(&*self.inner, s => {
            let (data, y) = checked_one(py, s, x, Some(y))?;
            let y = y.expect("label given");
            let v = errors::native(py, || s.joint_feature(&data, 0, &y))?;
            Ok((v.indices, v.values))
        })
    }

    /// Decomposable terms of `y` against `y_true`.
    fn terms<'py>(
        &self,
        py: Python<'py>,
        y: &Bound<'py, PyAny>,
        y_true: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        dispatch!(&*self.inner, s => {
            let y = s.label_from_py(py, y)?;
            let yt = s.label_from_py(py, y_true)?;
            let t = s.terms(&y, &yt).map_err(|e| errors::to_py(py, e))?;
            terms_to_dict(py, &t)
        })
    }

    /// argmax_y w·φ(x, y) for one instance.
    fn predict_one(
        &self,
        py: Python<'_>,
        w: PyReadonlyArray1<'_, f64>,
        x: &Bound<'_, PyAny>,
    ) -> PyResult<Py<PyAny>> {
        dispatch!(&*self.inner, s => {
            let w = weights(py, &w, s.size_joint_feature())?;
            let (data, _) = checked_one(py, s, x, None)?;
            let y = errors::native(py, || s.predict(w, &data, 0))?;
            s.label_to_py(py, &y)
        })
    }

    /// argmax of `margin_coef·m(y) + Σ coef[t]·term_t(y)` for one instance, best first; see
    /// `bicrit.structures.Structure.oracle`.
    #[pyo3(signature = (w, x, y_true, coef=None, *, margin_coef=1.0, tiebreak=None, ban=None, k=1, cone=None))]
    #[allow(clippy::too_many_arguments)]
    fn oracle<'py>(
        &self,
        py: Python<'py>,
        w: PyReadonlyArray1<'py, f64>,
        x: &Bound<'py, PyAny>,
        y_true: &Bound<'py, PyAny>,
        coef: Option<Bound<'py, PyDict>>,
        margin_coef: f64,
        tiebreak: Option<Bound<'py, PyTuple>>,
        ban: Option<Bound<'py, PyAny>>,
        k: usize,
        cone: Option<(f64, bool, f64, bool)>,
    ) -> PyResult<Py<PyAny>> {
        let args = QueryArgs { margin_coef, coef, tiebreak, ban, k, cone };
        dispatch!(&*self.inner, s => {
            let w = weights(py, &w, s.size_joint_feature())?;
            let (data, yt) = checked_one(py, s, x, Some(y_true))?;
            let yt = yt.expect("label given");
            let q = build_query(py, s, &args)?;
            let found = errors::native(py, || s.oracle(w, &data, 0, &yt, &q.term_query()))?;
            answers_to_py(py, s, &found)
        })
    }

    /// Predictions for many instances, in parallel with the GIL released.
    #[pyo3(signature = (w, x, n_jobs=None))]
    fn batch_predict(
        &self,
        py: Python<'_>,
        w: PyReadonlyArray1<'_, f64>,
        x: &Bound<'_, PyAny>,
        n_jobs: Option<i64>,
    ) -> PyResult<Py<PyAny>> {
        use rayon::prelude::*;
        dispatch!(&*self.inner, s => {
            let w = weights(py, &w, s.size_joint_feature())?;
            let (data, _) = checked_many(py, s, x, None)?;
            let n = s.n_instances(&data);
            let ys = errors::native(py, || {
                with_threads(n_jobs, || (0..n).into_par_iter().map(|i| s.predict(w, &data, i)).collect::<bicrit_core::Result<Vec<_>>>())?
            })?;
            s.labels_to_py(py, &ys)
        })
    }

    /// The oracle for many instances (same query for each), in parallel with the GIL released.
    /// Returns one list of answers per instance.
    #[pyo3(signature = (w, x, y_true, coef=None, *, margin_coef=1.0, tiebreak=None, k=1, cone=None, n_jobs=None))]
    #[allow(clippy::too_many_arguments)]
    fn batch_oracle<'py>(
        &self,
        py: Python<'py>,
        w: PyReadonlyArray1<'py, f64>,
        x: &Bound<'py, PyAny>,
        y_true: &Bound<'py, PyAny>,
        coef: Option<Bound<'py, PyDict>>,
        margin_coef: f64,
        tiebreak: Option<Bound<'py, PyTuple>>,
        k: usize,
        cone: Option<(f64, bool, f64, bool)>,
        n_jobs: Option<i64>,
    ) -> PyResult<Py<PyAny>> {
        use rayon::prelude::*;
        let args = QueryArgs { margin_coef, coef, tiebreak, ban: None, k, cone };
        dispatch!(&*self.inner, s => {
            let w = weights(py, &w, s.size_joint_feature())?;
            let (data, ys) = checked_many(py, s, x, Some(y_true))?;
            let q = build_query(py, s, &args)?;
            let tq = q.term_query();
            let n = s.n_instances(&data);
            let all = errors::native(py, || {
                with_threads(n_jobs, || {
                    (0..n).into_par_iter().map(|i| s.oracle(w, &data, i, &ys[i], &tq)).collect::<bicrit_core::Result<Vec<_>>>()
                })?
            })?;
            let out = all.iter().map(|f| answers_to_py(py, s, f)).collect::<PyResult<Vec<_>>>()?;
            Ok(PyList::new(py, out)?.into_any().unbind())
        })
    }

    /// Instance `x` with gold `y_true` under weights `w` as an oracle for `bicrit.search`, which
    /// then runs natively over this structure's oracle.
    fn instance_oracle(
        &self,
        py: Python<'_>,
        w: PyReadonlyArray1<'_, f64>,
        x: &Bound<'_, PyAny>,
        y_true: &Bound<'_, PyAny>,
    ) -> PyResult<instance::InstanceOracle> {
        self.make_instance_oracle(py, w, x, y_true)
    }

    fn __repr__(&self) -> String {
        dispatch!(&*self.inner, s => format!("<NativeStructure {} ({} joint features)>", s.name(), s.size_joint_feature()))
    }
}

/// Silences the unused warning until a structure needs it.
#[allow(dead_code)]
fn _terms_default() -> Terms {
    Terms::default()
}
