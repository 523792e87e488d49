//! Bindings of the learners family: `Trainer`, one training run of any learner on any structure
//! (native or Python-written, through `AnyStructure`) with any surrogate and built-in search.
//!
//! The Trainer converts the training data once, checks the whole combination at construction
//! (search × surrogate × oracle capabilities × learner), and then runs one epoch per `epoch()` call
//! with the GIL released and the instances' searches spread over a rayon pool of `n_jobs` threads.
//! Ctrl-C is checked between blocks of instances: the epoch is abandoned and the learner's state
//! rolled back to the end of the previous epoch, so the Python loop that called it keeps a usable
//! model holding the finished epochs. Python-written structures and surrogates are called back
//! under the GIL (serialised, slower).

use std::sync::Arc;
use std::time::Instant;

use bicrit_core::{Error, Result};
use bicrit_learners::{
    check_compatible, exact_pass, params, slacks, task_loss, warm_starts, AnyLearner, Context, EpochStats,
    Kind, Learner, Prepared, Problem, Value,
};
use bicrit_searches::{Calls, SearchSpec};
use bicrit_structures::{Chain, Dependency, HierarchyStructure, Multiclass, Multilabel};
use bicrit_surrogates::Surrogate;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use crate::errors::{self, to_py};
use crate::py_surrogate::SurrogateRef;
use crate::searches::{spec_from_options, PySearchSpec};
use crate::structures::python::PyStructure;
use crate::structures::{AnyStructure, BindStructure, NativeStructure};

/// Gets the concrete structure back out of an [`AnyStructure`].
pub(crate) trait FromAny: BindStructure + 'static {
    fn from_any(a: &AnyStructure) -> Option<&Self>;
}

macro_rules! from_any {
    ($t:ty, $variant:ident) => {
        impl FromAny for $t {
            fn from_any(a: &AnyStructure) -> Option<&Self> {
                match a {
                    AnyStructure::$variant(s) => Some(s),
                    _ => None,
                }
            }
        }
    };
}

from_any!(Multiclass, Multiclass);
from_any!(PyStructure, Python);
from_any!(Chain, Chain);
from_any!(Dependency, Dependency);
from_any!(Multilabel, Multilabel);

impl FromAny for HierarchyStructure {
    fn from_any(a: &AnyStructure) -> Option<&Self> {
        match a {
            AnyStructure::Hierarchy(s) => Some(&**s),
            _ => None,
        }
    }
}

/// What one evaluation pass measured.
struct Evaluation {
    objective: f64,
    loss: f64,
    norm_sq: f64,
    task_loss: f64,
    calls: Calls,
    fractional: usize,
}

/// A training run, generic over the structure behind the trait object.
trait Fit: Send + Sync {
    fn epoch(&mut self, psi: &dyn Surrogate, search: &SearchSpec, ctx: &Context<'_>) -> Result<EpochStats>;
    fn weights(&self, averaged: bool) -> Vec<f64>;
    fn evaluate(
        &self,
        psi: &dyn Surrogate,
        search: &SearchSpec,
        ctx: &Context<'_>,
        averaged: bool,
        with_task_loss: bool,
    ) -> Result<Evaluation>;
    fn learner(&self) -> LearnerInfo;
}

struct LearnerInfo {
    name: &'static str,
    epochs: usize,
    n: usize,
    dim: usize,
    c: f64,
    n_jobs: i64,
    params: Vec<(&'static str, Value)>,
}

struct Fitted<S: FromAny> {
    any: Arc<AnyStructure>,
    dim: usize,
    data: S::Data,
    labels: Vec<S::Label>,
    prepared: Prepared,
    learner: AnyLearner<S::Label>,
}

/// The concrete structure behind `any` (a free function so that `epoch` can borrow the learner
/// mutably beside it).
pub(crate) fn structure_of<S: FromAny>(any: &AnyStructure) -> Result<&S> {
    S::from_any(any).ok_or_else(|| Error::input("internal: the structure changed type"))
}

impl<S: FromAny> Fit for Fitted<S> {
    fn epoch(&mut self, psi: &dyn Surrogate, search: &SearchSpec, ctx: &Context<'_>) -> Result<EpochStats> {
        let structure = structure_of::<S>(&self.any)?;
        let p = Problem {
            structure,
            data: &self.data,
            labels: &self.labels,
            psi,
            search,
            prepared: &self.prepared,
        };
        // On error or interrupt the learner restores the state of the previous epoch itself.
        self.learner.epoch(&p, ctx)
    }

