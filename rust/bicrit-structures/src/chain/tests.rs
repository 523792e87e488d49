//! The chain oracles against brute-force enumeration (the reference semantics of
//! [`crate::select::select_best`] over every label, each scored through `joint_feature` and
//! `terms`, code paths independent of the DPs), plus bad-input errors.

use super::*;
use crate::select::select_best;

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
    fn int(&mut self, lo: i64, hi: i64) -> f64 {
        (lo + (self.next() % (hi - lo + 1) as u64) as i64) as f64
    }
    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }
}

fn all_labels(s: usize, t: usize) -> Vec<Vec<usize>> {
    let total = s.pow(t as u32);
    (0..total)
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

/// A random structure: named tags (any scheme, loss) or unnamed tags with a random O set.
/// Every label of `labels` scored against `gold` by enumeration (margin from the joint feature).
fn scored(
    chain: &Chain,
    data: &ChainData,
    i: usize,
    w: &[f64],
    labels: &[Vec<usize>],
    gold: &Vec<usize>,
) -> Vec<Scored<Vec<usize>>> {
    let gold_score = chain.joint_feature(data, i, gold).unwrap().dot(w);
    labels
        .iter()
        .map(|y| Scored {
            label: y.clone(),
            margin: chain.joint_feature(data, i, y).unwrap().dot(w) - gold_score,
            terms: chain.terms(y, gold).unwrap(),
        })
        .collect()
}

fn random_chain(rng: &mut Rng, d: usize) -> Chain {
    let s = 1 + rng.below(4);
    if rng.below(4) == 0 {
        let outside: Vec<usize> = (0..s).filter(|_| rng.below(3) == 0).collect();
        return Chain::new(s, d, &outside, ChainLoss::Hamming).unwrap();
    }
    let scheme = rng.pick(&[TagScheme::Iob1, TagScheme::Iob2, TagScheme::Iobes]);
    let pool: &[&str] = if scheme == TagScheme::Iobes {
        &["O", "B-A", "I-A", "E-A", "S-A", "B-B", "I-B", "S-B"]
    } else {
        &["O", "B-A", "I-A", "B-B", "I-B", "I-C"]
    };
    let mut names: Vec<&str> = Vec::new();
    while names.len() < s {
        let n = rng.pick(pool);
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let loss = if rng.below(2) == 0 { ChainLoss::Hamming } else { ChainLoss::Segment };
    Chain::with_tags(d, &names, scheme, None, loss).unwrap()
}

/// A dataset of 1–3 sequences with small integer features; returns it and the lengths.
fn random_data(rng: &mut Rng, d: usize, max_len: usize) -> ChainData {
    let n_seq = 1 + rng.below(3);
    let mut rows = Vec::new();
    let mut offsets = vec![0i64];
    for _ in 0..n_seq {
        let len = 1 + rng.below(max_len);
        for _ in 0..len {
            rows.push((0..d).map(|_| if rng.below(3) == 0 { 0.0 } else { rng.int(-2, 2) }).collect());
        }
        offsets.push(rows.len() as i64);
    }
    ChainData::new(CsrMatrix::from_dense(&rows, d).unwrap(), &offsets).unwrap()
}

fn random_objective(rng: &mut Rng) -> (Objective, Option<Objective>) {
    let terms = |rng: &mut Rng| Terms {
        loss: rng.pick(&[0.0, 0.5, 1.0, 2.0]),
        size: rng.pick(&[0.0, -0.5, -1.0]),
        hamming: rng.pick(&[0.0, 1.0]),
    };
    let margin_only = Objective { margin: 1.0, terms: Terms::default() };
    let loss_only = Objective { margin: 0.0, terms: Terms { loss: 1.0, ..Terms::default() } };
    match rng.below(5) {
        // λ = 0: largest margin, ties by largest loss
        0 => (margin_only, Some(loss_only)),
        // λ = ∞: largest loss, ties by largest margin
        1 => (loss_only, Some(margin_only)),
        // Micro-F1 style h + λ g: m + H − λ|y|
        2 => {
            let lam = rng.pick(&[0.0, 0.25, 0.5, 1.0]);
            (Objective { margin: 1.0, terms: Terms { loss: 0.0, size: -lam, hamming: 1.0 } }, None)
        }
        // any coefficients, with or without a lexicographic tie-break
        3 => {
            (Objective { margin: 1.0, terms: terms(rng) }, Some(Objective { margin: 0.0, terms: terms(rng) }))
        }
        _ => (Objective { margin: rng.pick(&[0.0, 1.0]), terms: terms(rng) }, None),
    }
}

fn value(o: &Objective, s: &Scored<Vec<usize>>) -> f64 {
    o.value(s.margin, &s.terms)
}

/// One random instance: the oracle's answers have the brute-force values rank by rank, are
/// distinct, not banned, and report their own margin and terms.
fn check_instance(rng: &mut Rng) {
    let d = 1 + rng.below(3);
    let chain = random_chain(rng, d);
    let s = chain.n_states();
    let max_len = match s {
        1 | 2 => 6,
        3 => 6,
        _ => 5,
    };
    let data = random_data(rng, d, max_len);
    let i = rng.below(data.n_sequences());
    let t = data.len_of(i);
    let w: Vec<f64> = (0..chain.size_joint_feature()).map(|_| rng.int(-2, 2)).collect();
    let labels = all_labels(s, t);
    let gold = labels[rng.below(labels.len())].clone();
    let candidates = scored(&chain, &data, i, &w, &labels, &gold);
    let (primary, secondary) = random_objective(rng);
    // ban some of the best labels (so that bans matter) and some random ones
    let mut ban: Vec<Vec<usize>> = Vec::new();
    if rng.below(2) == 0 {
        let order =
            select_best(&TermQuery { primary, secondary, ban: &[], k: 3, cone: None }, candidates.clone());
        for a in order {
            if rng.below(2) == 0 {
                ban.push(a.label);
            }
        }
        if rng.below(2) == 0 {
            ban.push(labels[rng.below(labels.len())].clone());
        }
        if rng.below(4) == 0 && !ban.is_empty() {
            ban.push(ban[0].clone()); // duplicates are harmless
        }
    }
    let k = if rng.below(3) == 0 { 1 } else { 1 + rng.below(8) };
    let q = TermQuery { primary, secondary, ban: &ban, k, cone: None };
    let expected = select_best(&q, candidates.clone());
    let found = chain.oracle(&w, &data, i, &gold, &q).unwrap();
    let ctx = || format!("S={s} T={t} loss={:?} gold={gold:?} q={q:?}", chain.loss_kind());
    assert_eq!(found.len(), expected.len(), "{}", ctx());
    for (r, (a, e)) in found.iter().zip(&expected).enumerate() {
        assert!(
            (value(&primary, a) - value(&primary, e)).abs() < 1e-9,
            "rank {r}: {a:?} vs {e:?}; {}",
            ctx()
        );
        if let Some(sec) = &secondary {
            assert!(
                (value(sec, a) - value(sec, e)).abs() < 1e-9,
                "rank {r} (secondary): {a:?} vs {e:?}; {}",
                ctx()
            );
        }
        assert!(!ban.contains(&a.label), "banned label returned: {a:?}");
        let truth = candidates.iter().find(|c| c.label == a.label).unwrap();
        assert!((truth.margin - a.margin).abs() < 1e-9 && truth.terms == a.terms, "{a:?} vs {truth:?}");
    }
    for x in 0..found.len() {
        for y in x + 1..found.len() {
            assert_ne!(found[x].label, found[y].label, "duplicate label in k-best; {}", ctx());
        }
    }
    if q.k == 1 && ban.is_empty() && primary.terms.is_zero() && primary.margin == 1.0 && secondary.is_none() {
        let p = chain.predict(&w, &data, i).unwrap();
        let best = candidates.iter().find(|c| c.label == p).unwrap();
        assert!((best.margin - expected[0].margin).abs() < 1e-9);
    }
}

#[test]
fn oracle_equals_brute_force_on_random_instances() {
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for _ in 0..4000 {
        check_instance(&mut rng);
    }
}

#[test]
fn predict_equals_brute_force() {
    let mut rng = Rng(42);
    for _ in 0..500 {
        let d = 1 + rng.below(3);
        let chain = random_chain(&mut rng, d);
        let data = random_data(&mut rng, d, 5);
        let i = rng.below(data.n_sequences());
        let w: Vec<f64> = (0..chain.size_joint_feature()).map(|_| rng.int(-3, 3)).collect();
        let best = all_labels(chain.n_states(), data.len_of(i))
            .iter()
            .map(|y| chain.joint_feature(&data, i, y).unwrap().dot(&w))
            .fold(f64::NEG_INFINITY, f64::max);
        let p = chain.predict(&w, &data, i).unwrap();
        assert_eq!(chain.joint_feature(&data, i, &p).unwrap().dot(&w), best);
    }
}

#[test]
fn segment_loss_counts_chunk_symmetric_difference() {
    let c = Chain::with_tags(
        1,
        &["O", "B-PER", "I-PER", "B-LOC", "I-LOC"],
        TagScheme::Iob2,
        None,
        ChainLoss::Segment,
    )
    .unwrap();
    let g = vec![1, 2, 0, 3];
    // exact: 0; wrong type on the first chunk: 2; missed LOC: 1; extra chunk: 1
    assert_eq!(c.terms(&g, &g).unwrap().loss, 0.0);
    assert_eq!(c.terms(&vec![3, 4, 0, 3], &g).unwrap().loss, 2.0);
    assert_eq!(c.terms(&vec![1, 2, 0, 0], &g).unwrap().loss, 1.0);
    assert_eq!(c.terms(&vec![1, 2, 1, 3], &g).unwrap().loss, 1.0);
    // a chunk that runs past the gold end is wrong: spurious (0..2) + missed (0..1)
    assert_eq!(c.terms(&vec![1, 2, 2, 3], &g).unwrap().loss, 2.0);
    let t = c.terms(&vec![1, 4, 0, 0], &g).unwrap();
    // B-PER I-LOC: chunks PER(0) and LOC(1) vs gold PER(0..1), LOC(3): 2 + 2
    assert_eq!(t.loss, 4.0);
    assert_eq!(t.size, 2.0);
    // token 1: I-PER vs I-LOC (2), token 3: B-LOC vs O (1)
    assert_eq!(t.hamming, 3.0);
}

#[test]
fn bad_input_is_an_error() {
    let x = CsrMatrix::from_dense(&[vec![1.0], vec![2.0], vec![3.0]], 1).unwrap();
    let e = |r: Result<ChainData>| r.unwrap_err().to_string();
    assert!(e(ChainData::new(x.clone(), &[0, 1, 1, 3])).contains("sequence 1 is empty"));
    assert!(e(ChainData::new(x.clone(), &[0, 2, 1, 3])).contains("must increase"));
    assert!(e(ChainData::new(x.clone(), &[0, 2])).contains("3 rows"));
    assert!(e(ChainData::new(x.clone(), &[1, 3])).contains("start at 0"));
    assert!(e(ChainData::new(x.clone(), &[])).contains("n_sequences + 1"));
    let empty = CsrMatrix::from_dense(&[], 1).unwrap();
    assert!(e(ChainData::single(empty)).contains("empty sequence"));

    let data = ChainData::new(x, &[0, 2, 3]).unwrap();
    let c = Chain::new(3, 1, &[0], ChainLoss::Hamming).unwrap();
    let w = vec![0.0; c.size_joint_feature()];
    let q = TermQuery::loss_augmented(1.0);
    let err = |r: Result<Vec<Scored<Vec<usize>>>>| r.unwrap_err().to_string();
    assert!(err(c.oracle(&w, &data, 0, &vec![0, 1, 2], &q)).contains("length 3 but sequence 0 has 2"));
    assert!(err(c.oracle(&w, &data, 0, &vec![0, 5], &q)).contains("state 5 at position 1"));
    assert!(err(c.oracle(&w, &data, 0, &vec![], &q)).contains("empty"));
    assert!(err(c.oracle(&w, &data, 2, &vec![0], &q)).contains("out of range"));
    assert!(err(c.oracle(&w[1..], &data, 0, &vec![0, 1], &q)).contains("joint feature size"));
    let ban = vec![vec![0, 1, 2]];
    let qb = TermQuery { ban: &ban, ..TermQuery::loss_augmented(1.0) };
    assert!(err(c.oracle(&w, &data, 0, &vec![0, 1], &qb)).contains("ban[0]"));
    let cone = bicrit_core::Cone { lo: 0.0, lo_closed: true, hi: 1.0, hi_closed: true };
    let qc = TermQuery { cone: Some(cone), ..TermQuery::loss_augmented(1.0) };
    assert!(matches!(c.oracle(&w, &data, 0, &vec![0, 1], &qc), Err(Error::Unsupported(_))));
    let wide = ChainData::single(CsrMatrix::from_dense(&[vec![1.0, 2.0]], 2).unwrap()).unwrap();
    assert!(c.predict(&w, &wide, 0).unwrap_err().to_string().contains("width 2"));
    assert!(c.terms(&vec![0, 1], &vec![0]).is_err());

    assert!(Chain::new(3, 1, &[0], ChainLoss::Segment).is_err());
    assert!(Chain::new(0, 1, &[], ChainLoss::Hamming).is_err());
    assert!(Chain::with_tags(1, &["O", "B-A"], TagScheme::Iob2, Some(&[1]), ChainLoss::Hamming).is_err());
    assert!(Chain::with_tags(1, &["O", "B-A"], TagScheme::Iob2, Some(&[0, 0]), ChainLoss::Hamming).is_ok());
}

#[test]
fn non_finite_weights_are_an_error() {
    let data = ChainData::single(CsrMatrix::from_dense(&[vec![1.0], vec![2.0]], 1).unwrap()).unwrap();
    let c = Chain::new(2, 1, &[0], ChainLoss::Hamming).unwrap();
    let mut w = vec![0.0; c.size_joint_feature()];
    w[1] = f64::NAN; // emission of feature 0, state 1
    let q = TermQuery::loss_augmented(1.0);
    assert!(c.oracle(&w, &data, 0, &vec![0, 1], &q).unwrap_err().to_string().contains("non-finite"));
    w[1] = 0.0;
    w[c.size_joint_feature() - 1] = f64::INFINITY; // an end weight
    assert!(c.predict(&w, &data, 0).unwrap_err().to_string().contains("non-finite"));
}

#[test]
fn searches_see_the_chain_through_the_adapter() {
    use crate::StructureOracle;
    use bicrit_core::{FactorMap, Lambda, LambdaOracle, PlaneQuery};
    // Micro-F1 factors on the segment-loss chain: h = m + H, g = −(|y| + |y_i|); λ = ∞ wants the
    // smallest |y| (ties: largest h), λ = 0 the largest h (ties: largest g).
    let c = Chain::with_tags(1, &["O", "B-A", "I-A"], TagScheme::Iob2, None, ChainLoss::Segment).unwrap();
    let data =
        ChainData::single(CsrMatrix::from_dense(&[vec![1.0], vec![1.0], vec![1.0]], 1).unwrap()).unwrap();
    let w = vec![0.0; c.size_joint_feature()];
    let gold = vec![1, 2, 0];
    let mut o = StructureOracle::new(&c, &w, &data, 0, &gold, FactorMap::micro_f1(2.0));
    assert_eq!(o.capabilities(), Capabilities { ban: true, kbest: true, ..Capabilities::default() });
    let inf = o.query(&PlaneQuery::lambda(Lambda::Infinity)).unwrap();
    // |y| = 0 forces y = O O O; h = H = 2 (the two gold entity tokens are missed)
    assert_eq!(inf[0].label, vec![0, 0, 0]);
    assert_eq!((inf[0].h, inf[0].g), (2.0, -2.0));
    let zero = o.query(&PlaneQuery::lambda(Lambda::Zero)).unwrap();
    // largest H = 2 + 2 + 1: both gold entity tokens take the other entity tag, the O token an
    // entity tag; then |y| = 3
    assert_eq!(zero[0].h, 5.0);
    assert_eq!(zero[0].g, -5.0);
    let top = o.query(&PlaneQuery { lambda: Lambda::Finite(0.5), ban: &[], k: 4, cone: None }).unwrap();
    assert_eq!(top.len(), 4);
    assert!(top.windows(2).all(|p| p[0].h + 0.5 * p[0].g >= p[1].h + 0.5 * p[1].g));
    assert_eq!(o.calls(), 3);
    let g = o.gold().unwrap();
    assert_eq!((g.h, g.g), (0.0, -4.0));
}

#[test]
fn feature_major_layout() {
    // two tokens, features [1, 0] and [0, 2]; S = 2; label [1, 0]
    let x = CsrMatrix::from_dense(&[vec![1.0, 0.0], vec![0.0, 2.0]], 2).unwrap();
    let data = ChainData::single(x).unwrap();
    let c = Chain::new(2, 2, &[0], ChainLoss::Hamming).unwrap();
    let mut v = c.joint_feature(&data, 0, &vec![1, 0]).unwrap();
    v.compact();
    // emission f0·S + 1 = 1, f1·S + 0 = 2 (value 2); transition 4 + 1·2 + 0 = 6; start 8 + 1; end 10 + 0
    assert_eq!(v.indices, vec![1, 2, 6, 9, 10]);
    assert_eq!(v.values, vec![1.0, 2.0, 1.0, 1.0, 1.0]);
    assert_eq!(c.size_joint_feature(), 12);
}

/// The frontier by loss value against enumeration: for every token-error count c the DP's label
/// has the enumerated maximum of the objective among labels with c errors (and reports its own
/// margin and terms), and exactly the attainable counts are returned.
#[test]
fn frontier_equals_brute_force_by_loss_value() {
    let mut rng = Rng(0x5851_F42D_4C95_7F2D);
    for case in 0..1500 {
        let d = 1 + rng.below(3);
        let s = 1 + rng.below(3);
        let outside: Vec<usize> = (0..s).filter(|_| rng.below(2) == 0).collect();
        let chain = Chain::new(s, d, &outside, ChainLoss::Hamming).unwrap();
        assert!(chain.capabilities().frontier);
        let data = random_data(&mut rng, d, 6);
        let i = rng.below(data.n_sequences());
        let t = data.len_of(i);
        let w: Vec<f64> = (0..chain.size_joint_feature())
            .map(|_| if rng.below(2) == 0 { rng.int(-3, 3) } else { rng.int(-300, 300) / 97.0 })
            .collect();
        let labels = all_labels(s, t);
        let gold = labels[rng.below(labels.len())].clone();
        let candidates = scored(&chain, &data, i, &w, &labels, &gold);
        // h = a·m (a > 0: a learner's scale), sometimes with decomposable terms folded in
        let terms = if rng.below(3) == 0 {
            Terms { loss: 0.0, size: rng.pick(&[0.0, -0.5]), hamming: rng.pick(&[0.0, 1.0]) }
        } else {
            Terms::default()
        };
        let obj = Objective { margin: rng.pick(&[1.0, 0.5, 2.0]), terms };
        let expected = crate::select::frontier_by_loss(&obj, candidates.clone());
        let mut found = chain.frontier(&w, &data, i, &gold, &obj).unwrap();
        found.sort_by(|a, b| a.terms.loss.partial_cmp(&b.terms.loss).unwrap());
        let mut want = expected.clone();
        want.sort_by(|a, b| a.terms.loss.partial_cmp(&b.terms.loss).unwrap());
        let ctx = || format!("case {case}: S={s} T={t} gold={gold:?} obj={obj:?}");
        assert_eq!(found.len(), want.len(), "{}", ctx());
        for (a, e) in found.iter().zip(&want) {
            assert_eq!(a.terms.loss, e.terms.loss, "{}", ctx());
            assert!(
                (value(&obj, a) - value(&obj, e)).abs() < 1e-9,
                "H({}) {a:?} vs {e:?}; {}",
                e.terms.loss,
                ctx()
            );
            let truth = candidates.iter().find(|c| c.label == a.label).unwrap();
            assert!((truth.margin - a.margin).abs() < 1e-9 && truth.terms == a.terms, "{a:?} vs {truth:?}");
        }
        // c = 0 is the gold label itself
        assert_eq!(found[0].label, gold);
    }
}

#[test]
fn frontier_refuses_the_segment_loss() {
    let c = Chain::with_tags(1, &["O", "B-A", "I-A"], TagScheme::Iob2, None, ChainLoss::Segment).unwrap();
    assert!(!c.capabilities().frontier);
    let data = ChainData::single(CsrMatrix::from_dense(&[vec![1.0], vec![1.0]], 1).unwrap()).unwrap();
    let w = vec![0.0; c.size_joint_feature()];
    let obj = Objective { margin: 1.0, terms: Terms::default() };
    assert!(matches!(c.frontier(&w, &data, 0, &vec![1, 2], &obj), Err(Error::Unsupported(_))));
    // The adapter declares the frontier only when g is a function of the loss.
    use crate::StructureOracle;
    use bicrit_core::{FactorMap, LambdaOracle};
    let h = Chain::with_tags(1, &["O", "B-A", "I-A"], TagScheme::Iob2, None, ChainLoss::Hamming).unwrap();
    let gold = vec![1, 2];
    let plain = StructureOracle::new(&h, &w, &data, 0, &gold, FactorMap::margin_loss());
    assert!(plain.capabilities().frontier);
    let mut f1 = StructureOracle::new(&h, &w, &data, 0, &gold, FactorMap::micro_f1(2.0));
    assert!(!f1.capabilities().frontier);
    assert!(matches!(f1.frontier(), Err(Error::Incompatible(_))));
}

/// Random chain scores on the integer grid {offset, offset + 1, offset + 2} (many exact ties):
/// unary [t, s], transitions shared or per step, start and end.
struct GridScores {
    s: usize,
    per_step: bool,
    unary: Vec<f64>,
    trans: Vec<f64>,
    start: Vec<f64>,
    end: Vec<f64>,
}

impl GridScores {
    fn new(rng: &mut Rng, s: usize, t: usize, per_step: bool, offset: f64) -> Self {
        let mut grid = |n: usize| -> Vec<f64> { (0..n).map(|_| (rng.next() % 3) as f64 + offset).collect() };
        let unary = grid(t * s);
        let trans = grid(if per_step { t.saturating_sub(1) * s * s } else { s * s });
        let (start, end) = (grid(s), grid(s));
        GridScores { s, per_step, unary, trans, start, end }
    }

    fn raw(&self) -> RawScores<'_> {
        RawScores {
            n_states: self.s,
            unary: &self.unary,
            trans: &self.trans,
            trans_per_step: self.per_step,
            start: &self.start,
            end: &self.end,
        }
    }
}

#[test]
fn dense_viterbi_equals_the_generic_one_ties_included() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for case in 0..500 {
        // S ≤ 16 runs the compile-time-sized DP, S = 17 the one for any S
        let s = if case % 25 == 0 { 17 } else { 1 + rng.below(9) };
        let t = 1 + rng.below(7);
        let grid = GridScores::new(&mut rng, s, t, case % 2 == 0, 0.0);
        let raw = grid.raw();
        let tags = Tags::from_outside(s, &[]).unwrap();
        let obj = Objective { margin: 1.0, terms: Terms::default() };
        let tab = fold_tables::<f64>(&raw, &tags, ChainLoss::Hamming, None, &obj, None);
        let mut generic = Vec::new();
        viterbi(&Plain(&tab), &mut generic).unwrap();
        assert_eq!(viterbi_dense(&tab).unwrap(), generic, "case {case}");
        assert_eq!(
            viterbi_dense_any(&tab, &mut DpBuffers::default()).unwrap(),
            generic,
            "case {case} (any S)"
        );
        // lexicographic queries (λ = 0 or ∞): pairs, ties in both components
        let sec = Objective { margin: 0.0, terms: Terms { loss: 1.0, ..Terms::default() } };
        let gold: Vec<usize> = (0..t).map(|_| rng.below(s)).collect();
        let lex = fold_tables::<Lex>(&raw, &tags, ChainLoss::Hamming, Some(&gold), &obj, Some(&sec));
        let mut generic = Vec::new();
        viterbi(&Plain(&lex), &mut generic).unwrap();
        assert_eq!(viterbi_dense_lex(&lex).unwrap(), generic, "case {case} (lexicographic)");
    }
}

