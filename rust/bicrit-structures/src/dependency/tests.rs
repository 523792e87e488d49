//! Exactness against brute-force enumeration on thousands of small random instances:
//! * decoders on random arc-candidate tables (integer values, frequent ties, lexicographic
//!   secondaries): Eisner k-best against all projective single-root labeled trees, Chu–Liu–Edmonds
//!   + Lawler against all single-root labeled trees;
//! * the structure's oracle against enumeration through its own `joint_feature` and `terms`, with
//!   the reference query semantics of `select::select_best` (ban list, k-best, lexicographic
//!   secondaries, λ = 0 / ∞).

use std::collections::HashSet;

use bicrit_core::{Objective, Terms};

use super::arcs::ArcTable;
use super::cle::cle_kbest;
use super::eisner::eisner_kbest;
use super::eisner_lazy::eisner_kbest_lazy;
use super::tree::{check_tree, is_projective};
use super::val::Val;
use super::*;
use crate::select::select_best;

/// splitmix64: a tiny deterministic generator for the randomized tests.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn int(&mut self, lo: i64, hi: i64) -> f64 {
        (lo + self.below((hi - lo + 1) as usize) as i64) as f64
    }
}

/// Every single-root tree over n tokens (head vectors), by brute force over all (n+1)^n vectors.
fn all_trees(n: usize) -> Vec<Vec<u32>> {
    let mut out = Vec::new();
    let mut heads = vec![0u32; n];
    loop {
        if check_tree(&heads).is_ok() {
            out.push(heads.clone());
        }
        let mut j = 0;
        loop {
            if j == n {
                return out;
            }
            heads[j] += 1;
            if heads[j] as usize <= n {
                break;
            }
            heads[j] = 0;
            j += 1;
        }
    }
}

/// Every relation vector of length n over `r` relations.
fn all_rels(n: usize, r: usize) -> Vec<Vec<u32>> {
    let mut out = vec![Vec::new()];
    for _ in 0..n {
        out = out
            .into_iter()
            .flat_map(|v| {
                (0..r as u32).map(move |x| {
                    let mut v = v.clone();
                    v.push(x);
                    v
                })
            })
            .collect();
    }
    out
}

#[test]
fn tree_counts_match_formulas() {
    // single-root trees over n tokens: n^(n−1) (Cayley); projective ones: the same as the number of
    // projective trees rooted at one token, 1, 2, 7, 30, 143, 728 (OEIS A006013).
    let proj = [1, 2, 7, 30, 143, 728];
    for n in 1..=6 {
        let t = all_trees(n);
        assert_eq!(t.len(), n.pow(n as u32 - 1));
        assert_eq!(t.iter().filter(|h| is_projective(h)).count(), proj[n - 1], "n = {n}");
    }
}

fn random_table(rng: &mut Rng, n: usize, nr: usize, kmax: usize, lex: bool) -> (ArcTable, Vec<Val>) {
    // values[(h * (n+1) + d) * nr + r]
    let mut values = vec![Val::ZERO; (n + 1) * (n + 1) * nr];
    let mut t = ArcTable::new(n, kmax);
    for d in 1..=n {
        for h in 0..=n {
            if h == d {
                continue;
            }
            for r in 0..nr {
                let v = Val::new(rng.int(-3, 3), if lex { rng.int(-2, 2) } else { 0.0 });
                values[(h * (n + 1) + d) * nr + r] = v;
                t.offer(h, d, v, r as u32);
            }
        }
    }
    (t, values)
}

fn brute_values(
    n: usize,
    nr: usize,
    values: &[Val],
    trees: &[Vec<u32>],
    projective_only: bool,
) -> Vec<(Val, Vec<u32>, Vec<u32>)> {
    let rels = all_rels(n, nr);
    let mut out = Vec::new();
    for heads in trees {
        if projective_only && !is_projective(heads) {
            continue;
        }
        for rv in &rels {
            let mut v = Val::ZERO;
            for d in 1..=n {
                v = v + values[(heads[d - 1] as usize * (n + 1) + d) * nr + rv[d - 1] as usize];
            }
            out.push((v, heads.clone(), rv.clone()));
        }
    }
    out.sort_by(|a, b| b.0.lex_cmp(&a.0));
    out
}

fn check_decoder(projective: bool, cases: usize, seed: u64) {
    check_decoder_with(projective, false, cases, seed);
}

