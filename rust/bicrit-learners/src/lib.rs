//! Learners for structured SVMs with bi-criteria surrogates (DESIGN §5).
//!
//! Every learner minimises, in scikit-learn's sense of C,
//!
//! `P(w) = ½‖w‖² + C · Σ_i ℓ_i(w)`, `ℓ_i(w) = max_y ψ(h(y), g(y))`
//!
//! (the thesis's chapters 1–4 write (C_t/2)‖w‖² + (1/n)Σℓ_i, so C = 1/(n·C_t); the learners work
//! internally with λ = 1/(n·C), the Pegasos/BCFW form λ/2‖w‖² + (1/n)Σℓ_i, which is P/(n·C)). Every
//! objective, dual value and gap they report is in the scale of P. Loss-augmented inference is a
//! search over the structure's λ-oracle ([`Problem::infer`]); for relaxed searches (convex hull
//! without recovery) ℓ_i is the maximum of ψ over the convex hull of the labels, which bounds the
//! integral loss from above.
//!
//! | learner | module | surrogates | searches | objective reported |
//! |---|---|---|---|---|
//! | `sgd` | [`sgd`] | every ψ | every search but `sarawagi` | running estimate (exact on request) |
//! | `bcfw` | [`bcfw`] | affine in h | every search but `sarawagi` | running estimate + duality gap (exact on request) |
//! | `cutting-plane` (1-slack) | [`cutting_plane`] | affine in h | every search but `sarawagi` | exact, with the QP's dual |
//! | `cutting-plane-n` (n-slack) | [`cutting_plane`] | affine in h | every search | exact (one QP per pass) |
//!
//! The family trait is [`Learner`]; [`AnyLearner`] holds any of them, built by name from
//! parameters ([`AnyLearner::new`]) after [`check_compatible`] has refused combinations that do not
//! fit (DESIGN §3 "Which pieces combine").
//!
//! **Determinism.** Instances are visited in a seeded order ([`rng`]); inferences that run in
//! parallel (a *block*) all use the weights at the start of the block, and their updates are
//! applied afterwards in the block's order, so the same `random_state` gives bit-identical weights
//! whatever the number of threads.

pub mod average;
pub mod bcfw;
pub mod catalog;
pub mod cutting_plane;
pub mod params;
pub mod problem;
mod qp;
pub mod rng;
pub mod scratch;
pub mod sgd;
#[cfg(test)]
mod tests;

use std::cell::Cell;
use std::time::{Duration, Instant};

use bicrit_core::{Capabilities, Error, Result, SparseVec, Terms};
use bicrit_searches::{Calls, SearchSpec, WarmStart};
use bicrit_structures::Structure;
use bicrit_surrogates::Surrogate;
use rayon::prelude::*;

pub use bcfw::Bcfw;
pub use cutting_plane::CuttingPlane;
pub use params::{ParamDoc, Value};
pub use problem::{Prepared, Problem, Violation};
pub use sgd::Sgd;

/// Registry names of the learners.
pub const NAMES: [&str; 4] = ["sgd", "bcfw", "cutting-plane", "cutting-plane-n"];

/// Which learner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// SGD / Pegasos on the primal.
    Sgd,
    /// Block-coordinate Frank–Wolfe.
    Bcfw,
    /// 1-slack cutting plane.
    CuttingPlane,
    /// n-slack cutting plane.
    CuttingPlaneN,
}

impl Kind {
    /// The learner registered as `name`.
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "sgd" => Kind::Sgd,
            "bcfw" => Kind::Bcfw,
            "cutting-plane" => Kind::CuttingPlane,
            "cutting-plane-n" => Kind::CuttingPlaneN,
            _ => {
                return Err(Error::param(format!(
                    "unknown learner '{name}'; known learners: {}",
                    NAMES.join(", ")
                )))
            }
        })
    }

    /// Registry name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sgd => "sgd",
            Kind::Bcfw => "bcfw",
            Kind::CuttingPlane => "cutting-plane",
            Kind::CuttingPlaneN => "cutting-plane-n",
        }
    }

    /// Whether the learner needs each corner's intercept, i.e. a loss that is a maximum of functions
    /// affine in w (ψ affine in h).
    pub fn needs_affine(self) -> bool {
        !matches!(self, Kind::Sgd)
    }
}

