//! Score-level multi-label pairwise MRF: unary scores [B, L] (the score of y_k = 1) and pairwise
//! scores [E, 2, 2] shared by the batch or [B, E, 2, 2] (the score of (y_i, y_j) on edge
//! e = (i, j), i < j), with the oracles of [`crate::multilabel`]: enumeration of the 2^L labels
//! (exact: ban list, k-best, cone) or the local-polytope relaxation (QPBO or LP: fractional
//! answers, cone).
//!
//! Layout of `w`: unary `b·L + k`, then pairwise `4e + 2·y_i + y_j` (shared) or
//! `(b·E + e)·4 + 2·y_i + y_j`. `score(y) = Σ_k unary[k]·y_k + Σ_e pair[e, y_i, y_j]`; on relaxed
//! labels the same form in the node and edge marginals. Loss: Hamming Σ_k [y_k ≠ t_k].

use bicrit_core::{Capabilities, Error, Objective, Result, SparseVec, Terms};

use super::{check_finite_named, ScoreStructure};
use crate::multilabel::energy::Scores;
use crate::multilabel::enumerate::{argmax, enumerate, frontier, EnumQuery};
use crate::multilabel::{
    from_mask, label_of, relaxed, relaxed_terms, scored_of, to_mask, validate_edges, Inference, MlLabel,
    MARGINAL_TOLERANCE, MAX_EXACT_LABELS,
};
use crate::{Scored, Structure, TermQuery};

/// A batch of multi-label scores (see the module documentation).
#[derive(Clone, Debug)]
pub struct ScoreMultilabel {
    batch: usize,
    n_labels: usize,
    edges: Vec<(usize, usize)>,
    pair_per_example: bool,
    inference: Inference,
}

impl ScoreMultilabel {
    /// `batch` rows over `n_labels` labels and `edges` (validated, oriented i < j).
    pub fn new(
        batch: usize,
        n_labels: usize,
        edges: &[(i64, i64)],
        pair_per_example: bool,
        inference: Inference,
    ) -> Result<Self> {
        if n_labels == 0 {
            return Err(Error::input("multi-label scores need at least one label"));
        }
        if inference == Inference::Tree {
            return Err(Error::param(
                "score-level multi-label losses take inference='exact' or 'relaxed' (or 'auto'), not 'tree'",
            ));
        }
        if inference == Inference::Exact && n_labels > MAX_EXACT_LABELS {
            return Err(Error::param(format!(
                "exact inference enumerates all 2^L labels and accepts at most L = {MAX_EXACT_LABELS}, got \
                 L = {n_labels}; use inference='relaxed'"
            )));
        }
        let edges = validate_edges(n_labels, edges)?;
        Ok(ScoreMultilabel { batch, n_labels, edges, pair_per_example, inference })
    }

    /// Number of labels L.
    pub fn n_labels(&self) -> usize {
        self.n_labels
    }

    /// The edges (i < j).
    pub fn edges(&self) -> &[(usize, usize)] {
        &self.edges
    }

    /// Node and edge marginals of a label (0/1 for an integral one).
    pub fn marginals(&self, y: &MlLabel) -> (Vec<f64>, Vec<[f64; 4]>) {
        match y {
            MlLabel::Integral(b) => (y.node_marginals(), integral_edges(&self.edges, b)),
            MlLabel::Relaxed { nodes, edges } => (nodes.clone(), edges.clone()),
        }
    }

    fn off_pair(&self) -> usize {
        self.batch * self.n_labels
    }

    fn pair_base(&self, i: usize) -> usize {
        self.off_pair() + if self.pair_per_example { i * 4 * self.edges.len() } else { 0 }
    }

    /// Length of `w`.
    pub fn size(&self) -> usize {
        self.off_pair() + 4 * self.edges.len() * if self.pair_per_example { self.batch } else { 1 }
    }

