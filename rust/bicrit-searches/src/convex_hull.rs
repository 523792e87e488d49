//! Convex hull search (thesis Alg. `alg:convexhull_search`; λ choice from Theorem
//! `thm:optimal_lambda`): the maximum of any
//! quasi-concave increasing ψ over the convex hull of the labels, in at most (vertices of the
//! λ ≥ 0 hull chain) + 1 oracle calls.
//!
//! Each round: p̂ is the best point of the upper-right chain of the labels found so far (the gold
//! label included), vertex or point on an edge (ψ is unimodal along the chain and along each
//! edge, Lemma `lem:optimum_on_edge`). The query is the normal of the line that separates the
//! super-level set {ψ ≥ ψ(p̂)} from the hull found so far: the edge's normal when p̂ is inside an
//! edge, the tangent λ = ψ_g/ψ_h of the level curve when p̂ is a vertex. Slips of the printed
//! pseudo-code handled here:
//! * `Get-λ`'s "is below T′" is inverted — the edge to use is the one that climbs into the
//!   super-level set; here that is the edge holding the fractional maximum, found directly.
//! * `GetMaxFract` compares Φ(y*_1) with itself — here every chain edge is maximised and the
//!   best kept.
//! * The search stops on the value certificate (the oracle's value at λ is not above the line
//!   through p̂), not on getting a repeated label back: at a tie an oracle may return another
//!   optimal point. A repeated point also stops it, as a guard against rounding.
//!
//! The guarantee needs ψ quasi-concave and increasing where the search walks, i.e. on the
//! super-level set of ψ(gold) = 0 (Definition `def:gbicriteria`): with the gold label known
//! (every structure oracle knows it) the best point never leaves it. An oracle without a gold
//! label whose labels all have Φ < 0 gets a valid but not necessarily optimal answer.

use bicrit_core::{Lambda, LambdaOracle, Point, Result};

use crate::geometry::{max_on_segment, REL_TOL};
use crate::integral::{self, Integral};
use crate::planes;
use crate::session::Session;
use crate::{Found, Item, Requirements, Search, WarmStart};

/// Convex hull search with optional integral recovery.
#[derive(Clone, Debug, PartialEq)]
pub struct ConvexHull {
    /// Integral recovery from a fractional answer.
    pub integral: Integral,
    /// Call budget.
    pub max_calls: usize,
    /// The first λ when nothing but the gold label is known (default: the tangent at gold when
    /// finite and positive, else 1).
    pub lambda0: Option<f64>,
    /// Integral recovery with a ban list: answers asked for beyond the first at each query
    /// (all added to the labels known), which deepens the cuts of the unseen-label bound.
    pub deepen: usize,
    /// Integral recovery: every label has g ≥ 0 (g a task loss), which lets the loop stop on
    /// the bound of the labels not seen yet ([`crate::integral`]).
    pub nonneg_g: bool,
}

impl Default for ConvexHull {
    fn default() -> Self {
        ConvexHull { integral: Integral::None, max_calls: 1000, lambda0: None, deepen: 0, nonneg_g: false }
    }
}

/// The best point of the hull found so far.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum HullPoint {
    /// No active label at all.
    Empty,
    /// A vertex (index into the session's candidates).
    Vertex(usize),
    /// The point (1 − t)·a + t·b inside the edge (a, b) of the chain, g(a) < g(b).
    Edge(usize, usize, f64),
}

/// One convex hull search over the session's active (not banned) candidates.
pub(crate) struct Round {
    pub point: HullPoint,
    pub value: f64,
    /// Whether the value certificate (or a repeated answer) closed the round.
    pub certified: bool,
    /// The certifying query λ and the line value h + λg at the best point (lexicographic
    /// queries: h for λ = 0, g for λ = ∞).
    pub line: Option<(Lambda, f64)>,
}

/// Most extra answers a deepened ban-list query asks for.
const MAX_DEEPEN: usize = 32;

