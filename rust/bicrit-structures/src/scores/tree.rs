//! Score-level dependency trees: the `dependency` structure's decoders (Eisner with k-best lists,
//! Chu–Liu–Edmonds with Lawler's k-best; [`crate::dependency`]) on given arc scores.
//!
//! # Layout of `w` (batch B, padded length N tokens, R relations)
//! | block | shape | flat index |
//! |---|---|---|
//! | arcs | [B, N + 1, N + 1] | `(b·(N + 1) + h)·(N + 1) + d`: the arc h → d (0 is the root) |
//! | labels | [B, N + 1, N + 1, R] (optional) | `((b·(N + 1) + h)·(N + 1) + d)·R + r` |
//!
//! Sentence b has `lengths[b]` ≥ 1 tokens 1..=n; arcs into the root, self-loops and entries past
//! n are ignored. A label is `heads[j]`, the head of token j + 1, and `rels[j]` its relation
//! (empty when unlabeled). `score(y) = Σ_d arcs[h_d, d] + labels[h_d, d, r_d]`.
//!
//! Task loss per token: 1 for a wrong head, `label_weight` for the right head with a wrong
//! relation (labeled), 0 otherwise — the Hamming loss per arc, unlabeled or labeled. Terms as in
//! [`crate::dependency`]: `size` = n, `hamming` = 2 × (tokens whose (head, relation) differs).
//! Trees have exactly one child of the root unless `multi_root`.

use bicrit_core::{Capabilities, Error, Objective, Result, SparseVec, Terms};

use super::{check_finite_named, ScoreStructure};
use crate::dependency::arcs::{ArcTable, Tree};
use crate::dependency::val::Val;
use crate::dependency::{kbest_trees, tree, DepLabel};
use crate::{Scored, Structure, TermQuery};

/// A batch of arc scores (see the module documentation).
#[derive(Clone, Debug)]
pub struct ScoreTree {
    n_max: usize,
    lengths: Vec<usize>,
    n_relations: usize,
    projective: bool,
    multi_root: bool,
    label_weight: f64,
}

impl ScoreTree {
    /// A batch of sentences of `lengths` tokens padded to `n_max`, with `n_relations` relations
    /// (0: unlabeled), decoded projectively (Eisner) or not (Chu–Liu–Edmonds).
    pub fn new(
        n_max: usize,
        lengths: Vec<usize>,
        n_relations: usize,
        projective: bool,
        multi_root: bool,
        label_weight: f64,
    ) -> Result<Self> {
        if let Some((b, &l)) = lengths.iter().enumerate().find(|(_, &l)| l == 0 || l > n_max) {
            return Err(Error::input(format!(
                "lengths[{b}] = {l} must be between 1 and the padded number of tokens N = {n_max}"
            )));
        }
        if n_relations > u32::MAX as usize {
            return Err(Error::param(format!("too many relations ({n_relations})")));
        }
        if !(label_weight.is_finite() && label_weight >= 0.0) {
            return Err(Error::param(format!("label_weight must be finite and ≥ 0, got {label_weight}")));
        }
        Ok(ScoreTree { n_max, lengths, n_relations, projective, multi_root, label_weight })
    }

    /// The padded number of tokens N.
    pub fn n_max(&self) -> usize {
        self.n_max
    }

    /// Number of tokens of sentence `b`.
    pub fn len_of(&self, b: usize) -> usize {
        self.lengths[b]
    }

    /// Number of relations (0: unlabeled).
    pub fn n_relations(&self) -> usize {
        self.n_relations
    }

    fn np(&self) -> usize {
        self.n_max + 1
    }

    fn labeled(&self) -> bool {
        self.n_relations > 0
    }

    fn off_labels(&self) -> usize {
        self.lengths.len() * self.np() * self.np()
    }

    /// Length of `w`.
    pub fn size(&self) -> usize {
        self.off_labels() * (1 + self.n_relations)
    }

    #[inline]
    fn arc_at(&self, b: usize, h: usize, d: usize) -> usize {
        (b * self.np() + h) * self.np() + d
    }

    #[inline]
    fn lab_at(&self, b: usize, h: usize, d: usize, r: usize) -> usize {
        self.off_labels() + self.arc_at(b, h, d) * self.n_relations + r
    }

