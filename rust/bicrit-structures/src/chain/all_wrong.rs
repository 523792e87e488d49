//! The largest-loss query of a chain under the token Hamming loss as one plain Viterbi.
//!
//! The lexicographic query λ = ∞ (largest g, ties broken by largest h; docs/architecture.md,
//! Objects; thesis eq. `lambda_oracle` with λ → ∞) asks, for g = c·L with c > 0 and L the number
//! of wrong tokens, for the best label among those of largest loss. Every score is finite, so with
//! S ≥ 2 tags some label gets every token wrong: the labels of largest loss are exactly those with
//! y_t ≠ g_t at every t, and the query is a Viterbi over the secondary objective with the gold tag
//! of every position removed (its node score −∞). That is one dense `f64` pass instead of the
//! dense pass over (primary, secondary) pairs, with the same answer: at every cell of the
//! lexicographic pass the best prefix is an all-wrong one when one exists (it has the larger
//! primary), the secondary sums are the same floating-point operations in the same order, and
//! ties go to the same (smallest) predecessor and final state. With S = 1 no label is all wrong;
//! the caller then runs the lexicographic pass.

use bicrit_core::Objective;

use super::{fold_into, viterbi_dense_in, ChainLoss, QueryBuffers, RawScores, Tags};

/// Whether `primary` is c·(number of wrong tokens) with c > 0 under `loss`: a query whose
/// primary objective is maximised exactly by the labels with every token wrong.
pub(super) fn maximises_token_errors(loss: ChainLoss, primary: &Objective) -> bool {
    let t = &primary.terms;
    loss == ChainLoss::Hamming && primary.margin == 0.0 && t.loss > 0.0 && t.size == 0.0 && t.hamming == 0.0
}

/// The best label under `objective` among those with y_t ≠ `y_true[t]` at every position (None
/// when there is none, i.e. S = 1), in `buf`'s tables and arrays.
pub(super) fn best_all_wrong(
    raw: &RawScores<'_>,
    tags: &Tags,
    loss: ChainLoss,
    y_true: &[usize],
    objective: &Objective,
    buf: &mut QueryBuffers,
) -> Option<Vec<usize>> {
    fold_into(&mut buf.tables, raw, tags, loss, Some(y_true), objective, None);
    let s_n = raw.n_states;
    for (t, &g) in y_true.iter().enumerate() {
        buf.tables.node[t * s_n + g] = f64::NEG_INFINITY;
    }
    viterbi_dense_in(&buf.tables, &mut buf.dp)
}
