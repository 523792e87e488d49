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

use bicrit_surrogates::Surrogate;

use crate::convex_hull::{round, Access, HullPoint};
use crate::geometry::{max_on_segment, REL_TOL};
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
    deepen: usize,
    nonneg_g: bool,
) -> Result<Found<O::Label>> {
    let access = if how == Integral::KBest { Access::KBest } else { Access::Ban(deepen) };
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
        let fractional = matches!(r.point, HullPoint::Edge(..)) && r.value > best_int + tol;
        if fractional && nonneg_g && best_int >= 0.0 && s.top_phi <= best_int {
            // Stopping rule on the labels not seen yet: each lies in the polygon of the cuts, so
            // when ψ stays below the best label seen there (with a margin covering the
            // golden-section maximisation), that label is the integral maximum.
            if let Some(u) = unseen_bound(s.psi(), &s.cuts)? {
                if u < best_int - UNSEEN_MARGIN * (best_int.abs() + 1.0) {
                    bound = Some(best_int);
                    break;
                }
            }
        }
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

/// Relative margin of the unseen-label stopping rule (above the golden-section tolerance).
const UNSEEN_MARGIN: f64 = 1e-9;

/// The maximum of ψ over the polygon {g ≥ 0, h + λg ≤ K for every cut}, which holds every label
/// the searches have not seen (see [`Session`]'s cuts), or None when the polygon is unbounded in
/// a direction where ψ may grow. ψ is quasi-concave and increasing where it is at least the best
/// value seen (≥ 0): the maximum over the polygon is on its upper-right boundary, a concave chain
/// of segments (maximised by [`max_on_segment`], ψ unimodal on each) and, when no λ = ∞ cut
/// bounds g, a last ray on which ψ is unimodal: past a point where it decreases, it never
/// increases again.
pub(crate) fn unseen_bound(psi: &dyn Surrogate, cuts: &[(Lambda, f64)]) -> Result<Option<f64>> {
    let mut g_hi = f64::INFINITY;
    let mut lines: Vec<(f64, f64)> = Vec::new();
    for &(l, k) in cuts {
        if k == f64::NEG_INFINITY {
            return Ok(Some(f64::NEG_INFINITY)); // every label was banned or returned
        }
        match l {
            Lambda::Infinity => g_hi = g_hi.min(k),
            Lambda::Zero => lines.push((0.0, k)),
            Lambda::Finite(x) => lines.push((x, k)),
        }
    }
    if g_hi < 0.0 {
        return Ok(Some(f64::NEG_INFINITY));
    }
    if lines.is_empty() {
        return Ok(None);
    }
    let env = |g: f64| lines.iter().map(|&(l, k)| k - l * g).fold(f64::INFINITY, f64::min);
    let mut xs = vec![0.0];
    for (i, &(li, ki)) in lines.iter().enumerate() {
        for &(lj, kj) in &lines[..i] {
            if li != lj {
                let x = (ki - kj) / (li - lj);
                if x > 0.0 && x < g_hi {
                    xs.push(x);
                }
            }
        }
    }
    if g_hi.is_finite() {
        xs.push(g_hi);
    }
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    let mut best = psi.try_value(env(xs[0]), xs[0])?;
    for w in xs.windows(2) {
        let (_, v) = max_on_segment(psi, (env(w[0]), w[0]), (env(w[1]), w[1]))?;
        best = best.max(v);
    }
    if g_hi.is_infinite() {
        // the ray past the last breakpoint, along the cut of the smallest λ
        let l_min = lines.iter().map(|&(l, _)| l).fold(f64::INFINITY, f64::min);
        if l_min <= 0.0 {
            return Ok(None); // h bounded, g not: ψ may grow without bound
        }
        let g0 = xs[xs.len() - 1];
        let mut step = g0.max(1.0);
        let mut closed = false;
        for _ in 0..64 {
            let g1 = g0 + step;
            let (dh, dg) = psi.try_grad(env(g1), g1)?;
            if -l_min * dh + dg < 0.0 {
                let (_, v) = max_on_segment(psi, (env(g0), g0), (env(g1), g1))?;
                best = best.max(v);
                closed = true;
                break;
            }
            step *= 2.0;
        }
        if !closed {
            return Ok(None);
        }
    }
    Ok(Some(best))
}
