//! Block-coordinate Frank–Wolfe on the SSVM dual (Lacoste-Julien, Jaggi, Schmidt & Pletscher
//! 2013, Alg. 4 with line search and weighted averaging), generalised from margin rescaling to
//! every loss that is a maximum of functions affine in w.
//!
//! In the λ-form λ/2‖w‖² + (1/n)Σℓ_i (λ = 1/(n·C)), the loss of instance i at an answer of its
//! search is the affine function c·(w·Δφ) + b of w (slope c·Δφ, intercept b = ψ − c·m_f; see
//! [`crate::problem`]). The Frank–Wolfe corner of block i is therefore
//! `w_s = −(c/(λn))·Δφ = −C·c·Δφ`, `ℓ_s = b/n`; each block keeps (w_i, ℓ_i) with w = Σ w_i,
//! ℓ = Σ ℓ_i, and a step moves it towards the corner by γ from the exact line search
//! `γ = (λ(w_i − w_s)·w − ℓ_i + ℓ_s) / (λ‖w_i − w_s‖²)` clipped to [0, 1]. The numerator is the
//! block's duality gap; their sum over an epoch estimates the duality gap (the `running` gap).
//!
//! * Blocks w_i are stored sparsely (memory ∝ their support, not n·D) and combined through the
//!   thread's dense scratch buffer ([`crate::scratch`]).
//! * Weighted averaging w̄ ← k/(k+2)·w̄ + 2/(k+2)·w (iterate k weighs k) is kept lazily
//!   ([`crate::average`]), together with the averaged ℓ̄, so the averaged model has a dual value
//!   and hence an exact gap too.
//! * **Mini-batches in parallel** (`block_size`, by default [`crate::params::auto_block_size`]
//!   of n, 4 on yeast and 8 on CoNLL-2002; the mini-batch scheme of Lacoste-Julien
//!   et al. 2013 and Wang et al. 2016, "Parallel and distributed block-coordinate Frank–Wolfe").
//!   The shuffled blocks are cut into mini-batches; a mini-batch's oracle calls run on the
//!   `n_jobs` pool at the weights w₀ of its start, together with what does not depend on the
//!   other blocks (d = w_i − w_s, ‖d‖², w₀·d, the warm start to keep). Its block steps are then
//!   applied in order with the exact line search at the *current* w: a corner is a vertex of the
//!   block's simplex whatever w it was found at, so each step is a feasible direction, the dual
//!   never decreases and the gap of the exact objective stays certified. The running gap sums each
//!   block's gap at the weights its corner was computed at (as sequential BCFW sums each block's
//!   gap at the weights of its visit). The new block vectors w_i − γ·d are computed on the pool
//!   with the next mini-batch's corners. What stays sequential is O(nnz d) per block: one dot
//!   product with w (not for the first block of a mini-batch) and one pass updating w and the
//!   average. The mini-batch composition depends on the seed and `block_size` only, so the model
//!   is bit-identical whatever `n_jobs`; `block_size=1` is sequential BCFW.
//! * Dual D = −½‖w‖² + n·C·ℓ and primal P = ½‖w‖² + C·Σℓ_i are reported in the scale of P.
//! * Starting weights `w0` cannot be imposed on a dual method (w must equal Σ w_i); they choose
//!   the first direction instead: the first epoch begins with one batch Frank–Wolfe step, with line
//!   search, from α = 0 towards the corners that w0's inferences select. To continue a training
//!   run exactly, keep the learner (the Python `Trainer`) instead.
//!
//! **Squared slacks** (`slack_norm=2`, SVM^struct's `-p 2`): P = ½‖w‖² + C·Σ_i ξ_i² with
//! ξ_i = max(0, ℓ_i(w)) — C in scikit-learn's sense, as in LinearSVC's squared hinge (which it is
//! for a binary problem; on K labels the instance's whole slack is squared). With the corners
//! written ℓ_iy(w) = b_iy + u_iy·w, the Lagrangian gives w = −Σ a_iy·u_iy, 2C·ξ_i = A_i := Σ_y a_iy
//! and the dual
//! D(a) = Σ a_iy·b_iy − ½‖w‖² − Σ_i A_i²/(4C) over a ≥ 0, with no upper bound (the box of the
//! 1-norm becomes the separable quadratic term). Each block keeps one more number, α_i = A_i/C.
//! * **Corner.** The dual point that matches the primal at w is a_i = 2C·ξ_i·e_y* (y* the answer of
//!   the same search; 0 when ξ_i = 0): its block gap is zero, and with the 1-norm the same rule
//!   (a_i = C·e_y*) gives the Frank–Wolfe vertex. So the corner is κ times the 1-norm's,
//!   κ = 2ξ_i: w_s = −κ·C·c·Δφ, ℓ_s = κ·b/n, α_s = κ. (The optimum's A_i = 2C·ξ_i* has no
//!   a-priori bound a Frank–Wolfe vertex could use — an outlier's ξ_i* exceeds the largest task
//!   loss —; moving towards the matched dual point is the primal–dual step of SDCA, Shalev-Shwartz
//!   & Zhang 2013, whose dual gain is at least γ·gap_i − O(γ²).)
//! * **Line search.** D along a_i + γ(s − a_i) is a concave quadratic: with Δα = κ − α_i,
//!   `γ = (λ(w·d − C·α_i·Δα/2) − ℓ_i + ℓ_s) / (λ(‖d‖² + C·Δα²/2))` clipped to [0, 1].
//! * **Gap.** P − D = Σ_i gap_i with gap_i = C·ξ_i² + A_i²/(4C) − Σ_y a_iy·ℓ_iy(w)
//!   ≥ C(ξ_i − A_i/(2C))² ≥ 0; in the λ-form `gap_i = λ(w·w_i + C·ξ_i² + C·α_i²/4) − ℓ_i`. The
//!   exact gap of the averaged model uses the averaged α_i (kept lazily), so it is a certificate
//!   as for the 1-norm.

