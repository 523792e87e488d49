//! What an epoch and a pass of inferences report: [`EpochStats`] (flattened by the bindings in
//! the order of [`STAT_KEYS`]) and [`PassCounts`].

use bicrit_searches::Calls;

use crate::Violation;

/// How an epoch's objective was obtained.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectiveKind {
    /// ½‖w‖² at the end of the epoch plus C times the losses met during the epoch (each at the
    /// weights of its own inference): free, an estimate.
    Running,
    /// A full inference pass at the returned weights.
    Exact,
}

impl ObjectiveKind {
    /// `"running"` or `"exact"`.
    pub fn name(self) -> &'static str {
        match self {
            ObjectiveKind::Running => "running",
            ObjectiveKind::Exact => "exact",
        }
    }
}

/// What one epoch reports (the bindings turn it into a flat dict; see [`STAT_KEYS`]).
#[derive(Clone, Debug, PartialEq)]
pub struct EpochStats {
    /// 1-based epoch number.
    pub epoch: usize,
    /// Primal objective ½‖w‖² + C·Σℓ_i (see `objective_kind`).
    pub objective: f64,
    /// How `objective` and `loss` were obtained.
    pub objective_kind: ObjectiveKind,
    /// Mean surrogate loss (1/n)·Σℓ_i, same kind as `objective`.
    pub loss: f64,
    /// ‖w‖² of the weights `objective` refers to.
    pub norm_sq: f64,
    /// Dual objective (BCFW, cutting plane), same scale as `objective`.
    pub dual: Option<f64>,
    /// Duality gap (BCFW: running sum of block gaps, or exact; cutting plane: exact).
    pub gap: Option<f64>,
    /// Whether the learner's stopping test holds (BCFW: relative gap ≤ tol; cutting plane: the
    /// most violated constraint within eps). SGD has no certificate and never converges.
    pub converged: bool,
    /// Oracle calls of the epoch's searches (training inferences only, not the exact pass).
    pub calls: Calls,
    /// Number of training inferences (searches) of the epoch.
    pub inferences: usize,
    /// Answers that were a point inside a hull edge.
    pub fractional: usize,
    /// Answers that were the gold label (zero loss).
    pub gold: usize,
    /// Wall time of the epoch in seconds (the exact pass included).
    pub time: f64,
    /// SGD: the step size of the last step.
    pub step_size: Option<f64>,
    /// Cutting plane: number of constraints in the working set after the epoch.
    pub working_set: Option<usize>,
    /// Mean task loss of the predictions on the training set (with `task_loss=True`).
    pub task_loss: Option<f64>,
    /// Oracle calls of the exact pass (not counted in `calls`).
    pub exact_calls: Option<usize>,
}

/// Keys of the stats dict, in order (the Python history's columns).
pub const STAT_KEYS: [&str; 26] = [
    "epoch",
    "learner",
    "objective",
    "objective_kind",
    "loss",
    "norm_sq",
    "dual",
    "gap",
    "converged",
    "calls",
    "calls_lambda",
    "calls_extreme",
    "calls_cone",
    "calls_ban",
    "calls_kbest",
    "calls_frontier",
    "evaluated",
    "inferences",
    "calls_per_inference",
    "fractional",
    "gold",
    "time",
    "step_size",
    "working_set",
    "task_loss",
    "exact_calls",
];

/// Adds the counts of `b` to `a`.
pub fn add_calls(a: &mut Calls, b: &Calls) {
    a.lambda += b.lambda;
    a.extreme += b.extreme;
    a.cone += b.cone;
    a.ban += b.ban;
    a.kbest += b.kbest;
    a.frontier += b.frontier;
    a.evaluated += b.evaluated;
}

/// Counters of one pass of inferences.
#[derive(Clone, Debug, Default)]
pub struct PassCounts {
    /// Σ ℓ_i.
    pub loss: f64,
    /// Σ max(0, ℓ_i)²: the squared slacks (`slack_norm=2`).
    pub loss_sq: f64,
    /// Oracle calls.
    pub calls: Calls,
    /// Inferences.
    pub inferences: usize,
    /// Fractional answers.
    pub fractional: usize,
    /// Gold answers.
    pub gold: usize,
}

impl PassCounts {
    /// Σ_i ξ_i^p, the slack term of the objective for slack norm p (1: Σ ℓ_i, 2: Σ max(0, ℓ_i)²).
    pub fn slacks(&self, slack_norm: u8) -> f64 {
        if slack_norm == 2 {
            self.loss_sq
        } else {
            self.loss
        }
    }

    /// Records one inference.
    pub fn record<L>(&mut self, v: &Violation<L>) {
        self.loss += v.loss;
        self.loss_sq += v.loss.max(0.0).powi(2);
        add_calls(&mut self.calls, &v.calls);
        self.inferences += 1;
        self.fractional += usize::from(v.fractional);
        self.gold += usize::from(v.is_gold);
    }
}
