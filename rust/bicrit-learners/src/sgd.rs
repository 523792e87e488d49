//! SGD / Pegasos on the primal (Shalev-Shwartz et al. 2011), for every surrogate and search.
//!
//! With λ = 1/(n·C), step t on the instances B_t (a batch) is
//! `w ← (1 − η_t λ)·w − (η_t/|B_t|)·Σ_{i∈B_t} c_i·Δφ_i` where c_i·Δφ_i is the subgradient of
//! ℓ_i at the answer of its search ([`crate::Problem::infer`]; a fractional answer gives the
//! weighted combination of its labels' feature differences).
//!
//! * **Lazy scaling.** w = s·v: the shrink is `s ← (1 − ηλ)·s` (O(1)) and the sparse update
//!   touches only Δφ's entries of v (O(nnz)); v is renormalised when s drops below 1e-6. The
//!   searches see v and s through the factor map (no dense copy of w); searches that query cones
//!   in (1 + m, L) coordinates (angular) get v renormalised to s = 1 at each block instead.
//! * **Averaging** (Polyak–Ruppert, uniform or weighted by t) with lazy bookkeeping
//!   ([`crate::average`]): no O(D) work per step.
//! * **Blocks in parallel.** The shuffled instances are cut into blocks of `block_size`; a block's
//!   inferences run in parallel against the weights at its start, then its steps (of `batch_size`
//!   instances each, never spanning two blocks) are applied in the block's order. The model
//!   therefore depends on the seed, `block_size` and `batch_size`, never on the number of threads.
//! * **Projection** (optional, `project`; Pegasos, Shalev-Shwartz et al. 2011, §2):
//!   ½‖w*‖² ≤ P(w*) ≤ P(0) = C·Σ_i ℓ_i(0),
//!   so after each step w is scaled back into the ball ‖w‖ ≤ R = √(2C·Σ_i ℓ_i(0)) (ℓ_i(0) from one
//!   inference pass at w = 0 before the first epoch). ‖v‖² is tracked exactly through the sparse
//!   updates, so the projection is O(nnz) too. Without it the first steps (η_1 = n·C/(1 + t0))
//!   of a loss scaled by the task loss, such as slack rescaling, throw w far outside that ball.
//! * **Warm starts.** Each instance's search starts from its previous epoch's outcome.

use std::time::Instant;

use bicrit_core::{Error, Result};
use bicrit_searches::WarmStart;
use bicrit_structures::Structure;

use crate::average::LazyAverage;
use crate::params::{Averaging, Schedule, SgdParams};
use crate::rng::Rng;
use crate::scratch::{axpy, dense_norm_sq, dot};
use crate::{
    keep_warm, objective, task_loss, Context, EpochStats, Journal, Learner, ObjectiveKind, PassCounts,
    Problem,
};

/// Renormalise v when the scale falls below this.
const MIN_SCALE: f64 = 1e-6;

/// The SGD learner's state.
#[derive(Clone, Debug)]
pub struct Sgd<L> {
    /// Parameters.
    pub params: SgdParams,
    lambda: f64,
    v: Vec<f64>,
    s: f64,
    /// ‖v‖², tracked through the updates (recomputed on renormalisation).
    v_norm_sq: f64,
    /// Radius² of the projection ball (None until the pass at w = 0; infinite without projection).
    radius_sq: Option<f64>,
    avg: LazyAverage,
    t: u64,
    epochs: usize,
    /// Per-instance warm starts.
    pub warm: Vec<Option<WarmStart<L>>>,
    rng: Rng,
    /// v and the average at the start of the epoch (restored if it fails).
    spare: (Vec<f64>, LazyAverage),
}

impl<L: Clone + PartialEq + Send + Sync> Sgd<L> {
    /// A learner for `n` instances and `dim` joint features, starting from `w0` (zeros).
    pub fn new(params: SgdParams, n: usize, dim: usize, w0: Option<Vec<f64>>) -> Result<Self> {
        if n == 0 {
            return Err(Error::input("the training set is empty"));
        }
        let lambda = 1.0 / (n as f64 * params.common.c);
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(Error::param(format!(
                "learner 'sgd': C = {} with n = {n} gives the regularisation λ = 1/(n·C) = {lambda}, \
                 which is not a positive finite number",
                params.common.c
            )));
        }
        if matches!(params.schedule, Schedule::Constant | Schedule::InvScaling) && params.eta0 * lambda >= 1.0
        {
            return Err(Error::param(format!(
                "learner 'sgd': eta0 = {} is too large for λ = 1/(n·C) = {lambda}: the shrink factor \
                 1 − eta0·λ must be positive (use eta0 < {})",
                params.eta0,
                1.0 / lambda
            )));
        }
        let rng = Rng::new(params.common.random_state);
        let v = w0.unwrap_or_else(|| vec![0.0; dim]);
        Ok(Sgd {
            lambda,
            v_norm_sq: dense_norm_sq(&v),
            radius_sq: if params.project { None } else { Some(f64::INFINITY) },
            v,
            s: 1.0,
            avg: LazyAverage::new(if params.average == Averaging::None { 0 } else { dim }),
            t: 0,
            epochs: 0,
            warm: vec![None; n],
            rng,
            spare: (Vec::new(), LazyAverage::new(0)),
            params,
        })
    }

    fn eta(&self) -> f64 {
        let t = self.t as f64;
        match self.params.schedule {
            Schedule::Pegasos => 1.0 / (self.lambda * (t + self.params.t0)),
            Schedule::Constant => self.params.eta0,
            Schedule::InvScaling => self.params.eta0 / t.powf(self.params.power_t),
        }
    }

    fn renormalise(&mut self) {
        if self.s != 1.0 {
            let s = self.s;
            if self.params.average != Averaging::None {
                self.avg.on_reset(&self.v);
            }
            self.v.iter_mut().for_each(|x| *x *= s);
            self.s = 1.0;
            if self.params.project {
                self.v_norm_sq = dense_norm_sq(&self.v);
            }
        }
    }

    /// The last iterate w = s·v.
    fn iterate(&self) -> Vec<f64> {
        self.v.iter().map(|x| x * self.s).collect()
    }
}

