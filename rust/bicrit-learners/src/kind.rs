//! Which learner ([`Kind`]), and which learner × search × surrogate × oracle combinations are
//! accepted ([`check_compatible`]; docs/architecture.md "Which pieces combine").

use bicrit_core::{Capabilities, Error, Result, Terms};
use bicrit_searches::SearchSpec;
use bicrit_surrogates::Surrogate;

use crate::{catalog, params, Value};

/// Registry names of the learners.
pub const NAMES: [&str; 4] = ["sgd", "bcfw", "cutting-plane", "cutting-plane-n"];

/// Which learner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// SGD / Pegasos on the primal.
    Sgd,
    /// Block-coordinate Frank–Wolfe.
    Bcfw,
    /// 1-slack cutting plane.
    CuttingPlane,
    /// n-slack cutting plane.
    CuttingPlaneN,
}

impl Kind {
    /// The learner registered as `name`.
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "sgd" => Kind::Sgd,
            "bcfw" => Kind::Bcfw,
            "cutting-plane" => Kind::CuttingPlane,
            "cutting-plane-n" => Kind::CuttingPlaneN,
            _ => {
                return Err(Error::param(format!(
                    "unknown learner '{name}'; known learners: {}",
                    NAMES.join(", ")
                )))
            }
        })
    }

    /// Registry name.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Sgd => "sgd",
            Kind::Bcfw => "bcfw",
            Kind::CuttingPlane => "cutting-plane",
            Kind::CuttingPlaneN => "cutting-plane-n",
        }
    }

    /// Whether the learner needs each corner's intercept, i.e. a loss that is a maximum of functions
    /// affine in w (ψ affine in h).
    pub fn needs_affine(self) -> bool {
        !matches!(self, Kind::Sgd)
    }
}

/// Checks learner × search × surrogate × oracle capabilities
/// and refuses the rest with an [`Error::Incompatible`] naming the pieces and what would work.
pub fn check_compatible(
    kind: Kind,
    psi: &dyn Surrogate,
    search: &SearchSpec,
    caps: Capabilities,
) -> Result<()> {
    if search.requirements().frontier && !psi.factor_map(&Terms::default()).g_by_loss() {
        return Err(Error::incompatible(format!(
            "search '{}' takes the best label for every task-loss value, which is the best for every g only \
             when g is a function of the loss; surrogate '{}' has another g (Micro-F1: g = −(|y| + |y_i|)) — \
             use 'convex-hull' (or 'convex-hull-ban' for integral answers)",
            search.name(),
            psi.name()
        )));
    }
    search.check(psi, caps)?;
    let learner = kind.name();
    if kind.needs_affine() && !psi.affine_in_h() {
        return Err(Error::incompatible(format!(
            "learner '{learner}' needs a loss that is a maximum of functions affine in w (ψ affine in h, \
             so that each corner has an intercept ψ − ψ_h·h), and surrogate '{}' is not; use learner \
             'sgd', which works with every surrogate",
            psi.name()
        )));
    }
    if search.requirements().xi && !catalog::provides_xi(kind) {
        return Err(Error::incompatible(format!(
            "search '{}' needs the instance's slack ξ_i, which only learner 'cutting-plane-n' (n-slack) \
             maintains; learner '{learner}' cannot run it — use 'convex-hull' (any surrogate) or, for \
             slack rescaling, 'angular'/'bisecting'/'binary'",
            search.name()
        )));
    }
    Ok(())
}

/// Parses `params` for learner `kind` without building it: unknown names and values outside their
/// domain are [`Error::InvalidParameter`] errors naming the parameter.
pub fn check_params(kind: Kind, params: &[(String, Value)]) -> Result<()> {
    match kind {
        Kind::Sgd => params::SgdParams::parse(params).map(|_| ()),
        Kind::Bcfw => params::BcfwParams::parse(params).map(|_| ()),
        Kind::CuttingPlane => params::CpParams::parse(params, false).map(|_| ()),
        Kind::CuttingPlaneN => params::CpParams::parse(params, true).map(|_| ()),
    }
}
