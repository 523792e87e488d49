//! Bi-criteria surrogate losses `max_y ψ(h(y), g(y))` (thesis §`sec:quasi_convex_surrogate`,
//! table `table:surrogate`; docs/architecture.md "Surrogates"). The family trait is [`Surrogate`]; each implementation
//! lives in its own module, and [`by_name`] builds one from its registry name and parameters.
//!
//! | name | ψ(h, g) | module |
//! |---|---|---|
//! | `margin` | h + g | [`margin`] |
//! | `slack` | (h + 1)·g | [`slack`] |
//! | `generalized` (α, β) | h·g^β + g^α, β ≥ 0, β ≤ α ≤ β + 1 | [`generalized`] |
//! | `beta` (β) | h·g^β + g, β ∈ [0, 1] | [`beta`] |
//! | `log` | g·log(1 + e^h) | [`log`] |
//! | `probloss` | 2g·Φ_N(h/σ), σ² = 2g/π | [`probloss`] |
//! | `probloss-convex` | ProbLoss for h ≤ 0, g + √g·h for h > 0 | [`probloss`] |
//! | `microf1` | h/(−g), Φ := 0 at g = 0 | [`microf1`] |

use bicrit_core::{Error, FactorMap, Result, Terms};

pub mod beta;
pub mod catalog;
pub mod generalized;
pub mod log;
pub mod margin;
pub mod microf1;
pub mod probloss;
pub mod slack;

pub use beta::BetaScaling;
pub use generalized::GeneralizedScaling;
pub use log::LogLoss;
pub use margin::MarginRescaling;
pub use microf1::MicroF1;
pub use probloss::{ProbLoss, ProbLossConvex};
pub use slack::SlackRescaling;

/// A bi-criteria function ψ with its factor functions.
///
/// ψ must be quasi-concave and increasing in both arguments on its super-level set of 0
/// (Definition `def:gbicriteria`); constructors refuse parameters outside that domain.
/// Outside the domain of the formula (e.g. g < 0 for g^β) `value` returns NaN, which the searches
/// turn into a clear error.
pub trait Surrogate: Send + Sync {
    /// Registry name (`margin`, `slack`, …).
    fn name(&self) -> &str;

    /// ψ(h, g).
    fn value(&self, h: f64, g: f64) -> f64;

    /// (∂ψ/∂h, ∂ψ/∂g) at (h, g).
    fn grad(&self, h: f64, g: f64) -> (f64, f64);

    /// The factor functions for one instance, given the gold label's own terms
    /// (loss 0, hamming 0, size |y_i|).
    fn factor_map(&self, gold: &Terms) -> FactorMap {
        let _ = gold;
        FactorMap::margin_loss()
    }

    /// `Some(s)` when ψ(h, g) = (h + s)·g exactly (slack rescaling, s = 1): the product form that
    /// the angular, bisecting, binary and Sarawagi–Gupta searches are derived for.
    fn product_shift(&self) -> Option<f64> {
        None
    }

    /// Whether ψ is affine in h for fixed g, so that the loss is a maximum of functions affine in
    /// w (margin, slack, β-/generalized scaling, Micro-F1): what BCFW and cutting plane need.
    fn affine_in_h(&self) -> bool {
        false
    }

    /// Whether ψ is convex (and non-decreasing) in h for fixed g, so that the loss is convex in
    /// w. ProbLoss is not: it saturates at 2g, its slope vanishes for large h, and SGD from w = 0
    /// can stall there (the estimators then warm up with margin rescaling).
    fn convex_in_h(&self) -> bool {
        true
    }

    /// The parameters the surrogate was built with, by name (empty for parameter-free ones).
    fn params(&self) -> Vec<(&'static str, f64)> {
        Vec::new()
    }

    /// The slope λ = ψ_g/ψ_h of the level curve's normal at (h, g), when the surrogate can
    /// compute it more accurately than the ratio of [`Surrogate::grad`] (both components
    /// underflow far in the tails of log loss and ProbLoss). `None`: use the gradient.
    fn tangent(&self, h: f64, g: f64) -> Option<f64> {
        let _ = (h, g);
        None
    }

    /// `Some(λ)` when ψ(h, g) = h + λ·g exactly (margin rescaling: λ = 1). ψ is then linear, so
    /// one call of the λ-oracle at this λ maximises ψ over every label and over their convex
    /// hull: the searches make that one call and no certificate call (docs/architecture.md,
    /// Searches). `None` (the default): ψ is not of this form, or the surrogate does not say.
    fn exact_lambda(&self) -> Option<f64> {
        None
    }

    /// ψ(h, g), or the error of a surrogate that can fail (a Python plugin raising). Searches
    /// call this form; native surrogates keep the default.
    fn try_value(&self, h: f64, g: f64) -> Result<f64> {
        Ok(self.value(h, g))
    }

    /// (∂ψ/∂h, ∂ψ/∂g), or the error of a surrogate that can fail. Searches call this form.
    fn try_grad(&self, h: f64, g: f64) -> Result<(f64, f64)> {
        Ok(self.grad(h, g))
    }
}

/// Registry names of the built-in surrogates, in the order of table `table:surrogate`.
pub const NAMES: [&str; 8] =
    ["margin", "slack", "generalized", "beta", "log", "probloss", "probloss-convex", "microf1"];

