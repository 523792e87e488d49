//! Randomized property tests of every search against brute force over explicit point sets:
//! ties, duplicated and collinear points, all labels with h ≤ 0, magnitudes 1e-6 … 1e6.
//!
//! The brute force is written independently of the code under test: the integral optimum
//! enumerates the points; the hull optimum maximises ψ on every segment between two points (a
//! grid, then a ternary refinement — ψ is unimodal on a segment); chain vertices are the points
//! that are the unique λ-oracle answer on an interval of λ of positive length, plus the two
//! lexicographic extremes.
//!
//! `BICRIT_CASES` sets the number of random sets per surrogate (default 400; CI-sized) and
//! `BICRIT_SEED` the seed. The
//! thousands of cases of the acceptance test: `BICRIT_CASES=5000 cargo test --release -p
//! bicrit-searches --test brute_force`.
//!
//! Tolerances: values are compared with an absolute tolerance of 1e-9 × the largest |ψ| among the
//! points (the scale of the problem: at coordinates 1e6 the products reach 1e12, and f64 rounding
//! of h + λg alone is ~1e-16 of that); angular search may also ignore labels with Φ below its
//! floor 1e-12·ĤĜ when no positive label is known (documented in the module).

use bicrit_searches::{PointSetOracle, SearchSpec};
use bicrit_surrogates::{by_name, Surrogate};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unif(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A random point set: (h, g, gold index). `sign_g` = −1 for Micro-F1 (g ≤ 0).
fn random_set(r: &mut Rng, nonneg_g: bool, microf1: bool) -> (Vec<f64>, Vec<f64>, Option<usize>) {
    let n = 1 + r.below(14) as usize;
    let scale = 10f64.powf(-6.0 + 12.0 * r.unif());
    let mode = r.below(4);
    let (mut h, mut g) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let (a, b) = match mode {
            // Small integer grid: ties and duplicates.
            0 => (r.below(7) as f64 - 3.0, r.below(6) as f64),
            // Collinear: points on h = 4 − 2g (integer g) plus noise-free extras.
            1 => {
                let gg = r.below(5) as f64;
                (4.0 - 2.0 * gg, gg)
            }
            // Every label with h ≤ 0.
            2 => (-3.0 * r.unif(), 5.0 * r.unif()),
            _ => (4.0 * r.unif() - 2.0, 5.0 * r.unif()),
        };
        h.push(a * scale);
        g.push(b * scale);
    }
    if microf1 {
        // g = −(|y| + |y_i|) ≤ −|y_i| < 0: shift every g below zero; the gold is (0, −2|y_i|).
        let gi = 1.0 + r.below(3) as f64;
        for v in g.iter_mut() {
            *v = -(*v + gi * scale);
        }
        h.push(0.0);
        g.push(-2.0 * gi * scale);
        return (h, g, Some(n));
    }
    if !nonneg_g {
        for v in g.iter_mut() {
            *v -= 2.0 * scale * r.unif();
        }
    }
    if r.below(5) > 0 {
        h.push(0.0);
        g.push(0.0);
        return (h, g, Some(n));
    }
    (h, g, None)
}

fn integral_opt(psi: &dyn Surrogate, h: &[f64], g: &[f64]) -> f64 {
    h.iter().zip(g).map(|(&a, &b)| psi.value(a, b)).fold(f64::NEG_INFINITY, f64::max)
}