/// How a round reaches the oracle.
pub(crate) enum Access {
    /// Plain λ-oracle.
    Plain,
    /// λ-oracle with the labels of the banned candidates as a ban list, asking for this many
    /// answers beyond the first (added to the labels known).
    Ban(usize),
    /// k-best with k = (banned candidates) + 1; answers at a banned point's coordinates are
    /// skipped, which emulates the ban list.
    KBest,
}

/// The best point of the chain of active candidates, and the λ that certifies or improves it.
fn best_on_chain<O: LambdaOracle>(s: &mut Session<'_, O>) -> Result<(HullPoint, f64, Option<Lambda>)> {
    s.chain_of(|c| !c.banned);
    let chain = std::mem::take(&mut s.hull.chain);
    let out = best_of_chain(s, &chain);
    s.hull.chain = chain;
    out
}

/// [`best_on_chain`] given the chain of active candidates (indices into `known`, by increasing g).
fn best_of_chain<O: LambdaOracle>(
    s: &Session<'_, O>,
    chain: &[usize],
) -> Result<(HullPoint, f64, Option<Lambda>)> {
    if chain.is_empty() {
        return Ok((HullPoint::Empty, f64::NEG_INFINITY, None));
    }
    let xy = |i: usize| (s.known[i].h, s.known[i].g);
    let mut best = HullPoint::Vertex(chain[0]);
    let mut value = s.known[chain[0]].phi;
    for &v in &chain[1..] {
        if s.known[v].phi > value {
            best = HullPoint::Vertex(v);
            value = s.known[v].phi;
        }
    }
    for w in chain.windows(2) {
        let (a, b) = (w[0], w[1]);
        let (ea, eb) = (s.known[a].phi, s.known[b].phi);
        let (t, v) = max_on_segment(s.psi(), xy(a), xy(b))?;
        let margin = REL_TOL * (v.abs() + ea.max(eb).abs() + f64::MIN_POSITIVE);
        if v > value && v > ea.max(eb) + margin && t > 0.0 && t < 1.0 {
            best = HullPoint::Edge(a, b, t);
            value = v;
        }
    }
    let lambda = match best {
        HullPoint::Empty => None,
        HullPoint::Edge(a, b, _) => {
            // The edge's normal: both endpoints tie under h + λg.
            let (pa, pb) = (xy(a), xy(b));
            Some(lambda_of((pa.0 - pb.0) / (pb.1 - pa.1)))
        }
        HullPoint::Vertex(v) => {
            let (h, g) = xy(v);
            match s.psi().tangent(h, g) {
                Some(l) if l.is_finite() && l > 0.0 => Some(lambda_of(l)),
                _ => {
                    let (dh, dg) = s.grad(h, g)?;
                    Some(tangent(dh, dg))
                }
            }
        }
    };
    Ok((best, value, lambda))
}

/// λ of the tangent to a level curve with normal (ψ_h, ψ_g), clamped to [0, ∞].
fn tangent(dh: f64, dg: f64) -> Lambda {
    if dh <= 0.0 && dg <= 0.0 {
        // Flat or degenerate gradient (e.g. h·g^β + g^α at the origin): start from λ = ∞ as the
        // printed algorithm does.
        Lambda::Infinity
    } else if dh <= 0.0 || dg == f64::INFINITY {
        Lambda::Infinity
    } else if dg <= 0.0 || dh == f64::INFINITY {
        Lambda::Zero
    } else {
        lambda_of(dg / dh)
    }
}

/// A λ ≥ 0 as a query; beyond 1e±150 the lexicographic queries stand in for it (h + λg would
/// overflow or lose h entirely: λ = 0 and ∞ are never huge or tiny floats).
fn lambda_of(l: f64) -> Lambda {
    if l.is_nan() || l <= 1e-150 {
        Lambda::Zero
    } else if l >= 1e150 {
        Lambda::Infinity
    } else {
        Lambda::Finite(l)
    }
}

