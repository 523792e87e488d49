//! Label structures: joint feature map, task loss, decomposable terms and oracles
//! (docs/architecture.md, Structures). The family trait is [`Structure`]; each structure lives in its own module.
//! [`StructureOracle`] turns (structure, weights, instance, surrogate factor map) into the
//! plane-level [`bicrit_core::LambdaOracle`] that every search drives.

pub mod adapter;
pub mod catalog;
pub mod chain;
pub mod dependency;
pub mod hierarchy;
pub mod multiclass;
pub mod multilabel;
pub mod scores;
pub mod select;

pub use adapter::StructureOracle;
pub use chain::{Chain, ChainData, ChainLoss, TagScheme};
pub use dependency::{DepLabel, Dependency};
pub use hierarchy::HierarchyStructure;
pub use multiclass::Multiclass;
pub use multilabel::{MlLabel, Multilabel};

use bicrit_core::{Capabilities, Cone, Objective, Result, SparseVec, Terms};

/// A structure-level oracle query: maximise `primary` over labels (ties broken by `secondary`
/// when given, lexicographically), excluding `ban`, returning the `k` best, within `cone`.
#[derive(Clone, Debug)]
pub struct TermQuery<'a, L> {
    /// The objective `margin·m(y) + Σ_t c_t·term_t(y)` to maximise.
    pub primary: Objective,
    /// Tie-breaking objective (lexicographic queries λ ∈ {0, ∞}); `None`: any deterministic tie-break.
    pub secondary: Option<Objective>,
    /// Labels to exclude (needs `capabilities().ban` when non-empty).
    pub ban: &'a [L],
    /// Number of best labels wanted (needs `capabilities().kbest` when > 1).
    pub k: usize,
    /// Slope interval in (1 + m, loss) coordinates (needs `capabilities().cone`).
    pub cone: Option<Cone>,
}

impl<'a, L> TermQuery<'a, L> {
    /// Plain loss-augmented inference `argmax m(y) + λ L(y, y_i)`.
    pub fn loss_augmented(lam: f64) -> Self {
        TermQuery { primary: Objective::loss_augmented(lam), secondary: None, ban: &[], k: 1, cone: None }
    }
}

/// A label returned by a structure's oracle, with its margin and term values so that searches
/// never recompute them.
#[derive(Clone, Debug, PartialEq)]
pub struct Scored<L> {
    /// The label.
    pub label: L,
    /// m(y) = w·φ(x, y) − w·φ(x, y_i).
    pub margin: f64,
    /// Decomposable terms of y against y_i.
    pub terms: Terms,
}

/// A label structure with its oracle (docs/architecture.md, Structures).
///
/// `Data` holds the inputs of a whole dataset; instances are addressed by index. Implementations
/// validate inputs on construction of `Data` and labels in [`Structure::check_label`], so that the
/// inner loops never panic on user input.
pub trait Structure: Send + Sync {
    /// Label objects (integral, or relaxed where the structure says so).
    type Label: Clone + PartialEq + std::fmt::Debug + Send + Sync;
    /// Inputs of a dataset.
    type Data: Send + Sync;

    /// Registry name.
    fn name(&self) -> &str;

    /// Number of instances in `data`.
    fn n_instances(&self, data: &Self::Data) -> usize;

    /// Length of the joint feature vector φ(x, y).
    fn size_joint_feature(&self) -> usize;

    /// Optional queries the oracle answers.
    fn capabilities(&self) -> Capabilities;

    /// Fails with a clear [`bicrit_core::Error::InvalidInput`] when `y` is not a label of instance `i`.
    fn check_label(&self, data: &Self::Data, i: usize, y: &Self::Label) -> Result<()>;

