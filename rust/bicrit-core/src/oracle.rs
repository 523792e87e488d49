//! The λ-oracle protocol in the (h, g) plane (thesis eq. `lambda_oracle`;
//! docs/architecture.md, Objects).
//!
//! A search sees every label as the point (h(y), g(y)) in its surrogate's factor coordinates and
//! reveals points only by asking an oracle for `argmax_y h(y) + λ g(y)`. λ = 0 and λ = ∞ are
//! lexicographic queries (largest h then largest g; largest g then largest h), never tiny or huge
//! floats. Stronger, optional queries: a ban list (argmax excluding labels), k-best, the
//! constrained λ-oracle `O_c(λ, α, β)` whose cone restricts slopes in (1 + m, L) coordinates
//! (thesis eq. `constrained_oracle`), and the frontier by loss value (the best h for every
//! attainable g, [`LambdaOracle::frontier`]).

use crate::error::Result;

/// The weight λ ≥ 0 of g in a λ-oracle query.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lambda {
    /// Largest h, ties broken by largest g.
    Zero,
    /// argmax h + λ g for a finite λ > 0 (ties broken by the oracle, deterministically).
    Finite(f64),
    /// Largest g, ties broken by largest h.
    Infinity,
}

impl Lambda {
    /// Normalises a float: 0 becomes [`Lambda::Zero`], +∞ becomes [`Lambda::Infinity`].
    /// Negative or NaN values are the caller's bug and map to `None`.
    pub fn from_f64(lam: f64) -> Option<Self> {
        if lam.is_nan() || lam < 0.0 {
            None
        } else if lam == 0.0 {
            Some(Lambda::Zero)
        } else if lam.is_infinite() {
            Some(Lambda::Infinity)
        } else {
            Some(Lambda::Finite(lam))
        }
    }

    /// The value as a float (0, λ or +∞).
    pub fn as_f64(self) -> f64 {
        match self {
            Lambda::Zero => 0.0,
            Lambda::Finite(l) => l,
            Lambda::Infinity => f64::INFINITY,
        }
    }
}

/// A slope interval for the constrained λ-oracle, in the coordinates (H, G) = (1 + m, L) of slack
/// rescaling: labels with `lo·H ≤ G` (strict when `!lo_closed`) and `G ≤ hi·H` (strict when
/// `!hi_closed`). `hi = +∞` drops the upper constraint. Thesis eq. `constrained_oracle` writes
/// `β h ≤ g < α h` with (β, α) = (lo, hi).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Cone {
    /// Lower slope β (≥ 0).
    pub lo: f64,
    /// Whether the lower end is included.
    pub lo_closed: bool,
    /// Upper slope α (may be +∞).
    pub hi: f64,
    /// Whether the upper end is included.
    pub hi_closed: bool,
}

impl Cone {
    /// Does the point (H, G) = (1 + m, L) satisfy both constraints (exactly, no tolerance)?
    pub fn contains(&self, big_h: f64, g: f64) -> bool {
        let lo_ok = if self.lo_closed { self.lo * big_h <= g } else { self.lo * big_h < g };
        let hi_ok = if self.hi.is_infinite() {
            true
        } else if self.hi_closed {
            g <= self.hi * big_h
        } else {
            g < self.hi * big_h
        };
        lo_ok && hi_ok
    }
}

/// One λ-oracle query in the plane.
#[derive(Clone, Debug)]
pub struct PlaneQuery<'a, L> {
    /// Weight of g.
    pub lambda: Lambda,
    /// Labels the answer must not contain (needs [`Capabilities::ban`] when non-empty).
    pub ban: &'a [L],
    /// Number of best labels wanted, best first (needs [`Capabilities::kbest`] when > 1).
    pub k: usize,
    /// Slope restriction (needs [`Capabilities::cone`]).
    pub cone: Option<Cone>,
}

impl<'a, L> PlaneQuery<'a, L> {
    /// A plain λ-oracle query: one label, no ban list, no cone.
    pub fn lambda(lambda: Lambda) -> Self {
        PlaneQuery { lambda, ban: &[], k: 1, cone: None }
    }
}

/// A label revealed by an oracle together with its coordinates in the plane.
#[derive(Clone, Debug, PartialEq)]
pub struct Point<L> {
    /// The label (opaque to searches).
    pub label: L,
    /// First factor h(y).
    pub h: f64,
    /// Second factor g(y).
    pub g: f64,
}

/// Which optional queries an oracle answers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Capabilities {
    /// Ban lists (argmax over labels not in a list).
    pub ban: bool,
    /// k-best answers.
    pub kbest: bool,
    /// The constrained λ-oracle (a cone of slopes).
    pub cone: bool,
    /// Answers may be fractional (an LP relaxation): points may lie off the integral label set.
    pub relaxed: bool,
    /// The frontier by loss value: for every attainable g, a label of largest h
    /// ([`LambdaOracle::frontier`]). A structure declares it when it can compute it exactly for
    /// the factor maps whose g depends on the task loss alone (h = m, g = L and rescalings).
    pub frontier: bool,
}