use std::time::Instant;

use bicrit_core::{Error, Result, SparseVec};
use bicrit_searches::{WarmPlan, WarmStart};
use bicrit_structures::Structure;

use crate::average::LazyAverage;
use crate::params::BcfwParams;
use crate::rng::Rng;
use crate::scratch::{axpy, dense_norm_sq, dot, norm_sq, recycle, with_scratch};
use crate::{
    infer_many, install_warm, keep_warm, objective, task_loss, Context, EpochStats, Journal, Learner,
    ObjectiveKind, PassCounts, Problem,
};

/// One block's step within a mini-batch: its corner, the warm start to keep, its direction
/// d = w_i − w_s with ‖d‖² and w₀·d at the batch's starting weights w₀, and (once the line search
/// ran) γ and the new ℓ_i.
struct Step<L> {
    vio: crate::Violation<L>,
    warm_next: Option<WarmPlan<L>>,
    d: SparseVec,
    wd: f64,
    dd: f64,
    gamma: f64,
    new_ell: f64,
    /// κ: the corner is κ times the 1-norm's (1 for the 1-norm; 2ξ_i for squared slacks).
    kappa: f64,
}

/// Work for the pool within an epoch: a block's corner, or the new vector of a moved block.
/// (Held only for the ≤ 2·block_size jobs of one batch, so the variants' sizes do not matter.)
#[allow(clippy::large_enum_variant)]
enum Job<L> {
    Corner(usize),
    Move(Step<L>, usize),
}

/// What a [`Job`] gives back.
#[allow(clippy::large_enum_variant)]
enum Done<L> {
    Corner(Result<Step<L>>),
    Moved(usize, SparseVec, f64),
}

/// The BCFW learner's state.
#[derive(Clone, Debug)]
pub struct Bcfw<L> {
    /// Parameters.
    pub params: BcfwParams,
    lambda: f64,
    w: Vec<f64>,
    ell: f64,
    blocks: Vec<SparseVec>,
    block_ell: Vec<f64>,
    /// Squared slacks: each block's α_i = A_i/C (empty for the 1-norm).
    alpha: Vec<f64>,
    /// Squared slacks, with averaging: u_i of the lazy average Σ_k ρ_k·α_i(k) = u_i + (Σρ)·α_i.
    alpha_u: Vec<f64>,
    avg: LazyAverage,
    ell_avg: f64,
    k: u64,
    epochs: usize,
    /// Per-instance warm starts.
    pub warm: Vec<Option<WarmStart<L>>>,
    rng: Rng,
    pending_w0: Option<Vec<f64>>,
    /// σ' of a CoCoA+ round ([`Bcfw::local_round`]): the local pass sees its own changes σ' times
    /// (1 outside a round).
    sigma: f64,
    /// The weights and average at the start of the epoch (restored if it fails).
    spare: (Vec<f64>, LazyAverage),
}