#[test]
fn shared_emissions_and_direct_scores() {
    // The emission scores one inference shares (Structure::shared_scores) give the very answers
    // of the oracle that computes its own (bit-identical), and `score` sums the products of
    // joint_feature(…).dot(w) in the same order (bit-identical), on real-valued weights and
    // features where the summation order would show; `score_shared` (from the emissions) agrees
    // up to that order.
    let mut rng = Rng(0xA076_1D64_78BD_642F);
    let unit = |rng: &mut Rng| (rng.next() >> 11) as f64 / (1u64 << 53) as f64 - 0.5;
    for case in 0..1500 {
        let d = 1 + rng.below(4);
        let chain = random_chain(&mut rng, d);
        let s = chain.n_states();
        let data = random_data(&mut rng, d, 6);
        let i = rng.below(data.n_sequences());
        let t = data.len_of(i);
        let w: Vec<f64> = (0..chain.size_joint_feature()).map(|_| 3.0 * unit(&mut rng)).collect();
        let label = |rng: &mut Rng| (0..t).map(|_| rng.below(s)).collect::<Vec<usize>>();
        let (gold, y) = (label(&mut rng), label(&mut rng));
        let direct = chain.score(&w, &data, i, &y).unwrap();
        assert_eq!(
            direct.to_bits(),
            chain.joint_feature(&data, i, &y).unwrap().dot(&w).to_bits(),
            "case {case}"
        );
        let shared = chain.shared_scores(&w, &data, i).unwrap().unwrap();
        assert_eq!(shared.len(), t * s);
        // from the shared emissions: the same score up to the order of the sums
        let fast = chain.score_shared(&w, &data, i, &y, Some(&shared)).unwrap();
        assert!((fast - direct).abs() <= 1e-12 * (1.0 + direct.abs()), "case {case}: {fast} vs {direct}");
        let (primary, secondary) = random_objective(&mut rng);
        let ban = if rng.below(2) == 0 { vec![y.clone()] } else { Vec::new() };
        let q = TermQuery { primary, secondary, ban: &ban, k: 1 + rng.below(3), cone: None };
        let own = chain.oracle(&w, &data, i, &gold, &q).unwrap();
        let with = chain.oracle_shared(&w, &data, i, &gold, &q, Some(&shared)).unwrap();
        assert_eq!(own.len(), with.len(), "case {case}");
        for (a, b) in own.iter().zip(&with) {
            assert_eq!((&a.label, a.margin.to_bits(), a.terms), (&b.label, b.margin.to_bits(), b.terms));
        }
        if chain.loss_kind() == ChainLoss::Hamming {
            let own = chain.frontier(&w, &data, i, &gold, &primary).unwrap();
            let with = chain.frontier_shared(&w, &data, i, &gold, &primary, Some(&shared)).unwrap();
            assert_eq!(own, with, "case {case}");
        }
    }
    // non-finite weights are refused where the shared scores are made
    let x = CsrMatrix::from_dense(&[vec![1.0], vec![1.0]], 1).unwrap();
    let data = ChainData::single(x).unwrap();
    let c = Chain::new(2, 1, &[0], ChainLoss::Hamming).unwrap();
    let mut w = vec![0.0; c.size_joint_feature()];
    w[0] = f64::NAN;
    assert!(c.shared_scores(&w, &data, 0).unwrap_err().to_string().contains("non-finite"));
}

