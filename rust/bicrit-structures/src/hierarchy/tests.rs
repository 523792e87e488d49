//! Randomized comparison of every hierarchy oracle with brute-force enumeration of the label
//! space (all node subsets, filtered by the label checks), scored through `joint_feature` and
//! `terms` and selected with the reference semantics of `select_best`.

use super::*;
use crate::select::select_best;
use bicrit_core::Cone;

/// splitmix64: deterministic, dependency-free randomness for the tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn int(&mut self, lo: i64, hi: i64) -> f64 {
        (lo + self.below((hi - lo + 1) as usize) as i64) as f64
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

/// A random rooted tree (max_parents = 1) or DAG on n nodes with a random root id.
fn random_graph(rng: &mut Rng, n: usize, max_parents: usize) -> HierarchyGraph {
    let mut perm: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rng.below(i + 1);
        perm.swap(i, j);
    }
    let mut parents = vec![Vec::new(); n];
    for i in 1..n {
        let np = 1 + rng.below(max_parents.min(i));
        let mut ps: Vec<usize> = Vec::new();
        while ps.len() < np {
            let p = perm[rng.below(i)];
            if !ps.contains(&p) {
                ps.push(p);
            }
        }
        parents[perm[i]] = ps;
    }
    HierarchyGraph::new(&parents, perm[0], None).unwrap()
}

fn all_labels(s: &HierarchyStructure) -> Vec<HierLabel> {
    let m = s.n_nodes();
    (0u32..(1 << m))
        .map(|mask| (0..m as u32).filter(|v| mask >> v & 1 == 1).collect::<Vec<u32>>())
        .filter(|y| s.check(y).is_ok())
        .collect()
}

struct Case {
    s: HierarchyStructure,
    x: CsrMatrix,
    w: Vec<f64>,
    labels: Vec<HierLabel>,
}

fn random_case(rng: &mut Rng, tree: bool, space: LabelSpace, multilabel: bool, loss: HierLoss) -> Case {
    let n = 2 + rng.below(if multilabel { 7 } else { 9 });
    let g = random_graph(rng, n, if tree { 1 } else { 3 });
    let d = 1 + rng.below(3);
    let node_scale = (rng.below(3) == 0).then(|| (0..n).map(|_| rng.pick(&[0.5, 1.0, 2.0])).collect());
    let node_loss_weight =
        (rng.below(3) == 0).then(|| (0..n).map(|_| rng.pick(&[0.0, 0.5, 1.0, 2.0])).collect());
    let node_miss_weight =
        (rng.below(3) == 0).then(|| (0..n).map(|_| rng.pick(&[0.0, 0.5, 1.0, 3.0])).collect());
    let layout = if rng.below(2) == 0 { WeightLayout::NodeMajor } else { WeightLayout::FeatureMajor };
    let opts = HierarchyOptions {
        space,
        multilabel,
        loss,
        n_features: d,
        node_scale,
        node_loss_weight,
        node_miss_weight,
        layout,
    };
    let mut s = HierarchyStructure::new(g, opts).unwrap();
    if rng.below(2) == 0 {
        s.ancestors = None; // the per-call ancestor search used beyond ANCESTOR_TABLE_LIMIT
    }
    let row: Vec<f64> = (0..d).map(|_| rng.int(-2, 2)).collect();
    let x = CsrMatrix::from_dense(&[row], d).unwrap();
    let w = (0..n * d).map(|_| rng.int(-2, 2)).collect();
    let labels = all_labels(&s);
    Case { s, x, w, labels }
}

