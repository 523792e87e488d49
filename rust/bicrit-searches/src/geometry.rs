//! Plane geometry shared by the searches: the upper-right chain of the convex hull of revealed
//! points, the maximum of a quasi-concave ψ on a segment, and scale-aware tolerances.

use bicrit_core::Result;
use bicrit_surrogates::Surrogate;

/// Relative tolerance of the value certificates: an oracle answer counts as "above" a line only
/// when it beats it by more than `REL_TOL` times the magnitude of the terms compared. At
/// coordinates up to 1e6 this is far above f64 rounding (~1e-16 relative) and far below any
/// difference a learner could use.
pub const REL_TOL: f64 = 1e-12;

/// Indices of the vertices of the upper-right chain of the convex hull of `pts` = (h, g): the
/// points that maximise h + λg for some λ ∈ [0, ∞], ordered by increasing g — from the O(0)
/// vertex (largest h, ties: largest g) to the O(∞) vertex (largest g, ties: largest h).
/// Collinear middle points are not vertices.
pub fn upper_right_chain(pts: &[(f64, f64)]) -> Vec<usize> {
    let mut chain = Vec::new();
    upper_right_chain_into(pts, &mut Vec::new(), &mut chain);
    chain
}

/// [`upper_right_chain`] into `chain`, with `cand` as work space (both cleared first): a search
/// reuses them from round to round instead of allocating.
pub fn upper_right_chain_into(pts: &[(f64, f64)], cand: &mut Vec<usize>, chain: &mut Vec<usize>) {
    cand.clear();
    chain.clear();
    if pts.is_empty() {
        return;
    }
    let lex = |a: (f64, f64), b: (f64, f64)| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1));
    let top_h = (0..pts.len()).max_by(|&i, &j| lex(pts[i], pts[j])).unwrap_or(0);
    let top_g = (0..pts.len()).max_by(|&i, &j| lex((pts[i].1, pts[i].0), (pts[j].1, pts[j].0))).unwrap_or(0);
    let (g_min, h_min) = (pts[top_h].1, pts[top_g].0);
    cand.extend((0..pts.len()).filter(|&i| pts[i].1 >= g_min && pts[i].0 >= h_min));
    // By g ascending, ties by h descending; keep the best h of each g.
    cand.sort_by(|&i, &j| pts[i].1.total_cmp(&pts[j].1).then(pts[j].0.total_cmp(&pts[i].0)));
    cand.dedup_by(|j, i| pts[*i].1 == pts[*j].1);
    // Upper hull of h as a function of g (x = g, y = h): keep clockwise turns only.
    for &p in cand.iter() {
        while chain.len() >= 2 {
            let (o, a) = (pts[chain[chain.len() - 2]], pts[chain[chain.len() - 1]]);
            let b = pts[p];
            let cross = (a.1 - o.1) * (b.0 - o.0) - (a.0 - o.0) * (b.1 - o.1);
            if cross >= 0.0 {
                chain.pop();
            } else {
                break;
            }
        }
        chain.push(p);
    }
}

/// The maximum of ψ on the segment from `a` to `b`: `(t, value)` with the point
/// (1 − t)·a + t·b. ψ is quasi-concave, hence unimodal on a segment (Lemma
/// `lem:optimum_on_edge`): closed form for products (h + s)·g, golden-section search otherwise.
/// The endpoints are always candidates, so the value is never below max(ψ(a), ψ(b)).
pub fn max_on_segment(psi: &dyn Surrogate, a: (f64, f64), b: (f64, f64)) -> Result<(f64, f64)> {
    // The point at distance s from `from` toward `to`: precise for s near 0 at either end.
    let at = |from: (f64, f64), to: (f64, f64), s: f64| {
        (from.0 + s * (to.0 - from.0), from.1 + s * (to.1 - from.1))
    };
    let (fa, fb) = (psi.try_value(a.0, a.1)?, psi.try_value(b.0, b.1)?);
    let mut best = if fb > fa { (1.0, fb) } else { (0.0, fa) };
    let mut consider = |t: f64, f: f64| {
        if f > best.1 && t > 0.0 && t < 1.0 {
            best = (t, f);
        }
    };
    if let Some(shift) = psi.product_shift() {
        // ψ(t) = (H_a + tΔH)(g_a + tΔg): a parabola, concave when ΔH·Δg < 0.
        let (ha, dh, ga, dg) = (a.0 + shift, b.0 - a.0, a.1, b.1 - a.1);
        let (quad, lin) = (dh * dg, ha * dg + ga * dh);
        if quad < 0.0 {
            let t = -lin / (2.0 * quad);
            if t > 0.0 && t < 1.0 {
                let (h, g) = at(a, b, t);
                consider(t, psi.try_value(h, g)?);
            }
        }
        return Ok(best);
    }
    // Unimodal: a strictly negative slope at an end toward the other means no interior maximum.
    // (A zero slope may be an underflow far in a tail — then search anyway.)
    let (ga_, gb_) = (psi.try_grad(a.0, a.1)?, psi.try_grad(b.0, b.1)?);
    let (da, db) = (ga_.0 * (b.0 - a.0) + ga_.1 * (b.1 - a.1), gb_.0 * (a.0 - b.0) + gb_.1 * (a.1 - b.1));
    if da < 0.0 || db < 0.0 {
        return Ok(best);
    }
    // Golden section from each end, so that a peak within 1e-7 of either end is resolved. The
    // search from `b` is skipped when the one from `a` found the peak in a's half, strictly above
    // both ends and without a tie on the way (a tie — a plateau, or values underflowing to 0 —
    // can send golden section away from the peak; the search from the other end covers that).
    for (from, to, flip) in [(a, b, false), (b, a, true)] {
        let f = |s: f64| -> Result<f64> {
            let (h, g) = at(from, to, s);
            psi.try_value(h, g)
        };
        let (s, tied) = golden(&f, 0.0, 1.0)?;
        let v = f(s)?;
        consider(if flip { 1.0 - s } else { s }, v);
        if !flip && !tied && s <= 0.5 && v > fa.max(fb) {
            break;
        }
    }
    Ok(best)
}

