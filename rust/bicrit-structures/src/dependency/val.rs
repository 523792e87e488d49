//! Arc and tree values compared lexicographically.
//!
//! Every decoder of the `dependency` structure maximises a *sum* of per-arc values. To answer the
//! lexicographic queries λ ∈ {0, ∞} exactly (docs/architecture.md, Objects), a value is a pair
//! (primary, secondary) compared lexicographically; pairs under componentwise addition form a totally
//! ordered abelian group, so Eisner's dynamic program and Chu–Liu–Edmonds (which also subtracts)
//! stay exact on them. A third, leading integer component `root` counts root attachments negatively:
//! Chu–Liu–Edmonds maximises (−#root children, primary, secondary), which is the best single-root
//! tree whenever one exists (see `cle.rs`). Eisner enforces the single root structurally and keeps
//! `root = 0`.

use std::cmp::Ordering;
use std::ops::{Add, Sub};

/// A lexicographic value (root, primary, secondary). Floats are compared with `partial_cmp`, so
/// `-0.0 == 0.0` (a total order that separated them would make a zero-coefficient term decide
/// ties); values are always finite (checked when arc tables are built).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Val {
    /// Minus the number of root attachments (Chu–Liu–Edmonds only; 0 elsewhere).
    pub root: i32,
    /// Primary objective.
    pub p: f64,
    /// Secondary (tie-breaking) objective; 0 when the query has none.
    pub s: f64,
}

impl Val {
    /// The neutral value.
    pub const ZERO: Val = Val { root: 0, p: 0.0, s: 0.0 };

    /// A value with primary `p` and secondary `s`.
    pub fn new(p: f64, s: f64) -> Self {
        Val { root: 0, p, s }
    }

    /// Lexicographic comparison on (root, p, s).
    #[inline]
    pub fn lex_cmp(&self, other: &Val) -> Ordering {
        self.root
            .cmp(&other.root)
            .then_with(|| self.p.partial_cmp(&other.p).unwrap_or(Ordering::Equal))
            .then_with(|| self.s.partial_cmp(&other.s).unwrap_or(Ordering::Equal))
    }

    /// Strictly greater under [`Val::lex_cmp`].
    #[inline]
    pub fn gt(&self, other: &Val) -> bool {
        if self.root != other.root {
            self.root > other.root
        } else if self.p != other.p {
            self.p > other.p
        } else {
            self.s > other.s
        }
    }

    /// Are both float components finite?
    pub fn is_finite(&self) -> bool {
        self.p.is_finite() && self.s.is_finite()
    }
}

impl Add for Val {
    type Output = Val;
    #[inline]
    fn add(self, o: Val) -> Val {
        Val { root: self.root + o.root, p: self.p + o.p, s: self.s + o.s }
    }
}

impl Sub for Val {
    type Output = Val;
    #[inline]
    fn sub(self, o: Val) -> Val {
        Val { root: self.root - o.root, p: self.p - o.p, s: self.s - o.s }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexicographic_order_ignores_signed_zero() {
        let a = Val::new(-0.0, 1.0);
        let b = Val::new(0.0, 0.5);
        assert!(a.gt(&b));
        assert!(Val { root: 0, p: -5.0, s: 0.0 }.gt(&Val { root: -1, p: 9.0, s: 9.0 }));
        assert_eq!((a + b).s, 1.5);
        assert_eq!((a - b).s, 0.5);
    }
}