    fn scores<'a>(&'a self, w: &'a [f64], i: usize) -> Result<Scores<'a>> {
        if w.len() != self.size() {
            return Err(Error::input(format!(
                "{} scores for a multi-label layout of {}",
                w.len(),
                self.size()
            )));
        }
        let theta = &w[i * self.n_labels..(i + 1) * self.n_labels];
        let p0 = self.pair_base(i);
        let pair = &w[p0..p0 + 4 * self.edges.len()];
        check_finite_named(format_args!("unary scores of example {i}"), theta)?;
        check_finite_named(format_args!("pairwise scores of example {i}"), pair)?;
        Ok(Scores { theta: theta.into(), pair, edges: &self.edges })
    }

    fn validate(&self, y: &MlLabel) -> Result<()> {
        let k = self.n_labels;
        match y {
            MlLabel::Integral(v) => {
                if v.len() != k {
                    return Err(Error::input(format!(
                        "label has length {} but there are {k} labels",
                        v.len()
                    )));
                }
                if let Some(p) = v.iter().position(|&b| b > 1) {
                    return Err(Error::input(format!("label value {} at position {p} is not 0 or 1", v[p])));
                }
            }
            MlLabel::Relaxed { nodes, edges } => {
                if nodes.len() != k || edges.len() != self.edges.len() {
                    return Err(Error::input("relaxed label of the wrong shape"));
                }
                for (m, &(a, b)) in edges.iter().zip(&self.edges) {
                    let ok = (m[2] + m[3] - nodes[a]).abs() <= MARGINAL_TOLERANCE
                        && (m[1] + m[3] - nodes[b]).abs() <= MARGINAL_TOLERANCE;
                    if !ok {
                        return Err(Error::input("relaxed label with inconsistent edge marginals"));
                    }
                }
            }
        }
        Ok(())
    }

    fn gold_bits<'a>(&self, y: &'a MlLabel) -> Result<&'a [u8]> {
        self.validate(y)?;
        match y {
            MlLabel::Integral(v) => Ok(v),
            MlLabel::Relaxed { .. } => {
                Err(Error::input("the gold label must be integral (0/1), not relaxed"))
            }
        }
    }
}

/// The edge marginals of an integral label.
fn integral_edges(edges: &[(usize, usize)], y: &[u8]) -> Vec<[f64; 4]> {
    edges
        .iter()
        .map(|&(a, b)| {
            let mut m = [0.0; 4];
            m[2 * y[a] as usize + y[b] as usize] = 1.0;
            m
        })
        .collect()
}

impl Structure for ScoreMultilabel {
    type Label = MlLabel;
    type Data = ();

    fn name(&self) -> &str {
        "multilabel"
    }

    fn n_instances(&self, _data: &()) -> usize {
        self.batch
    }

    fn size_joint_feature(&self) -> usize {
        self.size()
    }

    fn capabilities(&self) -> Capabilities {
        match self.inference {
            Inference::Exact => {
                Capabilities { ban: true, kbest: true, cone: true, frontier: true, ..Capabilities::default() }
            }
            Inference::Relaxed(_) => Capabilities { cone: true, relaxed: true, ..Capabilities::default() },
            Inference::Tree => Capabilities::default(),
        }
    }

    fn check_label(&self, _data: &(), i: usize, y: &MlLabel) -> Result<()> {
        if i >= self.batch {
            return Err(Error::input(format!("example {i} out of range (0..{})", self.batch)));
        }
        self.validate(y)
    }

    /// Node marginals on the unary scores, edge marginals on the pairwise scores.
    fn joint_feature(&self, _data: &(), i: usize, y: &MlLabel) -> Result<SparseVec> {
        self.check_label(&(), i, y)?;
        let (nodes, edges) = self.marginals(y);
        let mut v = SparseVec::new();
        for (k, &m) in nodes.iter().enumerate() {
            if m != 0.0 {
                v.push(i * self.n_labels + k, m);
            }
        }
        let p0 = self.pair_base(i);
        for (e, m) in edges.iter().enumerate() {
            for (s, &x) in m.iter().enumerate() {
                if x != 0.0 {
                    v.push(p0 + 4 * e + s, x);
                }
            }
        }
        Ok(v)
    }

    fn terms(&self, y: &MlLabel, y_true: &MlLabel) -> Result<Terms> {
        let gold = self.gold_bits(y_true)?;
        self.validate(y)?;
        Ok(relaxed_terms(&y.node_marginals(), gold))
    }

