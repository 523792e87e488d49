//! Bindings of the partition-level passes (`bicrit_learners::rounds`) for training on several
//! machines: `Partition`, one partition of a training set with its per-instance state (warm starts,
//! BCFW dual blocks, SGD schedule) kept where it lives, and `CutCoordinator`, the 1-slack QP that
//! adds the partitions' summed cuts. Each pass releases the GIL and runs on a rayon pool of
//! `n_jobs` threads; only weights and sums cross into Python.

use std::sync::Arc;

use bicrit_core::{Error, Result, SparseVec};
use bicrit_learners::rounds::{cut_pass, Cut, RoundStats};
use bicrit_learners::{
    check_compatible, exact_pass, params::CpParams, task_loss, warm_starts, AnyLearner, Context,
    CuttingPlane, Kind, Learner, PassCounts, Prepared, Problem,
};
use bicrit_searches::{Calls, SearchSpec};
use bicrit_surrogates::Surrogate;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{self, to_py};
use crate::learners::{search_from_py, stats_dict, structure_of, FromAny, PyLearnerSpec};
use crate::py_surrogate::SurrogateRef;
use crate::structures::{AnyStructure, NativeStructure};

/// What a pass returns besides the counters: a cut, a weight change, or mixed weights.
enum Output {
    Cut(Cut),
    Delta(Vec<f64>, RoundStats),
    Mixed(Vec<f64>, Vec<f64>, RoundStats),
}

/// A partition's state, generic over the structure behind the trait object.
trait Shard: Send + Sync {
    fn run(
        &mut self,
        psi: &dyn Surrogate,
        search: &SearchSpec,
        ctx: &Context<'_>,
        w: &[f64],
        agg: (f64, f64),
        with_task_loss: bool,
    ) -> Result<(Output, Option<f64>)>;
    fn evaluate(
        &self,
        psi: &dyn Surrogate,
        search: &SearchSpec,
        ctx: &Context<'_>,
        w: &[f64],
    ) -> Result<PassCounts>;
    fn n(&self) -> usize;
    fn dual_share(&self) -> Option<(Vec<f64>, f64)>;
}

struct Held<S: FromAny> {
    any: Arc<AnyStructure>,
    data: S::Data,
    labels: Vec<S::Label>,
    prepared: Prepared,
    learner: AnyLearner<S::Label>,
}

impl<S: FromAny> Shard for Held<S> {
    fn run(
        &mut self,
        psi: &dyn Surrogate,
        search: &SearchSpec,
        ctx: &Context<'_>,
        w: &[f64],
        (scale, sigma): (f64, f64),
        with_task_loss: bool,
    ) -> Result<(Output, Option<f64>)> {
        let structure = structure_of::<S>(&self.any)?;
        let p = Problem {
            structure,
            data: &self.data,
            labels: &self.labels,
            psi,
            search,
            prepared: &self.prepared,
        };
        // the task loss of the weights the round starts from (summed over the partition)
        let task =
            if with_task_loss { Some(task_loss(&p, ctx, w)? * self.labels.len() as f64) } else { None };
        let out = match &mut self.learner {
            AnyLearner::CuttingPlane(l) => {
                let common = l.params.common.clone();
                Output::Cut(cut_pass(&p, ctx, w, &mut l.warm, &common)?)
            }
            AnyLearner::Bcfw(l) => {
                let (delta, stats) = l.local_round(&p, ctx, w, scale, sigma)?;
                Output::Delta(delta, stats)
            }
            AnyLearner::Sgd(l) => {
                let (iterate, averaged, stats) = l.mixing_round(&p, ctx, w)?;
                Output::Mixed(iterate, averaged, stats)
            }
        };
        Ok((out, task))
    }

    fn evaluate(
        &self,
        psi: &dyn Surrogate,
        search: &SearchSpec,
        ctx: &Context<'_>,
        w: &[f64],
    ) -> Result<PassCounts> {
        let structure = structure_of::<S>(&self.any)?;
        let p = Problem {
            structure,
            data: &self.data,
            labels: &self.labels,
            psi,
            search,
            prepared: &self.prepared,
        };
        if w.len() != p.dim() {
            return Err(Error::input(format!(
                "w has length {} but the joint feature size is {}",
                w.len(),
                p.dim()
            )));
        }
        exact_pass(&p, ctx, w, warm_starts(&self.learner), None)
    }