impl<L: Clone + PartialEq + Send + Sync> Learner<L> for Sgd<L> {
    fn name(&self) -> &'static str {
        "sgd"
    }

    fn epochs(&self) -> usize {
        self.epochs
    }

    fn weights(&self, averaged: bool) -> Vec<f64> {
        if averaged && self.params.average != Averaging::None {
            if let Some(w) = self.avg.average(&self.v) {
                return w;
            }
        }
        self.iterate()
    }

    fn epoch<S: Structure<Label = L>>(
        &mut self,
        p: &Problem<'_, S>,
        ctx: &Context<'_>,
    ) -> Result<EpochStats> {
        // The dense state is copied (O(D), small next to an epoch) into buffers kept from epoch to
        // epoch: a fresh D-sized copy each epoch costs page faults, in sequence (19 MB per vector
        // on CoNLL-2002); per-instance state is journaled.
        self.spare.0.clone_from(&self.v);
        self.spare.1.clone_from(&self.avg);
        let saved = (self.s, self.v_norm_sq, self.t, self.epochs, self.rng.clone());
        let mut journal = Journal::new();
        let out = self.run_epoch(p, ctx, &mut journal);
        if out.is_err() {
            std::mem::swap(&mut self.v, &mut self.spare.0);
            std::mem::swap(&mut self.avg, &mut self.spare.1);
            (self.s, self.v_norm_sq, self.t, self.epochs, self.rng) = saved;
            journal.undo_warm(&mut self.warm);
        }
        out
    }
}

