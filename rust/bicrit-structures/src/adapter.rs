//! Adapter from a [`Structure`] to the plane-level [`LambdaOracle`]: a plane query O(λ) becomes
//! the structure query `argmax h + λ g` through the surrogate's [`FactorMap`] (docs/architecture.md, Objects). The
//! frontier by loss value is the frontier by g only when g depends on the loss alone
//! ([`FactorMap::g_by_loss`]: h = m, g = L, not Micro-F1's g = −(|y| + |y_i|)); the adapter
//! declares it only then.

use bicrit_core::{Capabilities, Error, FactorMap, LambdaOracle, PlaneQuery, Point, Result};

use crate::{Scored, Structure, TermQuery};

/// One instance of a structure seen as a λ-oracle in the (h, g) plane of a surrogate.
pub struct StructureOracle<'s, S: Structure> {
    structure: &'s S,
    w: &'s [f64],
    data: &'s S::Data,
    i: usize,
    y_true: &'s S::Label,
    factors: FactorMap,
    calls: usize,
    /// The structure's [`Structure::shared_scores`] of this instance, once computed.
    shared: Option<Option<Vec<f64>>>,
}

impl<'s, S: Structure> StructureOracle<'s, S> {
    /// Wraps instance `i` under weights `w` with the surrogate's `factors`.
    pub fn new(
        structure: &'s S,
        w: &'s [f64],
        data: &'s S::Data,
        i: usize,
        y_true: &'s S::Label,
        factors: FactorMap,
    ) -> Self {
        StructureOracle { structure, w, data, i, y_true, factors, calls: 0, shared: None }
    }

    /// The instance's shared scores (computed on first use; every query of this inference sees
    /// the same `w`).
    fn shared(&mut self) -> Result<Option<&[f64]>> {
        if self.shared.is_none() {
            self.shared = Some(self.structure.shared_scores(self.w, self.data, self.i)?);
        }
        Ok(self.shared.as_ref().and_then(|s| s.as_deref()))
    }

    /// Number of structure oracle calls made so far.
    pub fn calls(&self) -> usize {
        self.calls
    }

    fn to_point(&self, s: Scored<S::Label>) -> Point<S::Label> {
        let (h, g) = self.factors.point(s.margin, &s.terms);
        Point { label: s.label, h, g }
    }

    /// g at task loss `loss` when g = b·L + const with b ≥ 0 ([`FactorMap::g_by_loss`]): g is
    /// then non-decreasing in L, so a bound on L is one on g (none otherwise, or without `loss`).
    fn g_at_loss(&self, loss: Option<f64>) -> Option<f64> {
        let g = &self.factors.g;
        if !self.factors.g_by_loss() || g.terms.loss < 0.0 {
            return None;
        }
        let v = g.terms.loss * loss? + g.constant;
        v.is_finite().then_some(v)
    }
}

