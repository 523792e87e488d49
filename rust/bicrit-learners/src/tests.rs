//! Learners on tiny problems against an independent reference: the structured SVM primal with
//! every label enumerated as an explicit constraint (`ξ_i ≥ ψ(m(y), L(y))` for every y, affine in
//! w), solved as one QP by clarabel — no search, no learner involved.

use bicrit_core::{CsrMatrix, Terms};
use bicrit_searches::SearchSpec;
use bicrit_structures::multilabel::{full_edges, Inference};
use bicrit_structures::{MlLabel, Multiclass, Multilabel, Structure};
use bicrit_surrogates::{by_name, Surrogate};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus};

use crate::params::Value;
use crate::rng::Rng;
use crate::scratch::dense_norm_sq;
use crate::{check_compatible, objective, AnyLearner, Context, Kind, Learner, Prepared, Problem};

fn uniform(r: &mut Rng) -> f64 {
    (r.next_u64() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
}

fn features(n: usize, d: usize, seed: u64) -> Vec<Vec<f64>> {
    let mut r = Rng::new(seed);
    (0..n).map(|_| (0..d).map(|j| if j + 1 == d { 1.0 } else { uniform(&mut r) }).collect()).collect()
}

fn multiclass(n: usize, d: usize, k: usize, seed: u64) -> (Multiclass, CsrMatrix, Vec<usize>) {
    let rows = features(n, d, seed);
    let mut r = Rng::new(seed + 1);
    let proto: Vec<Vec<f64>> = (0..k).map(|_| (0..d).map(|_| uniform(&mut r)).collect()).collect();
    let labels = rows
        .iter()
        .map(|x| {
            let score = |c: usize| -> f64 { proto[c].iter().zip(x).map(|(a, b)| a * b).sum::<f64>() };
            let noisy = if r.below(5) == 0 { r.below(k as u64) as usize } else { usize::MAX };
            if noisy != usize::MAX {
                noisy
            } else {
                (0..k).max_by(|&a, &b| score(a).total_cmp(&score(b))).unwrap()
            }
        })
        .collect();
    (Multiclass::new(k, d).unwrap(), CsrMatrix::from_dense(&rows, d).unwrap(), labels)
}

fn multilabel(n: usize, d: usize, k: usize, seed: u64) -> (Multilabel, CsrMatrix, Vec<MlLabel>) {
    let rows = features(n, d, seed);
    let mut r = Rng::new(seed + 7);
    let proto: Vec<Vec<f64>> = (0..k).map(|_| (0..d).map(|_| uniform(&mut r)).collect()).collect();
    let labels = rows
        .iter()
        .map(|x| {
            MlLabel::Integral(
                (0..k)
                    .map(|c| {
                        let s: f64 = proto[c].iter().zip(x).map(|(a, b)| a * b).sum();
                        u8::from((s > 0.0) != (r.below(6) == 0))
                    })
                    .collect(),
            )
        })
        .collect();
    let s = Multilabel::new(k, d, full_edges(k), Inference::Exact).unwrap();
    (s, CsrMatrix::from_dense(&rows, d).unwrap(), labels)
}

/// The primal optimum with every label of every instance an explicit constraint.
fn reference<S: Structure>(
    s: &S,
    data: &S::Data,
    labels: &[S::Label],
    every: &dyn Fn(usize) -> Vec<S::Label>,
    psi: &dyn Surrogate,
    c: f64,
) -> f64 {
    reference_p(s, data, labels, every, psi, c, 1)
}

/// [`reference`] with the slacks to the power `slack_norm`: ½‖w‖² + C·Σξ_i (1) or C·Σξ_i² (2),
/// ξ_i ≥ 0 and ξ_i ≥ every label's ψ.
fn reference_p<S: Structure>(
    s: &S,
    data: &S::Data,
    labels: &[S::Label],
    every: &dyn Fn(usize) -> Vec<S::Label>,
    psi: &dyn Surrogate,
    c: f64,
    slack_norm: u8,
) -> f64 {
    let n = labels.len();
    let dim = s.size_joint_feature();
    let nv = dim + n;
    let (mut ar, mut ac, mut av, mut b) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for (i, yi) in labels.iter().enumerate() {
        let gold = s.joint_feature(data, i, yi).unwrap();
        let fm = psi.factor_map(&s.terms(yi, yi).unwrap());
        for y in every(i) {
            let t: Terms = s.terms(&y, yi).unwrap();
            // ψ(h, g) is affine in h = a_m·m + rest: value = ψ(rest, g) + slope·m
            let (h0, g) = fm.point(0.0, &t);
            let base = psi.value(h0, g);
            let slope = (psi.value(h0 + 1.0, g) - base) * fm.h.margin;
            let mut dphi = vec![0.0; dim];
            s.joint_feature(data, i, &y).unwrap().add_to(&mut dphi, 1.0);
            gold.add_to(&mut dphi, -1.0);
            let row = b.len();
            for (j, &v) in dphi.iter().enumerate() {
                if v != 0.0 && slope != 0.0 {
                    ar.push(row);
                    ac.push(j);
                    av.push(slope * v);
                }
            }
            ar.push(row);
            ac.push(dim + i);
            av.push(-1.0);
            b.push(-base);
        }
        ar.push(b.len());
        ac.push(dim + i);
        av.push(-1.0);
        b.push(0.0);
    }
    let a = CscMatrix::new_from_triplets(b.len(), nv, ar, ac, av);
    // ½xᵀPx + qᵀx: P = I on w, and 2C·I on ξ for squared slacks (else q = C on ξ)
    let squared = slack_norm == 2;
    let nq = if squared { nv } else { dim };
    let diag: Vec<f64> = (0..nq).map(|j| if j < dim { 1.0 } else { 2.0 * c }).collect();
    let p = CscMatrix::new_from_triplets(nv, nv, (0..nq).collect(), (0..nq).collect(), diag);
    let mut q = vec![0.0; nv];
    if !squared {
        q[dim..].iter_mut().for_each(|x| *x = c);
    }
    let settings = DefaultSettingsBuilder::default().verbose(false).build().unwrap();
    let cones = [NonnegativeConeT(b.len())];
    let mut solver = DefaultSolver::new(&p, &q, &a, &b, &cones, settings).unwrap();
    solver.solve();
    assert!(matches!(solver.solution.status, SolverStatus::Solved), "{:?}", solver.solution.status);
    solver.solution.obj_val
}

fn kv(k: &str, v: Value) -> (String, Value) {
    (k.to_string(), v)
}

struct Run {
    w: Vec<f64>,
    objective: f64,
    stats: Vec<crate::EpochStats>,
}

#[allow(clippy::too_many_arguments)]
fn train<S: Structure>(
    s: &S,
    data: &S::Data,
    labels: &[S::Label],
    psi: &dyn Surrogate,
    search: &str,
    kind: Kind,
    params: &[(String, Value)],
    epochs: usize,
    pool: Option<&rayon::ThreadPool>,
) -> Run {
    let spec = SearchSpec::from_name(search).unwrap();
    check_compatible(kind, psi, &spec, s.capabilities()).unwrap();
    let prepared = Prepared::new(s, data, labels, psi).unwrap();
    let p = Problem { structure: s, data, labels, psi, search: &spec, prepared: &prepared };
    let mut l: AnyLearner<S::Label> =
        AnyLearner::new(kind, params, labels.len(), s.size_joint_feature(), None).unwrap();
    let ctx = Context::new(pool, None);
    let mut stats = Vec::new();
    for _ in 0..epochs {
        let st = l.epoch(&p, &ctx).unwrap();
        let done = st.converged;
        stats.push(st);
        if done && kind != Kind::Sgd && kind != Kind::Bcfw {
            break;
        }
    }
    let w = l.weights(true);
    let c = l.common().c;
    let xi = crate::slacks(&l);
    let (obj, _) =
        objective(&p, &Context::sequential(), &w, c, l.slack_norm(), crate::warm_starts(&l), xi.as_deref())
            .unwrap();
    Run { w, objective: obj, stats }
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-12)
}

