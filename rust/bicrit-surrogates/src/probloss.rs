//! ProbLoss ψ(h, g) = 2g·Φ_N(h/σ) with σ² = 2g/π (thesis §`sec:probloss`, eq. `Probloss`), and
//! its convex extension (g + √g·h for h > 0).
//!
//! σ² = 2g/π is a *variance*: the slope ∂ψ/∂h = √g·exp(−π h²/(4g)) is √g at h = 0 (1 for g = 1,
//! between margin rescaling's 1 and slack rescaling's g). ψ(·, 0) = 0, the limit as g → 0.
//! g is the Hamming loss; g < 0 is outside the domain (NaN).

use std::f64::consts::{FRAC_1_SQRT_2, PI};

use crate::Surrogate;

/// Standard normal CDF.
fn norm_cdf(u: f64) -> f64 {
    0.5 * libm::erfc(-u * FRAC_1_SQRT_2)
}

/// Standard normal density.
fn norm_pdf(u: f64) -> f64 {
    (-0.5 * u * u).exp() / (2.0 * PI).sqrt()
}

/// ProbLoss alone (one erfc; the searches evaluate ψ far more often than its gradient).
fn probloss_value(h: f64, g: f64) -> f64 {
    if g < 0.0 || g.is_nan() || h.is_nan() {
        return f64::NAN;
    }
    if g == 0.0 {
        return 0.0;
    }
    2.0 * g * norm_cdf(h / (2.0 * g / PI).sqrt())
}

/// ProbLoss and its gradient for h ≤ 0 or any h.
fn probloss(h: f64, g: f64) -> (f64, (f64, f64)) {
    if g < 0.0 || g.is_nan() || h.is_nan() {
        return (f64::NAN, (f64::NAN, f64::NAN));
    }
    if g == 0.0 {
        // Limits as g → 0+: ψ → 0, ∂ψ/∂h → 0, ∂ψ/∂g → 2·1[h > 0] + 1[h = 0].
        let dg = if h > 0.0 {
            2.0
        } else if h == 0.0 {
            1.0
        } else {
            0.0
        };
        return (0.0, (0.0, dg));
    }
    let sigma = (2.0 * g / PI).sqrt();
    let u = h / sigma;
    let cdf = norm_cdf(u);
    let value = 2.0 * g * cdf;
    // ∂ψ/∂h = 2g·φ(u)/σ = √g·exp(−π h²/(4g)); ∂ψ/∂g = 2Φ(u) − u·φ(u) (since ∂u/∂g = −u/(2g)).
    let dh = g.sqrt() * (-PI * h * h / (4.0 * g)).exp();
    let dg = 2.0 * cdf - u * norm_pdf(u);
    (value, (dh, dg))
}

/// Mills ratio Φ(u)/φ(u), by its continued fraction in the lower tail where both underflow.
fn mills(u: f64) -> f64 {
    if u > -5.0 {
        return norm_cdf(u) / norm_pdf(u);
    }
    // Φ(u)/φ(u) = 1/(x + 1/(x + 2/(x + 3/(x + …)))) with x = −u, evaluated backwards.
    let x = -u;
    let mut t = x;
    for k in (1..=60).rev() {
        t = x + k as f64 / t;
    }
    1.0 / t
}

/// ψ_g/ψ_h of ProbLoss: σ(2R(u) − u)/(2g) with u = h/σ and R the Mills ratio (both gradient
/// components underflow for u ≪ 0, their ratio does not).
fn probloss_tangent(h: f64, g: f64) -> Option<f64> {
    if g.is_nan() || g <= 0.0 || h.is_nan() {
        return None;
    }
    let sigma = (2.0 * g / PI).sqrt();
    let u = h / sigma;
    if u > 0.0 {
        return None;
    }
    Some(sigma * (2.0 * mills(u) - u) / (2.0 * g))
}

/// ProbLoss: ψ(h, g) = 2g·Φ_N(h/σ), σ² = 2g/π.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProbLoss;

