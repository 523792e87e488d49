//! Relaxed mode: the λ-oracle over the local polytope of the pairwise MRF (thesis ch. 4: the
//! convex hull search works over LP-relaxed labels).
//!
//! * Plain and lexicographic queries go to QPBO (max-flow, [`super::qpbo`]) when possible:
//!   no tie-break; a separable primary (λ = ∞ with terms only: fix every label whose coefficient is
//!   non-zero, then solve the tie-break on the rest); a separable tie-break (λ = 0: the
//!   maximum-weight closure on the residual graph).
//! * The constrained λ-oracle (cone rows), a tie-break that is not separable under a non-separable
//!   primary, and every query when the structure was built with the LP solver go to the
//!   `clarabel` LP ([`super::lp`]); lexicographic queries re-solve with the primary fixed at its
//!   optimum minus a tolerance.
//!
//! Interior-point answers are cleaned into valid relaxed labels ([`clean`]).

use bicrit_core::{Cone, Result};

use super::energy::{best_z, edge_marginals_from_z, z_bounds, Forms, LinForm, Scores};
use super::lp::{self, LpResult, Row};
use super::qpbo;
use crate::TermQuery;

/// Slack δ that realises a strict (open) cone end in the LP: `lo·H + δ ≤ L` and `L + δ ≤ hi·H`,
/// with δ = `CONE_STRICT_SLACK · (1 + |slope|)` in (H, L) units. Labels strictly inside the cone by
/// less than δ are missed; answers lie strictly inside by at least δ minus the solver's
/// feasibility tolerance (~1e-8).
pub const CONE_STRICT_SLACK: f64 = 1e-7;

/// Lexicographic queries in the LP: the primary is kept within this relative tolerance of its
/// optimum while the tie-break is maximised: `primary ≥ p* − LEX_TOLERANCE·(1 + |p*|)`.
pub const LEX_TOLERANCE: f64 = 1e-7;

/// Interior-point node marginals within this distance of 0 or 1 are snapped to it (when the
/// snapped point still satisfies the query's rows).
pub const SNAP_TOLERANCE: f64 = 1e-6;

/// Which algorithm answers plain relaxed queries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RelaxedSolver {
    /// Roof duality by max-flow (default): exact LP value, half-integral answers.
    Qpbo,
    /// The local-polytope LP by clarabel (interior point).
    Lp,
}

/// A relaxed answer: node marginals and edge marginals (states 00, 01, 10, 11).
pub(crate) type Marginals = (Vec<f64>, Vec<[f64; 4]>);

fn edge_marginals(
    edges: &[(usize, usize)],
    mu: &[f64],
    signs: &[&[f64]],
    z: Option<&[f64]>,
) -> Vec<[f64; 4]> {
    edges
        .iter()
        .enumerate()
        .map(|(e, &(i, j))| {
            let zz = match z {
                Some(z) if !z[e].is_nan() => {
                    let (lo, hi) = z_bounds(mu[i], mu[j]);
                    z[e].clamp(lo, hi)
                }
                _ => {
                    let s: Vec<f64> = signs.iter().map(|f| f[e]).collect();
                    best_z(mu[i], mu[j], &s)
                }
            };
            edge_marginals_from_z(mu[i], mu[j], zz)
        })
        .collect()
}

fn z_of(me: &[[f64; 4]]) -> Vec<f64> {
    me.iter().map(|m| m[3]).collect()
}

fn cone_rows(forms: &Forms, cone: &Cone) -> Vec<Row> {
    let margin = forms.margin();
    let mut rows = Vec::new();
    // lo·(1 + m) ≤ L  (strict: + δ); trivial when lo = 0 and closed (L ≥ 0 on the polytope)
    if !(cone.lo == 0.0 && cone.lo_closed) {
        let mut f = LinForm::zeros(margin.node.len(), margin.edge.len());
        f.add_scaled(&margin, cone.lo);
        f.constant += cone.lo;
        f.add_scaled(&forms.loss, -1.0);
        let delta = if cone.lo_closed { 0.0 } else { CONE_STRICT_SLACK * (1.0 + cone.lo.abs()) };
        rows.push(Row { form: f, rhs: -delta });
    }
    if cone.hi.is_finite() {
        let mut f = forms.loss.clone();
        f.add_scaled(&margin, -cone.hi);
        f.constant -= cone.hi;
        let delta = if cone.hi_closed { 0.0 } else { CONE_STRICT_SLACK * (1.0 + cone.hi.abs()) };
        rows.push(Row { form: f, rhs: -delta });
    }
    rows
}

