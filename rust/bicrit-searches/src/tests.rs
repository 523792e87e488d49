//! Unit tests of the spec and of each search on small point sets, including the thesis's
//! negative results (Theorem `loracle_l1`, the A/B/C lemma of §`sec:convex_hull_search`).

use bicrit_core::{Capabilities, Error, Lambda, LambdaOracle, PlaneQuery, Point, Result};
use bicrit_surrogates::{by_name, MarginRescaling, SlackRescaling, Surrogate};

use crate::{PointSetOracle, SearchSpec};

fn run(name: &str, o: &mut PointSetOracle, psi: &dyn Surrogate) -> crate::Outcome<usize> {
    SearchSpec::from_name(name).unwrap().run(o, psi, None, Some(0.0)).unwrap()
}

fn labels(out: &crate::Outcome<usize>) -> Vec<usize> {
    out.answer.iter().map(|i| i.label).collect()
}

/// Theorem `loracle_l1`'s three labels (plus gold), in slack coordinates (h = H − 1): A = [ε, Ĝ],
/// B = [Ĥ, ε], C = [Ĥ/2, Ĝ/2] with Ĥ = Ĝ = 10, ε = 0.01; C sits on the segment AB's lower side.
fn theorem_set() -> PointSetOracle {
    let (e, big) = (0.01, 10.0);
    let pts = [(0.0 - 1.0, 0.0), (e - 1.0, big), (big - 1.0, e), (big / 2.0 - 1.0, big / 2.0)];
    // The gold label of slack rescaling is m = 0, L = 0: H = 1, G = 0. Keep it too.
    let mut h: Vec<f64> = pts.iter().map(|p| p.0).collect();
    let mut g: Vec<f64> = pts.iter().map(|p| p.1).collect();
    h[0] = 0.0;
    g[0] = 0.0;
    PointSetOracle::new(h, g, Some(0)).unwrap()
}

#[test]
fn theorem_loracle_l1_lambda_only_searches_return_a_poor_label() {
    let psi = SlackRescaling;
    let best = psi.value(4.0, 5.0); // C: (Ĥ/2)(Ĝ/2) = 25
    for name in ["bisecting", "binary", "sarawagi", "convex-hull"] {
        let mut o = theorem_set();
        let out = SearchSpec::from_name(name).unwrap().run(&mut o, &psi, None, Some(1.0)).unwrap();
        let integral_value = out.answer.iter().map(|i| psi.value(i.h, i.g)).fold(f64::MIN, f64::max);
        assert!(integral_value < 0.2 * best, "{name}: integral label value {integral_value}");
        assert!(!labels(&out).contains(&3), "{name} found C through the λ-oracle alone");
    }
    // The hull search's fractional value reaches (at least) the optimum ...
    let out = run("convex-hull", &mut theorem_set(), &psi);
    assert_eq!(out.answer.len(), 2);
    assert!(out.value >= best, "fractional value {}", out.value);
    // ... and ban-list / k-best recovery and angular search find C exactly.
    for name in ["convex-hull-ban", "convex-hull-kbest", "angular"] {
        let out = run(name, &mut theorem_set(), &psi);
        assert_eq!(labels(&out), vec![3], "{name}");
        assert!((out.value - best).abs() < 1e-12);
        assert!(out.upper_bound.unwrap() >= best - 1e-12);
    }
}

/// The A/B/C lemma: A = [2, 4], B = [4, 2], C = [3 + ε, 3] with ψ = h·g (slack with h = H − 1).
fn abc(eps: f64) -> PointSetOracle {
    PointSetOracle::new(vec![1.0, 3.0, 2.0 + eps], vec![4.0, 2.0, 3.0], None).unwrap()
}

#[test]
fn abc_lemma_hull_search_finds_c_while_lambda_avoiding_one_misses_it() {
    let eps = 0.01;
    // Any λ outside (1 − ε, 1 + ε) returns A or B (here on a grid of λ).
    let mut o = abc(eps);
    for i in 0..200 {
        let lam = 0.05 * (i as f64 + 1.0);
        if (lam - 1.0).abs() < eps {
            continue;
        }
        let y = o.query(&PlaneQuery::lambda(Lambda::Finite(lam))).unwrap()[0].label;
        assert!(y == 0 || y == 1, "λ = {lam} returned {y}");
    }
    for name in ["convex-hull", "angular", "convex-hull-ban"] {
        let out = run(name, &mut abc(eps), &SlackRescaling);
        assert_eq!(labels(&out), vec![2], "{name}");
        assert!(out.calls.total() <= 5, "{name}: {:?}", out.calls);
    }
    // The printed Get-λ ("below T′") would query A's tangent and stop; the correct rule climbs.
    let out = run("convex-hull", &mut abc(eps), &SlackRescaling);
    assert!((out.value - 3.01 * 3.0).abs() < 1e-12);
}

