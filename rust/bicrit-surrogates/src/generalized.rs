//! Generalized scaling ψ(h, g) = h·g^β + g^α (table `table:surrogate`).
//!
//! Admissible domain (quasi-concave and increasing on the super-level set of 0): β ≥ 0 and
//! β ≤ α ≤ β + 1. The thesis prints the condition with α and β swapped ("α ≤ −1 or α ≥ 0,
//! 0 ≤ β − α ≤ 1"), which would exclude margin rescaling (α = 1, β = 0) itself; the corrected
//! form used here is the one under which margin and slack rescaling are both admissible. Margin rescaling is α = 1, β = 0 and slack rescaling α = β = 1.

use bicrit_core::{Error, Result};

use crate::{dpow_loss, pow_loss, Surrogate};

/// Generalized scaling with parameters α and β.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GeneralizedScaling {
    alpha: f64,
    beta: f64,
}

impl GeneralizedScaling {
    /// Checks β ≥ 0 and β ≤ α ≤ β + 1.
    pub fn new(alpha: f64, beta: f64) -> Result<Self> {
        if !alpha.is_finite() || !beta.is_finite() {
            return Err(Error::param(format!(
                "generalized scaling: alpha = {alpha} and beta = {beta} must be finite"
            )));
        }
        if beta < 0.0 {
            return Err(Error::param(format!(
                "generalized scaling: beta = {beta} is outside its domain beta >= 0 \
                 (the surrogate is quasi-concave and increasing for beta >= 0 and beta <= alpha <= beta + 1)"
            )));
        }
        if alpha < beta || alpha > beta + 1.0 {
            return Err(Error::param(format!(
                "generalized scaling: alpha = {alpha} is outside its domain beta <= alpha <= beta + 1 \
                 (here [{beta}, {}]); the thesis prints this condition with alpha and beta swapped",
                beta + 1.0
            )));
        }
        Ok(GeneralizedScaling { alpha, beta })
    }

    /// α.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// β.
    pub fn beta(&self) -> f64 {
        self.beta
    }
}

impl Surrogate for GeneralizedScaling {
    fn name(&self) -> &str {
        "generalized"
    }
    fn value(&self, h: f64, g: f64) -> f64 {
        // 0^α = 0 for α > 0 keeps the gold label (0, 0) at Φ = 0; with α = β = 0, ψ = h + 1.
        h * pow_loss(g, self.beta) + pow_loss(g, self.alpha)
    }
    fn grad(&self, h: f64, g: f64) -> (f64, f64) {
        let dg = if h == 0.0 { 0.0 } else { h * dpow_loss(g, self.beta) };
        (pow_loss(g, self.beta), dg + dpow_loss(g, self.alpha))
    }
    fn product_shift(&self) -> Option<f64> {
        // α = β = 1 is slack rescaling exactly.
        (self.alpha == 1.0 && self.beta == 1.0).then_some(1.0)
    }
    fn affine_in_h(&self) -> bool {
        true
    }
    fn params(&self) -> Vec<(&'static str, f64)> {
        vec![("alpha", self.alpha), ("beta", self.beta)]
    }
    fn exact_lambda(&self) -> Option<f64> {
        // α = 1, β = 0: ψ = h + g, margin rescaling
        (self.alpha == 1.0 && self.beta == 0.0).then_some(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_grad, POINTS};

    #[test]
    fn domain() {
        assert!(GeneralizedScaling::new(1.0, 0.0).is_ok()); // margin
        assert!(GeneralizedScaling::new(1.0, 1.0).is_ok()); // slack
        assert!(GeneralizedScaling::new(1.5, 0.5).is_ok());
        let e = GeneralizedScaling::new(0.5, 1.0).unwrap_err().to_string();
        assert!(e.contains("alpha = 0.5") && e.contains("beta <= alpha <= beta + 1"), "{e}");
        assert!(GeneralizedScaling::new(2.5, 1.0).is_err());
        let e = GeneralizedScaling::new(0.0, -0.5).unwrap_err().to_string();
        assert!(e.contains("beta = -0.5") && e.contains("beta >= 0"), "{e}");
    }

    #[test]
    fn value_and_gradient() {
        let s = GeneralizedScaling::new(1.25, 0.5).unwrap();
        assert!((s.value(2.0, 4.0) - (2.0 * 2.0 + 4f64.powf(1.25))).abs() < 1e-12);
        for (h, g) in POINTS {
            check_grad(&s, h, g);
        }
        let slack = GeneralizedScaling::new(1.0, 1.0).unwrap();
        assert_eq!(slack.product_shift(), Some(1.0));
        assert_eq!(slack.value(0.5, 2.0), 3.0);
        assert!(s.value(1.0, -1.0).is_nan());
    }
}