/// Turns an interior-point point into a valid relaxed label: node marginals clipped to [0, 1],
/// each z clamped into its local-polytope interval (z is re-optimised for the objective on edges
/// the LP did not constrain), so the edge marginals are non-negative and consistent. Then node
/// marginals within [`SNAP_TOLERANCE`] of 0 or 1 are snapped when the snapped point still passes
/// `accept` (the cone and the lexicographic row); ties on the optimal face thus come back as the
/// analytic-centre point the solver returns, never as an infeasible one.
fn clean(
    edges: &[(usize, usize)],
    mu_raw: &[f64],
    z_raw: &[f64],
    signs: &[&[f64]],
    has_rows: bool,
    accept: impl Fn(&[f64], &[[f64; 4]]) -> bool,
) -> Marginals {
    let mu: Vec<f64> = mu_raw.iter().map(|m| m.clamp(0.0, 1.0)).collect();
    let z = if has_rows { Some(z_raw) } else { None };
    let me = edge_marginals(edges, &mu, signs, z);
    let snapped: Vec<f64> = mu
        .iter()
        .map(|&m| {
            if m < SNAP_TOLERANCE {
                0.0
            } else if m > 1.0 - SNAP_TOLERANCE {
                1.0
            } else {
                m
            }
        })
        .collect();
    if snapped != mu {
        let z_now = z_of(&me);
        let me2 = edge_marginals(edges, &snapped, signs, if has_rows { Some(&z_now) } else { None });
        if accept(&snapped, &me2) {
            return (snapped, me2);
        }
    }
    (mu, me)
}

/// Among the optima of a separable primary, the optimum of the tie-break: labels whose primary
/// coefficient is non-zero are fixed to their best value, the others solved by QPBO.
fn separable_then(edges: &[(usize, usize)], prim: &LinForm, sec: &LinForm) -> Vec<f64> {
    let k = prim.node.len();
    let mut mu: Vec<f64> = prim.node.iter().map(|&a| if a > 0.0 { 1.0 } else { 0.0 }).collect();
    let free: Vec<usize> = (0..k).filter(|&p| prim.node[p] == 0.0).collect();
    if free.is_empty() {
        return mu;
    }
    let mut new_id = vec![usize::MAX; k];
    for (n, &p) in free.iter().enumerate() {
        new_id[p] = n;
    }
    let mut sub = LinForm::zeros(free.len(), 0);
    let mut sub_edges = Vec::new();
    for &p in &free {
        sub.node[new_id[p]] = sec.node[p];
    }
    for (e, &(i, j)) in edges.iter().enumerate() {
        let c = sec.edge[e];
        match (new_id[i] != usize::MAX, new_id[j] != usize::MAX) {
            (true, true) => {
                sub_edges.push((new_id[i], new_id[j]));
                sub.edge.push(c);
            }
            (true, false) => sub.node[new_id[i]] += c * mu[j],
            (false, true) => sub.node[new_id[j]] += c * mu[i],
            (false, false) => {}
        }
    }
    let sub_mu = qpbo::maximize(&sub_edges, &sub);
    for (n, &p) in free.iter().enumerate() {
        mu[p] = sub_mu[n];
    }
    mu
}