fn random_query(rng: &mut Rng, with_cone: bool) -> (Objective, Option<Objective>, Option<Cone>) {
    let lam = rng.pick(&[0.0, 0.5, 1.0, 2.0, f64::INFINITY]);
    let (p, sec) = if lam.is_infinite() {
        (
            Objective { margin: 0.0, terms: Terms { loss: 1.0, ..Terms::default() } },
            Some(Objective { margin: 1.0, terms: Terms::default() }),
        )
    } else {
        let t =
            Terms { loss: lam, size: rng.pick(&[0.0, 0.0, -0.5, -1.0]), hamming: rng.pick(&[0.0, 0.0, 1.0]) };
        let sec = (rng.below(2) == 0)
            .then_some(Objective { margin: 0.0, terms: Terms { loss: 1.0, ..Terms::default() } });
        (Objective { margin: 1.0, terms: t }, sec)
    };
    let cone = (with_cone && rng.below(2) == 0).then(|| Cone {
        lo: rng.pick(&[0.0, 0.5, 1.0]),
        lo_closed: rng.below(2) == 0,
        hi: rng.pick(&[1.0, 2.0, f64::INFINITY]),
        hi_closed: rng.below(2) == 0,
    });
    (p, sec, cone)
}

fn check_against_brute(rng: &mut Rng, case: &Case, n_queries: usize) {
    let Case { s, x, w, labels } = case;
    for _ in 0..n_queries {
        let gold = labels[rng.below(labels.len())].clone();
        let (primary, secondary, cone) = random_query(rng, !s.multilabel());
        let k = 1 + rng.below(4);
        let n_ban = rng.below(3).min(labels.len() - 1);
        let ban: Vec<HierLabel> = (0..n_ban).map(|_| labels[rng.below(labels.len())].clone()).collect();
        let q = TermQuery { primary, secondary, ban: &ban, k, cone };
        let found = s.oracle(w, x, 0, &gold, &q).unwrap();
        let gold_score = s.score(w, x, 0, &gold).unwrap();
        let cands: Vec<Scored<HierLabel>> = labels
            .iter()
            .map(|y| Scored {
                label: y.clone(),
                margin: s.score(w, x, 0, y).unwrap() - gold_score,
                terms: s.terms(y, &gold).unwrap(),
            })
            .collect();
        let expected = select_best(&q, cands);
        assert_eq!(found.len(), expected.len(), "k={k} ban={ban:?} found={found:?} expected={expected:?}");
        for (f, e) in found.iter().zip(&expected) {
            s.check(&f.label).unwrap();
            assert!(!ban.contains(&f.label));
            let fm = s.score(w, x, 0, &f.label).unwrap() - gold_score;
            assert!((fm - f.margin).abs() < 1e-9, "margin {} vs {fm}", f.margin);
            assert_eq!(f.terms, s.terms(&f.label, &gold).unwrap());
            let (pf, pe) = (primary.value(f.margin, &f.terms), primary.value(e.margin, &e.terms));
            assert!(
                (pf - pe).abs() < 1e-9,
                "{:?}: primary {pf} vs {pe}\nfound {found:?}\nexpected {expected:?}",
                s.oracle_kind()
            );
            if let Some(o) = &secondary {
                let (sf, se) = (o.value(f.margin, &f.terms), o.value(e.margin, &e.terms));
                assert!((sf - se).abs() < 1e-9, "secondary {sf} vs {se}");
            }
            if let Some(c) = &cone {
                assert!(c.contains(1.0 + f.margin, f.terms.loss));
            }
        }
        // distinct labels
        for i in 0..found.len() {
            for j in 0..i {
                assert_ne!(found[i].label, found[j].label);
            }
        }
        // predict = argmax of the score
        let p = s.predict(w, x, 0).unwrap();
        let best = labels.iter().map(|y| s.score(w, x, 0, y).unwrap()).fold(f64::NEG_INFINITY, f64::max);
        assert!((s.score(w, x, 0, &p).unwrap() - best).abs() < 1e-9);
    }
}

fn run(seed: u64, tree: bool, space: LabelSpace, multilabel: bool, cases: usize) {
    let mut rng = Rng(seed);
    for _ in 0..cases {
        let loss = if rng.below(2) == 0 { HierLoss::Node } else { HierLoss::Leaf };
        let case = random_case(&mut rng, tree, space, multilabel, loss);
        check_against_brute(&mut rng, &case, 4);
    }
}

