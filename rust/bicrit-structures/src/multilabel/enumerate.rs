//! Exact mode: enumeration of all 2^K labels in Gray-code order with incremental scores.
//!
//! The high bits run in Gray order: consecutive configurations differ in one bit k, and the
//! enumeration keeps the *gain* of flipping each bit up (θ_k plus what k's edges gain, given the
//! neighbours' current values): the score changes by ±gain_k, every neighbour's gain by ±c_e (the
//! edge's interaction w11 − w10 − w01 + w00), the loss and size by ±1. The 4 lowest bits are
//! enumerated as a block under each high configuration from subset sums of their gains plus a
//! fixed table of their mutual interactions, so a label costs a few additions. The query semantics are
//! those of [`crate::select::select_best`]: ban list, cone in (1 + m, L) coordinates, k best with a
//! lexicographic tie-break by the secondary objective, remaining ties in enumeration order
//! (starting from the empty label).
//!
//! Floating-point drift. Incremental sums drift by a few ulps of the score scale after many flips,
//! which would turn exact ties (decided by the secondary objective) into arbitrary ones. So the
//! incremental value only *screens* labels: a label within a tolerance of the current k-th best
//! (and within a tolerance of the cone) is re-scored from scratch in a fixed order
//! ([`Scores::score_bits`]), and all comparisons between kept labels use those exact values.

use bicrit_core::{Cone, Objective};

use super::energy::Scores;

/// Coefficients of an objective on (score, loss, size): `margin·(S − S_gold) + loss·L + size·|y|`.
#[derive(Clone, Copy, Debug)]
struct Coef {
    margin: f64,
    loss: f64,
    size: f64,
}

impl Coef {
    fn of(o: &Objective) -> Self {
        Coef { margin: o.margin, loss: o.terms.loss + o.terms.hamming, size: o.terms.size }
    }
    fn value(&self, m: f64, loss: f64, size: f64) -> f64 {
        self.margin * m + self.loss * loss + self.size * size
    }
}

/// One query over the enumerated labels.
pub(crate) struct EnumQuery<'a> {
    pub primary: Objective,
    pub secondary: Option<Objective>,
    /// Banned labels as bit masks, sorted.
    pub ban: &'a [u32],
    pub k: usize,
    pub cone: Option<Cone>,
}

/// A label kept by the enumeration, with its exact values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Found {
    pub mask: u32,
    /// m(y) = S(y) − S(y_true).
    pub margin: f64,
    pub loss: f64,
    pub size: f64,
    p: f64,
    q: f64,
}

/// Width of the dense interaction rows: the largest K enumerated ([`super::MAX_EXACT_LABELS`]).
const LANES: usize = super::MAX_EXACT_LABELS;

/// Number of lowest bits enumerated as a block (in binary order) per high-bit configuration.
const BLOCK: usize = 4;

/// Beyond this k the kept list is collected whole and sorted instead of maintained by insertion.
const SORT_ALL_K: usize = 256;

/// The precomputed pieces of one Gray-code walk over {0,1}^K.
struct Walk {
    n_nodes: usize,
    /// Dense interaction rows: inter[k][j] = c_e = w11 − w10 − w01 + w00 of edge {k, j}.
    inter: Vec<[f64; LANES]>,
    /// Score change when y_k goes 0 → 1 at y = 0: θ_k + Σ_e (w_e[1·0] − w_e[0·0]) over k's edges.
    gain: [f64; LANES],
}

impl Walk {
    fn new(s: &Scores<'_>) -> Self {
        let n_nodes = s.n_nodes();
        assert!(n_nodes <= LANES, "enumeration is limited to {LANES} labels");
        let mut inter = vec![[0.0f64; LANES]; n_nodes];
        let mut gain = [0.0f64; LANES];
        gain[..n_nodes].copy_from_slice(&s.theta);
        for (e, &(i, j)) in s.edges.iter().enumerate() {
            let [w00, w01, w10, w11] = s.w(e);
            let c = w11 - w10 - w01 + w00;
            inter[i][j] += c;
            inter[j][i] += c;
            gain[i] += w10 - w00;
            gain[j] += w01 - w00;
        }
        Walk { n_nodes, inter, gain }
    }

