//! Bindings of the searches family: `SearchSpec`, `PointSetOracle`, `WarmState` and
//! `run_search`, which picks the native path (point set and built-in surrogate: GIL released)
//! or the callback path (a Python oracle or surrogate: GIL held, exceptions re-raised).

use bicrit_core::{Capabilities, Error, LambdaOracle};
use bicrit_searches::{Outcome, PointSetOracle, SearchSpec, WarmStart};
use bicrit_surrogates::Surrogate;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::{self, to_py};
use crate::py_oracle::{PyLabel, PyOracle};
use crate::py_surrogate::{PySurrogate, SurrogateRef};
use crate::structures::instance::{run_instance, ErasedWarm, InstanceOracle, SearchCall};
use crate::surrogates::PySurrogateBuiltin;

/// A search by name with its options.
#[pyclass(name = "SearchSpec", module = "bicrit._native", frozen, subclass)]
pub struct PySearchSpec {
    pub(crate) inner: SearchSpec,
}

/// The search `name` with `options` (`max_calls`, `lambda0`, `eps`, `tol`: numbers; `integral`:
/// a string), each refused with an `InvalidParameterError` naming it when unknown or out of range.
pub(crate) fn spec_from_options(
    py: Python<'_>,
    name: &str,
    options: Option<&Bound<'_, PyDict>>,
) -> PyResult<SearchSpec> {
    let mut inner = SearchSpec::from_name(name).map_err(|e| to_py(py, e))?;
    if let Some(d) = options {
        for (k, v) in d.iter() {
            let key: String = k.extract()?;
            let res = if key == "integral" {
                match v.extract::<String>() {
                    Ok(s) => inner.set_integral(&s),
                    Err(_) => Err(Error::param(format!("search '{name}': option integral must be a string"))),
                }
            } else {
                match v.extract::<f64>() {
                    Ok(x) => inner.set(&key, x),
                    Err(_) => {
                        Err(Error::param(format!("search '{name}': option {key} must be a number, got {v}")))
                    }
                }
            };
            res.map_err(|e| to_py(py, e))?;
        }
    }
    Ok(inner)
}

#[pymethods]
impl PySearchSpec {
    /// `options`: `max_calls`, `lambda0`, `eps` (angular), `tol` (bisecting, binary,
    /// sarawagi), `integral` (convex-hull: "none", "ban", "kbest").
    #[new]
    #[pyo3(signature = (name, options=None))]
    fn new(py: Python<'_>, name: &str, options: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        Ok(PySearchSpec { inner: spec_from_options(py, name, options)? })
    }

    /// The (possibly refined) registry name.
    #[getter]
    fn name(&self) -> &'static str {
        self.inner.name()
    }

    /// What the search needs, as a dict.
    fn requirements<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let r = self.inner.requirements();
        let d = PyDict::new(py);
        d.set_item("product_form", r.product_form)?;
        d.set_item("unit_shift", r.unit_shift)?;
        d.set_item("cone", r.cone)?;
        d.set_item("ban", r.ban)?;
        d.set_item("kbest", r.kbest)?;
        d.set_item("xi", r.xi)?;
        d.set_item("frontier", r.frontier)?;
        Ok(d)
    }

    /// Checks the search against a surrogate and an oracle (raises IncompatibleError).
    fn check(&self, py: Python<'_>, oracle: &Bound<'_, PyAny>, surrogate: &Bound<'_, PyAny>) -> PyResult<()> {
        let caps = capabilities(oracle)?;
        with_surrogate(surrogate, |psi| self.inner.check(psi, caps)).and_then(|r| r.map_err(|e| to_py(py, e)))
    }

    fn __repr__(&self) -> String {
        format!("SearchSpec({:?})", self.inner)
    }
}

/// An explicit point set as an oracle (labels are indices, or the given objects).
#[pyclass(name = "PointSetOracle", module = "bicrit._native", subclass)]
pub struct PyPointSet {
    inner: PointSetOracle,
    labels: Option<Vec<Py<PyAny>>>,
}