#[test]
fn crammer_singer_every_learner_reaches_the_qp_optimum() {
    // Multiclass + margin rescaling is the Crammer–Singer multiclass SVM.
    let (s, x, y) = multiclass(40, 4, 3, 11);
    let psi = by_name("margin", &[]).unwrap();
    let c = 0.5;
    let every = |_i: usize| (0..3).collect::<Vec<usize>>();
    let opt = reference(&s, &x, &y, &every, psi.as_ref(), c);
    let base = [kv("C", Value::Float(c))];
    let bcfw = train(&s, &x, &y, psi.as_ref(), "convex-hull", Kind::Bcfw, &base, 300, None);
    assert!(rel(bcfw.objective, opt) < 1e-4, "bcfw {} vs {opt}", bcfw.objective);
    let gap = bcfw.stats.last().unwrap().gap.unwrap();
    assert!(gap >= -1e-9 && gap < 1e-3 * opt, "running gap {gap}");
    let cp = train(
        &s,
        &x,
        &y,
        psi.as_ref(),
        "convex-hull",
        Kind::CuttingPlane,
        &[kv("C", Value::Float(c)), kv("eps", Value::Float(1e-6))],
        500,
        None,
    );
    assert!(cp.stats.last().unwrap().converged);
    assert!(rel(cp.objective, opt) < 1e-4, "1-slack {} vs {opt}", cp.objective);
    let cpn = train(
        &s,
        &x,
        &y,
        psi.as_ref(),
        "convex-hull",
        Kind::CuttingPlaneN,
        &[kv("C", Value::Float(c)), kv("eps", Value::Float(1e-6))],
        200,
        None,
    );
    assert!(cpn.stats.last().unwrap().converged);
    assert!(rel(cpn.objective, opt) < 1e-4, "n-slack {} vs {opt}", cpn.objective);
    let sgd = train(&s, &x, &y, psi.as_ref(), "convex-hull", Kind::Sgd, &base, 300, None);
    assert!(rel(sgd.objective, opt) < 2e-2, "sgd {} vs {opt}", sgd.objective);
    // the dual bounds the optimum from below, the primal from above
    for st in &bcfw.stats {
        assert!(st.dual.unwrap() <= opt + 1e-6 * opt);
    }
}