#[test]
fn tree_any_multi_equals_brute_force() {
    run(1, true, LabelSpace::Any, true, 400);
}

#[test]
fn tree_leaves_multi_equals_brute_force() {
    run(2, true, LabelSpace::Leaves, true, 400);
}

#[test]
fn tree_single_equals_brute_force() {
    run(3, true, LabelSpace::Leaves, false, 300);
    run(4, true, LabelSpace::Any, false, 300);
}

#[test]
fn dag_any_multi_equals_brute_force() {
    run(5, false, LabelSpace::Any, true, 400);
}

#[test]
fn dag_leaves_multi_equals_brute_force() {
    run(6, false, LabelSpace::Leaves, true, 250);
}

#[test]
fn dag_single_equals_brute_force() {
    run(7, false, LabelSpace::Leaves, false, 300);
    run(8, false, LabelSpace::Any, false, 300);
}

/// The normalized loss √(Σ_{y△y_i} λ) (NHSVM, single paths) through the same brute force.
#[test]
fn single_normalized_loss_equals_brute_force() {
    let mut rng = Rng(21);
    for i in 0..600 {
        let space = if i % 2 == 0 { LabelSpace::Leaves } else { LabelSpace::Any };
        let case = random_case(&mut rng, i % 4 < 2, space, false, HierLoss::Normalized);
        check_against_brute(&mut rng, &case, 4);
    }
}

#[test]
fn normalized_loss_needs_single_paths() {
    let g = HierarchyGraph::new(&[vec![], vec![0], vec![0]], 0, None).unwrap();
    let opts = |multilabel| HierarchyOptions {
        space: LabelSpace::Leaves,
        multilabel,
        loss: HierLoss::Normalized,
        n_features: 1,
        node_scale: None,
        node_loss_weight: None,
        node_miss_weight: None,
        layout: WeightLayout::NodeMajor,
    };
    let e = HierarchyStructure::new(g.clone(), opts(true)).unwrap_err();
    assert!(e.to_string().contains("multilabel=False"), "{e}");
    let s = HierarchyStructure::new(g, opts(false)).unwrap();
    let t = s.terms(&vec![0, 1], &vec![0, 2]).unwrap();
    assert!((t.loss - 2f64.sqrt()).abs() < 1e-15 && t.hamming == 2.0);
    assert_eq!(s.terms(&vec![0, 1], &vec![0, 1]).unwrap().loss, 0.0);
}

/// NHSVM3's ratio oracle: max over y ≠ y_i with L(y) > 0 of m(y)/L(y) + 1, clipped at 0.
#[test]
fn ratio_oracle_equals_brute_force() {
    let mut rng = Rng(22);
    for i in 0..800 {
        let space = if i % 2 == 0 { LabelSpace::Leaves } else { LabelSpace::Any };
        let loss = [HierLoss::Normalized, HierLoss::Node, HierLoss::Leaf][i % 3];
        let case = random_case(&mut rng, i % 4 < 2, space, false, loss);
        let Case { s, x, w, labels } = &case;
        for _ in 0..4 {
            let gold = labels[rng.below(labels.len())].clone();
            let offset = rng.pick(&[1.0, 0.5, 0.0]);
            let (found, value) = s.ratio_oracle(w, x, 0, &gold, offset).unwrap();
            let gold_score = s.score(w, x, 0, &gold).unwrap();
            let mut best = 0.0f64;
            for y in labels.iter().filter(|y| **y != gold) {
                let l = s.terms(y, &gold).unwrap().loss;
                if l > 0.0 {
                    best = best.max((s.score(w, x, 0, y).unwrap() - gold_score) / l + offset);
                }
            }
            assert!((value - best).abs() < 1e-9, "{value} vs {best}");
            s.check(&found.label).unwrap();
            if value == 0.0 {
                assert_eq!(found.label, gold);
            } else {
                let m = s.score(w, x, 0, &found.label).unwrap() - gold_score;
                assert!((found.margin - m).abs() < 1e-9);
                assert_eq!(found.terms, s.terms(&found.label, &gold).unwrap());
                assert!((m / found.terms.loss + offset - value).abs() < 1e-9);
            }
        }
    }
}

