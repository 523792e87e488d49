//! NHSVM3 (thesis eq. `NHSVM3`) trained by SGD/Pegasos on the primal.
//!
//! The problem, in scikit-learn's C (docs/architecture.md, Learners; the thesis's λ‖w‖² + Σℓ_i is C = 1/(2λ)):
//!
//! `P(w) = ½‖w‖² + C·Σ_i ℓ_i(w)`,
//! `ℓ_i(w) = max(0, max_{y ≠ y_i} w·((Λ̃(y) − Λ̃(y_i)) ⊗ x_i) / ‖Λ̃(y) − Λ̃(y_i)‖ + 1)`
//!
//! with the normalized class attribute Λ̃ (node scale √α_n, loss weight α_n, so that
//! ‖Λ̃(y) − Λ̃(y_i)‖ = √(Σ_{n ∈ y △ y_i} α_n), eq. `wserror`). It is not a bi-criteria surrogate
//! max_y ψ(m(y), L(y)) — the margin is *divided* by the loss — so the generic learners of
//! `bicrit-learners` do not run it; its loss-augmented inference is the structure's
//! [`HierarchyStructure::ratio_oracle_scaled`] (enumeration of the single paths) and the
//! subgradient of ℓ_i at its answer ŷ (when ℓ_i > 0) is (φ(x_i, ŷ) − φ(x_i, y_i)) / L(ŷ).
//!
//! The step schedule, averaging and regularisation are those of the Python loop this learner
//! replaced (so that both give the same model): with λ = 1/(n·C), step t = 1, 2, … on the
//! mini-batch B_t is
//!
//! `w ← (1 − η_t λ)·w − (η_t/|B_t|)·Σ_{i ∈ B_t} g_i`, `η_t = 1/(λ·(t + t0))` (t0 = 1 by default),
//!
//! every g_i computed at the weights of its block's start (a block holds `block_size` instances,
//! cut into steps of `batch_size`; with block_size = batch_size, the batch's start), and the
//! returned model is the
//! t-weighted average w̄_t = Σ_τ τ·w_τ / Σ_τ τ (w̄ ← (1 − ρ_t)·w̄ + ρ_t·w with ρ_t = 2/(t + 1)).
//!
//! * **Lazy scaling and averaging** as in `bicrit_learners::sgd`: w = s·v, the shrink is O(1),
//!   an update touches only the entries of the subgradients, and the average is kept by
//!   [`LazyAverage`]; nothing O(M·d) happens per step.
//! * **Parallel blocks, fixed-order reduction** (as `bicrit_learners::sgd`). A block's inferences
//!   and subgradients run in parallel on the [`Context`]'s pool; its steps are then applied in the
//!   block's order, so a fixed `random_state` gives bit-identical weights whatever the number of
//!   threads. (With `block_size` 1 — the default before issue 16 — the pool sat idle.)
//! * **Instance order**: a seeded shuffle per epoch ([`Rng`], SplitMix64 + Fisher–Yates).
//! * **Interrupts and errors**: [`Context::check`] runs between batches; on an error or an
//!   interrupt the state is restored to the end of the previous epoch.

use std::time::Instant;

use bicrit_core::{CsrMatrix, Error, Result, SparseVec};
use bicrit_learners::average::LazyAverage;
use bicrit_learners::rng::Rng;
use bicrit_learners::scratch::{axpy, dense_norm_sq};
use bicrit_learners::Context;
use bicrit_structures::hierarchy::{HierLabel, HierarchyStructure};
use bicrit_structures::Structure;

/// Renormalise v when the scale falls below this.
const MIN_SCALE: f64 = 1e-6;

/// The required margin of NHSVM3 (the `+ 1` of eq. `NHSVM3`).
const MARGIN: f64 = 1.0;

/// Parameters of [`Nhsvm3Sgd`].
#[derive(Clone, Debug, PartialEq)]
pub struct Nhsvm3Params {
    /// scikit-learn's C (> 0): the loss weight.
    pub c: f64,
    /// Instances per step (≥ 1).
    pub batch_size: usize,
    /// Instances whose inferences run in parallel at the weights of the block's start (≥ 1); the
    /// block's steps (of `batch_size`, never spanning two blocks) are then applied in order.
    pub block_size: usize,
    /// Offset of the Pegasos schedule η_t = 1/(λ·(t + t0)) (> 0).
    pub t0: f64,
    /// Seed of the per-epoch instance order.
    pub random_state: u64,
}

impl Default for Nhsvm3Params {
    fn default() -> Self {
        Nhsvm3Params { c: 1.0, batch_size: 1, block_size: 1, t0: 1.0, random_state: 0 }
    }
}