impl Surrogate for ProbLoss {
    fn name(&self) -> &str {
        "probloss"
    }
    fn value(&self, h: f64, g: f64) -> f64 {
        probloss_value(h, g)
    }
    fn grad(&self, h: f64, g: f64) -> (f64, f64) {
        probloss(h, g).1
    }
    fn tangent(&self, h: f64, g: f64) -> Option<f64> {
        probloss_tangent(h, g)
    }
    fn convex_in_h(&self) -> bool {
        false // S-shaped in h: Φ_N is concave for h > 0
    }
}

/// ProbLoss's convex extension: ProbLoss for h ≤ 0, its tangent g + √g·h for h > 0 (continuous
/// with a continuous slope √g at h = 0).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ProbLossConvex;

impl Surrogate for ProbLossConvex {
    fn name(&self) -> &str {
        "probloss-convex"
    }
    fn value(&self, h: f64, g: f64) -> f64 {
        if h <= 0.0 || g < 0.0 || g.is_nan() {
            probloss_value(h, g)
        } else {
            g + g.sqrt() * h
        }
    }
    fn grad(&self, h: f64, g: f64) -> (f64, f64) {
        if h <= 0.0 || g < 0.0 || g.is_nan() {
            probloss(h, g).1
        } else if g == 0.0 {
            (0.0, f64::INFINITY)
        } else {
            let r = g.sqrt();
            (r, 1.0 + h / (2.0 * r))
        }
    }
    fn tangent(&self, h: f64, g: f64) -> Option<f64> {
        if h <= 0.0 {
            probloss_tangent(h, g)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{check_grad, POINTS};

    #[test]
    fn slope_at_zero_is_sqrt_g() {
        for g in [0.25, 1.0, 4.0, 9.0] {
            assert!((ProbLoss.grad(0.0, g).0 - g.sqrt()).abs() < 1e-14);
            assert!((ProbLoss.value(0.0, g) - g).abs() < 1e-14);
        }
        assert_eq!(ProbLoss.value(-3.0, 0.0), 0.0);
        assert!(ProbLoss.value(1.0, -1.0).is_nan());
    }

    #[test]
    fn value_alone_is_the_value_of_value_and_gradient() {
        let mut pts: Vec<(f64, f64)> = POINTS.to_vec();
        pts.extend([(-40.0, 0.5), (1e-300, 1e-300), (3.0, 0.0), (-3.0, 0.0), (0.0, 1e9), (f64::NAN, 1.0)]);
        for (h, g) in pts {
            let (a, b) = (probloss_value(h, g), probloss(h, g).0);
            assert!(a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()), "({h}, {g}): {a} vs {b}");
        }
    }

    #[test]
    fn gradients_match_finite_differences() {
        for (h, g) in POINTS {
            check_grad(&ProbLoss, h, g);
            if h.abs() > 1e-3 {
                check_grad(&ProbLossConvex, h, g);
            }
        }
    }

    #[test]
    fn tangent_matches_gradient_ratio_and_survives_the_tail() {
        for (h, g) in [(-1.0, 1.0), (-3.0, 2.0), (-0.1, 5.0), (-6.0, 1.5)] {
            let (dh, dg) = ProbLoss.grad(h, g);
            let t = ProbLoss.tangent(h, g).unwrap();
            assert!((t - dg / dh).abs() < 1e-9 * (dg / dh).abs(), "({h}, {g}): {t} vs {}", dg / dh);
        }
        let t = ProbLoss.tangent(-1e4, 1.0).unwrap();
        assert!(t.is_finite() && t > 0.0);
        assert_eq!(ProbLoss.grad(-1e4, 1.0).0, 0.0);
    }

    #[test]
    fn convex_extension_is_c1_at_zero() {
        for g in [0.5, 1.0, 3.0] {
            let e = 1e-9;
            let (l, r) = (ProbLossConvex.value(-e, g), ProbLossConvex.value(e, g));
            assert!((l - r).abs() < 1e-8);
            let (dl, dr) = (ProbLossConvex.grad(-e, g), ProbLossConvex.grad(e, g));
            assert!((dl.0 - dr.0).abs() < 1e-7 && (dl.1 - dr.1).abs() < 1e-7, "{dl:?} {dr:?}");
        }
    }
}
