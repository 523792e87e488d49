//! Hierarchical classification over a tree or DAG of M nodes (thesis hierarchical chapter,
//! §"Label Structure", §"Hierarchical Structured SVM", §"Calculating the most violating label";
//! docs/architecture.md, Structures and Hierarchies).
//!
//! * **Weights.** One row per node; φ(x, y) has block n equal to s_n·x for n ∈ y (s_n the node
//!   scale, 1 by default; NHSVM uses s_n = √α_n, thesis eq. `nclassa`). The score of a label is
//!   Σ_{n ∈ y} s_n·W_n·x. Layout `NodeMajor` puts block n at n·d (the thesis's vec(W));
//!   `FeatureMajor` puts feature j of node n at j·M + n, so that the scores of all nodes are one
//!   pass over the sparse row with contiguous length-M updates (for LSHTC-sized hierarchies).
//! * **Labels** are sorted node-id vectors, ancestor-closed, always containing the root. Spaces:
//!   `Any` (every ancestor-closed set: real data often ends a label at an internal node) or
//!   `Leaves` (leaf-terminated: Ā(L) for a non-empty leaf set L, the thesis's Y_m); `multilabel =
//!   false` restricts either to single paths Ā(t) (the thesis's Y_s when t is a leaf).
//! * **Loss** (`Node`): weighted node Hamming Σ_{n ∈ y △ y_i} λ_n over the non-root nodes (a
//!   missed node of y_i costs μ_n instead when `node_miss_weight` is given);
//!   (`Leaf`): the leaf Hamming Δ_L of thesis §"Calculating the most violating label", weighted
//!   by λ_n, over the leaves; (`Normalized`, single paths only): the normalized loss
//!   √(Σ_{n ∈ y △ y_i} λ_n) of NHSVM (thesis eq. `wserror`, with λ_n = α_n and s_n = √α_n it is
//!   ‖Λ̃(y) − Λ̃(y_i)‖), which does not decompose over nodes and is answered by enumeration. **Terms**: `loss`; `size` = |y ∩ C|; `hamming` = |(y △ y_i) ∩ C|,
//!   where C, the counted nodes, is the non-root nodes for the node loss and the leaves for the
//!   leaf loss (so that Micro-F1 over the same indicator set is H/(|y| + |y_i|)).
//!
//! Oracles, all exact (see `capabilities` for the optional queries per space):
//!
//! | space | tree | DAG |
//! |---|---|---|
//! | single path (any / leaf terminal) | enumeration of the M (or |L|) paths: ban, k-best, cone | same, ancestors by BFS |
//! | multi, `Any` | O(M) DP; k-best DP O(M k log k) | max closure = one min-cut (Dinic); k-best by Lawler over min-cuts |
//! | multi, `Leaves` | O(M) DP; k-best DP | LP (clarabel), integer program (microlp) when fractional; k-best by Lawler over IPs |
//!
//! Lexicographic queries (λ ∈ {0, ∞}) run the DPs and the max-flow on (primary, secondary) pairs,
//! and the LP/IP in two phases (best primary, then best secondary among labels within 1e-9 of it).

pub mod closure;
pub mod graph;
mod labels;
pub mod lawler;
pub mod lp;
mod marginals;
mod multi;
mod ratio;
mod scores;
mod single;
pub mod tree;
pub mod value;

use std::cell::RefCell;

use bicrit_core::{Capabilities, CsrMatrix, Error, Objective, Result, SparseVec, Terms};

pub use self::graph::HierarchyGraph;
use self::labels::ancestor_table;
pub use self::lp::LpSolution;
pub use self::marginals::MaxMarginals;
use self::tree::TreeScratch;
use self::value::Lex;
use crate::{Scored, Structure, TermQuery};

/// A hierarchy label: sorted node ids, ancestor-closed, root included.
pub type HierLabel = Vec<u32>;

/// Which node sets are labels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelSpace {
    /// Every ancestor-closed set containing the root.
    Any,
    /// Leaf-terminated sets: every present internal node has a present child.
    Leaves,
}

/// Which nodes the loss counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum HierLoss {
    /// Weighted node Hamming over the non-root nodes.
    Node,
    /// Weighted leaf Hamming.
    Leaf,
    /// √(weighted node Hamming) over the non-root nodes (NHSVM's normalized loss, thesis eq.
    /// `wserror`); single-path spaces only.
    Normalized,
}