    fn n(&self) -> usize {
        self.labels.len()
    }

    fn dual_share(&self) -> Option<(Vec<f64>, f64)> {
        match &self.learner {
            AnyLearner::Bcfw(l) => Some(l.dual_share()),
            _ => None,
        }
    }
}

fn build<S: FromAny>(
    py: Python<'_>,
    s: &S,
    any: Arc<AnyStructure>,
    (x, y): (&Bound<'_, PyAny>, &Bound<'_, PyAny>),
    psi: &dyn Surrogate,
    spec: &PyLearnerSpec,
) -> PyResult<Box<dyn Shard>> {
    let data = s.data_from_py(py, x)?;
    let labels = s.labels_from_py(py, y)?;
    let n = s.n_instances(&data);
    if labels.len() != n {
        return Err(to_py(
            py,
            Error::input(format!("X has {n} instances but Y has {} labels", labels.len())),
        ));
    }
    let dim = s.size_joint_feature();
    let prepared = errors::native(py, || Prepared::new(s, &data, &labels, psi))?;
    let learner = AnyLearner::new(spec.kind, &spec.params, n, dim, None).map_err(|e| to_py(py, e))?;
    Ok(Box::new(Held::<S> { any, data, labels, prepared, learner }))
}

/// Counters as a dict: `loss` (Σ ℓ_i), `inferences`, `fractional`, `gold` and the calls by kind.
fn counts_dict<'py>(py: Python<'py>, c: &PassCounts) -> PyResult<Bound<'py, PyDict>> {
    let d = crate::learners::calls_dict(py, &c.calls)?;
    d.set_item("evaluated", c.calls.evaluated)?;
    d.set_item("loss", c.loss)?;
    d.set_item("loss_sq", c.loss_sq)?;
    d.set_item("inferences", c.inferences)?;
    d.set_item("fractional", c.fractional)?;
    d.set_item("gold", c.gold)?;
    Ok(d)
}

fn counts_from_py(d: &Bound<'_, PyDict>) -> PyResult<PassCounts> {
    let get = |k: &str| -> PyResult<usize> {
        Ok(match d.get_item(k)? {
            Some(v) => v.extract()?,
            None => 0,
        })
    };
    let float = |k: &str| -> PyResult<f64> {
        Ok(match d.get_item(k)? {
            Some(v) => v.extract()?,
            None => 0.0,
        })
    };
    Ok(PassCounts {
        loss: float("loss")?,
        loss_sq: float("loss_sq")?,
        calls: Calls {
            lambda: get("lambda")?,
            extreme: get("extreme")?,
            cone: get("cone")?,
            ban: get("ban")?,
            kbest: get("kbest")?,
            frontier: get("frontier")?,
            evaluated: get("evaluated")?,
        },
        inferences: get("inferences")?,
        fractional: get("fractional")?,
        gold: get("gold")?,
    })
}

/// One partition of a training set on the machine that holds it, with the per-instance state of
/// its learner: warm starts (`cutting-plane`), dual blocks (`bcfw`), the step schedule (`sgd`).
#[pyclass(name = "Partition", module = "bicrit._native")]
pub struct Partition {
    shard: Box<dyn Shard>,
    psi: SurrogateRef,
    search: SearchSpec,
    kind: Kind,
    pool: Option<rayon::ThreadPool>,
}

#[pymethods]
impl Partition {
    /// A partition of `(x, y)` on `structure` for `learner` (a LearnerSpec: `cutting-plane`, `bcfw`
    /// with average=False, or `sgd`); the combination is checked as `Trainer` checks it.
    #[new]
    fn new(
        py: Python<'_>,
        structure: &Bound<'_, NativeStructure>,
        x: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        surrogate: &Bound<'_, PyAny>,
        search: &Bound<'_, PyAny>,
        learner: &Bound<'_, PyLearnerSpec>,
    ) -> PyResult<Self> {
        let spec = learner.get().clone();
        if spec.kind == Kind::CuttingPlaneN {
            return Err(to_py(
                py,
                Error::incompatible(
                    "learner 'cutting-plane-n' does not run on partitions: use 'cutting-plane', 'bcfw' or 'sgd'",
                ),
            ));
        }
        let psi = SurrogateRef::from_py(surrogate)?;
        let search = search_from_py(py, search)?;
        let any = structure.get().inner.clone();
        let caps = crate::dispatch!(&*any, s => bicrit_structures::Structure::capabilities(s));
        check_compatible(spec.kind, psi.get(), &search, caps).map_err(|e| to_py(py, e))?;
        let shard = crate::dispatch!(&*any, s => build(py, s, any.clone(), (x, y), psi.get(), &spec)?);
        let n_jobs = AnyLearner::<u8>::new(spec.kind, &spec.params, 1, 1, None)
            .map_err(|e| to_py(py, e))?
            .common()
            .n_jobs;
        let pool = Context::pool(n_jobs).map_err(|e| to_py(py, e))?;
        Ok(Partition { shard, psi, search, kind: spec.kind, pool })
    }

