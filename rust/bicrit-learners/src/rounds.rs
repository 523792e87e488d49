//! Partition-level passes for training on several machines (docs/distributed.md): each machine
//! holds a partition of the training set as a [`Problem`] and runs these passes at the weights the
//! coordinator sends; only weights and sums cross the network.
//!
//! * [`cut_pass`]: the 1-slack cutting plane's inference pass (Joachims, Finley & Yu 2009): the
//!   sum over the partition of the slopes c_i·Δφ_i and intercepts b_i of the answers at w. The
//!   sum of the partitions' cuts is the local learner's cut, up to the order of the sums
//!   ([`crate::CuttingPlane::round`] adds it and solves the QP).
//! * [`crate::Bcfw::local_round`]: a BCFW pass over the partition's own dual blocks from the
//!   global w, averaged with the other partitions' (CoCoA, Jaggi et al. 2014, with γ = 1/K).
//! * [`crate::Sgd::mixing_round`]: an SGD pass from the mixed weights (iterative parameter
//!   mixing, McDonald, Hall & Mann 2010).

use bicrit_core::{Result, SparseVec};
use bicrit_searches::WarmStart;
use bicrit_structures::Structure;

use crate::scratch::with_scratch;
use crate::{infer_many, keep_warm, params, Context, Journal, PassCounts, Problem};

/// Instances per partial sum of a cut's slope (a fixed split, so the sum's floating-point order
/// does not depend on `n_jobs`; at most one chunk below it, summed in the instances' order).
const CUT_CHUNK: usize = 256;

/// A 1-slack cut: slope Σ_i c_i·Δφ_i and intercept Σ_i b_i, with the pass's counters.
#[derive(Clone, Debug, Default)]
pub struct Cut {
    /// Σ_i c_i·Δφ_i (unique indices, first-touch order).
    pub slope: SparseVec,
    /// Σ_i (ψ_i − c_i·m_i).
    pub intercept: f64,
    /// Counters of the pass (Σ_i ℓ_i(w) in `loss`).
    pub counts: PassCounts,
}

/// One inference per instance at `w` (in parallel, in the order of the instances) and the sum of
/// their corners; the warm starts are updated. On error (or an interrupt) they are left as they
/// were.
pub fn cut_pass<S: Structure>(
    p: &Problem<'_, S>,
    ctx: &Context<'_>,
    w: &[f64],
    warm: &mut [Option<WarmStart<S::Label>>],
    common: &params::Common,
) -> Result<Cut>
where
    S::Label: Clone + PartialEq,
{
    crate::check_size(p, warm.len(), w.len())?;
    let mut journal = Journal::new();
    let out = cut_pass_logged(p, ctx, w, warm, common, &mut journal);
    if out.is_err() {
        journal.undo_warm(warm);
    }
    out
}

/// [`cut_pass`] with the replaced warm starts moved to `journal`.
pub(crate) fn cut_pass_logged<S: Structure>(
    p: &Problem<'_, S>,
    ctx: &Context<'_>,
    w: &[f64],
    warm: &mut [Option<WarmStart<S::Label>>],
    common: &params::Common,
    journal: &mut Journal<S::Label>,
) -> Result<Cut>
where
    S::Label: Clone + PartialEq,
{
    let idx: Vec<usize> = (0..p.n()).collect();
    let mut found = infer_many(p, ctx, &idx, w, 1.0, warm, None)?;
    // The slope Σ_i c_i·Δφ_i in two stages, so that most of the sum runs on the pool and its
    // floating-point order depends on the fixed chunks only (never on the number of threads):
    // each chunk of CUT_CHUNK instances summed in its order, in parallel, then the chunks' sums
    // added in order.
    let dim = p.dim();
    let chunks: Vec<usize> = (0..found.len().div_ceil(CUT_CHUNK)).collect();
    let parts = {
        let found = &found;
        ctx.map(&chunks, |k| {
            let part = &found[k * CUT_CHUNK..((k + 1) * CUT_CHUNK).min(found.len())];
            let sum = with_scratch(dim, |s| {
                for vio in part {
                    if vio.scale != 0.0 {
                        s.add_sparse(&vio.dphi, vio.scale);
                    }
                }
                s.take()
            });
            Ok(sum)
        })?
    };
    let mut counts = PassCounts::default();
    for (i, vio) in found.iter_mut().enumerate() {
        counts.record(vio);
        keep_warm(warm, i, std::mem::take(&mut vio.warm), common, journal)?;
    }
    let slope = with_scratch(dim, |s| {
        for part in &parts {
            s.add_sparse(part, 1.0);
        }
        s.take()
    });
    let intercept: f64 = found.iter().map(|v| v.intercept).sum();
    Ok(Cut { slope, intercept, counts })
}

/// What a partition's round reports besides its weights: Σ_i ℓ_i at the weights it started from
/// (`start`, an exact pass; BCFW only) and the pass's counters.
#[derive(Clone, Debug, Default)]
pub struct RoundStats {
    /// Counters of the exact pass at the round's starting weights (BCFW), else empty.
    pub start: PassCounts,
    /// Counters of the training pass.
    pub pass: PassCounts,
    /// BCFW: C·Σ_{i ∈ partition} b-part of the dual, in the scale of P (the partition's share of
    /// D = −½‖w‖² + Σ_k dual_k), after the round's aggregation.
    pub dual: f64,
}