#[test]
fn slack_rescaling_multilabel_matches_the_reference() {
    let (s, x, y) = multilabel(30, 4, 3, 5);
    let psi = by_name("slack", &[]).unwrap();
    let c = 0.2;
    let every = |_i: usize| -> Vec<MlLabel> {
        (0..8u8).map(|m| MlLabel::Integral((0..3).map(|b| (m >> b) & 1).collect())).collect()
    };
    let opt = reference(&s, &x, &y, &every, psi.as_ref(), c);
    let base = [kv("C", Value::Float(c))];
    // integral answers (ban list): exactly the reference's loss
    let bcfw = train(&s, &x, &y, psi.as_ref(), "convex-hull-ban", Kind::Bcfw, &base, 300, None);
    assert!(rel(bcfw.objective, opt) < 1e-3, "bcfw {} vs {opt}", bcfw.objective);
    let duals: Vec<f64> = bcfw.stats.iter().map(|s| s.dual.unwrap()).collect();
    assert!(duals.windows(2).all(|w| w[1] >= w[0] - 1e-9 * opt), "the BCFW dual must not decrease");
    let cp = train(
        &s,
        &x,
        &y,
        psi.as_ref(),
        "convex-hull-ban",
        Kind::CuttingPlane,
        &[kv("C", Value::Float(c)), kv("eps", Value::Float(1e-6))],
        500,
        None,
    );
    assert!(rel(cp.objective, opt) < 1e-4, "1-slack {} vs {opt}", cp.objective);
    let cpn = train(
        &s,
        &x,
        &y,
        psi.as_ref(),
        "sarawagi",
        Kind::CuttingPlaneN,
        &[kv("C", Value::Float(c)), kv("eps", Value::Float(1e-6))],
        100,
        None,
    );
    // Sarawagi–Gupta is approximate (its answers bound the loss from below): measure its weights'
    // objective with the exact search
    let exact = SearchSpec::from_name("convex-hull-ban").unwrap();
    let prepared = Prepared::new(&s, &x, &y, psi.as_ref()).unwrap();
    let p = Problem {
        structure: &s,
        data: &x,
        labels: &y,
        psi: psi.as_ref(),
        search: &exact,
        prepared: &prepared,
    };
    let none = vec![None; y.len()];
    let (true_obj, _) = objective(&p, &Context::sequential(), &cpn.w, c, 1, &none, None).unwrap();
    assert!(
        true_obj >= opt * (1.0 - 1e-6) && rel(true_obj, opt) < 5e-2,
        "n-slack sarawagi {true_obj} vs {opt}"
    );
    assert!(cpn.objective <= true_obj * (1.0 + 1e-9));
    let ang = train(
        &s,
        &x,
        &y,
        psi.as_ref(),
        "angular",
        Kind::CuttingPlaneN,
        &[kv("C", Value::Float(c)), kv("eps", Value::Float(1e-6))],
        200,
        None,
    );
    assert!(rel(ang.objective, opt) < 1e-4, "n-slack angular {} vs {opt}", ang.objective);
    // the fractional (hull) loss bounds the integral one: its optimum is not lower
    let hull = train(&s, &x, &y, psi.as_ref(), "convex-hull", Kind::Bcfw, &base, 300, None);
    let last = hull.stats.last().unwrap();
    assert!(last.objective >= opt * (1.0 - 1e-4), "hull objective {} below {opt}", last.objective);
    let sgd = train(&s, &x, &y, psi.as_ref(), "angular", Kind::Sgd, &base, 300, None);
    assert!(rel(sgd.objective, opt) < 3e-2, "sgd {} vs {opt}", sgd.objective);
}