fn check_decoder_with(projective: bool, lazy: bool, cases: usize, seed: u64) {
    let mut rng = Rng(seed);
    let trees: Vec<Vec<Vec<u32>>> = (0..=6).map(|n| if n == 0 { Vec::new() } else { all_trees(n) }).collect();
    for case in 0..cases {
        let nr = [1, 1, 2, 3][rng.below(4)];
        let max_n = match nr {
            1 => 6,
            2 => 4,
            _ => 3,
        };
        let n = 1 + rng.below(max_n);
        let k = 1 + rng.below(8);
        let lex = rng.below(2) == 0;
        let (table, values) = random_table(&mut rng, n, nr, k, lex);
        let got = match (projective, lazy) {
            (true, false) => eisner_kbest(&table, k),
            (true, true) => eisner_kbest_lazy(&table, k),
            _ => cle_kbest(&table, k, k, |_, _| true),
        };
        let want = brute_values(n, nr, &values, &trees[n], projective);
        assert_eq!(got.len(), k.min(want.len()), "case {case}: n={n} nr={nr} k={k}");
        let mut seen = HashSet::new();
        for (a, b) in got.iter().zip(&want) {
            assert_eq!(
                a.val,
                b.0,
                "case {case}: n={n} nr={nr} k={k}\n got {got:?}\n want {:?}",
                &want[..k.min(want.len())]
            );
            // the answer is a valid (projective) tree, labeled, with the value it claims
            check_tree(&a.heads).unwrap();
            if projective {
                assert!(is_projective(&a.heads));
            }
            let mut v = Val::ZERO;
            for d in 1..=n {
                v = v + values[(a.heads[d - 1] as usize * (n + 1) + d) * nr + a.rels[d - 1] as usize];
            }
            assert_eq!(v, a.val);
            assert!(seen.insert((a.heads.clone(), a.rels.clone())), "duplicate tree in k-best list");
        }
    }
}

#[test]
fn eisner_kbest_equals_enumeration() {
    check_decoder(true, 3000, 1);
}

#[test]
fn lazy_eisner_kbest_equals_enumeration() {
    check_decoder_with(true, true, 3000, 2);
}

#[test]
fn lazy_eisner_kbest_has_the_eager_values_on_long_sentences() {
    // every rank's value as the eager k-best lists give it, single root and several root
    // children, with lexicographic secondaries; distinct valid trees claiming true values
    let mut rng = Rng(7);
    for case in 0..40 {
        let n = 1 + rng.below(24);
        let nr = 1 + rng.below(3);
        let lex = rng.below(2) == 0;
        let k = 1 + rng.below(20);
        let (mut table, values) = random_table(&mut rng, n, nr, k, lex);
        table.set_multi_root(rng.below(2) == 0);
        let eager = eisner_kbest(&table, k);
        let lazy = eisner_kbest_lazy(&table, k);
        let ve: Vec<Val> = eager.iter().map(|t| t.val).collect();
        let vl: Vec<Val> = lazy.iter().map(|t| t.val).collect();
        assert_eq!(ve, vl, "case {case}: n={n} nr={nr} k={k}");
        let mut seen = HashSet::new();
        for t in &lazy {
            tree::check_tree_roots(&t.heads, !table.multi_root()).unwrap();
            assert!(is_projective(&t.heads));
            let mut v = Val::ZERO;
            for d in 1..=n {
                v = v + values[(t.heads[d - 1] as usize * (n + 1) + d) * nr + t.rels[d - 1] as usize];
            }
            assert_eq!(v, t.val);
            assert!(seen.insert((t.heads.clone(), t.rels.clone())));
        }
    }
}

#[test]
fn cle_kbest_equals_enumeration() {
    check_decoder(false, 3000, 2);
}

#[test]
fn cle_single_root_on_adversarial_root_scores() {
    // Root arcs far better than all others: the unconstrained optimum attaches every token to the
    // root; the answer must still have one root child, the best such tree.
    let mut rng = Rng(7);
    for _ in 0..300 {
        let n = 2 + rng.below(5);
        let mut t = ArcTable::new(n, 1);
        let mut values = vec![Val::ZERO; (n + 1) * (n + 1)];
        for d in 1..=n {
            for h in 0..=n {
                if h != d {
                    let v = Val::new(if h == 0 { 50.0 + rng.int(0, 3) } else { rng.int(-3, 3) }, 0.0);
                    values[h * (n + 1) + d] = v;
                    t.offer(h, d, v, 0);
                }
            }
        }
        let want = brute_values(n, 1, &values, &all_trees(n), false);
        let got = cle_kbest(&t, 1, 1, |_, _| true);
        assert_eq!(got[0].val, want[0].0);
        assert_eq!(got[0].heads.iter().filter(|&&h| h == 0).count(), 1);
        let got = eisner_kbest(&t, 1);
        let want = brute_values(n, 1, &values, &all_trees(n), true);
        assert_eq!(got[0].val, want[0].0);
    }
}