/// Layout of the weight vector / joint feature map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WeightLayout {
    /// Block n (node n's weight row) at n·d.
    NodeMajor,
    /// Feature j of node n at j·M + n.
    FeatureMajor,
}

/// The exact method answering a query (reported to users and benchmarks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OracleKind {
    /// Enumeration of the single-path labels.
    Enumeration,
    /// Tree dynamic program.
    TreeDp,
    /// Maximum-weight closure by min-cut.
    MinCut,
    /// LP relaxation, integer program when fractional.
    LpIp,
}

/// Options of a [`HierarchyStructure`].
#[derive(Clone, Debug)]
pub struct HierarchyOptions {
    /// Label space.
    pub space: LabelSpace,
    /// Several branches per label (false: single paths).
    pub multilabel: bool,
    /// Loss.
    pub loss: HierLoss,
    /// Number of input features d.
    pub n_features: usize,
    /// Per-node feature scale s_n (default 1).
    pub node_scale: Option<Vec<f64>>,
    /// Per-node loss weight λ_n ≥ 0 (default 1): the cost of a predicted node that is not in
    /// y_i.
    pub node_loss_weight: Option<Vec<f64>>,
    /// Per-node cost μ_n ≥ 0 of a node of y_i that the label misses (default λ_n): the loss is
    /// Σ_{n ∈ y∖y_i} λ_n + Σ_{n ∈ y_i∖y} μ_n, asymmetric when μ ≠ λ (class-balanced costs of
    /// rare nodes).
    pub node_miss_weight: Option<Vec<f64>>,
    /// Weight layout.
    pub layout: WeightLayout,
}

/// The `hierarchy` structure (see the module documentation).
#[derive(Clone, Debug)]
pub struct HierarchyStructure {
    graph: HierarchyGraph,
    space: LabelSpace,
    multilabel: bool,
    loss: HierLoss,
    n_features: usize,
    layout: WeightLayout,
    scale: Vec<f64>,
    loss_weight: Vec<f64>,
    miss_weight: Vec<f64>,
    counted: Vec<bool>,
    /// Ā(t) of every single-path candidate t of a DAG (sorted), when it fits [`ANCESTOR_TABLE_LIMIT`].
    ancestors: Option<(Vec<usize>, Vec<u32>)>,
    /// Ā(v) of every node (CSR, sorted), built on first use by the max-marginals of DAGs.
    ancestor_rows: std::sync::OnceLock<(Vec<u64>, Vec<u32>)>,
}

#[derive(Default)]
struct Scratch {
    sigma: Vec<f64>,
    mask: Vec<bool>,
    g1: Vec<f64>,
    g2: Vec<f64>,
    gl: Vec<Lex>,
    acc: Vec<[f64; 5]>,
    node_c: Vec<[f64; 5]>,
    kept: Vec<(f64, f64, u32)>,
    stamp: Vec<u32>,
    stamp_id: u32,
    stack: Vec<u32>,
    tree_f: TreeScratch<f64>,
    tree_l: TreeScratch<Lex>,
    flow_f: closure::FlowScratch<f64>,
    flow_l: closure::FlowScratch<Lex>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
}

fn with_scratch<R>(f: impl FnOnce(&mut Scratch) -> R) -> R {
    SCRATCH.with(|cell| f(&mut cell.borrow_mut()))
}

