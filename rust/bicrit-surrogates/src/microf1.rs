//! The Micro-F1 surrogate ψ(h, g) = h/(−g) with h = H + m and g = −(|y| + |y_i|)
//! (thesis §`sec:microf1`): max_y (H(y, y_i) + m(y)) / (|y| + |y_i|), an upper bound of
//! 1 − F1 that is tight at m = 0. H is the Hamming distance between indicator sets.
//!
//! g ≤ 0 always; g = 0 only when |y| = |y_i| = 0, where per-instance F1 is 1 and Φ := 0.
//! Positive g is outside the surrogate's domain (NaN, which the searches refuse).

use bicrit_core::{FactorMap, Terms};

use crate::Surrogate;

/// The Micro-F1 surrogate.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MicroF1;

impl Surrogate for MicroF1 {
    fn name(&self) -> &str {
        "microf1"
    }
    fn value(&self, h: f64, g: f64) -> f64 {
        if g > 0.0 {
            f64::NAN
        } else if g == 0.0 {
            0.0
        } else {
            h / -g
        }
    }
    fn grad(&self, h: f64, g: f64) -> (f64, f64) {
        if g > 0.0 {
            (f64::NAN, f64::NAN)
        } else if g == 0.0 {
            // Not differentiable at |y| = |y_i| = 0; the level curve Φ = 0 through (0, 0) is
            // the vertical line h = 0 (points with Φ > 0 have h > 0), so its normal (1, 0).
            (1.0, 0.0)
        } else {
            (-1.0 / g, h / (g * g))
        }
    }
    fn factor_map(&self, gold: &Terms) -> FactorMap {
        FactorMap::micro_f1(gold.size)
    }
    fn affine_in_h(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::check_grad;

    #[test]
    fn value_matches_one_minus_f1_at_zero_margin() {
        // y = {1, 2}, y_i = {2, 3}: |y ∩ y_i| = 1, F1 = 2/4, H = 2, g = −4.
        let s = MicroF1;
        assert_eq!(s.value(2.0, -4.0), 1.0 - 0.5);
        assert_eq!(s.value(0.0, 0.0), 0.0);
        assert!(s.value(1.0, 1.0).is_nan());
        for (h, g) in [(0.5, -2.0), (-1.0, -3.0), (3.0, -7.0)] {
            check_grad(&s, h, g);
        }
        let f = s.factor_map(&Terms { loss: 0.0, size: 3.0, hamming: 0.0 });
        assert_eq!(f, FactorMap::micro_f1(3.0));
    }
}