#[pymethods]
impl PyPointSet {
    #[new]
    #[pyo3(signature = (h, g, labels=None, gold=None, ban=true, kbest=true, cone=true, frontier=true))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        h: PyReadonlyArray1<'_, f64>,
        g: PyReadonlyArray1<'_, f64>,
        labels: Option<Vec<Py<PyAny>>>,
        gold: Option<i64>,
        ban: bool,
        kbest: bool,
        cone: bool,
        frontier: bool,
    ) -> PyResult<Self> {
        let (h, g) = (h.as_slice()?.to_vec(), g.as_slice()?.to_vec());
        let n = h.len();
        let gold = match gold {
            None => None,
            Some(i) if i < 0 => {
                return Err(to_py(py, Error::input(format!("gold index {i} must be ≥ 0 (or None)"))))
            }
            Some(i) => Some(i as usize),
        };
        let inner = PointSetOracle::new(h, g, gold).map_err(|e| to_py(py, e))?;
        let inner = inner.with_capabilities(Capabilities { ban, kbest, cone, frontier, relaxed: false });
        if let Some(l) = &labels {
            if l.len() != n {
                return Err(to_py(py, Error::input(format!("{} labels for {n} points", l.len()))));
            }
        }
        Ok(PyPointSet { inner, labels })
    }

    /// Same points, no gold label.
    fn without_gold(&self, py: Python<'_>) -> Self {
        PyPointSet {
            inner: self.inner.clone().without_gold(),
            labels: self.labels.as_ref().map(|l| l.iter().map(|x| x.clone_ref(py)).collect()),
        }
    }

    /// Number of points.
    fn __len__(&self) -> usize {
        self.inner.len()
    }

    /// The coordinates (h, g) as two lists.
    fn points(&self) -> (Vec<f64>, Vec<f64>) {
        (0..self.inner.len()).map(|i| self.inner.point(i)).unzip()
    }

    /// Index of the gold label (None when there is none).
    #[getter]
    fn gold_index(&self) -> Option<usize> {
        self.inner.gold_index()
    }

    /// Queries answered so far.
    #[getter]
    fn calls(&self) -> usize {
        self.inner.calls()
    }

    /// Declared capabilities.
    #[getter]
    fn capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        caps_dict(py, self.inner.capabilities())
    }

    /// The λ-oracle as the Python protocol: a list of (label, h, g), best first.
    #[pyo3(signature = (lam, ban=Vec::new(), k=1, cone=None))]
    fn query<'py>(
        &mut self,
        py: Python<'py>,
        lam: f64,
        ban: Vec<usize>,
        k: usize,
        cone: Option<(f64, bool, f64, bool)>,
    ) -> PyResult<Bound<'py, PyList>> {
        let lambda = bicrit_core::Lambda::from_f64(lam).ok_or_else(|| {
            to_py(py, Error::input(format!("λ = {lam} must be ≥ 0 (0 and inf are lexicographic)")))
        })?;
        let cone =
            cone.map(|(lo, lo_closed, hi, hi_closed)| bicrit_core::Cone { lo, lo_closed, hi, hi_closed });
        let q = bicrit_core::PlaneQuery { lambda, ban: &ban, k, cone };
        let pts = self.inner.query(&q).map_err(|e| to_py(py, e))?;
        let items: Vec<(Py<PyAny>, f64, f64)> =
            pts.into_iter().map(|p| (self.label(py, p.label), p.h, p.g)).collect();
        PyList::new(py, items)
    }

    /// The frontier by loss value as the Python protocol: for every distinct g, the label of
    /// largest h, as (label, h, g).
    fn frontier<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let pts = self.inner.frontier().map_err(|e| to_py(py, e))?;
        let items: Vec<(Py<PyAny>, f64, f64)> =
            pts.into_iter().map(|p| (self.label(py, p.label), p.h, p.g)).collect();
        PyList::new(py, items)
    }

    fn __repr__(&self) -> String {
        format!("PointSetOracle({} points, gold={:?})", self.inner.len(), self.inner.gold_index())
    }
}

impl PyPointSet {
    fn label(&self, py: Python<'_>, i: usize) -> Py<PyAny> {
        match &self.labels {
            Some(l) => l[i].clone_ref(py),
            None => i.into_pyobject(py).map(|o| o.into_any().unbind()).unwrap_or_else(|_| py.None()),
        }
    }
}