impl HierarchyStructure {
    /// A structure over `graph` with `opts`; vectors of per-node values must have M entries.
    pub fn new(graph: HierarchyGraph, opts: HierarchyOptions) -> Result<Self> {
        let m = graph.n_nodes();
        if opts.n_features == 0 {
            return Err(Error::param("n_features must be at least 1"));
        }
        if m.checked_mul(opts.n_features).is_none_or(|s| s > isize::MAX as usize / 8) {
            return Err(Error::param(format!(
                "{m} nodes × {} features do not fit a weight vector",
                opts.n_features
            )));
        }
        let per_node = |what: &str, v: Option<Vec<f64>>, nonneg: bool| -> Result<Vec<f64>> {
            let v = v.unwrap_or_else(|| vec![1.0; m]);
            if v.len() != m {
                return Err(Error::param(format!("{what} has {} entries for {m} nodes", v.len())));
            }
            for (n, &x) in v.iter().enumerate() {
                if !x.is_finite() || (nonneg && x < 0.0) {
                    return Err(Error::param(format!(
                        "{what} of {} is {x}; it must be finite{}",
                        graph.describe(n),
                        if nonneg { " and ≥ 0" } else { "" }
                    )));
                }
            }
            Ok(v)
        };
        if opts.loss == HierLoss::Normalized && opts.multilabel {
            return Err(Error::param(
                "loss='normalized' (√ of the weighted node Hamming) does not decompose over nodes, so it is \
                 answered by enumerating single paths: use multilabel=False, or the decomposable \
                 leaf-Hamming approximation loss='leaf' for multi-label spaces (thesis §\"Calculating the \
                 most violating label\")",
            ));
        }
        let scale = per_node("node_scale", opts.node_scale, false)?;
        let loss_weight = per_node("node_loss_weight", opts.node_loss_weight, true)?;
        let miss_weight = match opts.node_miss_weight {
            None => loss_weight.clone(),
            some => per_node("node_miss_weight", some, true)?,
        };
        let root = graph.root();
        let ancestors = (!opts.multilabel && !graph.is_tree())
            .then(|| ancestor_table(&graph, opts.space == LabelSpace::Leaves))
            .flatten();
        let counted = (0..m)
            .map(|v| match opts.loss {
                HierLoss::Node | HierLoss::Normalized => v != root,
                HierLoss::Leaf => graph.is_leaf(v),
            })
            .collect();
        Ok(HierarchyStructure {
            graph,
            space: opts.space,
            multilabel: opts.multilabel,
            loss: opts.loss,
            n_features: opts.n_features,
            layout: opts.layout,
            scale,
            loss_weight,
            miss_weight,
            counted,
            ancestors,
            ancestor_rows: std::sync::OnceLock::new(),
        })
    }

    /// The node graph.
    pub fn graph(&self) -> &HierarchyGraph {
        &self.graph
    }

    /// Number of nodes M.
    pub fn n_nodes(&self) -> usize {
        self.graph.n_nodes()
    }

    /// Number of input features d.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// The label space.
    pub fn space(&self) -> LabelSpace {
        self.space
    }

    /// Multi-label (several branches) or single paths.
    pub fn multilabel(&self) -> bool {
        self.multilabel
    }

    /// The loss.
    pub fn loss_kind(&self) -> HierLoss {
        self.loss
    }

    /// The weight layout.
    pub fn layout(&self) -> WeightLayout {
        self.layout
    }

    /// The exact method behind [`Structure::oracle`] for this graph and label space.
    pub fn oracle_kind(&self) -> OracleKind {
        match (self.multilabel, self.graph.is_tree(), self.space) {
            (false, _, _) => OracleKind::Enumeration,
            (true, true, _) => OracleKind::TreeDp,
            (true, false, LabelSpace::Any) => OracleKind::MinCut,
            (true, false, LabelSpace::Leaves) => OracleKind::LpIp,
        }
    }

    /// Answers a query from precomputed node scores σ (length M): the entry point for callers
    /// that score nodes themselves (float32 or hashed weights). `gold` is y_i (validated by the
    /// caller), or `None` for prediction (margins then relative to the empty score).
    pub fn oracle_from_scores(
        &self,
        sigma: &[f64],
        gold: &[u32],
        q: &TermQuery<'_, HierLabel>,
    ) -> Result<Vec<Scored<HierLabel>>> {
        if sigma.len() != self.n_nodes() {
            return Err(Error::input(format!("{} node scores for {} nodes", sigma.len(), self.n_nodes())));
        }
        bicrit_core::error::check_finite("node scores", sigma)?;
        self.check(gold)?;
        self.check_query(q)?;
        let labels = with_scratch(|sc| self.answer(sigma, Some(gold), q, sc))?;
        Ok(labels
            .into_iter()
            .map(|y| {
                let margin = Self::margin_of(sigma, &y, gold);
                let terms = self.terms_unchecked(&y, gold);
                Scored { label: y, margin, terms }
            })
            .collect())
    }