#[test]
fn feature_difference_equals_the_difference_of_joint_features() {
    // Σ_j t_j (φ(y_j) − φ(y_i)) from the differing parts only equals the difference of the whole
    // joint feature vectors (as dense vectors), for one or two labels with any weights.
    let mut rng = Rng(0xE703_7ED1_A0B4_28DB);
    for case in 0..1000 {
        let d = 1 + rng.below(4);
        let chain = random_chain(&mut rng, d);
        let s = chain.n_states();
        let data = random_data(&mut rng, d, 6);
        let i = rng.below(data.n_sequences());
        let t = data.len_of(i);
        let label = |rng: &mut Rng| (0..t).map(|_| rng.below(s)).collect::<Vec<usize>>();
        let gold = label(&mut rng);
        let ys: Vec<Vec<usize>> = (0..1 + rng.below(2)).map(|_| label(&mut rng)).collect();
        let weights = [0.25 + 0.5 * rng.below(2) as f64, 0.3];
        let answer: Vec<(&Vec<usize>, f64)> = ys.iter().zip(weights).collect();
        let dim = chain.size_joint_feature();
        let mut got = vec![0.0; dim];
        let mut add = |j: usize, v: f64| got[j] += v;
        assert!(chain.add_feature_difference(&data, i, &gold, &answer, &mut add).unwrap());
        let mut want = vec![0.0; dim];
        let g = chain.joint_feature(&data, i, &gold).unwrap();
        for &(y, w) in &answer {
            chain.joint_feature(&data, i, y).unwrap().add_to(&mut want, w);
            g.add_to(&mut want, -w);
        }
        for j in 0..dim {
            assert!((got[j] - want[j]).abs() < 1e-12, "case {case}: entry {j}: {} vs {}", got[j], want[j]);
        }
    }
    // labels of the wrong length are refused
    let x = CsrMatrix::from_dense(&[vec![1.0], vec![1.0]], 1).unwrap();
    let data = ChainData::single(x).unwrap();
    let c = Chain::new(2, 1, &[0], ChainLoss::Hamming).unwrap();
    let bad = vec![0];
    let e = c.add_feature_difference(&data, 0, &vec![0, 1], &[(&bad, 1.0)], &mut |_, _| {}).unwrap_err();
    assert!(e.to_string().contains("length"), "{e}");
}