// ---------------------------------------------------------------------------------------------
// The structure: oracle against enumeration through joint_feature and terms.

const WORDS: [&str; 5] = ["a", "dog", "Dog", "runs", "fast"];
const TAGS: [&str; 3] = ["NOUN", "VERB", "DET"];

fn random_sentences(rng: &mut Rng, n: usize) -> Sentences {
    let words: Vec<&str> = (0..n).map(|_| WORDS[rng.below(WORDS.len())]).collect();
    let upos: Vec<&str> = (0..n).map(|_| TAGS[rng.below(TAGS.len())]).collect();
    let lemmas: Vec<&str> = words.iter().map(|w| if rng.below(2) == 0 { "_" } else { w }).collect();
    let mut s = Sentences::new();
    if rng.below(2) == 0 {
        s.push_strs(&words, Some(&lemmas), &upos, Some(&upos)).unwrap();
    } else {
        s.push_strs(&words, None, &upos, None).unwrap();
    }
    s
}

fn objective(rng: &mut Rng) -> (Objective, Option<Objective>) {
    let lam = [0.0, 0.5, 1.0, 2.0, f64::INFINITY][rng.below(5)];
    let size = [0.0, -0.5][rng.below(2)];
    let ham = [0.0, 1.0][rng.below(2)];
    if lam.is_infinite() {
        // λ = ∞: largest loss, ties by largest margin
        let p = Objective { margin: 0.0, terms: Terms { loss: 1.0, ..Terms::default() } };
        (p, Some(Objective { margin: 1.0, terms: Terms::default() }))
    } else if lam == 0.0 && rng.below(2) == 0 {
        // λ = 0: largest margin, ties by largest loss
        let p = Objective { margin: 1.0, terms: Terms::default() };
        (p, Some(Objective { margin: 0.0, terms: Terms { loss: 1.0, ..Terms::default() } }))
    } else {
        // a negative margin coefficient (argmin of the score) is legal too
        let margin = if rng.below(8) == 0 { -1.0 } else { 1.0 };
        let p = Objective { margin, terms: Terms { loss: lam, size, hamming: ham } };
        (
            p,
            if rng.below(3) == 0 {
                Some(Objective { margin: 0.0, terms: Terms { loss: 1.0, ..Terms::default() } })
            } else {
                None
            },
        )
    }
}

