//! Hierarchical classification over a tree or DAG of M nodes (thesis hierarchical chapter,
//! §"Label Structure", §"Hierarchical Structured SVM", §"Calculating the most violating label";
//! DESIGN §4 and §6).
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
//! * **Loss** (`Node`): weighted node Hamming Σ_{n ∈ y △ y_i} λ_n over the non-root nodes;
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
pub mod lawler;
pub mod lp;
mod ratio;
pub mod tree;
pub mod value;

use std::cell::RefCell;

use bicrit_core::{Capabilities, CsrMatrix, CsrView, Error, Objective, Result, SparseVec, Terms};

pub use self::graph::HierarchyGraph;
pub use self::lp::LpSolution;
use self::tree::TreeScratch;
use self::value::Lex;
use crate::select::in_cone;
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
    /// Per-node loss weight λ_n ≥ 0 (default 1).
    pub node_loss_weight: Option<Vec<f64>>,
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
    counted: Vec<bool>,
    /// Ā(t) of every single-path candidate t of a DAG (sorted), when it fits [`ANCESTOR_TABLE_LIMIT`].
    ancestors: Option<(Vec<usize>, Vec<u32>)>,
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

/// The gold label's constants in single-path enumeration.
#[derive(Clone, Copy, Debug, Default)]
struct GoldSums {
    sigma: f64,
    loss: f64,
    ham: f64,
    /// Σ_{n ∈ y_i} λ_n summed as the candidates' common parts are.
    weight: f64,
}