    fn score(&self, w: &[f64], _data: &(), i: usize, y: &MlLabel) -> Result<f64> {
        self.check_label(&(), i, y)?;
        let s = self.scores(w, i)?;
        Ok(match y {
            MlLabel::Integral(b) => s.score_bits(|k| b[k] as usize),
            MlLabel::Relaxed { nodes, edges } => s.score_marginals(nodes, edges),
        })
    }

    fn predict(&self, w: &[f64], _data: &(), i: usize) -> Result<MlLabel> {
        let s = self.scores(w, i)?;
        Ok(MlLabel::Integral(match self.inference {
            Inference::Exact => from_mask(argmax(&s), self.n_labels),
            Inference::Relaxed(_) => relaxed::predict(&s),
            Inference::Tree => {
                return Err(Error::input("internal: tree inference on score-level multi-label"))
            }
        }))
    }

    fn oracle(
        &self,
        w: &[f64],
        _data: &(),
        i: usize,
        y_true: &MlLabel,
        q: &TermQuery<'_, MlLabel>,
    ) -> Result<Vec<Scored<MlLabel>>> {
        let gold = self.gold_bits(y_true)?;
        if q.k == 0 {
            return Err(Error::input("k must be at least 1"));
        }
        let s = self.scores(w, i)?;
        let gold_score = s.score_bits(|k| gold[k] as usize);
        match self.inference {
            Inference::Exact => {
                let mut ban = Vec::with_capacity(q.ban.len());
                for b in q.ban {
                    self.validate(b)?;
                    match b {
                        MlLabel::Integral(v) => ban.push(to_mask(v)),
                        MlLabel::Relaxed { .. } => {
                            return Err(Error::input("ban lists hold integral labels, not relaxed ones"))
                        }
                    }
                }
                ban.sort_unstable();
                let eq =
                    EnumQuery { primary: q.primary, secondary: q.secondary, ban: &ban, k: q.k, cone: q.cone };
                Ok(enumerate(&s, to_mask(gold), &eq)
                    .into_iter()
                    .map(|f| scored_of(f, self.n_labels))
                    .collect())
            }
            Inference::Tree => Err(Error::input("internal: tree inference on score-level multi-label")),
            Inference::Relaxed(solver) => {
                if !q.ban.is_empty() || q.k > 1 {
                    return Err(Error::unsupported(
                        "multilabel with relaxed inference has no ban-list or k-best oracle; use \
                         inference='exact' for L ≤ 16",
                    ));
                }
                Ok(match relaxed::oracle(solver, &s, gold, q)? {
                    None => Vec::new(),
                    Some((nodes, edges)) => {
                        let label = label_of(nodes, edges);
                        let (margin, terms) = match &label {
                            MlLabel::Integral(y) => {
                                let loss = y.iter().zip(gold).filter(|(a, b)| a != b).count() as f64;
                                let size = y.iter().filter(|&&v| v == 1).count() as f64;
                                (
                                    s.score_bits(|k| y[k] as usize) - gold_score,
                                    Terms { loss, size, hamming: loss },
                                )
                            }
                            MlLabel::Relaxed { nodes, edges } => {
                                (s.score_marginals(nodes, edges) - gold_score, relaxed_terms(nodes, gold))
                            }
                        };
                        vec![Scored { label, margin, terms }]
                    }
                })
            }
        }
    }

    /// The best label for every Hamming distance to the gold label: one enumeration pass
    /// (exact inference, L ≤ 16).
    fn frontier(
        &self,
        w: &[f64],
        _data: &(),
        i: usize,
        y_true: &MlLabel,
        objective: &Objective,
    ) -> Result<Vec<Scored<MlLabel>>> {
        let gold = self.gold_bits(y_true)?;
        if self.inference != Inference::Exact {
            return Err(Error::unsupported(
                "multilabel has a frontier query with exact inference only (enumeration, L ≤ 16)",
            ));
        }
        let s = self.scores(w, i)?;
        Ok(frontier(&s, to_mask(gold), objective).into_iter().map(|f| scored_of(f, self.n_labels)).collect())
    }
}

impl ScoreStructure for ScoreMultilabel {
    fn batch(&self) -> usize {
        self.batch
    }
}
