//! Score-level structures against brute-force enumeration on tiny instances: the loss equals
//! max_y ψ(h(y), g(y)) over every label, decoders return the best label, and φ(y)·w is the score.

use super::chain::ScoreChain;
use super::tree::ScoreTree;
use super::*;
use crate::chain::{ChainLoss, Tags};
use crate::dependency::tree::{check_tree_roots, is_projective};
use crate::DepLabel;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unif(&mut self) -> f64 {
        (self.next() % 10_000) as f64 / 10_000.0
    }
    /// Scores on a coarse grid (ties happen) in [−2, 2].
    fn score(&mut self) -> f64 {
        ((self.next() % 17) as f64 - 8.0) / 4.0 + 0.001 * self.unif()
    }
}

fn psi(name: &str) -> Box<dyn Surrogate> {
    match name {
        "beta" => bicrit_surrogates::by_name("beta", &[("beta", 0.5)]).unwrap(),
        n => bicrit_surrogates::by_name(n, &[]).unwrap(),
    }
}

fn all_sequences(n: usize, s: usize) -> Vec<Vec<usize>> {
    let total = s.pow(n as u32);
    (0..total)
        .map(|mut code| {
            (0..n)
                .map(|_| {
                    let x = code % s;
                    code /= s;
                    x
                })
                .collect()
        })
        .collect()
}

fn brute<S: ScoreStructure>(
    s: &S,
    w: &[f64],
    i: usize,
    gold: &S::Label,
    labels: &[S::Label],
    p: &dyn Surrogate,
) -> f64 {
    let gt = s.terms(gold, gold).unwrap();
    let fm = p.factor_map(&gt);
    let g0 = s.score(w, &(), i, gold).unwrap();
    labels
        .iter()
        .map(|y| {
            let t = s.terms(y, gold).unwrap();
            let (h, g) = fm.point(s.score(w, &(), i, y).unwrap() - g0, &t);
            p.value(h, g)
        })
        .fold(f64::NEG_INFINITY, f64::max)
}

#[test]
fn chain_loss_equals_brute_force_for_every_surrogate_and_exact_search() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..40 {
        let s_n = 2 + case % 2;
        let t_max = 4;
        let lengths = vec![1 + case % 4, 4, 3];
        let per_step = case % 3 == 0;
        let tags = Tags::from_outside(s_n, &[0]).unwrap();
        let chain =
            ScoreChain::new(tags, t_max, lengths.clone(), per_step, case % 2 == 0, true, ChainLoss::Hamming)
                .unwrap();
        let w: Vec<f64> = (0..chain.size()).map(|_| rng.score()).collect();
        let gold: Vec<Vec<usize>> =
            lengths.iter().map(|&n| (0..n).map(|_| (rng.next() % s_n as u64) as usize).collect()).collect();
        // φ(y)·w is the score
        for (i, y) in gold.iter().enumerate() {
            let phi = chain.joint_feature(&(), i, y).unwrap();
            assert!((phi.dot(&w) - chain.score(&w, &(), i, y).unwrap()).abs() < 1e-12);
        }
        for name in ["margin", "slack", "beta", "probloss", "log", "microf1"] {
            let p = psi(name);
            let mut methods = vec![Method::auto("chain", p.as_ref(), chain.capabilities()).unwrap()];
            for search in ["convex-hull-ban", "convex-hull-kbest", "frontier"] {
                if search == "frontier" && name == "microf1" {
                    continue;
                }
                methods.push(Method::Search(SearchSpec::from_name(search).unwrap()));
            }
            for m in &methods {
                let out = loss_batch(&chain, &w, &gold, p.as_ref(), m, true).unwrap();
                for (i, o) in out.iter().enumerate() {
                    let labels = all_sequences(lengths[i], s_n);
                    let want = brute(&chain, &w, i, &gold[i], &labels, p.as_ref());
                    assert!(
                        (o.value - want).abs() <= 1e-9 * (1.0 + want.abs()),
                        "case {case} {name} {}: {} vs brute force {want}",
                        m.name(),
                        o.value
                    );
                    assert_eq!(o.answer.len(), 1, "exact searches answer one label");
                }
            }
        }
        // decoders
        let best = decode_batch(&chain, &w).unwrap();
        let kb = kbest_batch(&chain, &w, 3).unwrap();
        for (i, y) in best.iter().enumerate() {
            let labels = all_sequences(lengths[i], s_n);
            let mut scores: Vec<f64> = labels.iter().map(|l| chain.score(&w, &(), i, l).unwrap()).collect();
            scores.sort_by(|a, b| b.partial_cmp(a).unwrap());
            assert!((chain.score(&w, &(), i, y).unwrap() - scores[0]).abs() < 1e-12);
            for (r, (l, v)) in kb[i].iter().enumerate() {
                assert!((v - scores[r]).abs() < 1e-9);
                assert!((chain.score(&w, &(), i, l).unwrap() - v).abs() < 1e-9);
            }
        }
    }
}