/// Checks learner × search × surrogate × oracle capabilities (DESIGN §3 "Which pieces combine")
/// and refuses the rest with an [`Error::Incompatible`] naming the pieces and what would work.
pub fn check_compatible(
    kind: Kind,
    psi: &dyn Surrogate,
    search: &SearchSpec,
    caps: Capabilities,
) -> Result<()> {
    if search.requirements().frontier && !psi.factor_map(&Terms::default()).g_by_loss() {
        return Err(Error::incompatible(format!(
            "search '{}' takes the best label for every task-loss value, which is the best for every g only \
             when g is a function of the loss; surrogate '{}' has another g (Micro-F1: g = −(|y| + |y_i|)) — \
             use 'convex-hull' (or 'convex-hull-ban' for integral answers)",
            search.name(),
            psi.name()
        )));
    }
    search.check(psi, caps)?;
    let learner = kind.name();
    if kind.needs_affine() && !psi.affine_in_h() {
        return Err(Error::incompatible(format!(
            "learner '{learner}' needs a loss that is a maximum of functions affine in w (ψ affine in h, \
             so that each corner has an intercept ψ − ψ_h·h), and surrogate '{}' is not; use learner \
             'sgd', which works with every surrogate",
            psi.name()
        )));
    }
    if search.requirements().xi && !catalog::provides_xi(kind) {
        return Err(Error::incompatible(format!(
            "search '{}' needs the instance's slack ξ_i, which only learner 'cutting-plane-n' (n-slack) \
             maintains; learner '{learner}' cannot run it — use 'convex-hull' (any surrogate) or, for \
             slack rescaling, 'angular'/'bisecting'/'binary'",
            search.name()
        )));
    }
    Ok(())
}

/// Parses `params` for learner `kind` without building it: unknown names and values outside their
/// domain are [`Error::InvalidParameter`] errors naming the parameter.
pub fn check_params(kind: Kind, params: &[(String, Value)]) -> Result<()> {
    match kind {
        Kind::Sgd => params::SgdParams::parse(params).map(|_| ()),
        Kind::Bcfw => params::BcfwParams::parse(params).map(|_| ()),
        Kind::CuttingPlane => params::CpParams::parse(params, false).map(|_| ()),
        Kind::CuttingPlaneN => params::CpParams::parse(params, true).map(|_| ()),
    }
}

/// How an epoch's objective was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectiveKind {
    /// ½‖w‖² at the end of the epoch plus C times the losses met during the epoch (each at the
    /// weights of its own inference): free, an estimate.
    Running,
    /// A full inference pass at the returned weights.
    Exact,
}

impl ObjectiveKind {
    /// `"running"` or `"exact"`.
    pub fn name(self) -> &'static str {
        match self {
            ObjectiveKind::Running => "running",
            ObjectiveKind::Exact => "exact",
        }
    }
}

/// What one epoch reports (the bindings turn it into a flat dict; see [`STAT_KEYS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct EpochStats {
    /// 1-based epoch number.
    pub epoch: usize,
    /// Primal objective ½‖w‖² + C·Σℓ_i (see `objective_kind`).
    pub objective: f64,
    /// How `objective` and `loss` were obtained.
    pub objective_kind: ObjectiveKind,
    /// Mean surrogate loss (1/n)·Σℓ_i, same kind as `objective`.
    pub loss: f64,
    /// ‖w‖² of the weights `objective` refers to.
    pub norm_sq: f64,
    /// Dual objective (BCFW, cutting plane), same scale as `objective`.
    pub dual: Option<f64>,
    /// Duality gap (BCFW: running sum of block gaps, or exact; cutting plane: exact).
    pub gap: Option<f64>,
    /// Whether the learner's stopping test holds (BCFW: relative gap ≤ tol; cutting plane: the
    /// most violated constraint within eps). SGD has no certificate and never converges.
    pub converged: bool,
    /// Oracle calls of the epoch's searches (training inferences only, not the exact pass).
    pub calls: Calls,
    /// Number of training inferences (searches) of the epoch.
    pub inferences: usize,
    /// Answers that were a point inside a hull edge.
    pub fractional: usize,
    /// Answers that were the gold label (zero loss).
    pub gold: usize,
    /// Wall time of the epoch in seconds (the exact pass included).
    pub time: f64,
    /// SGD: the step size of the last step.
    pub step_size: Option<f64>,
    /// Cutting plane: number of constraints in the working set after the epoch.
    pub working_set: Option<usize>,
    /// Mean task loss of the predictions on the training set (with `task_loss=True`).
    pub task_loss: Option<f64>,
    /// Oracle calls of the exact pass (not counted in `calls`).
    pub exact_calls: Option<usize>,
}