#[test]
fn sgd_is_bit_identical_with_one_or_two_threads() {
    let (s, x, y) = multilabel(64, 5, 4, 3);
    let psi = by_name("slack", &[]).unwrap();
    let pool = crate::Context::pool(2).unwrap();
    assert!(pool.is_some());
    for kind in [Kind::Sgd, Kind::Bcfw] {
        let params = [kv("random_state", Value::Int(42)), kv("block_size", Value::Int(8))];
        let a = train(&s, &x, &y, psi.as_ref(), "convex-hull", kind, &params, 5, None);
        let b = train(&s, &x, &y, psi.as_ref(), "convex-hull", kind, &params, 5, pool.as_ref());
        assert!(a.w.iter().zip(&b.w).all(|(p, q)| p.to_bits() == q.to_bits()), "{kind:?}");
        let c = train(
            &s,
            &x,
            &y,
            psi.as_ref(),
            "convex-hull",
            kind,
            &[kv("random_state", Value::Int(43)), kv("block_size", Value::Int(8))],
            5,
            None,
        );
        assert_ne!(a.w, c.w, "{kind:?}: another seed gives another order");
    }
}

#[test]
fn warm_starts_make_late_hull_searches_cheap() {
    let (s, x, y) = multilabel(60, 5, 4, 9);
    let psi = by_name("slack", &[]).unwrap();
    let run = train(&s, &x, &y, psi.as_ref(), "convex-hull", Kind::Bcfw, &[], 40, None);
    let first = &run.stats[0];
    let last = run.stats.last().unwrap();
    let per = |st: &crate::EpochStats| st.calls.total() as f64 / st.inferences as f64;
    assert!(last.calls.evaluated > 0, "warm-start labels must be re-evaluated");
    assert!(per(last) < per(first), "calls per inference {} (last) vs {} (first)", per(last), per(first));
    assert!(per(last) < 1.6, "late calls per inference {}", per(last));
}

#[test]
fn microf1_and_probloss_train() {
    let (s, x, y) = multilabel(30, 4, 3, 2);
    for (name, kind) in [
        ("microf1", Kind::Bcfw),
        ("microf1", Kind::CuttingPlane),
        ("probloss", Kind::Sgd),
        ("log", Kind::Sgd),
    ] {
        let psi = by_name(name, &[]).unwrap();
        let run = train(&s, &x, &y, psi.as_ref(), "convex-hull", kind, &[], 20, None);
        let first = run.stats[0].objective;
        assert!(
            run.objective.is_finite() && run.objective < first,
            "{name}/{kind:?}: {} vs {first}",
            run.objective
        );
        assert!(dense_norm_sq(&run.w) > 0.0);
    }
}