    fn weights(&self, averaged: bool) -> Vec<f64> {
        self.learner.weights(averaged)
    }

    fn evaluate(
        &self,
        psi: &dyn Surrogate,
        search: &SearchSpec,
        ctx: &Context<'_>,
        averaged: bool,
        with_task_loss: bool,
    ) -> Result<Evaluation> {
        let structure = structure_of::<S>(&self.any)?;
        let p = Problem {
            structure,
            data: &self.data,
            labels: &self.labels,
            psi,
            search,
            prepared: &self.prepared,
        };
        let w = self.learner.weights(averaged);
        let xi = slacks(&self.learner);
        let pass = exact_pass(&p, ctx, &w, warm_starts(&self.learner), xi.as_deref())?;
        let norm_sq: f64 = w.iter().map(|x| x * x).sum();
        let n = self.labels.len() as f64;
        let task = if with_task_loss { task_loss(&p, ctx, &w)? } else { f64::NAN };
        let slacks = pass.slacks(self.learner.slack_norm());
        Ok(Evaluation {
            objective: 0.5 * norm_sq + self.learner.common().c * slacks,
            loss: slacks / n,
            norm_sq,
            task_loss: task,
            calls: pass.calls,
            fractional: pass.fractional,
        })
    }

    fn learner(&self) -> LearnerInfo {
        let common = self.learner.common();
        LearnerInfo {
            name: self.learner.name(),
            epochs: self.learner.epochs(),
            n: self.labels.len(),
            dim: self.dim,
            c: common.c,
            n_jobs: common.n_jobs,
            params: self.learner.effective_params(),
        }
    }
}

/// The learner's choice: which one, its parameters and its starting weights.
struct LearnerSetup<'a> {
    kind: Kind,
    params: &'a [(String, Value)],
    w0: Option<Vec<f64>>,
}

fn build<S: FromAny>(
    py: Python<'_>,
    s: &S,
    any: Arc<AnyStructure>,
    (x, y): (&Bound<'_, PyAny>, &Bound<'_, PyAny>),
    psi: &dyn Surrogate,
    setup: LearnerSetup<'_>,
) -> PyResult<Box<dyn Fit>> {
    let LearnerSetup { kind, params, w0 } = setup;
    let data = s.data_from_py(py, x)?;
    let labels = s.labels_from_py(py, y)?;
    let n = s.n_instances(&data);
    if n == 0 {
        return Err(to_py(py, Error::input("the training set is empty: X has no instances")));
    }
    if labels.len() != n {
        return Err(to_py(
            py,
            Error::input(format!("X has {n} instances but Y has {} labels", labels.len())),
        ));
    }
    let dim = s.size_joint_feature();
    let prepared = errors::native(py, || Prepared::new(s, &data, &labels, psi))?;
    let learner = AnyLearner::new(kind, params, n, dim, w0).map_err(|e| to_py(py, e))?;
    Ok(Box::new(Fitted::<S> { any, dim, data, labels, prepared, learner }))
}

/// A learner with its parameters, validated once when it is made (unknown names and values
/// outside their domain are errors then): what a `Trainer` takes, and what a fit hands from one
/// phase to the next (`replace` makes a validated copy with some parameters changed).
#[pyclass(name = "LearnerSpec", module = "bicrit._native", frozen, subclass, skip_from_py_object)]
#[derive(Clone)]
pub struct PyLearnerSpec {
    pub(crate) kind: Kind,
    pub(crate) params: Vec<(String, Value)>,
}

impl PyLearnerSpec {
    fn validated(py: Python<'_>, kind: Kind, params: Vec<(String, Value)>) -> PyResult<Self> {
        bicrit_learners::check_params(kind, &params).map_err(|e| to_py(py, e))?;
        Ok(PyLearnerSpec { kind, params })
    }
}

/// Every parameter of `kind` with its effective value (the given ones, defaults for the rest).
fn effective(kind: Kind, params: &[(String, Value)]) -> bicrit_core::Result<Vec<(&'static str, Value)>> {
    Ok(match kind {
        Kind::Sgd => params::SgdParams::parse(params)?.effective(),
        Kind::Bcfw => params::BcfwParams::parse(params)?.effective(),
        Kind::CuttingPlane => params::CpParams::parse(params, false)?.effective(),
        Kind::CuttingPlaneN => params::CpParams::parse(params, true)?.effective(),
    })
}

fn values_dict<'py>(py: Python<'py>, items: &[(&str, Value)]) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in items {
        d.set_item(*k, value_to_py(py, v)?)?;
    }
    Ok(d)
}

