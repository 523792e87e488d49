//! Margin rescaling ψ(h, g) = h + g with h = m, g = L (thesis eq. `mr_loss`, table
//! `table:surrogate`).

use crate::Surrogate;

/// Margin rescaling: ψ(h, g) = h + g.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct MarginRescaling;

impl Surrogate for MarginRescaling {
    fn name(&self) -> &str {
        "margin"
    }
    fn value(&self, h: f64, g: f64) -> f64 {
        h + g
    }
    fn grad(&self, _h: f64, _g: f64) -> (f64, f64) {
        (1.0, 1.0)
    }
    fn affine_in_h(&self) -> bool {
        true
    }
    fn exact_lambda(&self) -> Option<f64> {
        Some(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_grad, POINTS};

    #[test]
    fn value_and_gradient() {
        let s = MarginRescaling;
        assert_eq!(s.value(-10.0, 100.0), 90.0); // the thesis's y_1 example
        assert_eq!(s.exact_lambda(), Some(1.0));
        for (h, g) in POINTS {
            check_grad(&s, h, g);
        }
    }
}