fn segment_max(psi: &dyn Surrogate, a: (f64, f64), b: (f64, f64)) -> f64 {
    let f = |t: f64| psi.value(a.0 + t * (b.0 - a.0), a.1 + t * (b.1 - a.1));
    // A uniform grid plus points crowding both ends (peaks near an end at large magnitudes).
    // Only the half next to `a`: there a + t(b − a) is exact to rounding of the point itself; the
    // caller searches both directions.
    let mut ts: Vec<f64> = (0..=32).map(|i| i as f64 / 64.0).collect();
    for k in 1..=16 {
        ts.push(10f64.powi(-k));
    }
    ts.sort_by(|x, y| x.partial_cmp(y).unwrap());
    let vals: Vec<f64> = ts.iter().map(|&t| f(t)).collect();
    let k = (0..ts.len()).max_by(|&i, &j| vals[i].total_cmp(&vals[j])).unwrap();
    let (mut lo, mut hi) = (ts[k.max(1) - 1], ts[(k + 1).min(ts.len() - 1)]);
    for _ in 0..100 {
        let (m1, m2) = (lo + (hi - lo) / 3.0, hi - (hi - lo) / 3.0);
        if f(m1) < f(m2) {
            lo = m1;
        } else {
            hi = m2;
        }
    }
    vals[k].max(f(0.5 * (lo + hi)))
}

fn hull_opt(psi: &dyn Surrogate, h: &[f64], g: &[f64]) -> f64 {
    let mut best = integral_opt(psi, h, g);
    for i in 0..h.len() {
        for j in i + 1..h.len() {
            // Each half from its own end: a peak within 1e-7 of an end needs t near 0.
            best = best.max(segment_max(psi, (h[i], g[i]), (h[j], g[j])));
            best = best.max(segment_max(psi, (h[j], g[j]), (h[i], g[i])));
        }
    }
    best
}

/// Number of distinct vertices of the λ ∈ [0, ∞] chain.
fn chain_vertices(h: &[f64], g: &[f64]) -> usize {
    let mut pts: Vec<(f64, f64)> = h.iter().copied().zip(g.iter().copied()).collect();
    pts.sort_by(|a, b| a.partial_cmp(b).unwrap());
    pts.dedup();
    let mut count = 0;
    for (i, p) in pts.iter().enumerate() {
        let (mut lo, mut hi) = (0.0f64, f64::INFINITY);
        for (j, q) in pts.iter().enumerate() {
            if i == j {
                continue;
            }
            // p beats q at λ: (h_p − h_q) + λ(g_p − g_q) ≥ 0.
            let (dh, dg) = (p.0 - q.0, p.1 - q.1);
            if dg > 0.0 {
                lo = lo.max(-dh / dg);
            } else if dg < 0.0 {
                hi = hi.min(dh / -dg);
            } else if dh < 0.0 {
                hi = -1.0;
            }
        }
        let top_h = pts.iter().all(|q| (q.0, q.1) <= (p.0, p.1));
        let top_g = pts.iter().all(|q| (q.1, q.0) <= (p.1, p.0));
        if lo < hi || top_h || top_g {
            count += 1;
        }
    }
    count
}

/// `BICRIT_SEED` varies the random sets (default: fixed).
fn seed(base: u64) -> u64 {
    base ^ std::env::var("BICRIT_SEED")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0)
        .wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