#[test]
fn incompatible_combinations_are_refused_naming_both() {
    let s = Multiclass::new(3, 2).unwrap();
    let prob = by_name("probloss", &[]).unwrap();
    let hull = SearchSpec::from_name("convex-hull").unwrap();
    let e = check_compatible(Kind::Bcfw, prob.as_ref(), &hull, s.capabilities()).unwrap_err().to_string();
    assert!(e.contains("'bcfw'") && e.contains("'probloss'") && e.contains("'sgd'"), "{e}");
    let slack = by_name("slack", &[]).unwrap();
    let sar = SearchSpec::from_name("sarawagi").unwrap();
    let e = check_compatible(Kind::Sgd, slack.as_ref(), &sar, s.capabilities()).unwrap_err().to_string();
    assert!(e.contains("'sarawagi'") && e.contains("'sgd'"), "{e}");
    assert!(check_compatible(Kind::CuttingPlaneN, slack.as_ref(), &sar, s.capabilities()).is_ok());
    let margin = by_name("margin", &[]).unwrap();
    let ang = SearchSpec::from_name("angular").unwrap();
    let e = check_compatible(Kind::Sgd, margin.as_ref(), &ang, s.capabilities()).unwrap_err().to_string();
    assert!(e.contains("'angular'") && e.contains("'margin'"), "{e}");
    // frontier: refused for Micro-F1's factor map and for structures without the query
    let front = SearchSpec::from_name("frontier").unwrap();
    assert!(check_compatible(Kind::Sgd, prob.as_ref(), &front, s.capabilities()).is_ok());
    let f1 = by_name("microf1", &[]).unwrap();
    let e = check_compatible(Kind::Sgd, f1.as_ref(), &front, s.capabilities()).unwrap_err();
    assert!(matches!(e, bicrit_core::Error::Incompatible(_)));
    assert!(e.to_string().contains("'frontier'") && e.to_string().contains("'microf1'"), "{e}");
    // (multi-label exact enumeration has the frontier; the tree DP has not)
    let tree = Multilabel::new(3, 2, vec![(0, 1), (1, 2)], Inference::Tree).unwrap();
    let e = check_compatible(Kind::Sgd, prob.as_ref(), &front, tree.capabilities()).unwrap_err().to_string();
    assert!(e.contains("frontier by loss value"), "{e}");
}

#[test]
fn frontier_trains_like_the_exact_ban_list_search() {
    // Both searches return the exact integral optimum: with continuous features (no ties) they
    // pick the same labels, so the learners take the same steps, with one call per inference.
    let (s, x, y) = multiclass(30, 4, 4, 7);
    for (name, kind) in [("probloss", Kind::Sgd), ("slack", Kind::Bcfw), ("log", Kind::Sgd)] {
        let psi = by_name(name, &[]).unwrap();
        let a = train(&s, &x, &y, psi.as_ref(), "frontier", kind, &[], 5, None);
        let b = train(&s, &x, &y, psi.as_ref(), "convex-hull-ban", kind, &[], 5, None);
        assert!(rel(a.objective, b.objective) < 1e-9, "{name}: {} vs {}", a.objective, b.objective);
        for (sa, sb) in a.stats.iter().zip(&b.stats) {
            assert!(rel(sa.loss, sb.loss) < 1e-9, "{name} epoch {}: {} vs {}", sa.epoch, sa.loss, sb.loss);
            assert_eq!(sa.calls.total(), sa.inferences);
            assert_eq!(sa.calls.frontier, sa.inferences);
            assert_eq!(sa.fractional, 0);
        }
    }
}

#[test]
fn bad_input_is_a_clear_error() {
    let (s, x, y) = multiclass(5, 3, 3, 1);
    let psi = by_name("margin", &[]).unwrap();
    let e = Prepared::new(&s, &x, &y[..4], psi.as_ref()).unwrap_err().to_string();
    assert!(e.contains("5 instances") && e.contains("4 labels"), "{e}");
    let mut bad = y.clone();
    bad[2] = 7;
    let e = Prepared::new(&s, &x, &bad, psi.as_ref()).unwrap_err().to_string();
    assert!(e.contains("instance 2") && e.contains("label 7"), "{e}");
    let empty = CsrMatrix::from_dense(&[], 3).unwrap();
    let e = Prepared::new(&s, &empty, &[], psi.as_ref()).unwrap_err().to_string();
    assert!(e.contains("empty"), "{e}");
    let e = AnyLearner::<usize>::new(Kind::Sgd, &[], 5, 9, Some(vec![f64::NAN; 9])).unwrap_err().to_string();
    assert!(e.contains("w0"), "{e}");
}

