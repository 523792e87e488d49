//! The training problem seen by every learner, and one loss-augmented inference with what a
//! learner needs from it (the subgradient of thesis §`sec:quasi_convex_surrogate`; docs/architecture.md "Learners").
//!
//! For instance i the loss is ℓ_i(w) = max_y ψ(h(y), g(y)) with h, g the factor functions of the
//! surrogate's [`FactorMap`] for y_i. The search answers with labels y_j and weights t_j (one label,
//! or two on an edge of the convex hull). At the fractional point (h_f, g_f) = Σ_j t_j (h_j, g_j),
//! with h = a_m·m + …, g = b_m·m + …, the **subgradient scale** is
//! `c = ψ_h(h_f, g_f)·a_m + ψ_g(h_f, g_f)·b_m`, and
//! `∂ℓ_i/∂w = c · Σ_j t_j (φ(x_i, y_j) − φ(x_i, y_i))`.
//! For a surrogate affine in h (and g free of m, as for every built-in), ψ(h(w), g) at the answer
//! is the affine function `c·(w·Δφ) + (ψ − c·m_f)` of w: a corner of the loss with slope c·Δφ
//! and **intercept** ψ − c·m_f, which BCFW and the cutting-plane learners need.

use bicrit_core::{Error, FactorMap, Result, SparseVec};
use bicrit_searches::{Calls, SearchSpec, WarmPlan, WarmStart};
use bicrit_structures::{Structure, StructureOracle};
use bicrit_surrogates::Surrogate;

use crate::scratch::{dot, with_scratch};

/// Per-instance data computed once per training set: the factor maps (from the gold label's own
/// terms). The gold joint features φ(x_i, y_i) are recomputed at each inference, not kept: on a
/// pairwise model they hold one entry per edge, n × edges in all (issue 16: 7.5 MB per delicious
/// example on the full graph), and recomputing them costs what φ of the answer costs.
#[derive(Clone, Debug)]
pub struct Prepared {
    /// `psi.factor_map(terms(y_i, y_i))` for every instance.
    pub factors: Vec<FactorMap>,
}

impl Prepared {
    /// Validates the training set (at least one instance, one label per instance, every label a
    /// label of its instance) and computes the per-instance data.
    pub fn new<S: Structure>(
        structure: &S,
        data: &S::Data,
        labels: &[S::Label],
        psi: &dyn Surrogate,
    ) -> Result<Self> {
        let n = structure.n_instances(data);
        if n == 0 {
            return Err(Error::input("the training set is empty: X has no instances"));
        }
        if labels.len() != n {
            return Err(Error::input(format!("X has {n} instances but Y has {} labels", labels.len())));
        }
        let dim = structure.size_joint_feature();
        let mut factors = Vec::with_capacity(n);
        for (i, y) in labels.iter().enumerate() {
            let at = |e: Error| Error::input(format!("instance {i}: {e}"));
            structure.check_label(data, i, y).map_err(at)?;
            let terms = structure.terms(y, y).map_err(at)?;
            factors.push(psi.factor_map(&terms));
            let phi = structure.joint_feature(data, i, y).map_err(at)?;
            check_indices(i, &phi, dim)?;
            bicrit_core::error::check_finite("the joint feature map", &phi.values).map_err(at)?;
        }
        Ok(Prepared { factors })
    }
}

fn check_indices(i: usize, phi: &SparseVec, dim: usize) -> Result<()> {
    match phi.indices.iter().find(|&&j| j >= dim) {
        Some(&j) => Err(Error::input(format!(
            "instance {i}: joint feature index {j} outside the joint feature size {dim}"
        ))),
        None => Ok(()),
    }
}

/// A view of the training problem: what [`Problem::infer`] needs.
pub struct Problem<'a, S: Structure> {
    /// The structure.
    pub structure: &'a S,
    /// Training inputs.
    pub data: &'a S::Data,
    /// Gold labels.
    pub labels: &'a [S::Label],
    /// The surrogate ψ.
    pub psi: &'a dyn Surrogate,
    /// The search (loss-augmented inference).
    pub search: &'a SearchSpec,
    /// Per-instance data.
    pub prepared: &'a Prepared,
}

/// One loss-augmented inference, digested for the learners.
#[derive(Clone, Debug)]
pub struct Violation<L> {
    /// ℓ_i(w): Φ at the answer (at the fractional point for a hull-edge answer, so the loss is the
    /// maximum over the convex hull of the labels for relaxed searches).
    pub loss: f64,
    /// Whether the answer is the gold label (zero subgradient).
    pub is_gold: bool,
    /// Whether the answer is a point inside a hull edge (two labels with weights).
    pub fractional: bool,
    /// The subgradient scale c.
    pub scale: f64,
    /// Δφ = Σ_j t_j (φ(x_i, y_j) − φ(x_i, y_i)), unique indices (empty for the gold label).
    pub dphi: SparseVec,
    /// m_f = w·Δφ at the weights of the inference.
    pub margin: f64,
    /// ψ − c·m_f: the intercept of the corner (meaningful for surrogates affine in h).
    pub intercept: f64,
    /// Oracle calls of the search.
    pub calls: Calls,
    /// The warm start for this instance's next inference, relative to the one given
    /// ([`WarmPlan::merged`], [`WarmPlan::resolve`]).
    pub warm: WarmPlan<L>,
}

