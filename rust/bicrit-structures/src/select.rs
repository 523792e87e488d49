//! Selecting answers among enumerated candidates: the reference semantics of a [`TermQuery`]
//! (ban list, cone, k-best, lexicographic tie-break). Enumeration oracles use it directly; the
//! dynamic programs must agree with it (their tests compare against it).

use std::cmp::Ordering;

use bicrit_core::Objective;

use crate::{Scored, TermQuery};

/// Key of a candidate under a query: primary value, then secondary value (when asked).
fn key(primary: &Objective, secondary: Option<&Objective>, s: &Scored<impl Sized>) -> (f64, f64) {
    let a = primary.value(s.margin, &s.terms);
    let b = secondary.map_or(0.0, |o| o.value(s.margin, &s.terms));
    (a, b)
}

/// Does the candidate satisfy the cone of the query, in (1 + m, loss) coordinates?
pub fn in_cone<L>(q: &TermQuery<'_, L>, s: &Scored<impl Sized>) -> bool {
    q.cone.is_none_or(|c| c.contains(1.0 + s.margin, s.terms.loss))
}

/// The `q.k` best candidates under `q` (best first), skipping banned labels and labels outside
/// the cone. Ties beyond the secondary objective keep the enumeration order (stable sort), so the
/// answer is deterministic.
pub fn select_best<L: PartialEq + Clone>(q: &TermQuery<'_, L>, candidates: Vec<Scored<L>>) -> Vec<Scored<L>> {
    let mut kept: Vec<((f64, f64), Scored<L>)> = candidates
        .into_iter()
        .filter(|s| !q.ban.contains(&s.label) && in_cone(q, s))
        .map(|s| (key(&q.primary, q.secondary.as_ref(), &s), s))
        .collect();
    kept.sort_by(|(a, _), (b, _)| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(Ordering::Equal)
            .then(b.1.partial_cmp(&a.1).unwrap_or(Ordering::Equal))
    });
    kept.into_iter().take(q.k.max(1)).map(|(_, s)| s).collect()
}

/// The frontier by loss value among enumerated candidates: for every distinct `terms.loss`, the
/// first candidate of largest `objective` value (the reference semantics of
/// [`crate::Structure::frontier`]), in order of first appearance.
pub fn frontier_by_loss<L>(objective: &Objective, candidates: Vec<Scored<L>>) -> Vec<Scored<L>> {
    let mut best: Vec<(f64, Scored<L>)> = Vec::new();
    for s in candidates {
        let v = objective.value(s.margin, &s.terms);
        match best.iter_mut().find(|(_, b)| b.terms.loss == s.terms.loss) {
            Some(slot) if v > slot.0 => *slot = (v, s),
            Some(_) => {}
            None => best.push((v, s)),
        }
    }
    best.into_iter().map(|(_, s)| s).collect()
}