#[test]
fn lp_bounds_ip_and_is_tight_on_any_space() {
    let mut rng = Rng(9);
    for _ in 0..200 {
        let space = if rng.below(2) == 0 { LabelSpace::Any } else { LabelSpace::Leaves };
        let case = random_case(&mut rng, false, space, true, HierLoss::Node);
        let gold = case.labels[rng.below(case.labels.len())].clone();
        let o = Objective { margin: 1.0, terms: Terms { loss: 1.0, ..Terms::default() } };
        let lp = case.s.relaxation(&case.w, &case.x, 0, &gold, &o).unwrap();
        let q = TermQuery { primary: o, secondary: None, ban: &[], k: 1, cone: None };
        let best = &case.s.oracle(&case.w, &case.x, 0, &gold, &q).unwrap()[0];
        // LP value is relative to the empty gains: compare with the gains of the best label
        // the IP label's value in the LP's units (Σ of node gains)
        let gain_best: f64 = {
            let mut sc = Scratch::default();
            case.s.node_scores(&case.w, &case.x.view(), 0, &mut sc.sigma);
            sc.mask = vec![false; case.s.n_nodes()];
            for &v in &gold {
                sc.mask[v as usize] = true;
            }
            let mut g = Vec::new();
            case.s.gains(&sc.sigma, &sc.mask, &o, &mut g);
            best.label.iter().map(|&v| g[v as usize]).sum()
        };
        assert!(lp.value >= gain_best - 1e-6, "LP {} < IP {gain_best}", lp.value);
        if space == LabelSpace::Any {
            assert!((lp.value - gain_best).abs() < 1e-6, "closure LP {} ≠ min-cut {gain_best}", lp.value);
        }
    }
}

#[test]
fn bad_labels_name_the_node() {
    let g = HierarchyGraph::new(
        &[vec![], vec![0], vec![0], vec![1]],
        0,
        Some(vec!["r".into(), "a".into(), "b".into(), "c".into()]),
    )
    .unwrap();
    let opts = |space, multilabel| HierarchyOptions {
        space,
        multilabel,
        loss: HierLoss::Node,
        n_features: 2,
        node_scale: None,
        node_loss_weight: None,
        node_miss_weight: None,
        layout: WeightLayout::NodeMajor,
    };
    let s = HierarchyStructure::new(g.clone(), opts(LabelSpace::Leaves, false)).unwrap();
    let msg = |y: &[u32]| s.check(y).unwrap_err().to_string();
    assert!(msg(&[0, 3]).contains("parent node 1 (\"a\")"), "{}", msg(&[0, 3]));
    assert!(msg(&[0, 1]).contains("not a leaf"), "{}", msg(&[0, 1]));
    assert!(msg(&[0, 1, 2, 3]).contains("single-label"), "{}", msg(&[0, 1, 2, 3]));
    assert!(msg(&[0, 9]).contains("outside"));
    assert!(msg(&[1, 3]).contains("root"));
    assert!(msg(&[0, 2, 1]).contains("sorted"));
    assert!(msg(&[]).contains("non-empty"));
    let any = HierarchyStructure::new(g.clone(), opts(LabelSpace::Any, true)).unwrap();
    assert!(any.check(&[0, 1]).is_ok() && any.check(&[0]).is_ok());
    let x = CsrMatrix::from_dense(&[vec![1.0, 2.0, 3.0]], 3).unwrap();
    let w = vec![0.0; 8];
    assert!(any
        .oracle(&w, &x, 0, &vec![0], &TermQuery::loss_augmented(1.0))
        .unwrap_err()
        .to_string()
        .contains("features"));
    let cone = Cone { lo: 0.0, lo_closed: true, hi: 1.0, hi_closed: true };
    let x2 = CsrMatrix::from_dense(&[vec![1.0, 2.0]], 2).unwrap();
    let q = TermQuery { cone: Some(cone), ..TermQuery::loss_augmented(1.0) };
    assert!(matches!(any.oracle(&w, &x2, 0, &vec![0], &q), Err(Error::Unsupported(_))));
    let bad =
        HierarchyOptions { node_loss_weight: Some(vec![1.0, -1.0, 1.0, 1.0]), ..opts(LabelSpace::Any, true) };
    assert!(HierarchyStructure::new(g, bad).unwrap_err().to_string().contains("node 1"));
}

