//! Hierarchical classification: HSVM, NHSVM, NHSVM3 and Shared SVM (thesis hierarchical
//! chapter; docs/architecture.md, Hierarchies).
//!
//! This crate holds the pieces of the normalized models that the generic learners do not cover:
//! the **node weights α** of NHSVM, the **α step** of Shared SVM, and the **NHSVM3 learner**
//! ([`Nhsvm3Sgd`], `nhsvm3.rs`: SGD/Pegasos on eq. `NHSVM3`, whose loss divides the margin by
//! the normalized distance and so is no bi-criteria surrogate). The α solvers' family trait is
//! [`AlphaSolver`]; one file per solver:
//!
//! | solver | problem | method |
//! |---|---|---|
//! | [`PowerAlpha`] (`power.rs`) | min Σ α_n^ρ, ρ > 1 (thesis eq. `beta_1`) | trees: closed form O(M) (below); otherwise a conic program (ρ = 2 a QP, else power cones) |
//! | [`MaxMinAlpha`] (`maxmin.rs`) | ρ = 1: max min_n α_n with α_n ≥ α_parent (eq. `nbeta_1`) | LP (trees: closed-form value), ties broken by min Σα² on the optimal face (QP) |
//! | [`SharedTreeAlpha`] (`shared_tree.rs`) | Shared SVM α step min Σ ‖U_n‖²/α_n (eq. `optimize_alpha`), trees | closed form O(M), Alg. `argmin_alpha` with the slips fixed |
//! | [`SharedConicAlpha`] (`shared_conic.rs`) | the same on DAGs | rotated second-order cones |
//!
//! **Constraints.** For every leaf l, Ā(l) is l with all its ancestors (in a DAG, the union of
//! its paths to the root; the root belongs to every Ā(l)). NHSVM asks Σ_{n ∈ Ā(l)} α_n = 1
//! ([`LeafSum::Exact`]) or, for DAGs, the relaxed 1 ≤ Σ ≤ T (eq. `con:range`,
//! [`LeafSum::Range`]; T = 1.5 in the thesis's DAG experiments); Shared SVM asks Σ ≤ 1.
//!
//! **Labels that end at internal nodes** (the Clus HMC data): the constraints are written over
//! the leaves of the graph handed in. A label ending at an internal node t is normalized only
//! when t has a leaf of its own: the Python layer's virtual-leaf transform
//! (`bicrit.hierarchy.add_virtual_leaves`) hangs a virtual leaf v_t under every internal node
//! that is some instance's terminal, and maps such a label to Ā(t) ∪ {v_t}; its constraint
//! Σ_{Ā(t)} α + α_{v_t} = 1 then makes ‖Λ̃(y)‖ = 1 as for any leaf-terminated label. Without
//! the transform Σ_{Ā(t)} α ≤ 1 (strictly less when some child of t has weight), i.e. such
//! labels are scored with a shorter normalized class attribute.
//!
//! **The root.** Every label contains the root, so its block of φ cancels in every margin: its α
//! only takes a share of the budget and scales all other weights uniformly (for a fixed α_root
//! the rest is the rootless solution times 1 − α_root, by homogeneity) — equivalent to a change
//! of the regularization constant. The thesis's problems count it (`include_root = true`, the
//! default). As ρ → 1 the power problem gives the root almost everything (min Σα with every
//! leaf sum 1 is α = e_root): at ρ = 1.01 the other weights are ~1e-30, so √α underflows the
//! feature scale in practice; `include_root = false` fixes α_root = 0 and keeps the same
//! proportions at a usable scale.
//!
//! **Conic programs** go to `clarabel` (interior point, pure Rust): it handles the QP (ρ = 2),
//! the power cones of general ρ > 1 (s = (t_n, 1, α_n) ∈ K_pow(1/ρ) ⇔ α_n^ρ ≤ t_n), and the
//! rotated second-order cones of the Shared SVM step (t_n·α_n ≥ N_n), with sparse constraint
//! rows; it is deterministic, so the same graph gives the same α. On trees the leaf sums are
//! written with prefix-sum variables R_n = R_parent + α_n (three non-zeros per row) instead of
//! one row per leaf over Ā(l).

pub mod conic;
pub mod maxmin;
pub mod nhsvm3;
pub mod paths;
pub mod platt;
pub mod power;
pub mod shared_conic;
pub mod shared_tree;

pub use bicrit_structures::hierarchy::HierarchyGraph;

pub use self::maxmin::MaxMinAlpha;
pub use self::nhsvm3::{Nhsvm3Params, Nhsvm3Sgd, Nhsvm3Stats};
pub use self::paths::LeafPaths;
pub use self::power::{PowerAlpha, PowerMethod};
pub use self::shared_conic::SharedConicAlpha;
pub use self::shared_tree::SharedTreeAlpha;

use bicrit_core::{Error, Result};

/// How the sums Σ_{n ∈ Ā(l)} α_n over the leaves l are constrained.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum LeafSum {
    /// Σ = 1 (thesis eq. `alpha`).
    Exact,
    /// 1 ≤ Σ ≤ T (thesis eq. `con:range`, for DAGs; T ≥ 1).
    Range(f64),
    /// Σ ≤ 1 (the Shared SVM α step, eq. `optimize_alpha`).
    AtMost,
}

impl LeafSum {
    /// Validates T.
    pub fn check(self) -> Result<Self> {
        if let LeafSum::Range(t) = self {
            if !(t.is_finite() && t >= 1.0) {
                return Err(Error::param(format!("T must be finite and ≥ 1, got {t}")));
            }
        }
        Ok(self)
    }

    /// (lower, upper) bounds on a leaf sum.
    pub fn bounds(self) -> (f64, f64) {
        match self {
            LeafSum::Exact => (1.0, 1.0),
            LeafSum::Range(t) => (1.0, t),
            LeafSum::AtMost => (f64::NEG_INFINITY, 1.0),
        }
    }
}

/// How an α was computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    /// A closed-form O(M) recursion on a tree.
    ClosedForm,
    /// A conic program (clarabel).
    Conic,
}

impl Method {
    /// Lower-case name, as reported to Python.
    pub fn name(self) -> &'static str {
        match self {
            Method::ClosedForm => "closed_form",
            Method::Conic => "conic",
        }
    }
}

/// Node weights and the value of the problem that chose them.
#[derive(Clone, Debug, PartialEq)]
pub struct AlphaSolution {
    /// α_n ≥ 0 per node.
    pub alpha: Vec<f64>,
    /// The solver's objective at `alpha` (recomputed from `alpha`).
    pub objective: f64,
    /// How it was computed.
    pub method: Method,
}

/// A solver of one of the α problems (see the crate documentation).
pub trait AlphaSolver {
    /// Name for messages and reports.
    fn name(&self) -> &'static str;
    /// α for the graph `g`.
    fn solve(&self, g: &HierarchyGraph) -> Result<AlphaSolution>;
    /// The problem's objective at `alpha` on `g` (for tests and reports).
    fn objective(&self, g: &HierarchyGraph, alpha: &[f64]) -> f64;
}

/// Clears the round-off of an interior-point solution: negatives (≥ −tol) become 0.
pub(crate) fn clean_nonneg(x: &mut [f64]) {
    for v in x {
        if *v < 0.0 {
            *v = 0.0;
        }
    }
}