#[pymethods]
impl PyLearnerSpec {
    /// The learner `name` with `params` (a dict; see `learner_parameters(name)`).
    #[new]
    #[pyo3(signature = (name, params=None))]
    fn new(py: Python<'_>, name: &str, params: Option<&Bound<'_, PyDict>>) -> PyResult<Self> {
        let kind = Kind::from_name(name).map_err(|e| to_py(py, e))?;
        Self::validated(py, kind, params_from_py(py, params)?)
    }

    /// Registry name.
    #[getter]
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    /// Every parameter with its effective value.
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let items = effective(self.kind, &self.params).map_err(|e| to_py(py, e))?;
        values_dict(py, &items)
    }

    /// The parameters as given.
    #[getter]
    fn given<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let items: Vec<(&str, Value)> = self.params.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
        values_dict(py, &items)
    }

    /// A validated copy with the parameters of `changes` replaced.
    fn replace(&self, py: Python<'_>, changes: &Bound<'_, PyDict>) -> PyResult<Self> {
        let mut params = self.params.clone();
        for (k, v) in params_from_py(py, Some(changes))? {
            params.retain(|(name, _)| *name != k);
            params.push((k, v));
        }
        Self::validated(py, self.kind, params)
    }

    fn __repr__(&self) -> String {
        let given: Vec<String> = self.params.iter().map(|(k, v)| format!("{k}={v:?}")).collect();
        format!("LearnerSpec({:?}, {{{}}})", self.kind.name(), given.join(", "))
    }
}

/// A learner's parameters from a Python dict: bool, int, float, str or None values.
fn params_from_py(py: Python<'_>, d: Option<&Bound<'_, PyDict>>) -> PyResult<Vec<(String, Value)>> {
    let mut out = Vec::new();
    let Some(d) = d else { return Ok(out) };
    for (k, v) in d.iter() {
        let key: String = k.extract().map_err(|_| {
            to_py(py, Error::param(format!("learner parameter names must be strings, got {k}")))
        })?;
        let value = if v.is_none() {
            Value::None
        } else if v.is_instance_of::<PyBool>() || matches!(v.get_type().name()?.to_str()?, "bool_" | "bool") {
            Value::Bool(v.is_truthy()?)
        } else if v.is_instance_of::<PyInt>() {
            Value::Int(v.extract()?)
        } else if v.is_instance_of::<PyFloat>() {
            Value::Float(v.extract()?)
        } else if v.is_instance_of::<PyString>() {
            Value::Str(v.extract()?)
        } else if let Ok(i) = v.extract::<i64>() {
            Value::Int(i)
        } else if let Ok(f) = v.extract::<f64>() {
            Value::Float(f)
        } else {
            return Err(to_py(
                py,
                Error::param(format!(
                    "learner parameter {key} = {v} has type {}; expected a bool, int, float, str or None",
                    v.get_type().name()?
                )),
            ));
        };
        out.push((key, value));
    }
    Ok(out)
}

/// A search from Python: a `SearchSpec` (or its subclass `bicrit.searches.Search`), a registry
/// name, or a `(name, options)` pair.
pub(crate) fn search_from_py(py: Python<'_>, search: &Bound<'_, PyAny>) -> PyResult<SearchSpec> {
    if let Ok(s) = search.cast::<PySearchSpec>() {
        return Ok(s.get().inner.clone());
    }
    if let Ok(name) = search.extract::<String>() {
        return spec_from_options(py, &name, None);
    }
    if let Ok(t) = search.cast::<PyTuple>() {
        if t.len() == 2 {
            let name: String = t.get_item(0)?.extract().map_err(|_| {
                to_py(py, Error::param("search must be (name, options): the name must be a string"))
            })?;
            let opts = t.get_item(1)?;
            if opts.is_none() {
                return spec_from_options(py, &name, None);
            }
            let d = opts.cast::<PyDict>().map_err(|_| {
                to_py(py, Error::param("search must be (name, options): options must be a dict or None"))
            })?;
            return spec_from_options(py, &name, Some(d));
        }
    }
    Err(to_py(
        py,
        Error::incompatible(format!(
            "search {} (type {}) is not a built-in search: native learners run the built-in searches, given \
             as a name, a (name, options) pair or a bicrit.searches.Search",
            search.repr()?,
            search.get_type().name()?
        )),
    ))
}