/// (primary, scale) of a point under λ: h + λg, or the lexicographic primary key.
fn line_value(lambda: Lambda, h: f64, g: f64) -> (f64, f64) {
    match lambda {
        Lambda::Zero => (h, h.abs()),
        Lambda::Infinity => (g, g.abs()),
        Lambda::Finite(l) => (h + l * g, h.abs() + l * g.abs()),
    }
}

/// Runs convex hull search rounds until the certificate holds (or the budget ends).
pub(crate) fn round<O: LambdaOracle>(
    s: &mut Session<'_, O>,
    access: &Access,
    first: Option<Lambda>,
) -> Result<Round> {
    if let Some(l) = s.psi().exact_lambda().filter(|l| l.is_finite() && *l > 0.0) {
        return exact_round(s, access, lambda_of(l));
    }
    let mut first = first;
    let mut started = false;
    loop {
        let (point, value, lambda) = best_on_chain(s)?;
        let only_gold = s.known.iter().all(|c| c.gold || c.banned);
        // With nothing but the gold label known, the first query is λ₀ (option or warm start),
        // else the tangent at gold when it is a finite λ > 0, else λ = 1 — margin rescaling's
        // query, whose answer is a far better first vertex than O(∞)'s largest-loss label
        // (the printed algorithm starts at λ = ∞); any first λ keeps the call bound.
        // Only a tangent or edge λ separates the level set from the hull found so far, so only
        // its answer can certify; the answer to a λ₀ is just added (if gold, it is a chain vertex
        // never returned otherwise, so the call bound holds).
        let (lambda, certifying) = match (first.take(), only_gold, lambda) {
            (Some(l), true, _) => (l, false),
            (None, true, Some(Lambda::Finite(l))) => (Lambda::Finite(l), true),
            (None, true, _) if !started => (Lambda::Finite(1.0), false),
            (_, _, l) => (l.unwrap_or(Lambda::Infinity), true),
        };
        started = true;
        // The value certificate: is the answer y above the line through p̂ with normal (1, λ)?
        let line = match point {
            HullPoint::Empty => None,
            HullPoint::Vertex(v) => Some(line_value(lambda, s.known[v].h, s.known[v].g)),
            HullPoint::Edge(a, b, _) => {
                let (la, sa) = line_value(lambda, s.known[a].h, s.known[a].g);
                let (lb, sb) = line_value(lambda, s.known[b].h, s.known[b].g);
                Some((la.max(lb), sa.max(sb)))
            }
        };
        // Without a call when the planes of earlier answers (and the oracle's bound on g) keep
        // every label the oracle may return on or below that line: its answer would certify.
        if let (Some((c, sc)), true) = (line, certifying) {
            if let Some(u) = certificate_bound(s, lambda) {
                if u == f64::NEG_INFINITY {
                    return Ok(Round { point, value, certified: true, line: None });
                }
                if u <= c + REL_TOL * (u.abs().max(sc) + f64::MIN_POSITIVE) {
                    if matches!(access, Access::Ban(_)) {
                        s.cuts.push((lambda, u)); // every label not banned is below it
                    }
                    return Ok(Round { point, value, certified: true, line: Some((lambda, c)) });
                }
            }
        }
        if !s.budget_left() {
            return Ok(Round { point, value, certified: false, line: None });
        }
        let Some(y) = ask(s, access, lambda)? else {
            // No label left (everything banned): the chain found so far is all there is.
            return Ok(Round { point, value, certified: true, line: None });
        };
        let (ky, sy) = line_value(lambda, y.h, y.g);
        if let (Some((c, sc)), true) = (line, certifying) {
            if ky <= c + REL_TOL * (sy.max(sc) + f64::MIN_POSITIVE) {
                if matches!(access, Access::Ban(e) if *e > 0) {
                    // a deepened loop keeps every label it is shown (below the line, so p̂
                    // stands): the unseen-label bound then covers all the others
                    s.add(y)?;
                }
                return Ok(Round { point, value, certified: true, line: Some((lambda, c)) });
            }
        }
        let (_, new) = s.add(y)?;
        if !new && certifying {
            return Ok(Round { point, value, certified: true, line: line.map(|(c, _)| (lambda, c)) });
        }
    }
}