#[test]
fn gold_is_the_floor_and_degenerate_sets() {
    // Every label has Φ < 0 under slack (h < −1): return gold with loss 0.
    let o = PointSetOracle::new(vec![0.0, -2.0, -1.5], vec![0.0, 3.0, 1.0], None).unwrap();
    for name in ["angular", "bisecting", "binary", "convex-hull-ban", "convex-hull-kbest"] {
        let out = run(name, &mut o.clone(), &SlackRescaling);
        assert!(out.is_gold, "{name}");
        assert_eq!(out.value, 0.0);
        assert_eq!(labels(&out), vec![0]);
    }
    // A single label that is the gold label.
    let mut single = PointSetOracle::new(vec![0.0], vec![0.0], None).unwrap();
    for name in crate::NAMES {
        let out =
            SearchSpec::from_name(name).unwrap().run(&mut single, &SlackRescaling, None, Some(1.0)).unwrap();
        assert!(out.is_gold && out.value == 0.0, "{name}");
    }
    // No gold and one label.
    let mut one = PointSetOracle::new(vec![0.5], vec![2.0], None).unwrap();
    let out = run("convex-hull", &mut one, &MarginRescaling);
    assert_eq!(labels(&out), vec![0]);
    assert_eq!(out.value, 2.5);
}

#[test]
fn compatibility_is_checked_at_construction() {
    let beta = by_name("beta", &[("beta", 0.5)]).unwrap();
    let caps = Capabilities { ban: true, kbest: true, cone: true, ..Capabilities::default() };
    for name in ["angular", "bisecting", "binary", "sarawagi"] {
        let e = SearchSpec::from_name(name).unwrap().check(beta.as_ref(), caps).unwrap_err();
        assert!(matches!(e, Error::Incompatible(_)));
        assert!(e.to_string().contains(name) && e.to_string().contains("'beta' (beta=0.5)"), "{e}");
    }
    assert!(SearchSpec::from_name("convex-hull").unwrap().check(beta.as_ref(), caps).is_ok());
    let none = Capabilities::default();
    let e = SearchSpec::from_name("angular").unwrap().check(&SlackRescaling, none).unwrap_err();
    assert!(e.to_string().contains("constrained λ-oracle"), "{e}");
    let e = SearchSpec::from_name("convex-hull-ban").unwrap().check(&MarginRescaling, none).unwrap_err();
    assert!(e.to_string().contains("ban-list"), "{e}");
    let e = SearchSpec::from_name("convex-hull-kbest").unwrap().check(&MarginRescaling, none).unwrap_err();
    assert!(e.to_string().contains("k-best"), "{e}");
    let mut o = abc(0.01);
    let e = SearchSpec::from_name("sarawagi").unwrap().run(&mut o, &SlackRescaling, None, None).unwrap_err();
    assert!(e.to_string().contains("ξ_i"), "{e}");
    // Options.
    let mut s = SearchSpec::from_name("angular").unwrap();
    assert!(s.set("eps", 0.01).is_ok());
    assert!(s.set("eps", -1.0).is_err());
    assert!(s.set("tol", 0.1).unwrap_err().to_string().contains("no numeric option 'tol'"));
    assert!(s.set_integral("ban").is_err());
    let mut h = SearchSpec::from_name("convex-hull").unwrap();
    h.set_integral("kbest").unwrap();
    assert_eq!(h.name(), "convex-hull-kbest");
    assert!(SearchSpec::from_name("nope").is_err());
}

/// An oracle that returns NaN coordinates.
struct Broken;
impl LambdaOracle for Broken {
    type Label = ();
    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }
    fn query(&mut self, _q: &PlaneQuery<'_, ()>) -> Result<Vec<Point<()>>> {
        Ok(vec![Point { label: (), h: f64::NAN, g: 1.0 }])
    }
    fn gold(&self) -> Option<Point<()>> {
        None
    }
}

