//! What each built-in structure is, in words, and which optional oracle queries it can answer
//! (the union over its modes; an instance's `capabilities` is exact for its own mode). The
//! Python registry, `bicrit plugins` and the documentation's tables are generated from this
//! catalog.

use bicrit_core::{Capabilities, Error, Result, Terms};
use bicrit_surrogates::Surrogate;

/// One built-in structure, described.
#[derive(Clone, Copy, Debug)]
pub struct Info {
    /// Registry name.
    pub name: &'static str,
    /// The label space, features, loss and oracles.
    pub description: &'static str,
    /// The optional queries some instance of it answers.
    pub capabilities: Capabilities,
    /// When an instance answers fewer than [`Info::capabilities`].
    pub note: &'static str,
    /// Whether its frontier by loss value costs about one λ-query (one pass over the labels it
    /// enumerates anyway), so that the one-call `frontier` search is the cheapest exact search
    /// ([`auto_search`]). A chain's frontier DP carries a loss count: O(T) λ-queries' work.
    pub frontier_one_pass: bool,
}

const fn caps(ban: bool, kbest: bool, cone: bool, relaxed: bool, frontier: bool) -> Capabilities {
    Capabilities { ban, kbest, cone, relaxed, frontier }
}

/// The built-in structures.
pub const INFO: [Info; 5] = [
    Info {
        name: "multiclass",
        description: "one weight block per class, 0-1 loss, enumeration oracle",
        capabilities: caps(true, true, true, false, true),
        note: "",
        frontier_one_pass: true,
    },
    Info {
        name: "multilabel",
        description: "pairwise binary MRF over K labels (edges auto/full/tree/chain/explicit; auto: full \
                      up to 16 labels, the Chow–Liu tree beyond), Hamming loss; inference='exact' \
                      enumerates (K ≤ 16: ban list, k-best, cone), 'tree' runs the exact tree DP on a \
                      forest (O(K)), 'relaxed' solves the local-polytope LP by QPBO max-flow (cone via \
                      the LP; answers may be fractional); exact inference also gives the frontier by \
                      loss value (best label for every Hamming distance) in the same one pass",
        capabilities: caps(true, true, true, true, true),
        note: "exact inference: ban, kbest, cone, frontier; tree inference: λ-queries only; relaxed inference: cone, relaxed",
        frontier_one_pass: true,
    },
    Info {
        name: "chain",
        description: "first-order linear chain (sequence labeling / NER): Viterbi, exact k-best, ban \
                      lists; token Hamming or chunk-level segment loss; frontier by loss value (best \
                      label for every number of wrong tokens, one DP) with the Hamming loss",
        capabilities: caps(true, true, false, false, true),
        note: "frontier with loss='hamming' only",
        frontier_one_pass: false,
    },
    Info {
        name: "dependency",
        description: "arc-factored dependency trees with labeled arcs, hashed arc features, head + \
                      label Hamming loss; projective Eisner or non-projective Chu-Liu-Edmonds, both \
                      with k-best lists and ban lists",
        capabilities: caps(true, true, false, false, false),
        note: "",
        frontier_one_pass: false,
    },
    Info {
        name: "hierarchy",
        description: "tree or DAG hierarchy, ancestor-closed (any or leaf-terminated) labels, \
                      node/leaf Hamming; tree DP, min-cut, LP + integer program",
        capabilities: caps(true, true, true, false, false),
        note: "cone with multilabel=False only",
        frontier_one_pass: false,
    },
];

/// The search `search="auto"` runs for surrogate `psi` on an instance of the structure named
/// `structure` whose oracle answers `caps`: the one place this choice is made (estimators,
/// `bicrit train`, `bicrit.scores`, `bicrit.torch`). `integral` asks for the exact maximum of ψ
/// over the integral labels (score-level losses); training also takes the maximum over their
/// convex hull (a fractional answer on a hull edge).
///
/// 1. A linear ψ (margin rescaling, [`Surrogate::exact_lambda`]): `convex-hull`, whose first
///    λ-query is exact and certifies itself (one call).
/// 2. `frontier` where the structure's frontier by loss value costs one λ-query
///    ([`Info::frontier_one_pass`]: multiclass, multi-label with exact inference) and g is a
///    function of the loss alone: the exact integral optimum in one call, where the convex hull
///    search needs a certificate call whenever the hull moved (issue 16: 2.1 calls per
///    inference late in training on yeast).
/// 3. With `integral`: the convex hull search with ban lists or k-best (exact integral), else
///    the frontier DP (exact, one call of O(T) λ-queries' work on chains), else `convex-hull`.
/// 4. Otherwise the warm-started `convex-hull` search (thesis Alg. `alg:convexhull_search`):
///    on chains its 1.6 calls per inference (O(T·S²) each) cost less than one frontier DP
///    (O(T²·S²)); benches/RESULTS.md, "Epoch costs".
pub fn auto_search(structure: &str, psi: &dyn Surrogate, caps: Capabilities, integral: bool) -> &'static str {
    if psi.exact_lambda().is_some_and(|l| l.is_finite() && l > 0.0) {
        return "convex-hull";
    }
    let frontier = caps.frontier && psi.factor_map(&Terms::default()).g_by_loss();
    let one_pass = info(structure).is_ok_and(|i| i.frontier_one_pass);
    if frontier && one_pass {
        "frontier"
    } else if !integral {
        "convex-hull"
    } else if caps.ban {
        "convex-hull-ban"
    } else if caps.kbest {
        "convex-hull-kbest"
    } else if frontier {
        "frontier"
    } else {
        "convex-hull"
    }
}

/// The description of the built-in structure `name`.
pub fn info(name: &str) -> Result<&'static Info> {
    INFO.iter().find(|i| i.name == name).ok_or_else(|| {
        let known: Vec<&str> = INFO.iter().map(|i| i.name).collect();
        Error::param(format!("unknown structure '{name}'; known structures: {}", known.join(", ")))
    })
}