pub(crate) fn stats_dict<'py>(
    py: Python<'py>,
    learner: &str,
    s: &EpochStats,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    let c = &s.calls;
    d.set_item("epoch", s.epoch)?;
    d.set_item("learner", learner)?;
    d.set_item("objective", s.objective)?;
    d.set_item("objective_kind", s.objective_kind.name())?;
    d.set_item("loss", s.loss)?;
    d.set_item("norm_sq", s.norm_sq)?;
    d.set_item("dual", s.dual)?;
    d.set_item("gap", s.gap)?;
    d.set_item("converged", s.converged)?;
    d.set_item("calls", c.total())?;
    d.set_item("calls_lambda", c.lambda)?;
    d.set_item("calls_extreme", c.extreme)?;
    d.set_item("calls_cone", c.cone)?;
    d.set_item("calls_ban", c.ban)?;
    d.set_item("calls_kbest", c.kbest)?;
    d.set_item("calls_frontier", c.frontier)?;
    d.set_item("evaluated", c.evaluated)?;
    d.set_item("inferences", s.inferences)?;
    d.set_item(
        "calls_per_inference",
        if s.inferences > 0 { c.total() as f64 / s.inferences as f64 } else { 0.0 },
    )?;
    d.set_item("fractional", s.fractional)?;
    d.set_item("gold", s.gold)?;
    d.set_item("time", s.time)?;
    d.set_item("step_size", s.step_size)?;
    d.set_item("working_set", s.working_set)?;
    d.set_item("task_loss", s.task_loss)?;
    d.set_item("exact_calls", s.exact_calls)?;
    Ok(d)
}

pub(crate) fn calls_dict<'py>(py: Python<'py>, c: &Calls) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    for (k, v) in c.by_kind() {
        d.set_item(k, v)?;
    }
    Ok(d)
}

fn value_to_py(py: Python<'_>, v: &Value) -> PyResult<Py<PyAny>> {
    Ok(match v {
        Value::Float(x) => x.into_pyobject(py)?.into_any().unbind(),
        Value::Int(x) => x.into_pyobject(py)?.into_any().unbind(),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any().unbind(),
        Value::Str(s) => s.into_pyobject(py)?.into_any().unbind(),
        Value::None => py.None(),
    })
}

/// One training run (see the module documentation and `bicrit.learners`).
#[pyclass(name = "Trainer", module = "bicrit._native")]
pub struct Trainer {
    fit: Box<dyn Fit>,
    psi: SurrogateRef,
    search: SearchSpec,
    kind: Kind,
    pool: Option<rayon::ThreadPool>,
    totals: Calls,
    inferences: usize,
    time: f64,
}

