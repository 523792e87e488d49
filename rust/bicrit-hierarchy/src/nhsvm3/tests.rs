//! NHSVM3's learner against independent references: ℓ_i and its subgradient by brute force over
//! the leaf paths (scored through `joint_feature`) and by finite differences; the lazy learner
//! against a plain dense loop of the same algorithm; determinism over threads; interrupts;
//! bad input.

use super::*;
use bicrit_structures::hierarchy::{HierLoss, HierarchyGraph, HierarchyOptions, LabelSpace, WeightLayout};

/// splitmix64 for the test data.
struct R(u64);

impl R {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [-1, 1).
    fn unif(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

//        0
//      /   \
//     1     2
//    / \   / | \
//   3   4 5  6  7
//  / \
// 8   9
fn tree() -> HierarchyGraph {
    let parents =
        vec![vec![], vec![0], vec![0], vec![1], vec![1], vec![2], vec![2], vec![2], vec![3], vec![3]];
    HierarchyGraph::new(&parents, 0, None).unwrap()
}

/// Leaf paths Ā(l) of `tree()`, by leaf id (the oracle's tie order: first maximum in node order).
fn paths() -> Vec<HierLabel> {
    vec![vec![0, 1, 4], vec![0, 2, 5], vec![0, 2, 6], vec![0, 2, 7], vec![0, 1, 3, 8], vec![0, 1, 3, 9]]
}

/// A single-path NHSVM3 structure: node scale √α, loss weight α (arbitrary positive α).
fn structure(d: usize, layout: WeightLayout, multilabel: bool) -> HierarchyStructure {
    let alpha = [0.05, 0.2, 0.3, 0.25, 0.6, 0.7, 0.5, 0.4, 0.4, 0.5];
    HierarchyStructure::new(
        tree(),
        HierarchyOptions {
            space: LabelSpace::Leaves,
            multilabel,
            loss: if multilabel { HierLoss::Leaf } else { HierLoss::Normalized },
            n_features: d,
            node_scale: Some(alpha.iter().map(|a: &f64| a.sqrt()).collect()),
            node_loss_weight: Some(alpha.to_vec()),
            node_miss_weight: None,
            layout,
        },
    )
    .unwrap()
}

/// Rows x_i with a planted leaf each (label = argmax of a random model plus noise), some zeros.
fn data(rng: &mut R, n: usize, d: usize, s: &HierarchyStructure) -> (CsrMatrix, Vec<HierLabel>) {
    let planted: Vec<f64> = (0..s.size_joint_feature()).map(|_| rng.unif()).collect();
    let mut rows = Vec::new();
    let mut labels = Vec::new();
    for _ in 0..n {
        let x: Vec<f64> =
            (0..d).map(|j| if (j + rng.below(3)) % 4 == 0 { 0.0 } else { rng.unif() }).collect();
        let one = CsrMatrix::from_dense(std::slice::from_ref(&x), d).unwrap();
        let best = paths()
            .into_iter()
            .map(|y| (s.score(&planted, &one, 0, &y).unwrap() + 0.3 * rng.unif(), y))
            .max_by(|a, b| a.0.partial_cmp(&b.0).unwrap())
            .unwrap()
            .1;
        rows.push(x);
        labels.push(best);
    }
    (CsrMatrix::from_dense(&rows, d).unwrap(), labels)
}

fn dense(v: &SparseVec, dim: usize) -> Vec<f64> {
    let mut out = vec![0.0; dim];
    v.add_to(&mut out, 1.0);
    out
}

/// ℓ_i(w) and its subgradient by brute force over the leaf paths (eq. `NHSVM3`), with the
/// margin of the best and the second-best label (to skip kinks in finite differences).
fn brute(
    s: &HierarchyStructure,
    x: &CsrMatrix,
    i: usize,
    gold: &HierLabel,
    w: &[f64],
) -> (f64, Vec<f64>, f64) {
    let dim = s.size_joint_feature();
    let phi_gold = dense(&s.joint_feature(x, i, gold).unwrap(), dim);
    let mut vals: Vec<(f64, Vec<f64>)> = vec![(0.0, vec![0.0; dim])]; // the clip at 0
    for y in paths().iter().filter(|y| *y != gold) {
        let l = s.terms(y, gold).unwrap().loss;
        let phi = dense(&s.joint_feature(x, i, y).unwrap(), dim);
        let diff: Vec<f64> = phi.iter().zip(&phi_gold).map(|(a, b)| (a - b) / l).collect();
        let val = diff.iter().zip(w).map(|(a, b)| a * b).sum::<f64>() + 1.0;
        vals.push((val, diff));
    }
    vals.sort_by(|a, b| b.0.partial_cmp(&a.0).unwrap());
    let gap = vals[0].0 - vals[1].0;
    let (v, g) = vals.swap_remove(0);
    (v, g, gap)
}

#[test]
fn loss_and_subgradient_match_brute_force_and_finite_differences() {
    let mut rng = R(5);
    for layout in [WeightLayout::NodeMajor, WeightLayout::FeatureMajor] {
        let d = 4;
        let s = structure(d, layout, false);
        let dim = s.size_joint_feature();
        let (x, labels) = data(&mut rng, 40, d, &s);
        let mut kinks = 0;
        for trial in 0..200 {
            let i = trial % 40;
            let scale = [1.0, 0.37, 3.0][trial % 3];
            let w: Vec<f64> = (0..dim).map(|_| 2.0 * rng.unif()).collect();
            let w_eff: Vec<f64> = w.iter().map(|a| a * scale).collect();
            let (loss, g) = loss_and_subgradient(&s, &x, &labels[i], i, &w, scale, true).unwrap();
            let (want, want_g, gap) = brute(&s, &x, i, &labels[i], &w_eff);
            assert!((loss - want).abs() < 1e-10 * (1.0 + want.abs()), "{loss} vs {want}");
            let g = dense(&g, dim);
            if gap > 1e-6 {
                for (a, b) in g.iter().zip(&want_g) {
                    assert!((a - b).abs() < 1e-12, "subgradient {a} vs {b}");
                }
            }
            // central finite differences of ℓ_i along a random direction, away from kinks
            if gap < 1e-3 {
                kinks += 1;
                continue;
            }
            let u: Vec<f64> = (0..dim).map(|_| rng.unif()).collect();
            let eps = 1e-6;
            let at = |sign: f64| {
                let wp: Vec<f64> = w_eff.iter().zip(&u).map(|(a, b)| a + sign * eps * b).collect();
                loss_and_subgradient(&s, &x, &labels[i], i, &wp, 1.0, false).unwrap().0
            };
            let fd = (at(1.0) - at(-1.0)) / (2.0 * eps);
            let gu: f64 = g.iter().zip(&u).map(|(a, b)| a * b).sum();
            assert!((fd - gu).abs() < 1e-6 * (1.0 + gu.abs()), "finite difference {fd} vs g·u {gu}");
        }
        assert!(kinks < 20, "too many kinks to test: {kinks}");
    }
}

/// The algorithm of the module documentation written out densely (no lazy scaling, explicit
/// average, brute-force inference) in the learner's instance order.
fn dense_reference(
    s: &HierarchyStructure,
    x: &CsrMatrix,
    labels: &[HierLabel],
    p: &Nhsvm3Params,
    epochs: usize,
) -> (Vec<f64>, Vec<f64>) {
    let n = labels.len();
    let dim = s.size_joint_feature();
    let lambda = 1.0 / (n as f64 * p.c);
    let (mut w, mut wbar) = (vec![0.0; dim], vec![0.0; dim]);
    let mut rng = Rng::new(p.random_state);
    let mut t = 0.0;
    for _ in 0..epochs {
        let mut order: Vec<usize> = (0..n).collect();
        rng.shuffle(&mut order);
        for block in order.chunks(p.block_size) {
            // every subgradient of a block at the weights of the block's start
            let block_grads: Vec<Vec<f64>> =
                block.iter().map(|&i| brute(s, x, i, &labels[i], &w).1).collect();
            for grads in block_grads.chunks(p.batch_size) {
                t += 1.0;
                let eta = 1.0 / (lambda * (t + p.t0));
                for (k, wk) in w.iter_mut().enumerate() {
                    let g: f64 = grads.iter().map(|g| g[k]).sum();
                    *wk = (1.0 - eta * lambda) * *wk - eta / grads.len() as f64 * g;
                }
                let rho = 2.0 / (t + 1.0);
                for (b, a) in wbar.iter_mut().zip(&w) {
                    *b = (1.0 - rho) * *b + rho * a;
                }
            }
        }
    }
    (w, wbar)
}

#[test]
fn lazy_learner_matches_the_dense_reference() {
    let mut rng = R(11);
    for (layout, batch_size, block_size, c) in [
        (WeightLayout::NodeMajor, 1, 1, 1.0),
        (WeightLayout::FeatureMajor, 4, 4, 10.0),
        (WeightLayout::NodeMajor, 7, 7, 0.1),
        (WeightLayout::NodeMajor, 1, 8, 1.0),
        (WeightLayout::FeatureMajor, 3, 8, 10.0),
    ] {
        let d = 5;
        let s = structure(d, layout, false);
        let (x, labels) = data(&mut rng, 30, d, &s);
        let p = Nhsvm3Params { c, batch_size, block_size, t0: 1.0, random_state: 3 };
        let mut l = Nhsvm3Sgd::new(p.clone(), &s, 30, None).unwrap();
        for _ in 0..4 {
            l.epoch(&s, &x, &labels, &Context::sequential()).unwrap();
        }
        let (w, wbar) = dense_reference(&s, &x, &labels, &p, 4);
        for (got, want) in [(l.weights(false), w), (l.weights(true), wbar)] {
            let scale = want.iter().fold(0.0f64, |m, a| m.max(a.abs()));
            for (a, b) in got.iter().zip(&want) {
                assert!((a - b).abs() < 1e-9 * (1.0 + scale), "{a} vs {b}");
            }
        }
    }
}

#[test]
fn objective_decreases_and_threads_do_not_change_the_model() {
    let mut rng = R(3);
    let d = 6;
    let s = structure(d, WeightLayout::NodeMajor, false);
    let (x, labels) = data(&mut rng, 120, d, &s);
    let p = Nhsvm3Params { c: 5.0, batch_size: 2, block_size: 16, t0: 1.0, random_state: 9 };
    let mut a = Nhsvm3Sgd::new(p.clone(), &s, 120, None).unwrap();
    let mut b = a.clone();
    let pool = Context::pool(3).unwrap();
    let threads = Context::new(pool.as_ref(), None);
    let seq = Context::sequential();
    // P(0) = C·n: every ℓ_i(0) = 1 (all margins 0)
    let p0 = p.c * nhsvm3_loss(&s, &x, &labels, &vec![0.0; s.size_joint_feature()], &seq).unwrap();
    assert!((p0 - p.c * 120.0).abs() < 1e-9);
    let exact = |l: &Nhsvm3Sgd| {
        let w = l.weights(true);
        0.5 * dense_norm_sq(&w) + p.c * nhsvm3_loss(&s, &x, &labels, &w, &seq).unwrap()
    };
    let mut objs = vec![p0];
    for _ in 0..6 {
        let sa = a.epoch(&s, &x, &labels, &seq).unwrap();
        let sb = b.epoch(&s, &x, &labels, &threads).unwrap();
        assert_eq!(a.weights(true), b.weights(true), "bit-identical whatever the threads");
        assert_eq!(a.weights(false), b.weights(false));
        assert_eq!(sa.objective, sb.objective);
        objs.push(exact(&a));
    }
    // Pegasos's first steps (η_1 = n·C/2) overshoot, so epoch 1 may sit above P(0); from
    // there on the exact objective of the averaged weights goes down, and below P(0)
    assert!(objs[1..].windows(2).all(|p| p[1] < p[0]), "{objs:?}");
    assert!(objs[6] < objs[0], "{objs:?}");
}

#[test]
fn an_interrupted_epoch_leaves_the_previous_state() {
    let mut rng = R(8);
    let s = structure(3, WeightLayout::NodeMajor, false);
    let (x, labels) = data(&mut rng, 50, 3, &s);
    let p = Nhsvm3Params { c: 1.0, batch_size: 2, ..Nhsvm3Params::default() };
    let mut a = Nhsvm3Sgd::new(p, &s, 50, None).unwrap();
    a.epoch(&s, &x, &labels, &Context::sequential()).unwrap();
    let mut b = a.clone();
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let stop = || -> Result<()> {
        if calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) >= 5 {
            Err(Error::input("interrupted"))
        } else {
            Ok(())
        }
    };
    let ctx = Context::with_interval(None, Some(&stop), std::time::Duration::ZERO);
    let before = b.weights(true);
    assert!(b.epoch(&s, &x, &labels, &ctx).is_err());
    assert_eq!(b.epochs(), 1);
    assert_eq!(b.weights(true), before);
    a.epoch(&s, &x, &labels, &Context::sequential()).unwrap();
    b.epoch(&s, &x, &labels, &Context::sequential()).unwrap();
    assert_eq!(a.weights(true), b.weights(true), "training continues as if nothing had happened");
}

#[test]
fn bad_input_is_an_error() {
    let mut rng = R(1);
    let s = structure(3, WeightLayout::NodeMajor, false);
    let (x, labels) = data(&mut rng, 10, 3, &s);
    let ok = Nhsvm3Params::default();
    for bad in [
        Nhsvm3Params { c: 0.0, ..ok.clone() },
        Nhsvm3Params { c: f64::NAN, ..ok.clone() },
        Nhsvm3Params { batch_size: 0, ..ok.clone() },
        Nhsvm3Params { block_size: 0, ..ok.clone() },
        Nhsvm3Params { t0: -1.0, ..ok.clone() },
    ] {
        assert!(matches!(Nhsvm3Sgd::new(bad, &s, 10, None), Err(Error::InvalidParameter(_))));
    }
    assert!(matches!(Nhsvm3Sgd::new(ok.clone(), &s, 10, Some(vec![0.0; 3])), Err(Error::InvalidInput(_))));
    let mut l = Nhsvm3Sgd::new(ok.clone(), &s, 10, None).unwrap();
    let ctx = Context::sequential();
    // wrong number of labels, a label that is not a leaf path, wrong width
    assert!(matches!(l.epoch(&s, &x, &labels[..9], &ctx), Err(Error::InvalidInput(_))));
    let mut bad = labels.clone();
    bad[4] = vec![0, 1];
    let e = l.epoch(&s, &x, &bad, &ctx).unwrap_err();
    assert!(e.to_string().contains("Y[4]"), "{e}");
    let s4 = structure(4, WeightLayout::NodeMajor, false);
    assert!(matches!(l.epoch(&s4, &x, &labels, &ctx), Err(Error::InvalidInput(_))));
    // multi-label structures are refused
    let sm = structure(3, WeightLayout::NodeMajor, true);
    assert!(matches!(l.epoch(&sm, &x, &labels, &ctx), Err(Error::Incompatible(_))));
    assert_eq!(l.epochs(), 0);
    assert!(l.epoch(&s, &x, &labels, &ctx).is_ok());
}
