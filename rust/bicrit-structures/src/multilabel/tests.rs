//! Randomised tests of the multi-label oracles against enumeration ([`crate::select::select_best`]
//! over all 2^K labels, scored through `joint_feature` and `terms`) and of QPBO against the LP.

use bicrit_core::{Cone, CsrMatrix, Objective, Terms};

use super::*;
use crate::select::select_best;

pub(super) struct Rng(pub(super) u64);

impl Rng {
    pub(super) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    pub(super) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    /// Small integers make exact ties frequent.
    pub(super) fn int(&mut self, lo: i64, hi: i64) -> f64 {
        (lo + (self.next() % (hi - lo + 1) as u64) as i64) as f64
    }
    pub(super) fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

fn random_edges(rng: &mut Rng, k: usize) -> Vec<(usize, usize)> {
    match rng.below(4) {
        0 => full_edges(k),
        1 => chain_edges(k),
        2 => Vec::new(),
        _ => full_edges(k).into_iter().filter(|_| rng.below(2) == 0).collect(),
    }
}

fn all_labels(k: usize) -> Vec<MlLabel> {
    (0u32..1 << k).map(|m| MlLabel::Integral(from_mask(m, k))).collect()
}

fn reference(
    s: &Multilabel,
    w: &[f64],
    x: &CsrMatrix,
    gold: &MlLabel,
    q: &TermQuery<'_, MlLabel>,
) -> Vec<Scored<MlLabel>> {
    let g = s.score(w, x, 0, gold).unwrap();
    let cands = all_labels(s.n_labels())
        .into_iter()
        .map(|y| {
            let m = s.score(w, x, 0, &y).unwrap() - g;
            let t = s.terms(&y, gold).unwrap();
            Scored { label: y, margin: m, terms: t }
        })
        .collect();
    select_best(q, cands)
}

fn value(o: &Objective, a: &Scored<MlLabel>) -> f64 {
    o.value(a.margin, &a.terms)
}

fn random_objective(rng: &mut Rng) -> Objective {
    let lam = rng.pick(&[0.0, 0.5, 1.0, 2.0]);
    Objective {
        margin: 1.0,
        terms: Terms {
            loss: lam,
            size: rng.pick(&[0.0, 0.0, -0.5, -1.0]),
            hamming: rng.pick(&[0.0, 0.0, 1.0]),
        },
    }
}

/// (primary, secondary) of a random query: λ = 0, λ = ∞ (both lexicographic), or finite.
fn random_query(rng: &mut Rng) -> (Objective, Option<Objective>) {
    let loss_only = Objective { margin: 0.0, terms: Terms { loss: 1.0, ..Terms::default() } };
    let margin_only = Objective { margin: 1.0, terms: Terms::default() };
    match rng.below(4) {
        0 => (margin_only, Some(loss_only)),
        1 => (loss_only, Some(margin_only)),
        2 => (random_objective(rng), None),
        _ => (random_objective(rng), Some(loss_only)),
    }
}

struct Instance {
    s: Multilabel,
    w: Vec<f64>,
    x: CsrMatrix,
    gold: MlLabel,
}

fn instance(rng: &mut Rng, k: usize, inference: Inference, integer: bool) -> Instance {
    let d = 1 + rng.below(3);
    let edges = random_edges(rng, k);
    let s = Multilabel::new(k, d, edges, inference).unwrap();
    let draw = |rng: &mut Rng| if integer { rng.int(-2, 2) } else { 4.0 * rng.unit() - 2.0 };
    let w: Vec<f64> = (0..s.size_joint_feature()).map(|_| draw(rng)).collect();
    let xrow: Vec<f64> = (0..d).map(|_| draw(rng)).collect();
    let x = CsrMatrix::from_dense(&[xrow], d).unwrap();
    let gold = MlLabel::Integral((0..k).map(|_| rng.below(2) as u8).collect());
    Instance { s, w, x, gold }
}

#[test]
fn exact_oracle_equals_enumeration() {
    let mut rng = Rng(0x9e3779b97f4a7c15);
    for case in 0..3000 {
        let k = 1 + rng.below(7);
        let inst = instance(&mut rng, k, Inference::Exact, true);
        let (primary, secondary) = random_query(&mut rng);
        let n_ban = rng.below(3);
        let ban: Vec<MlLabel> =
            (0..n_ban).map(|_| MlLabel::Integral(from_mask(rng.below(1 << k) as u32, k))).collect();
        let cone = if rng.below(3) == 0 {
            Some(Cone {
                lo: rng.pick(&[0.0, 0.5, 1.0]),
                lo_closed: rng.below(2) == 0,
                hi: rng.pick(&[1.0, 2.0, f64::INFINITY]),
                hi_closed: rng.below(2) == 0,
            })
        } else {
            None
        };
        let kk = 1 + rng.below(5);
        let q = TermQuery { primary, secondary, ban: &ban, k: kk, cone };
        let got = inst.s.oracle(&inst.w, &inst.x, 0, &inst.gold, &q).unwrap();
        let want = reference(&inst.s, &inst.w, &inst.x, &inst.gold, &q);
        assert_eq!(got.len(), want.len(), "case {case}");
        for (a, b) in got.iter().zip(&want) {
            assert!((value(&primary, a) - value(&primary, b)).abs() < 1e-9, "case {case}: {a:?} vs {b:?}");
            if let Some(sec) = &secondary {
                assert!((value(sec, a) - value(sec, b)).abs() < 1e-9, "case {case}: {a:?} vs {b:?}");
            }
            assert!(!ban.contains(&a.label));
            // reported values are the label's own
            let m = inst.s.score(&inst.w, &inst.x, 0, &a.label).unwrap()
                - inst.s.score(&inst.w, &inst.x, 0, &inst.gold).unwrap();
            assert!((m - a.margin).abs() < 1e-9);
            assert_eq!(a.terms, inst.s.terms(&a.label, &inst.gold).unwrap());
        }
    }
}

#[test]
fn exact_frontier_equals_enumeration_by_loss_value() {
    // For every Hamming distance c, the frontier holds one label at distance c whose objective
    // value is the largest over all 2^K labels at that distance (scored through joint_feature and
    // terms), and no distance is missing; small integer weights make ties frequent.
    let mut rng = Rng(0x5851_f42d_4c95_7f2d);
    for case in 0..2000 {
        let k = 1 + rng.below(9);
        let integer = rng.below(2) == 0;
        let inst = instance(&mut rng, k, Inference::Exact, integer);
        let objective = random_objective(&mut rng);
        let got = inst.s.frontier(&inst.w, &inst.x, 0, &inst.gold, &objective).unwrap();
        let g = inst.s.score(&inst.w, &inst.x, 0, &inst.gold).unwrap();
        let mut want = vec![f64::NEG_INFINITY; k + 1];
        for y in all_labels(k) {
            let m = inst.s.score(&inst.w, &inst.x, 0, &y).unwrap() - g;
            let t = inst.s.terms(&y, &inst.gold).unwrap();
            let c = t.loss as usize;
            want[c] = want[c].max(objective.value(m, &t));
        }
        assert_eq!(got.len(), k + 1, "case {case}: one entry per distance 0..=K");
        let mut seen = vec![false; k + 1];
        for a in &got {
            let t = inst.s.terms(&a.label, &inst.gold).unwrap();
            assert_eq!(a.terms, t, "case {case}");
            let c = t.loss as usize;
            assert!(!seen[c], "case {case}: distance {c} twice");
            seen[c] = true;
            let m = inst.s.score(&inst.w, &inst.x, 0, &a.label).unwrap() - g;
            assert!((m - a.margin).abs() < 1e-9, "case {case}");
            assert!(
                (value(&objective, a) - want[c]).abs() < 1e-9,
                "case {case}: c = {c}: {a:?} vs {}",
                want[c]
            );
        }
    }
}

#[test]
fn frontier_needs_exact_inference() {
    let x = CsrMatrix::from_dense(&[vec![1.0, -0.5]], 2).unwrap();
    let gold = MlLabel::Integral(vec![1, 0, 0, 1]);
    let obj = Objective::loss_augmented(1.0);
    for (inference, frontier) in
        [(Inference::Tree, false), (Inference::Relaxed(RelaxedSolver::Qpbo), false), (Inference::Exact, true)]
    {
        let s = Multilabel::new(4, 2, chain_edges(4), inference).unwrap();
        let w = vec![0.25; s.size_joint_feature()];
        assert_eq!(s.capabilities().frontier, frontier, "{inference:?}");
        match s.frontier(&w, &x, 0, &gold, &obj) {
            Ok(f) => assert!(frontier && f.len() == 5),
            Err(e) => assert!(!frontier && e.to_string().contains("exact inference only"), "{e}"),
        }
    }
}

#[test]
fn exact_kbest_lists_everything_in_order() {
    let mut rng = Rng(42);
    for _ in 0..50 {
        let k = 1 + rng.below(9);
        let inst = instance(&mut rng, k, Inference::Exact, false);
        // k beyond the insertion threshold: collected and sorted
        let q = TermQuery { k: 1 << k, ..TermQuery::loss_augmented(1.0) };
        let got = inst.s.oracle(&inst.w, &inst.x, 0, &inst.gold, &q).unwrap();
        assert_eq!(got.len(), 1 << k);
        let want = reference(&inst.s, &inst.w, &inst.x, &inst.gold, &q);
        for (a, b) in got.iter().zip(&want) {
            assert!((value(&q.primary, a) - value(&q.primary, b)).abs() < 1e-9);
        }
    }
}

fn relaxed_value(
    inst: &Instance,
    o: &Objective,
    q: &TermQuery<'_, MlLabel>,
) -> Option<(f64, Scored<MlLabel>)> {
    let a = inst.s.oracle(&inst.w, &inst.x, 0, &inst.gold, q).unwrap();
    a.into_iter().next().map(|a| (value(o, &a), a))
}

fn with_solver(inst: &Instance, solver: RelaxedSolver) -> Instance {
    Instance {
        s: Multilabel::new(
            inst.s.n_labels(),
            inst.s.n_features(),
            inst.s.edges().to_vec(),
            Inference::Relaxed(solver),
        )
        .unwrap(),
        w: inst.w.clone(),
        x: inst.x.clone(),
        gold: inst.gold.clone(),
    }
}

#[test]
fn qpbo_equals_lp_and_bounds_the_exact_value() {
    let mut rng = Rng(7);
    for case in 0..400 {
        let k = 1 + rng.below(8);
        let integer = rng.below(2) == 0;
        let exact = instance(&mut rng, k, Inference::Exact, integer);
        let qpbo = with_solver(&exact, RelaxedSolver::Qpbo);
        let lp = with_solver(&exact, RelaxedSolver::Lp);
        let (primary, secondary) = random_query(&mut rng);
        let q = TermQuery { primary, secondary, ban: &[], k: 1, cone: None };
        let (vq, aq) = relaxed_value(&qpbo, &primary, &q).unwrap();
        let (vl, al) = relaxed_value(&lp, &primary, &q).unwrap();
        let (ve, _) = relaxed_value(&exact, &primary, &q).unwrap();
        let tol = 1e-5 * (1.0 + vq.abs());
        assert!((vq - vl).abs() < tol, "case {case}: qpbo {vq} lp {vl}\n{aq:?}\n{al:?}");
        assert!(vq >= ve - 1e-9, "case {case}: relaxed {vq} below exact {ve}");
        if aq.label.is_integral() {
            assert!((vq - ve).abs() < 1e-9, "case {case}");
        }
        if let Some(sec) = &secondary {
            let (sq, sl) = (value(sec, &aq), value(sec, &al));
            assert!((sq - sl).abs() < 1e-4 * (1.0 + sq.abs()), "case {case}: tie-break qpbo {sq} lp {sl}");
        }
        for a in [&aq, &al] {
            qpbo.s.validate_label(&a.label).unwrap();
        }
    }
}

#[test]
fn relaxed_cone_answers_lie_in_the_cone_and_bound_the_integral_ones() {
    let mut rng = Rng(99);
    let mut seen_empty = 0;
    for case in 0..300 {
        let k = 1 + rng.below(6);
        let integer = rng.below(2) == 0;
        let exact = instance(&mut rng, k, Inference::Exact, integer);
        let lp = with_solver(&exact, RelaxedSolver::Qpbo);
        let cone = Cone {
            lo: rng.pick(&[0.0, 0.25, 0.5, 1.0]),
            lo_closed: rng.below(2) == 0,
            hi: rng.pick(&[0.5, 1.0, 2.0, f64::INFINITY]),
            hi_closed: rng.below(2) == 0,
        };
        if cone.lo > cone.hi {
            continue;
        }
        let primary = random_objective(&mut rng);
        let q = TermQuery { primary, secondary: None, ban: &[], k: 1, cone: Some(cone) };
        if let Err(e) = lp.s.oracle(&lp.w, &lp.x, 0, &lp.gold, &q) {
            let all = TermQuery { k: 1 << k, ..TermQuery::loss_augmented(0.0) };
            let pts: Vec<(f64, f64)> = exact
                .s
                .oracle(&exact.w, &exact.x, 0, &exact.gold, &all)
                .unwrap()
                .iter()
                .map(|a| (1.0 + a.margin, a.terms.loss))
                .collect();
            panic!(
                "case {case} {e}: k={k} edges={:?} cone={cone:?} primary={primary:?} pts={pts:?}",
                exact.s.edges()
            );
        }
        let relaxed = relaxed_value(&lp, &primary, &q);
        let integral = relaxed_value(&exact, &primary, &q);
        match (relaxed, integral) {
            (Some((vr, a)), Some((vi, _))) => {
                assert!(vr >= vi - 1e-6 * (1.0 + vi.abs()), "case {case}: {vr} < {vi}");
                let (h, g) = (1.0 + a.margin, a.terms.loss);
                assert!(
                    cone.lo * h <= g + 1e-7 && (cone.hi.is_infinite() || g <= cone.hi * h + 1e-7),
                    "case {case}"
                );
            }
            (None, Some((vi, y))) => panic!("case {case}: LP infeasible but {y:?} ({vi}) is in the cone"),
            (_, None) => seen_empty += 1,
        }
    }
    assert!(seen_empty > 0);
}

#[test]
fn relaxed_predict_is_integral_and_exact_on_submodular_scores() {
    let mut rng = Rng(5);
    for _ in 0..200 {
        let k = 1 + rng.below(8);
        let mut inst = instance(&mut rng, k, Inference::Exact, false);
        let off = k * inst.s.n_features();
        // make every edge attractive: w11 + w00 ≥ w10 + w01
        for e in 0..inst.s.edges().len() {
            let p = &mut inst.w[off + 4 * e..off + 4 * e + 4];
            p[3] = p[3].abs() + p[1].abs() + p[2].abs();
            p[0] = p[0].abs();
        }
        let relaxed = with_solver(&inst, RelaxedSolver::Qpbo);
        let a = inst.s.predict(&inst.w, &inst.x, 0).unwrap();
        let b = relaxed.s.predict(&relaxed.w, &relaxed.x, 0).unwrap();
        let sa = inst.s.score(&inst.w, &inst.x, 0, &a).unwrap();
        let sb = inst.s.score(&inst.w, &inst.x, 0, &b).unwrap();
        assert!((sa - sb).abs() < 1e-9);
    }
}

#[test]
fn relaxed_features_and_terms_are_linear() {
    let s = Multilabel::new(2, 1, vec![(0, 1)], Inference::Relaxed(RelaxedSolver::Qpbo)).unwrap();
    let x = CsrMatrix::from_dense(&[vec![2.0]], 1).unwrap();
    let a = MlLabel::Integral(vec![1, 0]);
    let b = MlLabel::Integral(vec![0, 1]);
    let half = MlLabel::Relaxed { nodes: vec![0.5, 0.5], edges: vec![[0.0, 0.5, 0.5, 0.0]] };
    let fa = s.joint_feature(&x, 0, &a).unwrap();
    let fb = s.joint_feature(&x, 0, &b).unwrap();
    let mut fh = s.joint_feature(&x, 0, &half).unwrap();
    let mut avg = SparseVec::new();
    avg.extend_scaled(&fa, 0.5);
    avg.extend_scaled(&fb, 0.5);
    avg.compact();
    fh.compact();
    assert_eq!(fh, avg);
    let gold = MlLabel::Integral(vec![1, 1]);
    let t = s.terms(&half, &gold).unwrap();
    assert_eq!(t, Terms { loss: 1.0, size: 1.0, hamming: 1.0 });
}

#[test]
fn bad_input_is_an_error() {
    let s = Multilabel::new(3, 2, full_edges(3), Inference::Exact).unwrap();
    let x = CsrMatrix::from_dense(&[vec![1.0, 2.0]], 2).unwrap();
    let w = vec![0.0; s.size_joint_feature()];
    let q = TermQuery::loss_augmented(1.0);
    let msg = |r: Result<Vec<Scored<MlLabel>>>| r.unwrap_err().to_string();
    assert!(msg(s.oracle(&w, &x, 0, &MlLabel::Integral(vec![1, 0]), &q)).contains("length 2"));
    assert!(msg(s.oracle(&w, &x, 0, &MlLabel::Integral(vec![1, 0, 2]), &q)).contains("not 0 or 1"));
    assert!(
        msg(s.oracle(&w[1..], &x, 0, &MlLabel::Integral(vec![1, 0, 0]), &q)).contains("joint feature size")
    );
    let wide = CsrMatrix::from_dense(&[vec![1.0, 2.0, 3.0]], 3).unwrap();
    assert!(msg(s.oracle(&w, &wide, 0, &MlLabel::Integral(vec![1, 0, 0]), &q)).contains("features"));
    let bad_nodes = MlLabel::Relaxed { nodes: vec![1.5, 0.0, 0.0], edges: vec![[0.0; 4]; 3] };
    assert!(s.validate_label(&bad_nodes).unwrap_err().to_string().contains("outside [0, 1]"));
    let bad_shape = MlLabel::Relaxed { nodes: vec![0.0; 3], edges: vec![[1.0, 0.0, 0.0, 0.0]; 2] };
    assert!(s.validate_label(&bad_shape).unwrap_err().to_string().contains("3 edges"));
    let inconsistent = MlLabel::Relaxed { nodes: vec![0.5, 0.0, 0.0], edges: vec![[1.0, 0.0, 0.0, 0.0]; 3] };
    assert!(s.validate_label(&inconsistent).unwrap_err().to_string().contains("inconsistent"));
    let relaxed_gold = MlLabel::Relaxed { nodes: vec![0.0; 3], edges: vec![[1.0, 0.0, 0.0, 0.0]; 3] };
    assert!(msg(s.oracle(&w, &x, 0, &relaxed_gold, &q)).contains("integral"));
    assert!(Multilabel::new(17, 1, Vec::new(), Inference::Exact).is_err());
    assert!(Inference::parse("exact", 17, RelaxedSolver::Qpbo).unwrap_err().to_string().contains("relaxed"));
    assert!(Inference::parse("bogus", 3, RelaxedSolver::Qpbo).is_err());
    assert_eq!(
        Inference::parse("auto", 17, RelaxedSolver::Qpbo).unwrap(),
        Inference::Relaxed(RelaxedSolver::Qpbo)
    );
    let r = Multilabel::new(3, 2, full_edges(3), Inference::Relaxed(RelaxedSolver::Qpbo)).unwrap();
    let gold = MlLabel::Integral(vec![1, 0, 0]);
    let kq = TermQuery { k: 2, ..TermQuery::loss_augmented(1.0) };
    assert!(matches!(r.oracle(&w, &x, 0, &gold, &kq), Err(bicrit_core::Error::Unsupported(_))));
    let ban = [gold.clone()];
    let bq = TermQuery { ban: &ban, ..TermQuery::loss_augmented(1.0) };
    assert!(matches!(r.oracle(&w, &x, 0, &gold, &bq), Err(bicrit_core::Error::Unsupported(_))));
}

#[test]
fn shared_unary_scores_change_no_answer() {
    // θ computed once per inference (Structure::shared_scores) gives the very answers of the
    // oracle that computes its own, in every inference mode, and the labels' scores (relaxed
    // ones included) up to the order of the sums.
    let mut rng = Rng(0xC2B2_AE3D_27D4_EB4F);
    for case in 0..600 {
        let k = 1 + rng.below(6);
        let inference = match rng.below(3) {
            0 => Inference::Exact,
            1 => Inference::Relaxed(RelaxedSolver::Qpbo),
            _ => Inference::Tree,
        };
        let d = 1 + rng.below(3);
        let edges = if inference == Inference::Tree { chain_edges(k) } else { random_edges(&mut rng, k) };
        let s = Multilabel::new(k, d, edges, inference).unwrap();
        let w: Vec<f64> = (0..s.size_joint_feature()).map(|_| 4.0 * rng.unit() - 2.0).collect();
        let x = CsrMatrix::from_dense(&[(0..d).map(|_| 4.0 * rng.unit() - 2.0).collect()], d).unwrap();
        let gold = MlLabel::Integral((0..k).map(|_| rng.below(2) as u8).collect());
        let shared = s.shared_scores(&w, &x, 0).unwrap().unwrap();
        let n_edges = s.edges().len();
        assert_eq!(shared.len(), if inference == Inference::Tree { 2 * k + n_edges } else { k });
        let (primary, secondary) = random_query(&mut rng);
        let q = TermQuery { primary, secondary, ban: &[], k: 1, cone: None };
        let own = s.oracle(&w, &x, 0, &gold, &q).unwrap();
        let with = s.oracle_shared(&w, &x, 0, &gold, &q, Some(&shared)).unwrap();
        assert_eq!(own, with, "case {case}: {inference:?}");
        // scores from the shared θ: the joint feature's value up to the order of the sums
        for y in own.iter().map(|a| &a.label).chain([&gold]) {
            let direct = s.score(&w, &x, 0, y).unwrap();
            let fast = s.score_shared(&w, &x, 0, y, Some(&shared)).unwrap();
            assert!((fast - direct).abs() <= 1e-12 * (1.0 + direct.abs()), "case {case}: {fast} vs {direct}");
        }
        if inference == Inference::Exact {
            let own = s.frontier(&w, &x, 0, &gold, &primary).unwrap();
            assert_eq!(own, s.frontier_shared(&w, &x, 0, &gold, &primary, Some(&shared)).unwrap());
        }
    }
}

#[test]
fn max_loss_bounds_the_loss_of_every_label() {
    // Every integral label (brute force, K ≤ 8) and random relaxed ones (independent marginals:
    // μ_e = (1 − μ_i)(1 − μ_j), …) have a Hamming loss ≤ max_loss = K, and the label with every
    // value wrong attains it.
    let mut rng = Rng(0x0bad_5eed_1234_5678);
    for case in 0..60 {
        let k = 1 + rng.below(8);
        let inference = [Inference::Exact, Inference::Relaxed(RelaxedSolver::Qpbo)][case % 2];
        let inst = instance(&mut rng, k, inference, false);
        let bound = inst.s.max_loss(&inst.x, 0, &inst.gold).unwrap();
        assert_eq!(bound, k as f64);
        let mut largest = 0.0f64;
        for y in all_labels(k) {
            largest = largest.max(inst.s.terms(&y, &inst.gold).unwrap().loss);
        }
        assert_eq!(largest, bound, "case {case}: the all-wrong label attains K");
        for _ in 0..20 {
            let nodes: Vec<f64> = (0..k).map(|_| rng.unit()).collect();
            let edges = inst
                .s
                .edges()
                .iter()
                .map(|&(i, j)| {
                    let (a, b) = (nodes[i], nodes[j]);
                    [(1.0 - a) * (1.0 - b), (1.0 - a) * b, a * (1.0 - b), a * b]
                })
                .collect();
            let y = MlLabel::Relaxed { nodes, edges };
            let loss = inst.s.terms(&y, &inst.gold).unwrap().loss;
            assert!(loss <= bound + 1e-12, "case {case}: relaxed loss {loss} > {bound}");
        }
    }
}
