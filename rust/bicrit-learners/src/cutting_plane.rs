//! Cutting-plane training: 1-slack (Joachims, Finley & Yu 2009) and n-slack (Tsochantaridis et
//! al. 2005), for losses that are maxima of functions affine in w.
//!
//! Every inference gives a constraint "ℓ_i(w) ≥ a·w + b" with slope a = c·Δφ and intercept
//! b = ψ − c·m_f ([`crate::problem`]). The primal over a working set W is
//! `min ½‖w‖² + C·Σ_g ξ_g` with `ξ_g ≥ a_k·w + b_k` (k ∈ W in group g) and `ξ_g ≥ 0`; its dual,
//! `max Σ α_k b_k − ½‖Σ α_k a_k‖²` with α ≥ 0 and `Σ_{k∈g} α_k ≤ C`, is solved by clarabel
//! ([`crate::qp`], in its Gram or lifted form, whichever is smaller) and gives w = −Σ α_k a_k.
//!
//! * **1-slack**: one group; an epoch is one inference pass (parallel) at w, whose sum of
//!   constraints Σ_i (a_i, b_i) is the new cutting plane of Σ_i ℓ_i. It stops when
//!   (Σ_i ℓ_i(w) − ξ)/n ≤ eps, ξ the working set's slack at w.
//! * **n-slack**: one group per instance; instances are processed in batches of `batch_size`
//!   (0: all), adding the constraint of every instance with ℓ_i(w) > ξ_i + eps, and the QP is
//!   re-solved after each batch. The instance's current slack ξ_i is what the Sarawagi–Gupta
//!   search needs. It stops when an epoch adds no constraint.
//! * Constraints whose dual variable stays below `inactive_threshold`·C for more than
//!   `inactive_window` solves are dropped. The Gram matrix of the working set is kept up to date
//!   (one row per new constraint, computed through the dense scratch buffer).
//!
//! The epoch's `objective` and `gap` are those of the weights the epoch started from (where its
//! inferences ran): P(w) = ½‖w‖² + C·Σ_i ℓ_i(w), exact, and P(w) − D(α) with the dual value of the
//! same iterate. The weights after the epoch are the new QP solution, unless it converged, in
//! which case they are the certified ones.

use std::time::Instant;

use bicrit_core::{Error, Result, SparseVec};
use bicrit_searches::WarmStart;
use bicrit_structures::Structure;

use crate::params::CpParams;
use crate::qp::solve_dual_auto;
use crate::scratch::{axpy, dense_norm_sq, dot, with_scratch};
use crate::{
    infer_many, keep_warm, task_loss, Context, EpochStats, Journal, Learner, ObjectiveKind, PassCounts,
    Problem,
};

#[derive(Clone, Debug)]
struct Constraint {
    owner: usize,
    slope: SparseVec,
    intercept: f64,
    alpha: f64,
    idle: usize,
}

/// The cutting-plane learner's state (1-slack or n-slack).
#[derive(Clone, Debug)]
pub struct CuttingPlane<L> {
    /// Parameters.
    pub params: CpParams,
    w: Vec<f64>,
    set: Vec<Constraint>,
    gram: Vec<Vec<f64>>,
    dual: f64,
    epochs: usize,
    n: usize,
    /// Per-instance warm starts.
    pub warm: Vec<Option<WarmStart<L>>>,
}

impl<L: Clone + PartialEq + Send + Sync> CuttingPlane<L> {
    /// A learner for `n` instances and `dim` joint features; `w0` (zeros) is where the first
    /// inference pass runs.
    pub fn new(params: CpParams, n: usize, dim: usize, w0: Option<Vec<f64>>) -> Result<Self> {
        if n == 0 {
            return Err(Error::input("the training set is empty"));
        }
        Ok(CuttingPlane {
            params,
            w: w0.unwrap_or_else(|| vec![0.0; dim]),
            set: Vec::new(),
            gram: Vec::new(),
            dual: 0.0,
            epochs: 0,
            n,
            warm: vec![None; n],
        })
    }

