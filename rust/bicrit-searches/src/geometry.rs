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
    // Golden section from each end, so that a peak within 1e-7 of either end is resolved.
    for (from, to, flip) in [(a, b, false), (b, a, true)] {
        let f = |s: f64| -> Result<f64> {
            let (h, g) = at(from, to, s);
            psi.try_value(h, g)
        };
        let s = golden(&f, 0.0, 1.0)?;
        let v = f(s)?;
        consider(if flip { 1.0 - s } else { s }, v);
    }
    Ok(best)
}

/// Golden-section search for the maximiser of a unimodal function on [lo, hi].
fn golden(f: &dyn Fn(f64) -> Result<f64>, mut lo: f64, mut hi: f64) -> Result<f64> {
    const INV_PHI: f64 = 0.618_033_988_749_894_8;
    let mut x1 = hi - INV_PHI * (hi - lo);
    let mut x2 = lo + INV_PHI * (hi - lo);
    let (mut f1, mut f2) = (f(x1)?, f(x2)?);
    // 120 steps: 0.618^120 ≈ 1e-25, so a peak at 1e-9 from the start is located to 1e-16.
    for _ in 0..120 {
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
    Ok(0.5 * (lo + hi))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bicrit_surrogates::{ProbLoss, SlackRescaling};

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
