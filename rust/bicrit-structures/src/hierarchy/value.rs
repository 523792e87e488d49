//! Objective values of the hierarchy oracles: plain `f64` for ordinary queries, and [`Lex`] pairs
//! (primary, secondary) ordered lexicographically for the λ ∈ {0, ∞} queries (docs/architecture.md,
//! Objects: λ = 0 and λ = ∞ are lexicographic queries). Lexicographic order is compatible with
//! addition, so dynamic programs and max-flow run unchanged on pairs.

use std::ops::{Add, Sub};

/// A totally ordered (for finite inputs) additive value.
pub trait Val:
    Copy + PartialOrd + PartialEq + Add<Output = Self> + Sub<Output = Self> + Send + Sync + std::fmt::Debug
{
    /// The additive identity.
    const ZERO: Self;
    /// +∞ (infinite capacities of the closure network).
    const INF: Self;
    /// Builds a value from the (primary, secondary) gains of a node.
    fn from_pair(primary: f64, secondary: f64) -> Self;
    /// Is the value finite?
    fn is_finite(self) -> bool;
}

impl Val for f64 {
    const ZERO: f64 = 0.0;
    const INF: f64 = f64::INFINITY;
    #[inline]
    fn from_pair(primary: f64, _secondary: f64) -> f64 {
        primary
    }
    #[inline]
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
}

/// (primary, secondary), compared lexicographically (the derived `PartialOrd` of a tuple struct).
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Lex(pub f64, pub f64);

impl Add for Lex {
    type Output = Lex;
    #[inline]
    fn add(self, o: Lex) -> Lex {
        Lex(self.0 + o.0, self.1 + o.1)
    }
}

impl Sub for Lex {
    type Output = Lex;
    #[inline]
    fn sub(self, o: Lex) -> Lex {
        // ∞ − finite stays (∞, ·); the secondary of an infinite value is irrelevant.
        if self.0.is_infinite() {
            return Lex(self.0, 0.0);
        }
        Lex(self.0 - o.0, self.1 - o.1)
    }
}

impl Val for Lex {
    const ZERO: Lex = Lex(0.0, 0.0);
    const INF: Lex = Lex(f64::INFINITY, 0.0);
    #[inline]
    fn from_pair(primary: f64, secondary: f64) -> Lex {
        Lex(primary, secondary)
    }
    #[inline]
    fn is_finite(self) -> bool {
        self.0.is_finite() && self.1.is_finite()
    }
}

/// The larger of two values (the first on ties).
#[inline]
pub fn vmax<V: Val>(a: V, b: V) -> V {
    if b > a {
        b
    } else {
        a
    }
}

/// The smaller of two values (the first on ties).
#[inline]
pub fn vmin<V: Val>(a: V, b: V) -> V {
    if b < a {
        b
    } else {
        a
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lex_order_and_arithmetic() {
        assert!(Lex(1.0, -5.0) > Lex(0.0, 9.0));
        assert!(Lex(1.0, 2.0) > Lex(1.0, 1.0));
        assert_eq!(Lex(1.0, 2.0) + Lex(0.5, -1.0), Lex(1.5, 1.0));
        assert!(Lex::INF - Lex(3.0, 4.0) > Lex(1e300, 0.0));
        assert!(Lex(0.0, 1e-300) > Lex::ZERO);
    }
}