impl<L: Clone + PartialEq + Send + Sync> Bcfw<L> {
    /// A learner for `n` instances and `dim` joint features (w0: see the module documentation).
    pub fn new(params: BcfwParams, n: usize, dim: usize, w0: Option<Vec<f64>>) -> Result<Self> {
        if n == 0 {
            return Err(Error::input("the training set is empty"));
        }
        let lambda = 1.0 / (n as f64 * params.common.c);
        if !(lambda.is_finite() && lambda > 0.0) {
            return Err(Error::param(format!(
                "learner 'bcfw': C = {} with n = {n} gives λ = 1/(n·C) = {lambda}, not a positive finite number",
                params.common.c
            )));
        }
        let rng = Rng::new(params.common.random_state);
        let squared = params.slack_norm == 2;
        Ok(Bcfw {
            lambda,
            w: vec![0.0; dim],
            ell: 0.0,
            blocks: vec![SparseVec::new(); n],
            block_ell: vec![0.0; n],
            alpha: vec![0.0; if squared { n } else { 0 }],
            alpha_u: vec![0.0; if squared && params.average { n } else { 0 }],
            avg: LazyAverage::new(if params.average { dim } else { 0 }),
            ell_avg: 0.0,
            k: 0,
            epochs: 0,
            warm: vec![None; n],
            rng,
            pending_w0: w0.filter(|w| w.iter().any(|&x| x != 0.0)),
            spare: (Vec::new(), LazyAverage::new(0)),
            params,
            sigma: 1.0,
        })
    }

    fn squared(&self) -> bool {
        self.params.slack_norm == 2
    }

    /// κ of a corner found with loss value `loss` (see the module documentation).
    fn kappa(&self, loss: f64) -> f64 {
        if self.squared() {
            2.0 * loss.max(0.0)
        } else {
            1.0
        }
    }

    /// The dual objective of the iterate, in the scale of P: −½‖w‖² + n·C·ℓ, minus C/4·Σ_i α_i²
    /// for squared slacks (`alpha_sq` = Σ_i α_i²).
    fn dual_of(&self, w: &[f64], ell: f64, alpha_sq: f64) -> f64 {
        let n = self.blocks.len() as f64;
        let c = self.params.common.c;
        -0.5 * dense_norm_sq(w) + n * c * ell - 0.25 * c * alpha_sq
    }

    /// Σ_i α_i² of the iterate, or of the averaged dual point.
    fn alpha_sq(&self, averaged: bool) -> f64 {
        let total = self.avg.total();
        if averaged && self.params.average && total > 0.0 {
            self.alpha.iter().zip(&self.alpha_u).map(|(&a, &u)| ((u + total * a) / total).powi(2)).sum()
        } else {
            self.alpha.iter().map(|a| a * a).sum()
        }
    }

    /// α_i ← α_i + δ, with the lazy average kept.
    fn move_alpha(&mut self, i: usize, delta: f64) {
        if self.params.average {
            self.alpha_u[i] -= self.avg.total() * delta;
        }
        self.alpha[i] += delta;
    }

    /// Starts the dual with one batch Frank–Wolfe step from α = 0 towards the corners selected at
    /// `w0`, with exact line search: blocks γ·(w_s, ℓ_s) with γ = Σℓ_s / (λ‖Σ w_s‖²) in [0, 1].
    fn start_from<S: Structure<Label = L>>(
        &mut self,
        p: &Problem<'_, S>,
        ctx: &Context<'_>,
        w0: &[f64],
        journal: &mut Journal<L>,
    ) -> Result<PassCounts> {
        let n = p.n();
        let idx: Vec<usize> = (0..n).collect();
        let found = infer_many(p, ctx, &idx, w0, 1.0, &self.warm, None)?;
        let mut counts = PassCounts::default();
        let c = self.params.common.c;
        let mut total = vec![0.0; self.w.len()];
        let mut ell = 0.0;
        let mut kappa_sq = 0.0;
        let mut corners = Vec::with_capacity(n);
        for (i, mut vio) in found.into_iter().enumerate() {
            counts.record(&vio);
            keep_warm(&mut self.warm, i, std::mem::take(&mut vio.warm), &self.params.common, journal)?;
            let kappa = self.kappa(vio.loss);
            let mut corner = std::mem::take(&mut vio.dphi);
            corner.values.iter_mut().for_each(|x| *x *= -c * kappa * vio.scale);
            axpy(&mut total, &corner, 1.0);
            let l = kappa * vio.intercept / n as f64;
            ell += l;
            kappa_sq += kappa * kappa;
            corners.push((corner, l, kappa));
        }
        // squared slacks: D(γ) also loses γ²·C/4·Σκ_i²
        let quad = if self.squared() { 0.5 * c * kappa_sq } else { 0.0 };
        let den = self.lambda * (dense_norm_sq(&total) + quad);
        let gamma = if den > 0.0 {
            (ell / den).clamp(0.0, 1.0)
        } else if ell > 0.0 {
            1.0
        } else {
            0.0
        };
        for (i, (mut corner, l, kappa)) in corners.into_iter().enumerate() {
            corner.values.iter_mut().for_each(|x| *x *= gamma);
            let old = std::mem::replace(&mut self.blocks[i], corner);
            journal.blocks.push((i, old, self.block_ell[i]));
            self.block_ell[i] = gamma * l;
            if self.squared() {
                self.move_alpha(i, gamma * kappa - self.alpha[i]);
            }
        }
        self.w = total.iter().map(|x| gamma * x).collect();
        self.ell = gamma * ell;
        Ok(counts)
    }
}