fn check_structure(projective: bool, cases: usize, seed: u64) {
    let mut rng = Rng(seed);
    let trees: Vec<Vec<Vec<u32>>> = (0..=5).map(|n| if n == 0 { Vec::new() } else { all_trees(n) }).collect();
    for case in 0..cases {
        let labeled = rng.below(3) != 0;
        let nr = if labeled { 1 + rng.below(3) } else { 0 };
        let n = 1 + rng.below(match nr {
            0 | 1 => 5,
            2 => 4,
            _ => 3,
        });
        let n_features = [7, 16, 64][rng.below(3)];
        let lw = [1.0, 0.5, 2.0][rng.below(3)];
        let s = Dependency::new(n_features, projective, labeled, nr, lw).unwrap();
        let data = random_sentences(&mut rng, n);
        let w: Vec<f64> = (0..n_features).map(|_| rng.int(-2, 2)).collect();
        let rel_sets = if labeled { all_rels(n, nr) } else { vec![Vec::new()] };
        let mut labels = Vec::new();
        for h in &trees[n] {
            if projective && !is_projective(h) {
                continue;
            }
            for r in &rel_sets {
                labels.push(DepLabel { heads: h.clone(), rels: r.clone() });
            }
        }
        // gold: any tree, projective or not
        let gh = trees[n][rng.below(trees[n].len())].clone();
        let gold = DepLabel { heads: gh, rels: rel_sets[rng.below(rel_sets.len())].clone() };
        let (primary, secondary) = objective(&mut rng);
        let k = 1 + rng.below(6);
        let n_ban = rng.below(3);
        let ban: Vec<DepLabel> = (0..n_ban).map(|_| labels[rng.below(labels.len())].clone()).collect();
        let q = TermQuery { primary, secondary, ban: &ban, k, cone: None };
        let got = s.oracle(&w, &data, 0, &gold, &q).unwrap();
        let gold_score = s.joint_feature(&data, 0, &gold).unwrap().dot(&w);
        let candidates: Vec<Scored<DepLabel>> = labels
            .iter()
            .map(|y| Scored {
                label: y.clone(),
                margin: s.joint_feature(&data, 0, y).unwrap().dot(&w) - gold_score,
                terms: s.terms(y, &gold).unwrap(),
            })
            .collect();
        let want = select_best(&q, candidates);
        let ctx = format!("case {case}: n={n} nr={nr} proj={projective} k={k} ban={ban:?} q={q:?}");
        assert_eq!(got.len(), want.len(), "{ctx}");
        let mut seen = HashSet::new();
        for (a, b) in got.iter().zip(&want) {
            let pa = q.primary.value(a.margin, &a.terms);
            let pb = q.primary.value(b.margin, &b.terms);
            assert!((pa - pb).abs() < 1e-9, "{ctx}\n got {got:?}\n want {want:?}");
            if let Some(sec) = &q.secondary {
                assert!(
                    (sec.value(a.margin, &a.terms) - sec.value(b.margin, &b.terms)).abs() < 1e-9,
                    "{ctx}"
                );
            }
            // the reported margin and terms are the label's own
            s.check_label(&data, 0, &a.label).unwrap();
            let m = s.joint_feature(&data, 0, &a.label).unwrap().dot(&w) - gold_score;
            assert!((m - a.margin).abs() < 1e-9);
            assert_eq!(a.terms, s.terms(&a.label, &gold).unwrap());
            assert!(!ban.contains(&a.label), "{ctx}: banned label returned");
            assert!(seen.insert(a.label.clone()), "{ctx}: duplicate label");
            if projective {
                assert!(is_projective(&a.label.heads));
            }
        }
    }
}

#[test]
fn projective_oracle_equals_enumeration() {
    check_structure(true, 1500, 11);
}

#[test]
fn nonprojective_oracle_equals_enumeration() {
    check_structure(false, 1500, 12);
}

#[test]
fn predict_is_the_best_tree() {
    let mut rng = Rng(5);
    for case in 0..200 {
        let projective = case % 2 == 0;
        let labeled = rng.below(2) == 0;
        let nr = if labeled { 2 } else { 0 };
        let n = 1 + rng.below(4);
        let s = Dependency::new(32, projective, labeled, nr, 1.0).unwrap();
        let data = random_sentences(&mut rng, n);
        let w: Vec<f64> = (0..32).map(|_| rng.int(-2, 2)).collect();
        let y = s.predict(&w, &data, 0).unwrap();
        let best = s.joint_feature(&data, 0, &y).unwrap().dot(&w);
        let rel_sets = if labeled { all_rels(n, nr) } else { vec![Vec::new()] };
        for h in all_trees(n) {
            if projective && !is_projective(&h) {
                continue;
            }
            for r in &rel_sets {
                let other = DepLabel { heads: h.clone(), rels: r.clone() };
                assert!(s.joint_feature(&data, 0, &other).unwrap().dot(&w) <= best + 1e-9);
            }
        }
    }
}

#[test]
fn terms_follow_the_documented_loss() {
    let s = Dependency::new(16, true, true, 3, 0.5).unwrap();
    let gold = DepLabel { heads: vec![2, 0, 2], rels: vec![0, 1, 2] };
    // token 1: wrong head; token 3: right head, wrong relation; token 2: right
    let y = DepLabel { heads: vec![3, 0, 2], rels: vec![0, 1, 0] };
    let t = s.terms(&y, &gold).unwrap();
    assert_eq!(t, Terms { loss: 1.5, size: 3.0, hamming: 4.0 });
    assert_eq!(s.terms(&gold, &gold).unwrap(), Terms { loss: 0.0, size: 3.0, hamming: 0.0 });
    let u = Dependency::new(16, false, false, 0, 1.0).unwrap();
    let t = u.terms(&DepLabel::unlabeled(vec![3, 0, 2]), &DepLabel::unlabeled(vec![2, 0, 2])).unwrap();
    assert_eq!(t, Terms { loss: 1.0, size: 3.0, hamming: 2.0 });
}