#[test]
fn non_finite_answers_and_undefined_psi_are_clear_errors() {
    let e = SearchSpec::from_name("convex-hull")
        .unwrap()
        .run(&mut Broken, &MarginRescaling, None, None)
        .unwrap_err();
    assert!(matches!(e, Error::InvalidInput(_)) && e.to_string().contains("non-finite"), "{e}");
    // ProbLoss is undefined for g < 0.
    let mut o = PointSetOracle::new(vec![1.0], vec![-1.0], None).unwrap();
    let probloss = by_name("probloss", &[]).unwrap();
    let e =
        SearchSpec::from_name("convex-hull").unwrap().run(&mut o, probloss.as_ref(), None, None).unwrap_err();
    assert!(e.to_string().contains("outside its domain"), "{e}");
    let e = SearchSpec::from_name("bisecting").unwrap().run(&mut o, &SlackRescaling, None, None).unwrap_err();
    assert!(e.to_string().contains("g ≥ 0"), "{e}");
}

#[test]
fn warm_start_on_an_unchanged_set_costs_one_call() {
    let h = vec![0.0, 0.3, -0.2, 0.8, -0.5, 0.1];
    let g = vec![0.0, 2.0, 4.0, 1.0, 6.0, 3.0];
    let spec = SearchSpec::from_name("convex-hull").unwrap();
    let mut o = PointSetOracle::new(h.clone(), g.clone(), None).unwrap();
    let first = spec.run(&mut o, &SlackRescaling, None, None).unwrap();
    let mut o2 = PointSetOracle::new(h, g, None).unwrap();
    let warm = first.warm.clone().resolve(None).unwrap();
    let second = spec.run(&mut o2, &SlackRescaling, Some(&warm), None).unwrap();
    assert_eq!(second.calls.total(), 1, "{:?}", second.calls);
    assert!((second.value - first.value).abs() < 1e-12);
    // the second search's plan refers to the warm labels it was given, by index
    assert!(
        second.warm.labels.iter().all(|l| matches!(l, crate::WarmLabel::Previous(_))),
        "{:?}",
        second.warm
    );
    assert_eq!(second.warm.clone().resolve(Some(&warm)).unwrap().labels, warm.labels);
}

#[test]
fn warm_plans_merge_as_a_label_cache() {
    use crate::{WarmLabel, WarmPlan};
    let prev = crate::WarmStart { labels: vec![10usize, 11, 12, 13], lambda: Some(2.0) };
    let plan = WarmPlan {
        labels: vec![WarmLabel::Previous(2), WarmLabel::New(20), WarmLabel::New(11)],
        lambda: None,
    };
    // the previous labels not held (11 is held by value) follow, up to the cache size
    let m = plan.clone().merged(Some(&prev), 5).unwrap();
    assert_eq!(m.clone().resolve(Some(&prev)).unwrap().labels, vec![12, 20, 11, 10, 13]);
    assert_eq!(m.lambda, None);
    let m = plan.clone().merged(Some(&prev), 2).unwrap();
    assert_eq!(m.resolve(Some(&prev)).unwrap().labels, vec![12, 20]);
    // an index outside the previous warm start is an error, not a panic
    assert!(plan.clone().merged(None, 8).is_err());
    assert!(plan.resolve(None).is_err());
}

#[test]
fn extreme_magnitudes_stay_finite() {
    // Subnormal and huge coordinates: λ₀ = Ĥ/Ĝ would overflow; every search still answers.
    for (h, g) in [(vec![-1.0, 0.0], vec![2.225e-311, 0.0]), (vec![1e300, 0.0], vec![1e-300, 0.0])] {
        for name in crate::NAMES {
            let mut o = PointSetOracle::new(h.clone(), g.clone(), None).unwrap();
            let out =
                SearchSpec::from_name(name).unwrap().run(&mut o, &SlackRescaling, None, Some(0.0)).unwrap();
            assert!(out.value.is_finite() && out.calls.total() <= 2 * h.len() + 3 + 100, "{name}");
        }
    }
}