impl<L: Clone + PartialEq + Send + Sync> Learner<L> for Bcfw<L> {
    fn name(&self) -> &'static str {
        "bcfw"
    }

    fn epochs(&self) -> usize {
        self.epochs
    }

    fn weights(&self, averaged: bool) -> Vec<f64> {
        if averaged && self.params.average {
            if let Some(w) = self.avg.average(&self.w) {
                return w;
            }
        }
        self.w.clone()
    }

    fn epoch<S: Structure<Label = L>>(
        &mut self,
        p: &Problem<'_, S>,
        ctx: &Context<'_>,
    ) -> Result<EpochStats> {
        // The dense state is copied (O(D), small next to an epoch) into buffers kept from epoch to
        // epoch (a fresh D-sized copy each epoch costs page faults in sequence: 19 MB per vector on
        // CoNLL-2002); blocks and warm starts are journaled as they are replaced.
        self.spare.0.clone_from(&self.w);
        self.spare.1.clone_from(&self.avg);
        let saved = (self.ell, self.ell_avg, self.k, self.epochs, self.rng.clone(), self.pending_w0.clone());
        let saved_alpha = (self.alpha.clone(), self.alpha_u.clone());
        let mut journal = Journal::new();
        let out = self.run_epoch(p, ctx, &mut journal);
        if out.is_err() {
            std::mem::swap(&mut self.w, &mut self.spare.0);
            std::mem::swap(&mut self.avg, &mut self.spare.1);
            (self.ell, self.ell_avg, self.k, self.epochs, self.rng, self.pending_w0) = saved;
            (self.alpha, self.alpha_u) = saved_alpha;
            journal.undo_warm(&mut self.warm);
            for (i, block, ell) in journal.blocks.drain(..).rev() {
                self.blocks[i] = block;
                self.block_ell[i] = ell;
            }
        }
        out
    }
}

