//! Score-level structures: the scores of a neural network (or any model) given as arrays instead
//! of w·φ(x, y), for structured losses on score tensors (issue "structured losses for neural
//! networks").
//!
//! Each kind is a [`Structure`] whose "weights" `w` are the batch's score arrays, flattened and
//! concatenated in a documented layout, and whose joint feature φ(y) is the indicator of the score
//! entries a label uses: w·φ(y) is the label's score, and the gradient of a surrogate with respect
//! to the scores is ∂ψ/∂m · (φ(ŷ) − φ(y_i)). The instance data is `()` (everything is in `w` and
//! the structure's shapes), so [`crate::StructureOracle`] turns instance i into the λ-oracle that
//! every search drives, and every surrogate × search pair the oracle's capabilities allow works
//! unchanged. The oracles are the existing decoders, fed with the given scores:
//!
//! | kind | module | scores | oracle |
//! |---|---|---|---|
//! | chain | [`chain`] | unary [B, T, S], transitions [S, S] or [B, T − 1, S, S], start/end [S] | Viterbi, k-best, frontier DP |
//! | tree | [`tree`] | arcs [B, n + 1, n + 1], labels [B, n + 1, n + 1, R] | Eisner (k-best) or Chu–Liu–Edmonds (Lawler) |
//! | multilabel | [`multilabel`] | unary [B, L], pairwise [E, 2, 2] or [B, E, 2, 2] | enumeration, or QPBO / LP relaxation |
//! | multiclass | [`multiclass`] | [B, K] | enumeration |
//! | hierarchy | [`hierarchy`] | node scores [B, M] | tree DP, min-cut, LP/IP, enumeration |
//!
//! [`loss_batch`] runs one search per instance (rayon over the batch), [`decode_batch`] and
//! [`kbest_batch`] decode.

pub mod chain;
pub mod hierarchy;
pub mod multiclass;
pub mod multilabel;
pub mod tree;

use bicrit_core::{Error, Lambda, LambdaOracle, Objective, PlaneQuery, Result, Terms};
use bicrit_searches::{Integral, Item, SearchSpec, WarmStart};
use bicrit_surrogates::Surrogate;
use rayon::prelude::*;

use crate::{Scored, Structure, StructureOracle, TermQuery};

/// A structure over score arrays: instance data is `()`, the scores are `w`.
pub trait ScoreStructure: Structure<Data = ()> {
    /// Number of instances in the batch.
    fn batch(&self) -> usize;

    /// Whether a query for a few more answers costs little more than one (lazy k-best).
    fn cheap_extra_answers(&self) -> bool {
        false
    }
}

/// Extra answers per ban-list query of the automatic search on trees ([`Method::auto`]).
pub const TREE_DEEPEN: usize = 8;

/// How the loss of one instance is computed.
#[derive(Clone, Debug, PartialEq)]
pub enum Method {
    /// One loss-augmented oracle call at λ = 1: exact for margin rescaling, ψ = h + g.
    LossAugmented,
    /// A search from the registry.
    Search(SearchSpec),
}

impl Method {
    /// The method `"auto"` picks for a batch of the score-level structure `structure`: the exact
    /// integral maximum of ψ over the labels where the oracle allows it — one loss-augmented call
    /// for margin rescaling, else the search [`crate::catalog::auto_search`] picks for integral
    /// answers.
    pub fn auto(structure: &str, psi: &dyn Surrogate, caps: bicrit_core::Capabilities) -> Result<Self> {
        if psi.name() == "margin" && psi.params().is_empty() && psi.affine_in_h() {
            return Ok(Method::LossAugmented);
        }
        Ok(Method::Search(SearchSpec::from_name(crate::catalog::auto_search(structure, psi, caps, true))?))
    }

    /// [`Method::auto`] for the batch `s`: on trees (g = the task loss ≥ 0) the ban-list loop
    /// also stops on the bound of the labels not seen yet, and where extra answers are cheap
    /// ([`ScoreStructure::cheap_extra_answers`]: Eisner's lazy k-best) it asks for
    /// [`TREE_DEEPEN`] more at each ban-list query, which deepens that bound.
    pub fn auto_for<S: ScoreStructure>(s: &S, psi: &dyn Surrogate) -> Result<Self> {
        let mut m = Method::auto(s.name(), psi, s.capabilities())?;
        let fm = psi.factor_map(&Terms::default());
        let nonneg_g = fm.g_by_loss() && fm.g.terms.loss >= 0.0 && fm.g.constant >= 0.0;
        if let Method::Search(SearchSpec::ConvexHull(ch)) = &mut m {
            if ch.integral == Integral::Ban && s.name() == "tree" && nonneg_g {
                ch.nonneg_g = true;
                if s.cheap_extra_answers() {
                    ch.deepen = TREE_DEEPEN;
                }
            }
        }
        Ok(m)
    }

    /// Registry name (`loss-augmented` for the one-call margin path).
    pub fn name(&self) -> &'static str {
        match self {
            Method::LossAugmented => "loss-augmented",
            Method::Search(s) => s.name(),
        }
    }
}