    fn check_w(&self, w: &[f64]) -> Result<()> {
        if w.len() != self.size() {
            return Err(Error::input(format!("{} scores for a tree layout of {}", w.len(), self.size())));
        }
        Ok(())
    }

    fn check_shape(&self, b: usize, y: &DepLabel, what: std::fmt::Arguments<'_>) -> Result<()> {
        y.check_shape(self.lengths[b], self.labeled(), self.n_relations)
            .map_err(|m| Error::input(format!("{what} of sentence {b}: {m}")))
    }

    /// Fails when a score sentence `b` uses is NaN or infinite.
    fn check_scores(&self, w: &[f64], b: usize) -> Result<()> {
        let n = self.lengths[b];
        for h in 0..=n {
            let a = self.arc_at(b, h, 1);
            check_finite_named(format_args!("arc scores of sentence {b}, head {h}"), &w[a..a + n])?;
            if self.labeled() {
                let l = self.lab_at(b, h, 1, 0);
                check_finite_named(
                    format_args!("label scores of sentence {b}, head {h}"),
                    &w[l..l + n * self.n_relations],
                )?;
            }
        }
        Ok(())
    }

    /// Per-token (loss, indicator-set Hamming) of attaching a token to head h with relation r.
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

    /// The arc candidate table of a query on sentence `b` (the best `kmax` relations per arc).
    fn arc_table(
        &self,
        w: &[f64],
        b: usize,
        gold: Option<&DepLabel>,
        primary: &Objective,
        secondary: Option<&Objective>,
        kmax: usize,
    ) -> Result<ArcTable> {
        let n = self.lengths[b];
        let nr = self.n_relations;
        let mut table = ArcTable::new(n, kmax.min(nr.max(1)));
        table.set_multi_root(self.multi_root);
        let sec = secondary.copied().unwrap_or_default();
        let offset = |loss: f64, ham: f64| {
            let c = |o: &Objective| o.terms.loss * loss + o.terms.size + o.terms.hamming * ham;
            (c(primary), c(&sec))
        };
        let (a_p, a_s) = (primary.margin, sec.margin);
        let mut total = 0.0;
        for d in 1..=n {
            let (gh, gr) = gold.map_or((u32::MAX, u32::MAX), |g| {
                (g.heads[d - 1], if nr > 0 { g.rels[d - 1] } else { u32::MAX })
            });
            for h in 0..=n {
                if h == d {
                    continue;
                }
                let su = w[self.arc_at(b, h, d)];
                if nr == 0 {
                    let (loss, ham) =
                        if gold.is_some() { self.token_terms(h as u32, 0, gh, 0) } else { (0.0, 0.0) };
                    let o = offset(loss, ham);
                    let v = Val::new(a_p * su + o.0, a_s * su + o.1);
                    total += v.p + v.s;
                    table.offer(h, d, v, 0);
                    continue;
                }
                let l0 = self.lab_at(b, h, d, 0);
                for (r, &sl) in w[l0..l0 + nr].iter().enumerate() {
                    let (loss, ham) = if gold.is_some() {
                        self.token_terms(h as u32, r as u32, gh, gr)
                    } else {
                        (0.0, 0.0)
                    };
                    let o = offset(loss, ham);
                    let v = Val::new(a_p * (su + sl) + o.0, a_s * (su + sl) + o.1);
                    total += v.p + v.s;
                    table.offer(h, d, v, r as u32);
                }
            }
        }
        if !total.is_finite() {
            return Err(Error::input(format!(
                "arc scores of sentence {b} overflow (not finite once summed)"
            )));
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

impl Structure for ScoreTree {
    type Label = DepLabel;
    type Data = ();

    fn name(&self) -> &str {
        "tree"
    }

    /// At most max(1, `label_weight`) per token (a wrong head, or a right head with a wrong
    /// relation).
    fn max_loss(&self, _data: &(), _i: usize, y_true: &DepLabel) -> Option<f64> {
        let per_token = if self.labeled() { self.label_weight.max(1.0) } else { 1.0 };
        Some(y_true.heads.len() as f64 * per_token)
    }

    fn n_instances(&self, _data: &()) -> usize {
        self.lengths.len()
    }

    fn size_joint_feature(&self) -> usize {
        self.size()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { ban: true, kbest: true, ..Capabilities::default() }
    }

    fn check_label(&self, _data: &(), i: usize, y: &DepLabel) -> Result<()> {
        if i >= self.lengths.len() {
            return Err(Error::input(format!("sentence {i} out of range (0..{})", self.lengths.len())));
        }
        self.check_shape(i, y, format_args!("label"))?;
        tree::check_tree_roots(&y.heads, !self.multi_root)
    }

    /// The indicator of the arc (and label) scores of `y`.
    fn joint_feature(&self, _data: &(), i: usize, y: &DepLabel) -> Result<SparseVec> {
        self.check_label(&(), i, y)?;
        let mut v = SparseVec::new();
        for (j, &h) in y.heads.iter().enumerate() {
            v.push(self.arc_at(i, h as usize, j + 1), 1.0);
            if self.labeled() {
                v.push(self.lab_at(i, h as usize, j + 1, y.rels[j] as usize), 1.0);
            }
        }
        Ok(v)
    }

    fn terms(&self, y: &DepLabel, y_true: &DepLabel) -> Result<Terms> {
        let n = y_true.heads.len();
        if y.heads.len() != n || (self.labeled() && (y.rels.len() != n || y_true.rels.len() != n)) {
            return Err(Error::input("labels of different lengths are not trees of one sentence"));
        }
        let (mut loss, mut ham) = (0.0, 0.0);
        for j in 0..n {
            let (r, gr) = if self.labeled() { (y.rels[j], y_true.rels[j]) } else { (0, 0) };
            let (l, h) = self.token_terms(y.heads[j], r, y_true.heads[j], gr);
            loss += l;
            ham += h;
        }
        Ok(Terms { loss, size: n as f64, hamming: ham })
    }

    fn score(&self, w: &[f64], _data: &(), i: usize, y: &DepLabel) -> Result<f64> {
        self.check_w(w)?;
        self.check_shape(i, y, format_args!("label"))?;
        let mut s = 0.0;
        for (j, &h) in y.heads.iter().enumerate() {
            s += w[self.arc_at(i, h as usize, j + 1)];
            if self.labeled() {
                s += w[self.lab_at(i, h as usize, j + 1, y.rels[j] as usize)];
            }
        }
        Ok(s)
    }

    fn predict(&self, w: &[f64], _data: &(), i: usize) -> Result<DepLabel> {
        self.check_w(w)?;
        self.check_scores(w, i)?;
        let primary = Objective { margin: 1.0, terms: Terms::default() };
        let table = self.arc_table(w, i, None, &primary, None, 1)?;
        let tree = self.decode(&table, 1, &[])?.into_iter().next();
        Ok(self.to_label(tree.ok_or_else(|| Error::solver("no dependency tree found (internal error)"))?))
    }

    fn oracle(
        &self,
        w: &[f64],
        _data: &(),
        i: usize,
        y_true: &DepLabel,
        q: &TermQuery<'_, DepLabel>,
    ) -> Result<Vec<Scored<DepLabel>>> {
        self.check_w(w)?;
        self.check_label(&(), i, y_true)?;
        if q.cone.is_some() {
            return Err(Error::unsupported("structure 'tree' has no constrained λ-oracle (cone)"));
        }
        for (j, b) in q.ban.iter().enumerate() {
            self.check_shape(i, b, format_args!("ban[{j}]"))?;
        }
        self.check_scores(w, i)?;
        let k = q.k.max(1);
        let kmax = k.saturating_add(q.ban.len());
        let table = self.arc_table(w, i, Some(y_true), &q.primary, q.secondary.as_ref(), kmax)?;
        let trees = self.decode(&table, k, q.ban)?;
        let gold = self.score(w, &(), i, y_true)?;
        trees
            .into_iter()
            .map(|t| {
                let label = self.to_label(t);
                let margin = self.score(w, &(), i, &label)? - gold;
                let terms = self.terms(&label, y_true)?;
                Ok(Scored { label, margin, terms })
            })
            .collect()
    }
}

impl ScoreStructure for ScoreTree {
    fn batch(&self) -> usize {
        self.lengths.len()
    }

    /// Eisner's k-best is lazy (one chart, then work along the derivations); Lawler's k-best
    /// for Chu–Liu–Edmonds reruns the algorithm per answer.
    fn cheap_extra_answers(&self) -> bool {
        self.projective
    }
}
