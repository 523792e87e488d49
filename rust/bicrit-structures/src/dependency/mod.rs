//! `dependency`: arc-factored first-order dependency parsing with labeled arcs (docs/architecture.md, Structures; thesis
//! §"Dependency Parsing on Deep Network", which drives a k-best Eisner oracle with a ban list).
//!
//! * Inputs: [`Sentences`] — token atoms of form, lemma, UPOS and XPOS (`corpus.rs`).
//! * Labels: [`DepLabel`] — `heads[j]` is the head of token j + 1 (0 = root) and `rels[j]` its
//!   relation id (empty when the structure is unlabeled).
//! * Joint feature map: the sum over tokens of hashed arc features f(h_d, d, r_d) (`features.rs`),
//!   `n_features` buckets.
//! * Loss: per token, 1 for a wrong head, `label_weight` for the right head with a wrong relation,
//!   0 otherwise (head Hamming + weighted label Hamming; with `label_weight = 1` it counts the tokens
//!   that labeled attachment score calls wrong). Terms: `loss`; `size` = n, a constant (every tree
//!   has n arcs); `hamming` = the Hamming distance between the sets of labeled arcs
//!   {(h_d, d, r_d)} = 2 × #tokens whose (head, relation) differs — the indicator-set Hamming the
//!   Micro-F1 surrogate needs (docs/architecture.md, Structures); unlabeled: 2 × #wrong heads.
//! * Oracles: the objective decomposes per token, so the best relation of each arc is chosen
//!   independently and the tree search runs on per-arc candidate lists (`arcs.rs`). Projective:
//!   Eisner with Huang–Chiang k-best lists (`eisner.rs`). Non-projective: Chu–Liu–Edmonds with
//!   Lawler's k-best partitioning (`cle.rs`). Both enforce exactly one child of the root. Ban lists:
//!   the k best non-banned trees are among the k + |ban| best trees (distinct trees, at most |ban|
//!   of them banned); Eisner computes those k + |ban| and filters, Lawler stops as soon as k
//!   non-banned trees are found. No cone (constrained λ-oracle).

pub mod arcs;
pub mod cle;
pub mod corpus;
pub mod eisner;
pub mod eisner_lazy;
pub mod features;
pub mod tree;
pub mod val;

#[cfg(test)]
mod tests;

use bicrit_core::{Capabilities, Error, Objective, Result, SparseVec, Terms};

pub use corpus::{Sentence, Sentences};

use crate::{Scored, Structure, TermQuery};
use arcs::{ArcTable, Tree};
use features::{ArcScorer, Featurizer};
use val::Val;

/// Largest Eisner chart (entries) an oracle call may allocate: 2²³ entries ≈ 320 MB.
pub const MAX_CHART_ENTRIES: usize = 1 << 23;

/// A dependency tree: heads and relation ids of tokens 1..=n.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DepLabel {
    /// `heads[j]` is the head of token j + 1 (0 = root).
    pub heads: Vec<u32>,
    /// `rels[j]` is the relation id of token j + 1; empty for an unlabeled structure.
    pub rels: Vec<u32>,
}

impl DepLabel {
    /// An unlabeled tree.
    pub fn unlabeled(heads: Vec<u32>) -> Self {
        DepLabel { heads, rels: Vec::new() }
    }
}

/// The `dependency` structure (see the module docs).
#[derive(Clone, Debug)]
pub struct Dependency {
    n_features: usize,
    projective: bool,
    n_relations: usize,
    label_weight: f64,
}

impl Dependency {
    /// A structure hashing into `n_features ≥ 1` buckets, decoding projective (Eisner) or
    /// non-projective (Chu–Liu–Edmonds) trees, labeled with `n_relations ≥ 1` relations or
    /// unlabeled (`labeled = false`, `n_relations` ignored); `label_weight ≥ 0` is the loss of a
    /// right head with a wrong relation.
    pub fn new(
        n_features: usize,
        projective: bool,
        labeled: bool,
        n_relations: usize,
        label_weight: f64,
    ) -> Result<Self> {
        if n_features == 0 {
            return Err(Error::param("n_features must be at least 1"));
        }
        if labeled && n_relations == 0 {
            return Err(Error::param("a labeled dependency structure needs at least one relation"));
        }
        if n_relations > u32::MAX as usize {
            return Err(Error::param(format!("too many relations ({n_relations})")));
        }
        if !(label_weight.is_finite() && label_weight >= 0.0) {
            return Err(Error::param(format!("label_weight must be finite and ≥ 0, got {label_weight}")));
        }
        Ok(Dependency {
            n_features,
            projective,
            n_relations: if labeled { n_relations } else { 0 },
            label_weight,
        })
    }