/// Keys of the stats dict, in order (the Python history's columns).
pub const STAT_KEYS: [&str; 26] = [
    "epoch",
    "learner",
    "objective",
    "objective_kind",
    "loss",
    "norm_sq",
    "dual",
    "gap",
    "converged",
    "calls",
    "calls_lambda",
    "calls_extreme",
    "calls_cone",
    "calls_ban",
    "calls_kbest",
    "calls_frontier",
    "evaluated",
    "inferences",
    "calls_per_inference",
    "fractional",
    "gold",
    "time",
    "step_size",
    "working_set",
    "task_loss",
    "exact_calls",
];

/// What an epoch replaced, so that a failed or interrupted epoch can be undone without copying the
/// per-instance state up front: the previous warm starts and (BCFW) blocks, moved here when
/// replaced.
pub(crate) struct Journal<L> {
    pub warm: Vec<(usize, Option<WarmStart<L>>)>,
    pub blocks: Vec<(usize, SparseVec, f64)>,
}

impl<L> Journal<L> {
    pub fn new() -> Self {
        Journal { warm: Vec::new(), blocks: Vec::new() }
    }

    /// Puts the warm starts back (latest replacement undone first).
    pub fn undo_warm(&mut self, warm: &mut [Option<WarmStart<L>>]) {
        for (i, old) in self.warm.drain(..).rev() {
            warm[i] = old;
        }
    }
}

/// Stores the warm start of instance `i`'s latest search: its own warm-start labels (the final hull
/// chain) first, then the labels of the previous warm start that are not among them, at most
/// `common.cache_size` in all (nothing when warm starts are off). The previous one goes to the
/// journal.
pub(crate) fn keep_warm<L: Clone + PartialEq>(
    warm: &mut [Option<WarmStart<L>>],
    i: usize,
    new: WarmStart<L>,
    common: &params::Common,
    journal: &mut Journal<L>,
) {
    if !common.warm_start {
        return;
    }
    let mut new = new;
    let old = warm[i].take();
    if let Some(old) = &old {
        for l in &old.labels {
            if new.labels.len() >= common.cache_size {
                break;
            }
            if !new.labels.contains(l) {
                new.labels.push(l.clone());
            }
        }
    }
    new.labels.truncate(common.cache_size);
    warm[i] = Some(new);
    journal.warm.push((i, old));
}

/// Refuses a problem whose size is not the one the learner was built for (`n` instances, `dim`
/// joint features).
pub(crate) fn check_size<S: Structure>(p: &Problem<'_, S>, n: usize, dim: usize) -> Result<()> {
    check_counts((n, dim), (p.n(), p.dim()))
}

/// A learner built for `built` = (instances, joint features) refuses a problem of another size.
pub fn check_counts(built: (usize, usize), got: (usize, usize)) -> Result<()> {
    if built != got {
        return Err(Error::input(format!(
            "the learner was built for {} instances and {} joint features, the problem has {} and {}",
            built.0, built.1, got.0, got.1
        )));
    }
    Ok(())
}

