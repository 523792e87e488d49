//! Binary search on the convex upper bound F̄ (thesis §`sec:binary_sgd`, Lemma `binary_upper`):
//! λ-oracle only, product form, approximate, no slack variable (SGD-ready).
//!
//! F̄(λ) = ¼·max_y (H(y)/λ + λG(y))² with (H, G) = (h + s, g). Slip handled: H/λ + λG =
//! (H + λ²G)/λ, so F̄ is evaluated by querying the oracle at λ², and F̄(λ) = K(λ²)²/(4λ²) is the
//! bound of Lemma `lem3`. F̄ is convex in λ; its slope at the answer y has the sign of
//! G − H/λ², which drives the bisection (geometric growth/shrink until both ends are known).
//! The search returns the best label seen (Φ is only evaluated, never optimised).

use bicrit_core::{LambdaOracle, Result};

use crate::bisecting::{best_phi, LambdaInterval, ProductState};
use crate::session::Session;
use crate::{Found, Requirements, Search, WarmStart};

/// Binary search on F̄.
#[derive(Clone, Debug, PartialEq)]
pub struct Binary {
    /// Stop when the interval of λ (the square root of the oracle's weight) is narrower than
    /// `tol` relative to its upper end.
    pub tol: f64,
    /// Call budget.
    pub max_calls: usize,
    /// The oracle's initial weight λ² (default 1, or the warm start's).
    pub lambda0: Option<f64>,
}

impl Default for Binary {
    fn default() -> Self {
        Binary { tol: 1e-2, max_calls: 100, lambda0: None }
    }
}

impl Search for Binary {
    fn name(&self) -> &'static str {
        "binary"
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
        let mut lambda = self.lambda0.or(warm.and_then(|w| w.lambda)).unwrap_or(1.0).sqrt();
        if let Some(w) = warm {
            s.warm_points(w)?;
        }
        let mut interval = LambdaInterval::new(self.tol);
        while s.budget_left() {
            let Some((big_h, g, k)) = st.ask(s, lambda * lambda)? else { break };
            if st.upper <= best_phi(s) || k <= 0.0 {
                break;
            }
            // dF̄/dλ ∝ G − H/λ² at the answer: positive → the minimum is at a smaller λ.
            match interval.step(lambda, g * lambda * lambda <= big_h, (big_h, g)) {
                Some(next) => lambda = next,
                None => break,
            }
        }
        let upper = st.upper;
        Ok(Found::best_of(s, upper.is_finite().then_some(upper)))
    }
}
