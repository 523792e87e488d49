//! Adapter from a [`Structure`] to the plane-level [`LambdaOracle`]: a plane query O(λ) becomes
//! the structure query `argmax h + λ g` through the surrogate's [`FactorMap`] (DESIGN §3).

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
        StructureOracle { structure, w, data, i, y_true, factors, calls: 0 }
    }

    /// Number of structure oracle calls made so far.
    pub fn calls(&self) -> usize {
        self.calls
    }

    fn to_point(&self, s: Scored<S::Label>) -> Point<S::Label> {
        let (h, g) = self.factors.point(s.margin, &s.terms);
        Point { label: s.label, h, g }
    }
}

impl<S: Structure> LambdaOracle for StructureOracle<'_, S> {
    type Label = S::Label;

    fn capabilities(&self) -> Capabilities {
        self.structure.capabilities()
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
        let found = self.structure.oracle(self.w, self.data, self.i, self.y_true, &tq)?;
        Ok(found.into_iter().map(|s| self.to_point(s)).collect())
    }

    fn gold(&self) -> Option<Point<S::Label>> {
        let terms = self.structure.terms(self.y_true, self.y_true).ok()?;
        Some(self.to_point(Scored { label: self.y_true.clone(), margin: 0.0, terms }))
    }
}