impl Nhsvm3Params {
    /// Validates the parameters.
    pub fn check(&self) -> Result<()> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(Error::param(format!("C must be a finite number > 0, got {}", self.c)));
        }
        if self.batch_size == 0 {
            return Err(Error::param("batch_size must be at least 1"));
        }
        if self.block_size == 0 {
            return Err(Error::param("block_size must be at least 1"));
        }
        if !(self.t0.is_finite() && self.t0 > 0.0) {
            return Err(Error::param(format!("t0 must be a finite number > 0, got {}", self.t0)));
        }
        Ok(())
    }
}

/// What one epoch measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Nhsvm3Stats {
    /// Epochs done (1-based).
    pub epoch: usize,
    /// Running objective ½‖w‖² + C·Σ_i ℓ_i: the last iterate's norm and each ℓ_i as measured
    /// at its batch's start (the Python loop's estimate).
    pub objective: f64,
    /// Mean ℓ_i of the epoch (running).
    pub loss: f64,
    /// ‖w‖² of the last iterate.
    pub norm_sq: f64,
    /// Instances with ℓ_i > 0.
    pub violated: usize,
    /// Inferences run.
    pub inferences: usize,
    /// Step size of the last step.
    pub step_size: f64,
    /// Seconds.
    pub time: f64,
}

/// The learner's state (see the module documentation).
#[derive(Clone, Debug)]
pub struct Nhsvm3Sgd {
    params: Nhsvm3Params,
    n: usize,
    lambda: f64,
    v: Vec<f64>,
    s: f64,
    avg: LazyAverage,
    t: u64,
    epochs: usize,
    rng: Rng,
}

/// Checks that `data` and `labels` fit `h` and NHSVM3 (single paths, one label per row).
pub fn check_problem(h: &HierarchyStructure, data: &CsrMatrix, labels: &[HierLabel]) -> Result<()> {
    if h.multilabel() {
        return Err(Error::incompatible(
            "NHSVM3 maximises over single paths (its normalized difference does not decompose over \
             nodes): the hierarchy structure needs multilabel=False",
        ));
    }
    if data.n_cols != h.n_features() {
        return Err(Error::input(format!(
            "X has {} features but the structure was initialised with {}",
            data.n_cols,
            h.n_features()
        )));
    }
    if data.n_rows() != labels.len() {
        return Err(Error::input(format!(
            "X has {} instances but Y has {} labels",
            data.n_rows(),
            labels.len()
        )));
    }
    if labels.is_empty() {
        return Err(Error::input("the training set is empty: X has no instances"));
    }
    for (i, y) in labels.iter().enumerate() {
        h.check(y).map_err(|e| Error::input(format!("Y[{i}]: {e}")))?;
    }
    Ok(())
}

/// ℓ_i(w) and the subgradient term g_i = (φ(x_i, ŷ) − φ(x_i, y_i)) / L(ŷ) (empty when ℓ_i = 0)
/// at w = `scale`·`v`.
fn loss_and_subgradient(
    h: &HierarchyStructure,
    data: &CsrMatrix,
    gold: &[u32],
    i: usize,
    v: &[f64],
    scale: f64,
    with_gradient: bool,
) -> Result<(f64, SparseVec)> {
    // The oracle sees σ = scale·(node scores of v), so its clipped value is ℓ_i(w) itself.
    let (ans, value) = h.ratio_oracle_scaled(v, scale, data, i, gold, MARGIN)?;
    let mut g = SparseVec::new();
    if with_gradient && value > 0.0 {
        // value > 0 only for an answer with L(ŷ) > 0 (the oracle skips L = 0)
        h.scaled_difference(data, i, &ans.label, gold, 1.0 / ans.terms.loss, &mut g)?;
    }
    Ok((value, g))
}

/// Σ_i ℓ_i(w) over the training set (one inference pass on the context's pool; chunks of 256
/// between interrupt checks).
pub fn nhsvm3_loss(
    h: &HierarchyStructure,
    data: &CsrMatrix,
    labels: &[HierLabel],
    w: &[f64],
    ctx: &Context<'_>,
) -> Result<f64> {
    check_problem(h, data, labels)?;
    bicrit_core::error::check_finite("w", w)?;
    let idx: Vec<usize> = (0..labels.len()).collect();
    let mut total = 0.0;
    for chunk in idx.chunks(256) {
        ctx.check()?;
        let got = ctx.map(chunk, |i| loss_and_subgradient(h, data, &labels[i], i, w, 1.0, false))?;
        total += got.iter().map(|(l, _)| l).sum::<f64>();
    }
    Ok(total)
}