    fn learner(&self) -> &'static str {
        if self.params.n_slack {
            "cutting-plane-n"
        } else {
            "cutting-plane"
        }
    }

    fn add(&mut self, owner: usize, slope: SparseVec, intercept: f64) -> Result<()> {
        if self.set.len() >= self.params.max_constraints {
            return Err(Error::solver(format!(
                "learner '{}': the working set reached max_constraints = {} constraints (the dual QP is \
                 dense in them); raise max_constraints, lower inactive_window, or use 'cutting-plane' \
                 (1-slack) or 'bcfw'",
                self.learner(),
                self.params.max_constraints
            )));
        }
        let dim = self.w.len();
        let row: Vec<f64> = with_scratch(dim, |s| {
            s.load(&slope);
            let mut row: Vec<f64> = self.set.iter().map(|k| s.dot(&k.slope)).collect();
            row.push(s.dot(&slope));
            row
        });
        for (g, &x) in self.gram.iter_mut().zip(&row) {
            g.push(x);
        }
        self.gram.push(row);
        self.set.push(Constraint { owner, slope, intercept, alpha: 0.0, idle: 0 });
        Ok(())
    }

    /// Solves the dual QP over the working set, sets w and the dual value, prunes.
    fn solve(&mut self) -> Result<()> {
        let mut group_of_owner = vec![usize::MAX; if self.params.n_slack { self.n } else { 1 }];
        let mut group = Vec::with_capacity(self.set.len());
        let mut n_groups = 0;
        for k in &self.set {
            let o = if self.params.n_slack { k.owner } else { 0 };
            if group_of_owner[o] == usize::MAX {
                group_of_owner[o] = n_groups;
                n_groups += 1;
            }
            group.push(group_of_owner[o]);
        }
        let b: Vec<f64> = self.set.iter().map(|k| k.intercept).collect();
        let c = self.params.common.c;
        let slopes: Vec<&SparseVec> = self.set.iter().map(|k| &k.slope).collect();
        let alpha = solve_dual_auto(&self.gram, &slopes, &b, &group, n_groups, c)?;
        self.w.iter_mut().for_each(|x| *x = 0.0);
        let mut lin = 0.0;
        let threshold = self.params.inactive_threshold * c;
        for (k, &a) in self.set.iter_mut().zip(&alpha) {
            k.alpha = a;
            if a != 0.0 {
                axpy(&mut self.w, &k.slope, -a);
                lin += a * k.intercept;
            }
            if a <= threshold {
                k.idle += 1;
            } else {
                k.idle = 0;
            }
        }
        self.dual = lin - 0.5 * dense_norm_sq(&self.w);
        let window = self.params.inactive_window;
        if self.set.iter().any(|k| k.idle > window) {
            let keep: Vec<bool> = self.set.iter().map(|k| k.idle <= window).collect();
            let mut j = 0;
            self.set.retain(|_| {
                j += 1;
                keep[j - 1]
            });
            let mut rows = Vec::with_capacity(self.set.len());
            for (r, row) in std::mem::take(&mut self.gram).into_iter().enumerate() {
                if keep[r] {
                    rows.push(row.into_iter().zip(&keep).filter(|(_, &k)| k).map(|(x, _)| x).collect());
                }
            }
            self.gram = rows;
        }
        Ok(())
    }

    /// The 1-slack learner without data, for `n` instances of partitions held elsewhere: its
    /// rounds take the cuts that [`crate::rounds::cut_pass`] computes on each partition, summed
    /// ([`CuttingPlane::round`]). The iterates are the local learner's up to the order of the
    /// floating-point sums of the cut.
    pub fn coordinator(params: CpParams, n: usize, dim: usize, w0: Option<Vec<f64>>) -> Result<Self> {
        if params.n_slack {
            return Err(Error::param(
                "learner 'cutting-plane-n' keeps one working set per instance: only the 1-slack \
                 'cutting-plane' takes cuts from partitions",
            ));
        }
        if n == 0 {
            return Err(Error::input("the training set is empty"));
        }
        Ok(CuttingPlane {
            params,
            w: w0.unwrap_or_else(|| vec![0.0; dim]),
            set: Vec::new(),
            gram: Vec::new(),
            dual: 0.0,
            epochs: 0,
            n,
            warm: Vec::new(),
        })
    }

    /// Adds the 1-slack cut (Σ_i c_i·Δφ_i, Σ_i b_i) of all instances at the current weights, whose
    /// losses sum to `loss`, and re-solves the QP, unless the cut certifies convergence:
    /// (Σ_i ℓ_i(w) − ξ)/n ≤ eps. Returns whether it did.
    fn apply_cut(&mut self, slope: SparseVec, intercept: f64, loss: f64, n: usize) -> Result<bool> {
        let xi = self.slacks()[0];
        let converged = (loss - xi) / n as f64 <= self.params.eps;
        if !converged {
            self.add(0, slope, intercept)?;
            self.solve()?;
        }
        Ok(converged)
    }

    /// One round of the coordinator ([`CuttingPlane::coordinator`]): the cut summed over every
    /// partition at [`Learner::weights`] (its `counts` summed too; `task_loss`: the partitions'
    /// mean task loss at those weights). The stats are those of a local epoch; on error the
    /// state is unchanged.
    pub fn round(
        &mut self,
        slope: SparseVec,
        intercept: f64,
        counts: &PassCounts,
        task_loss: Option<f64>,
    ) -> Result<EpochStats> {
        let start = Instant::now();
        let dim = self.w.len();
        if let Some(&j) = slope.indices.iter().find(|&&j| j >= dim) {
            return Err(Error::input(format!("the cut has index {j} outside the joint feature size {dim}")));
        }
        bicrit_core::error::check_finite("the cut", &slope.values)?;
        let saved = (self.w.clone(), self.set.clone(), self.gram.clone(), self.dual);
        let norm_start = dense_norm_sq(&self.w);
        let dual_start = self.dual;
        let converged = match self.apply_cut(slope, intercept, counts.loss, self.n) {
            Ok(c) => c,
            Err(e) => {
                (self.w, self.set, self.gram, self.dual) = saved;
                return Err(e);
            }
        };
        self.epochs += 1;
        let objective = 0.5 * norm_start + self.params.common.c * counts.loss;
        Ok(EpochStats {
            epoch: self.epochs,
            objective,
            objective_kind: ObjectiveKind::Exact,
            loss: counts.loss / self.n as f64,
            norm_sq: norm_start,
            dual: Some(dual_start),
            gap: Some(objective - dual_start),
            converged,
            calls: counts.calls,
            inferences: counts.inferences,
            fractional: counts.fractional,
            gold: counts.gold,
            time: start.elapsed().as_secs_f64(),
            step_size: None,
            working_set: Some(self.set.len()),
            task_loss,
            exact_calls: None,
        })
    }

    /// ξ_g = max(0, max_{k ∈ g} a_k·w + b_k) for every group (index: owner, or 0 for 1-slack).
    pub(crate) fn slacks(&self) -> Vec<f64> {
        let mut xi = vec![0.0f64; if self.params.n_slack { self.n } else { 1 }];
        for k in &self.set {
            let o = if self.params.n_slack { k.owner } else { 0 };
            xi[o] = xi[o].max(dot(&self.w, &k.slope) + k.intercept);
        }
        xi
    }
}