#[test]
fn deep_hierarchies_do_not_overflow_the_stack() {
    // a path of 60,000 nodes plus one shortcut edge (a DAG): DP, min-cut and enumeration are
    // iterative
    let n = 60_000;
    let mut parents: Vec<Vec<usize>> = (0..n).map(|v| if v == 0 { vec![] } else { vec![v - 1] }).collect();
    let opts = |space, multilabel| HierarchyOptions {
        space,
        multilabel,
        loss: HierLoss::Node,
        n_features: 1,
        node_scale: None,
        node_loss_weight: None,
        node_miss_weight: None,
        layout: WeightLayout::NodeMajor,
    };
    let x = CsrMatrix::from_dense(&[vec![1.0]], 1).unwrap();
    let w: Vec<f64> = (0..n).map(|v| if v % 2 == 0 { 1.0 } else { -0.5 }).collect();
    let gold: HierLabel = vec![0, 1];
    let q = TermQuery::loss_augmented(1.0);
    let tree =
        HierarchyStructure::new(HierarchyGraph::new(&parents, 0, None).unwrap(), opts(LabelSpace::Any, true))
            .unwrap();
    let a = tree.oracle(&w, &x, 0, &gold, &q).unwrap();
    assert_eq!(a[0].label.len(), n);
    parents[n - 1].push(n - 3);
    let dag =
        HierarchyStructure::new(HierarchyGraph::new(&parents, 0, None).unwrap(), opts(LabelSpace::Any, true))
            .unwrap();
    assert_eq!(dag.oracle_kind(), OracleKind::MinCut);
    let b = dag.oracle(&w, &x, 0, &gold, &q).unwrap();
    assert_eq!(b[0].label, a[0].label);
    let single = HierarchyStructure::new(
        HierarchyGraph::new(&parents, 0, None).unwrap(),
        opts(LabelSpace::Leaves, false),
    )
    .unwrap();
    assert_eq!(
        single.oracle(&w, &x, 0, &single.closure_of(&[n as u32 - 1]).unwrap(), &q).unwrap()[0].label.len(),
        n
    );
}

#[test]
fn oracle_from_scores_equals_oracle() {
    let mut rng = Rng(11);
    for _ in 0..100 {
        let tree = rng.below(2) == 0;
        let case = random_case(&mut rng, tree, LabelSpace::Leaves, true, HierLoss::Leaf);
        let gold = case.labels[rng.below(case.labels.len())].clone();
        let mut sigma = Vec::new();
        case.s.node_scores(&case.w, &case.x.view(), 0, &mut sigma);
        let q = TermQuery { k: 2, ..TermQuery::loss_augmented(1.5) };
        let a = case.s.oracle(&case.w, &case.x, 0, &gold, &q).unwrap();
        let b = case.s.oracle_from_scores(&sigma, &gold, &q).unwrap();
        assert_eq!(a, b);
        let bad = vec![f64::NAN; sigma.len()];
        assert!(case.s.oracle_from_scores(&bad, &gold, &q).is_err());
    }
}