/// The warm start of a previous result (opaque).
#[pyclass(name = "WarmState", module = "bicrit._native", frozen)]
pub struct PyWarmState {
    inner: Warm,
}

enum Warm {
    Index(WarmStart<usize>),
    Py(WarmStart<PyLabel>),
    Native(ErasedWarm),
}

#[pymethods]
impl PyWarmState {
    /// The λ it carries.
    #[getter]
    fn lambda_(&self) -> Option<f64> {
        match &self.inner {
            Warm::Index(w) => w.lambda,
            Warm::Py(w) => w.lambda,
            Warm::Native(_) => None,
        }
    }

    /// Number of cached labels.
    fn __len__(&self) -> usize {
        match &self.inner {
            Warm::Index(w) => w.labels.len(),
            Warm::Py(w) => w.labels.len(),
            Warm::Native(_) => 0,
        }
    }
}

fn caps_dict(py: Python<'_>, c: Capabilities) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("ban", c.ban)?;
    d.set_item("kbest", c.kbest)?;
    d.set_item("cone", c.cone)?;
    d.set_item("relaxed", c.relaxed)?;
    d.set_item("frontier", c.frontier)?;
    Ok(d)
}

fn capabilities(oracle: &Bound<'_, PyAny>) -> PyResult<Capabilities> {
    if let Ok(ps) = oracle.cast::<PyPointSet>() {
        return Ok(ps.borrow().inner.capabilities());
    }
    if let Ok(io) = oracle.cast::<InstanceOracle>() {
        let caps = io.getattr("capabilities")?;
        let flag = |k: &str| -> PyResult<bool> { caps.get_item(k)?.extract() };
        return Ok(Capabilities {
            ban: flag("ban")?,
            kbest: flag("kbest")?,
            cone: flag("cone")?,
            relaxed: flag("relaxed")?,
            frontier: flag("frontier")?,
        });
    }
    Ok(PyOracle::new(oracle)?.capabilities())
}

/// Runs `f` with the surrogate as `&dyn Surrogate` (built-in, or the Python adapter).
fn with_surrogate<R>(surrogate: &Bound<'_, PyAny>, f: impl FnOnce(&dyn Surrogate) -> R) -> PyResult<R> {
    Ok(f(SurrogateRef::from_py(surrogate)?.get()))
}

/// The Python form of an outcome: a dict with value, labels, weights, points, calls,
/// upper_bound, lambda, is_gold, trace and warm.
fn outcome_dict<'py, L>(
    py: Python<'py>,
    out: Outcome<L>,
    mut label: impl FnMut(&L) -> Py<PyAny>,
    warm: Warm,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("value", out.value)?;
    d.set_item("labels", PyList::new(py, out.answer.iter().map(|i| label(&i.label)))?)?;
    d.set_item("weights", out.answer.iter().map(|i| i.weight).collect::<Vec<_>>())?;
    d.set_item("points", out.answer.iter().map(|i| (i.h, i.g)).collect::<Vec<_>>())?;
    let calls = PyDict::new(py);
    for (k, v) in out.calls.by_kind() {
        calls.set_item(k, v)?;
    }
    d.set_item("calls", calls)?;
    d.set_item("upper_bound", out.upper_bound)?;
    d.set_item("lambda_", out.lambda.map(|l| l.as_f64()))?;
    d.set_item("is_gold", out.is_gold)?;
    let trace = PyList::empty(py);
    for q in &out.trace {
        let e = PyDict::new(py);
        e.set_item("lambda_", q.lambda)?;
        e.set_item("cone", q.cone.map(|c| (c.lo, c.lo_closed, c.hi, c.hi_closed)))?;
        e.set_item("k", q.k)?;
        e.set_item("banned", q.banned)?;
        e.set_item("answers", q.answers.clone())?;
        e.set_item("frontier", q.frontier)?;
        trace.append(e)?;
    }
    d.set_item("trace", trace)?;
    d.set_item("warm", Py::new(py, PyWarmState { inner: warm })?)?;
    Ok(d)
}

