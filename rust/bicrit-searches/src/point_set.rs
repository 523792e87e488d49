//! An oracle over an explicit finite set of label points (h, g): the reference for tests,
//! benchmarks and plots. Labels are indices into the set.
//!
//! It answers every query of the protocol: the λ-oracle with exact lexicographic λ = 0 / ∞, the
//! constrained λ-oracle (the cone is checked on (h + 1, g), the (1 + m, L) coordinates of slack
//! rescaling), ban lists by index, k-best and the frontier by loss value (the largest h for every
//! distinct g, ties to the smaller index). For finite λ, values within [`REL_TOL`] of each
//! other count as ties and are broken toward larger g, then larger h, then the smaller index —
//! so an answer is always an extreme point of the face of maximisers (a hull vertex), never a
//! collinear middle point that wins by rounding.

use bicrit_core::{Capabilities, Error, Lambda, LambdaOracle, PlaneQuery, Point, Result};

use crate::geometry::REL_TOL;

/// An explicit point set as a λ-oracle.
#[derive(Clone, Debug, PartialEq)]
pub struct PointSetOracle {
    h: Vec<f64>,
    g: Vec<f64>,
    gold: Option<usize>,
    caps: Capabilities,
    calls: usize,
    g_bound: Option<f64>,
    g_floor: Option<f64>,
}

impl PointSetOracle {
    /// Builds the set; `gold` is the index of the gold label, or `None` for "the first point
    /// (0, 0) if there is one". Coordinates must be finite and of equal, non-zero length.
    pub fn new(h: Vec<f64>, g: Vec<f64>, gold: Option<usize>) -> Result<Self> {
        if h.len() != g.len() {
            return Err(Error::input(format!("h has {} values but g has {}", h.len(), g.len())));
        }
        if h.is_empty() {
            return Err(Error::input("the point set is empty: give at least one label point"));
        }
        bicrit_core::error::check_finite("h", &h)?;
        bicrit_core::error::check_finite("g", &g)?;
        let gold = match gold {
            Some(i) if i >= h.len() => {
                return Err(Error::input(format!(
                    "gold index {i} is outside the point set of {} points",
                    h.len()
                )))
            }
            Some(i) => Some(i),
            None => (0..h.len()).find(|&i| h[i] == 0.0 && g[i] == 0.0),
        };
        let caps = Capabilities { ban: true, kbest: true, cone: true, frontier: true, relaxed: false };
        Ok(PointSetOracle { h, g, gold, caps, calls: 0, g_bound: None, g_floor: None })
    }

    /// A set without a gold label.
    pub fn without_gold(mut self) -> Self {
        self.gold = None;
        self
    }

    /// Declares `bound` as the oracle's upper bound on g ([`LambdaOracle::g_bound`]); it must
    /// be at least every point's g.
    pub fn with_g_bound(mut self, bound: f64) -> Result<Self> {
        if !bound.is_finite() || self.g.iter().any(|&g| g > bound) {
            return Err(Error::input(format!("g bound {bound} is below a point's g or not finite")));
        }
        self.g_bound = Some(bound);
        Ok(self)
    }

    /// Declares `floor` as the oracle's lower bound on g over the points other than the gold
    /// label ([`LambdaOracle::g_floor`]); it must be at most every such point's g.
    pub fn with_g_floor(mut self, floor: f64) -> Result<Self> {
        let below = (0..self.g.len()).any(|i| Some(i) != self.gold && self.g[i] < floor);
        if !floor.is_finite() || below {
            return Err(Error::input(format!("g floor {floor} is above a point's g or not finite")));
        }
        self.g_floor = Some(floor);
        Ok(self)
    }

    /// Restricts the declared capabilities (to test refusals and λ-only searches).
    pub fn with_capabilities(mut self, caps: Capabilities) -> Self {
        self.caps = Capabilities { relaxed: false, ..caps };
        self
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.h.len()
    }

    /// Whether the set is empty (never: construction refuses it).
    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    /// Index of the gold label.
    pub fn gold_index(&self) -> Option<usize> {
        self.gold
    }