/// Adds the counts of `b` to `a`.
pub fn add_calls(a: &mut Calls, b: &Calls) {
    a.lambda += b.lambda;
    a.extreme += b.extreme;
    a.cone += b.cone;
    a.ban += b.ban;
    a.kbest += b.kbest;
    a.frontier += b.frontier;
    a.evaluated += b.evaluated;
}

/// Counters of one pass of inferences.
#[derive(Clone, Debug, Default)]
pub struct PassCounts {
    /// Σ ℓ_i.
    pub loss: f64,
    /// Oracle calls.
    pub calls: Calls,
    /// Inferences.
    pub inferences: usize,
    /// Fractional answers.
    pub fractional: usize,
    /// Gold answers.
    pub gold: usize,
}

impl PassCounts {
    /// Records one inference.
    pub fn record<L>(&mut self, v: &Violation<L>) {
        self.loss += v.loss;
        add_calls(&mut self.calls, &v.calls);
        self.inferences += 1;
        self.fractional += usize::from(v.fractional);
        self.gold += usize::from(v.is_gold);
    }
}

/// Callback the driver calls between blocks (at most every 50 ms); an error aborts the epoch. The
/// bindings check for Ctrl-C there.
pub type Interrupt<'a> = &'a (dyn Fn() -> Result<()> + Sync);

/// What an epoch runs with: the thread pool of `n_jobs` and the interrupt check.
pub struct Context<'a> {
    pool: Option<&'a rayon::ThreadPool>,
    interrupt: Option<Interrupt<'a>>,
    last_check: Cell<Instant>,
    interval: Duration,
}

impl<'a> Context<'a> {
    /// A context; `pool` None runs everything on the calling thread.
    pub fn new(pool: Option<&'a rayon::ThreadPool>, interrupt: Option<Interrupt<'a>>) -> Self {
        Self::with_interval(pool, interrupt, Duration::from_millis(50))
    }

    /// A context whose interrupt check runs at most every `interval`.
    pub fn with_interval(
        pool: Option<&'a rayon::ThreadPool>,
        interrupt: Option<Interrupt<'a>>,
        interval: Duration,
    ) -> Self {
        Context { pool, interrupt, last_check: Cell::new(Instant::now()), interval }
    }

    /// A sequential context without interrupts (tests, Rust callers).
    pub fn sequential() -> Context<'static> {
        Context::with_interval(None, None, Duration::from_millis(50))
    }

    /// Calls the interrupt check if the interval has passed since the last one.
    pub fn check(&self) -> Result<()> {
        if let Some(f) = self.interrupt {
            if self.last_check.get().elapsed() >= self.interval {
                self.last_check.set(Instant::now());
                f()?;
            }
        }
        Ok(())
    }

    /// `f(i)` for every index of `idx`, in parallel on the pool when there is one; results in the
    /// order of `idx`.
    pub fn map<T: Send>(
        &self,
        idx: &[usize],
        f: impl Fn(usize) -> Result<T> + Sync + Send,
    ) -> Result<Vec<T>> {
        match self.pool {
            Some(pool) if idx.len() > 1 && pool.current_num_threads() > 1 => {
                pool.install(|| idx.par_iter().map(|&i| f(i)).collect())
            }
            _ => idx.iter().map(|&i| f(i)).collect(),
        }
    }

    /// Builds a pool of `n_jobs` threads (−1: all cores, 1: none).
    pub fn pool(n_jobs: i64) -> Result<Option<rayon::ThreadPool>> {
        let n = match n_jobs {
            1 => return Ok(None),
            -1 => std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1),
            n if n > 1 => n as usize,
            n => {
                return Err(Error::param(format!(
                    "n_jobs = {n} must be a positive number of threads or -1 (all cores)"
                )))
            }
        };
        if n == 1 {
            return Ok(None);
        }
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("bicrit-learner-{i}"))
            .build()
            .map(Some)
            .map_err(|e| Error::solver(format!("cannot start {n} threads: {e}")))
    }
}