fn all_trees(n: usize, single_root: bool, projective: bool) -> Vec<Vec<u32>> {
    all_sequences(n, n + 1)
        .into_iter()
        .map(|h| h.into_iter().map(|x| x as u32).collect::<Vec<u32>>())
        .filter(|h| check_tree_roots(h, single_root).is_ok() && (!projective || is_projective(h)))
        .collect()
}

#[test]
fn tree_loss_and_decoders_equal_brute_force() {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for case in 0..32 {
        let projective = case % 2 == 0;
        let multi_root = case % 4 >= 2;
        let n_max = 4;
        let lengths = vec![1 + case % 4, 4];
        let tree = ScoreTree::new(n_max, lengths.clone(), 0, projective, multi_root, 1.0).unwrap();
        let w: Vec<f64> = (0..tree.size()).map(|_| rng.score()).collect();
        let trees: Vec<Vec<Vec<u32>>> =
            lengths.iter().map(|&n| all_trees(n, !multi_root, projective)).collect();
        let gold: Vec<DepLabel> = trees
            .iter()
            .map(|t| DepLabel::unlabeled(t[(rng.next() % t.len() as u64) as usize].clone()))
            .collect();
        for name in ["margin", "slack", "probloss", "microf1"] {
            let p = psi(name);
            for m in [
                Method::auto("tree", p.as_ref(), tree.capabilities()).unwrap(),
                Method::auto_for(&tree, p.as_ref()).unwrap(),
                Method::Search(SearchSpec::from_name("convex-hull-kbest").unwrap()),
            ] {
                let out = loss_batch(&tree, &w, &gold, p.as_ref(), &m, false).unwrap();
                for (i, o) in out.iter().enumerate() {
                    let labels: Vec<DepLabel> = trees[i].iter().cloned().map(DepLabel::unlabeled).collect();
                    let want = brute(&tree, &w, i, &gold[i], &labels, p.as_ref());
                    assert!(
                        (o.value - want).abs() <= 1e-9 * (1.0 + want.abs()),
                        "case {case} {name} {}: {} vs {want}",
                        m.name(),
                        o.value
                    );
                }
            }
        }
        let best = decode_batch(&tree, &w).unwrap();
        let kb = kbest_batch(&tree, &w, 4).unwrap();
        for (i, y) in best.iter().enumerate() {
            let mut scores: Vec<f64> = trees[i]
                .iter()
                .map(|h| tree.score(&w, &(), i, &DepLabel::unlabeled(h.clone())).unwrap())
                .collect();
            scores.sort_by(|a, b| b.partial_cmp(a).unwrap());
            assert!(check_tree_roots(&y.heads, !multi_root).is_ok());
            assert!((tree.score(&w, &(), i, y).unwrap() - scores[0]).abs() < 1e-12, "case {case}");
            assert_eq!(kb[i].len(), scores.len().min(4));
            for (r, (_, v)) in kb[i].iter().enumerate() {
                assert!((v - scores[r]).abs() < 1e-9, "case {case} rank {r}");
            }
        }
    }
}

#[test]
fn bad_inputs_are_errors_not_panics() {
    let tags = Tags::from_outside(3, &[]).unwrap();
    assert!(ScoreChain::new(tags.clone(), 3, vec![0], false, false, false, ChainLoss::Hamming).is_err());
    assert!(ScoreChain::new(tags.clone(), 3, vec![4], false, false, false, ChainLoss::Hamming).is_err());
    let c = ScoreChain::new(tags, 3, vec![2], false, false, false, ChainLoss::Hamming).unwrap();
    let mut w = vec![0.0; c.size()];
    let p = psi("slack");
    let m = Method::Search(SearchSpec::from_name("frontier").unwrap());
    // a wrong gold label: named
    let e = loss_batch(&c, &w, &[vec![0, 5]], p.as_ref(), &m, true).unwrap_err().to_string();
    assert!(e.contains("example 0") && e.contains("tag 5"), "{e}");
    // non-finite score used by the sequence
    w[1] = f64::NAN;
    let e = loss_batch(&c, &w, &[vec![0, 1]], p.as_ref(), &m, true).unwrap_err().to_string();
    assert!(e.contains("non-finite"), "{e}");
    // non-finite score in the padding is ignored
    let mut w = vec![0.0; c.size()];
    w[2 * 3] = f64::NAN;
    assert!(loss_batch(&c, &w, &[vec![0, 1]], p.as_ref(), &m, true).is_ok());
}
