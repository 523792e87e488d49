//! What each learner is, in words. What it needs from the surrogate is [`crate::Kind`]'s
//! (`needs_affine`), which searches it can run is [`crate::check_compatible`]'s, and its
//! parameters are [`crate::params::docs`]'s: the Python registry, `bicrit plugins` and the
//! documentation's tables are generated from these.

use crate::Kind;

/// One learner, described.
#[derive(Clone, Copy, Debug)]
pub struct Info {
    /// Registry name.
    pub name: &'static str,
    /// The algorithm and its features.
    pub description: &'static str,
}

/// The description of learner `kind`.
pub fn info(kind: Kind) -> Info {
    let description = match kind {
        Kind::Sgd => "SGD / Pegasos on the primal (lazy scaling, lazy averaging, parallel blocks)",
        Kind::Bcfw => {
            "block-coordinate Frank–Wolfe (Lacoste-Julien et al. 2013) with line search, weighted \
             averaging and duality gap"
        }
        Kind::CuttingPlane => "1-slack cutting plane (Joachims et al. 2009), dual QP by clarabel",
        Kind::CuttingPlaneN => {
            "n-slack cutting plane (Tsochantaridis et al.), dual QP by clarabel; gives searches \
             the instance's slack ξ_i"
        }
    };
    Info { name: kind.name(), description }
}

/// Whether learner `kind` maintains the slack ξ_i of each instance (what Sarawagi–Gupta needs).
pub fn provides_xi(kind: Kind) -> bool {
    kind == Kind::CuttingPlaneN
}

/// The slack norms learner `kind` trains with (its `slack_norm` parameter): 1, the objective
/// ½‖w‖² + C·Σ_i ξ_i, for every learner; 2, ½‖w‖² + C·Σ_i ξ_i², for BCFW only (its dual gains a
/// separable quadratic term and no box, see [`crate::bcfw`]). The one place this is decided.
pub fn slack_norms(kind: Kind) -> &'static [i64] {
    match kind {
        Kind::Bcfw => &[1, 2],
        Kind::Sgd | Kind::CuttingPlane | Kind::CuttingPlaneN => &[1],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_learner_is_described() {
        for name in crate::NAMES {
            let kind = Kind::from_name(name).unwrap();
            assert_eq!(info(kind).name, name);
        }
    }
}