impl Trainer {
    fn run<T: Send>(
        &mut self,
        py: Python<'_>,
        f: impl FnOnce(&mut dyn Fit, &dyn Surrogate, &SearchSpec, &Context<'_>) -> Result<T> + Send,
    ) -> PyResult<T> {
        let fit = &mut *self.fit;
        let psi = self.psi.get();
        let search = &self.search;
        crate::pooled::run(py, self.pool.as_ref(), move |ctx| f(fit, psi, search, ctx))
    }
}

#[pymethods]
impl Trainer {
    /// Builds a training run; see `bicrit.learners` for the arguments, the parameters and the
    /// combinations refused (IncompatibleError) here, before any work.
    #[new]
    #[pyo3(signature = (structure, x, y, surrogate, search, learner, params=None, w0=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        structure: &Bound<'_, NativeStructure>,
        x: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        surrogate: &Bound<'_, PyAny>,
        search: &Bound<'_, PyAny>,
        learner: &Bound<'_, PyAny>,
        params: Option<&Bound<'_, PyDict>>,
        w0: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<Self> {
        // A LearnerSpec was validated when it was made; a name and a dict are validated here,
        // before the data is converted (cheap errors first).
        let spec_obj = match learner.cast::<PyLearnerSpec>() {
            Ok(s) => {
                if params.is_some() {
                    return Err(to_py(
                        py,
                        Error::param("pass the parameters in the LearnerSpec, not beside it"),
                    ));
                }
                s.get().clone()
            }
            Err(_) => {
                let name: String = learner
                    .extract()
                    .map_err(|_| to_py(py, Error::param("learner must be a name or a LearnerSpec")))?;
                let kind = Kind::from_name(&name).map_err(|e| to_py(py, e))?;
                PyLearnerSpec::validated(py, kind, params_from_py(py, params)?)?
            }
        };
        let (kind, params) = (spec_obj.kind, spec_obj.params);
        let psi = SurrogateRef::from_py(surrogate)?;
        let spec = search_from_py(py, search)?;
        let any = structure.get().inner.clone();
        let caps = crate::dispatch!(&*any, s => bicrit_structures::Structure::capabilities(s));
        check_compatible(kind, psi.get(), &spec, caps).map_err(|e| to_py(py, e))?;
        let w0 = w0.map(|a| a.as_array().to_vec());
        let fit = crate::dispatch!(&*any, s => {
            let setup = LearnerSetup { kind, params: &params, w0: w0.clone() };
            build(py, s, any.clone(), (x, y), psi.get(), setup)?
        });
        let n_jobs = fit.learner().n_jobs;
        let pool = Context::pool(n_jobs).map_err(|e| to_py(py, e))?;
        Ok(Trainer { fit, psi, search: spec, kind, pool, totals: Calls::default(), inferences: 0, time: 0.0 })
    }

    /// One pass over the training set (GIL released); returns the epoch's stats dict (keys:
    /// `bicrit.learners.STAT_KEYS`). On error or Ctrl-C the state is that of the previous epoch.
    fn epoch<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let stats = self.run(py, |fit, psi, search, ctx| fit.epoch(psi, search, ctx))?;
        bicrit_learners::add_calls(&mut self.totals, &stats.calls);
        self.inferences += stats.inferences;
        self.time += stats.time;
        stats_dict(py, self.kind.name(), &stats)
    }

    /// The weights (a new float64 array): the averaged ones when `averaged` and the learner
    /// averages (SGD with `average`, BCFW with `average`), else the last iterate.
    #[pyo3(signature = (averaged=true))]
    fn weights<'py>(&self, py: Python<'py>, averaged: bool) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.fit.weights(averaged))
    }

    /// The exact primal objective ½‖w‖² + C·Σ_i ℓ_i(w) at `weights(averaged)`: one inference pass
    /// (GIL released, warm starts read but not updated).
    #[pyo3(signature = (averaged=true))]
    fn objective(&mut self, py: Python<'_>, averaged: bool) -> PyResult<f64> {
        let e = self.run(py, move |fit, psi, search, ctx| fit.evaluate(psi, search, ctx, averaged, false))?;
        Ok(e.objective)
    }

    /// One inference pass and one prediction pass at `weights(averaged)`: a dict with `objective`,
    /// `loss` (mean surrogate loss), `norm_sq`, `task_loss` (mean task loss of the predictions on
    /// the training set), `calls` (dict by kind), `fractional` and `time`.
    #[pyo3(signature = (averaged=true, task_loss=true))]
    fn evaluate<'py>(
        &mut self,
        py: Python<'py>,
        averaged: bool,
        task_loss: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let start = Instant::now();
        let e =
            self.run(py, move |fit, psi, search, ctx| fit.evaluate(psi, search, ctx, averaged, task_loss))?;
        let d = PyDict::new(py);
        d.set_item("objective", e.objective)?;
        d.set_item("loss", e.loss)?;
        d.set_item("norm_sq", e.norm_sq)?;
        d.set_item("task_loss", if task_loss { Some(e.task_loss) } else { None })?;
        d.set_item("calls", calls_dict(py, &e.calls)?)?;
        d.set_item("fractional", e.fractional)?;
        d.set_item("time", start.elapsed().as_secs_f64())?;
        Ok(d)
    }

    /// Registry name of the learner.
    #[getter]
    fn learner(&self) -> &'static str {
        self.kind.name()
    }

    /// Registry name of the search (with its recovery: `convex-hull-ban`, …).
    #[getter]
    fn search(&self) -> &'static str {
        self.search.name()
    }

    /// Name of the surrogate.
    #[getter]
    fn surrogate(&self) -> String {
        self.psi.get().name().to_string()
    }

    /// Number of training instances.
    #[getter]
    fn n_instances(&self) -> usize {
        self.fit.learner().n
    }

    /// Length of the weight vector.
    #[getter]
    fn size_joint_feature(&self) -> usize {
        self.fit.learner().dim
    }

    /// Epochs completed.
    #[getter]
    fn n_epochs(&self) -> usize {
        self.fit.learner().epochs
    }

    /// The regularisation parameter C.
    #[getter]
    #[allow(non_snake_case)]
    fn C(&self) -> f64 {
        self.fit.learner().c
    }

    /// Every learner parameter with its effective value (defaults filled in).
    #[getter]
    fn params<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (k, v) in &self.fit.learner().params {
            d.set_item(k, value_to_py(py, v)?)?;
        }
        Ok(d)
    }

    /// Oracle calls of all epochs' searches so far, by kind (exact passes not included), with
    /// `inferences` and `time` (seconds in epochs).
    #[getter]
    fn totals<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = calls_dict(py, &self.totals)?;
        d.set_item("inferences", self.inferences)?;
        d.set_item("time", self.time)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        let info = self.fit.learner();
        format!(
            "<Trainer {} with surrogate '{}' and search '{}': {} instances, {} joint features, {} epochs>",
            info.name,
            self.psi.get().name(),
            self.search.name(),
            info.n,
            info.dim,
            info.epochs
        )
    }
}