    /// An upper bound on the task loss L(y, `y_true`) over every label y of instance `i`, when
    /// the structure knows one cheaply (a chain's token Hamming loss: its length); `None` (the
    /// default) when not. [`StructureOracle`] turns it into [`bicrit_core::LambdaOracle::g_bound`].
    fn max_loss(&self, data: &Self::Data, i: usize, y_true: &Self::Label) -> Option<f64> {
        let _ = (data, i, y_true);
        None
    }

    /// A lower bound on the task loss L(y, `y_true`) over every label y ≠ `y_true` the oracle of
    /// instance `i` may return, when the structure knows one above 0 (an integral loss that is
    /// zero at the gold label only: a chain's token Hamming loss is at least 1 elsewhere); `None`
    /// (the default) when not. [`StructureOracle`] turns it into
    /// [`bicrit_core::LambdaOracle::g_floor`].
    fn loss_floor(&self, data: &Self::Data, i: usize, y_true: &Self::Label) -> Option<f64> {
        let _ = (data, i, y_true);
        None
    }

    /// φ(x_i, y) as a sparse vector (indices may repeat).
    fn joint_feature(&self, data: &Self::Data, i: usize, y: &Self::Label) -> Result<SparseVec>;

    /// Decomposable terms of `y` against `y_true` (fails when the two are not labels of the
    /// same instance, e.g. sequences of different lengths).
    fn terms(&self, y: &Self::Label, y_true: &Self::Label) -> Result<Terms>;

    /// argmax_y w·φ(x_i, y); always an integral label.
    fn predict(&self, w: &[f64], data: &Self::Data, i: usize) -> Result<Self::Label>;

    /// Answers a [`TermQuery`] for instance `i` with gold label `y_true`; best first.
    fn oracle(
        &self,
        w: &[f64],
        data: &Self::Data,
        i: usize,
        y_true: &Self::Label,
        q: &TermQuery<'_, Self::Label>,
    ) -> Result<Vec<Scored<Self::Label>>>;

    /// w·φ(x_i, y).
    fn score(&self, w: &[f64], data: &Self::Data, i: usize, y: &Self::Label) -> Result<f64> {
        Ok(self.joint_feature(data, i, y)?.dot(w))
    }

    /// Adds Σ_j t_j·(φ(x_i, y_j) − φ(x_i, y_i)) over the `answer`'s (label, weight) pairs to
    /// `add`, entry by entry (indices may repeat), touching only the parts where y_j and y_i
    /// differ, when the structure can (a chain: the tokens and transitions that differ; late in
    /// training a handful of a sentence's tokens). `Ok(false)` (the default): the learner builds
    /// the difference from whole joint feature vectors instead.
    fn add_feature_difference(
        &self,
        data: &Self::Data,
        i: usize,
        y_true: &Self::Label,
        answer: &[(&Self::Label, f64)],
        add: &mut dyn FnMut(usize, f64),
    ) -> Result<bool> {
        let _ = (data, i, y_true, answer, add);
        Ok(false)
    }

    /// The difference of [`Structure::add_feature_difference`] written into `out` (empty on
    /// entry) when the structure knows that its entries have distinct indices and no exact
    /// zeros: `out` then holds what accumulating them gives (first-touch order), bit for bit,
    /// without the accumulator's dense pass, and the answer is `Ok(true)`. `Ok(false)` (the
    /// default): the learner accumulates [`Structure::add_feature_difference`]'s entries.
    fn write_feature_difference(
        &self,
        data: &Self::Data,
        i: usize,
        y_true: &Self::Label,
        answer: &[(&Self::Label, f64)],
        out: &mut SparseVec,
    ) -> Result<bool> {
        let _ = (data, i, y_true, answer, out);
        Ok(false)
    }