fn cases() -> usize {
    std::env::var("BICRIT_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400)
}

const SURROGATES: [(&str, &[(&str, f64)]); 11] = [
    ("margin", &[]),
    ("beta", &[("beta", 0.0)]),
    ("generalized", &[("alpha", 1.0), ("beta", 0.0)]),
    ("slack", &[]),
    ("generalized", &[("alpha", 1.5), ("beta", 0.75)]),
    ("beta", &[("beta", 0.5)]),
    ("beta", &[("beta", 1.0)]),
    ("log", &[]),
    ("probloss", &[]),
    ("probloss-convex", &[]),
    ("microf1", &[]),
];

#[test]
fn convex_hull_and_integral_recovery_match_brute_force() {
    let mut r = Rng(seed(0x9e37_79b9_7f4a_7c15).max(1));
    for (name, params) in SURROGATES {
        let psi = by_name(name, params).unwrap();
        let nonneg = name != "margin";
        for case in 0..cases() {
            let (h, g, gold) = random_set(&mut r, nonneg, name == "microf1");
            let scale = h.iter().zip(&g).map(|(&a, &b)| psi.value(a, b).abs()).fold(1e-300, f64::max);
            let (iopt, hopt) = (integral_opt(psi.as_ref(), &h, &g), hull_opt(psi.as_ref(), &h, &g));
            let tol = 1e-9 * scale.max(hopt.abs());
            let ctx = || format!("{name} case {case}: h = {h:?}, g = {g:?}, gold = {gold:?}");
            let mk = || {
                PointSetOracle::new(h.clone(), g.clone(), gold)
                    .map(|o| if gold.is_none() { o.without_gold() } else { o })
                    .unwrap()
            };

            // ψ is quasi-concave and increasing on its super-level set of ψ(gold) = 0 only: without
            // a gold label the search may start (and stay) where ψ decreases in g, so there is
            // nothing to guarantee but validity.
            let guaranteed = gold.is_some();
            let out = SearchSpec::from_name("convex-hull")
                .unwrap()
                .run(&mut mk(), psi.as_ref(), None, None)
                .unwrap();
            assert!(out.value <= hopt + tol, "hull value {} above {hopt}; {}", out.value, ctx());
            if !guaranteed {
                continue;
            }
            assert!((out.value - hopt).abs() <= tol, "hull value {} vs {hopt}; {}", out.value, ctx());
            assert!(out.upper_bound.unwrap() >= hopt - tol, "{}", ctx());
            let v = chain_vertices(&h, &g);
            assert!(out.calls.total() <= v + 1, "hull calls {} > {v} + 1; {}", out.calls.total(), ctx());
            // ψ = h + λg (margin rescaling): the one call at λ is the answer, no certificate call
            let exact = psi.exact_lambda().is_some();
            let linear =
                [(2.0, 3.0), (-1.0, 0.5), (0.25, 7.0)].iter().all(|&(a, b)| psi.value(a, b) == a + b);
            assert_eq!(exact, linear, "{name}: exact_lambda vs ψ = h + g");
            if exact {
                assert_eq!(out.calls.total(), 1, "{}", ctx());
            }
            let w: f64 = out.answer.iter().map(|i| i.weight).sum();
            assert!((w - 1.0).abs() < 1e-12);

            for rec in ["convex-hull-ban", "convex-hull-kbest"] {
                let out =
                    SearchSpec::from_name(rec).unwrap().run(&mut mk(), psi.as_ref(), None, None).unwrap();
                assert!((out.value - iopt).abs() <= tol, "{rec} value {} vs {iopt}; {}", out.value, ctx());
                assert_eq!(out.answer.len(), 1);
                if exact {
                    assert_eq!(out.calls.total(), 1, "{rec}: {}", ctx());
                }
                assert!(out.upper_bound.unwrap() >= iopt - tol, "{}", ctx());
            }
        }
    }
}

#[test]
fn product_form_searches_match_brute_force() {
    let mut r = Rng(seed(0x2545_f491_4f6c_dd1d).max(1));
    let psi = by_name("slack", &[]).unwrap();
    for case in 0..3 * cases() {
        let (h, g, gold) = random_set(&mut r, true, false);
        let m = h.len();
        let scale = h.iter().zip(&g).map(|(&a, &b)| ((a + 1.0) * b).abs()).fold(1e-300, f64::max);
        let tol = 1e-9
            * scale.max(
                h.iter().fold(0.0f64, |a, b| a.max(b.abs() + 1.0)) * g.iter().fold(0.0f64, |a, b| a.max(*b)),
            );
        let (iopt, hopt) = (integral_opt(psi.as_ref(), &h, &g), hull_opt(psi.as_ref(), &h, &g));
        let floor = if gold.is_some() { iopt.max(0.0) } else { iopt };
        let ctx = || format!("case {case}: h = {h:?}, g = {g:?}, gold = {gold:?}");
        let mk = || {
            PointSetOracle::new(h.clone(), g.clone(), gold)
                .map(|o| if gold.is_none() { o.without_gold() } else { o })
                .unwrap()
        };

        // The thesis's start (two extreme calls, then ≤ 2M + 1) and a given λ₀ (≤ 2M + 1).
        for (lambda0, budget) in [(None, 2 * m + 3), (Some(0.7), 2 * m + 1)] {
            let mut spec = SearchSpec::from_name("angular").unwrap();
            if let Some(l) = lambda0 {
                spec.set("lambda0", l).unwrap();
            }
            let out = spec.run(&mut mk(), psi.as_ref(), None, None).unwrap();
            // With no gold label, angular still only looks for labels with Φ > 0.
            let target = if gold.is_some() { iopt } else { iopt.max(0.0) };
            if target > 0.0 || gold.is_some() {
                assert!(
                    out.value >= target - tol,
                    "angular {lambda0:?}: {} vs {target}; {}",
                    out.value,
                    ctx()
                );
            }
            assert!(out.value <= iopt + tol, "{}", ctx());
            assert!(
                out.calls.total() <= budget,
                "angular {lambda0:?}: {} calls > {budget}; {}",
                out.calls.total(),
                ctx()
            );
            assert!(out.upper_bound.unwrap() >= floor - tol, "{}", ctx());
        }

        for name in ["bisecting", "binary", "sarawagi"] {
            let xi = 0.5 * iopt.max(0.0);
            let out =
                SearchSpec::from_name(name).unwrap().run(&mut mk(), psi.as_ref(), None, Some(xi)).unwrap();
            assert!(out.value <= iopt + tol, "{name} above the integral optimum; {}", ctx());
            if let Some(u) = out.upper_bound {
                assert!(
                    u >= hopt.max(if gold.is_some() { 0.0 } else { f64::NEG_INFINITY }) - tol,
                    "{name} bound {u} < {hopt}; {}",
                    ctx()
                );
            }
        }
    }
}

/// `frontier` on point sets: the best point by ψ over every point (one call, certified), for every
/// surrogate — on a point set g is given directly, so Micro-F1's coordinates are fine too.
#[test]
fn frontier_matches_brute_force() {
    let mut r = Rng(seed(0x6a09_e667_f3bc_c909).max(1));
    for (name, params) in SURROGATES {
        let psi = by_name(name, params).unwrap();
        let nonneg = name != "margin";
        for case in 0..cases() {
            let (h, g, gold) = random_set(&mut r, nonneg, name == "microf1");
            let scale = h.iter().zip(&g).map(|(&a, &b)| psi.value(a, b).abs()).fold(1e-300, f64::max);
            let iopt = integral_opt(psi.as_ref(), &h, &g);
            let tol = 1e-12 * scale;
            let ctx = || format!("{name} case {case}: h = {h:?}, g = {g:?}, gold = {gold:?}");
            let mut o = PointSetOracle::new(h.clone(), g.clone(), gold)
                .map(|o| if gold.is_none() { o.without_gold() } else { o })
                .unwrap();
            let out =
                SearchSpec::from_name("frontier").unwrap().run(&mut o, psi.as_ref(), None, None).unwrap();
            assert!((out.value - iopt).abs() <= tol, "frontier {} vs {iopt}; {}", out.value, ctx());
            assert_eq!(out.upper_bound, Some(out.value));
            assert_eq!((out.calls.frontier, out.calls.total(), o.calls()), (1, 1, 1));
            assert_eq!(out.answer.len(), 1);
            let a = &out.answer[0];
            assert_eq!(o.point(a.label), (a.h, a.g), "{}", ctx());
            // ties: no point of equal value with a larger h, or equal h and smaller g (gold aside)
            if !out.is_gold {
                for (&b, &c) in h.iter().zip(&g) {
                    if psi.value(b, c) == out.value {
                        assert!(
                            b < a.h || (b == a.h && c >= a.g),
                            "tie rule: ({b}, {c}) vs {a:?}; {}",
                            ctx()
                        );
                    }
                }
            } else {
                assert_eq!(Some(a.label), gold);
            }
        }
    }
}