#[test]
fn sgd_schedules_and_averaging_variants_run() {
    let (s, x, y) = multiclass(30, 4, 3, 4);
    let psi = by_name("margin", &[]).unwrap();
    let opt = reference(&s, &x, &y, &|_| (0..3).collect(), psi.as_ref(), 1.0);
    for params in [
        vec![kv("average", Value::Str("none".into()))],
        vec![kv("average", Value::Str("uniform".into()))],
        vec![kv("schedule", Value::Str("constant".into())), kv("eta0", Value::Float(0.05))],
        vec![kv("schedule", Value::Str("invscaling".into())), kv("eta0", Value::Float(1.0))],
        vec![kv("batch_size", Value::Int(4)), kv("block_size", Value::Int(6))],
        vec![kv("t0", Value::Float(0.0))],
        vec![kv("objective", Value::Str("exact".into()))],
        vec![kv("project", Value::Bool(true))],
        vec![kv("project", Value::Bool(true)), kv("average", Value::Str("uniform".into()))],
        vec![kv("project", Value::Bool(true)), kv("t0", Value::Float(0.0))],
    ] {
        let run = train(&s, &x, &y, psi.as_ref(), "convex-hull", Kind::Sgd, &params, 100, None);
        assert!(run.objective < 1.5 * opt, "{params:?}: {} vs {opt}", run.objective);
    }
    // a constant step too large for λ is refused
    let e = AnyLearner::<usize>::new(
        Kind::Sgd,
        &[kv("schedule", Value::Str("constant".into())), kv("eta0", Value::Float(100.0))],
        30,
        12,
        None,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("eta0"), "{e}");
}

#[test]
fn bcfw_from_w0_and_exact_objective() {
    let (s, x, y) = multiclass(30, 4, 3, 8);
    let psi = by_name("margin", &[]).unwrap();
    let spec = SearchSpec::from_name("convex-hull").unwrap();
    let prepared = Prepared::new(&s, &x, &y, psi.as_ref()).unwrap();
    let p = Problem {
        structure: &s,
        data: &x,
        labels: &y,
        psi: psi.as_ref(),
        search: &spec,
        prepared: &prepared,
    };
    let ctx = Context::sequential();
    let params = [kv("objective", Value::Str("exact".into()))];
    let mut a: AnyLearner<usize> = AnyLearner::new(Kind::Bcfw, &params, 30, 12, None).unwrap();
    for _ in 0..100 {
        a.epoch(&p, &ctx).unwrap();
    }
    let w = a.weights(true);
    let mut b: AnyLearner<usize> = AnyLearner::new(Kind::Bcfw, &params, 30, 12, Some(w)).unwrap();
    let st = b.epoch(&p, &ctx).unwrap();
    assert_eq!(st.objective_kind, crate::ObjectiveKind::Exact);
    assert!(st.gap.unwrap() >= -1e-9);
    assert_eq!(st.inferences, 60, "the start from w0 adds one pass of inferences");
    let opt = reference(&s, &x, &y, &|_| (0..3).collect(), psi.as_ref(), 1.0);
    for _ in 0..100 {
        b.epoch(&p, &ctx).unwrap();
    }
    let (obj, _) = objective(&p, &ctx, &b.weights(true), 1.0, 1, crate::warm_starts(&b), None).unwrap();
    assert!(rel(obj, opt) < 1e-3, "restart from w0: {obj} vs {opt}");
}

#[test]
fn an_interrupted_epoch_leaves_the_previous_state() {
    let (s, x, y) = multilabel(200, 5, 4, 12);
    let psi = by_name("slack", &[]).unwrap();
    let spec = SearchSpec::from_name("convex-hull").unwrap();
    let prepared = Prepared::new(&s, &x, &y, psi.as_ref()).unwrap();
    let p = Problem {
        structure: &s,
        data: &x,
        labels: &y,
        psi: psi.as_ref(),
        search: &spec,
        prepared: &prepared,
    };
    let plain = Context::sequential();
    for (kind, params) in [
        (Kind::Sgd, vec![kv("block_size", Value::Int(16))]),
        (Kind::Bcfw, vec![kv("block_size", Value::Int(16))]),
        (Kind::CuttingPlaneN, vec![kv("batch_size", Value::Int(40))]),
    ] {
        let mut a: AnyLearner<MlLabel> =
            AnyLearner::new(kind, &params, 200, s.size_joint_feature(), None).unwrap();
        let mut b = a.clone();
        for _ in 0..2 {
            a.epoch(&p, &plain).unwrap();
            b.epoch(&p, &plain).unwrap();
        }
        // b's third epoch is interrupted after a few blocks
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let stop = || -> bicrit_core::Result<()> {
            if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= 3 {
                Err(bicrit_core::Error::input("interrupted"))
            } else {
                Ok(())
            }
        };
        let ctx = Context::with_interval(None, Some(&stop), std::time::Duration::ZERO);
        let before = b.weights(true);
        assert!(b.epoch(&p, &ctx).is_err(), "{kind:?}");
        assert_eq!(b.epochs(), 2);
        assert_eq!(b.weights(true), before, "{kind:?}: the weights are those of epoch 2");
        // and training continues exactly as if nothing had happened
        let sa = a.epoch(&p, &plain).unwrap();
        let sb = b.epoch(&p, &plain).unwrap();
        assert_eq!(a.weights(true), b.weights(true), "{kind:?}");
        assert_eq!(sa.calls, sb.calls, "{kind:?}: the warm starts were restored too");
    }
}

