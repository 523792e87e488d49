//! Bisecting search (thesis Alg. `alg:bisecting`, Lemmas `lem:restricted_space`,
//! `cor:simple_segment`, `MAP_seg`, `lem3`): λ-oracle only, product form ψ = (h + s)·g,
//! approximate (Theorem `loracle_l1`: no λ-only search is exact), warm-startable from the
//! previous λ.
//!
//! On (H, G) = (h + s, g): each answer y(λ) restricts the optimum to H ∈ [min u, max u] and
//! G ∈ [min v, max v] with u = (H, λG), v = (G, H/λ) — here with the best Φ̂ so far in place of
//! Φ(y), the tighter form — and, by Lemma `MAP_seg`, to larger λ when G ≤ H/λ (the slope of y is
//! below 1/λ), smaller λ otherwise. Slips handled: the printed start L = ℝ₊ has no midpoint, so
//! λ grows (or shrinks) geometrically until both ends of L are known, then bisects; the search
//! stops when H or G is empty, on a width tolerance, or when both ends of L return the same
//! label (Lemma `MAP_seg`: nothing changes in between). Every answer also gives the certified
//! bound Φ* ≤ K(λ)²/(4λ) of Lemma `lem3`.

use bicrit_core::{Lambda, LambdaOracle, Result};

use crate::session::Session;
use crate::{Found, Requirements, Search, WarmStart};

/// Bisecting search.
#[derive(Clone, Debug, PartialEq)]
pub struct Bisecting {
    /// Stop when the λ interval is narrower than `tol` relative to its upper end.
    pub tol: f64,
    /// Call budget.
    pub max_calls: usize,
    /// Initial λ (default 1, or the warm start's).
    pub lambda0: Option<f64>,
}

impl Default for Bisecting {
    fn default() -> Self {
        Bisecting { tol: 1e-2, max_calls: 100, lambda0: None }
    }
}

/// Shared state of the λ-only product-form searches: best Φ̂, the bound min K²/(4λ), and the
/// label at each end of the λ interval.
pub(crate) struct ProductState {
    pub shift: f64,
    pub upper: f64,
}

impl ProductState {
    pub fn new<O: LambdaOracle>(s: &Session<'_, O>) -> Self {
        ProductState { shift: s.psi().product_shift().unwrap_or(0.0), upper: f64::INFINITY }
    }

    /// Queries O(λ), records the label and the bound; returns (H, G, K) of the answer.
    pub fn ask<O: LambdaOracle>(
        &mut self,
        s: &mut Session<'_, O>,
        lambda: f64,
    ) -> Result<Option<(f64, f64, f64)>> {
        let Some(y) = s.query(Lambda::Finite(lambda), &[], 1, None)?.into_iter().next() else {
            self.upper = 0.0;
            return Ok(None);
        };
        let (big_h, g) = (y.h + self.shift, y.g);
        s.add(y)?;
        let k = big_h + lambda * g;
        // Lemma `lem3`: for g ≥ 0, Φ = G·H ≤ G(K − λG) ≤ K²/(4λ); K ≤ 0 means no Φ > 0.
        self.upper = self.upper.min(if k <= 0.0 { 0.0 } else { k * k / (4.0 * lambda) });
        Ok(Some((big_h, g, k)))
    }
}

/// Best Φ̂ so far (the gold label counts), never below 0.
pub(crate) fn best_phi<O: LambdaOracle>(s: &Session<'_, O>) -> f64 {
    s.best().map_or(0.0, |b| s.known[b].phi.max(0.0))
}

/// The interval of λ that a λ-only search narrows: geometric growth/shrink until both ends are
/// known (the thesis's printed L = ℝ₊ has no midpoint), then bisection; it stops when both
/// ends returned the same label (Lemma `MAP_seg`: nothing changes in between), when it is
/// narrower than `tol` relative to its upper end, or when λ leaves [1e-150, 1e150].
pub(crate) struct LambdaInterval {
    lo: f64,
    hi: f64,
    at_lo: Option<(f64, f64)>,
    at_hi: Option<(f64, f64)>,
    tol: f64,
}

impl LambdaInterval {
    pub fn new(tol: f64) -> Self {
        LambdaInterval { lo: 0.0, hi: f64::INFINITY, at_lo: None, at_hi: None, tol }
    }

    /// Records the answer (H, G) at `lambda` and whether the optimum lies at larger λ; returns
    /// the next λ, or None when the search should stop.
    pub fn step(&mut self, lambda: f64, larger: bool, answer: (f64, f64)) -> Option<f64> {
        if larger {
            (self.lo, self.at_lo) = (lambda, Some(answer));
        } else {
            (self.hi, self.at_hi) = (lambda, Some(answer));
        }
        let (lo, hi) = (self.lo, self.hi);
        if self.at_lo.is_some() && self.at_lo == self.at_hi {
            return None;
        }
        if hi.is_finite() && lo > 0.0 && hi - lo <= self.tol * hi {
            return None;
        }
        let next = if hi.is_infinite() {
            lambda * 4.0
        } else if lo <= 0.0 {
            lambda / 4.0
        } else {
            0.5 * (lo + hi)
        };
        (next > 1e-150 && next < 1e150).then_some(next)
    }
}

impl Search for Bisecting {
    fn name(&self) -> &'static str {
        "bisecting"
    }

    fn requirements(&self) -> Requirements {
        Requirements { product_form: true, ..Requirements::default() }
    }

    fn max_calls(&self) -> usize {
        self.max_calls
    }

    fn search<'a, O: LambdaOracle>(
        &self,
        s: &mut Session<'a, O>,
        warm: Option<&'a WarmStart<O::Label>>,
        _xi: Option<f64>,
    ) -> Result<Found<O::Label>> {
        let mut st = ProductState::new(s);
        let mut lambda = self.lambda0.or(warm.and_then(|w| w.lambda)).unwrap_or(1.0);
        if let Some(w) = warm {
            s.warm_points(w)?;
        }
        let mut interval = LambdaInterval::new(self.tol);
        let (mut hr, mut gr) = ((0.0f64, f64::INFINITY), (0.0f64, f64::INFINITY));
        while s.budget_left() {
            let Some((big_h, g, k)) = st.ask(s, lambda)? else { break };
            let phi = best_phi(s);
            if st.upper <= phi || k <= 0.0 {
                break; // certified optimal (or nothing has Φ > 0)
            }
            // Lemma `cor:simple_segment` with Φ̂: the intersections of HG = Φ̂ with the line.
            if phi > 0.0 {
                let root = (k * k - 4.0 * lambda * phi).max(0.0).sqrt();
                let (h1, h2) = ((k - root) / 2.0, (k + root) / 2.0);
                let (g1, g2) = ((k - root) / (2.0 * lambda), (k + root) / (2.0 * lambda));
                hr = (hr.0.max(h1), hr.1.min(h2));
                gr = (gr.0.max(g1), gr.1.min(g2));
                if hr.0 > hr.1 || gr.0 > gr.1 {
                    break;
                }
            }
            // Lemma `MAP_seg`: v₁ ≤ v₂ (G ≤ H/λ) → the optimum needs a larger λ.
            match interval.step(lambda, g <= big_h / lambda, (big_h, g)) {
                Some(next) => lambda = next,
                None => break,
            }
        }
        let upper = st.upper;
        Ok(Found::best_of(s, upper.is_finite().then_some(upper)))
    }
}