    /// argmax_y Σ_{n ∈ y} σ_n from precomputed node scores σ (length M): prediction for callers
    /// that score nodes themselves (score-level hierarchies, [`crate::scores::hierarchy`]).
    pub fn predict_from_scores(&self, sigma: &[f64]) -> Result<HierLabel> {
        if sigma.len() != self.n_nodes() {
            return Err(Error::input(format!("{} node scores for {} nodes", sigma.len(), self.n_nodes())));
        }
        bicrit_core::error::check_finite("node scores", sigma)?;
        let q: TermQuery<'_, HierLabel> = TermQuery {
            primary: Objective { margin: 1.0, terms: Terms::default() },
            secondary: None,
            ban: &[],
            k: 1,
            cone: None,
        };
        let labels = with_scratch(|sc| self.answer(sigma, None, &q, sc))?;
        labels.into_iter().next().ok_or_else(|| Error::solver("the hierarchy label space is empty"))
    }

    fn check_query(&self, q: &TermQuery<'_, HierLabel>) -> Result<()> {
        let caps = self.capabilities();
        if q.cone.is_some() && !caps.cone {
            return Err(Error::unsupported(format!(
                "the hierarchy structure has no constrained λ-oracle for multi-label spaces (oracle: {:?}); \
                 cones are answered for multilabel=False",
                self.oracle_kind()
            )));
        }
        for (i, b) in q.ban.iter().enumerate() {
            self.check(b).map_err(|e| Error::input(format!("ban list entry {i}: {e}")))?;
        }
        Ok(())
    }

    /// The labels answering `q`, best first (ban list, cone and k applied).
    fn answer(
        &self,
        sigma: &[f64],
        gold: Option<&[u32]>,
        q: &TermQuery<'_, HierLabel>,
        sc: &mut Scratch,
    ) -> Result<Vec<HierLabel>> {
        let m = self.n_nodes();
        sc.mask.clear();
        sc.mask.resize(m, false);
        if let Some(gd) = gold {
            for &v in gd {
                sc.mask[v as usize] = true;
            }
        }
        let k = q.k.max(1);
        if !self.multilabel {
            return Ok(self.enumerate_single(sigma, gold, q, sc));
        }
        let kk = k + q.ban.len();
        let mut g1 = std::mem::take(&mut sc.g1);
        self.gains(sigma, &sc.mask, &q.primary, &mut g1);
        let mut g2 = std::mem::take(&mut sc.g2);
        if let Some(o) = &q.secondary {
            self.gains(sigma, &sc.mask, o, &mut g2);
        } else {
            g2.clear();
            g2.resize(m, 0.0);
        }
        let res = self.answer_multi(&g1, &g2, q.secondary.is_some(), kk, sc);
        sc.g1 = g1;
        sc.g2 = g2;
        let mut labels = res?;
        labels.retain(|y| !q.ban.contains(y));
        labels.truncate(k);
        Ok(labels)
    }
}

impl HierarchyStructure {
    /// φ(x_i, y) − φ(x_i, y_true) ([`Structure::add_feature_difference`]): +s_n·x_i for
    /// n ∈ y ∖ y_true (in y's order), then −s_n·x_i for n ∈ y_true ∖ y, exact zeros dropped —
    /// the order and values of accumulating φ(x_i, y) − φ(x_i, y_true) entry by entry.
    #[cfg(test)]
    fn feature_difference(
        &self,
        data: &CsrMatrix,
        i: usize,
        y: &HierLabel,
        y_true: &HierLabel,
    ) -> Result<SparseVec> {
        let mut v = SparseVec::new();
        self.each_feature_difference(data, i, y, y_true, |k, value| v.push(k, value))?;
        Ok(v)
    }