    /// Number of hashed feature buckets (= the joint feature size).
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// Does the oracle decode projective trees only (Eisner)?
    pub fn projective(&self) -> bool {
        self.projective
    }

    /// Are arcs labeled?
    pub fn labeled(&self) -> bool {
        self.n_relations > 0
    }

    /// Number of relations (0 when unlabeled).
    pub fn n_relations(&self) -> usize {
        self.n_relations
    }

    /// Loss of a right head with a wrong relation.
    pub fn label_weight(&self) -> f64 {
        self.label_weight
    }

    fn check_w(&self, w: &[f64]) -> Result<()> {
        if w.len() != self.n_features {
            return Err(Error::input(format!(
                "w has length {} but the joint feature size is {}",
                w.len(),
                self.n_features
            )));
        }
        Ok(())
    }

    /// Checks the shape of a label against a sentence of `n` tokens (not the tree property).
    fn check_shape(&self, y: &DepLabel, n: usize) -> Result<()> {
        y.check_shape(n, self.labeled(), self.n_relations).map_err(Error::input)
    }

    /// Per-token (loss, indicator-set Hamming) of attaching token d to head h with relation r.
    #[inline]
    fn token_terms(&self, h: u32, r: u32, gh: u32, gr: u32) -> (f64, f64) {
        if h != gh {
            (1.0, 2.0)
        } else if self.labeled() && r != gr {
            (self.label_weight, 2.0)
        } else {
            (0.0, 0.0)
        }
    }

    /// w·φ(x, y) through the feature generators (the definition, not the decoders' tables).
    fn tree_score(&self, w: &[f64], f: &Featurizer<'_>, y: &DepLabel) -> f64 {
        let mut s = 0.0;
        for (j, &h) in y.heads.iter().enumerate() {
            let d = j + 1;
            f.unlabeled(h as usize, d, |i| s += w[i]);
            if self.labeled() {
                f.labeled(h as usize, d, y.rels[j] as usize, |i| s += w[i]);
            }
        }
        s
    }

    /// The arc candidate table of a query: value of candidate (h, d, r) =
    /// (primary, secondary) evaluated on (arc score, token loss, token size 1, token Hamming).
    fn arc_table(
        &self,
        w: &[f64],
        sent: Sentence<'_>,
        gold: Option<&DepLabel>,
        primary: &Objective,
        secondary: Option<&Objective>,
        kmax: usize,
    ) -> Result<ArcTable> {
        let n = sent.len();
        let nr = self.n_relations;
        let mut scorer = ArcScorer::new(Featurizer::new(sent, self.n_features), w, nr);
        let mut table = ArcTable::new(n, kmax.min(nr.max(1)));
        let mut top = Vec::with_capacity(kmax.min(nr) + 1);
        // A candidate's value is (a_p·score + b_p, a_s·score + b_s) where b depends only on the
        // token's (loss, hamming): (1, 2) wrong head, (label_weight, 2) wrong relation, (0, 0).
        let sec = secondary.copied().unwrap_or_default();
        let offset = |loss: f64, ham: f64| {
            let b = |o: &Objective| o.terms.loss * loss + o.terms.size + o.terms.hamming * ham;
            (b(primary), b(&sec))
        };
        let (b_head, b_rel, b_ok) = (offset(1.0, 2.0), offset(self.label_weight, 2.0), offset(0.0, 0.0));
        let (a_p, a_s) = (primary.margin, sec.margin);
        let val = |score: f64, b: (f64, f64)| Val::new(a_p * score + b.0, a_s * score + b.1);
        let sign = |a: f64| {
            if a > 0.0 {
                1.0
            } else if a < 0.0 {
                -1.0
            } else {
                0.0
            }
        };
        let sign = if a_p != 0.0 { sign(a_p) } else { sign(a_s) };
        // every score is summed here: one finiteness check per sentence instead of per arc
        let mut total = 0.0;
        for d in 1..=n {
            let (gh, gr) = gold.map_or((u32::MAX, u32::MAX), |g| {
                (g.heads[d - 1], if nr > 0 { g.rels[d - 1] } else { u32::MAX })
            });
            for h in 0..=n {
                if h == d {
                    continue;
                }
                let su = scorer.unlabeled(h, d);
                total += su;
                // offsets of relations other than the gold one, and of the gold relation
                let (b_other, b_gold) = match gold {
                    None => (b_ok, b_ok),
                    Some(_) if h as u32 != gh => (b_head, b_head),
                    Some(_) => (b_rel, b_ok),
                };
                if nr == 0 {
                    table.offer(h, d, val(su, b_gold), 0);
                    continue;
                }
                if table.kmax() == 1 {
                    // The common case: only the best relation matters. Relations other than the
                    // gold one share the offset b_other, so their best maximises
                    // (a_p·s_l, a_s·s_l) lexicographically, i.e. sign·s_l for the sign of the
                    // first non-zero of (a_p, a_s); the gold relation is then compared apart.
                    let skip = if b_gold == b_other { usize::MAX } else { gr as usize };
                    let (other, sl_gold) = scorer.labeled_best(h, d, sign, skip);
                    let mut best = other.map(|(r, sl)| (val(su + sl, b_other), r as u32));
                    if skip != usize::MAX {
                        let g = val(su + sl_gold, b_gold);
                        if best.is_none_or(|(b, _)| g.gt(&b)) {
                            best = Some((g, gr));
                        }
                    }
                    if let Some((v, r)) = best {
                        // an overflowed score that could be chosen shows up here
                        total += v.p + v.s;
                        table.offer(h, d, v, r);
                    }
                } else {
                    // k-best: the best kmax relations other than the gold one (same order
                    // argument as above), plus the gold relation
                    let skip = if b_gold == b_other { usize::MAX } else { gr as usize };
                    let sl_gold = scorer.labeled_topk(h, d, sign, skip, table.kmax(), &mut top);
                    for &(r, sl) in &top {
                        let v = val(su + sl, b_other);
                        total += v.p + v.s;
                        table.offer(h, d, v, r as u32);
                    }
                    if skip != usize::MAX {
                        let v = val(su + sl_gold, b_gold);
                        total += v.p + v.s;
                        table.offer(h, d, v, gr);
                    }
                }
            }
        }
        if !scorer.tables_finite() {
            total = f64::NAN;
        }
        if !(total.is_finite() && (a_p * total).is_finite() && (a_s * total).is_finite()) {
            return Err(Error::input(
                "arc scores are not finite (overflow): are the weights too large?".to_string(),
            ));
        }
        Ok(table)
    }