impl<L: Clone + PartialEq + Send + Sync> Bcfw<L> {
    fn run_epoch<S: Structure<Label = L>>(
        &mut self,
        p: &Problem<'_, S>,
        ctx: &Context<'_>,
        journal: &mut Journal<L>,
    ) -> Result<EpochStats> {
        let start = Instant::now();
        let n = p.n();
        let dim = p.dim();
        crate::check_size(p, self.blocks.len(), self.w.len())?;
        let mut counts = PassCounts::default();
        if let Some(w0) = self.pending_w0.take() {
            counts = self.start_from(p, ctx, &w0, journal)?;
        }
        let c = self.params.common.c;
        let lambda = self.lambda;
        let nf = n as f64;
        let mut order: Vec<usize> = (0..n).collect();
        if self.params.shuffle {
            self.rng.shuffle(&mut order);
        }
        let mut gap_sum = 0.0;
        let squared = self.squared();
        let common = &self.params.common.clone();
        let mut batches = order.chunks(self.params.block_size_for(n));
        // the moved blocks of the previous batch, whose new vectors w_i − γ·d are computed in
        // parallel with the next batch's corners (one dispatch to the pool per batch)
        let mut pending: Vec<(Step<L>, usize)> = Vec::new();
        loop {
            ctx.check()?;
            let batch = batches.next().unwrap_or(&[]);
            if batch.is_empty() && pending.is_empty() {
                break;
            }
            // In parallel, at the batch's starting weights w₀: each block's corner (its oracle
            // call), its direction d = w_i − w_s = w_i + C·c·Δφ, ‖d‖², w₀·d and the warm start to
            // keep. None of them depends on the other blocks of the batch (each block appears once
            // in it, and once in the epoch, so the previous batch's blocks are other blocks).
            let jobs: Vec<Job<L>> = batch
                .iter()
                .map(|&i| Job::Corner(i))
                .chain(pending.drain(..).map(|(st, i)| Job::Move(st, i)))
                .collect();
            let done = {
                let (w, warm, blocks) = (&self.w, &self.warm, &self.blocks);
                ctx.map_owned(jobs, |job| match job {
                    Job::Corner(i) => {
                        Done::Corner(p.infer(i, w, 1.0, warm[i].as_ref(), None).and_then(|mut vio| {
                            let dphi = std::mem::take(&mut vio.dphi);
                            let kappa = if squared { 2.0 * vio.loss.max(0.0) } else { 1.0 };
                            // Δφ's buffers are handed on to d (the pool is last in, first out)
                            let d = with_scratch(dim, |s| {
                                s.add_sparse(&blocks[i], 1.0);
                                if vio.scale != 0.0 && kappa != 0.0 {
                                    s.add_sparse(&dphi, c * kappa * vio.scale);
                                }
                                recycle(dphi);
                                s.take()
                            });
                            let next = std::mem::take(&mut vio.warm);
                            let warm_next = common
                                .warm_start
                                .then(|| next.merged(warm[i].as_ref(), common.cache_size))
                                .transpose()?;
                            let (wd, dd) = (dot(w, &d), norm_sq(&d));
                            Ok(Step { vio, warm_next, d, wd, dd, gamma: 0.0, new_ell: 0.0, kappa })
                        }))
                    }
                    // the step is freed here, on the pool's thread; d's buffers hold the new block
                    Job::Move(st, i) => Done::Moved(
                        i,
                        with_scratch(dim, |s| {
                            s.add_sparse(&blocks[i], 1.0);
                            s.add_sparse(&st.d, -st.gamma);
                            recycle(st.d);
                            s.take()
                        }),
                        st.new_ell,
                    ),
                })
            };
            let mut steps = Vec::with_capacity(batch.len());
            for out in done {
                match out {
                    Done::Corner(step) => steps.push(step?),
                    Done::Moved(i, block, ell) => {
                        let old = std::mem::replace(&mut self.blocks[i], block);
                        journal.blocks.push((i, old, self.block_ell[i]));
                        self.block_ell[i] = ell;
                    }
                }
            }
            // In the batch's order, at the current w: the exact line search of each block, so
            // every step is an ascent step of the dual whatever the staleness of its corner.
            // This is the part of the epoch that runs in sequence: O(nnz d) per block.
            let mut moved = false;
            for (st, &i) in steps.iter_mut().zip(batch) {
                counts.record(&st.vio);
                if let Some(next) = st.warm_next.take() {
                    install_warm(&mut self.warm, i, next, journal)?;
                }
                let ell_s = st.kappa * st.vio.intercept / nf;
                let (num, den) = if squared {
                    // squared slacks (module documentation): the block's gap at the weights of its
                    // corner, w₀·w_i = w₀·d + w₀·w_s with w₀·w_s = −κ·C·c·m
                    let (a_i, xi) = (self.alpha[i], st.vio.loss.max(0.0));
                    let w0_wi = st.wd - st.kappa * c * st.vio.scale * st.vio.margin;
                    gap_sum += lambda * (w0_wi + c * xi * xi + 0.25 * c * a_i * a_i) - self.block_ell[i];
                    let wd = if moved { dot(&self.w, &st.d) } else { st.wd };
                    let da = st.kappa - a_i;
                    (
                        lambda * (wd - 0.5 * c * a_i * da) - self.block_ell[i] + ell_s,
                        lambda * (self.sigma * st.dd + 0.5 * c * da * da),
                    )
                } else {
                    // the block's duality gap at the weights its corner was computed at
                    let gap_i = lambda * st.wd - self.block_ell[i] + ell_s;
                    gap_sum += gap_i;
                    let num =
                        if moved { lambda * dot(&self.w, &st.d) - self.block_ell[i] + ell_s } else { gap_i };
                    // CoCoA+'s local subproblem weighs the quadratic term σ' times (σ' = 1: BCFW)
                    (num, self.sigma * lambda * st.dd)
                };
                let gamma = if self.params.line_search {
                    if den > 0.0 {
                        (num / den).clamp(0.0, 1.0)
                    } else if num > 0.0 {
                        1.0
                    } else {
                        0.0
                    }
                } else {
                    2.0 * nf / (self.k as f64 + 2.0 * nf)
                };
                if gamma > 0.0 {
                    if self.params.average {
                        self.avg.on_update_axpy(&mut self.w, &st.d, -gamma * self.sigma);
                    } else {
                        axpy(&mut self.w, &st.d, -gamma * self.sigma);
                    }
                    let dl = gamma * (self.block_ell[i] - ell_s);
                    st.new_ell = self.block_ell[i] - dl;
                    self.ell -= dl;
                    if squared {
                        self.move_alpha(i, gamma * (st.kappa - self.alpha[i]));
                    }
                    moved = true;
                }
                st.gamma = gamma;
                self.k += 1;
                if self.params.average {
                    let rho = self.k as f64;
                    self.avg.on_step(1.0, rho);
                    self.ell_avg += rho * self.ell;
                }
            }
            pending = steps.into_iter().zip(batch.iter().copied()).filter(|(st, _)| st.gamma > 0.0).collect();
        }
        self.epochs += 1;
        let scale = nf * c; // λ-form → P scale
        let (objective_value, loss, norm_sq_w, dual, gap, kind, exact_calls) =
            match self.params.common.objective {
                ObjectiveKind::Running => {
                    let norm = dense_norm_sq(&self.w);
                    let slacks = counts.slacks(self.params.slack_norm);
                    let primal = 0.5 * norm + c * slacks;
                    let dual = self.dual_of(&self.w, self.ell, self.alpha_sq(false));
                    (primal, slacks / nf, norm, dual, gap_sum * scale, ObjectiveKind::Running, None)
                }
                ObjectiveKind::Exact => {
                    let w = self.weights(true);
                    let ell = if self.params.average && self.avg.total() > 0.0 {
                        self.ell_avg / self.avg.total()
                    } else {
                        self.ell
                    };
                    let (primal, pass) = objective(p, ctx, &w, c, self.params.slack_norm, &self.warm, None)?;
                    let dual = self.dual_of(&w, ell, self.alpha_sq(true));
                    (
                        primal,
                        pass.slacks(self.params.slack_norm) / nf,
                        dense_norm_sq(&w),
                        dual,
                        primal - dual,
                        ObjectiveKind::Exact,
                        Some(pass.calls.total()),
                    )
                }
            };
        let converged = gap <= self.params.tol * objective_value.abs().max(f64::MIN_POSITIVE);
        let task =
            if self.params.common.task_loss { Some(task_loss(p, ctx, &self.weights(true))?) } else { None };
        Ok(EpochStats {
            epoch: self.epochs,
            objective: objective_value,
            objective_kind: kind,
            loss,
            norm_sq: norm_sq_w,
            dual: Some(dual),
            gap: Some(gap),
            converged,
            calls: counts.calls,
            inferences: counts.inferences,
            fractional: counts.fractional,
            gold: counts.gold,
            time: start.elapsed().as_secs_f64(),
            step_size: None,
            working_set: None,
            task_loss: task,
            exact_calls,
        })
    }
}