/// Inference for every index of `idx` at weights `scale · w` with the given warm starts, in
/// chunks between which the interrupt is checked; results in the order of `idx`.
pub(crate) fn infer_many<S: Structure>(
    p: &Problem<'_, S>,
    ctx: &Context<'_>,
    idx: &[usize],
    w: &[f64],
    scale: f64,
    warm: &[Option<WarmStart<S::Label>>],
    xi: Option<&[f64]>,
) -> Result<Vec<Violation<S::Label>>> {
    let mut out = Vec::with_capacity(idx.len());
    for chunk in idx.chunks(256) {
        ctx.check()?;
        let got = ctx.map(chunk, |i| p.infer(i, w, scale, warm[i].as_ref(), xi.map(|x| x[i])))?;
        out.extend(got);
    }
    Ok(out)
}

/// An exact pass: Σ_i ℓ_i at weights `w` (warm starts read, not updated) with its counters.
/// `xi`: the slacks ξ_i a search that needs them (Sarawagi–Gupta) is given.
pub fn exact_pass<S: Structure>(
    p: &Problem<'_, S>,
    ctx: &Context<'_>,
    w: &[f64],
    warm: &[Option<WarmStart<S::Label>>],
    xi: Option<&[f64]>,
) -> Result<PassCounts> {
    let idx: Vec<usize> = (0..p.n()).collect();
    let mut counts = PassCounts::default();
    for chunk in idx.chunks(256) {
        ctx.check()?;
        let got = ctx.map(chunk, |i| p.infer(i, w, 1.0, warm[i].as_ref(), xi.map(|x| x[i])))?;
        for v in &got {
            counts.record(v);
        }
    }
    Ok(counts)
}

/// Mean task loss of the predictions argmax_y w·φ(x_i, y) on the training set.
pub fn task_loss<S: Structure>(p: &Problem<'_, S>, ctx: &Context<'_>, w: &[f64]) -> Result<f64> {
    let idx: Vec<usize> = (0..p.n()).collect();
    let mut total = 0.0;
    for chunk in idx.chunks(256) {
        ctx.check()?;
        let got = ctx.map(chunk, |i| {
            let y = p.structure.predict(w, p.data, i)?;
            Ok(p.structure.terms(&y, &p.labels[i])?.loss)
        })?;
        total += got.iter().sum::<f64>();
    }
    Ok(total / p.n() as f64)
}

/// A learner: its state, one epoch at a time.
pub trait Learner<L>: Clone + Send {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// One pass over the training set. On error (or an interrupt) the state is that of the end of
    /// the previous epoch.
    fn epoch<S: Structure<Label = L>>(&mut self, p: &Problem<'_, S>, ctx: &Context<'_>)
        -> Result<EpochStats>;
    /// The weights: the averaged ones when `averaged` and the learner averages, else the iterate.
    fn weights(&self, averaged: bool) -> Vec<f64>;
    /// Number of epochs done.
    fn epochs(&self) -> usize;
}

/// Any learner, by name.
#[derive(Clone, Debug)]
pub enum AnyLearner<L> {
    /// `sgd`.
    Sgd(Sgd<L>),
    /// `bcfw`.
    Bcfw(Bcfw<L>),
    /// `cutting-plane` and `cutting-plane-n`.
    CuttingPlane(CuttingPlane<L>),
}

impl<L: Clone + PartialEq + Send + Sync> AnyLearner<L> {
    /// The learner `kind` with parameters `params` (names as in [`params::docs`]; unknown names
    /// and values outside their domain are [`Error::InvalidParameter`] errors) for `n` instances
    /// and `dim` joint features, starting from `w0` (zeros when None).
    pub fn new(
        kind: Kind,
        params: &[(String, Value)],
        n: usize,
        dim: usize,
        w0: Option<Vec<f64>>,
    ) -> Result<Self> {
        if let Some(w) = &w0 {
            if w.len() != dim {
                return Err(Error::input(format!(
                    "w0 has length {} but the joint feature size is {dim}",
                    w.len()
                )));
            }
            bicrit_core::error::check_finite("w0", w)?;
        }
        Ok(match kind {
            Kind::Sgd => AnyLearner::Sgd(Sgd::new(params::SgdParams::parse(params)?, n, dim, w0)?),
            Kind::Bcfw => AnyLearner::Bcfw(Bcfw::new(params::BcfwParams::parse(params)?, n, dim, w0)?),
            Kind::CuttingPlane | Kind::CuttingPlaneN => AnyLearner::CuttingPlane(CuttingPlane::new(
                params::CpParams::parse(params, kind == Kind::CuttingPlaneN)?,
                n,
                dim,
                w0,
            )?),
        })
    }