#[test]
fn largest_loss_query_equals_the_lexicographic_pass_and_brute_force() {
    let mut rng = Rng(0x2545_F491_4F6C_DD1D);
    let mut all_wrong_cases = 0;
    for case in 0..3000 {
        let s = 1 + rng.below(4);
        let t = 1 + rng.below(5);
        // many exact ties in both components
        let grid = GridScores::new(&mut rng, s, t, case % 2 == 0, -1.0);
        let raw = grid.raw();
        let outside: Vec<usize> = (0..s).filter(|_| rng.below(3) == 0).collect();
        let tags = Tags::from_outside(s, &outside).unwrap();
        let gold: Vec<usize> = (0..t).map(|_| rng.below(s)).collect();
        let c = [1.0, 2.5][case % 2];
        let primary = Objective { margin: 0.0, terms: Terms { loss: c, ..Terms::default() } };
        // the secondary: h of margin-type surrogates, or with size / Hamming terms too
        let secondary = match case % 3 {
            0 => Objective { margin: 1.0, terms: Terms::default() },
            1 => Objective { margin: 1.0, terms: Terms { loss: 0.5, size: -1.0, hamming: 1.0 } },
            _ => Objective { margin: 0.5, terms: Terms { size: 1.0, ..Terms::default() } },
        };
        assert!(all_wrong::maximises_token_errors(ChainLoss::Hamming, &primary));
        let q = TermQuery { primary, secondary: Some(secondary), ban: &[], k: 1, cone: None };
        let found = oracle_raw(&raw, &tags, ChainLoss::Hamming, &gold, &q, &[]);
        // the lexicographic pass the query replaces: the very same label
        let lex =
            fold_tables::<Lex>(&raw, &tags, ChainLoss::Hamming, Some(&gold), &primary, Some(&secondary));
        let want = viterbi_dense_lex(&lex).unwrap();
        assert_eq!(found.len(), 1, "case {case}");
        assert_eq!(found[0].label, want, "case {case}: S={s} T={t} gold={gold:?}");
        // brute force: the largest (primary, secondary) over every label
        let gold_score = path_score_raw(&raw, &gold);
        let key = |y: &Vec<usize>| {
            let terms = terms_of(&tags, ChainLoss::Hamming, y, &gold);
            let m = path_score_raw(&raw, y) - gold_score;
            (primary.value(m, &terms), secondary.value(m, &terms))
        };
        let best = all_labels(s, t).iter().map(key).fold((f64::NEG_INFINITY, f64::NEG_INFINITY), |a, b| {
            if b > a {
                b
            } else {
                a
            }
        });
        let got = key(&found[0].label);
        assert!(got.0 == best.0 && (got.1 - best.1).abs() < 1e-9, "case {case}: {got:?} vs {best:?}");
        if s >= 2 {
            all_wrong_cases += 1;
            assert!(found[0].label.iter().zip(&gold).all(|(a, g)| a != g), "case {case}");
        }
    }
    assert!(all_wrong_cases > 1000);
}