impl<S: Structure> LambdaOracle for StructureOracle<'_, S> {
    type Label = S::Label;

    fn capabilities(&self) -> Capabilities {
        let caps = self.structure.capabilities();
        Capabilities { frontier: caps.frontier && self.factors.g_by_loss(), ..caps }
    }

    fn query(&mut self, q: &PlaneQuery<'_, S::Label>) -> Result<Vec<Point<S::Label>>> {
        let caps = self.structure.capabilities();
        if !q.ban.is_empty() && !caps.ban {
            return Err(Error::unsupported(format!(
                "structure '{}' has no ban-list oracle",
                self.structure.name()
            )));
        }
        if q.k > 1 && !caps.kbest {
            return Err(Error::unsupported(format!(
                "structure '{}' has no k-best oracle",
                self.structure.name()
            )));
        }
        if q.cone.is_some() && !caps.cone {
            return Err(Error::unsupported(format!(
                "structure '{}' has no constrained λ-oracle",
                self.structure.name()
            )));
        }
        let (primary, secondary) = self.factors.objectives(q.lambda);
        let tq = TermQuery { primary, secondary, ban: q.ban, k: q.k.max(1), cone: q.cone };
        self.calls += 1;
        let (structure, w, data, i, y_true) = (self.structure, self.w, self.data, self.i, self.y_true);
        let found = structure.oracle_shared(w, data, i, y_true, &tq, self.shared()?)?;
        Ok(found.into_iter().map(|s| self.to_point(s)).collect())
    }

    /// g = b·L + const with b ≥ 0 ([`FactorMap::g_by_loss`]) and L ≤ the structure's
    /// [`Structure::max_loss`]: g ≤ b·max_loss + const (L ≥ 0).
    fn g_bound(&self) -> Option<f64> {
        self.g_at_loss(self.structure.max_loss(self.data, self.i, self.y_true))
    }

    /// g = b·L + const with b ≥ 0 and L ≥ the structure's [`Structure::loss_floor`] on every
    /// label but gold: g ≥ b·floor + const there.
    fn g_floor(&self) -> Option<f64> {
        self.g_at_loss(self.structure.loss_floor(self.data, self.i, self.y_true))
    }

    fn gold(&self) -> Option<Point<S::Label>> {
        let terms = self.structure.terms(self.y_true, self.y_true).ok()?;
        Some(self.to_point(Scored { label: self.y_true.clone(), margin: 0.0, terms }))
    }

    /// The structure's frontier by loss value, mapped to the plane: labels of equal loss share g
    /// (checked: [`FactorMap::g_by_loss`]), and the structure maximises the linear part of h
    /// within each loss value. When g does not separate loss values (b = 0 in g = b·L + const),
    /// only the largest h per g is kept.
    fn frontier(&mut self) -> Result<Vec<Point<S::Label>>> {
        if !self.structure.capabilities().frontier {
            return Err(Error::unsupported(format!(
                "structure '{}' has no frontier query (best label for every loss value)",
                self.structure.name()
            )));
        }
        if !self.factors.g_by_loss() {
            return Err(Error::incompatible(format!(
                "the frontier of structure '{}' groups labels by task loss, but this surrogate's g is not \
                 a function of the loss alone (e.g. Micro-F1's g = −(|y| + |y_i|)); use a convex hull search",
                self.structure.name()
            )));
        }
        self.calls += 1;
        let (structure, w, data, i, y_true) = (self.structure, self.w, self.data, self.i, self.y_true);
        let objective = self.factors.h.linear();
        let found = structure.frontier_shared(w, data, i, y_true, &objective, self.shared()?)?;
        let mut pts: Vec<Point<S::Label>> = Vec::with_capacity(found.len());
        for p in found.into_iter().map(|s| self.to_point(s)) {
            match pts.iter_mut().find(|q| q.g == p.g) {
                Some(q) if p.h > q.h => *q = p,
                Some(_) => {}
                None => pts.push(p),
            }
        }
        Ok(pts)
    }

    /// Re-scores labels from an earlier inference under the current weights (warm start, thesis
    /// §`sec:convex_hull_search`): m(y) = w·φ(x, y) − w·φ(x, y_i) and the terms, no oracle call.
    fn evaluate(&mut self, labels: &[S::Label], out: &mut Vec<(f64, f64)>) -> Result<bool> {
        let (structure, w, data, i, y_true) = (self.structure, self.w, self.data, self.i, self.y_true);
        structure.prefetch_labels(labels);
        let shared = self.shared()?;
        let scored = structure.evaluate_shared(w, data, i, y_true, labels, shared)?;
        if scored.len() != labels.len() {
            return Err(Error::input(format!(
                "structure '{}' evaluated {} of {} labels",
                structure.name(),
                scored.len(),
                labels.len()
            )));
        }
        out.extend(scored.iter().map(|(m, t)| self.factors.point(*m, t)));
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Multiclass;
    use bicrit_core::{CsrMatrix, Lambda};

    #[test]
    fn evaluate_matches_oracle_coordinates() {
        let s = Multiclass::new(3, 2).unwrap();
        let x = CsrMatrix::from_dense(&[vec![1.0, 2.0]], 2).unwrap();
        let w = vec![1.0, 0.0, 1.0, 1.0, 0.0, 1.0];
        let mut o = StructureOracle::new(&s, &w, &x, 0, &1, FactorMap::margin_loss());
        let found = o.query(&PlaneQuery { k: 3, ..PlaneQuery::lambda(Lambda::Finite(1.0)) }).unwrap();
        let labels: Vec<usize> = found.iter().map(|p| p.label).collect();
        let mut again = Vec::new();
        assert!(o.evaluate(&labels, &mut again).unwrap());
        assert_eq!(found.iter().map(|p| (p.h, p.g)).collect::<Vec<_>>(), again);
        assert_eq!(o.calls(), 1);
    }
}