/// The largest line value h + λg any label the oracle may return can have, from the planes of
/// earlier answers and the oracle's bound on g ([`planes::line_bound`]) and, when the oracle
/// knows a floor of g above the gold label's, from the planes of larger slope for every other
/// label ([`planes::floor_bound`]) and the gold label's own line value: the smaller of the two.
fn certificate_bound<O: LambdaOracle>(s: &Session<'_, O>, lambda: Lambda) -> Option<f64> {
    let planes = planes::line_bound(&s.planes, lambda);
    let floored = s.g_floor.and_then(|f| planes::floor_bound(&s.planes, lambda, f)).and_then(|u| {
        let gold = s.known.iter().find(|c| c.gold)?;
        Some(u.max(line_value(lambda, gold.h, gold.g).0))
    });
    match (planes, floored) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// One query at `lambda` through `access`: the best label that is not banned, if any.
fn ask<O: LambdaOracle>(
    s: &mut Session<'_, O>,
    access: &Access,
    lambda: Lambda,
) -> Result<Option<bicrit_core::Point<O::Label>>> {
    let banned: Vec<usize> =
        (0..s.known.len()).filter(|&i| s.known[i].banned || s.known[i].ban_only_answers).collect();
    let ban_labels: Vec<O::Label> = banned.iter().map(|&i| s.label(i).clone()).collect();
    let y = match access {
        Access::Plain => {
            let found = s.query(lambda, &[], 1, None)?;
            record_plane(s, lambda, found.first());
            found.into_iter().next()
        }
        Access::Ban(extra) => {
            // deepen the ban-list rounds only (a first round, nothing banned, is one plain call),
            // at least `extra` more answers and as many as the labels known (doubling per round)
            let k = if ban_labels.is_empty() || *extra == 0 {
                1
            } else {
                1 + (*extra).max(s.known.len()).min(MAX_DEEPEN)
            };
            let found = s.query(lambda, &ban_labels, k, None)?;
            record_plane(s, lambda, found.first());
            // every label neither banned nor returned is at most the last answer's line value
            let cut =
                if found.len() == k { found.last().map(|p| line_value(lambda, p.h, p.g).0) } else { None };
            s.cuts.push((lambda, cut.unwrap_or(f64::NEG_INFINITY)));
            let mut it = found.into_iter();
            let y = it.next();
            for p in it {
                s.add(p)?;
            }
            y
        }
        Access::KBest => {
            // Labels at a banned point's coordinates (the banned ones and their duplicates)
            // are skipped; when all k answers are skipped, ask for more.
            let mut k = banned.len() + 1;
            loop {
                let found = s.query(lambda, &[], k, None)?;
                record_plane(s, lambda, found.first());
                let full = found.len() == k;
                let pick = found
                    .into_iter()
                    .find(|p| !banned.iter().any(|&i| s.known[i].h == p.h && s.known[i].g == p.g));
                if pick.is_some() || !full || !s.budget_left() {
                    break pick;
                }
                k *= 2;
            }
        }
    };
    if let Some(p) = &y {
        let phi = s.psi().try_value(p.h, p.g)?;
        s.top_phi = s.top_phi.max(phi);
    }
    Ok(y)
}

/// Keeps the plane of a query's top answer (−∞: no label answered) for [`planes::line_bound`]:
/// the top answer maximises the line value over every label the oracle may return.
fn record_plane<L>(
    s: &mut Session<'_, impl LambdaOracle<Label = L>>,
    lambda: Lambda,
    top: Option<&Point<L>>,
) {
    let k = top.map_or(f64::NEG_INFINITY, |p| line_value(lambda, p.h, p.g).0);
    s.planes.push((lambda, k));
}

/// The round of a linear ψ = h + λ·g ([`bicrit_surrogates::Surrogate::exact_lambda`]): the
/// answer of one call at λ maximises ψ over the labels not banned and over their convex hull, so
/// it needs no certificate call. The answer is the general round's: the best known point p̂
/// (gold, warm-start labels) when the answer is not above its line h + λg (with the same
/// tolerance), else the best point once the answer is added — what the general round's second,
/// certifying call at the same λ would confirm.
fn exact_round<O: LambdaOracle>(s: &mut Session<'_, O>, access: &Access, lambda: Lambda) -> Result<Round> {
    let (point, value, _) = best_on_chain(s)?;
    if !s.budget_left() {
        return Ok(Round { point, value, certified: false, line: None });
    }
    let Some(y) = ask(s, access, lambda)? else {
        return Ok(Round { point, value, certified: true, line: None });
    };
    let (ky, sy) = line_value(lambda, y.h, y.g);
    let line = |s: &Session<'_, O>, p: HullPoint| match p {
        HullPoint::Empty => None,
        HullPoint::Vertex(v) => Some(line_value(lambda, s.known[v].h, s.known[v].g)),
        HullPoint::Edge(a, b, _) => {
            let (la, sa) = line_value(lambda, s.known[a].h, s.known[a].g);
            let (lb, sb) = line_value(lambda, s.known[b].h, s.known[b].g);
            Some((la.max(lb), sa.max(sb)))
        }
    };
    if let Some((c, sc)) = line(s, point) {
        if ky <= c + REL_TOL * (sy.max(sc) + f64::MIN_POSITIVE) {
            return Ok(Round { point, value, certified: true, line: Some((lambda, c)) });
        }
    }
    s.add(y)?;
    let (point, value, _) = best_on_chain(s)?;
    let line = line(s, point).map(|(c, _)| (lambda, c));
    Ok(Round { point, value, certified: true, line })
}

