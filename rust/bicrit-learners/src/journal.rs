//! Undo log of an epoch ([`Journal`]) and the warm-start cache kept per instance ([`keep_warm`]).
//!
//! A search leaves a [`WarmPlan`]: the labels of the warm start it was given by index, and the
//! labels it found. The cache is updated by moving labels, never copying them: the new warm start
//! takes the labels the plan keeps from the old one, and the journal keeps only where each old
//! label went (a position in the new warm start) and the old labels the cache dropped — enough to
//! put the old warm start back exactly if the epoch is undone.

use bicrit_core::{Error, Result, SparseVec};
use bicrit_searches::{WarmLabel, WarmPlan, WarmStart};

use crate::params;

/// An old label's place after an install: its position in the new warm start, or [`DROPPED`]
/// (then it is in [`Journal::dropped`]).
const DROPPED: u32 = u32::MAX;

/// One replaced warm start: instance `i`, whether it had one, its λ, and its labels as a range
/// of [`Journal::moved`] (one entry per old label, in order) with the dropped ones from
/// `dropped_from` on in [`Journal::dropped`].
struct WarmUndo {
    i: usize,
    had: bool,
    lambda: Option<f64>,
    moved_from: usize,
    dropped_from: usize,
}

/// What an epoch replaced, so that a failed or interrupted epoch can be undone without copying the
/// per-instance state up front: where the previous warm starts' labels went and (BCFW) the
/// previous blocks, moved here when replaced.
pub(crate) struct Journal<L> {
    warm: Vec<WarmUndo>,
    moved: Vec<u32>,
    dropped: Vec<L>,
    pub blocks: Vec<(usize, SparseVec, f64)>,
}

impl<L> Journal<L> {
    pub fn new() -> Self {
        Journal { warm: Vec::new(), moved: Vec::new(), dropped: Vec::new(), blocks: Vec::new() }
    }

    /// Puts the warm starts back (latest replacement undone first).
    pub fn undo_warm(&mut self, warm: &mut [Option<WarmStart<L>>]) {
        while let Some(u) = self.warm.pop() {
            let mut now: Vec<Option<L>> =
                warm[u.i].take().map_or_else(Vec::new, |w| w.labels.into_iter().map(Some).collect());
            let mut dropped = self.dropped.drain(u.dropped_from..);
            let labels: Vec<L> = self.moved[u.moved_from..]
                .iter()
                .map(|&p| {
                    let l = if p == DROPPED {
                        dropped.next()
                    } else {
                        now.get_mut(p as usize).and_then(Option::take)
                    };
                    l.expect("the journal holds every label of a replaced warm start")
                })
                .collect();
            drop(dropped);
            self.moved.truncate(u.moved_from);
            warm[u.i] = u.had.then_some(WarmStart { labels, lambda: u.lambda });
        }
    }
}

/// Stores the warm start of instance `i`'s latest search: its plan merged with the previous warm
/// start ([`WarmPlan::merged`], at most `common.cache_size` labels; nothing when warm starts are
/// off), installed by [`install_warm`].
pub(crate) fn keep_warm<L: Clone + PartialEq>(
    warm: &mut [Option<WarmStart<L>>],
    i: usize,
    plan: WarmPlan<L>,
    common: &params::Common,
    journal: &mut Journal<L>,
) -> Result<()> {
    if !common.warm_start {
        return Ok(());
    }
    let merged = plan.merged(warm[i].as_ref(), common.cache_size)?;
    install_warm(warm, i, merged, journal)
}