    /// Calls `visit(mask, incremental score, loss, size, distance)` for every label, the empty
    /// label first; `distance` is the loss as an index (the Hamming distance to `gold`).
    /// The BLOCK lowest bits are enumerated in binary order inside each configuration of the high
    /// bits (which run in Gray order): with the high bits fixed, the score of low pattern l is
    /// score(high, 0) + Σ_{k ∈ l} gain_k + pair_low[l], where pair_low holds the interactions
    /// inside the block; the flip updates of the gains are paid once per 2^BLOCK labels.
    #[inline(always)]
    fn run(mut self, start_score: f64, gold: u32, mut visit: impl FnMut(u32, f64, f64, f64, usize)) {
        let n_nodes = self.n_nodes;
        let b = n_nodes.min(BLOCK);
        let n_low = 1usize << b;
        let mut pair_low = [0.0f64; 1 << BLOCK];
        let mut size_low = [0.0f64; 1 << BLOCK];
        let mut loss_low = [0.0f64; 1 << BLOCK];
        // the Hamming distance of low pattern l to gold's low bits (of the high bits: dist_high),
        // as an index: the loss without a float-to-integer conversion per label
        let mut dist_low = [0usize; 1 << BLOCK];
        let mut gain_low = [0.0f64; 1 << BLOCK];
        for l in 1..n_low {
            let k = l.trailing_zeros() as usize;
            let rest = l & (l - 1);
            pair_low[l] = pair_low[rest]
                + (0..b).filter(|&j| (rest >> j) & 1 == 1).map(|j| self.inter[k][j]).sum::<f64>();
            size_low[l] = size_low[rest] + 1.0;
            loss_low[l] = loss_low[rest] + if (gold >> k) & 1 == 1 { -1.0 } else { 1.0 };
        }
        let gold_low = gold & ((1u32 << b) - 1);
        for (l, d) in dist_low.iter_mut().enumerate().take(n_low) {
            *d = (l as u32 ^ gold_low).count_ones() as usize;
        }
        let mut mask = 0u32;
        let mut score = start_score;
        let mut loss = gold.count_ones() as f64;
        let mut size = 0.0;
        let mut dist_high = (gold >> b).count_ones() as usize;
        let n_high: u32 = 1 << (n_nodes - b);
        for hstep in 0..n_high {
            if hstep > 0 {
                let k = b + hstep.trailing_zeros() as usize;
                // flipping k changes the score by ±gain[k] and every neighbour's gain by ±c_e
                let sign = if (mask >> k) & 1 == 0 { 1.0 } else { -1.0 };
                score += sign * self.gain[k];
                for (g, &c) in self.gain.iter_mut().zip(&self.inter[k]) {
                    *g += sign * c;
                }
                mask ^= 1 << k;
                size += sign;
                loss += if (gold >> k) & 1 == 1 { -sign } else { sign };
                dist_high = (((mask ^ gold) >> b).count_ones()) as usize;
            }
            for l in 1..n_low {
                let k = l.trailing_zeros() as usize;
                gain_low[l] = gain_low[l & (l - 1)] + self.gain[k];
            }
            for l in 0..n_low {
                visit(
                    mask | l as u32,
                    score + gain_low[l] + pair_low[l],
                    loss + loss_low[l],
                    size + size_low[l],
                    dist_high + dist_low[l],
                );
            }
        }
    }
}

/// Drift tolerance (absolute) of the incremental score of [`Walk::run`].
fn score_tolerance(s: &Scores<'_>, gold_score: f64) -> f64 {
    let scale = s.theta.iter().map(|t| t.abs()).sum::<f64>()
        + s.pair.chunks(4).map(|w| w.iter().fold(0.0f64, |m, v| m.max(v.abs()))).sum::<f64>()
        + gold_score.abs();
    1e-9 * (1.0 + scale)
}