#[test]
fn ban_loop_with_deepening_and_the_unseen_bound_is_exact() {
    // Point sets like a tree's labels: g a task loss in {0, …, 6} (many labels per value, close
    // h), gold at (0, 0); convex-hull-ban with extra answers per query and the unseen-label
    // stopping rule against the brute-force maximum of ψ, and against the plain ban loop.
    let mut next = uniform(0x9e37_79b9_7f4a_7c15);
    let mut calls = [0usize; 4];
    for case in 0..600 {
        let n = 2 + (next() * 60.0) as usize;
        let spread = [0.2, 1.0, 4.0][case % 3];
        let (mut h, mut g) = (vec![0.0], vec![0.0]);
        for _ in 0..n {
            let gv = 1.0 + (next() * 6.0).floor();
            h.push(-spread * next() * gv + 0.5 * spread * next());
            g.push(gv);
        }
        for name in ["slack", "probloss", "margin"] {
            let psi = by_name(name, &[]).unwrap();
            let want = h.iter().zip(&g).map(|(&a, &b)| psi.value(a, b)).fold(f64::NEG_INFINITY, f64::max);
            for (d, deepen) in [0, 1, 3, 8].into_iter().enumerate() {
                let spec = SearchSpec::ConvexHull(crate::ConvexHull {
                    integral: crate::Integral::Ban,
                    deepen,
                    nonneg_g: true,
                    ..crate::ConvexHull::default()
                });
                let mut o = PointSetOracle::new(h.clone(), g.clone(), Some(0)).unwrap();
                let out = spec.run(&mut o, psi.as_ref(), None, None).unwrap();
                calls[d] += out.calls.total();
                assert!(
                    (out.value - want).abs() <= 1e-9 * (1.0 + want.abs()),
                    "case {case} {name} deepen {deepen}: {} vs {want}",
                    out.value
                );
                let i = out.answer[0].label;
                assert!((psi.value(h[i], g[i]) - out.value).abs() <= 1e-12 * (1.0 + want.abs()));
            }
        }
    }
    // the stopping rule with deeper queries saves ban-list rounds
    assert!(calls[3] < calls[0], "calls by deepening {calls:?}");
}

#[test]
fn unseen_bound_is_the_maximum_over_the_cut_polygon() {
    // ψ = slack on {g ≥ 0, h + g ≤ 1, h + 3g ≤ 2}: the boundary h = min(1 − g, 2 − 3g); a fine
    // grid of its points never beats the bound, and the bound is attained within 1e-9.
    let psi = SlackRescaling;
    let cuts = [(Lambda::Finite(1.0), 1.0), (Lambda::Finite(3.0), 2.0)];
    let u = crate::integral::unseen_bound(&psi, &cuts).unwrap().unwrap();
    let grid = (0..=200_000).map(|j| j as f64 * 1e-5).map(|g| psi.value((1.0 - g).min(2.0 - 3.0 * g), g));
    let top = grid.fold(f64::NEG_INFINITY, f64::max);
    assert!(top <= u + 1e-12 && u - top < 1e-9, "{u} vs {top}");
    // h bounded by a λ = 0 cut alone, g free: unbounded
    assert!(crate::integral::unseen_bound(&psi, &[(Lambda::Zero, 1.0)]).unwrap().is_none());
    // an exhausted query: nothing unseen
    let none = crate::integral::unseen_bound(&psi, &[(Lambda::Finite(1.0), f64::NEG_INFINITY)]);
    assert_eq!(none.unwrap(), Some(f64::NEG_INFINITY));
}

/// Uniform draws in [0, 1) from a xorshift generator.
fn uniform(mut seed: u64) -> impl FnMut() -> f64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    }
}

/// The convex hull searches (plain, ban, k-best) under four surrogates on the point set `plain`
/// and on `bounded` (the same points with more bounds declared): the same value and the same
/// answer items, never more calls with the bounds, and the brute-force maximum of ψ for the
/// integral searches. Returns the calls (with, without) the bounds.
fn same_answers_no_more_calls(
    plain: &PointSetOracle,
    bounded: &PointSetOracle,
    h: &[f64],
    g: &[f64],
    ctx: &str,
) -> (usize, usize) {
    let (mut with, mut without) = (0, 0);
    for name in ["slack", "probloss", "margin", "log"] {
        let psi = by_name(name, &[]).unwrap();
        let want = h.iter().zip(g).map(|(&a, &b)| psi.value(a, b)).fold(f64::NEG_INFINITY, f64::max);
        for search in ["convex-hull", "convex-hull-ban", "convex-hull-kbest"] {
            let spec = SearchSpec::from_name(search).unwrap();
            let a = spec.run(&mut plain.clone(), psi.as_ref(), None, None).unwrap();
            let b = spec.run(&mut bounded.clone(), psi.as_ref(), None, None).unwrap();
            let ctx = format!("{ctx} {name} {search}");
            assert_eq!(a.value, b.value, "{ctx}");
            assert_eq!(a.answer.len(), b.answer.len(), "{ctx}");
            for (x, y) in a.answer.iter().zip(&b.answer) {
                assert_eq!((x.label, x.h, x.g, x.weight), (y.label, y.h, y.g, y.weight), "{ctx}");
            }
            assert!(b.calls.total() <= a.calls.total(), "{ctx}: {:?} vs {:?}", b.calls, a.calls);
            if search != "convex-hull" {
                assert!((b.value - want).abs() <= 1e-9 * (1.0 + want.abs()), "{ctx}: {} vs {want}", b.value);
            }
            with += b.calls.total();
            without += a.calls.total();
        }
    }
    (with, without)
}