/// The parameter names each built-in surrogate accepts, with defaults (`None`: required).
pub fn parameters(name: &str) -> Result<&'static [(&'static str, Option<f64>)]> {
    Ok(match name {
        "margin" | "slack" | "log" | "probloss" | "probloss-convex" | "microf1" => &[],
        "generalized" => &[("alpha", None), ("beta", None)],
        "beta" => &[("beta", None)],
        _ => return Err(unknown(name)),
    })
}

pub(crate) fn unknown(name: &str) -> Error {
    Error::param(format!("unknown surrogate '{name}'; known surrogates: {}", NAMES.join(", ")))
}

/// Builds a built-in surrogate from its registry name and parameters. Unknown names and
/// parameters, missing or non-finite values and values outside the quasi-concave, increasing
/// domain are [`Error::InvalidParameter`] errors that name the parameter and the domain.
pub fn by_name(name: &str, params: &[(&str, f64)]) -> Result<Box<dyn Surrogate>> {
    let spec = parameters(name)?;
    for (key, value) in params {
        if !spec.iter().any(|(k, _)| k == key) {
            let known: Vec<&str> = spec.iter().map(|(k, _)| *k).collect();
            return Err(Error::param(format!(
                "surrogate '{name}' has no parameter '{key}' (its parameters: {})",
                if known.is_empty() { "none".to_string() } else { known.join(", ") }
            )));
        }
        if !value.is_finite() {
            return Err(Error::param(format!("surrogate '{name}': parameter {key} = {value} is not finite")));
        }
    }
    let get = |key: &str| -> Result<f64> {
        params
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
            .or_else(|| spec.iter().find(|(k, _)| *k == key).and_then(|(_, d)| *d))
            .ok_or_else(|| Error::param(format!("surrogate '{name}' needs parameter {key}")))
    };
    Ok(match name {
        "margin" => Box::new(MarginRescaling),
        "slack" => Box::new(SlackRescaling),
        "generalized" => Box::new(GeneralizedScaling::new(get("alpha")?, get("beta")?)?),
        "beta" => Box::new(BetaScaling::new(get("beta")?)?),
        "log" => Box::new(LogLoss),
        "probloss" => Box::new(ProbLoss),
        "probloss-convex" => Box::new(ProbLossConvex),
        "microf1" => Box::new(MicroF1),
        _ => return Err(unknown(name)),
    })
}

/// g^p for g ≥ 0 with 0^0 = 1; NaN for g < 0 (outside the domain of a power of a loss).
pub(crate) fn pow_loss(g: f64, p: f64) -> f64 {
    if g < 0.0 {
        f64::NAN
    } else {
        g.powf(p)
    }
}

/// d/dg g^p = p·g^(p−1) for g ≥ 0 (0 when p = 0; +∞ at g = 0 when 0 < p < 1); NaN for g < 0.
pub(crate) fn dpow_loss(g: f64, p: f64) -> f64 {
    if g < 0.0 {
        f64::NAN
    } else if p == 0.0 {
        0.0
    } else {
        p * g.powf(p - 1.0)
    }
}

#[cfg(test)]
pub(crate) mod testing {
    use super::Surrogate;

    /// Central finite differences of ψ against `grad` at (h, g).
    pub fn check_grad(s: &dyn Surrogate, h: f64, g: f64) {
        let step = 1e-6 * (1.0 + h.abs().max(g.abs()));
        let dh = (s.value(h + step, g) - s.value(h - step, g)) / (2.0 * step);
        let dg = (s.value(h, g + step) - s.value(h, g - step)) / (2.0 * step);
        let (gh, gg) = s.grad(h, g);
        let tol = |x: f64| 1e-5 * (1.0 + x.abs());
        assert!((dh - gh).abs() < tol(gh), "{} ∂h at ({h}, {g}): fd {dh} vs {gh}", s.name());
        assert!((dg - gg).abs() < tol(gg), "{} ∂g at ({h}, {g}): fd {dg} vs {gg}", s.name());
    }

    pub const POINTS: [(f64, f64); 8] =
        [(0.3, 1.0), (-0.4, 2.0), (1.5, 0.5), (-2.0, 3.0), (0.0, 1.0), (2.0, 4.0), (-0.9, 0.2), (0.7, 7.0)];
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn by_name_builds_every_builtin_and_refuses_the_rest() {
        for name in NAMES {
            let params: &[(&str, f64)] = match name {
                "generalized" => &[("alpha", 1.0), ("beta", 0.5)],
                "beta" => &[("beta", 0.5)],
                _ => &[],
            };
            let s = by_name(name, params).unwrap();
            assert_eq!(s.name(), name);
        }
        assert!(matches!(by_name("nope", &[]), Err(Error::InvalidParameter(_))));
        let e = by_name("margin", &[("beta", 1.0)]).err().unwrap().to_string();
        assert!(e.contains("no parameter 'beta'"), "{e}");
        let e = by_name("beta", &[]).err().unwrap().to_string();
        assert!(e.contains("needs parameter beta"), "{e}");
        let e = by_name("beta", &[("beta", f64::NAN)]).err().unwrap().to_string();
        assert!(e.contains("not finite"), "{e}");
    }

    #[test]
    fn gold_point_has_zero_value() {
        for name in NAMES {
            let params: &[(&str, f64)] = match name {
                "generalized" => &[("alpha", 0.75), ("beta", 0.5)],
                "beta" => &[("beta", 0.25)],
                _ => &[],
            };
            let s = by_name(name, params).unwrap();
            assert_eq!(s.value(0.0, 0.0), 0.0, "{name}");
        }
    }
}