impl<L: Clone + PartialEq + Send + Sync> Bcfw<L> {
    /// One CoCoA round on this partition: from the global weights `w` (= the sum of every
    /// partition's blocks), a BCFW pass over the partition's own blocks moving a local copy of w,
    /// then every block changed by it is kept at `scale` (γ) of its change. Returns γ·Δw, the
    /// partition's share of the aggregated weights' change.
    ///
    /// * Averaging (Jaggi et al. 2014): γ = 1/K, `sigma` (σ') = 1.
    /// * Adding (CoCoA+, Ma et al. 2015): γ = 1, σ' = K. The pass solves the local subproblem
    ///   whose quadratic term is σ' times the partition's own: the local copy of w moves σ' times
    ///   each block's change and the line search divides by σ'. Since ‖Σ_k Δw_k‖² ≤
    ///   K·Σ_k ‖Δw_k‖², the sum of the K local gains is a lower bound of the dual's gain: adding
    ///   the changes is safe (the dual never decreases).
    ///
    /// The learner must be built on the partition with the global C (then its line search is the
    /// global learner's, in the scale of P) and without averaging.
    ///
    /// Before the pass, an exact pass at `w` gives Σ_i ℓ_i(w) over the partition
    /// (`RoundStats::start`): with the partitions' dual shares it certifies the gap of `w`,
    /// P(w) − D = ½‖w‖² + C·Σ_k Σ_i ℓ_i(w) + ½‖w‖² − Σ_k dual_k. On error the state is unchanged.
    pub fn local_round<S: Structure<Label = L>>(
        &mut self,
        p: &Problem<'_, S>,
        ctx: &Context<'_>,
        w: &[f64],
        scale: f64,
        sigma: f64,
    ) -> Result<(Vec<f64>, crate::rounds::RoundStats)> {
        crate::check_size(p, self.blocks.len(), self.w.len())?;
        crate::check_counts((1, self.w.len()), (1, w.len()))?;
        if self.params.average {
            return Err(Error::param("learner 'bcfw': a CoCoA round needs average=False"));
        }
        if self.squared() {
            return Err(Error::param(
                "learner 'bcfw': CoCoA rounds (training on a cluster) support slack_norm=1 only",
            ));
        }
        if !(scale > 0.0 && scale <= 1.0) {
            return Err(Error::param(format!("the aggregation scale must be in (0, 1], got {scale}")));
        }
        if !(sigma.is_finite() && sigma >= 1.0) {
            return Err(Error::param(format!("the subproblem factor σ' must be ≥ 1, got {sigma}")));
        }
        let start = crate::exact_pass(p, ctx, w, &self.warm, None)?;
        let saved = (self.w.clone(), self.ell, self.k, self.epochs, self.rng.clone());
        self.w = w.to_vec();
        let mut journal = Journal::new();
        self.sigma = sigma;
        let run = self.run_epoch(p, ctx, &mut journal);
        self.sigma = 1.0;
        let stats = match run {
            Ok(s) => s,
            Err(e) => {
                (self.w, self.ell, self.k, self.epochs, self.rng) = saved;
                journal.undo_warm(&mut self.warm);
                for (i, block, ell) in journal.blocks.drain(..).rev() {
                    self.blocks[i] = block;
                    self.block_ell[i] = ell;
                }
                return Err(e);
            }
        };
        let dim = w.len();
        for (i, old, old_ell) in journal.blocks.drain(..) {
            let blended = with_scratch(dim, |s| {
                s.add_sparse(&old, 1.0 - scale);
                s.add_sparse(&self.blocks[i], scale);
                s.take()
            });
            self.blocks[i] = blended;
            self.block_ell[i] = old_ell + scale * (self.block_ell[i] - old_ell);
        }
        // the local copy moved σ'·Δw_k: the partition's change is that divided by σ'
        let delta: Vec<f64> = self.w.iter().zip(w).map(|(a, b)| scale * (a - b) / sigma).collect();
        self.w.iter_mut().zip(w.iter().zip(&delta)).for_each(|(x, (b, d))| *x = b + d);
        self.ell = self.block_ell.iter().sum();
        let n = self.blocks.len() as f64;
        let pass = crate::PassCounts {
            loss: stats.loss * n,
            loss_sq: 0.0,
            calls: stats.calls,
            inferences: stats.inferences,
            fractional: stats.fractional,
            gold: stats.gold,
        };
        let dual = n * self.params.common.c * self.ell;
        Ok((delta, crate::rounds::RoundStats { start, pass, dual }))
    }
}

impl<L: Clone + PartialEq + Send + Sync> Bcfw<L> {
    /// The partition's part of the dual point: Σ_i w_i over its blocks (its share of w) and its
    /// dual share n·C·ℓ in the scale of P (see [`Bcfw::local_round`]). A coordinator that lost a
    /// partition rebuilds w as the sum of the shares.
    pub fn dual_share(&self) -> (Vec<f64>, f64) {
        let mut w = vec![0.0; self.w.len()];
        for b in &self.blocks {
            axpy(&mut w, b, 1.0);
        }
        let c = self.params.common.c;
        let linear = self.blocks.len() as f64 * c * self.block_ell.iter().sum::<f64>();
        (w, linear - 0.25 * c * self.alpha_sq(false))
    }
}