#[test]
fn set_cover_dags_exercise_the_integer_program() {
    // root → k categories → leaves with two category parents: with categories worth more than
    // the leaves cost, the leaf-terminated LP is often fractional and the IP (and, for
    // lexicographic queries, its second phase) decides.
    let mut rng = Rng(12);
    let mut fractional = 0;
    for _ in 0..300 {
        let k = 3 + rng.below(2);
        let n_leaves = 2 + rng.below(4);
        let mut parents = vec![vec![]];
        parents.extend((0..k).map(|_| vec![0]));
        for _ in 0..n_leaves {
            let a = 1 + rng.below(k);
            let mut b = 1 + rng.below(k);
            while b == a {
                b = 1 + rng.below(k);
            }
            parents.push(vec![a.min(b), a.max(b)]);
        }
        let n = parents.len();
        let g = HierarchyGraph::new(&parents, 0, None).unwrap();
        let opts = HierarchyOptions {
            space: LabelSpace::Leaves,
            multilabel: true,
            loss: if rng.below(2) == 0 { HierLoss::Node } else { HierLoss::Leaf },
            n_features: 1,
            node_scale: None,
            node_loss_weight: None,
            node_miss_weight: None,
            layout: WeightLayout::NodeMajor,
        };
        let s = HierarchyStructure::new(g, opts).unwrap();
        let x = CsrMatrix::from_dense(&[vec![1.0]], 1).unwrap();
        let w: Vec<f64> = (0..n)
            .map(|v| {
                if v == 0 {
                    0.0
                } else if v <= k {
                    rng.int(0, 4) / 2.0
                } else {
                    -rng.int(1, 6) / 2.0
                }
            })
            .collect();
        let labels = all_labels(&s);
        let case = Case { s, x, w, labels };
        let gold = case.labels[rng.below(case.labels.len())].clone();
        let o = Objective { margin: 1.0, terms: Terms::default() };
        let lp = case.s.relaxation(&case.w, &case.x, 0, &gold, &o).unwrap();
        if lp::round_integral(&lp.z, 1e-6).is_none() {
            fractional += 1;
            // this very query goes through the integer program: compare with enumeration
            let q = TermQuery { primary: o, secondary: None, ban: &[], k: 1, cone: None };
            let found = case.s.oracle(&case.w, &case.x, 0, &gold, &q).unwrap();
            let gs = case.s.score(&case.w, &case.x, 0, &gold).unwrap();
            let best = case
                .labels
                .iter()
                .map(|y| case.s.score(&case.w, &case.x, 0, y).unwrap() - gs)
                .fold(f64::MIN, f64::max);
            assert!((found[0].margin - best).abs() < 1e-9);
            // margin-only gains are the node scores: the LP value bounds the best score
            assert!(lp.value >= best + gs - 1e-6, "LP {} < IP {}", lp.value, best + gs);
            // interior-point accuracy
        }
        check_against_brute(&mut rng, &case, 3);
    }
    assert!(fractional > 20, "only {fractional} fractional LPs: the IP path is barely tested");
}