/// The `q.k` best labels (best first) over {0,1}^K for gold label `gold` (a bit mask).
pub(crate) fn enumerate(s: &Scores<'_>, gold: u32, q: &EnumQuery<'_>) -> Vec<Found> {
    let walk = Walk::new(s);
    let bit = |mask: u32, k: usize| ((mask >> k) & 1) as usize;
    let exact_score = |mask: u32| s.score_bits(|k| bit(mask, k));
    let gold_score = exact_score(gold);
    let prim = Coef::of(&q.primary);
    let sec = q.secondary.as_ref().map(Coef::of);

    // Drift tolerance of the incremental score (absolute), and of the primary value.
    let tol_s = score_tolerance(s, gold_score);
    let tol_p = prim.margin.abs() * tol_s;

    let sort_all = q.k > SORT_ALL_K;
    let mut kept: Vec<Found> = Vec::with_capacity(if sort_all { 1024 } else { q.k + 1 });

    // called for labels whose incremental primary value is not below the current threshold
    let consider = |mask: u32, s_inc: f64, loss: f64, size: f64, kept: &mut Vec<Found>| {
        let m_inc = s_inc - gold_score;
        if let Some(c) = &q.cone {
            // screen with a widened cone, decide exactly below
            let h = 1.0 + m_inc;
            let slack = tol_s * (1.0 + c.lo.abs() + if c.hi.is_finite() { c.hi.abs() } else { 0.0 });
            if c.lo * h > loss + slack || (c.hi.is_finite() && loss > c.hi * h + slack) {
                return;
            }
        }
        if !q.ban.is_empty() && q.ban.binary_search(&mask).is_ok() {
            return;
        }
        let margin = exact_score(mask) - gold_score;
        if let Some(c) = &q.cone {
            if !c.contains(1.0 + margin, loss) {
                return;
            }
        }
        let p = prim.value(margin, loss, size);
        let qv = sec.map_or(0.0, |c| c.value(margin, loss, size));
        let f = Found { mask, margin, loss, size, p, q: qv };
        if sort_all {
            kept.push(f);
            return;
        }
        // insert after every kept label that is at least as good (stable: enumeration order)
        let pos = kept.partition_point(|o| o.p > p || (o.p == p && o.q >= qv));
        if pos < q.k {
            kept.insert(pos, f);
            kept.truncate(q.k);
        }
    };

    // labels whose incremental primary is below `threshold` cannot enter the kept list
    let update = |kept: &Vec<Found>| {
        if !sort_all && kept.len() == q.k {
            kept[q.k - 1].p - tol_p
        } else {
            f64::NEG_INFINITY
        }
    };
    let mut threshold = update(&kept);
    walk.run(exact_score(0), gold, |mask, s_l, loss_l, size_l, _| {
        if prim.value(s_l - gold_score, loss_l, size_l) >= threshold {
            consider(mask, s_l, loss_l, size_l, &mut kept);
            threshold = update(&kept);
        }
    });
    if sort_all {
        // stable: equal keys keep enumeration order
        kept.sort_by(|a, b| {
            b.p.partial_cmp(&a.p)
                .unwrap_or(std::cmp::Ordering::Equal)
                .then(b.q.partial_cmp(&a.q).unwrap_or(std::cmp::Ordering::Equal))
        });
        kept.truncate(q.k);
    }
    kept
}

/// The frontier by loss value in one enumeration pass (what [`crate::Structure::frontier`] asks):
/// for every Hamming distance c = 0..=K to `gold`, the first label enumerated of largest
/// `objective` among the labels at distance c. Ordered by c.
///
/// The incremental value screens, the exact values decide (as in [`enumerate`]), but the exact
/// re-scoring is deferred to the end of the walk: with the drift of the incremental objective
/// within `tol` ([`score_tolerance`]), a label of largest exact value has an incremental value
/// within 2·`tol` of the largest incremental value of its distance (exact(y) ≥ exact(b) for the
/// label b of largest incremental value, so inc(y) ≥ exact(y) − tol ≥ inc(b) − 2·tol). The walk
/// keeps every label within 2·`tol` of its distance's running maximum (a few per distance: the
/// running maximum's records), and the exact values of those left within 2·`tol` of the final
/// maximum pick the first label enumerated of largest exact value — the answer of re-scoring
/// every record during the walk, for a few re-scorings per distance instead of one per record.
pub(crate) fn frontier(s: &Scores<'_>, gold: u32, objective: &Objective) -> Vec<Found> {
    let walk = Walk::new(s);
    let bit = |mask: u32, k: usize| ((mask >> k) & 1) as usize;
    let exact_score = |mask: u32| s.score_bits(|k| bit(mask, k));
    let gold_score = exact_score(gold);
    let obj = Coef::of(objective);
    let window = 2.0 * obj.margin.abs() * score_tolerance(s, gold_score);
    // per distance: the largest incremental value so far, and labels below it by more than
    // `window` are never kept
    let mut top = [f64::NEG_INFINITY; LANES + 1];
    let mut threshold = [f64::NEG_INFINITY; LANES + 1];
    // (mask, incremental value, loss, size) of the labels kept, in enumeration order
    let mut kept: Vec<(u32, f64, f64, f64)> = Vec::with_capacity(256);
    walk.run(exact_score(0), gold, |mask, s_l, loss_l, size_l, c| {
        let v = obj.value(s_l - gold_score, loss_l, size_l);
        if v >= threshold[c] {
            kept.push((mask, v, loss_l, size_l));
            if v > top[c] {
                top[c] = v;
                threshold[c] = v - window;
            }
        }
    });
    let mut best: [Option<Found>; LANES + 1] = [None; LANES + 1];
    for &(mask, v, loss, size) in &kept {
        let c = loss as usize;
        if v < threshold[c] {
            continue; // more than 2·tol below the distance's largest incremental value
        }
        let margin = exact_score(mask) - gold_score;
        let p = obj.value(margin, loss, size);
        if best[c].is_none_or(|b| p > b.p) {
            best[c] = Some(Found { mask, margin, loss, size, p, q: 0.0 });
        }
    }
    best.into_iter().flatten().collect()
}