    /// Number of queries answered so far.
    pub fn calls(&self) -> usize {
        self.calls
    }

    /// The coordinates of point `i`.
    pub fn point(&self, i: usize) -> (f64, f64) {
        (self.h[i], self.g[i])
    }

    /// Index (into `alive`) of the preferred answer under `lambda`.
    fn pick(&self, lambda: Lambda, alive: &[usize]) -> usize {
        // Lexicographic preference on two keys, then the smaller index.
        let lex = |a: usize, b: usize, ka: (f64, f64), kb: (f64, f64)| {
            ka.0 > kb.0 || (ka.0 == kb.0 && (ka.1 > kb.1 || (ka.1 == kb.1 && a < b)))
        };
        let hg = |i: usize| (self.h[i], self.g[i]);
        let gh = |i: usize| (self.g[i], self.h[i]);
        let mut b = 0;
        match lambda {
            Lambda::Zero => {
                for pos in 1..alive.len() {
                    if lex(alive[pos], alive[b], hg(alive[pos]), hg(alive[b])) {
                        b = pos;
                    }
                }
            }
            Lambda::Infinity => {
                for pos in 1..alive.len() {
                    if lex(alive[pos], alive[b], gh(alive[pos]), gh(alive[b])) {
                        b = pos;
                    }
                }
            }
            Lambda::Finite(l) => {
                let value = |i: usize| self.h[i] + l * self.g[i];
                let best = alive.iter().map(|&i| value(i)).fold(f64::NEG_INFINITY, f64::max);
                let scale = alive.iter().map(|&i| self.h[i].abs() + l * self.g[i].abs()).fold(0.0, f64::max);
                let tol = REL_TOL * scale;
                let mut first = true;
                for pos in 0..alive.len() {
                    let i = alive[pos];
                    if best - value(i) <= tol && (first || lex(i, alive[b], gh(i), gh(alive[b]))) {
                        b = pos;
                        first = false;
                    }
                }
            }
        }
        b
    }
}

impl LambdaOracle for PointSetOracle {
    type Label = usize;

    fn capabilities(&self) -> Capabilities {
        self.caps
    }

    fn query(&mut self, q: &PlaneQuery<'_, usize>) -> Result<Vec<Point<usize>>> {
        if !q.ban.is_empty() && !self.caps.ban {
            return Err(Error::unsupported("this point set was built without ban lists"));
        }
        if q.k > 1 && !self.caps.kbest {
            return Err(Error::unsupported("this point set was built without k-best"));
        }
        if q.cone.is_some() && !self.caps.cone {
            return Err(Error::unsupported("this point set was built without the constrained λ-oracle"));
        }
        if let Lambda::Finite(l) = q.lambda {
            if !(l.is_finite() && l > 0.0) {
                return Err(Error::input(format!("λ = {l} must be finite and > 0 (use Zero / Infinity)")));
            }
        }
        self.calls += 1;
        let mut alive: Vec<usize> = (0..self.h.len())
            .filter(|i| !q.ban.contains(i))
            .filter(|&i| q.cone.is_none_or(|c| c.contains(self.h[i] + 1.0, self.g[i])))
            .collect();
        let mut out = Vec::with_capacity(q.k.min(alive.len()));
        while out.len() < q.k && !alive.is_empty() {
            let b = self.pick(q.lambda, &alive);
            let i = alive.swap_remove(b);
            out.push(Point { label: i, h: self.h[i], g: self.g[i] });
        }
        Ok(out)
    }

    fn g_bound(&self) -> Option<f64> {
        self.g_bound
    }

    fn g_floor(&self) -> Option<f64> {
        self.g_floor
    }

    fn gold(&self) -> Option<Point<usize>> {
        self.gold.map(|i| Point { label: i, h: self.h[i], g: self.g[i] })
    }