/// The certificate of a run: every epoch's gap ≥ 0 and dual ≤ the optimum ≤ primal; the last gap
/// small.
fn check_certificate(run: &Run, opt: f64, final_gap: f64, what: &str) {
    for st in &run.stats {
        let (gap, dual) = (st.gap.unwrap(), st.dual.unwrap());
        assert!(gap >= -1e-9 * opt.abs().max(1.0), "{what} epoch {}: gap {gap} < 0", st.epoch);
        assert!(
            dual <= opt * (1.0 + 1e-6) + 1e-9,
            "{what} epoch {}: dual {dual} above the optimum {opt}",
            st.epoch
        );
        assert!(
            st.objective >= opt * (1.0 - 1e-6) - 1e-9,
            "{what} epoch {}: primal {} below the optimum {opt}",
            st.epoch,
            st.objective
        );
        assert!(rel(st.objective - st.dual.unwrap(), gap) < 1e-6 || gap.abs() < 1e-12, "{what}: gap = P − D");
    }
    let last = run.stats.last().unwrap();
    assert!(last.gap.unwrap() < final_gap * opt, "{what}: final gap {} vs optimum {opt}", last.gap.unwrap());
}

#[test]
fn squared_slacks_bcfw_reaches_the_qp_optimum() {
    // multiclass + margin rescaling (Crammer–Singer with squared slacks) and multilabel + slack
    // rescaling on the full graph, against the enumerated QP; exact objective, so each epoch's
    // gap is the certificate P(w̄) − D(ā) of the averaged model
    let (s, x, y) = multiclass(40, 4, 3, 21);
    let margin = by_name("margin", &[]).unwrap();
    // (at C = 5 the dual of the averaged model closes the gap slowly: 0.2 % after 400 epochs)
    for (c, block, tol) in [(0.05, 1, 1e-4), (0.5, 1, 1e-4), (5.0, 4, 1e-3)] {
        let opt = reference_p(&s, &x, &y, &|_| (0..3).collect(), margin.as_ref(), c, 2);
        let params = [
            kv("C", Value::Float(c)),
            kv("slack_norm", Value::Int(2)),
            kv("objective", Value::Str("exact".into())),
            kv("block_size", Value::Int(block)),
        ];
        let run = train(&s, &x, &y, margin.as_ref(), "convex-hull", Kind::Bcfw, &params, 400, None);
        assert!(rel(run.objective, opt) < tol, "C = {c}: bcfw {} vs {opt}", run.objective);
        check_certificate(&run, opt, 10.0 * tol, &format!("multiclass C = {c}"));
        let l1 = reference(&s, &x, &y, &|_| (0..3).collect(), margin.as_ref(), c);
        assert!((l1 - opt).abs() > 1e-3 * opt, "the two norms must be different problems: {l1} vs {opt}");
    }
    let (s, x, y) = multilabel(30, 4, 3, 5);
    let slack = by_name("slack", &[]).unwrap();
    let every = |_i: usize| -> Vec<MlLabel> {
        (0..8u8).map(|m| MlLabel::Integral((0..3).map(|b| (m >> b) & 1).collect())).collect()
    };
    for c in [0.02, 0.2] {
        let opt = reference_p(&s, &x, &y, &every, slack.as_ref(), c, 2);
        let params = [
            kv("C", Value::Float(c)),
            kv("slack_norm", Value::Int(2)),
            kv("objective", Value::Str("exact".into())),
        ];
        let run = train(&s, &x, &y, slack.as_ref(), "convex-hull-ban", Kind::Bcfw, &params, 400, None);
        assert!(rel(run.objective, opt) < 3e-4, "slack C = {c}: bcfw {} vs {opt}", run.objective);
        check_certificate(&run, opt, 3e-3, &format!("multilabel slack C = {c}"));
        // the running (free) estimates: the dual never decreases and stays below the optimum
        let params = [kv("C", Value::Float(c)), kv("slack_norm", Value::Int(2))];
        let run = train(&s, &x, &y, slack.as_ref(), "convex-hull-ban", Kind::Bcfw, &params, 300, None);
        assert!(rel(run.objective, opt) < 1e-3, "running, C = {c}: {} vs {opt}", run.objective);
        let duals: Vec<f64> = run.stats.iter().map(|s| s.dual.unwrap()).collect();
        assert!(duals.windows(2).all(|w| w[1] >= w[0] - 1e-9 * opt), "the dual must not decrease");
        assert!(duals.iter().all(|&d| d <= opt * (1.0 + 1e-9)), "dual above the optimum");
    }
}

