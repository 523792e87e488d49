//! Loss-scaled log loss ψ(h, g) = g·log(1 + e^h) (table `table:surrogate`), evaluated with a
//! numerically stable softplus.

use crate::Surrogate;

/// Loss-scaled log loss: ψ(h, g) = g·log(1 + e^h).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LogLoss;

/// log(1 + e^h) without overflow.
fn softplus(h: f64) -> f64 {
    h.max(0.0) + (-h.abs()).exp().ln_1p()
}

/// The logistic function 1 / (1 + e^−h) without overflow.
fn sigmoid(h: f64) -> f64 {
    if h >= 0.0 {
        1.0 / (1.0 + (-h).exp())
    } else {
        let e = h.exp();
        e / (1.0 + e)
    }
}

impl Surrogate for LogLoss {
    fn name(&self) -> &str {
        "log"
    }
    fn value(&self, h: f64, g: f64) -> f64 {
        if g < 0.0 {
            return f64::NAN;
        }
        g * softplus(h)
    }
    fn grad(&self, h: f64, g: f64) -> (f64, f64) {
        if g < 0.0 {
            return (f64::NAN, f64::NAN);
        }
        (g * sigmoid(h), softplus(h))
    }
    fn tangent(&self, h: f64, g: f64) -> Option<f64> {
        // ψ_g/ψ_h = softplus(h)/(g·σ(h)) = softplus(h)·(1 + e^−h)/g → 1/g as h → −∞.
        if g.is_nan() || g <= 0.0 {
            return None;
        }
        let r = if h < -30.0 { 1.0 + 0.5 * h.exp() } else { softplus(h) * (1.0 + (-h).exp()) };
        Some(r / g)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_grad, POINTS};

    #[test]
    fn value_and_gradient() {
        let s = LogLoss;
        assert!((s.value(0.0, 2.0) - 2.0 * 2f64.ln()).abs() < 1e-15);
        assert!((s.value(800.0, 1.0) - 800.0).abs() < 1e-9);
        assert!(s.value(-800.0, 1.0) >= 0.0);
        for (h, g) in POINTS {
            check_grad(&s, h, g);
            let (dh, dg) = s.grad(h, g);
            assert!((s.tangent(h, g).unwrap() - dg / dh).abs() < 1e-12 * (dg / dh).abs());
        }
        // Far in the tail the gradient underflows to (0, 0) but the tangent does not.
        assert_eq!(s.grad(-2000.0, 4.0), (0.0, 0.0));
        assert!((s.tangent(-2000.0, 4.0).unwrap() - 0.25).abs() < 1e-15);
    }
}