    fn frontier(&mut self) -> Result<Vec<Point<usize>>> {
        if !self.caps.frontier {
            return Err(Error::unsupported("this point set was built without the frontier query"));
        }
        self.calls += 1;
        let mut best: Vec<usize> = Vec::new();
        for i in 0..self.h.len() {
            match best.iter_mut().find(|b| self.g[**b] == self.g[i]) {
                Some(b) if self.h[i] > self.h[*b] => *b = i,
                Some(_) => {}
                None => best.push(i),
            }
        }
        Ok(best.into_iter().map(|i| Point { label: i, h: self.h[i], g: self.g[i] }).collect())
    }

    fn evaluate(&mut self, labels: &[usize], out: &mut Vec<(f64, f64)>) -> Result<bool> {
        for &i in labels {
            if i >= self.h.len() {
                return Err(Error::input(format!(
                    "label {i} is outside the point set of {} points",
                    self.h.len()
                )));
            }
            out.push((self.h[i], self.g[i]));
        }
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bicrit_core::Cone;

    fn q(lambda: Lambda) -> PlaneQuery<'static, usize> {
        PlaneQuery::lambda(lambda)
    }

    #[test]
    fn lexicographic_extremes_and_ties() {
        let mut o =
            PointSetOracle::new(vec![0.0, 2.0, 2.0, 1.0, 0.5], vec![0.0, 1.0, 3.0, 3.0, 2.0], None).unwrap();
        assert_eq!(o.gold_index(), Some(0));
        assert_eq!(o.query(&q(Lambda::Zero)).unwrap()[0].label, 2);
        assert_eq!(o.query(&q(Lambda::Infinity)).unwrap()[0].label, 2);
        // λ = 1: values 0, 3, 5, 4, 2.5.
        let top3: Vec<usize> = o
            .query(&PlaneQuery { k: 3, ..q(Lambda::Finite(1.0)) })
            .unwrap()
            .iter()
            .map(|p| p.label)
            .collect();
        assert_eq!(top3, vec![2, 3, 1]);
        // Collinear tie on the line h + g = 3: (3, 0), (1.5, 1.5), (0, 3) → largest g wins.
        let mut c = PointSetOracle::new(vec![3.0, 1.5, 0.0], vec![0.0, 1.5, 3.0], None).unwrap();
        assert_eq!(c.query(&q(Lambda::Finite(1.0))).unwrap()[0].label, 2);
        assert_eq!(c.calls(), 1);
    }

    #[test]
    fn ban_cone_and_validation() {
        let mut o = PointSetOracle::new(vec![0.0, 1.0, 3.0], vec![0.0, 2.0, 1.0], Some(0)).unwrap();
        let ban = [2usize];
        assert_eq!(o.query(&PlaneQuery { ban: &ban, ..q(Lambda::Finite(1.0)) }).unwrap()[0].label, 1);
        // Cone on (h + 1, g): slopes g/(h+1) = 0, 1, 0.25; keep slopes in (0.5, 2].
        let cone = Cone { lo: 0.5, lo_closed: false, hi: 2.0, hi_closed: true };
        let r = o.query(&PlaneQuery { cone: Some(cone), ..q(Lambda::Finite(1.0)) }).unwrap();
        assert_eq!(r.iter().map(|p| p.label).collect::<Vec<_>>(), vec![1]);
        let none = Cone { lo: 5.0, lo_closed: true, hi: 6.0, hi_closed: true };
        assert!(o.query(&PlaneQuery { cone: Some(none), ..q(Lambda::Zero) }).unwrap().is_empty());
        assert!(PointSetOracle::new(vec![], vec![], None).is_err());
        assert!(PointSetOracle::new(vec![f64::NAN], vec![1.0], None).is_err());
        assert!(PointSetOracle::new(vec![1.0], vec![1.0, 2.0], None).is_err());
        assert!(PointSetOracle::new(vec![1.0], vec![1.0], Some(3)).is_err());
        let mut lim = o.clone().with_capabilities(Capabilities::default());
        assert!(matches!(
            lim.query(&PlaneQuery { ban: &ban, ..q(Lambda::Zero) }),
            Err(Error::Unsupported(_))
        ));
        let mut out = Vec::new();
        assert!(o.evaluate(&[2, 1], &mut out).unwrap());
        assert_eq!(out[0].0, 3.0);
    }
}
