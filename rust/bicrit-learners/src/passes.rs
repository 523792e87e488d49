//! Passes of inferences over the training set shared by the learners: blocks of loss-augmented
//! inferences, the exact objective, the training task loss.

use bicrit_core::{Error, Result};
use bicrit_searches::WarmStart;
use bicrit_structures::Structure;

use crate::{scratch, Context, PassCounts, Problem, Violation};

/// Refuses a problem whose size is not the one the learner was built for (`n` instances, `dim`
/// joint features).
pub(crate) fn check_size<S: Structure>(p: &Problem<'_, S>, n: usize, dim: usize) -> Result<()> {
    check_counts((n, dim), (p.n(), p.dim()))
}

/// A learner built for `built` = (instances, joint features) refuses a problem of another size.
pub fn check_counts(built: (usize, usize), got: (usize, usize)) -> Result<()> {
    if built != got {
        return Err(Error::input(format!(
            "the learner was built for {} instances and {} joint features, the problem has {} and {}",
            built.0, built.1, got.0, got.1
        )));
    }
    Ok(())
}

/// Inference for every index of `idx` at weights `scale · w` with the given warm starts, in
/// chunks between which the interrupt is checked; results in the order of `idx`.
pub(crate) fn infer_many<S: Structure>(
    p: &Problem<'_, S>,
    ctx: &Context<'_>,
    idx: &[usize],
    w: &[f64],
    scale: f64,
    warm: &[Option<WarmStart<S::Label>>],
    xi: Option<&[f64]>,
) -> Result<Vec<Violation<S::Label>>> {
    let mut out = Vec::with_capacity(idx.len());
    for chunk in idx.chunks(256) {
        ctx.check()?;
        let got = ctx.map(chunk, |i| p.infer(i, w, scale, warm[i].as_ref(), xi.map(|x| x[i])))?;
        out.extend(got);
    }
    Ok(out)
}

/// An exact pass: Σ_i ℓ_i at weights `w` (warm starts read, not updated) with its counters.
/// `xi`: the slacks ξ_i a search that needs them (Sarawagi–Gupta) is given.
pub fn exact_pass<S: Structure>(
    p: &Problem<'_, S>,
    ctx: &Context<'_>,
    w: &[f64],
    warm: &[Option<WarmStart<S::Label>>],
    xi: Option<&[f64]>,
) -> Result<PassCounts> {
    let idx: Vec<usize> = (0..p.n()).collect();
    let mut counts = PassCounts::default();
    for chunk in idx.chunks(256) {
        ctx.check()?;
        let got = ctx.map(chunk, |i| p.infer(i, w, 1.0, warm[i].as_ref(), xi.map(|x| x[i])))?;
        for v in &got {
            counts.record(v);
        }
    }
    Ok(counts)
}

/// Mean task loss of the predictions argmax_y w·φ(x_i, y) on the training set.
pub fn task_loss<S: Structure>(p: &Problem<'_, S>, ctx: &Context<'_>, w: &[f64]) -> Result<f64> {
    let idx: Vec<usize> = (0..p.n()).collect();
    let mut total = 0.0;
    for chunk in idx.chunks(256) {
        ctx.check()?;
        let got = ctx.map(chunk, |i| {
            let y = p.structure.predict(w, p.data, i)?;
            Ok(p.structure.terms(&y, &p.labels[i])?.loss)
        })?;
        total += got.iter().sum::<f64>();
    }
    Ok(total / p.n() as f64)
}

/// The exact primal objective ½‖w‖² + C·Σ_i ξ_i^p at ξ_i = ℓ_i(w) (p = `slack_norm`: 1, or 2 for
/// squared slacks max(0, ℓ_i)²) and its pass counters (`xi` as in [`exact_pass`]).
pub fn objective<S: Structure>(
    p: &Problem<'_, S>,
    ctx: &Context<'_>,
    w: &[f64],
    c: f64,
    slack_norm: u8,
    warm: &[Option<WarmStart<S::Label>>],
    xi: Option<&[f64]>,
) -> Result<(f64, PassCounts)> {
    let counts = exact_pass(p, ctx, w, warm, xi)?;
    Ok((0.5 * scratch::dense_norm_sq(w) + c * counts.slacks(slack_norm), counts))
}
