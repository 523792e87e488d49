//! The learner family trait ([`Learner`]) and [`AnyLearner`], which holds any learner built by
//! name and forwards to it.

use bicrit_core::{Error, Result};
use bicrit_searches::WarmStart;
use bicrit_structures::Structure;

use crate::{params, Bcfw, Context, CuttingPlane, EpochStats, Kind, Problem, Sgd, Value};

/// A learner: its state, one epoch at a time.
pub trait Learner<L>: Clone + Send {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// One pass over the training set. On error (or an interrupt) the state is that of the end of
    /// the previous epoch.
    fn epoch<S: Structure<Label = L>>(&mut self, p: &Problem<'_, S>, ctx: &Context<'_>)
        -> Result<EpochStats>;
    /// The weights: the averaged ones when `averaged` and the learner averages, else the iterate.
    fn weights(&self, averaged: bool) -> Vec<f64>;
    /// Number of epochs done.
    fn epochs(&self) -> usize;
}

/// Any learner, by name.
#[derive(Clone, Debug)]
pub enum AnyLearner<L> {
    /// `sgd`.
    Sgd(Sgd<L>),
    /// `bcfw`.
    Bcfw(Bcfw<L>),
    /// `cutting-plane` and `cutting-plane-n`.
    CuttingPlane(CuttingPlane<L>),
}

impl<L: Clone + PartialEq + Send + Sync> AnyLearner<L> {
    /// The learner `kind` with parameters `params` (names as in [`params::docs`]; unknown names
    /// and values outside their domain are [`Error::InvalidParameter`] errors) for `n` instances
    /// and `dim` joint features, starting from `w0` (zeros when None).
    pub fn new(
        kind: Kind,
        params: &[(String, Value)],
        n: usize,
        dim: usize,
        w0: Option<Vec<f64>>,
    ) -> Result<Self> {
        if let Some(w) = &w0 {
            if w.len() != dim {
                return Err(Error::input(format!(
                    "w0 has length {} but the joint feature size is {dim}",
                    w.len()
                )));
            }
            bicrit_core::error::check_finite("w0", w)?;
        }
        Ok(match kind {
            Kind::Sgd => AnyLearner::Sgd(Sgd::new(params::SgdParams::parse(params)?, n, dim, w0)?),
            Kind::Bcfw => AnyLearner::Bcfw(Bcfw::new(params::BcfwParams::parse(params)?, n, dim, w0)?),
            Kind::CuttingPlane | Kind::CuttingPlaneN => AnyLearner::CuttingPlane(CuttingPlane::new(
                params::CpParams::parse(params, kind == Kind::CuttingPlaneN)?,
                n,
                dim,
                w0,
            )?),
        })
    }

    /// The common parameters (C, n_jobs, random_state, …) the learner was built with.
    pub fn common(&self) -> &params::Common {
        match self {
            AnyLearner::Sgd(l) => &l.params.common,
            AnyLearner::Bcfw(l) => &l.params.common,
            AnyLearner::CuttingPlane(l) => &l.params.common,
        }
    }

    /// The power p of the slacks in the objective ½‖w‖² + C·Σ_i ξ_i^p (BCFW's `slack_norm`; 1
    /// for the other learners, [`crate::catalog::slack_norms`]).
    pub fn slack_norm(&self) -> u8 {
        match self {
            AnyLearner::Bcfw(l) => l.params.slack_norm,
            AnyLearner::Sgd(_) | AnyLearner::CuttingPlane(_) => 1,
        }
    }

    /// Every parameter with its effective value.
    pub fn effective_params(&self) -> Vec<(&'static str, Value)> {
        match self {
            AnyLearner::Sgd(l) => l.params.effective(),
            AnyLearner::Bcfw(l) => l.params.effective(),
            AnyLearner::CuttingPlane(l) => l.params.effective(),
        }
    }
}

impl<L: Clone + PartialEq + Send + Sync> Learner<L> for AnyLearner<L> {
    fn name(&self) -> &'static str {
        match self {
            AnyLearner::Sgd(l) => l.name(),
            AnyLearner::Bcfw(l) => l.name(),
            AnyLearner::CuttingPlane(l) => l.name(),
        }
    }
    fn epoch<S: Structure<Label = L>>(
        &mut self,
        p: &Problem<'_, S>,
        ctx: &Context<'_>,
    ) -> Result<EpochStats> {
        match self {
            AnyLearner::Sgd(l) => l.epoch(p, ctx),
            AnyLearner::Bcfw(l) => l.epoch(p, ctx),
            AnyLearner::CuttingPlane(l) => l.epoch(p, ctx),
        }
    }
    fn weights(&self, averaged: bool) -> Vec<f64> {
        match self {
            AnyLearner::Sgd(l) => l.weights(averaged),
            AnyLearner::Bcfw(l) => l.weights(averaged),
            AnyLearner::CuttingPlane(l) => l.weights(averaged),
        }
    }
    fn epochs(&self) -> usize {
        match self {
            AnyLearner::Sgd(l) => l.epochs(),
            AnyLearner::Bcfw(l) => l.epochs(),
            AnyLearner::CuttingPlane(l) => l.epochs(),
        }
    }
}

/// The slacks ξ_i of the n-slack working sets at the current weights (what the Sarawagi–Gupta
/// search needs in an exact pass); None for the other learners.
pub fn slacks<L: Clone + PartialEq + Send + Sync>(l: &AnyLearner<L>) -> Option<Vec<f64>> {
    match l {
        AnyLearner::CuttingPlane(x) if x.params.n_slack => Some(x.slacks()),
        _ => None,
    }
}

/// Per-instance warm starts of a learner (read-only use by exact passes).
pub fn warm_starts<L: Clone + PartialEq + Send + Sync>(l: &AnyLearner<L>) -> &[Option<WarmStart<L>>] {
    match l {
        AnyLearner::Sgd(x) => &x.warm,
        AnyLearner::Bcfw(x) => &x.warm,
        AnyLearner::CuttingPlane(x) => &x.warm,
    }
}