    /// The common parameters (C, n_jobs, random_state, …) the learner was built with.
    pub fn common(&self) -> &params::Common {
        match self {
            AnyLearner::Sgd(l) => &l.params.common,
            AnyLearner::Bcfw(l) => &l.params.common,
            AnyLearner::CuttingPlane(l) => &l.params.common,
        }
    }

    /// Every parameter with its effective value.
    pub fn effective_params(&self) -> Vec<(&'static str, Value)> {
        match self {
            AnyLearner::Sgd(l) => l.params.effective(),
            AnyLearner::Bcfw(l) => l.params.effective(),
            AnyLearner::CuttingPlane(l) => l.params.effective(),
        }
    }
}

impl<L: Clone + PartialEq + Send + Sync> Learner<L> for AnyLearner<L> {
    fn name(&self) -> &'static str {
        match self {
            AnyLearner::Sgd(l) => l.name(),
            AnyLearner::Bcfw(l) => l.name(),
            AnyLearner::CuttingPlane(l) => l.name(),
        }
    }
    fn epoch<S: Structure<Label = L>>(
        &mut self,
        p: &Problem<'_, S>,
        ctx: &Context<'_>,
    ) -> Result<EpochStats> {
        match self {
            AnyLearner::Sgd(l) => l.epoch(p, ctx),
            AnyLearner::Bcfw(l) => l.epoch(p, ctx),
            AnyLearner::CuttingPlane(l) => l.epoch(p, ctx),
        }
    }
    fn weights(&self, averaged: bool) -> Vec<f64> {
        match self {
            AnyLearner::Sgd(l) => l.weights(averaged),
            AnyLearner::Bcfw(l) => l.weights(averaged),
            AnyLearner::CuttingPlane(l) => l.weights(averaged),
        }
    }
    fn epochs(&self) -> usize {
        match self {
            AnyLearner::Sgd(l) => l.epochs(),
            AnyLearner::Bcfw(l) => l.epochs(),
            AnyLearner::CuttingPlane(l) => l.epochs(),
        }
    }
}

/// The exact primal objective ½‖w‖² + C·Σℓ_i(w) and its pass counters (`xi` as in
/// [`exact_pass`]).
pub fn objective<S: Structure>(
    p: &Problem<'_, S>,
    ctx: &Context<'_>,
    w: &[f64],
    c: f64,
    warm: &[Option<WarmStart<S::Label>>],
    xi: Option<&[f64]>,
) -> Result<(f64, PassCounts)> {
    let counts = exact_pass(p, ctx, w, warm, xi)?;
    Ok((0.5 * scratch::dense_norm_sq(w) + c * counts.loss, counts))
}

/// The slacks ξ_i of the n-slack working sets at the current weights (what the Sarawagi–Gupta
/// search needs in an exact pass); None for the other learners.
pub fn slacks<L: Clone + PartialEq + Send + Sync>(l: &AnyLearner<L>) -> Option<Vec<f64>> {
    match l {
        AnyLearner::CuttingPlane(x) if x.params.n_slack => Some(x.slacks()),
        _ => None,
    }
}

/// Per-instance warm starts of a learner (read-only use by exact passes).
pub fn warm_starts<L: Clone + PartialEq + Send + Sync>(l: &AnyLearner<L>) -> &[Option<WarmStart<L>>] {
    match l {
        AnyLearner::Sgd(x) => &x.warm,
        AnyLearner::Bcfw(x) => &x.warm,
        AnyLearner::CuttingPlane(x) => &x.warm,
    }
}