#[test]
fn squared_slacks_start_from_w0_and_restore_on_interrupt() {
    let (s, x, y) = multilabel(60, 4, 3, 9);
    let psi = by_name("margin", &[]).unwrap();
    let spec = SearchSpec::from_name("convex-hull").unwrap();
    let prepared = Prepared::new(&s, &x, &y, psi.as_ref()).unwrap();
    let p = Problem {
        structure: &s,
        data: &x,
        labels: &y,
        psi: psi.as_ref(),
        search: &spec,
        prepared: &prepared,
    };
    let ctx = Context::sequential();
    let dim = s.size_joint_feature();
    let params = [kv("slack_norm", Value::Int(2)), kv("objective", Value::Str("exact".into()))];
    let mut a: AnyLearner<MlLabel> = AnyLearner::new(Kind::Bcfw, &params, 60, dim, None).unwrap();
    for _ in 0..5 {
        a.epoch(&p, &ctx).unwrap();
    }
    // from w0: the first step's line search includes the quadratic term, the certificate holds
    let mut b: AnyLearner<MlLabel> =
        AnyLearner::new(Kind::Bcfw, &params, 60, dim, Some(a.weights(true))).unwrap();
    let first = b.epoch(&p, &ctx).unwrap();
    assert!(first.gap.unwrap() >= -1e-9 && first.dual.unwrap() <= first.objective);
    // an interrupted epoch leaves the state (α included) as it was
    let mut c = a.clone();
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let stop = || -> bicrit_core::Result<()> {
        if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= 3 {
            Err(bicrit_core::Error::input("interrupted"))
        } else {
            Ok(())
        }
    };
    let small = [kv("slack_norm", Value::Int(2)), kv("block_size", Value::Int(4))];
    let mut d: AnyLearner<MlLabel> = AnyLearner::new(Kind::Bcfw, &small, 60, dim, None).unwrap();
    let mut e = d.clone();
    d.epoch(&p, &ctx).unwrap();
    e.epoch(&p, &ctx).unwrap();
    let halted = Context::with_interval(None, Some(&stop), std::time::Duration::ZERO);
    assert!(e.epoch(&p, &halted).is_err());
    let (sd, se) = (d.epoch(&p, &ctx).unwrap(), e.epoch(&p, &ctx).unwrap());
    assert_eq!(d.weights(true), e.weights(true));
    assert_eq!(sd.dual, se.dual, "α restored with the blocks");
    assert_eq!(c.epoch(&p, &ctx).unwrap().dual, a.epoch(&p, &ctx).unwrap().dual);
}

#[test]
fn slack_norm_is_checked_and_only_bcfw_takes_it() {
    let e = AnyLearner::<usize>::new(Kind::Bcfw, &[kv("slack_norm", Value::Int(3))], 4, 4, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("slack_norm") && e.contains("1 or 2"), "{e}");
    for kind in [Kind::Sgd, Kind::CuttingPlane, Kind::CuttingPlaneN] {
        assert_eq!(crate::catalog::slack_norms(kind), &[1]);
        let e = AnyLearner::<usize>::new(kind, &[kv("slack_norm", Value::Int(2))], 4, 4, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no parameter 'slack_norm'"), "{e}");
    }
    assert_eq!(crate::catalog::slack_norms(Kind::Bcfw), &[1, 2]);
}
