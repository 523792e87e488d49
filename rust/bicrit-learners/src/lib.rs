//! Learners for structured SVMs with bi-criteria surrogates.
//!
//! Every learner minimises, in scikit-learn's sense of C,
//!
//! `P(w) = ½‖w‖² + C · Σ_i ℓ_i(w)`, `ℓ_i(w) = max_y ψ(h(y), g(y))`
//!
//! (the thesis's chapters 1–4 write (C_t/2)‖w‖² + (1/n)Σℓ_i, so C = 1/(n·C_t); the learners work
//! internally with λ = 1/(n·C), the Pegasos/BCFW form λ/2‖w‖² + (1/n)Σℓ_i, which is P/(n·C)). Every
//! objective, dual value and gap they report is in the scale of P. Loss-augmented inference is a
//! search over the structure's λ-oracle ([`Problem::infer`]); for relaxed searches (convex hull
//! without recovery) ℓ_i is the maximum of ψ over the convex hull of the labels, which bounds the
//! integral loss from above.
//!
//! | learner | module | surrogates | searches | objective reported |
//! |---|---|---|---|---|
//! | `sgd` | [`sgd`] | every ψ | every search but `sarawagi` | running estimate (exact on request) |
//! | `bcfw` | [`bcfw`] | affine in h | every search but `sarawagi` | running estimate + duality gap (exact on request) |
//! | `cutting-plane` (1-slack) | [`cutting_plane`] | affine in h | every search but `sarawagi` | exact, with the QP's dual |
//! | `cutting-plane-n` (n-slack) | [`cutting_plane`] | affine in h | every search | exact (one QP per pass) |
//!
//! The family trait is [`Learner`]; [`AnyLearner`] holds any of them, built by name from
//! parameters ([`AnyLearner::new`]) after [`check_compatible`] has refused combinations that do not
//! fit (docs/architecture.md, "Which pieces combine").
//!
//! **Determinism.** Instances are visited in a seeded order ([`rng`]); inferences that run in
//! parallel (a *block*) all use the weights at the start of the block, and their updates are
//! applied afterwards in the block's order, so the same `random_state` gives bit-identical weights
//! whatever the number of threads.

pub mod average;
pub mod bcfw;
pub mod catalog;
mod context;
pub mod cutting_plane;
mod dispatch;
mod journal;
mod kind;
pub mod params;
mod passes;
pub mod problem;
mod qp;
pub mod rng;
pub mod rounds;
pub mod scratch;
pub mod sgd;
mod stats;
#[cfg(test)]
mod tests;

pub use bcfw::Bcfw;
pub use context::{Context, Interrupt};
pub use cutting_plane::CuttingPlane;
pub use dispatch::{slacks, warm_starts, AnyLearner, Learner};
pub(crate) use journal::{install_warm, keep_warm, Journal};
pub use kind::{check_compatible, check_params, Kind, NAMES};
pub use params::{ParamDoc, Value};
pub use passes::{check_counts, exact_pass, objective, task_loss};
pub(crate) use passes::{check_size, infer_many};
pub use problem::{Prepared, Problem, Violation};
pub use sgd::Sgd;
pub use stats::{add_calls, EpochStats, ObjectiveKind, PassCounts, STAT_KEYS};