    /// The `k` best trees under `table`, skipping banned ones.
    fn decode(&self, table: &ArcTable, k: usize, ban: &[DepLabel]) -> Result<Vec<Tree>> {
        kbest_trees(table, self.projective, self.labeled(), k, ban)
    }

    fn to_label(&self, t: Tree) -> DepLabel {
        DepLabel::of_tree(t, self.labeled())
    }
}

/// The `k` best trees under `table` (Eisner when `projective`, else Chu–Liu–Edmonds k-best),
/// skipping the banned ones (relations compared only when `labeled`); shared by the featurized
/// structure and the score-level one.
pub(crate) fn kbest_trees(
    table: &ArcTable,
    projective: bool,
    labeled: bool,
    k: usize,
    ban: &[DepLabel],
) -> Result<Vec<Tree>> {
    let banned =
        |heads: &[u32], rels: &[u32]| ban.iter().any(|b| b.heads == heads && (!labeled || b.rels == rels));
    let total = k.saturating_add(ban.len());
    if projective {
        // the lazy k-best holds the 1-best chart and, at worst, a candidate heap per item each
        // derivation touches (two per item of the chart per answer)
        let entries = if total == 1 {
            eisner::chart_entries(table.n(), 1)
        } else {
            eisner::chart_entries(table.n(), 1).saturating_add(eisner::chart_entries(table.n(), total) / 2)
        };
        if entries > MAX_CHART_ENTRIES {
            return Err(Error::input(format!(
                "k + |ban| = {total} is too large for a {}-token sentence (Eisner's k-best chart \
                 would exceed {MAX_CHART_ENTRIES} entries)",
                table.n()
            )));
        }
        // one list: the flat Viterbi; more (a ban list, k-best): lazy k-best on its chart
        let mut trees = if total == 1 {
            eisner::eisner_kbest(table, 1)
        } else {
            eisner_lazy::eisner_kbest_lazy(table, total)
        };
        trees.retain(|t| !banned(&t.heads, &t.rels));
        trees.truncate(k);
        Ok(trees)
    } else {
        Ok(cle::cle_kbest(table, k, total, |h, r| !banned(h, r)))
    }
}