impl<L: Clone + PartialEq + Send + Sync> Sgd<L> {
    fn run_epoch<S: Structure<Label = L>>(
        &mut self,
        p: &Problem<'_, S>,
        ctx: &Context<'_>,
        journal: &mut Journal<L>,
    ) -> Result<EpochStats> {
        let start = Instant::now();
        let n = p.n();
        crate::check_size(p, self.warm.len(), self.v.len())?;
        let mut counts = PassCounts::default();
        let radius_sq = match self.radius_sq {
            Some(r) => r,
            None => {
                // ℓ_i(0): every margin is 0 at scale 0 (no dense zero vector needed); these calls
                // are counted in this epoch. Not stored until the epoch succeeds.
                let all: Vec<usize> = (0..n).collect();
                let at_zero = ctx.map(&all, |i| p.infer(i, &self.v, 0.0, None, None))?;
                let mut sum = 0.0;
                for vio in &at_zero {
                    crate::add_calls(&mut counts.calls, &vio.calls);
                    counts.inferences += 1;
                    sum += vio.loss.max(0.0);
                }
                2.0 * self.params.common.c * sum
            }
        };
        let mut order: Vec<usize> = (0..n).collect();
        if self.params.shuffle {
            self.rng.shuffle(&mut order);
        }
        // ‖v‖² is tracked (O(nnz) per update) only when projecting.
        let project = radius_sq.is_finite();
        let unit_scale = p.search.requirements().cone;
        let averaging = self.params.average;
        let mut eta = 0.0;
        for block in order.chunks(self.params.block_size) {
            ctx.check()?;
            if unit_scale {
                self.renormalise();
            }
            let mut found = {
                let (v, s, warm) = (&self.v, self.s, &self.warm);
                ctx.map(block, |i| p.infer(i, v, s, warm[i].as_ref(), None))?
            };
            for (vio, &i) in found.iter_mut().zip(block) {
                counts.record(vio);
                keep_warm(&mut self.warm, i, std::mem::take(&mut vio.warm), &self.params.common, journal)?;
            }
            for batch in found.chunks(self.params.batch_size) {
                self.t += 1;
                eta = self.eta();
                let shrink = 1.0 - eta * self.lambda;
                if shrink <= 0.0 {
                    // η_1 = 1/λ (Pegasos with t0 = 0): the step forgets w entirely.
                    if averaging != Averaging::None {
                        self.avg.on_reset(&self.v);
                    }
                    self.v.iter_mut().for_each(|x| *x = 0.0);
                    self.s = 1.0;
                    self.v_norm_sq = 0.0;
                } else {
                    self.s *= shrink;
                }
                let a = -eta / (batch.len() as f64 * self.s);
                for vio in batch {
                    if vio.scale != 0.0 {
                        let step = a * vio.scale;
                        if project {
                            let d_sq: f64 = vio.dphi.values.iter().map(|x| x * x).sum();
                            self.v_norm_sq += 2.0 * step * dot(&self.v, &vio.dphi) + step * step * d_sq;
                        }
                        axpy(&mut self.v, &vio.dphi, step);
                        if averaging != Averaging::None {
                            self.avg.on_update(&vio.dphi, a * vio.scale);
                        }
                    }
                }
                if project {
                    let w_norm_sq = self.s * self.s * self.v_norm_sq.max(0.0);
                    if w_norm_sq > radius_sq {
                        self.s *= (radius_sq / w_norm_sq).sqrt();
                    }
                }
                match averaging {
                    Averaging::None => {}
                    Averaging::Uniform => self.avg.on_step(self.s, 1.0),
                    Averaging::Weighted => self.avg.on_step(self.s, self.t as f64),
                }
                if self.s < MIN_SCALE {
                    self.renormalise();
                }
            }
            for vio in found {
                crate::scratch::recycle(vio.dphi);
            }
        }
        self.epochs += 1;
        self.radius_sq = Some(radius_sq);
        let c = self.params.common.c;
        let (objective_value, loss, norm_sq, kind, exact_calls) = match self.params.common.objective {
            ObjectiveKind::Running => {
                let norm_sq = self.s * self.s * dense_norm_sq(&self.v);
                (
                    0.5 * norm_sq + c * counts.loss,
                    counts.loss / n as f64,
                    norm_sq,
                    ObjectiveKind::Running,
                    None,
                )
            }
            ObjectiveKind::Exact => {
                let w = self.weights(true);
                let (obj, pass) = objective(p, ctx, &w, c, 1, &self.warm, None)?;
                (obj, pass.loss / n as f64, dense_norm_sq(&w), ObjectiveKind::Exact, Some(pass.calls.total()))
            }
        };
        let task =
            if self.params.common.task_loss { Some(task_loss(p, ctx, &self.weights(true))?) } else { None };
        Ok(EpochStats {
            epoch: self.epochs,
            objective: objective_value,
            objective_kind: kind,
            loss,
            norm_sq,
            dual: None,
            gap: None,
            converged: false,
            calls: counts.calls,
            inferences: counts.inferences,
            fractional: counts.fractional,
            gold: counts.gold,
            time: start.elapsed().as_secs_f64(),
            step_size: Some(eta),
            working_set: None,
            task_loss: task,
            exact_calls,
        })
    }
}

impl<L: Clone + PartialEq + Send + Sync> Sgd<L> {
    /// One round of iterative parameter mixing (McDonald, Hall & Mann 2010) on this partition: an
    /// epoch from the mixed weights `w`, the step schedule continuing the partition's own. Returns
    /// the last iterate and the average of the round's iterates (the iterate when not averaging).
    /// Built with C·n/n_k on a partition of n_k of the n instances, the learner's λ = 1/(n_k·C_k)
    /// is the global one. On error the state is unchanged.
    pub fn mixing_round<S: Structure<Label = L>>(
        &mut self,
        p: &Problem<'_, S>,
        ctx: &Context<'_>,
        w: &[f64],
    ) -> Result<(Vec<f64>, Vec<f64>, crate::rounds::RoundStats)> {
        crate::check_size(p, self.warm.len(), self.v.len())?;
        crate::check_counts((1, self.v.len()), (1, w.len()))?;
        let saved = (self.v.clone(), self.s, self.v_norm_sq, self.avg.clone());
        self.v = w.to_vec();
        self.s = 1.0;
        self.v_norm_sq = dense_norm_sq(&self.v);
        self.avg = LazyAverage::new(if self.params.average == Averaging::None { 0 } else { w.len() });
        match self.epoch(p, ctx) {
            Ok(stats) => {
                let n = self.warm.len() as f64;
                let pass = PassCounts {
                    loss: stats.loss * n,
                    loss_sq: 0.0,
                    calls: stats.calls,
                    inferences: stats.inferences,
                    fractional: stats.fractional,
                    gold: stats.gold,
                };
                let stats = crate::rounds::RoundStats { pass, ..Default::default() };
                Ok((self.iterate(), self.weights(true), stats))
            }
            Err(e) => {
                (self.v, self.s, self.v_norm_sq, self.avg) = saved;
                Err(e)
            }
        }
    }
}