/// Relative tolerance of the LP/IP two-phase lexicographic queries and the integrality test.
const LP_TOL: f64 = 1e-9;

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
            counted,
            ancestors,
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

    fn check_width(&self, data: &CsrMatrix) -> Result<()> {
        if data.n_cols != self.n_features {
            return Err(Error::input(format!(
                "X has {} features but the structure was initialised with {}",
                data.n_cols, self.n_features
            )));
        }
        Ok(())
    }

    /// Is `v` in the sorted label `y`?
    #[inline]
    fn has(y: &[u32], v: u32) -> bool {
        y.binary_search(&v).is_ok()
    }

    /// Validates a label of this structure's space (errors name the node).
    pub fn check(&self, y: &[u32]) -> Result<()> {
        let g = &self.graph;
        let m = g.n_nodes();
        if y.is_empty() {
            return Err(Error::input("a hierarchy label is a non-empty node set (it contains the root)"));
        }
        for (i, &v) in y.iter().enumerate() {
            if v as usize >= m {
                return Err(Error::input(format!("label has node {v}, outside the nodes 0..{m}")));
            }
            if i > 0 && y[i - 1] >= v {
                return Err(Error::input(format!(
                    "label node ids must be sorted and distinct, got {} before {v}",
                    y[i - 1]
                )));
            }
        }
        if !Self::has(y, g.root() as u32) {
            return Err(Error::input(format!(
                "label lacks the root {}; every label contains it",
                g.describe(g.root())
            )));
        }
        let mut terminals = Vec::new();
        for &v in y {
            for &p in g.parents(v as usize) {
                if !Self::has(y, p) {
                    return Err(Error::input(format!(
                        "label is not ancestor-closed: it has {} but not its parent {}",
                        g.describe(v as usize),
                        g.describe(p as usize)
                    )));
                }
            }
        }
        for &v in y {
            let ch = g.children(v as usize);
            if !ch.iter().any(|&c| Self::has(y, c)) {
                if self.space == LabelSpace::Leaves && !ch.is_empty() {
                    return Err(Error::input(format!(
                        "label ends at {}, which is not a leaf; labels='leaves' needs leaf-terminated labels \
                         (add a virtual leaf under it, or use labels='any')",
                        g.describe(v as usize)
                    )));
                }
                terminals.push(v);
            }
        }
        if !self.multilabel && terminals.len() > 1 {
            return Err(Error::input(format!(
                "label has {} terminal nodes ({}, {}, …) but the structure is single-label (multilabel=False)",
                terminals.len(),
                g.describe(terminals[0] as usize),
                g.describe(terminals[1] as usize)
            )));
        }
        Ok(())
    }

    /// Visits y △ y_true: `f(node, in_y)`.
    fn sym_diff(y: &[u32], yt: &[u32], mut f: impl FnMut(usize, bool)) {
        let (mut i, mut j) = (0, 0);
        while i < y.len() || j < yt.len() {
            if j == yt.len() || (i < y.len() && y[i] < yt[j]) {
                f(y[i] as usize, true);
                i += 1;
            } else if i == y.len() || yt[j] < y[i] {
                f(yt[j] as usize, false);
                j += 1;
            } else {
                i += 1;
                j += 1;
            }
        }
    }

    /// Terms of two labels assumed valid.
    fn terms_unchecked(&self, y: &[u32], yt: &[u32]) -> Terms {
        let mut t = Terms::default();
        Self::sym_diff(y, yt, |v, _| {
            if self.counted[v] {
                t.loss += self.loss_weight[v];
                t.hamming += 1.0;
            }
        });
        t.size = y.iter().filter(|&&v| self.counted[v as usize]).count() as f64;
        if self.loss == HierLoss::Normalized {
            t.loss = t.loss.sqrt();
        }
        t
    }

    /// m(y) = Σ_{n ∈ y∖y_i} σ_n − Σ_{n ∈ y_i∖y} σ_n (exactly 0 at the gold label).
    fn margin_of(sigma: &[f64], y: &[u32], yt: &[u32]) -> f64 {
        let mut m = 0.0;
        Self::sym_diff(y, yt, |v, in_y| if in_y { m += sigma[v] } else { m -= sigma[v] });
        m
    }

    /// Node scores σ_n = s_n·W_n·x of row `i` into `out`.
    fn node_scores(&self, w: &[f64], x: &CsrView<'_>, i: usize, out: &mut Vec<f64>) {
        let m = self.n_nodes();
        let d = self.n_features;
        let (idx, val) = x.row(i);
        out.clear();
        match self.layout {
            WeightLayout::NodeMajor => {
                out.extend((0..m).map(|n| {
                    let block = &w[n * d..(n + 1) * d];
                    let dot: f64 = idx.iter().zip(val).map(|(&j, &v)| v * block[j as usize]).sum();
                    self.scale[n] * dot
                }));
            }
            WeightLayout::FeatureMajor => {
                out.resize(m, 0.0);
                for (&j, &v) in idx.iter().zip(val) {
                    let row = &w[j as usize * m..(j as usize + 1) * m];
                    for (o, &wv) in out.iter_mut().zip(row) {
                        *o += v * wv;
                    }
                }
                for (o, &s) in out.iter_mut().zip(&self.scale) {
                    *o *= s;
                }
            }
        }
    }

    fn finite_scores(sigma: &[f64]) -> Result<()> {
        match sigma.iter().position(|s| !s.is_finite()) {
            None => Ok(()),
            Some(n) => Err(Error::input(format!(
                "the score of node {n} is not finite ({}): non-finite or overflowing weights or features",
                sigma[n]
            ))),
        }
    }

    /// Per-node gains of objective `o`: o.margin·σ_n plus the node's share of the terms
    /// (the constants Σ_{n ∈ y_i} … are dropped; they do not change the argmax).
    fn gains(&self, sigma: &[f64], mask: &[bool], o: &Objective, out: &mut Vec<f64>) {
        out.clear();
        out.extend((0..self.n_nodes()).map(|v| {
            let mut x = o.margin * sigma[v];
            if self.counted[v] {
                let sgn = if mask[v] { -1.0 } else { 1.0 };
                x += o.terms.loss * self.loss_weight[v] * sgn + o.terms.size + o.terms.hamming * sgn;
            }
            x
        }));
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

    fn answer_multi(
        &self,
        g1: &[f64],
        g2: &[f64],
        lex: bool,
        kk: usize,
        sc: &mut Scratch,
    ) -> Result<Vec<HierLabel>> {
        let g = &self.graph;
        let leaf_terminated = self.space == LabelSpace::Leaves;
        match self.oracle_kind() {
            OracleKind::TreeDp => {
                if lex {
                    sc.gl.clear();
                    sc.gl.extend(g1.iter().zip(g2).map(|(&a, &b)| Lex(a, b)));
                    let gl = std::mem::take(&mut sc.gl);
                    let out = if kk == 1 {
                        vec![tree::tree_best(g, &gl, leaf_terminated, &mut sc.tree_l).1]
                    } else {
                        tree::tree_kbest(g, &gl, leaf_terminated, kk, &mut sc.tree_l)
                            .into_iter()
                            .map(|p| p.1)
                            .collect()
                    };
                    sc.gl = gl;
                    Ok(out)
                } else if kk == 1 {
                    Ok(vec![tree::tree_best(g, g1, leaf_terminated, &mut sc.tree_f).1])
                } else {
                    Ok(tree::tree_kbest(g, g1, leaf_terminated, kk, &mut sc.tree_f)
                        .into_iter()
                        .map(|p| p.1)
                        .collect())
                }
            }
            OracleKind::MinCut => {
                if kk == 1 {
                    let y = if lex {
                        sc.gl.clear();
                        sc.gl.extend(g1.iter().zip(g2).map(|(&a, &b)| Lex(a, b)));
                        closure::max_closure(g, &sc.gl, None, &mut sc.flow_l)
                    } else {
                        closure::max_closure(g, g1, None, &mut sc.flow_f)
                    };
                    return Ok(vec![y.ok_or_else(|| Error::solver("max-closure flow is unbounded"))?]);
                }
                sc.gl.clear();
                sc.gl.extend(g1.iter().zip(g2).map(|(&a, &b)| Lex(a, b)));
                let gl = std::mem::take(&mut sc.gl);
                let flow = &mut sc.flow_l;
                let res = lawler::lawler_kbest(
                    g.n_nodes(),
                    g.root(),
                    kk,
                    |fixed| {
                        if self.fixed_conflict(fixed) {
                            return Ok(None);
                        }
                        Ok(closure::max_closure(g, &gl, Some(fixed), flow))
                    },
                    |y| label_value(y, g1, g2),
                );
                sc.gl = gl;
                Ok(res?.into_iter().map(|p| p.1).collect())
            }
            OracleKind::LpIp => {
                if kk == 1 {
                    return Ok(vec![self.lp_ip_best(g1, g2, lex)?]);
                }
                let res = lawler::lawler_kbest(
                    g.n_nodes(),
                    g.root(),
                    kk,
                    |fixed| {
                        if self.fixed_conflict(fixed) {
                            return Ok(None);
                        }
                        self.ip_lex(g1, g2, lex, Some(fixed))
                    },
                    |y| label_value(y, g1, g2),
                )?;
                Ok(res.into_iter().map(|p| p.1).collect())
            }
            OracleKind::Enumeration => unreachable!("single-label spaces are enumerated"),
        }
    }

    /// Forced-in nodes (with their ancestors) meeting forced-out nodes (with their descendants)?
    fn fixed_conflict(&self, fixed: &[i8]) -> bool {
        let g = &self.graph;
        let m = g.n_nodes();
        let mut up = vec![false; m];
        let mut stack: Vec<usize> = (0..m).filter(|&v| fixed[v] > 0).collect();
        stack.push(g.root());
        while let Some(v) = stack.pop() {
            if !up[v] {
                up[v] = true;
                stack.extend(g.parents(v).iter().map(|&p| p as usize));
            }
        }
        let mut down = vec![false; m];
        let mut stack: Vec<usize> = (0..m).filter(|&v| fixed[v] < 0).collect();
        while let Some(v) = stack.pop() {
            if up[v] {
                return true;
            }
            if !down[v] {
                down[v] = true;
                stack.extend(g.children(v).iter().map(|&c| c as usize));
            }
        }
        false
    }

    /// The integer program, with its answer checked to be a label of the space (microlp warns
    /// that it "may lose precision on some hard problems": an infeasible answer is an error,
    /// never a silent wrong label).
    fn ip_checked(
        &self,
        gain: &[f64],
        fixed: Option<&[i8]>,
        side: Option<lp::SideRow<'_>>,
    ) -> Result<Option<HierLabel>> {
        let lt = self.space == LabelSpace::Leaves;
        let y = lp::ip_solve(&self.graph, gain, lt, fixed, side)?;
        if let Some(y) = &y {
            self.check(y)
                .map_err(|e| Error::solver(format!("the integer program returned a non-label: {e}")))?;
            if let Some(f) = fixed {
                let ok = (0..f.len()).all(|v| f[v] == 0 || (f[v] > 0) == Self::has(y, v as u32));
                if !ok {
                    return Err(Error::solver("the integer program ignored fixed nodes"));
                }
            }
        }
        Ok(y)
    }

    /// Two-phase integer program (best primary, then best secondary among primary-optimal labels).
    fn ip_lex(&self, g1: &[f64], g2: &[f64], lex: bool, fixed: Option<&[i8]>) -> Result<Option<HierLabel>> {
        let Some(y1) = self.ip_checked(g1, fixed, None)? else { return Ok(None) };
        if !lex {
            return Ok(Some(y1));
        }
        self.second_phase(g1, g2, fixed, y1).map(Some)
    }

    fn second_phase(&self, g1: &[f64], g2: &[f64], fixed: Option<&[i8]>, y1: HierLabel) -> Result<HierLabel> {
        let p1: f64 = y1.iter().map(|&v| g1[v as usize]).sum();
        let scale: f64 = 1.0 + g1.iter().map(|x| x.abs()).sum::<f64>();
        let side = lp::SideRow { coef: g1, rhs: p1 - LP_TOL * scale };
        Ok(self.ip_checked(g2, fixed, Some(side))?.unwrap_or(y1))
    }

    /// The LP relaxation first; the integer program when its answer is not integral
    /// (thesis §"Calculating the most violating label": "we rely on the binary integer
    /// programming only if the solution to LP is not integral").
    fn lp_ip_best(&self, g1: &[f64], g2: &[f64], lex: bool) -> Result<HierLabel> {
        let lt = self.space == LabelSpace::Leaves;
        let sol = lp::lp_relaxation(&self.graph, g1, lt)?;
        let rounded = lp::round_integral(&sol.z, 1e-6).filter(|y| {
            let val: f64 = y.iter().map(|&v| g1[v as usize]).sum();
            let scale = 1.0 + sol.value.abs();
            self.check(y).is_ok() && val >= sol.value - 1e-7 * scale
        });
        let y1 = match rounded {
            Some(y) => y,
            None => self
                .ip_checked(g1, None, None)?
                .ok_or_else(|| Error::solver("the hierarchy integer program is infeasible"))?,
        };
        if lex {
            self.second_phase(g1, g2, None, y1)
        } else {
            Ok(y1)
        }
    }

    /// The LP relaxation of the multi-label space for objective `o` on instance `i` (tests and
    /// benchmarks; for `Any` the polytope is integral and the max-closure min-cut solves it).
    pub fn relaxation(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y_true: &[u32],
        o: &Objective,
    ) -> Result<LpSolution> {
        if !self.multilabel {
            return Err(Error::unsupported("the LP relaxation is defined for the multi-label spaces"));
        }
        self.check_width(data)?;
        self.check(y_true)?;
        let gains = with_scratch(|sc| {
            self.node_scores(w, &data.view(), i, &mut sc.sigma);
            sc.mask.clear();
            sc.mask.resize(self.n_nodes(), false);
            for &v in y_true {
                sc.mask[v as usize] = true;
            }
            let mut out = Vec::new();
            self.gains(&sc.sigma, &sc.mask, o, &mut out);
            out
        });
        lp::lp_relaxation(&self.graph, &gains, self.space == LabelSpace::Leaves)
    }

    /// Sums over Ā(t) for every single-path candidate t into `sc.acc` (one entry per node; only
    /// the candidates of the space are filled), and the gold label's constants.
    ///
    /// Per node the contributions are [σ_n, loss part, 1, ±1, λ_n·[n ∈ y_i]] for counted nodes
    /// ([σ_n, 0, 0, 0, 0] otherwise): the loss part is ±λ_n (decomposable losses, − inside y_i) or
    /// λ_n·[n ∉ y_i] (normalized loss, which needs the sym-diff weight
    /// Σ_{Ā(t)∖y_i} λ + (Σ_{y_i} λ − Σ_{Ā(t)∩y_i} λ) exactly 0 when it should be, before the √).
    fn accumulate_single(&self, sigma: &[f64], gold: Option<&[u32]>, sc: &mut Scratch) -> GoldSums {
        let g = &self.graph;
        let m = g.n_nodes();
        let normalized = self.loss == HierLoss::Normalized;
        let contrib = |v: usize| -> [f64; 5] {
            if self.counted[v] {
                let lw = self.loss_weight[v];
                let (sgn, in_gold) = if sc.mask[v] { (-1.0, lw) } else { (1.0, 0.0) };
                let part = if normalized { lw - in_gold } else { lw * sgn };
                [sigma[v], part, 1.0, sgn, in_gold]
            } else {
                [sigma[v], 0.0, 0.0, 0.0, 0.0]
            }
        };
        let mut gs = GoldSums::default();
        if let Some(gd) = gold {
            for &v in gd {
                let v = v as usize;
                gs.sigma += sigma[v];
                if self.counted[v] {
                    gs.loss += self.loss_weight[v];
                    gs.ham += 1.0;
                }
            }
        }
        let mut acc = std::mem::take(&mut sc.acc);
        acc.clear();
        acc.resize(m, [0.0; 5]);
        let add = |s: &mut [f64; 5], c: [f64; 5]| {
            for (x, y) in s.iter_mut().zip(c) {
                *x += y;
            }
        };
        if g.is_tree() {
            for &v in g.topo() {
                let v = v as usize;
                let mut sum = g.parents(v).first().map_or([0.0; 5], |&p| acc[p as usize]);
                add(&mut sum, contrib(v));
                acc[v] = sum;
            }
        } else if let Some((ptr, idx)) = &self.ancestors {
            let mut node_c = std::mem::take(&mut sc.node_c);
            node_c.clear();
            node_c.extend((0..m).map(contrib));
            for (t, slot) in acc.iter_mut().enumerate() {
                let mut sum = [0.0; 5];
                for &v in &idx[ptr[t]..ptr[t + 1]] {
                    add(&mut sum, node_c[v as usize]);
                }
                *slot = sum;
            }
            sc.node_c = node_c;
        } else {
            sc.stamp.resize(m, 0);
            let leaves_only = self.space == LabelSpace::Leaves;
            for (t, slot) in acc.iter_mut().enumerate() {
                if leaves_only && !g.is_leaf(t) {
                    continue;
                }
                sc.stamp_id = sc.stamp_id.wrapping_add(1);
                if sc.stamp_id == 0 {
                    sc.stamp.iter_mut().for_each(|s| *s = 0);
                    sc.stamp_id = 1;
                }
                let id = sc.stamp_id;
                let mut sum = [0.0; 5];
                sc.stack.clear();
                sc.stack.push(t as u32);
                sc.stamp[t] = id;
                while let Some(v) = sc.stack.pop() {
                    add(&mut sum, contrib(v as usize));
                    for &p in g.parents(v as usize) {
                        if sc.stamp[p as usize] != id {
                            sc.stamp[p as usize] = id;
                            sc.stack.push(p);
                        }
                    }
                }
                *slot = sum;
            }
        }
        // The gold's own weight summed the way every candidate's common part is (along its path
        // on trees, in node order with the ancestor table), so that equal sets cancel exactly.
        if let Some(t) = gold.and_then(|gd| self.terminal(gd)) {
            gs.weight = acc[t][4];
        }
        sc.acc = acc;
        gs
    }

    /// (m(y), terms) of the candidate with sums `a` (see [`Self::accumulate_single`]).
    #[inline]
    fn candidate_terms(&self, a: &[f64; 5], gs: &GoldSums) -> (f64, Terms) {
        let loss = if self.loss == HierLoss::Normalized {
            (a[1] + (gs.weight - a[4])).max(0.0).sqrt()
        } else {
            a[1] + gs.loss
        };
        (a[0] - gs.sigma, Terms { loss, size: a[2], hamming: a[3] + gs.ham })
    }

    /// Single-path spaces: every label Ā(t) for t a leaf (`Leaves`) or any node (`Any`) is
    /// scored from sums over its nodes, then the query's ban list, cone and k are applied with
    /// the reference semantics of `select_best`.
    fn enumerate_single(
        &self,
        sigma: &[f64],
        gold: Option<&[u32]>,
        q: &TermQuery<'_, HierLabel>,
        sc: &mut Scratch,
    ) -> Vec<HierLabel> {
        let g = &self.graph;
        let gs = self.accumulate_single(sigma, gold, sc);
        let acc = std::mem::take(&mut sc.acc);
        // banned labels → their terminal nodes
        let banned: Vec<usize> = q.ban.iter().filter_map(|b| self.terminal(b)).collect();
        let k = q.k.max(1);
        let mut kept = std::mem::take(&mut sc.kept);
        kept.clear();
        let mut best: Option<(f64, f64, u32)> = None;
        let leaves_only = self.space == LabelSpace::Leaves;
        let probe: TermQuery<'_, ()> =
            TermQuery { primary: q.primary, secondary: q.secondary, ban: &[], k: 1, cone: q.cone };
        for (t, a) in acc.iter().enumerate() {
            if (leaves_only && !g.is_leaf(t)) || banned.contains(&t) {
                continue;
            }
            let (margin, terms) = self.candidate_terms(a, &gs);
            let s = Scored { label: (), margin, terms };
            if !in_cone(&probe, &s) {
                continue;
            }
            let p = q.primary.value(s.margin, &s.terms);
            let r = q.secondary.map_or(0.0, |o| o.value(s.margin, &s.terms));
            if k == 1 {
                // first maximum in node order, as the stable sort of `select_best`
                if best.is_none_or(|b| p > b.0 || (p == b.0 && r > b.1)) {
                    best = Some((p, r, t as u32));
                }
            } else {
                kept.push((p, r, t as u32));
            }
        }
        sc.acc = acc;
        if k == 1 {
            kept.extend(best);
        } else {
            kept.sort_by(|a, b| {
                b.0.partial_cmp(&a.0)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal))
            });
            kept.truncate(k);
        }
        let out = kept.iter().map(|&(_, _, t)| self.path_label(t as usize, sc)).collect();
        sc.kept = kept;
        out
    }

    /// NHSVM3's loss-augmented inference (thesis eq. `NHSVM3`) over the single-path space:
    /// the label maximising m(y)/L(y) + `offset` over y ≠ y_i with L(y) > 0, where L is the
    /// structure's loss — with `loss="normalized"`, λ_n = α_n and s_n = √α_n this is
    /// w·((Λ̃(y) − Λ̃(y_i)) ⊗ x)/‖Λ̃(y) − Λ̃(y_i)‖ + 1. The maximum is clipped at 0: when no label
    /// has a positive value the gold label is returned with value 0 (no violation, zero
    /// subgradient). Labels with L(y) = 0 have no normalized difference and are skipped (with
    /// λ = s² their φ equals the gold's). Ties: the first maximum in node order. The subgradient
    /// of the instance's term is (φ(x, ŷ) − φ(x, y_i)) / L(ŷ). Returns the answer and its value.
    pub fn ratio_from_scores(
        &self,
        sigma: &[f64],
        gold: &[u32],
        offset: f64,
    ) -> Result<(Scored<HierLabel>, f64)> {
        if self.multilabel {
            return Err(Error::unsupported(
                "the normalized-difference (NHSVM3) oracle enumerates single paths: it needs multilabel=False \
                 (the normalized difference does not decompose over nodes)",
            ));
        }
        if sigma.len() != self.n_nodes() {
            return Err(Error::input(format!("{} node scores for {} nodes", sigma.len(), self.n_nodes())));
        }
        if !offset.is_finite() {
            return Err(Error::param(format!("offset must be finite, got {offset}")));
        }
        bicrit_core::error::check_finite("node scores", sigma)?;
        self.check(gold)?;
        let g = &self.graph;
        let best = with_scratch(|sc| {
            let m = self.n_nodes();
            sc.mask.clear();
            sc.mask.resize(m, false);
            for &v in gold {
                sc.mask[v as usize] = true;
            }
            let gs = self.accumulate_single(sigma, Some(gold), sc);
            let gt = self.terminal(gold);
            let leaves_only = self.space == LabelSpace::Leaves;
            let mut best: Option<(f64, usize)> = None;
            for (t, a) in sc.acc.iter().enumerate() {
                if (leaves_only && !g.is_leaf(t)) || Some(t) == gt {
                    continue;
                }
                let (margin, terms) = self.candidate_terms(a, &gs);
                if terms.loss <= 0.0 {
                    continue;
                }
                let value = margin / terms.loss + offset;
                if value > best.map_or(0.0, |b| b.0) {
                    best = Some((value, t));
                }
            }
            best.map(|(value, t)| (value, self.path_label(t, sc)))
        });
        Ok(match best {
            None => (Scored { label: gold.to_vec(), margin: 0.0, terms: Terms::default() }, 0.0),
            Some((value, y)) => {
                let margin = Self::margin_of(sigma, &y, gold);
                let terms = self.terms_unchecked(&y, gold);
                (Scored { label: y, margin, terms }, value)
            }
        })
    }

    /// [`Self::ratio_from_scores`] for instance `i` of `data` under weights `w`
    /// ([`Self::ratio_oracle_scaled`] at scale 1).
    pub fn ratio_oracle(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y_true: &[u32],
        offset: f64,
    ) -> Result<(Scored<HierLabel>, f64)> {
        self.ratio_oracle_scaled(w, 1.0, data, i, y_true, offset)
    }

    /// The terminal node of a single-path label (its deepest node), if it is one.
    fn terminal(&self, y: &[u32]) -> Option<usize> {
        let mut ts = y.iter().filter(|&&v| !self.graph.children(v as usize).iter().any(|&c| Self::has(y, c)));
        let t = ts.next()?;
        ts.next().is_none().then_some(*t as usize)
    }

    /// Ā(t), sorted.
    fn path_label(&self, t: usize, sc: &mut Scratch) -> HierLabel {
        if let Some((ptr, idx)) = &self.ancestors {
            return idx[ptr[t]..ptr[t + 1]].to_vec();
        }
        let g = &self.graph;
        let m = g.n_nodes();
        sc.stamp.resize(m, 0);
        sc.stamp_id = sc.stamp_id.wrapping_add(1);
        if sc.stamp_id == 0 {
            sc.stamp.iter_mut().for_each(|s| *s = 0);
            sc.stamp_id = 1;
        }
        let id = sc.stamp_id;
        let mut out = vec![t as u32];
        sc.stamp[t] = id;
        let mut head = 0;
        while head < out.len() {
            let v = out[head] as usize;
            head += 1;
            for &p in g.parents(v) {
                if sc.stamp[p as usize] != id {
                    sc.stamp[p as usize] = id;
                    out.push(p);
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Ancestor closure of a node set (root included), sorted: the label of a set of terminals.
    pub fn closure_of(&self, nodes: &[u32]) -> Result<HierLabel> {
        let g = &self.graph;
        let m = g.n_nodes();
        let mut seen = vec![false; m];
        let mut stack = vec![g.root() as u32];
        for &v in nodes {
            if v as usize >= m {
                return Err(Error::input(format!("node {v} outside the nodes 0..{m}")));
            }
            stack.push(v);
        }
        let mut out = Vec::new();
        while let Some(v) = stack.pop() {
            if !seen[v as usize] {
                seen[v as usize] = true;
                out.push(v);
                stack.extend_from_slice(g.parents(v as usize));
            }
        }
        out.sort_unstable();
        Ok(out)
    }
}

/// Largest ancestor table (Σ_t |Ā(t)| entries) kept for single-path DAG spaces; beyond it the
/// ancestors are found by a search per candidate and call.
const ANCESTOR_TABLE_LIMIT: usize = 1 << 24;

/// Ā(t), sorted, for every leaf (or every node) t, as CSR indexed by node id.
fn ancestor_table(g: &HierarchyGraph, leaves_only: bool) -> Option<(Vec<usize>, Vec<u32>)> {
    let m = g.n_nodes();
    let mut ptr = Vec::with_capacity(m + 1);
    let mut idx = Vec::new();
    let mut stamp = vec![usize::MAX; m];
    ptr.push(0);
    for t in 0..m {
        if !leaves_only || g.is_leaf(t) {
            let start = idx.len();
            idx.push(t as u32);
            stamp[t] = t;
            let mut head = start;
            while head < idx.len() {
                let v = idx[head] as usize;
                head += 1;
                for &p in g.parents(v) {
                    if stamp[p as usize] != t {
                        stamp[p as usize] = t;
                        idx.push(p);
                    }
                }
            }
            if idx.len() > ANCESTOR_TABLE_LIMIT {
                return None;
            }
            idx[start..].sort_unstable();
        }
        ptr.push(idx.len());
    }
    Some((ptr, idx))
}

fn label_value(y: &[u32], g1: &[f64], g2: &[f64]) -> Lex {
    let mut v = Lex(0.0, 0.0);
    for &n in y {
        v = v + Lex(g1[n as usize], g2[n as usize]);
    }
    v
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
