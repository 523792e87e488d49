//! Integral answers from the convex hull search (thesis §`sec:NER` and §Dependency Parsing;
//! DESIGN §3 "Exact integral answers from the hull").
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
        let r = round(s, &access, first.take())?;
        let best_int = s.best().map_or(f64::NEG_INFINITY, |b| s.known[b].phi);
        if !r.certified {
            bound = None; // budget exhausted: no certificate
            break;
        }
        bound = Some(r.value.max(best_int));
        let tol = REL_TOL * (best_int.abs() + r.value.abs() + f64::MIN_POSITIVE);
        match r.point {
            HullPoint::Edge(a, b, _) if r.value > best_int + tol => {
                for i in [a, b] {
                    // The gold label leaves the oracle's answers but stays in the hull: without
                    // its floor Φ = 0 the next round could start where ψ decreases in g. The
                    // bound stays valid (a hull of more points), and each round still bans a
                    // new label.
                    if s.known[i].gold {
                        s.known[i].ban_only_answers = true;
                    } else {
                        s.known[i].banned = true;
                    }
                }
            }
            _ => break,
        }
    }
    Ok(Found::best_of(s, bound))
}