/// The loss of one instance and what its gradient needs.
#[derive(Clone, Debug)]
pub struct InstanceLoss<L> {
    /// ψ at the answer (the loss).
    pub value: f64,
    /// The answer: one label, or two with weights summing to 1 (a point on a hull edge).
    pub answer: Vec<Item<L>>,
    /// dψ/dm at the answer: ψ_h·∂h/∂m + ψ_g·∂g/∂m. The gradient with respect to the scores is
    /// `coef · (Σ_j weight_j φ(ŷ_j) − φ(y_i))` (0 when the answer is the gold label).
    pub coef: f64,
    /// Whether the answer is the gold label (zero loss, zero gradient).
    pub is_gold: bool,
    /// Oracle calls made.
    pub calls: usize,
    /// A certified upper bound on the optimum the method targets, when it gives one.
    pub upper_bound: Option<f64>,
}

/// An instance's loss with the warm start for its next search ([`loss_batch_warm`]).
pub type Warmed<L> = (InstanceLoss<L>, Option<WarmStart<L>>);

fn one_loss<S: ScoreStructure>(
    s: &S,
    w: &[f64],
    i: usize,
    gold: &S::Label,
    psi: &dyn Surrogate,
    method: &Method,
    warm: Option<&WarmStart<S::Label>>,
) -> Result<Warmed<S::Label>> {
    s.check_label(&(), i, gold).map_err(|e| prefix(e, i))?;
    // A warm start is a hint (the answer is exact without it): one whose labels do not fit this
    // example (an id reused for another sentence) is dropped.
    let warm = warm.filter(|ws| ws.labels.iter().all(|y| s.check_label(&(), i, y).is_ok()));
    let gold_terms = s.terms(gold, gold)?;
    let fm = psi.factor_map(&gold_terms);
    let mut oracle = StructureOracle::new(s, w, &(), i, gold, fm);
    let mut next = None;
    let (value, answer, is_gold, calls, upper_bound) = match method {
        Method::LossAugmented => {
            let found = oracle.query(&PlaneQuery::lambda(Lambda::Finite(1.0)))?;
            let p = found.into_iter().next().ok_or_else(|| Error::solver("the oracle returned no label"))?;
            let v = psi.try_value(p.h, p.g)?;
            // the gold label (h, g) = (0, 0) is a candidate: ψ = 0 there
            if v > 0.0 {
                let item = Item { label: p.label, h: p.h, g: p.g, weight: 1.0 };
                (v, vec![item], false, 1, Some(v))
            } else {
                let item = Item { label: gold.clone(), h: 0.0, g: 0.0, weight: 1.0 };
                (0.0f64.max(psi.try_value(0.0, 0.0)?), vec![item], true, 1, Some(0.0))
            }
        }
        Method::Search(spec) => {
            spec.check(psi, oracle.capabilities())?;
            let out = spec.run_with(&mut oracle, psi, warm, None, false)?;
            // the upper-right chain of the labels seen and the best one (at most 32)
            next = Some(out.warm.resolve(warm)?);
            (out.value, out.answer, out.is_gold, out.calls.total(), out.upper_bound)
        }
    };
    let coef = if is_gold {
        0.0
    } else {
        let (h, g) =
            answer.iter().fold((0.0, 0.0), |(h, g), it| (h + it.weight * it.h, g + it.weight * it.g));
        let (dh, dg) = psi.try_grad(h, g)?;
        let c = dh * fm.h.margin + dg * fm.g.margin;
        if c.is_finite() {
            c
        } else {
            return Err(Error::input(format!(
                "the gradient of surrogate '{}' is not finite at (h, g) = ({h}, {g})",
                psi.name()
            )));
        }
    };
    Ok((InstanceLoss { value, answer, coef, is_gold, calls, upper_bound }, next))
}

fn prefix(e: Error, i: usize) -> Error {
    match e {
        Error::InvalidInput(m) => Error::InvalidInput(format!("gold label of example {i}: {m}")),
        other => other,
    }
}

/// The loss of every instance against `gold` (one label per instance), rayon over the batch when
/// `parallel` (a surrogate written in Python must run with `parallel = false`, under its GIL).
pub fn loss_batch<S: ScoreStructure>(
    s: &S,
    w: &[f64],
    gold: &[S::Label],
    psi: &dyn Surrogate,
    method: &Method,
    parallel: bool,
) -> Result<Vec<InstanceLoss<S::Label>>> {
    let out = loss_batch_warm(s, w, gold, psi, method, parallel, &[])?;
    Ok(out.into_iter().map(|(l, _)| l).collect())
}