impl DepLabel {
    /// Checks the shape against a sentence of `n` tokens (not the tree property): a head in 0..=n
    /// per token and, when `labeled`, a relation id below `n_relations` per token (none
    /// otherwise). The message names the field.
    pub(crate) fn check_shape(
        &self,
        n: usize,
        labeled: bool,
        n_relations: usize,
    ) -> std::result::Result<(), String> {
        if self.heads.len() != n {
            return Err(format!("heads has {} entries but the sentence has {n} tokens", self.heads.len()));
        }
        if let Some((j, &h)) = self.heads.iter().enumerate().find(|(_, &h)| h as usize > n) {
            return Err(format!("heads[{j}] = {h} is outside 0..={n}"));
        }
        if !labeled {
            return match self.rels.is_empty() {
                true => Ok(()),
                false => Err("unlabeled trees take heads only (rels must be empty)".to_string()),
            };
        }
        if self.rels.len() != n {
            return Err(format!("rels has {} entries but the sentence has {n} tokens", self.rels.len()));
        }
        match self.rels.iter().enumerate().find(|(_, &r)| r as usize >= n_relations) {
            Some((j, &r)) => Err(format!("rels[{j}] = {r} is not a relation id (0..{n_relations})")),
            None => Ok(()),
        }
    }

    /// The label of a decoded tree (relations kept only when `labeled`).
    pub(crate) fn of_tree(t: Tree, labeled: bool) -> Self {
        DepLabel { heads: t.heads, rels: if labeled { t.rels } else { Vec::new() } }
    }
}

impl Structure for Dependency {
    type Label = DepLabel;
    type Data = Sentences;

    fn name(&self) -> &str {
        "dependency"
    }

    fn n_instances(&self, data: &Sentences) -> usize {
        data.len()
    }

    fn size_joint_feature(&self) -> usize {
        self.n_features
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { ban: true, kbest: true, ..Capabilities::default() }
    }

    fn check_label(&self, data: &Sentences, i: usize, y: &DepLabel) -> Result<()> {
        let n = data.get(i)?.len();
        self.check_shape(y, n)?;
        tree::check_tree(&y.heads)
    }

    fn joint_feature(&self, data: &Sentences, i: usize, y: &DepLabel) -> Result<SparseVec> {
        self.check_label(data, i, y)?;
        let f = Featurizer::new(data.get(i)?, self.n_features);
        let mut v = SparseVec::new();
        for (j, &h) in y.heads.iter().enumerate() {
            f.unlabeled(h as usize, j + 1, |idx| v.push(idx, 1.0));
            if self.labeled() {
                f.labeled(h as usize, j + 1, y.rels[j] as usize, |idx| v.push(idx, 1.0));
            }
        }
        Ok(v)
    }

    fn terms(&self, y: &DepLabel, y_true: &DepLabel) -> Result<Terms> {
        let n = y_true.heads.len();
        if n == 0 {
            return Err(Error::input("empty sentence: a dependency tree needs at least one token"));
        }
        self.check_shape(y_true, n)?;
        self.check_shape(y, n)?;
        let (mut loss, mut ham) = (0.0, 0.0);
        for j in 0..n {
            let (r, gr) = if self.labeled() { (y.rels[j], y_true.rels[j]) } else { (0, 0) };
            let (l, h) = self.token_terms(y.heads[j], r, y_true.heads[j], gr);
            loss += l;
            ham += h;
        }
        Ok(Terms { loss, size: n as f64, hamming: ham })
    }

    fn predict(&self, w: &[f64], data: &Sentences, i: usize) -> Result<DepLabel> {
        self.check_w(w)?;
        let sent = data.get(i)?;
        let primary = Objective { margin: 1.0, terms: Terms::default() };
        let table = self.arc_table(w, sent, None, &primary, None, 1)?;
        let tree = self.decode(&table, 1, &[])?.into_iter().next();
        let tree = tree.ok_or_else(|| Error::solver("no dependency tree found (internal error)"))?;
        Ok(self.to_label(tree))
    }

    fn oracle(
        &self,
        w: &[f64],
        data: &Sentences,
        i: usize,
        y_true: &DepLabel,
        q: &TermQuery<'_, DepLabel>,
    ) -> Result<Vec<Scored<DepLabel>>> {
        self.check_w(w)?;
        self.check_label(data, i, y_true)?;
        if q.cone.is_some() {
            return Err(Error::unsupported("structure 'dependency' has no constrained λ-oracle (cone)"));
        }
        let sent = data.get(i)?;
        let k = q.k.max(1);
        let kmax = k.saturating_add(q.ban.len());
        let table = self.arc_table(w, sent, Some(y_true), &q.primary, q.secondary.as_ref(), kmax)?;
        let trees = self.decode(&table, k, q.ban)?;
        let f = Featurizer::new(sent, self.n_features);
        let gold = self.tree_score(w, &f, y_true);
        trees
            .into_iter()
            .map(|t| {
                let label = self.to_label(t);
                let margin = self.tree_score(w, &f, &label) - gold;
                let terms = self.terms(&label, y_true)?;
                Ok(Scored { label, margin, terms })
            })
            .collect()
    }
}
