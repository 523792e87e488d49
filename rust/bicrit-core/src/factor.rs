//! Factor maps: how a surrogate's factors h and g are built from a label's margin and terms,
//! and how a λ-oracle query in the plane becomes an [`Objective`] for a structure's oracle
//! (docs/architecture.md, Objects).
//!
//! Margin, slack, β-/generalized scaling, log loss and ProbLoss use h = m, g = L. The Micro-F1
//! surrogate uses h = H + m and g = −(|y| + |y_i|) (thesis §`sec:microf1`).

use crate::oracle::Lambda;
use crate::terms::{Objective, Terms};

/// An affine function of a label: `margin · m(y) + terms · t(y) + constant`.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Affine {
    /// Coefficient of the margin.
    pub margin: f64,
    /// Coefficients of the decomposable terms.
    pub terms: Terms,
    /// Constant offset (e.g. −|y_i| for Micro-F1).
    pub constant: f64,
}

impl Affine {
    /// Value at a label with margin `m` and terms `t`.
    pub fn value(&self, m: f64, t: &Terms) -> f64 {
        self.margin * m + t.dot(&self.terms) + self.constant
    }

    /// The linear part, as an objective for an oracle.
    pub fn linear(&self) -> Objective {
        Objective { margin: self.margin, terms: self.terms }
    }
}

/// The two factor functions of a surrogate for one instance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FactorMap {
    /// h(y).
    pub h: Affine,
    /// g(y).
    pub g: Affine,
}

impl FactorMap {
    /// h = m, g = L: margin, slack, β-/generalized scaling, log loss, ProbLoss.
    pub fn margin_loss() -> Self {
        FactorMap {
            h: Affine { margin: 1.0, ..Affine::default() },
            g: Affine { terms: Terms { loss: 1.0, ..Terms::default() }, ..Affine::default() },
        }
    }

    /// h = H + m, g = −(|y| + |y_i|): the Micro-F1 surrogate, given the gold size |y_i|.
    pub fn micro_f1(gold_size: f64) -> Self {
        FactorMap {
            h: Affine { margin: 1.0, terms: Terms { hamming: 1.0, ..Terms::default() }, constant: 0.0 },
            g: Affine { margin: 0.0, terms: Terms { size: -1.0, ..Terms::default() }, constant: -gold_size },
        }
    }

    /// Whether g depends on the task loss alone (g = b·L + const; h may be any affine function):
    /// then labels of equal loss share g, and the frontier by loss value (best h for every loss
    /// value, [`crate::LambdaOracle::frontier`]) is the frontier by g. True for h = m, g = L;
    /// false for Micro-F1, whose g counts |y|.
    pub fn g_by_loss(&self) -> bool {
        let t = &self.g.terms;
        self.g.margin == 0.0 && t.size == 0.0 && t.hamming == 0.0
    }

    /// The point (h, g) of a label with margin `m` and terms `t`.
    pub fn point(&self, m: f64, t: &Terms) -> (f64, f64) {
        (self.h.value(m, t), self.g.value(m, t))
    }

    /// The structure-level objectives of a plane query: the primary objective and, for the
    /// lexicographic queries λ ∈ {0, ∞}, the tie-breaking one.
    pub fn objectives(&self, lambda: Lambda) -> (Objective, Option<Objective>) {
        let h = self.h.linear();
        let g = self.g.linear();
        match lambda {
            Lambda::Zero => (h, Some(g)),
            Lambda::Infinity => (g, Some(h)),
            Lambda::Finite(l) => (
                Objective { margin: h.margin + l * g.margin, terms: h.terms.combine(1.0, &g.terms, l) },
                None,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn micro_f1_objective_matches_design() {
        // λ-oracle of Micro-F1: argmax m + H − λ|y| (docs/architecture.md, Objects).
        let f = FactorMap::micro_f1(3.0);
        let (p, s) = f.objectives(Lambda::Finite(0.5));
        assert!(s.is_none());
        assert_eq!(p.margin, 1.0);
        assert_eq!(p.terms, Terms { loss: 0.0, size: -0.5, hamming: 1.0 });
        let t = Terms { loss: 1.0, size: 2.0, hamming: 1.0 };
        assert_eq!(f.point(0.25, &t), (1.25, -5.0));
    }

    #[test]
    fn lexicographic_queries_swap_roles() {
        let f = FactorMap::margin_loss();
        let (p, s) = f.objectives(Lambda::Infinity);
        assert_eq!(p.margin, 0.0);
        assert_eq!(p.terms.loss, 1.0);
        assert_eq!(s.unwrap().margin, 1.0);
        let (p0, s0) = f.objectives(Lambda::Zero);
        assert_eq!(p0.margin, 1.0);
        assert_eq!(s0.unwrap().terms.loss, 1.0);
    }

    #[test]
    fn frontier_needs_g_by_loss() {
        assert!(FactorMap::margin_loss().g_by_loss());
        assert!(!FactorMap::micro_f1(2.0).g_by_loss());
    }
}