impl<L> Violation<L> {
    /// The corner's value at weights `w` (affine surrogates): c·(w·Δφ) + intercept.
    pub fn value_at(&self, w: &[f64]) -> f64 {
        self.scale * dot(w, &self.dphi) + self.intercept
    }
}

impl<S: Structure> Problem<'_, S> {
    /// Number of training instances.
    pub fn n(&self) -> usize {
        self.labels.len()
    }

    /// Length of the joint feature vector.
    pub fn dim(&self) -> usize {
        self.structure.size_joint_feature()
    }

    /// Loss-augmented inference for instance `i` at weights `scale · w` (learners with lazy scaling
    /// pass their unscaled vector and the scale: the factor map's margin coefficients absorb it, so
    /// no dense copy is made). `warm` is the previous inference's warm start for this instance,
    /// `xi` the slack ξ_i (Sarawagi–Gupta only).
    pub fn infer(
        &self,
        i: usize,
        w: &[f64],
        scale: f64,
        warm: Option<&WarmStart<S::Label>>,
        xi: Option<f64>,
    ) -> Result<Violation<S::Label>> {
        let factors = self.prepared.factors[i];
        let mut scaled = factors;
        scaled.h.margin *= scale;
        scaled.g.margin *= scale;
        let y_true = &self.labels[i];
        let mut oracle = StructureOracle::new(self.structure, w, self.data, i, y_true, scaled);
        // the combination was checked when the learner was built (check_compatible)
        let out = self.search.run_with(&mut oracle, self.psi, warm, xi, false)?;
        if !out.value.is_finite() {
            return Err(Error::input(format!(
                "instance {i}: the search returned a non-finite loss ({}) with surrogate '{}'",
                out.value,
                self.psi.name()
            )));
        }
        let fractional = out.answer.len() > 1;
        if out.is_gold {
            return Ok(Violation {
                loss: out.value,
                is_gold: true,
                fractional: false,
                scale: 0.0,
                dphi: SparseVec::new(),
                margin: 0.0,
                intercept: out.value,
                calls: out.calls,
                warm: out.warm,
            });
        }
        let (mut hf, mut gf) = (0.0, 0.0);
        for it in &out.answer {
            hf += it.weight * it.h;
            gf += it.weight * it.g;
        }
        let (dh, dg) = self.psi.try_grad(hf, gf)?;
        let c = dh * factors.h.margin + dg * factors.g.margin;
        if !c.is_finite() {
            return Err(Error::input(format!(
                "instance {i}: the gradient of surrogate '{}' is not finite at the answer (h, g) = ({hf}, {gf})",
                self.psi.name()
            )));
        }
        let dim = self.dim();
        // Σ_j t_j (φ(y_j) − φ(y_i)) over the answer's labels other than y_i (a hull edge
        // ending at the gold label, 90 % of slack's late answers on CoNLL, adds nothing):
        // from the parts that differ where the structure gives them
        let items: Vec<(&S::Label, f64)> = out
            .answer
            .iter()
            .filter(|it| it.weight != 0.0 && it.label != *y_true)
            .map(|it| (&it.label, it.weight))
            .collect();
        let mut direct = crate::scratch::pooled(0);
        let dphi = if self.structure.write_feature_difference(self.data, i, y_true, &items, &mut direct)? {
            direct
        } else {
            crate::scratch::recycle(direct);
            self.accumulated_difference(i, y_true, &items, dim)?
        };
        let margin = scale * dot(w, &dphi);
        Ok(Violation {
            loss: out.value,
            is_gold: false,
            fractional,
            scale: c,
            intercept: out.value - c * margin,
            margin,
            dphi,
            calls: out.calls,
            warm: out.warm,
        })
    }

    /// Σ_j t_j (φ(x_i, y_j) − φ(x_i, y_i)) through the accumulator: the structure's differing
    /// parts when it gives them, else whole joint feature vectors.
    fn accumulated_difference(
        &self,
        i: usize,
        y_true: &S::Label,
        items: &[(&S::Label, f64)],
        dim: usize,
    ) -> Result<SparseVec> {
        with_scratch(dim, |s| -> Result<SparseVec> {
            let mut add = |j: usize, v: f64| s.add(j, v);
            if self.structure.add_feature_difference(self.data, i, y_true, items, &mut add)? {
                return Ok(s.take());
            }
            // φ(x_i, y_i) with unique indices first (summed as one vector, then subtracted)
            s.add_sparse(&self.structure.joint_feature(self.data, i, y_true)?, 1.0);
            let gold_phi = s.take();
            let mut mass = 0.0;
            for &(y, t) in items {
                let phi = self.structure.joint_feature(self.data, i, y)?;
                check_indices(i, &phi, dim)?;
                s.add_sparse(&phi, t);
                mass += t;
            }
            s.add_sparse(&gold_phi, -mass);
            Ok(s.take())
        })
    }
}