/// Max-marginals equal brute force over every label of the space (trees and DAGs, both spaces,
/// single paths and multi-label), with real-valued node scores so that ties are rare, and with
/// small integer scores so that they are common.
#[test]
fn max_marginals_equal_brute_force() {
    let mut rng = Rng(77);
    for case in 0..1200 {
        let tree = case % 2 == 0;
        let space = if case % 4 < 2 { LabelSpace::Any } else { LabelSpace::Leaves };
        let multilabel = case % 8 < 6;
        let c = random_case(&mut rng, tree, space, multilabel, HierLoss::Node);
        let m = c.s.n_nodes();
        let sigma: Vec<f64> = (0..m)
            .map(
                |_| if case % 3 == 0 { rng.int(-3, 3) } else { (rng.next() % 20_001) as f64 / 1000.0 - 10.0 },
            )
            .collect();
        let mm = c.s.max_marginals(&sigma).unwrap();
        let score = |y: &HierLabel| y.iter().map(|&v| sigma[v as usize]).sum::<f64>();
        for n in 0..m as u32 {
            let with =
                c.labels.iter().filter(|y| y.contains(&n)).map(score).fold(f64::NEG_INFINITY, f64::max);
            let without =
                c.labels.iter().filter(|y| !y.contains(&n)).map(score).fold(f64::NEG_INFINITY, f64::max);
            let close = |a: f64, b: f64| a == b || (a - b).abs() < 1e-9;
            assert!(
                close(mm.with[n as usize], with) && close(mm.without[n as usize], without),
                "{:?} node {n}: ({}, {}) vs brute force ({with}, {without})",
                c.s.oracle_kind(),
                mm.with[n as usize],
                mm.without[n as usize]
            );
        }
    }
}

#[test]
fn max_marginals_refuse_bad_scores() {
    let g = HierarchyGraph::new(&[vec![], vec![0], vec![0]], 0, None).unwrap();
    let opts = HierarchyOptions {
        space: LabelSpace::Any,
        multilabel: true,
        loss: HierLoss::Node,
        n_features: 1,
        node_scale: None,
        node_loss_weight: None,
        node_miss_weight: None,
        layout: WeightLayout::NodeMajor,
    };
    let s = HierarchyStructure::new(g, opts).unwrap();
    assert!(s.max_marginals(&[0.0, 1.0]).unwrap_err().to_string().contains("2 node scores for 3 nodes"));
    assert!(s.max_marginals(&[0.0, f64::NAN, 1.0]).is_err());
}

/// φ(x, y) − φ(x, y_true) accumulated entry by entry in first-touch order, exact zeros
/// dropped: what the learners build from `joint_feature` when a structure gives no difference.
fn accumulated_difference(s: &HierarchyStructure, x: &CsrMatrix, y: &HierLabel, t: &HierLabel) -> SparseVec {
    let (mut order, mut acc) = (Vec::new(), std::collections::HashMap::new());
    let gold = s.joint_feature(x, 0, t).unwrap();
    let mut add = |v: &SparseVec, c: f64| {
        for (&k, &val) in v.indices.iter().zip(&v.values) {
            let e = acc.entry(k).or_insert_with(|| {
                order.push(k);
                0.0
            });
            *e += c * val;
        }
    };
    add(&s.joint_feature(x, 0, y).unwrap(), 1.0);
    add(&gold, -1.0);
    let mut out = SparseVec::new();
    for k in order {
        if acc[&k] != 0.0 {
            out.push(k, acc[&k]);
        }
    }
    out
}