/// argmax of the score (predict in exact mode); ties go to the first label enumerated (the empty
/// label first).
pub(crate) fn argmax(s: &Scores<'_>) -> u32 {
    let q = EnumQuery {
        primary: Objective { margin: 1.0, ..Objective::default() },
        secondary: None,
        ban: &[],
        k: 1,
        cone: None,
    };
    enumerate(s, 0, &q)[0].mask
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::multilabel::tests::Rng;
    use bicrit_core::Terms;

    /// The frontier's definition, without screening: every label of the walk scored exactly, and
    /// per distance the first label enumerated of largest exact objective.
    fn frontier_by_definition(s: &Scores<'_>, gold: u32, objective: &Objective) -> Vec<Found> {
        let exact_score = |mask: u32| s.score_bits(|k| ((mask >> k) & 1) as usize);
        let gold_score = exact_score(gold);
        let obj = Coef::of(objective);
        let mut best: [Option<Found>; LANES + 1] = [None; LANES + 1];
        Walk::new(s).run(exact_score(0), gold, |mask, _, loss, size, _| {
            let (c, margin) = (loss as usize, exact_score(mask) - gold_score);
            let p = obj.value(margin, loss, size);
            if best[c].is_none_or(|b| p > b.p) {
                best[c] = Some(Found { mask, margin, loss, size, p, q: 0.0 });
            }
        });
        best.into_iter().flatten().collect()
    }

    #[test]
    fn frontier_is_the_first_exact_maximum_of_every_distance() {
        // small integer scores make exact ties (decided by enumeration order) frequent; K up to
        // 14 (yeast) so that the high bits run in Gray order over many blocks
        let mut rng = Rng(0x2545_F491_4F6C_DD1D);
        for case in 0..600 {
            let k = 1 + rng.below(14);
            let integer = rng.below(2) == 0;
            let draw = |rng: &mut Rng| if integer { rng.int(-2, 2) } else { 4.0 * rng.unit() - 2.0 };
            let theta: Vec<f64> = (0..k).map(|_| draw(&mut rng)).collect();
            let density = rng.below(3); // none, sparse, full
            let all: Vec<(usize, usize)> = (0..k).flat_map(|i| (i + 1..k).map(move |j| (i, j))).collect();
            let edges: Vec<(usize, usize)> =
                all.into_iter().filter(|_| density == 2 || (density == 1 && rng.below(4) == 0)).collect();
            let pair: Vec<f64> = (0..4 * edges.len()).map(|_| draw(&mut rng)).collect();
            let s = Scores { theta: theta.into(), pair: &pair, edges: &edges };
            let gold = rng.below(1 << k) as u32;
            let objective = Objective {
                margin: [1.0, 2.0, 0.5][rng.below(3)],
                terms: Terms {
                    loss: [0.0, 1.0, -0.5][rng.below(3)],
                    size: [0.0, 0.0, -1.0][rng.below(3)],
                    hamming: 0.0,
                },
            };
            let got = frontier(&s, gold, &objective);
            let want = frontier_by_definition(&s, gold, &objective);
            assert_eq!(got, want, "case {case}: K = {k}, integer scores {integer}");
            assert_eq!(got.len(), k + 1, "case {case}: one label per distance 0..=K");
        }
    }
}
