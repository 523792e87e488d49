//! The `frontier` search over structure oracles against brute force: on small random chains
//! (T ≤ 6, S ≤ 3, random weights and features, token Hamming loss), multiclass instances and
//! multi-label instances with exact inference (K ≤ 7, full or sparse pairwise graphs), its
//! answer is the maximum of ψ(m(y), L(y)) over every label, enumerated and scored through
//! `joint_feature` and `terms` (code paths independent of the DP), for every registered surrogate
//! with the plain factor map h = m, g = L; it makes exactly one oracle call and certifies its
//! value. Micro-F1's factor map is refused.

use bicrit_core::{CsrMatrix, FactorMap, LambdaOracle};
use bicrit_searches::SearchSpec;
use bicrit_structures::multilabel::{full_edges, Inference};
use bicrit_structures::{
    Chain, ChainData, ChainLoss, MlLabel, Multiclass, Multilabel, Structure, StructureOracle,
};
use bicrit_surrogates::by_name;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn unif(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next() >> 11) as f64 / (1u64 << 53) as f64)
    }
}

const PLAIN: [(&str, &[(&str, f64)]); 8] = [
    ("margin", &[]),
    ("slack", &[]),
    ("beta", &[("beta", 0.5)]),
    ("generalized", &[("alpha", 1.5), ("beta", 0.75)]),
    ("generalized", &[("alpha", 1.0), ("beta", 0.0)]),
    ("log", &[]),
    ("probloss", &[]),
    ("probloss-convex", &[]),
];

fn all_labels(s: usize, t: usize) -> Vec<Vec<usize>> {
    (0..s.pow(t as u32))
        .map(|mut code| {
            (0..t)
                .map(|_| {
                    let v = code % s;
                    code /= s;
                    v
                })
                .collect()
        })
        .collect()
}

/// Max of ψ over the labels (gold included) and the frontier search's outcome, compared.
fn check<S: Structure>(
    s: &S,
    w: &[f64],
    data: &S::Data,
    gold: &S::Label,
    labels: &[S::Label],
    scale: f64,
    ctx: &dyn Fn() -> String,
) {
    let gold_score = s.score(w, data, 0, gold).unwrap();
    let points: Vec<(f64, f64)> = labels
        .iter()
        .map(|y| (scale * (s.score(w, data, 0, y).unwrap() - gold_score), s.terms(y, gold).unwrap().loss))
        .collect();
    let spec = SearchSpec::from_name("frontier").unwrap();
    for (name, params) in PLAIN {
        let psi = by_name(name, params).unwrap();
        let want = points.iter().map(|&(h, g)| psi.value(h, g)).fold(f64::NEG_INFINITY, f64::max);
        let mut fm = FactorMap::margin_loss();
        fm.h.margin = scale; // a learner's lazy weight scale
        let mut o = StructureOracle::new(s, w, data, 0, gold, fm);
        let out = spec.run(&mut o, psi.as_ref(), None, None).unwrap();
        let tol = 1e-9 * (1.0 + want.abs());
        assert!((out.value - want).abs() <= tol, "{name}: {} vs {want}; {}", out.value, ctx());
        assert_eq!(out.upper_bound, Some(out.value));
        assert_eq!((out.calls.frontier, out.calls.total()), (1, 1));
        assert_eq!(o.calls(), 1);
        // the answer is an integral label with the reported coordinates
        assert_eq!(out.answer.len(), 1);
        let a = &out.answer[0];
        let m = scale * (s.score(w, data, 0, &a.label).unwrap() - gold_score);
        assert!((m - a.h).abs() < 1e-9 && s.terms(&a.label, gold).unwrap().loss == a.g, "{}", ctx());
        assert!((psi.value(a.h, a.g) - out.value).abs() <= tol);
        assert_eq!(out.is_gold, a.label == *gold);
    }
}

