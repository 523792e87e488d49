//! Certificates from earlier answers, without an oracle call.
//!
//! The answer y of a query at λ maximises h + λg over the labels the oracle may return (thesis
//! eq. `lambda_oracle`; λ = 0: h, λ = ∞: g, lexicographic queries): every such label lies below
//! the plane h + λg ≤ K with K the answer's line value. A ban list only grows during a search, so
//! a plane of an earlier query still holds for the labels the oracle may return now; so does a
//! bound g ≤ G over every label ([`bicrit_core::LambdaOracle::g_bound`], a plane at λ = ∞).
//!
//! The convex hull search's certificate (thesis Theorem `thm:optimal_lambda`) asks whether the
//! answer at λ lies above the line through the best point p̂; when the largest line value any
//! label below the planes can have is not above it, the answer cannot be either and the query
//! would certify: [`line_bound`] gives that largest value by weak LP duality — h + λg is a
//! non-negative combination of two planes' left sides, h + λ_i g and h + λ_j g with
//! λ_i ≤ λ ≤ λ_j (or h + λ_i g and g ≤ G), so it is at most the same combination of their K.

use bicrit_core::Lambda;

/// The largest value of h + λg (λ = 0: h; λ = ∞: g) over the points below every plane
/// (λ_j, K_j) (h + λ_j g ≤ K_j; λ_j = 0: h ≤ K_j; λ_j = ∞: g ≤ K_j), or an upper bound on it
/// from pairs of planes; `None` when the planes do not bound it. −∞ when a plane has K = −∞ (no
/// label left).
pub(crate) fn line_bound(planes: &[(Lambda, f64)], lambda: Lambda) -> Option<f64> {
    if planes.iter().any(|&(_, k)| k == f64::NEG_INFINITY) {
        return Some(f64::NEG_INFINITY);
    }
    let min_of =
        |want: fn(Lambda) -> bool| planes.iter().filter(|(l, _)| want(*l)).map(|&(_, k)| k).reduce(f64::min);
    let g_max = min_of(|l| matches!(l, Lambda::Infinity));
    let lt = match lambda {
        Lambda::Infinity => return g_max,
        Lambda::Zero => return min_of(|l| matches!(l, Lambda::Zero)),
        Lambda::Finite(l) => l,
    };
    // finite planes (λ = 0 as slope 0) below, at and above the target slope
    let slope = |l: Lambda| match l {
        Lambda::Zero => Some(0.0),
        Lambda::Finite(x) => Some(x),
        Lambda::Infinity => None,
    };
    let finite: Vec<(f64, f64)> = planes.iter().filter_map(|&(l, k)| slope(l).map(|s| (s, k))).collect();
    let mut best: Option<f64> = None;
    let mut keep = |v: f64| best = Some(best.map_or(v, |b: f64| b.min(v)));
    for &(li, ki) in &finite {
        if li == lt {
            keep(ki);
        } else if li < lt {
            if let Some(g) = g_max {
                // h + λg = (h + λ_i g) + (λ − λ_i)·g ≤ K_i + (λ − λ_i)·G
                keep(ki + (lt - li) * g);
            }
            for &(lj, kj) in finite.iter().filter(|(lj, _)| *lj > lt) {
                // h + λg = (1 − a)(h + λ_i g) + a(h + λ_j g) with a = (λ − λ_i)/(λ_j − λ_i)
                let a = (lt - li) / (lj - li);
                let b = (lj - lt) / (lj - li);
                keep(b * ki + a * kj);
            }
        }
    }
    best
}

