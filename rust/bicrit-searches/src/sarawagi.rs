//! Sarawagi–Gupta's search for the cutting-plane form (thesis §"Binary Search for Cutting-plane
//! Optimization", eq. `p1_obj_up`): minimise the convex
//! F(λ) = max_y H(y) + λG(y) − 2√(ξ_i λ) over λ ≥ 0 by golden-section search (here in log λ,
//! where F stays unimodal), with (H, G) = (h + s, g). Needs the instance's slack ξ_i, so it only
//! fits the n-slack cutting plane. Returns the label with the largest Φ = H·G among those seen
//! (a label violates the constraint, HG > ξ_i, exactly when H − ξ_i/G > 0); every answer also
//! gives the bound of Lemma `lem3`.

use bicrit_core::{Error, LambdaOracle, Result};

use crate::bisecting::{best_phi, ProductState};
use crate::session::Session;
use crate::{Found, Requirements, Search, WarmStart};

/// Sarawagi–Gupta search.
#[derive(Clone, Debug, PartialEq)]
pub struct Sarawagi {
    /// Stop when the bracket [λ_a, λ_b] has λ_b/λ_a < 1 + tol.
    pub tol: f64,
    /// Call budget.
    pub max_calls: usize,
    /// Initial λ (default 1, or the warm start's).
    pub lambda0: Option<f64>,
}

impl Default for Sarawagi {
    fn default() -> Self {
        Sarawagi { tol: 1e-2, max_calls: 100, lambda0: None }
    }
}

impl Search for Sarawagi {
    fn name(&self) -> &'static str {
        "sarawagi"
    }

    fn requirements(&self) -> Requirements {
        Requirements { product_form: true, xi: true, ..Requirements::default() }
    }

    fn max_calls(&self) -> usize {
        self.max_calls
    }

    fn search<'a, O: LambdaOracle>(
        &self,
        s: &mut Session<'a, O>,
        warm: Option<&'a WarmStart<O::Label>>,
        xi: Option<f64>,
    ) -> Result<Found<O::Label>> {
        let xi =
            match xi {
                Some(x) if x.is_finite() && x >= 0.0 => x,
                Some(x) => {
                    return Err(Error::input(format!("sarawagi: the slack ξ_i = {x} must be finite and ≥ 0")))
                }
                None => return Err(Error::incompatible(
                    "search 'sarawagi' needs the instance's slack ξ_i (n-slack cutting plane only); pass xi",
                )),
            };
        let mut st = ProductState::new(s);
        if let Some(w) = warm {
            s.warm_points(w)?;
        }
        let start = self.lambda0.or(warm.and_then(|w| w.lambda)).unwrap_or(1.0);
        // F at t = ln λ with the answer's (H, G); None when the oracle has no label.
        let f =
            |s: &mut Session<'_, O>, st: &mut ProductState, t: f64| -> Result<Option<(f64, (f64, f64))>> {
                let lambda = t.clamp(-600.0, 600.0).exp();
                Ok(st.ask(s, lambda)?.map(|(h, g, k)| (k - 2.0 * (xi * lambda).sqrt(), (h, g))))
            };
        let stop = |s: &Session<'_, O>, st: &ProductState| !s.budget_left() || st.upper <= best_phi(s);
        // Bracket the minimum: step in t = ln λ (growing steps) until F increases.
        let mut a = start.ln();
        let Some(mut fa) = f(s, &mut st, a)? else { return Ok(Found::best_of(s, Some(0.0))) };
        let mut b = a + 1.0;
        let Some(mut fb) = f(s, &mut st, b)? else { return Ok(Found::best_of(s, Some(0.0))) };
        if fb.0 > fa.0 {
            std::mem::swap(&mut a, &mut b);
            std::mem::swap(&mut fa, &mut fb);
        }
        let mut c = b + 1.618 * (b - a);
        let Some(mut fc) = f(s, &mut st, c)? else { return Ok(Found::best_of(s, Some(0.0))) };
        let mut steps = 0;
        while fc.0 < fb.0 && steps < 40 && !stop(s, &st) {
            (a, fa, b, fb) = (b, fb, c, fc);
            c = b + 1.618 * (b - a);
            match f(s, &mut st, c)? {
                Some(v) => fc = v,
                None => break,
            }
            steps += 1;
        }
        // Golden section on [a, c]; stop on the width, on equal labels at both ends, or when the
        // bound of Lemma `lem3` certifies the best label.
        let (mut lo, mut hi, mut at_lo, mut at_hi) =
            if a < c { (a, c, fa.1, fc.1) } else { (c, a, fc.1, fa.1) };
        const R: f64 = 0.381_966_011_250_105_1;
        let (mut x1, mut x2) = (lo + R * (hi - lo), hi - R * (hi - lo));
        let mut f1: Option<(f64, (f64, f64))> = None;
        let mut f2: Option<(f64, (f64, f64))> = None;
        while (hi - lo) > (1.0 + self.tol).ln() && at_lo != at_hi && !stop(s, &st) {
            if f1.is_none() {
                f1 = f(s, &mut st, x1)?;
            }
            if f2.is_none() && !stop(s, &st) {
                f2 = f(s, &mut st, x2)?;
            }
            let (Some(v1), Some(v2)) = (f1, f2) else { break };
            if v1.0 <= v2.0 {
                (hi, at_hi) = (x2, v2.1);
                (x2, f2) = (x1, f1);
                x1 = lo + R * (hi - lo);
                f1 = None;
            } else {
                (lo, at_lo) = (x1, v1.1);
                (x1, f1) = (x2, f2);
                x2 = hi - R * (hi - lo);
                f2 = None;
            }
        }
        let upper = st.upper;
        Ok(Found::best_of(s, upper.is_finite().then_some(upper)))
    }
}