#[test]
fn frontier_search_on_chains_equals_brute_force() {
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    for case in 0..300 {
        let d = 1 + rng.below(3);
        let s = 1 + rng.below(3);
        let t = 1 + rng.below(6);
        let outside: Vec<usize> = (0..s).filter(|_| rng.below(2) == 0).collect();
        let chain = Chain::new(s, d, &outside, ChainLoss::Hamming).unwrap();
        let rows: Vec<Vec<f64>> = (0..t)
            .map(|_| (0..d).map(|_| if rng.below(3) == 0 { 0.0 } else { rng.unif(-2.0, 2.0) }).collect())
            .collect();
        let data = ChainData::single(CsrMatrix::from_dense(&rows, d).unwrap()).unwrap();
        // weights of mixed magnitude: margins from ≪ 1 (ProbLoss's linear part) to ≫ 1 (saturated)
        let mag = [0.05, 0.5, 3.0][rng.below(3)];
        let w: Vec<f64> = (0..chain.size_joint_feature()).map(|_| mag * rng.unif(-1.0, 1.0)).collect();
        let labels = all_labels(s, t);
        let gold = labels[rng.below(labels.len())].clone();
        let scale = [1.0, 0.3][rng.below(2)];
        check(&chain, &w, &data, &gold, &labels, scale, &|| {
            format!("case {case}: S={s} T={t} gold={gold:?}")
        });
    }
}

#[test]
fn frontier_search_on_multiclass_equals_brute_force() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    for case in 0..300 {
        let (k, d) = (2 + rng.below(5), 1 + rng.below(3));
        let s = Multiclass::new(k, d).unwrap();
        let x = CsrMatrix::from_dense(&[(0..d).map(|_| rng.unif(-2.0, 2.0)).collect()], d).unwrap();
        let w: Vec<f64> = (0..s.size_joint_feature()).map(|_| rng.unif(-1.0, 1.0)).collect();
        let gold = rng.below(k);
        let labels: Vec<usize> = (0..k).collect();
        check(&s, &w, &x, &gold, &labels, 1.0, &|| format!("case {case}: K={k} gold={gold}"));
    }
}

#[test]
fn frontier_search_on_multilabel_equals_brute_force() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for case in 0..300 {
        let (k, d) = (1 + rng.below(7), 1 + rng.below(3));
        let edges: Vec<(usize, usize)> = if rng.below(2) == 0 {
            full_edges(k)
        } else {
            full_edges(k).into_iter().filter(|_| rng.below(2) == 0).collect()
        };
        let s = Multilabel::new(k, d, edges, Inference::Exact).unwrap();
        let x = CsrMatrix::from_dense(&[(0..d).map(|_| rng.unif(-2.0, 2.0)).collect()], d).unwrap();
        let mag = [0.05, 0.5, 3.0][rng.below(3)];
        let w: Vec<f64> = (0..s.size_joint_feature()).map(|_| mag * rng.unif(-1.0, 1.0)).collect();
        let labels: Vec<MlLabel> = (0u32..1 << k)
            .map(|m| MlLabel::Integral((0..k).map(|j| ((m >> j) & 1) as u8).collect()))
            .collect();
        let gold = labels[rng.below(labels.len())].clone();
        let scale = [1.0, 0.3][rng.below(2)];
        check(&s, &w, &x, &gold, &labels, scale, &|| format!("case {case}: K={k} gold={gold:?}"));
    }
}

#[test]
fn frontier_search_refuses_micro_f1_factors_and_the_segment_loss() {
    let x = CsrMatrix::from_dense(&[vec![1.0], vec![0.5]], 1).unwrap();
    let data = ChainData::single(x).unwrap();
    let chain = Chain::new(2, 1, &[0], ChainLoss::Hamming).unwrap();
    let w = vec![0.1; chain.size_joint_feature()];
    let gold = vec![0, 1];
    let spec = SearchSpec::from_name("frontier").unwrap();
    let f1 = by_name("microf1", &[]).unwrap();
    let fm = f1.factor_map(&chain.terms(&gold, &gold).unwrap());
    let mut o = StructureOracle::new(&chain, &w, &data, 0, &gold, fm);
    let e = spec.run(&mut o, f1.as_ref(), None, None).unwrap_err();
    assert!(matches!(e, bicrit_core::Error::Incompatible(_)), "{e}");
    assert!(e.to_string().contains("frontier"), "{e}");
    assert_eq!(o.calls(), 0);
    let seg =
        Chain::with_tags(1, &["O", "B-A"], bicrit_structures::TagScheme::Iob2, None, ChainLoss::Segment)
            .unwrap();
    let mut o = StructureOracle::new(&seg, &w, &data, 0, &gold, FactorMap::margin_loss());
    assert!(!o.capabilities().frontier);
    let probloss = by_name("probloss", &[]).unwrap();
    assert!(spec.run(&mut o, probloss.as_ref(), None, None).is_err());
}