/// The answer items of a hull point.
pub(crate) fn items<O: LambdaOracle>(s: &Session<'_, O>, p: HullPoint) -> Vec<Item<O::Label>> {
    let item = |i: usize, w: f64| {
        let c = &s.known[i];
        Item { label: s.label(i).clone(), h: c.h, g: c.g, weight: w }
    };
    match p {
        HullPoint::Empty => Vec::new(),
        HullPoint::Vertex(v) => vec![item(v, 1.0)],
        HullPoint::Edge(a, b, t) => vec![item(a, 1.0 - t), item(b, t)],
    }
}

impl Search for ConvexHull {
    fn name(&self) -> &'static str {
        match self.integral {
            Integral::None => "convex-hull",
            Integral::Ban => "convex-hull-ban",
            Integral::KBest => "convex-hull-kbest",
        }
    }

    fn requirements(&self) -> Requirements {
        Requirements {
            ban: self.integral == Integral::Ban,
            kbest: self.integral == Integral::KBest,
            ..Requirements::default()
        }
    }

    fn max_calls(&self) -> usize {
        self.max_calls
    }

    fn search<'a, O: LambdaOracle>(
        &self,
        s: &mut Session<'a, O>,
        warm: Option<&'a WarmStart<O::Label>>,
        _xi: Option<f64>,
    ) -> Result<Found<O::Label>> {
        // Warm start (thesis §`sec:convex_hull_search`, label cache): the previous epoch's chain
        // re-evaluated now; without evaluation, the previous λ as the first query.
        let mut first = self.lambda0.map(lambda_of);
        if let Some(w) = warm {
            if !s.warm_points(w)? {
                first = w.lambda.map(lambda_of).or(first);
            }
        }
        if self.integral != Integral::None {
            return integral::recover(s, self.integral, first, self.deepen, self.nonneg_g);
        }
        let r = round(s, &Access::Plain, first)?;
        let is_gold = matches!(r.point, HullPoint::Vertex(v) if s.known[v].gold);
        Ok(Found {
            value: r.value,
            answer: items(s, r.point),
            upper_bound: r.certified.then_some(r.value),
            is_gold,
        })
    }
}
