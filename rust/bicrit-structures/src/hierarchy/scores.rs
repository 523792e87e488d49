//! Node scores s_n·W_n·x of the `hierarchy` structure in either weight layout, and the node
//! gains a query adds to them.

use bicrit_core::{CsrMatrix, CsrView, Error, Objective, Result};

use super::{HierarchyStructure, WeightLayout};

impl HierarchyStructure {
    pub(super) fn check_width(&self, data: &CsrMatrix) -> Result<()> {
        if data.n_cols != self.n_features {
            return Err(Error::input(format!(
                "X has {} features but the structure was initialised with {}",
                data.n_cols, self.n_features
            )));
        }
        Ok(())
    }

    /// m(y) = Σ_{n ∈ y∖y_i} σ_n − Σ_{n ∈ y_i∖y} σ_n (exactly 0 at the gold label).
    pub(super) fn margin_of(sigma: &[f64], y: &[u32], yt: &[u32]) -> f64 {
        let mut m = 0.0;
        Self::sym_diff(y, yt, |v, in_y| if in_y { m += sigma[v] } else { m -= sigma[v] });
        m
    }

    /// Node scores σ_n = s_n·W_n·x of row `i` into `out`.
    pub(super) fn node_scores(&self, w: &[f64], x: &CsrView<'_>, i: usize, out: &mut Vec<f64>) {
        let m = self.n_nodes();
        let d = self.n_features;
        let (idx, val) = x.row(i);
        out.clear();
        match self.layout {
            WeightLayout::NodeMajor => {
                out.extend((0..m).map(|n| {
                    let block = &w[n * d..(n + 1) * d];
                    let dot: f64 = idx.iter().zip(val).map(|(&j, &v)| v * block[j as usize]).sum();
                    self.scale[n] * dot
                }));
            }
            WeightLayout::FeatureMajor => {
                out.resize(m, 0.0);
                for (&j, &v) in idx.iter().zip(val) {
                    let row = &w[j as usize * m..(j as usize + 1) * m];
                    for (o, &wv) in out.iter_mut().zip(row) {
                        *o += v * wv;
                    }
                }
                for (o, &s) in out.iter_mut().zip(&self.scale) {
                    *o *= s;
                }
            }
        }
    }

    pub(super) fn finite_scores(sigma: &[f64]) -> Result<()> {
        match sigma.iter().position(|s| !s.is_finite()) {
            None => Ok(()),
            Some(n) => Err(Error::input(format!(
                "the score of node {n} is not finite ({}): non-finite or overflowing weights or features",
                sigma[n]
            ))),
        }
    }

    /// Per-node gains of objective `o`: o.margin·σ_n plus the node's share of the terms
    /// (the constants Σ_{n ∈ y_i} … are dropped; they do not change the argmax).
    pub(super) fn gains(&self, sigma: &[f64], mask: &[bool], o: &Objective, out: &mut Vec<f64>) {
        out.clear();
        out.extend((0..self.n_nodes()).map(|v| {
            let mut x = o.margin * sigma[v];
            if self.counted[v] {
                let (sgn, lw) =
                    if mask[v] { (-1.0, self.miss_weight[v]) } else { (1.0, self.loss_weight[v]) };
                x += o.terms.loss * lw * sgn + o.terms.size + o.terms.hamming * sgn;
            }
            x
        }));
    }
}