/// Replaces instance `i`'s warm start by the one `plan` describes relative to it (a merged plan:
/// [`WarmPlan::merged`]), moving the labels it keeps; the journal records where the old labels
/// went and keeps the dropped ones. An invalid plan (an index out of range or twice) leaves
/// everything as it was.
pub(crate) fn install_warm<L>(
    warm: &mut [Option<WarmStart<L>>],
    i: usize,
    plan: WarmPlan<L>,
    journal: &mut Journal<L>,
) -> Result<()> {
    let n_old = warm[i].as_ref().map_or(0, |w| w.labels.len());
    for (p, l) in plan.labels.iter().enumerate() {
        if let WarmLabel::Previous(j) = *l {
            let twice = plan.labels[..p].iter().any(|m| matches!(*m, WarmLabel::Previous(k) if k == j));
            if j >= n_old || twice {
                return Err(Error::input(format!(
                    "internal: instance {i}'s warm-start plan refers to label {j} of {n_old} (or twice)"
                )));
            }
        }
    }
    let (had, lambda, old) = match warm[i].take() {
        Some(w) => (true, w.lambda, w.labels),
        None => (false, None, Vec::new()),
    };
    let mut slots: Vec<Option<L>> = old.into_iter().map(Some).collect();
    let moved_from = journal.moved.len();
    journal.moved.resize(moved_from + slots.len(), DROPPED);
    let mut labels = Vec::with_capacity(plan.labels.len());
    for (p, l) in plan.labels.into_iter().enumerate() {
        match l {
            WarmLabel::New(l) => labels.push(l),
            WarmLabel::Previous(j) => {
                journal.moved[moved_from + j] = p as u32;
                labels.extend(slots[j].take());
            }
        }
    }
    let dropped_from = journal.dropped.len();
    journal.dropped.extend(slots.into_iter().flatten());
    journal.warm.push(WarmUndo { i, had, lambda, moved_from, dropped_from });
    warm[i] = Some(WarmStart { labels, lambda: plan.lambda });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The label cache before warm plans: the search's warm start (its labels copied), then the
    /// previous labels it does not hold, at most `cache` in all.
    fn merged_by_copy(old: Option<&WarmStart<u32>>, new: WarmStart<u32>, cache: usize) -> WarmStart<u32> {
        let mut new = new;
        if let Some(old) = old {
            for l in &old.labels {
                if new.labels.len() >= cache {
                    break;
                }
                if !new.labels.contains(l) {
                    new.labels.push(*l);
                }
            }
        }
        new.labels.truncate(cache);
        new
    }

    /// A plan over `prev` from a seeded stream: previous labels by index (each at most once) and
    /// new labels, some equal by value to previous ones.
    fn plan(prev: &WarmStart<u32>, seed: &mut u64) -> WarmPlan<u32> {
        let mut next = || {
            *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (*seed >> 33) as usize
        };
        let mut labels = Vec::new();
        for _ in 0..next() % 6 {
            let j = next() % (prev.labels.len() + 3);
            if j < prev.labels.len() {
                if !labels.contains(&WarmLabel::Previous(j)) {
                    labels.push(WarmLabel::Previous(j));
                }
            } else {
                labels.push(WarmLabel::New((next() % 12) as u32));
            }
        }
        WarmPlan { labels, lambda: Some(next() as f64) }
    }

    #[test]
    fn installs_equal_the_copying_cache_and_undo_exactly() {
        let mut seed = 7u64;
        for cache in [1, 2, 3, 8] {
            let mut warm: Vec<Option<WarmStart<u32>>> = vec![None; 4];
            for epoch in 0..30 {
                let before = warm.clone();
                let mut journal = Journal::new();
                // every instance, some twice in one epoch (BCFW's start from w0, then its pass)
                for i in [0, 1, 2, 3, 1, 3] {
                    let prev = warm[i].clone().unwrap_or_default();
                    let p = plan(&prev, &mut seed);
                    let want =
                        merged_by_copy(warm[i].as_ref(), p.clone().resolve(warm[i].as_ref()).unwrap(), cache);
                    let merged = p.merged(warm[i].as_ref(), cache).unwrap();
                    install_warm(&mut warm, i, merged, &mut journal).unwrap();
                    assert_eq!(warm[i].as_ref(), Some(&want), "cache {cache}, epoch {epoch}, instance {i}");
                }
                if epoch % 3 == 2 {
                    journal.undo_warm(&mut warm);
                    assert_eq!(warm, before, "cache {cache}, epoch {epoch}: undone");
                }
            }
        }
    }

    #[test]
    fn an_invalid_plan_changes_nothing() {
        let mut warm = vec![Some(WarmStart { labels: vec![1u32, 2], lambda: None })];
        let mut journal = Journal::new();
        for labels in [vec![WarmLabel::Previous(2)], vec![WarmLabel::Previous(0), WarmLabel::Previous(0)]] {
            let e = install_warm(&mut warm, 0, WarmPlan { labels, lambda: None }, &mut journal).unwrap_err();
            assert!(e.to_string().contains("warm-start plan"), "{e}");
            assert_eq!(warm[0].as_ref().unwrap().labels, vec![1, 2]);
        }
    }
}