impl Capabilities {
    /// Every query (what `check` functions assume when no oracle is at hand).
    pub fn all() -> Self {
        Capabilities { ban: true, kbest: true, cone: true, relaxed: true, frontier: true }
    }
}

/// A λ-oracle over labels seen as points of the (h, g) plane.
///
/// `query` returns up to `k` answers, best first under the query's (lexicographic for λ ∈ {0, ∞})
/// order, honouring the ban list and the cone; an empty vector means no label satisfies them.
/// Asking for an undeclared capability is an [`crate::Error::Unsupported`] error.
pub trait LambdaOracle {
    /// The label type (opaque to searches; compared only by the oracle itself).
    type Label: Clone;

    /// The optional queries this oracle answers.
    fn capabilities(&self) -> Capabilities;

    /// Answers one query.
    fn query(&mut self, q: &PlaneQuery<'_, Self::Label>) -> Result<Vec<Point<Self::Label>>>;

    /// The gold label y_i as a point, when the oracle knows it. Its Φ is the floor of every search:
    /// a search whose best point is not above it returns the gold label (zero loss).
    fn gold(&self) -> Option<Point<Self::Label>>;

    /// An upper bound on g(y) over every label of the instance, when the oracle knows one
    /// (g = L and a task loss L bounded by the number of parts: a chain's token Hamming loss is
    /// at most its length). A search then certifies a best point whose g reaches the bound at
    /// λ = ∞ without a call: no label has a larger g. `None` (the default): no bound known.
    fn g_bound(&self) -> Option<f64> {
        None
    }

    /// A lower bound on g(y) over every label the oracle may return other than the gold label,
    /// when the oracle knows one above g(gold) (g = L and an integral task loss that is zero at
    /// the gold label only: a chain's token Hamming loss is at least 1 elsewhere). A search then
    /// certifies, without a call, a query whose λ is below an earlier query's: the plane
    /// h + λ′g ≤ K of the earlier answer gives h + λg ≤ K − (λ′ − λ)·floor on those labels.
    /// `None` (the default): no floor known.
    fn g_floor(&self) -> Option<f64> {
        None
    }

    /// The current coordinates (h, g) of labels known from earlier (a label cache or the
    /// previous epoch's hull vertices: the warm start of thesis §`sec:convex_hull_search`),
    /// appended to `out` in the order of `labels` — computed directly, not an oracle query; the
    /// labels stay with the caller. `Ok(false)` (the default) means the oracle cannot, and
    /// searches then warm-start from the previous λ only.
    fn evaluate(&mut self, labels: &[Self::Label], out: &mut Vec<(f64, f64)>) -> Result<bool> {
        let _ = (labels, out);
        Ok(false)
    }

    /// The frontier by loss value (needs [`Capabilities::frontier`]): for every attainable value
    /// c of g, one label of largest h among the labels with g = c, as a point; g values distinct,
    /// in any order. Every label is then dominated (same g, h not larger) by a returned point, so
    /// for a ψ non-decreasing in h the integral optimum max_y ψ(h(y), g(y)) is the best returned
    /// point (the `frontier` search). One call: an oracle computes it in one pass (a DP over
    /// (position, state, loss count) on chains). The default refuses with
    /// [`crate::Error::Unsupported`].
    fn frontier(&mut self) -> Result<Vec<Point<Self::Label>>> {
        Err(crate::Error::unsupported("this oracle has no frontier query (best h for every loss value)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lambda_normalisation() {
        assert_eq!(Lambda::from_f64(0.0), Some(Lambda::Zero));
        assert_eq!(Lambda::from_f64(f64::INFINITY), Some(Lambda::Infinity));
        assert_eq!(Lambda::from_f64(2.0), Some(Lambda::Finite(2.0)));
        assert_eq!(Lambda::from_f64(-1.0), None);
        assert_eq!(Lambda::from_f64(f64::NAN), None);
    }

    #[test]
    fn cone_open_and_closed_ends() {
        let c = Cone { lo: 1.0, lo_closed: true, hi: 2.0, hi_closed: false };
        assert!(c.contains(1.0, 1.0));
        assert!(!c.contains(1.0, 2.0));
        assert!(c.contains(1.0, 1.999));
        let open = Cone { lo_closed: false, ..c };
        assert!(!open.contains(1.0, 1.0));
        let up = Cone { lo: 0.0, lo_closed: true, hi: f64::INFINITY, hi_closed: false };
        assert!(up.contains(1.0, 1e300));
    }
}
