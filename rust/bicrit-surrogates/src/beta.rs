//! β-scaling ψ(h, g) = h·g^β + g with β ∈ [0, 1] (table `table:surrogate`): β = 0 is margin
//! rescaling, β = 1 slack rescaling; the thesis uses β ∈ {1/4, 1/2, 3/4} on multi-label data.

use bicrit_core::{Error, Result};

use crate::{dpow_loss, pow_loss, Surrogate};

/// β-scaling with parameter β ∈ [0, 1].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BetaScaling {
    beta: f64,
}

impl BetaScaling {
    /// Checks β ∈ [0, 1].
    pub fn new(beta: f64) -> Result<Self> {
        if !(0.0..=1.0).contains(&beta) {
            return Err(Error::param(format!(
                "beta-scaling: beta = {beta} is outside its domain [0, 1] \
                 (where the surrogate is quasi-concave and increasing)"
            )));
        }
        Ok(BetaScaling { beta })
    }

    /// β.
    pub fn beta(&self) -> f64 {
        self.beta
    }
}

impl Surrogate for BetaScaling {
    fn name(&self) -> &str {
        "beta"
    }
    fn value(&self, h: f64, g: f64) -> f64 {
        h * pow_loss(g, self.beta) + if g < 0.0 { f64::NAN } else { g }
    }
    fn grad(&self, h: f64, g: f64) -> (f64, f64) {
        let dg = if h == 0.0 { 0.0 } else { h * dpow_loss(g, self.beta) };
        (pow_loss(g, self.beta), dg + if g < 0.0 { f64::NAN } else { 1.0 })
    }
    fn product_shift(&self) -> Option<f64> {
        (self.beta == 1.0).then_some(1.0)
    }
    fn affine_in_h(&self) -> bool {
        true
    }
    fn params(&self) -> Vec<(&'static str, f64)> {
        vec![("beta", self.beta)]
    }
    fn exact_lambda(&self) -> Option<f64> {
        // β = 0: ψ = h + g, margin rescaling
        (self.beta == 0.0).then_some(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_grad, POINTS};

    #[test]
    fn domain_and_values() {
        assert!(BetaScaling::new(-0.1).is_err());
        let e = BetaScaling::new(1.5).unwrap_err().to_string();
        assert!(e.contains("beta = 1.5") && e.contains("[0, 1]"), "{e}");
        assert!(BetaScaling::new(f64::NAN).is_err());
        let s = BetaScaling::new(0.5).unwrap();
        assert!((s.value(3.0, 4.0) - (3.0 * 2.0 + 4.0)).abs() < 1e-12);
        for (h, g) in POINTS {
            check_grad(&s, h, g);
        }
        assert_eq!(BetaScaling::new(0.0).unwrap().value(0.5, 2.0), 2.5); // margin
        assert_eq!(BetaScaling::new(1.0).unwrap().value(0.5, 2.0), 3.0); // slack
        assert_eq!(BetaScaling::new(1.0).unwrap().product_shift(), Some(1.0));
        assert_eq!(s.product_shift(), None);
    }
}