/// Runs one inference. `oracle`: a `PointSetOracle` or any object with the Python oracle
/// protocol; `surrogate`: a built-in (or an object whose `_native` is one) or any object with
/// `value`/`grad`; `warm`: a `WarmState` from a previous result on the same kind of oracle.
#[pyfunction]
#[pyo3(signature = (spec, oracle, surrogate, warm=None, xi=None))]
pub fn run_search<'py>(
    py: Python<'py>,
    spec: &Bound<'py, PySearchSpec>,
    oracle: &Bound<'py, PyAny>,
    surrogate: &Bound<'py, PyAny>,
    warm: Option<&Bound<'py, PyWarmState>>,
    xi: Option<f64>,
) -> PyResult<Bound<'py, PyDict>> {
    let spec = &spec.get().inner;
    let warm = warm.map(|w| w.get());
    let native_psi = surrogate.cast::<PySurrogateBuiltin>().ok().map(|b| b.clone().unbind());
    if let Ok(io) = oracle.cast::<InstanceOracle>() {
        let erased = match warm.map(|w| &w.inner) {
            None => None,
            Some(Warm::Native(e)) => Some(e),
            Some(_) => {
                return Err(to_py(
                    py,
                    Error::input("warm start comes from a result on another kind of oracle"),
                ))
            }
        };
        let (out, labels, next) = match &native_psi {
            Some(b) => {
                let call =
                    SearchCall { spec, psi: b.get().inner.as_ref(), native_psi: true, warm: erased, xi };
                run_instance(py, io.get(), &call)?
            }
            None => {
                let adapter = PySurrogate::new(surrogate)?;
                let call = SearchCall { spec, psi: &adapter, native_psi: false, warm: erased, xi };
                run_instance(py, io.get(), &call)?
            }
        };
        let mut it = labels.into_iter();
        return outcome_dict(py, out, |_| it.next().expect("one label per item"), Warm::Native(next));
    }
    if let Ok(ps) = oracle.cast::<PyPointSet>() {
        let warm_idx = match warm.map(|w| &w.inner) {
            None => None,
            Some(Warm::Index(w)) => Some(w.clone()),
            Some(_) => {
                return Err(to_py(
                    py,
                    Error::input(
                        "warm start from a result on another kind of oracle cannot seed a PointSetOracle",
                    ),
                ))
            }
        };
        let mut guard = ps.borrow_mut();
        let out = match &native_psi {
            Some(b) => {
                let psi = b.get().inner.as_ref();
                let (oracle, warm) = (&mut guard.inner, warm_idx.as_ref());
                errors::native(py, move || spec.run(oracle, psi, warm, xi))?
            }
            None => {
                let adapter = PySurrogate::new(surrogate)?;
                let oracle = &mut guard.inner;
                errors::with_gil(py, || spec.run(oracle, &adapter, warm_idx.as_ref(), xi))?
            }
        };
        let w = Warm::Index(out.warm.clone().resolve(warm_idx.as_ref()).map_err(|e| to_py(py, e))?);
        return outcome_dict(py, out, |&i| guard.label(py, i), w);
    }
    let warm_py = match warm.map(|w| &w.inner) {
        None => None,
        Some(Warm::Py(w)) => Some(w.clone()),
        Some(_) => {
            return Err(to_py(
                py,
                Error::input(
                    "warm start from a result on another kind of oracle cannot seed a Python oracle",
                ),
            ))
        }
    };
    let mut adapter = PyOracle::new(oracle)?;
    adapter.check_gold()?;
    let out = match &native_psi {
        Some(b) => {
            errors::with_gil(py, || spec.run(&mut adapter, b.get().inner.as_ref(), warm_py.as_ref(), xi))?
        }
        None => {
            let psi = PySurrogate::new(surrogate)?;
            errors::with_gil(py, || spec.run(&mut adapter, &psi, warm_py.as_ref(), xi))?
        }
    };
    let w = Warm::Py(out.warm.clone().resolve(warm_py.as_ref()).map_err(|e| to_py(py, e))?);
    outcome_dict(py, out, |l: &PyLabel| l.0.clone_ref(py), w)
}

/// Adds the search classes and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySearchSpec>()?;
    m.add_class::<PyPointSet>()?;
    m.add_class::<PyWarmState>()?;
    m.add_class::<InstanceOracle>()?;
    m.add_function(wrap_pyfunction!(run_search, m)?)?;
    m.add("SEARCH_NAMES", bicrit_searches::NAMES.to_vec())?;
    Ok(())
}