/// Golden-section search for the maximiser of a unimodal function on [lo, hi], lo = 0 the end
/// it is precise at: it stops when the bracket is below `GOLDEN_RTOL` of its distance from lo.
/// Near an interior maximum ψ is flat to rounding over a relative width ≈ √ε ≈ 1e-8, so a
/// narrower bracket changes the value by rounding only.
/// Also returns whether two compared values were equal on the way.
fn golden(f: &dyn Fn(f64) -> Result<f64>, mut lo: f64, mut hi: f64) -> Result<(f64, bool)> {
    const INV_PHI: f64 = 0.618_033_988_749_894_8;
    const GOLDEN_RTOL: f64 = 1e-10;
    let mut x1 = hi - INV_PHI * (hi - lo);
    let mut x2 = lo + INV_PHI * (hi - lo);
    let (mut f1, mut f2) = (f(x1)?, f(x2)?);
    let mut tied = false;
    // At most 120 steps: 0.618^120 ≈ 1e-25, so a peak at 1e-9 from the start is located to 1e-16.
    for _ in 0..120 {
        if hi - lo <= GOLDEN_RTOL * hi {
            break;
        }
        // Equal values in a wide bracket: a plateau (in a narrow one: rounding near the peak).
        tied |= f1 == f2 && hi - lo > 1e-6 * hi;
        if f1 < f2 {
            lo = x1;
            x1 = x2;
            f1 = f2;
            x2 = lo + INV_PHI * (hi - lo);
            f2 = f(x2)?;
        } else {
            hi = x2;
            x2 = x1;
            f2 = f1;
            x1 = hi - INV_PHI * (hi - lo);
            f1 = f(x1)?;
        }
    }
    Ok((0.5 * (lo + hi), tied))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bicrit_surrogates::{ProbLoss, SlackRescaling};

    /// The maximum the early-stopping, one-sided-when-possible search must match: golden section
    /// for 120 steps from each end (the search before it stopped early), and a dense grid.
    fn reference(psi: &dyn Surrogate, a: (f64, f64), b: (f64, f64)) -> f64 {
        let at = |from: (f64, f64), to: (f64, f64), s: f64| {
            (from.0 + s * (to.0 - from.0), from.1 + s * (to.1 - from.1))
        };
        let mut best = psi.value(a.0, a.1).max(psi.value(b.0, b.1));
        for (from, to) in [(a, b), (b, a)] {
            let f = |s: f64| -> f64 {
                let (h, g) = at(from, to, s);
                psi.value(h, g)
            };
            let (mut lo, mut hi) = (0.0, 1.0);
            for _ in 0..120 {
                let (x1, x2) =
                    (hi - 0.618_033_988_749_894_8 * (hi - lo), lo + 0.618_033_988_749_894_8 * (hi - lo));
                if f(x1) < f(x2) {
                    lo = x1;
                } else {
                    hi = x2;
                }
            }
            best = best.max(f(0.5 * (lo + hi)));
        }
        for i in 0..=20_000 {
            let (h, g) = at(a, b, i as f64 / 20_000.0);
            best = best.max(psi.value(h, g));
        }
        best
    }

    #[test]
    fn segment_maximum_matches_two_sided_golden_section_and_a_grid() {
        use bicrit_surrogates::{BetaScaling, LogLoss, ProbLossConvex};
        let beta = BetaScaling::new(0.5).unwrap();
        let surrogates: [&dyn Surrogate; 4] = [&ProbLoss, &ProbLossConvex, &LogLoss, &beta];
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut unif = |lo: f64, hi: f64| {
            state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            lo + (hi - lo) * ((state >> 11) as f64 / (1u64 << 53) as f64)
        };
        let mut cases: Vec<((f64, f64), (f64, f64))> = (0..400)
            .map(|_| ((unif(-30.0, 6.0), unif(0.0, 40.0)), (unif(-30.0, 6.0), unif(0.0, 40.0))))
            .collect();
        // Peaks close to an end, and ProbLoss underflowing to 0 over most of the segment.
        cases.extend([
            ((-1.0, 1.0), (-1.0 + 1e-8, 1.0 + 1e-7)),
            ((-60.0, 1.0), (-0.5, 2.0)),
            ((-0.5, 2.0), (-60.0, 1.0)),
        ]);
        for psi in surrogates {
            for &(a, b) in &cases {
                let (t, v) = max_on_segment(psi, a, b).unwrap();
                let r = reference(psi, a, b);
                assert!((0.0..=1.0).contains(&t));
                assert!(v >= r - 1e-12 * (1.0 + r.abs()), "{}: {a:?}–{b:?}: {v} < {r}", psi.name());
                let (h, g) = (a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1));
                assert!((psi.value(h, g) - v).abs() <= 1e-12 * (1.0 + v.abs()));
            }
        }
    }

    /// A quasi-concave ψ that is 0 but on a bump at h ∈ (0.9, 1): golden section from h = 0 sees
    /// only ties and walks away from the bump.
    struct Bump;
    impl Surrogate for Bump {
        fn name(&self) -> &str {
            "bump"
        }
        fn value(&self, h: f64, _g: f64) -> f64 {
            (1.0 - 400.0 * (h - 0.95) * (h - 0.95)).max(0.0)
        }
        fn grad(&self, h: f64, g: f64) -> (f64, f64) {
            (if self.value(h, g) > 0.0 { -800.0 * (h - 0.95) } else { 0.0 }, 0.0)
        }
    }

    #[test]
    fn a_plateau_before_the_peak_does_not_hide_it() {
        let (t, v) = max_on_segment(&Bump, (0.0, 0.0), (1.0, 0.0)).unwrap();
        assert!((v - 1.0).abs() < 1e-12 && (t - 0.95).abs() < 1e-6, "{t} {v}");
        assert_eq!(v, reference(&Bump, (0.0, 0.0), (1.0, 0.0)));
    }

    #[test]
    fn chain_of_a_square_with_inner_and_collinear_points() {
        // (h, g): corners, an inner point and a point in the middle of the top-right edge.
        let pts = [(0.0, 0.0), (2.0, 0.0), (0.0, 2.0), (1.0, 1.0), (2.0, 2.0), (2.0, 1.0), (0.5, 0.5)];
        assert_eq!(upper_right_chain(&pts), vec![4]);
        let pts = [(3.0, 0.0), (0.0, 3.0), (2.0, 2.0), (1.5, 1.5), (2.5, 1.0)];
        // (2.5, 1) lies on the segment (3, 0)–(2, 2): collinear, not a vertex.
        assert_eq!(upper_right_chain(&pts), vec![0, 2, 1]);
        assert_eq!(upper_right_chain(&[(1.0, 1.0)]), vec![0]);
        assert!(upper_right_chain(&[]).is_empty());
    }

    #[test]
    fn segment_maximum_closed_form_and_golden_agree() {
        let (a, b) = ((2.0, 4.0), (4.0, 2.0));
        let (t, v) = max_on_segment(&SlackRescaling, (a.0 - 1.0, a.1), (b.0 - 1.0, b.1)).unwrap();
        assert!((t - 0.5).abs() < 1e-12 && (v - 9.0).abs() < 1e-12);
        let (t2, v2) = max_on_segment(&ProbLoss, (-1.0, 1.0), (-3.0, 9.0)).unwrap();
        let grid = (0..=10_000)
            .map(|i| {
                let t = i as f64 / 10_000.0;
                ProbLoss.value(-1.0 - 2.0 * t, 1.0 + 8.0 * t)
            })
            .fold(f64::MIN, f64::max);
        assert!(v2 >= grid - 1e-9 && (0.0..=1.0).contains(&t2));
    }
}