    /// One round at the weights `w` (GIL released). `cutting-plane`: `(indices, values, intercept,
    /// counts)`, the partition's cut Σ_i c_i·Δφ_i (sparse) and Σ_i b_i; `bcfw`: `(delta, counts,
    /// start, dual)`, the partition's share of the averaged weight change (`scale` = 1/K), the
    /// counters of the exact pass at `w` and the partition's dual share; `sgd`: `(iterate,
    /// averaged, counts)`. `counts` is a dict (`loss` = Σ ℓ_i, `inferences`, calls by kind …) and
    /// holds `task_loss`, Σ_i of the task loss at `w`, when asked. `bcfw` aggregates by
    /// averaging with `scale` = 1/K and `sigma` = 1, or by adding (CoCoA+) with `scale` = 1 and
    /// `sigma` = K. On error or Ctrl-C the state is unchanged.
    #[pyo3(signature = (w, scale=1.0, task_loss=false, sigma=1.0))]
    fn round<'py>(
        &mut self,
        py: Python<'py>,
        w: PyReadonlyArray1<'_, f64>,
        scale: f64,
        task_loss: bool,
        sigma: f64,
    ) -> PyResult<Bound<'py, PyAny>> {
        let w = w.as_array().to_vec();
        let shard = &mut *self.shard;
        let psi = self.psi.get();
        let search = &self.search;
        let pool = self.pool.as_ref();
        let (out, task) = crate::pooled::run(py, pool, move |ctx| {
            bicrit_core::error::check_finite("w", &w)?;
            shard.run(psi, search, ctx, &w, (scale, sigma), task_loss)
        })?;
        let with_task = |d: &Bound<'py, PyDict>| -> PyResult<()> {
            if let Some(t) = task {
                d.set_item("task_loss", t)?;
            }
            Ok(())
        };
        Ok(match out {
            Output::Cut(cut) => {
                let counts = counts_dict(py, &cut.counts)?;
                with_task(&counts)?;
                let idx: Vec<i64> = cut.slope.indices.iter().map(|&i| i as i64).collect();
                (PyArray1::from_vec(py, idx), PyArray1::from_vec(py, cut.slope.values), cut.intercept, counts)
                    .into_pyobject(py)?
                    .into_any()
            }
            Output::Delta(delta, stats) => {
                let counts = counts_dict(py, &stats.pass)?;
                with_task(&counts)?;
                let start = counts_dict(py, &stats.start)?;
                (PyArray1::from_vec(py, delta), counts, start, stats.dual).into_pyobject(py)?.into_any()
            }
            Output::Mixed(iterate, averaged, stats) => {
                let counts = counts_dict(py, &stats.pass)?;
                with_task(&counts)?;
                (PyArray1::from_vec(py, iterate), PyArray1::from_vec(py, averaged), counts)
                    .into_pyobject(py)?
                    .into_any()
            }
        })
    }

    /// The exact pass at `w` (GIL released; warm starts read, not updated): the counters as
    /// `round` gives them, `loss` = Σ_i ℓ_i(w) over the partition.
    fn evaluate<'py>(&self, py: Python<'py>, w: PyReadonlyArray1<'_, f64>) -> PyResult<Bound<'py, PyDict>> {
        let w = w.as_array().to_vec();
        let shard = &*self.shard;
        let psi = self.psi.get();
        let search = &self.search;
        let pool = self.pool.as_ref();
        let counts = crate::pooled::run(py, pool, move |ctx| {
            bicrit_core::error::check_finite("w", &w)?;
            shard.evaluate(psi, search, ctx, &w)
        })?;
        counts_dict(py, &counts)
    }

    /// `bcfw`: the partition's share of the dual point, `(Σ_i w_i, n·C·ℓ)` (its blocks' sum and
    /// its dual share in the scale of P); None for the other learners.
    fn dual_share<'py>(&self, py: Python<'py>) -> Option<(Bound<'py, PyArray1<f64>>, f64)> {
        self.shard.dual_share().map(|(w, d)| (PyArray1::from_vec(py, w), d))
    }

    /// Number of instances.
    #[getter]
    fn n_instances(&self) -> usize {
        self.shard.n()
    }

    /// Registry name of the learner.
    #[getter]
    fn learner(&self) -> &'static str {
        self.kind.name()
    }

    fn __repr__(&self) -> String {
        format!("<Partition of {} instances for learner '{}'>", self.shard.n(), self.kind.name())
    }
}