impl<L: Clone + PartialEq + Send + Sync> Learner<L> for CuttingPlane<L> {
    fn name(&self) -> &'static str {
        self.learner()
    }

    fn epochs(&self) -> usize {
        self.epochs
    }

    fn weights(&self, _averaged: bool) -> Vec<f64> {
        self.w.clone()
    }

    fn epoch<S: Structure<Label = L>>(
        &mut self,
        p: &Problem<'_, S>,
        ctx: &Context<'_>,
    ) -> Result<EpochStats> {
        let saved = (self.w.clone(), self.set.clone(), self.gram.clone(), self.dual, self.epochs);
        let mut journal = Journal::new();
        let out = self.run_epoch(p, ctx, &mut journal);
        if out.is_err() {
            (self.w, self.set, self.gram, self.dual, self.epochs) = saved;
            journal.undo_warm(&mut self.warm);
        }
        out
    }
}

impl<L: Clone + PartialEq + Send + Sync> CuttingPlane<L> {
    fn run_epoch<S: Structure<Label = L>>(
        &mut self,
        p: &Problem<'_, S>,
        ctx: &Context<'_>,
        journal: &mut Journal<L>,
    ) -> Result<EpochStats> {
        let start = Instant::now();
        let n = p.n();
        crate::check_size(p, self.n, self.w.len())?;
        let c = self.params.common.c;
        let eps = self.params.eps;
        let norm_start = dense_norm_sq(&self.w);
        let dual_start = self.dual;
        let mut counts = PassCounts::default();
        let converged;
        let kind;
        if !self.params.n_slack {
            let cut = crate::rounds::cut_pass_logged(
                p,
                ctx,
                &self.w,
                &mut self.warm,
                &self.params.common,
                journal,
            )?;
            counts = cut.counts.clone();
            converged = self.apply_cut(cut.slope, cut.intercept, cut.counts.loss, n)?;
            kind = ObjectiveKind::Exact;
        } else {
            let batch = if self.params.batch_size == 0 { n } else { self.params.batch_size };
            let needs_xi = p.search.requirements().xi;
            let idx: Vec<usize> = (0..n).collect();
            let mut added = 0usize;
            for chunk in idx.chunks(batch) {
                ctx.check()?;
                let xi = self.slacks();
                let mut found =
                    infer_many(p, ctx, chunk, &self.w, 1.0, &self.warm, needs_xi.then_some(xi.as_slice()))?;
                let mut new = 0usize;
                for (vio, &i) in found.iter_mut().zip(chunk) {
                    counts.record(vio);
                    keep_warm(
                        &mut self.warm,
                        i,
                        std::mem::take(&mut vio.warm),
                        &self.params.common,
                        journal,
                    )?;
                    if vio.loss - xi[i] > eps {
                        let slope = if vio.scale == 0.0 {
                            SparseVec::new()
                        } else {
                            let mut s = std::mem::take(&mut vio.dphi);
                            s.values.iter_mut().for_each(|x| *x *= vio.scale);
                            s
                        };
                        self.add(i, slope, vio.intercept)?;
                        new += 1;
                    }
                }
                if new > 0 {
                    self.solve()?;
                    added += new;
                }
            }
            converged = added == 0;
            kind = if batch >= n { ObjectiveKind::Exact } else { ObjectiveKind::Running };
        }
        self.epochs += 1;
        let objective = 0.5 * norm_start + c * counts.loss;
        let task = if self.params.common.task_loss { Some(task_loss(p, ctx, &self.w)?) } else { None };
        Ok(EpochStats {
            epoch: self.epochs,
            objective,
            objective_kind: kind,
            loss: counts.loss / n as f64,
            norm_sq: norm_start,
            dual: Some(dual_start),
            gap: Some(objective - dual_start),
            converged,
            calls: counts.calls,
            inferences: counts.inferences,
            fractional: counts.fractional,
            gold: counts.gold,
            time: start.elapsed().as_secs_f64(),
            step_size: None,
            working_set: Some(self.set.len()),
            task_loss: task,
            exact_calls: None,
        })
    }
}
