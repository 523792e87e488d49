//! What a learner of NHSVM3 (thesis eq. `NHSVM3`) needs from the structure besides
//! [`HierarchyStructure::ratio_from_scores`]: the oracle at lazily scaled weights w = c·v, and
//! the scaled feature difference c·(φ(x_i, y) − φ(x_i, y_i)) over the symmetric difference only.

use bicrit_core::{CsrMatrix, Error, Result, SparseVec, Terms};

use super::{with_scratch, HierLabel, HierarchyStructure, LabelSpace, WeightLayout};
use crate::{Scored, Structure};

impl HierarchyStructure {
    /// [`Self::ratio_from_scores`] for instance `i` of `data` under the weights `scale · w`
    /// (lazy scaling of SGD: the node scores are those of `w`, multiplied by `scale`).
    /// Returns the answer (its margin in the scaled weights) and its clipped value.
    pub fn ratio_oracle_scaled(
        &self,
        w: &[f64],
        scale: f64,
        data: &CsrMatrix,
        i: usize,
        y_true: &[u32],
        offset: f64,
    ) -> Result<(Scored<HierLabel>, f64)> {
        self.check_row(data, i)?;
        if w.len() != self.size_joint_feature() {
            return Err(Error::input(format!(
                "w has length {} but the joint feature size is {}",
                w.len(),
                self.size_joint_feature()
            )));
        }
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::param(format!("the weight scale must be finite and > 0, got {scale}")));
        }
        let sigma = with_scratch(|sc| {
            let mut sigma = std::mem::take(&mut sc.sigma);
            self.node_scores(w, &data.view(), i, &mut sigma);
            let out: Vec<f64> = sigma.iter().map(|s| s * scale).collect();
            sc.sigma = sigma;
            out
        });
        self.ratio_from_scores(&sigma, y_true, offset)
    }

    /// Appends `coef · (φ(x_i, y) − φ(x_i, y_true))` to `out`: for every node n of y △ y_true,
    /// ±coef·s_n·x_i in node n's block (+ for n ∈ y). The common nodes cancel and are skipped,
    /// so the cost is |y △ y_true| · nnz(x_i). With `coef = 1/L(ŷ)` this is the subgradient of
    /// NHSVM3's term at its answer ŷ (thesis eq. `NHSVM3`). Both labels are validated.
    pub fn scaled_difference(
        &self,
        data: &CsrMatrix,
        i: usize,
        y: &[u32],
        y_true: &[u32],
        coef: f64,
        out: &mut SparseVec,
    ) -> Result<()> {
        self.check_row(data, i)?;
        self.check(y)?;
        self.check(y_true)?;
        let x = data.view();
        let (idx, val) = x.row(i);
        let (m, d) = (self.n_nodes(), self.n_features);
        Self::sym_diff(y, y_true, |n, in_y| {
            let c = (if in_y { coef } else { -coef }) * self.scale[n];
            match self.layout {
                WeightLayout::NodeMajor => {
                    for (&j, &xv) in idx.iter().zip(val) {
                        out.push(n * d + j as usize, c * xv);
                    }
                }
                WeightLayout::FeatureMajor => {
                    for (&j, &xv) in idx.iter().zip(val) {
                        out.push(j as usize * m + n, c * xv);
                    }
                }
            }
        });
        Ok(())
    }

    /// `data` has this structure's width and a row `i`.
    fn check_row(&self, data: &CsrMatrix, i: usize) -> Result<()> {
        self.check_width(data)?;
        if i >= data.n_rows() {
            return Err(Error::input(format!("instance {i} outside the {} rows of X", data.n_rows())));
        }
        Ok(())
    }
}

impl HierarchyStructure {
    /// NHSVM3's loss-augmented inference (thesis eq. `NHSVM3`) over the single-path space:
    /// the label maximising m(y)/L(y) + `offset` over y ≠ y_i with L(y) > 0, where L is the
    /// structure's loss — with `loss="normalized"`, λ_n = α_n and s_n = √α_n this is
    /// w·((Λ̃(y) − Λ̃(y_i)) ⊗ x)/‖Λ̃(y) − Λ̃(y_i)‖ + 1. The maximum is clipped at 0: when no label
    /// has a positive value the gold label is returned with value 0 (no violation, zero
    /// subgradient). Labels with L(y) = 0 have no normalized difference and are skipped (with
    /// λ = s² their φ equals the gold's). Ties: the first maximum in node order. The subgradient
    /// of the instance's term is (φ(x, ŷ) − φ(x, y_i)) / L(ŷ). Returns the answer and its value.
    pub fn ratio_from_scores(
        &self,
        sigma: &[f64],
        gold: &[u32],
        offset: f64,
    ) -> Result<(Scored<HierLabel>, f64)> {
        if self.multilabel {
            return Err(Error::unsupported(
                "the normalized-difference (NHSVM3) oracle enumerates single paths: it needs multilabel=False \
                 (the normalized difference does not decompose over nodes)",
            ));
        }
        if sigma.len() != self.n_nodes() {
            return Err(Error::input(format!("{} node scores for {} nodes", sigma.len(), self.n_nodes())));
        }
        if !offset.is_finite() {
            return Err(Error::param(format!("offset must be finite, got {offset}")));
        }
        bicrit_core::error::check_finite("node scores", sigma)?;
        self.check(gold)?;
        let g = &self.graph;
        let best = with_scratch(|sc| {
            let m = self.n_nodes();
            sc.mask.clear();
            sc.mask.resize(m, false);
            for &v in gold {
                sc.mask[v as usize] = true;
            }
            let gs = self.accumulate_single(sigma, Some(gold), sc);
            let gt = self.terminal(gold);
            let leaves_only = self.space == LabelSpace::Leaves;
            let mut best: Option<(f64, usize)> = None;
            for (t, a) in sc.acc.iter().enumerate() {
                if (leaves_only && !g.is_leaf(t)) || Some(t) == gt {
                    continue;
                }
                let (margin, terms) = self.candidate_terms(a, &gs);
                if terms.loss <= 0.0 {
                    continue;
                }
                let value = margin / terms.loss + offset;
                if value > best.map_or(0.0, |b| b.0) {
                    best = Some((value, t));
                }
            }
            best.map(|(value, t)| (value, self.path_label(t, sc)))
        });
        Ok(match best {
            None => (Scored { label: gold.to_vec(), margin: 0.0, terms: Terms::default() }, 0.0),
            Some((value, y)) => {
                let margin = Self::margin_of(sigma, &y, gold);
                let terms = self.terms_unchecked(&y, gold);
                (Scored { label: y, margin, terms }, value)
            }
        })
    }

    /// [`Self::ratio_from_scores`] for instance `i` of `data` under weights `w`
    /// ([`Self::ratio_oracle_scaled`] at scale 1).
    pub fn ratio_oracle(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y_true: &[u32],
        offset: f64,
    ) -> Result<(Scored<HierLabel>, f64)> {
        self.ratio_oracle_scaled(w, 1.0, data, i, y_true, offset)
    }
}
