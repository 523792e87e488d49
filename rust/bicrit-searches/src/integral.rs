//! Integral answers from the convex hull search (thesis §`sec:NER` and §Dependency Parsing;
//! docs/architecture.md "Searches").
//!
//! Ban-list loop: when the hull answer is fractional on the edge (a, b), ban a and b and search
//! again over the remaining labels (starting from the chain of the labels already known, minus
//! the banned ones; the gold label is banned from the answers but kept in the hull, as the floor
//! that keeps ψ quasi-concave and increasing where the search walks). Stop when the fractional optimum of the remaining labels is not above the
//! best integral label seen; return the best of *all* integral labels seen, banned ones
//! included. The fractional optimum bounds every remaining label, so the answer is exact.
//! k-best: the same loop, with the ban list emulated by asking for (banned) + 1 best labels.

use bicrit_core::{Lambda, LambdaOracle, Result};

use crate::convex_hull::{round, Access, HullPoint};
use crate::geometry::REL_TOL;
use crate::session::Session;
use crate::Found;

/// How convex hull search turns a fractional answer into an integral one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Integral {
    /// Keep the fractional answer (optimum over the convex hull).
    #[default]
    None,
    /// Ban-list loop.
    Ban,
    /// k-best loop.
    KBest,
}

/// Runs the recovery loop; the result is the exact integral optimum (certified upper bound).
pub(crate) fn recover<O: LambdaOracle>(
    s: &mut Session<'_, O>,
    how: Integral,
    first: Option<Lambda>,
) -> Result<Found<O::Label>> {
    let access = if how == Integral::KBest { Access::KBest } else { Access::Ban };
    let mut first = first;
    let mut bound: Option<f64>;
    loop {
        let mut r = round(s, &access, first.take())?;
        if !r.certified {
            bound = None; // budget exhausted: no certificate
            break;
        }
        let best_int = s.best().map_or(f64::NEG_INFINITY, |b| s.known[b].phi);
        let tol = REL_TOL * (best_int.abs() + r.value.abs() + f64::MIN_POSITIVE);
        // A round over the remaining labels that ends below the best integral value c was
        // certified at a point outside the super-level set {ψ ≥ c}, where ψ need not increase:
        // its line then proves nothing about {ψ > c} unless that set lies above it. When it may
        // not, search again with the (banned) gold label back in the hull — its Φ is the floor
        // that keeps the search where ψ is quasi-concave and increasing; the gold label stays
        // out of the oracle's answers, so the hull of more points only loosens the bound.
        if r.value < best_int - tol && !line_clears(s, r.line, best_int)? {
            if let Some(gi) = s.known.iter().position(|c| c.gold && c.banned) {
                (s.known[gi].banned, s.known[gi].ban_only_answers) = (false, true);
                let again = round(s, &access, None);
                (s.known[gi].banned, s.known[gi].ban_only_answers) = (true, false);
                r = again?;
                if !r.certified {
                    bound = None;
                    break;
                }
            }
        }
        let best_int = s.best().map_or(f64::NEG_INFINITY, |b| s.known[b].phi);
        bound = Some(r.value.max(best_int));
        let tol = REL_TOL * (best_int.abs() + r.value.abs() + f64::MIN_POSITIVE);
        match r.point {
            HullPoint::Edge(a, b, _) if r.value > best_int + tol => {
                s.known[a].banned = true;
                s.known[b].banned = true;
            }
            _ => break,
        }
    }
    Ok(Found::best_of(s, bound))
}

/// Whether {ψ > c} lies above the certificate line h + λg = K: ψ ≤ c along the line, sampled
/// from the known points outward over 1e-300 … 1e300 (both ways for finite λ), on the side of g
/// the labels live on. A sampled check: it only decides whether to search once more.
fn line_clears<O: LambdaOracle>(s: &Session<'_, O>, line: Option<(Lambda, f64)>, c: f64) -> Result<bool> {
    let Some((lambda, k)) = line else { return Ok(true) };
    let pts = || s.known.iter().map(|c| (c.h, c.g));
    let nonneg_g = pts().all(|p| p.1 >= 0.0);
    let nonpos_g = pts().all(|p| p.1 <= 0.0);
    let g_ref = pts().map(|p| p.1).fold(0.0f64, |a, b| a.max(b.abs()));
    let h_ref = pts().map(|p| p.0).fold(f64::NEG_INFINITY, f64::max);
    let above = |h: f64, g: f64| -> Result<bool> {
        if (nonneg_g && g < 0.0) || (nonpos_g && g > 0.0) {
            return Ok(false);
        }
        let v = s.psi().try_value(h, g)?;
        Ok(v > c + REL_TOL * (c.abs() + f64::MIN_POSITIVE))
    };
    let steps = (-1000..=1000).step_by(8).map(|j| 2f64.powi(j));
    for u in steps {
        let hits = match lambda {
            Lambda::Zero => above(k, g_ref.min(0.0) + u)? || (nonpos_g && above(k, -u)?),
            Lambda::Infinity => above(h_ref.max(0.0) + u, k)? || above(-u, k)?,
            Lambda::Finite(l) => above(k - l * u, u)? || above(k + l * u, -u)?,
        };
        if hits {
            return Ok(false);
        }
    }
    Ok(true)
}
