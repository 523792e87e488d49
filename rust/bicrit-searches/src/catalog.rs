//! What each built-in search is, in words: what it does, what it guarantees and over which
//! label set (thesis chapters `cha:inference` and `cha:inference2`). What it needs from the
//! surrogate and the oracle is [`crate::SearchSpec::requirements`], decided by the search
//! itself. The Python registry, `bicrit plugins` and the documentation's tables are generated
//! from this catalog.

use bicrit_core::{Error, Result};

/// One built-in search, described.
#[derive(Clone, Copy, Debug)]
pub struct Info {
    /// Registry name.
    pub name: &'static str,
    /// What it does.
    pub description: &'static str,
    /// What it guarantees.
    pub guarantee: &'static str,
    /// The label set it optimises over.
    pub target: &'static str,
}

/// The built-in searches, in the order of [`crate::NAMES`].
pub const INFO: [Info; 8] = [
    Info {
        name: "sarawagi",
        description: "Sarawagi–Gupta: golden-section search on the convex bound of the cutting-plane form",
        guarantee: "approximate",
        target: "integral",
    },
    Info {
        name: "binary",
        description: "binary search on the convex upper bound F̄(λ) (Lemma binary_upper)",
        guarantee: "approximate",
        target: "integral",
    },
    Info {
        name: "bisecting",
        description: "bisecting search (Alg. bisecting), warm-startable from λ",
        guarantee: "approximate",
        target: "integral",
    },
    Info {
        name: "angular",
        description: "angular search with the constrained λ-oracle (Alg. angular)",
        guarantee: "exact, ≤ 2M + 3 calls; (1 + eps)-optimal with eps > 0",
        target: "integral",
    },
    Info {
        name: "convex-hull",
        description: "convex hull search (Alg. convexhull_search) with the optimal λ at each step",
        guarantee: "exact over the convex hull, ≤ chain vertices + 1 calls",
        target: "convex hull (fractional answers on an edge)",
    },
    Info {
        name: "convex-hull-ban",
        description: "convex hull search + ban-list recovery of the exact integral optimum",
        guarantee: "exact",
        target: "integral",
    },
    Info {
        name: "convex-hull-kbest",
        description: "convex hull search + k-best recovery of the exact integral optimum",
        guarantee: "exact",
        target: "integral",
    },
    Info {
        name: "frontier",
        description: "best label for every loss value (one frontier call), then the best of them under ψ",
        guarantee: "exact, 1 call",
        target: "integral",
    },
];

/// The description of the built-in search `name`.
pub fn info(name: &str) -> Result<&'static Info> {
    INFO.iter().find(|i| i.name == name).ok_or_else(|| {
        Error::param(format!("unknown search '{name}'; known searches: {}", crate::NAMES.join(", ")))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_is_described() {
        assert_eq!(INFO.map(|i| i.name), crate::NAMES);
        for i in INFO {
            assert_eq!(crate::SearchSpec::from_name(i.name).unwrap().name(), i.name);
        }
    }
}