#[test]
fn feature_difference_is_the_accumulated_difference_bit_for_bit() {
    let mut rng = Rng(99);
    for case in 0..24 {
        let (tree, multilabel) = (case % 2 == 0, case % 3 != 0);
        let n = 2 + rng.below(6);
        let g = random_graph(&mut rng, n, if tree { 1 } else { 3 });
        let d = 1 + rng.below(3);
        let opts = HierarchyOptions {
            space: LabelSpace::Any,
            multilabel,
            loss: HierLoss::Node,
            n_features: d,
            // a zero scale (NHSVM's α_n = 0) must drop its entries, as accumulation does
            node_scale: Some((0..n).map(|_| rng.pick(&[0.0, 0.3, 1.0, 1.7])).collect()),
            node_loss_weight: None,
            node_miss_weight: None,
            layout: if case % 4 < 2 { WeightLayout::NodeMajor } else { WeightLayout::FeatureMajor },
        };
        let s = HierarchyStructure::new(g, opts).unwrap();
        // inexact products (thirds) and an explicit zero feature
        let mut row: Vec<f64> = (0..d).map(|_| rng.int(-3, 3) / 3.0).collect();
        row[0] = 0.0;
        let x = CsrMatrix::from_dense(&[row], d).unwrap();
        let labels = all_labels(&s);
        for y in &labels {
            for t in &labels {
                let got = s.feature_difference(&x, 0, y, t).unwrap();
                let want = accumulated_difference(&s, &x, y, t);
                assert_eq!(got.indices, want.indices, "case {case}: y {y:?} y_true {t:?}");
                let bits = |v: &SparseVec| v.values.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "case {case}: y {y:?} y_true {t:?}");
                // written straight into a vector: the same entries, order and bits
                let mut out = SparseVec::new();
                assert!(s.write_feature_difference(&x, 0, t, &[(y, 1.0)], &mut out).unwrap());
                assert_eq!(out.indices, want.indices, "case {case}: y {y:?} y_true {t:?}");
                assert_eq!(bits(&out), bits(&want), "case {case}: y {y:?} y_true {t:?}");
            }
        }
        assert!(s.feature_difference(&x, 0, &vec![u32::MAX], &labels[0]).is_err());
        let mut out = SparseVec::new();
        assert!(s.write_feature_difference(&x, 0, &labels[0], &[(&vec![u32::MAX], 1.0)], &mut out).is_err());
        // fractional answers and rows with repeated columns are left to the accumulator
        let (y, t) = (&labels[labels.len() - 1], &labels[0]);
        assert!(!s.write_feature_difference(&x, 0, t, &[(y, 0.5)], &mut SparseVec::new()).unwrap());
        assert!(!s.write_feature_difference(&x, 0, t, &[(y, 0.5), (t, 0.5)], &mut SparseVec::new()).unwrap());
        let twice = CsrMatrix::new("x", vec![0, 2], vec![0, 0], vec![1.0, 2.0], d).unwrap();
        assert!(!s.write_feature_difference(&twice, 0, t, &[(y, 1.0)], &mut SparseVec::new()).unwrap());
    }
}

#[test]
fn score_is_the_joint_feature_dot_bit_for_bit() {
    let mut rng = Rng(7);
    for case in 0..24 {
        let (tree, multilabel) = (case % 2 == 0, case % 3 != 0);
        let n = 2 + rng.below(6);
        let g = random_graph(&mut rng, n, if tree { 1 } else { 3 });
        let d = 1 + rng.below(4);
        let opts = HierarchyOptions {
            space: LabelSpace::Any,
            multilabel,
            loss: HierLoss::Node,
            n_features: d,
            node_scale: Some((0..n).map(|_| rng.pick(&[0.0, 0.3, 1.0, 1.7])).collect()),
            node_loss_weight: None,
            node_miss_weight: None,
            layout: if case % 4 < 2 { WeightLayout::NodeMajor } else { WeightLayout::FeatureMajor },
        };
        let s = HierarchyStructure::new(g, opts).unwrap();
        // inexact products (thirds, sevenths) so that the summation order shows in the bits
        let rows: Vec<Vec<f64>> = (0..2).map(|_| (0..d).map(|_| rng.int(-3, 3) / 3.0).collect()).collect();
        let x = CsrMatrix::from_dense(&rows, d).unwrap();
        let w: Vec<f64> = (0..s.size_joint_feature()).map(|_| rng.int(-9, 9) / 7.0).collect();
        for y in &all_labels(&s) {
            for i in 0..2 {
                let want = s.joint_feature(&x, i, y).unwrap().dot(&w);
                let got = s.score(&w, &x, i, y).unwrap();
                assert_eq!(got.to_bits(), want.to_bits(), "case {case}: y {y:?} row {i}");
            }
        }
        assert!(s.score(&w, &x, 0, &vec![u32::MAX]).is_err());
        assert!(s.score(&w[..w.len() - 1], &x, 0, &all_labels(&s)[0]).is_err());
    }
}
