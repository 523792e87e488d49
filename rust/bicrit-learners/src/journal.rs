//! Undo log of an epoch ([`Journal`]) and the warm-start cache kept per instance ([`keep_warm`]).

use bicrit_core::SparseVec;
use bicrit_searches::WarmStart;

use crate::params;

/// What an epoch replaced, so that a failed or interrupted epoch can be undone without copying the
/// per-instance state up front: the previous warm starts and (BCFW) blocks, moved here when
/// replaced.
pub(crate) struct Journal<L> {
    pub warm: Vec<(usize, Option<WarmStart<L>>)>,
    pub blocks: Vec<(usize, SparseVec, f64)>,
}

impl<L> Journal<L> {
    pub fn new() -> Self {
        Journal { warm: Vec::new(), blocks: Vec::new() }
    }

    /// Puts the warm starts back (latest replacement undone first).
    pub fn undo_warm(&mut self, warm: &mut [Option<WarmStart<L>>]) {
        for (i, old) in self.warm.drain(..).rev() {
            warm[i] = old;
        }
    }
}

/// Stores the warm start of instance `i`'s latest search ([`merged_warm`] with the previous one;
/// nothing when warm starts are off). The previous one goes to the journal.
pub(crate) fn keep_warm<L: Clone + PartialEq>(
    warm: &mut [Option<WarmStart<L>>],
    i: usize,
    new: WarmStart<L>,
    common: &params::Common,
    journal: &mut Journal<L>,
) {
    if !common.warm_start {
        return;
    }
    let merged = merged_warm(warm[i].as_ref(), new, common);
    install_warm(warm, i, merged, journal);
}

/// The warm start to keep after a search: its own warm-start labels (the final hull chain) first,
/// then the labels of the previous warm start `old` that are not among them, at most
/// `common.cache_size` in all. Pure, so learners may compute it in parallel.
pub(crate) fn merged_warm<L: Clone + PartialEq>(
    old: Option<&WarmStart<L>>,
    new: WarmStart<L>,
    common: &params::Common,
) -> WarmStart<L> {
    let mut new = new;
    if let Some(old) = old {
        for l in &old.labels {
            if new.labels.len() >= common.cache_size {
                break;
            }
            if !new.labels.contains(l) {
                new.labels.push(l.clone());
            }
        }
    }
    new.labels.truncate(common.cache_size);
    new
}

/// Replaces instance `i`'s warm start by `merged` ([`merged_warm`]); the previous one goes to the
/// journal.
pub(crate) fn install_warm<L>(
    warm: &mut [Option<WarmStart<L>>],
    i: usize,
    merged: WarmStart<L>,
    journal: &mut Journal<L>,
) {
    let old = warm[i].replace(merged);
    journal.warm.push((i, old));
}