    /// Scores of instance `i` under `w` that every query of one inference can share, such as a
    /// chain's emission scores w·x_t (the costly part of a Viterbi call on NER features).
    /// [`StructureOracle`] computes them once per inference, when first needed, and hands them to
    /// [`Structure::oracle_shared`], [`Structure::frontier_shared`] and
    /// [`Structure::score_shared`], so that a search's certificate calls and warm-start
    /// re-evaluations cost only the DP. `None` (the default): nothing worth sharing.
    fn shared_scores(&self, w: &[f64], data: &Self::Data, i: usize) -> Result<Option<Vec<f64>>> {
        let _ = (w, data, i);
        Ok(None)
    }

    /// [`Structure::oracle`] given the [`Structure::shared_scores`] of the same `w` and `i`
    /// (the default ignores them).
    fn oracle_shared(
        &self,
        w: &[f64],
        data: &Self::Data,
        i: usize,
        y_true: &Self::Label,
        q: &TermQuery<'_, Self::Label>,
        shared: Option<&[f64]>,
    ) -> Result<Vec<Scored<Self::Label>>> {
        let _ = shared;
        self.oracle(w, data, i, y_true, q)
    }

    /// [`Structure::frontier`] given the [`Structure::shared_scores`] of the same `w` and `i`
    /// (the default ignores them).
    fn frontier_shared(
        &self,
        w: &[f64],
        data: &Self::Data,
        i: usize,
        y_true: &Self::Label,
        objective: &Objective,
        shared: Option<&[f64]>,
    ) -> Result<Vec<Scored<Self::Label>>> {
        let _ = shared;
        self.frontier(w, data, i, y_true, objective)
    }

    /// [`Structure::score`] given the [`Structure::shared_scores`] of the same `w` and `i`
    /// (the default ignores them).
    fn score_shared(
        &self,
        w: &[f64],
        data: &Self::Data,
        i: usize,
        y: &Self::Label,
        shared: Option<&[f64]>,
    ) -> Result<f64> {
        let _ = shared;
        self.score(w, data, i, y)
    }

    /// Asks the CPU to fetch `labels` into its caches (no effect on any result): a search's
    /// warm-start labels, read once an epoch, are cold; fetched while the shared scores are being
    /// computed, their reads by [`Structure::evaluate_shared`] do not wait on memory. The default
    /// does nothing.
    fn prefetch_labels(&self, labels: &[Self::Label]) {
        let _ = labels;
    }

    /// The margins m(y) = w·φ(x_i, y) − w·φ(x_i, y_i) and terms of labels known from earlier (a
    /// search's warm start), in order, given the [`Structure::shared_scores`]
    /// of the same `w` and `i`: the default is [`Structure::score_shared`] and
    /// [`Structure::terms`] label by label; a structure may validate the instance and the gold
    /// label once and score each label in one pass (the same values).
    fn evaluate_shared(
        &self,
        w: &[f64],
        data: &Self::Data,
        i: usize,
        y_true: &Self::Label,
        labels: &[Self::Label],
        shared: Option<&[f64]>,
    ) -> Result<Vec<(f64, Terms)>> {
        let gold = self.score_shared(w, data, i, y_true, shared)?;
        labels
            .iter()
            .map(|y| Ok((self.score_shared(w, data, i, y, shared)? - gold, self.terms(y, y_true)?)))
            .collect()
    }

    /// The frontier by loss value (needs `capabilities().frontier`): for every attainable value
    /// c of the task loss L(y, y_i), one label maximising `objective` among the labels with
    /// L = c (any of them on ties), with its margin and terms; one entry per attainable c, in any
    /// order. [`StructureOracle`] maps it to the plane when g depends on the loss alone
    /// (the `frontier` search, docs/architecture.md, Searches). The default refuses.
    fn frontier(
        &self,
        w: &[f64],
        data: &Self::Data,
        i: usize,
        y_true: &Self::Label,
        objective: &Objective,
    ) -> Result<Vec<Scored<Self::Label>>> {
        let _ = (w, data, i, y_true, objective);
        Err(bicrit_core::Error::unsupported(format!(
            "structure '{}' has no frontier query (best label for every loss value)",
            self.name()
        )))
    }
}