#[test]
fn bad_input_is_an_error() {
    let s = Dependency::new(16, true, true, 2, 1.0).unwrap();
    let mut data = Sentences::new();
    data.push_strs(&["a", "b", "c"], None, &["X", "Y", "Z"], None).unwrap();
    let w = vec![0.0; 16];
    let q = TermQuery::loss_augmented(1.0);
    let err = |y: DepLabel| s.oracle(&w, &data, 0, &y, &q).unwrap_err().to_string();
    assert!(err(DepLabel { heads: vec![0, 1, 9], rels: vec![0, 0, 0] }).contains("outside 0..=3"));
    assert!(err(DepLabel { heads: vec![0, 3, 2], rels: vec![0, 0, 0] }).contains("cycle"));
    assert!(err(DepLabel { heads: vec![0, 0, 1], rels: vec![0, 0, 0] }).contains("exactly one root child"));
    assert!(
        err(DepLabel { heads: vec![2, 3, 1], rels: vec![0, 0, 0] }).contains("no token attaches to the root")
    );
    assert!(err(DepLabel { heads: vec![0, 1, 1], rels: vec![0, 0] }).contains("rels has 2 entries"));
    assert!(err(DepLabel { heads: vec![0, 1], rels: vec![0, 0] }).contains("heads has 2 entries"));
    assert!(err(DepLabel { heads: vec![0, 1, 1], rels: vec![0, 5, 0] }).contains("not a relation id"));
    assert!(s.oracle(&w[..3], &data, 0, &DepLabel { heads: vec![0, 1, 1], rels: vec![0; 3] }, &q).is_err());
    let gold = DepLabel { heads: vec![0, 1, 1], rels: vec![0; 3] };
    assert!(s.oracle(&w, &data, 1, &gold, &q).unwrap_err().to_string().contains("outside the 1 sentences"));
    let cone = bicrit_core::Cone { lo: 0.0, lo_closed: true, hi: 1.0, hi_closed: true };
    let qc = TermQuery { cone: Some(cone), ..TermQuery::loss_augmented(1.0) };
    assert!(matches!(s.oracle(&w, &data, 0, &gold, &qc), Err(Error::Unsupported(_))));
    let wide = vec![1e308; 16];
    assert!(s.oracle(&wide, &data, 0, &gold, &q).unwrap_err().to_string().contains("not finite"));
    assert!(Dependency::new(0, true, true, 2, 1.0).is_err());
    assert!(Dependency::new(8, true, true, 0, 1.0).is_err());
    assert!(Dependency::new(8, true, true, 2, -1.0).is_err());
    let big = TermQuery { k: 1 << 20, ..TermQuery::loss_augmented(1.0) };
    assert!(s.oracle(&w, &data, 0, &gold, &big).unwrap_err().to_string().contains("too large"));
}

#[test]
fn eisner_large_k_agrees_with_small_k_on_long_sentences() {
    // k > 16 takes the selection path of the k-best merge; its lists must extend the k ≤ 16 ones
    // (values in the same order), hold distinct valid projective trees and claim true values.
    let mut rng = Rng(99);
    for _ in 0..20 {
        let n = 18 + rng.below(6);
        let nr = 1 + rng.below(3);
        let lex = rng.below(2) == 0;
        let (table, values) = random_table(&mut rng, n, nr, 24, lex);
        let big = eisner_kbest(&table, 24);
        let small = eisner_kbest(&table, 16);
        assert_eq!(big.len(), 24);
        let vb: Vec<Val> = big.iter().map(|t| t.val).collect();
        let vs: Vec<Val> = small.iter().map(|t| t.val).collect();
        assert_eq!(&vb[..16], &vs[..]);
        assert!(vb.windows(2).all(|p| !p[1].gt(&p[0])));
        let mut seen = HashSet::new();
        for t in &big {
            check_tree(&t.heads).unwrap();
            assert!(is_projective(&t.heads));
            let mut v = Val::ZERO;
            for d in 1..=n {
                v = v + values[(t.heads[d - 1] as usize * (n + 1) + d) * nr + t.rels[d - 1] as usize];
            }
            assert_eq!(v, t.val);
            assert!(seen.insert((t.heads.clone(), t.rels.clone())));
        }
    }
}
