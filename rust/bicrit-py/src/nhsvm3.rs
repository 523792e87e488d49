//! Binding of NHSVM3's learner (`bicrit_hierarchy::Nhsvm3Sgd`, thesis eq. `NHSVM3`):
//! `Nhsvm3Trainer`, one training run on a single-path `hierarchy` structure. The data is
//! converted once; each `epoch()` runs with the GIL released, the batch's inferences on a rayon
//! pool of `n_jobs` threads, and Ctrl-C checked between mini-batches (the epoch is then
//! abandoned and the state rolled back to the previous epoch, as in `Trainer`).

use std::sync::Arc;

use bicrit_core::{CsrMatrix, Error, Result};
use bicrit_hierarchy::nhsvm3::{nhsvm3_loss, Nhsvm3Params, Nhsvm3Sgd};
use bicrit_learners::Context;
use bicrit_structures::hierarchy::{HierLabel, HierarchyStructure};
use bicrit_structures::Structure;
use numpy::{PyArray1, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::to_py;
use crate::structures::{AnyStructure, BindStructure, NativeStructure};

/// One NHSVM3 training run (see the module documentation and
/// `bicrit.hierarchy.estimator.HierarchicalSVM`).
#[pyclass(name = "Nhsvm3Trainer", module = "bicrit._native")]
pub struct Nhsvm3Trainer {
    any: Arc<AnyStructure>,
    data: CsrMatrix,
    labels: Vec<HierLabel>,
    learner: Nhsvm3Sgd,
    pool: Option<rayon::ThreadPool>,
    n_jobs: i64,
}

fn hierarchy(any: &AnyStructure) -> Result<&HierarchyStructure> {
    match any {
        AnyStructure::Hierarchy(h) => Ok(h),
        #[allow(unreachable_patterns)]
        _ => Err(Error::incompatible("NHSVM3 trains on a 'hierarchy' structure")),
    }
}

impl Nhsvm3Trainer {
    /// Runs `f` with the GIL released, the pool and a Ctrl-C check.
    fn run<T: Send>(
        &mut self,
        py: Python<'_>,
        f: impl FnOnce(&HierarchyStructure, &CsrMatrix, &[HierLabel], &mut Nhsvm3Sgd, &Context<'_>) -> Result<T>
            + Send,
    ) -> PyResult<T> {
        let (any, data, labels, learner, pool) =
            (&*self.any, &self.data, &self.labels, &mut self.learner, self.pool.as_ref());
        crate::pooled::run(py, pool, move |ctx| f(hierarchy(any)?, data, labels, learner, ctx))
    }
}

#[pymethods]
impl Nhsvm3Trainer {
    /// A training run on `structure` (a single-path hierarchy structure) with `X` a CSR tuple and
    /// `Y` label node-id sequences (root included). `C` > 0, `batch_size` ≥ 1 (instances per
    /// step), `block_size` ≥ 1 (instances whose inferences run in parallel at the same weights,
    /// their steps then applied in order; None: `batch_size`), `t0` > 0 (η_t =
    /// 1/(λ(t + t0)), λ = 1/(n·C)), `random_state` ≥ 0, `n_jobs` (None or 1: one thread, −1: all
    /// cores), `w0` starting weights (zeros when None).
    #[new]
    #[pyo3(signature = (structure, x, y, *, C=1.0, batch_size=1, block_size=None, t0=1.0, random_state=0, n_jobs=None, w0=None))]
    #[allow(non_snake_case, clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        structure: &Bound<'_, NativeStructure>,
        x: &Bound<'_, PyAny>,
        y: &Bound<'_, PyAny>,
        C: f64,
        batch_size: i64,
        block_size: Option<i64>,
        t0: f64,
        random_state: i64,
        n_jobs: Option<i64>,
        w0: Option<PyReadonlyArray1<'_, f64>>,
    ) -> PyResult<Self> {
        let bad = |e: Error| to_py(py, e);
        if batch_size < 1 {
            return Err(bad(Error::param(format!("batch_size must be an int ≥ 1, got {batch_size}"))));
        }
        let block_size = block_size.unwrap_or(batch_size);
        if block_size < 1 {
            return Err(bad(Error::param(format!("block_size must be an int ≥ 1, got {block_size}"))));
        }
        if random_state < 0 {
            return Err(bad(Error::param(format!("random_state must be an int ≥ 0, got {random_state}"))));
        }
        let params = Nhsvm3Params {
            c: C,
            batch_size: batch_size as usize,
            block_size: block_size as usize,
            t0,
            random_state: random_state as u64,
        };
        params.check().map_err(bad)?;
        let n_jobs = n_jobs.unwrap_or(1);
        let pool = Context::pool(n_jobs).map_err(bad)?;
        let any = structure.get().inner.clone();
        let h = hierarchy(&any).map_err(bad)?;
        let data = h.data_from_py(py, x)?;
        let labels = h.labels_from_py(py, y)?;
        bicrit_hierarchy::nhsvm3::check_problem(h, &data, &labels).map_err(bad)?;
        let w0 = w0.map(|a| a.as_array().to_vec());
        let learner = Nhsvm3Sgd::new(params, h, labels.len(), w0).map_err(bad)?;
        Ok(Nhsvm3Trainer { any, data, labels, learner, pool, n_jobs })
    }

    /// One pass over the training set (GIL released): a dict with `epoch`, `objective` (running:
    /// ½‖w‖² of the last iterate + C·Σ ℓ_i measured at each batch's start), `loss` (mean
    /// running ℓ_i), `norm_sq`, `violated`, `inferences`, `step_size`, `time`. On error or
    /// Ctrl-C the state is that of the previous epoch.
    fn epoch<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.run(py, |h, data, labels, l, ctx| l.epoch(h, data, labels, ctx))?;
        let d = PyDict::new(py);
        d.set_item("epoch", s.epoch)?;
        d.set_item("objective", s.objective)?;
        d.set_item("loss", s.loss)?;
        d.set_item("norm_sq", s.norm_sq)?;
        d.set_item("violated", s.violated)?;
        d.set_item("inferences", s.inferences)?;
        d.set_item("step_size", s.step_size)?;
        d.set_item("time", s.time)?;
        Ok(d)
    }

    /// The weights (a new float64 array in the structure's layout): the t-weighted average of
    /// the iterates when `averaged`, else the last iterate.
    #[pyo3(signature = (averaged=true))]
    fn weights<'py>(&self, py: Python<'py>, averaged: bool) -> Bound<'py, PyArray1<f64>> {
        PyArray1::from_vec(py, self.learner.weights(averaged))
    }

    /// The exact objective ½‖w‖² + C·Σ_i ℓ_i(w) at `weights(averaged)` (one inference pass, GIL
    /// released).
    #[pyo3(signature = (averaged=true))]
    fn objective(&mut self, py: Python<'_>, averaged: bool) -> PyResult<f64> {
        self.run(py, move |h, data, labels, l, ctx| {
            let w = l.weights(averaged);
            let loss = nhsvm3_loss(h, data, labels, &w, ctx)?;
            Ok(0.5 * w.iter().map(|x| x * x).sum::<f64>() + l.params().c * loss)
        })
    }

    /// Epochs completed.
    #[getter]
    fn n_epochs(&self) -> usize {
        self.learner.epochs()
    }

    /// SGD steps taken.
    #[getter]
    fn n_steps(&self) -> u64 {
        self.learner.steps()
    }

    /// Number of training instances.
    #[getter]
    fn n_instances(&self) -> usize {
        self.labels.len()
    }

    /// Length of the weight vector (nodes × features).
    #[getter]
    fn size_joint_feature(&self) -> PyResult<usize> {
        Ok(hierarchy(&self.any).map(|h| h.size_joint_feature()).unwrap_or(0))
    }

    /// The threads of the pool (1: none).
    #[getter]
    fn n_jobs(&self) -> i64 {
        self.n_jobs
    }

    fn __repr__(&self) -> String {
        format!(
            "<Nhsvm3Trainer: {} instances, C = {}, batch_size = {}, {} epochs>",
            self.labels.len(),
            self.learner.params().c,
            self.learner.params().batch_size,
            self.learner.epochs()
        )
    }
}