/// The 1-slack cutting plane without data: each round adds the sum of the partitions' cuts at
/// `weights()` and solves the QP (`bicrit_learners::CuttingPlane::coordinator`).
#[pyclass(name = "CutCoordinator", module = "bicrit._native")]
pub struct CutCoordinator {
    learner: CuttingPlane<u8>,
}

#[pymethods]
impl CutCoordinator {
    /// For `n` instances and `dim` joint features, with the parameters of `learner` (a
    /// `cutting-plane` LearnerSpec), from `w0` (zeros).
    #[new]
    #[pyo3(signature = (learner, n, dim, w0=None))]
    fn new(
        py: Python<'_>,
        learner: &Bound<'_, PyLearnerSpec>,
        n: usize,
        dim: usize,
        w0: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<Self> {
        let spec = learner.get();
        if spec.kind != Kind::CuttingPlane {
            return Err(to_py(
                py,
                Error::param(format!("a CutCoordinator runs 'cutting-plane', not '{}'", spec.kind.name())),
            ));
        }
        let params = CpParams::parse(&spec.params, false).map_err(|e| to_py(py, e))?;
        let w0 = w0.map(|a| a.as_array().to_vec());
        if let Some(w) = &w0 {
            if w.len() != dim {
                return Err(to_py(
                    py,
                    Error::input(format!("w0 has length {} but the joint feature size is {dim}", w.len())),
                ));
            }
        }
        let learner = CuttingPlane::coordinator(params, n, dim, w0).map_err(|e| to_py(py, e))?;
        Ok(CutCoordinator { learner })
    }

    /// Adds the cut `(indices, values, intercept)` summed over every partition at `weights()`,
    /// with the summed `counts` (a dict as `Partition.round` returns; `task_loss`: the mean task
    /// loss at those weights) and solves the QP (GIL released); returns the round's stats dict
    /// (keys: `bicrit.learners.STAT_KEYS`). On error the state is unchanged.
    #[pyo3(signature = (indices, values, intercept, counts, task_loss=None))]
    fn round<'py>(
        &mut self,
        py: Python<'py>,
        indices: PyReadonlyArray1<'_, i64>,
        values: PyReadonlyArray1<'_, f64>,
        intercept: f64,
        counts: &Bound<'py, PyDict>,
        task_loss: Option<f64>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let idx = indices.as_array();
        let vals = values.as_array();
        if idx.len() != vals.len() {
            return Err(to_py(
                py,
                Error::input(format!("the cut has {} indices and {} values", idx.len(), vals.len())),
            ));
        }
        if let Some(&j) = idx.iter().find(|&&j| j < 0) {
            return Err(to_py(py, Error::input(format!("the cut has a negative index {j}"))));
        }
        let slope = SparseVec { indices: idx.iter().map(|&j| j as usize).collect(), values: vals.to_vec() };
        let counts = counts_from_py(counts)?;
        let learner = &mut self.learner;
        let stats = errors::native(py, move || learner.round(slope, intercept, &counts, task_loss))?;
        stats_dict(py, "cutting-plane", &stats)
    }

    /// The current weights (a new float64 array).
    #[pyo3(signature = (averaged=true))]
    fn weights<'py>(&self, py: Python<'py>, averaged: bool) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.learner.weights(averaged))
    }

    /// Rounds completed.
    #[getter]
    fn n_epochs(&self) -> usize {
        self.learner.epochs()
    }

    fn __repr__(&self) -> String {
        format!("<CutCoordinator after {} rounds>", self.learner.epochs())
    }
}

/// Adds the partition classes to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Partition>()?;
    m.add_class::<CutCoordinator>()?;
    Ok(())
}
