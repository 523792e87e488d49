//! What each built-in structure is, in words, and which optional oracle queries it can answer
//! (the union over its modes; an instance's `capabilities` is exact for its own mode). The
//! Python registry, `bicrit plugins` and the documentation's tables are generated from this
//! catalog.

use bicrit_core::{Capabilities, Error, Result};

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
    },
    Info {
        name: "multilabel",
        description: "pairwise binary MRF over K labels (edges auto/full/tree/chain/explicit; auto: full \
                      up to 16 labels, the Chow–Liu tree beyond), Hamming loss; inference='exact' \
                      enumerates (K ≤ 16: ban list, k-best, cone), 'tree' runs the exact tree DP on a \
                      forest (O(K)), 'relaxed' solves the local-polytope LP by QPBO max-flow (cone via \
                      the LP; answers may be fractional)",
        capabilities: caps(true, true, true, true, false),
        note: "exact inference: ban, kbest, cone; tree inference: λ-queries only; relaxed inference: cone, relaxed",
    },
    Info {
        name: "chain",
        description: "first-order linear chain (sequence labeling / NER): Viterbi, exact k-best, ban \
                      lists; token Hamming or chunk-level segment loss; frontier by loss value (best \
                      label for every number of wrong tokens, one DP) with the Hamming loss",
        capabilities: caps(true, true, false, false, true),
        note: "frontier with loss='hamming' only",
    },
    Info {
        name: "dependency",
        description: "arc-factored dependency trees with labeled arcs, hashed arc features, head + \
                      label Hamming loss; projective Eisner or non-projective Chu-Liu-Edmonds, both \
                      with k-best lists and ban lists",
        capabilities: caps(true, true, false, false, false),
        note: "",
    },
    Info {
        name: "hierarchy",
        description: "tree or DAG hierarchy, ancestor-closed (any or leaf-terminated) labels, \
                      node/leaf Hamming; tree DP, min-cut, LP + integer program",
        capabilities: caps(true, true, true, false, false),
        note: "cone with multilabel=False only",
    },
];

/// The description of the built-in structure `name`.
pub fn info(name: &str) -> Result<&'static Info> {
    INFO.iter().find(|i| i.name == name).ok_or_else(|| {
        let known: Vec<&str> = INFO.iter().map(|i| i.name).collect();
        Error::param(format!("unknown structure '{name}'; known structures: {}", known.join(", ")))
    })
}