    /// The entries of [`Self::feature_difference`], in its order, handed to `emit` one by one
    /// (no vector is built: on the Gene Ontology DAGs a difference holds up to M·d entries).
    fn each_feature_difference(
        &self,
        data: &CsrMatrix,
        i: usize,
        y: &HierLabel,
        y_true: &HierLabel,
        mut emit: impl FnMut(usize, f64),
    ) -> Result<()> {
        self.check_width(data)?;
        self.check(y)?;
        self.check(y_true)?;
        // both sorted: one merge gives the two one-sided differences
        let (mut only_y, mut only_true) = (Vec::new(), Vec::new());
        let (mut a, mut b) = (0, 0);
        while a < y.len() || b < y_true.len() {
            if b == y_true.len() || (a < y.len() && y[a] < y_true[b]) {
                only_y.push(y[a] as usize);
                a += 1;
            } else if a == y.len() || y_true[b] < y[a] {
                only_true.push(y_true[b] as usize);
                b += 1;
            } else {
                a += 1;
                b += 1;
            }
        }
        let (idx, val) = data.view().row(i);
        let mut push = |k: usize, value: f64| {
            if value != 0.0 {
                emit(k, value);
            }
        };
        match self.layout {
            WeightLayout::NodeMajor => {
                let d = self.n_features;
                for &n in &only_y {
                    for (&j, &xv) in idx.iter().zip(val) {
                        push(n * d + j as usize, self.scale[n] * xv);
                    }
                }
                for &n in &only_true {
                    for (&j, &xv) in idx.iter().zip(val) {
                        push(n * d + j as usize, -(self.scale[n] * xv));
                    }
                }
            }
            WeightLayout::FeatureMajor => {
                let m = self.n_nodes();
                for (nodes, sign) in [(&only_y, 1.0), (&only_true, -1.0)] {
                    for (&j, &xv) in idx.iter().zip(val) {
                        for &n in nodes.iter() {
                            push(j as usize * m + n, sign * (self.scale[n] * xv));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

impl Structure for HierarchyStructure {
    type Label = HierLabel;
    type Data = CsrMatrix;

    fn name(&self) -> &str {
        "hierarchy"
    }

    fn n_instances(&self, data: &CsrMatrix) -> usize {
        data.n_rows()
    }

    fn size_joint_feature(&self) -> usize {
        self.n_nodes() * self.n_features
    }

    /// Single-path spaces: ban, k-best and cone (enumeration). Multi-label spaces: ban and
    /// k-best (tree k-best DP; Lawler over min-cuts or integer programs on DAGs), no cone.
    /// Answers are always integral.
    fn capabilities(&self) -> Capabilities {
        Capabilities { ban: true, kbest: true, cone: !self.multilabel, ..Capabilities::default() }
    }

    fn check_label(&self, _data: &CsrMatrix, _i: usize, y: &HierLabel) -> Result<()> {
        self.check(y)
    }

    fn joint_feature(&self, data: &CsrMatrix, i: usize, y: &HierLabel) -> Result<SparseVec> {
        self.check_width(data)?;
        self.check(y)?;
        let x = data.view();
        let mut v = SparseVec::new();
        match self.layout {
            WeightLayout::NodeMajor => {
                for &n in y {
                    let n = n as usize;
                    v.push_row(&x, i, n * self.n_features, self.scale[n]);
                }
            }
            WeightLayout::FeatureMajor => {
                let m = self.n_nodes();
                let (idx, val) = x.row(i);
                for (&j, &xv) in idx.iter().zip(val) {
                    for &n in y {
                        v.push(j as usize * m + n as usize, self.scale[n as usize] * xv);
                    }
                }
            }
        }
        Ok(v)
    }

    /// w·φ(x_i, y) without building φ(x_i, y): the same products s_n·x_j times the same weights,
    /// summed in `joint_feature`'s entry order, so the value is bit-identical to
    /// `joint_feature(..).dot(w)`. The warm start re-scores its labels every inference
    /// (thesis §`sec:convex_hull_search`); on a Gene Ontology DAG a loss-augmented answer holds
    /// most of the nodes, and building its |y|·nnz(x_i) entries to take one dot product was half
    /// of an SGD epoch on seq_GO (benches/hierarchy/RESULTS.md).
    fn score(&self, w: &[f64], data: &CsrMatrix, i: usize, y: &HierLabel) -> Result<f64> {
        self.check_width(data)?;
        self.check(y)?;
        if w.len() < self.size_joint_feature() {
            return Err(Error::input(format!(
                "w has {} entries, fewer than the joint feature size {}",
                w.len(),
                self.size_joint_feature()
            )));
        }
        let x = data.view();
        let (idx, val) = x.row(i);
        let (d, m) = (self.n_features, self.n_nodes());
        Ok(match self.layout {
            WeightLayout::NodeMajor => y
                .iter()
                .flat_map(|&n| {
                    let (block, s) = (&w[n as usize * d..(n as usize + 1) * d], self.scale[n as usize]);
                    idx.iter().zip(val).map(move |(&c, &v)| block[c as usize] * (s * v))
                })
                .sum(),
            WeightLayout::FeatureMajor => idx
                .iter()
                .zip(val)
                .flat_map(|(&c, &v)| {
                    let row = &w[c as usize * m..(c as usize + 1) * m];
                    y.iter().map(move |&n| row[n as usize] * (self.scale[n as usize] * v))
                })
                .sum(),
        })
    }

    /// One integral answer: only the nodes of ŷ △ y_true. A multi-label DAG answer often holds
    /// most of the nodes, and building φ(x_i, ŷ) (|ŷ|·nnz(x_i) entries) to cancel it against
    /// φ(x_i, y_true) was the larger part of an SGD step on the Gene Ontology sets
    /// (benches/hierarchy/RESULTS.md). Fractional answers: the learner's whole vectors.
    fn add_feature_difference(
        &self,
        data: &CsrMatrix,
        i: usize,
        y_true: &HierLabel,
        answer: &[(&HierLabel, f64)],
        add: &mut dyn FnMut(usize, f64),
    ) -> Result<bool> {
        let [(y, t)] = answer else { return Ok(false) };
        if *t != 1.0 {
            return Ok(false);
        }
        self.each_feature_difference(data, i, y, y_true, add)?;
        Ok(true)
    }

    /// [`Self::add_feature_difference`]'s entries are distinct (one block per node of
    /// ŷ △ y_true, exact zeros dropped) when x_i's column indices are: then they go straight
    /// into `out`.
    fn write_feature_difference(
        &self,
        data: &CsrMatrix,
        i: usize,
        y_true: &HierLabel,
        answer: &[(&HierLabel, f64)],
        out: &mut SparseVec,
    ) -> Result<bool> {
        let [(y, t)] = answer else { return Ok(false) };
        if *t != 1.0 || i >= data.view().n_rows() {
            return Ok(false);
        }
        let (idx, _) = data.view().row(i);
        if idx.windows(2).any(|c| c[0] >= c[1]) {
            return Ok(false); // repeated columns: the accumulator sums them
        }
        self.each_feature_difference(data, i, y, y_true, |k, v| out.push(k, v))?;
        Ok(true)
    }

    fn terms(&self, y: &HierLabel, y_true: &HierLabel) -> Result<Terms> {
        self.check(y)?;
        self.check(y_true)?;
        Ok(self.terms_unchecked(y, y_true))
    }

    fn predict(&self, w: &[f64], data: &CsrMatrix, i: usize) -> Result<HierLabel> {
        self.check_width(data)?;
        let q: TermQuery<'_, HierLabel> = TermQuery {
            primary: Objective { margin: 1.0, terms: Terms::default() },
            secondary: None,
            ban: &[],
            k: 1,
            cone: None,
        };
        let labels = with_scratch(|sc| {
            let mut sigma = std::mem::take(&mut sc.sigma);
            self.node_scores(w, &data.view(), i, &mut sigma);
            let r = Self::finite_scores(&sigma).and_then(|()| self.answer(&sigma, None, &q, sc));
            sc.sigma = sigma;
            r
        })?;
        labels.into_iter().next().ok_or_else(|| Error::solver("the hierarchy label space is empty"))
    }

    fn oracle(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y_true: &HierLabel,
        q: &TermQuery<'_, HierLabel>,
    ) -> Result<Vec<Scored<HierLabel>>> {
        self.check_width(data)?;
        self.check(y_true)?;
        self.check_query(q)?;
        with_scratch(|sc| {
            let mut sigma = std::mem::take(&mut sc.sigma);
            self.node_scores(w, &data.view(), i, &mut sigma);
            let r = Self::finite_scores(&sigma).and_then(|()| self.answer(&sigma, Some(y_true), q, sc)).map(
                |labels| {
                    labels
                        .into_iter()
                        .map(|y| {
                            let margin = Self::margin_of(&sigma, &y, y_true);
                            let terms = self.terms_unchecked(&y, y_true);
                            Scored { label: y, margin, terms }
                        })
                        .collect()
                },
            );
            sc.sigma = sigma;
            r
        })
    }
}

#[cfg(test)]
mod tests;