#[test]
fn only_the_token_hamming_count_qualifies() {
    let loss = |c: f64| Objective { margin: 0.0, terms: Terms { loss: c, ..Terms::default() } };
    assert!(all_wrong::maximises_token_errors(ChainLoss::Hamming, &loss(1.0)));
    assert!(!all_wrong::maximises_token_errors(ChainLoss::Segment, &loss(1.0)));
    assert!(!all_wrong::maximises_token_errors(ChainLoss::Hamming, &loss(-1.0)));
    assert!(!all_wrong::maximises_token_errors(ChainLoss::Hamming, &Objective { margin: 1.0, ..loss(1.0) }));
    let sized = Objective { margin: 0.0, terms: Terms { loss: 1.0, size: -1.0, hamming: 0.0 } };
    assert!(!all_wrong::maximises_token_errors(ChainLoss::Hamming, &sized));
}

#[test]
fn folded_node_scores_equal_the_terms_token_by_token() {
    // The fold reads the terms from a table by (gold tag, tag); every node score must be the
    // value folding `node_terms` token by token gives, bit for bit, with every term's
    // coefficient non-zero, O tags among the tags, with and without a gold label, f64 and pairs.
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let real = |rng: &mut Rng| (rng.next() >> 11) as f64 / (1u64 << 53) as f64 * 4.0 - 2.0;
    for case in 0..200 {
        let s = 1 + (rng.next() % 9) as usize;
        let t = 1 + (rng.next() % 12) as usize;
        let outside: Vec<usize> = (0..s).filter(|_| rng.next() % 3 == 0).collect();
        let tags = Tags::from_outside(s, &outside).unwrap();
        let loss = if case % 2 == 0 { ChainLoss::Hamming } else { ChainLoss::Segment };
        let unary: Vec<f64> = (0..t * s).map(|_| real(&mut rng)).collect();
        let trans: Vec<f64> = (0..s * s).map(|_| real(&mut rng)).collect();
        let (start, end): (Vec<f64>, Vec<f64>) =
            ((0..s).map(|_| real(&mut rng)).collect(), (0..s).map(|_| real(&mut rng)).collect());
        let raw = RawScores {
            n_states: s,
            unary: &unary,
            trans: &trans,
            trans_per_step: false,
            start: &start,
            end: &end,
        };
        let obj = |rng: &mut Rng| Objective {
            margin: real(rng),
            terms: Terms { loss: real(rng), size: real(rng), hamming: real(rng) },
        };
        let (primary, secondary) = (obj(&mut rng), obj(&mut rng));
        let gold: Vec<usize> = (0..t).map(|_| (rng.next() % s as u64) as usize).collect();
        let token_loss = loss == ChainLoss::Hamming;
        for g in [Some(gold.as_slice()), None] {
            let tab = fold_tables::<f64>(&raw, &tags, loss, g, &primary, None);
            let lex = fold_tables::<Lex>(&raw, &tags, loss, g, &primary, Some(&secondary));
            for tt in 0..t {
                for x in 0..s {
                    let e = unary[tt * s + x];
                    let gt = g.map(|g| g[tt]);
                    let a = primary.margin * e + node_terms(&tags, &primary.terms, token_loss, x, gt);
                    let b = secondary.margin * e + node_terms(&tags, &secondary.terms, token_loss, x, gt);
                    assert_eq!(tab.node[tt * s + x].to_bits(), a.to_bits(), "case {case}");
                    let got = lex.node[tt * s + x];
                    assert_eq!((got.0.to_bits(), got.1.to_bits()), (a.to_bits(), b.to_bits()), "case {case}");
                }
            }
        }
    }
}
