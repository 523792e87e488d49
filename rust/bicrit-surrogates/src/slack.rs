//! Slack rescaling ψ(h, g) = (h + 1)·g with h = m, g = L (thesis eq. `sr_loss`). Chapter
//! `cha:inference` writes h = 1 + m and ψ = h·g: the product form, [`Surrogate::product_shift`]
//! = 1, on which the angular, bisecting, binary and Sarawagi–Gupta searches work.

use crate::Surrogate;

/// Slack rescaling: ψ(h, g) = (h + 1)·g.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SlackRescaling;

impl Surrogate for SlackRescaling {
    fn name(&self) -> &str {
        "slack"
    }
    fn value(&self, h: f64, g: f64) -> f64 {
        (h + 1.0) * g
    }
    fn grad(&self, h: f64, g: f64) -> (f64, f64) {
        (g, h + 1.0)
    }
    fn product_shift(&self) -> Option<f64> {
        Some(1.0)
    }
    fn affine_in_h(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_grad, POINTS};

    #[test]
    fn value_and_gradient() {
        let s = SlackRescaling;
        assert_eq!(s.value(-10.0, 100.0), -900.0); // the thesis's y_1 example
        assert_eq!(s.value(1.0, 2.0), 4.0); // and y_2
        for (h, g) in POINTS {
            check_grad(&s, h, g);
        }
    }
}