/// The parameters of a learner: a list of (name, default, doc).
#[pyfunction]
fn learner_parameters(py: Python<'_>, learner: &str) -> PyResult<Py<PyList>> {
    let kind = Kind::from_name(learner).map_err(|e| to_py(py, e))?;
    let items = params::docs(kind)
        .into_iter()
        .map(|d| -> PyResult<Py<PyAny>> {
            Ok((d.name, value_to_py(py, &d.default)?, d.doc).into_pyobject(py)?.into_any().unbind())
        })
        .collect::<PyResult<Vec<_>>>()?;
    Ok(PyList::new(py, items)?.unbind())
}

/// Checks learner × search × surrogate (× a structure's capabilities, when given) without any data;
/// raises IncompatibleError (or InvalidParameterError for unknown names) like `Trainer` would.
/// `capabilities`: a dict with booleans `ban`, `kbest`, `cone`, `relaxed` (None: assume all).
#[pyfunction]
#[pyo3(signature = (learner, surrogate, search, capabilities=None))]
fn check_learner(
    py: Python<'_>,
    learner: &str,
    surrogate: &Bound<'_, PyAny>,
    search: &Bound<'_, PyAny>,
    capabilities: Option<&Bound<'_, PyDict>>,
) -> PyResult<()> {
    let kind = Kind::from_name(learner).map_err(|e| to_py(py, e))?;
    let psi = SurrogateRef::from_py(surrogate)?;
    let spec = search_from_py(py, search)?;
    let caps = match capabilities {
        None => bicrit_core::Capabilities::all(),
        Some(d) => {
            let flag = |k: &str| -> PyResult<bool> {
                Ok(match d.get_item(k)? {
                    Some(v) => v.is_truthy()?,
                    None => false,
                })
            };
            bicrit_core::Capabilities {
                ban: flag("ban")?,
                kbest: flag("kbest")?,
                cone: flag("cone")?,
                relaxed: flag("relaxed")?,
                frontier: flag("frontier")?,
            }
        }
    };
    check_compatible(kind, psi.get(), &spec, caps).map_err(|e| to_py(py, e))
}

/// Adds the learner classes and functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Trainer>()?;
    m.add_class::<PyLearnerSpec>()?;
    m.add_function(wrap_pyfunction!(learner_parameters, m)?)?;
    m.add_function(wrap_pyfunction!(check_learner, m)?)?;
    m.add("LEARNER_NAMES", bicrit_learners::NAMES.to_vec())?;
    m.add("STAT_KEYS", bicrit_learners::STAT_KEYS.to_vec())?;
    Ok(())
}
