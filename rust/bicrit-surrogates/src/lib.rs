//! Bi-criteria surrogate losses `max_y ψ(h(y), g(y))` (thesis §`sec:quasi_convex_surrogate`,
//! table `table:surrogate`; DESIGN §2). The family trait is [`Surrogate`]; each implementation
//! lives in its own module.

use bicrit_core::{FactorMap, Terms};

/// A bi-criteria function ψ with its factor functions.
///
/// ψ must be quasi-concave and increasing in both arguments on its super-level set of 0
/// (Definition `def:gbicriteria`); constructors refuse parameters outside that domain.
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
}