/// An upper bound on h + λg (λ = 0: h) over the points below every plane (λ_j, K_j) whose g is
/// at least `floor` ([`bicrit_core::LambdaOracle::g_floor`]: every label but the gold one): a
/// plane of larger slope λ_j gives h + λg = (h + λ_j g) − (λ_j − λ)·g ≤ K_j − (λ_j − λ)·floor.
/// `None` when no plane has a larger finite slope (λ = ∞ is never bounded this way).
pub(crate) fn floor_bound(planes: &[(Lambda, f64)], lambda: Lambda, floor: f64) -> Option<f64> {
    let lt = match lambda {
        Lambda::Zero => 0.0,
        Lambda::Finite(l) => l,
        Lambda::Infinity => return None,
    };
    planes
        .iter()
        .filter_map(|&(l, k)| match l {
            Lambda::Finite(lj) if lj > lt => Some(k - (lj - lt) * floor),
            _ => None,
        })
        .reduce(f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Brute force over a grid of points: the largest line value among those below every plane
    /// with g ≥ `g_min` never exceeds the bound `u`.
    fn check_grid(planes: &[(Lambda, f64)], lambda: Lambda, u: f64, g_min: f64) {
        let below = |h: f64, g: f64| {
            planes.iter().all(|&(l, k)| match l {
                Lambda::Zero => h <= k,
                Lambda::Infinity => g <= k,
                Lambda::Finite(x) => h + x * g <= k,
            })
        };
        for i in -60..=60 {
            for j in -60..=60 {
                let (h, g) = (i as f64 * 0.25, j as f64 * 0.25);
                if g >= g_min && below(h, g) {
                    let v = match lambda {
                        Lambda::Zero => h,
                        Lambda::Infinity => g,
                        Lambda::Finite(x) => h + x * g,
                    };
                    assert!(
                        v <= u + 1e-9,
                        "({h}, {g}): {v} above the bound {u} of {planes:?} at {lambda:?}, g ≥ {g_min}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_bound_is_the_lp_optimum_and_never_below_a_point() {
        // a label at (116.3, 31) after the queries λ = 1 (answer (117.3, 30)) and λ = ∞
        let planes = [(Lambda::Finite(1.0), 147.3), (Lambda::Infinity, 31.0)];
        let u = line_bound(&planes, Lambda::Finite(50.0)).unwrap();
        assert!((u - (116.3 + 50.0 * 31.0)).abs() < 1e-9, "{u}");
        assert_eq!(line_bound(&planes, Lambda::Infinity), Some(31.0));
        assert_eq!(line_bound(&planes, Lambda::Zero), None);
        assert_eq!(line_bound(&planes, Lambda::Finite(0.5)), None);
        // between two finite planes: the vertex where they cross, (1, 2) here
        let planes = [(Lambda::Finite(1.0), 3.0), (Lambda::Finite(3.0), 7.0)];
        assert!((line_bound(&planes, Lambda::Finite(2.0)).unwrap() - 5.0).abs() < 1e-12);
        assert_eq!(line_bound(&planes, Lambda::Finite(3.0)), Some(7.0));
        assert_eq!(
            line_bound(&[(Lambda::Finite(2.0), f64::NEG_INFINITY)], Lambda::Zero),
            Some(f64::NEG_INFINITY)
        );
    }

    #[test]
    fn random_planes_against_a_grid() {
        // line_bound over every point below the planes, floor_bound over those with g ≥ floor
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let lambdas =
            [Lambda::Zero, Lambda::Infinity, Lambda::Finite(0.5), Lambda::Finite(1.0), Lambda::Finite(3.0)];
        let mut floored = 0;
        for _ in 0..400 {
            let n = 1 + (next() % 4) as usize;
            let planes: Vec<(Lambda, f64)> =
                (0..n).map(|_| (lambdas[(next() % 5) as usize], (next() % 41) as f64 * 0.25 - 5.0)).collect();
            let floor = (next() % 9) as f64 * 0.5 - 1.0;
            for &l in lambdas.iter().chain(&[Lambda::Finite(2.0)]) {
                if let Some(u) = line_bound(&planes, l) {
                    check_grid(&planes, l, u, f64::NEG_INFINITY);
                }
                if let Some(u) = floor_bound(&planes, l, floor) {
                    check_grid(&planes, l, u, floor);
                    floored += 1;
                }
            }
        }
        assert!(floored > 100, "{floored}");
    }
}