impl Nhsvm3Sgd {
    /// A learner for `n` instances on structure `h`, starting from `w0` (zeros when None).
    pub fn new(params: Nhsvm3Params, h: &HierarchyStructure, n: usize, w0: Option<Vec<f64>>) -> Result<Self> {
        params.check()?;
        if n == 0 {
            return Err(Error::input("the training set is empty"));
        }
        let dim = h.size_joint_feature();
        let lambda = 1.0 / (n as f64 * params.c);
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(Error::param(format!(
                "C = {} with n = {n} gives the regularisation λ = 1/(n·C) = {lambda}, which is not a \
                 positive finite number",
                params.c
            )));
        }
        let v = match w0 {
            Some(w) => {
                if w.len() != dim {
                    return Err(Error::input(format!(
                        "w0 has length {} but the joint feature size is {dim}",
                        w.len()
                    )));
                }
                bicrit_core::error::check_finite("w0", &w)?;
                w
            }
            None => vec![0.0; dim],
        };
        Ok(Nhsvm3Sgd {
            rng: Rng::new(params.random_state),
            params,
            n,
            lambda,
            v,
            s: 1.0,
            avg: LazyAverage::new(dim),
            t: 0,
            epochs: 0,
        })
    }

    /// The parameters.
    pub fn params(&self) -> &Nhsvm3Params {
        &self.params
    }

    /// Epochs done.
    pub fn epochs(&self) -> usize {
        self.epochs
    }

    /// Steps done.
    pub fn steps(&self) -> u64 {
        self.t
    }

    /// The t-weighted average of the iterates when `averaged` (the last iterate before the first
    /// step), else the last iterate.
    pub fn weights(&self, averaged: bool) -> Vec<f64> {
        if averaged {
            if let Some(w) = self.avg.average(&self.v) {
                return w;
            }
        }
        self.v.iter().map(|x| x * self.s).collect()
    }

    /// One pass over the training set in a fresh seeded order. On an error or an interrupt the
    /// state is that of the end of the previous epoch.
    pub fn epoch(
        &mut self,
        h: &HierarchyStructure,
        data: &CsrMatrix,
        labels: &[HierLabel],
        ctx: &Context<'_>,
    ) -> Result<Nhsvm3Stats> {
        check_problem(h, data, labels)?;
        bicrit_learners::check_counts((self.n, self.v.len()), (labels.len(), h.size_joint_feature()))?;
        let saved = (self.v.clone(), self.s, self.avg.clone(), self.t, self.epochs, self.rng.clone());
        let out = self.run_epoch(h, data, labels, ctx);
        if out.is_err() {
            (self.v, self.s, self.avg, self.t, self.epochs, self.rng) = saved;
        }
        out
    }

    fn run_epoch(
        &mut self,
        h: &HierarchyStructure,
        data: &CsrMatrix,
        labels: &[HierLabel],
        ctx: &Context<'_>,
    ) -> Result<Nhsvm3Stats> {
        let start = Instant::now();
        let n = self.n;
        let mut order: Vec<usize> = (0..n).collect();
        self.rng.shuffle(&mut order);
        let (mut total, mut violated, mut eta) = (0.0, 0usize, 0.0);
        for block in order.chunks(self.params.block_size) {
            ctx.check()?;
            // ℓ_i and g_i at the block's start, in parallel; results in the block's order.
            let found = {
                let (v, s) = (&self.v, self.s);
                ctx.map(block, |i| loss_and_subgradient(h, data, &labels[i], i, v, s, true))?
            };
            for batch in found.chunks(self.params.batch_size) {
                self.t += 1;
                eta = 1.0 / (self.lambda * (self.t as f64 + self.params.t0));
                // 1 − η_t·λ = (t + t0 − 1)/(t + t0) > 0 for t ≥ 1 and t0 > 0
                self.s *= 1.0 - eta * self.lambda;
                let a = -eta / (batch.len() as f64 * self.s);
                // fixed-order reduction: the batch's subgradients are added in its order
                for (loss, g) in batch {
                    total += loss;
                    if *loss > 0.0 {
                        violated += 1;
                        axpy(&mut self.v, g, a);
                        self.avg.on_update(g, a);
                    }
                }
                // w̄_t = Σ_τ τ·w_τ / Σ_τ τ: weight t for the iterate after step t
                self.avg.on_step(self.s, self.t as f64);
                if self.s < MIN_SCALE {
                    self.avg.on_reset(&self.v);
                    let s = self.s;
                    self.v.iter_mut().for_each(|x| *x *= s);
                    self.s = 1.0;
                }
            }
        }
        self.epochs += 1;
        let norm_sq = self.s * self.s * dense_norm_sq(&self.v);
        Ok(Nhsvm3Stats {
            epoch: self.epochs,
            objective: 0.5 * norm_sq + self.params.c * total,
            loss: total / n as f64,
            norm_sq,
            violated,
            inferences: n,
            step_size: eta,
            time: start.elapsed().as_secs_f64(),
        })
    }
}

#[cfg(test)]
mod tests;