/// [`loss_batch`] with a warm start per instance (`warm[i]`, or none when `warm` is shorter):
/// the labels of an earlier search of the same example (an earlier epoch), re-evaluated under
/// the current scores before the search asks the oracle (thesis §`sec:convex_hull_search`,
/// label cache). The values are the same as without it (every search stays exact); the number
/// of oracle calls is what changes. Returns each loss with the warm start for the example's
/// next search (None for the one-call loss-augmented method, which needs none).
pub fn loss_batch_warm<S: ScoreStructure>(
    s: &S,
    w: &[f64],
    gold: &[S::Label],
    psi: &dyn Surrogate,
    method: &Method,
    parallel: bool,
    warm: &[Option<WarmStart<S::Label>>],
) -> Result<Vec<Warmed<S::Label>>> {
    check_batch(s, w, gold.len())?;
    if let Method::Search(spec) = method {
        // refuse an impossible combination once, naming both pieces, before any work
        let caps = if gold.is_empty() {
            s.capabilities()
        } else {
            let t = s.terms(&gold[0], &gold[0]).unwrap_or_default();
            let fm = psi.factor_map(&t);
            bicrit_core::Capabilities {
                frontier: s.capabilities().frontier && fm.g_by_loss(),
                ..s.capabilities()
            }
        };
        spec.check(psi, caps)?;
    }
    let run = |i: usize| one_loss(s, w, i, &gold[i], psi, method, warm.get(i).and_then(|x| x.as_ref()));
    if parallel {
        (0..gold.len()).into_par_iter().map(run).collect()
    } else {
        (0..gold.len()).map(run).collect()
    }
}

/// The gradient of the batch's summed loss with respect to the scores `w`, in their layout:
/// Σ_i coef_i · (Σ_j weight_ij φ(ŷ_ij) − φ(y_i)) over the instances in order, φ the indicator
/// of the score entries a label uses (marginals for relaxed multi-label answers).
pub fn loss_gradient<S: ScoreStructure>(
    s: &S,
    gold: &[S::Label],
    losses: &[InstanceLoss<S::Label>],
) -> Result<Vec<f64>> {
    let mut grad = vec![0.0; s.size_joint_feature()];
    for (i, (o, y)) in losses.iter().zip(gold).enumerate() {
        let answer = o.answer.iter().map(|it| (&it.label, o.coef * it.weight));
        for (label, c) in answer.chain(std::iter::once((y, -o.coef))) {
            let phi = s.joint_feature(&(), i, label)?;
            for (&k, &v) in phi.indices.iter().zip(&phi.values) {
                grad[k] += c * v;
            }
        }
    }
    Ok(grad)
}

fn check_batch<S: ScoreStructure>(s: &S, w: &[f64], n: usize) -> Result<()> {
    if w.len() != s.size_joint_feature() {
        return Err(Error::input(format!(
            "internal: {} scores for a layout of {} (please report it)",
            w.len(),
            s.size_joint_feature()
        )));
    }
    if n != s.batch() {
        return Err(Error::input(format!("{n} gold labels for a batch of {}", s.batch())));
    }
    Ok(())
}

/// The highest-scoring label of every instance.
pub fn decode_batch<S: ScoreStructure>(s: &S, w: &[f64]) -> Result<Vec<S::Label>> {
    check_batch(s, w, s.batch())?;
    (0..s.batch()).into_par_iter().map(|i| s.predict(w, &(), i)).collect()
}

/// The labels of one instance, best first, with their scores.
pub type Ranked<L> = Vec<(L, f64)>;

/// The `k` highest-scoring labels of every instance, best first, with their scores (fewer when
/// the instance has fewer labels).
pub fn kbest_batch<S: ScoreStructure>(s: &S, w: &[f64], k: usize) -> Result<Vec<Ranked<S::Label>>> {
    check_batch(s, w, s.batch())?;
    if k == 0 {
        return Err(Error::input("k must be at least 1"));
    }
    if !s.capabilities().kbest && k > 1 {
        return Err(Error::unsupported(format!(
            "structure '{}' with these options has no k-best oracle (a relaxed oracle?)",
            s.name()
        )));
    }
    (0..s.batch())
        .into_par_iter()
        .map(|i| {
            let best = s.predict(w, &(), i)?;
            let base = s.score(w, &(), i, &best)?;
            let q = TermQuery {
                primary: Objective { margin: 1.0, terms: Terms::default() },
                secondary: None,
                ban: &[],
                k,
                cone: None,
            };
            let found: Vec<Scored<S::Label>> = s.oracle(w, &(), i, &best, &q)?;
            Ok(found.into_iter().map(|sc| (sc.label, base + sc.margin)).collect())
        })
        .collect()
}

/// Checks that every entry of `v` is finite, naming the array and the first bad position.
/// (`what` is formatted only on failure: the oracles check their scores at every call.)
pub(crate) fn check_finite_named(what: std::fmt::Arguments<'_>, v: &[f64]) -> Result<()> {
    match v.iter().position(|x| !x.is_finite()) {
        None => Ok(()),
        Some(p) => {
            Err(Error::input(format!("{what} holds a non-finite value ({}) at flat position {p}", v[p])))
        }
    }
}

#[cfg(test)]
mod tests;