#[test]
fn certificates_from_earlier_answers_keep_every_answer_and_save_calls() {
    // Point sets like a chain's labels under the token Hamming loss: g ∈ {0, …, n} with labels at
    // g = n (n = the bound the oracle declares, or above every point), gold at (0, 0). The
    // convex hull searches certify from the planes of earlier answers and the bound on g without
    // some calls: the same answers as without the bound, and fewer calls in all.
    let mut next = uniform(0x2545_f491_4f6c_dd1d);
    let (mut with, mut without) = (0usize, 0usize);
    for case in 0..800 {
        let n_max = 1 + (next() * 8.0) as usize;
        let count = 1 + (next() * 40.0) as usize;
        let scale = [0.5, 3.0, 30.0][case % 3];
        let (mut h, mut g) = (vec![0.0], vec![0.0]);
        for j in 0..count {
            // at least one label at the largest loss when the bound is attained
            let gv =
                if j == 0 && case % 4 != 0 { n_max as f64 } else { (next() * (n_max as f64 + 1.0)).floor() };
            h.push(scale * (next() - 0.3) * (1.0 + gv));
            g.push(gv);
        }
        let bound = n_max as f64 + if case % 4 == 0 { 1.0 } else { 0.0 };
        let plain = PointSetOracle::new(h.clone(), g.clone(), Some(0)).unwrap();
        let bounded = plain.clone().with_g_bound(bound).unwrap();
        let (a, b) = same_answers_no_more_calls(&plain, &bounded, &h, &g, &format!("case {case}"));
        with += a;
        without += b;
    }
    assert!(with < without, "calls {with} with the bound, {without} without");
}

#[test]
fn certificates_from_a_floor_of_g_keep_every_answer_and_save_calls() {
    // Point sets like a chain's labels under the token Hamming loss: gold at (0, 0), every other
    // label at an integer g ≥ 1, so g ≥ 1 off gold (the oracle's floor) — also with the bound g ≤ n.
    // With the floor the convex hull searches certify some queries of a smaller λ than an
    // earlier one without a call: the same answers as without it, and fewer calls in all.
    let mut next = uniform(0x9E6C_63D0_676A_9A99);
    let (mut with, mut without) = (0usize, 0usize);
    for case in 0..800 {
        let n_max = 1 + (next() * 8.0) as usize;
        let count = 1 + (next() * 40.0) as usize;
        let scale = [0.5, 3.0, 30.0][case % 3];
        // mostly negative h too, as late in training (the hull's best point on an edge from gold)
        let offset = [0.3, 0.8, 0.95][(case / 3) % 3];
        let (mut h, mut g) = (vec![0.0], vec![0.0]);
        for _ in 0..count {
            let gv = 1.0 + (next() * n_max as f64).floor();
            h.push(scale * (next() - offset) * (1.0 + gv));
            g.push(gv);
        }
        for bounded in [false, true] {
            let mut plain = PointSetOracle::new(h.clone(), g.clone(), Some(0)).unwrap();
            if bounded {
                plain = plain.with_g_bound(n_max as f64).unwrap();
            }
            let floored = plain.clone().with_g_floor(1.0).unwrap();
            let ctx = format!("case {case} bounded {bounded}");
            let (a, b) = same_answers_no_more_calls(&plain, &floored, &h, &g, &ctx);
            with += a;
            without += b;
        }
    }
    assert!(with < without, "calls {with} with the floor, {without} without");
}