/// The relaxed oracle for one instance: `None` when the cone excludes the whole polytope.
pub(crate) fn oracle(
    solver: RelaxedSolver,
    s: &Scores<'_>,
    gold: &[u8],
    q: &TermQuery<'_, super::MlLabel>,
) -> Result<Option<Marginals>> {
    let edges = s.edges;
    let forms = Forms::new(s, gold);
    let prim = forms.objective(&q.primary);
    let sec = q.secondary.as_ref().map(|o| forms.objective(o));
    let zero = vec![0.0; edges.len()];
    let sec_edge: &[f64] = sec.as_ref().map_or(&zero, |f| &f.edge);
    let signs: [&[f64]; 3] = [&prim.edge, sec_edge, &forms.score.edge];

    if q.cone.is_none() && solver == RelaxedSolver::Qpbo {
        let mu = match &sec {
            None => Some(qpbo::maximize(edges, &prim)),
            Some(sec) if prim.is_separable() => Some(separable_then(edges, &prim, sec)),
            Some(sec) if sec.is_separable() => Some(qpbo::maximize_lex(edges, &prim, &sec.node)),
            Some(_) => None,
        };
        if let Some(mu) = mu {
            let me = edge_marginals(edges, &mu, &signs, None);
            return Ok(Some((mu, me)));
        }
    }

    // LP path; a cone of one slope with an open end is empty
    if let Some(c) = &q.cone {
        if c.lo > c.hi || (c.lo == c.hi && !(c.lo_closed && c.hi_closed)) {
            return Ok(None);
        }
    }
    let mut rows = match &q.cone {
        Some(c) => cone_rows(&forms, c),
        None => Vec::new(),
    };
    let in_cone = |mu: &[f64], me: &[[f64; 4]]| -> bool {
        q.cone.is_none_or(|c| {
            let z = z_of(me);
            c.contains(1.0 + forms.margin().eval(mu, &z), forms.loss.eval(mu, &z))
        })
    };
    let (mu_raw, z_raw) = match lp::solve(edges, &prim, &rows)? {
        LpResult::Infeasible => return Ok(None),
        LpResult::Optimal { mu, z } => (mu, z),
    };
    let has_rows = !rows.is_empty();
    let first = clean(edges, &mu_raw, &z_raw, &signs, has_rows, in_cone);
    let Some(sec) = &sec else {
        return Ok(Some(first));
    };
    // lexicographic: primary ≥ p* − tol, maximise the tie-break
    let p_star = prim.eval(&first.0, &z_of(&first.1)).max(
        prim.eval(&mu_raw, &z_raw.iter().map(|z| if z.is_nan() { 0.0 } else { *z }).collect::<Vec<_>>()),
    );
    let p_floor = p_star - LEX_TOLERANCE * (1.0 + p_star.abs());
    let mut neg = LinForm::zeros(prim.node.len(), prim.edge.len());
    neg.add_scaled(&prim, -1.0);
    rows.push(Row { form: neg, rhs: -p_floor });
    let (mu2, z2) = match lp::solve(edges, sec, &rows)? {
        // numerically possible at the edge of feasibility: keep the primary optimum
        LpResult::Infeasible => return Ok(Some(first)),
        LpResult::Optimal { mu, z } => (mu, z),
    };
    let accept = |mu: &[f64], me: &[[f64; 4]]| in_cone(mu, me) && prim.eval(mu, &z_of(me)) >= p_floor;
    Ok(Some(clean(edges, &mu2, &z2, &signs, true, accept)))
}

/// argmax of the score for `predict` in relaxed mode: QPBO, then rounding of the unlabelled (½)
/// nodes. The integral part is kept (weak persistency: some optimal labeling agrees with it); the
/// ½ nodes start at 0 and are improved by iterated conditional modes (coordinate ascent over those
/// nodes only, in label order, until no single flip increases the score).
pub(crate) fn predict(s: &Scores<'_>) -> Vec<u8> {
    let edges = s.edges;
    let score = s.score_form();
    let mu = qpbo::maximize(edges, &score);
    let mut y: Vec<u8> = mu.iter().map(|&m| u8::from(m == 1.0)).collect();
    let half: Vec<usize> = (0..mu.len()).filter(|&p| mu[p] == 0.5).collect();
    if half.is_empty() {
        return y;
    }
    let mut incident: Vec<Vec<usize>> = vec![Vec::new(); mu.len()];
    for (e, &(i, j)) in edges.iter().enumerate() {
        incident[i].push(e);
        incident[j].push(e);
    }
    for _sweep in 0..100 {
        let mut changed = false;
        for &p in &half {
            let mut gain = score.node[p];
            for &e in &incident[p] {
                let (i, j) = edges[e];
                let other = if i == p { j } else { i };
                gain += score.edge[e] * f64::from(y[other]);
            }
            let want = u8::from(gain > 0.0);
            if want != y[p] {
                y[p] = want;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    y
}
