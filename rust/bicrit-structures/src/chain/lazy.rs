//! Lazy k-best Viterbi (Huang & Chiang 2005, Algorithm 3) over a first-order [`Lattice`]: one
//! Viterbi pass, then each further path costs work along that path only — O(T·W² + k·T·(W +
//! log W)) instead of the list Viterbi's O(T·W²·k) ([`super::dp::kbest`]). This is what the
//! ban-list and k-best queries of the searches run on chains, where k is small and most cells
//! never need a second-best prefix.
//!
//! Cell (t, x) keeps its best prefixes found so far, `d[0]` from the Viterbi pass. Its next one
//! comes from a candidate heap over the predecessors: (j-th best prefix into x′ at t − 1) +
//! step(t, x′, x); after a candidate (x′, j) is taken, (x′, j + 1) replaces it, asking cell
//! (t − 1, x′) for its (j + 1)-th prefix in turn. The heap is ordered by value, then by the
//! smallest x′, then by the smallest j: exactly the merge order of [`super::dp::kbest`], so both
//! return the same paths in the same order, ties included (tested).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::dp::{forward, Lattice, Val};

/// Longest chain searched lazily (a recursion one frame per position, well inside a 2 MiB stack).
pub const MAX_LAZY_LEN: usize = 2048;

/// A candidate prefix into a cell: value, predecessor state, rank among the predecessor's prefixes.
#[derive(Clone, Copy, Debug)]
struct Cand<V> {
    v: V,
    xp: u32,
    j: u32,
}

impl<V: Val> PartialEq for Cand<V> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl<V: Val> Eq for Cand<V> {}
impl<V: Val> PartialOrd for Cand<V> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<V: Val> Ord for Cand<V> {
    /// The heap's maximum is the best value, then the smallest state, then the smallest rank.
    fn cmp(&self, o: &Self) -> Ordering {
        self.v.cmp_val(&o.v).then(o.xp.cmp(&self.xp)).then(o.j.cmp(&self.j))
    }
}

/// One cell's prefixes found so far, best first (empty until asked for), and the heap of its
/// next candidates (`None` until a second prefix is asked for).
struct Cell<V> {
    d: Vec<Cand<V>>,
    heap: Option<BinaryHeap<Cand<V>>>,
}

struct Lazy<'a, L: Lattice> {
    lat: &'a L,
    w: usize,
    /// Viterbi's best prefix value into every cell, and its predecessor state.
    alpha: Vec<L::V>,
    back: Vec<u32>,
    cells: Vec<Cell<L::V>>,
}

impl<L: Lattice> Lazy<'_, L> {
    /// The j-th best prefix into (t, x), computing what it needs; `None` when it has fewer.
    fn prefix(&mut self, t: usize, x: usize, j: usize) -> Option<Cand<L::V>> {
        let c = t * self.w + x;
        if !self.alpha[c].feasible() {
            return None;
        }
        if self.cells[c].d.is_empty() {
            // Viterbi's best prefix (the smallest predecessor on ties, as the list Viterbi's)
            self.cells[c].d.push(Cand { v: self.alpha[c], xp: self.back[c], j: 0 });
        }
        while self.cells[c].d.len() <= j {
            if t == 0 {
                return None; // a start cell has one prefix
            }
            // The successor of the last prefix taken, then the best candidate.
            let last = *self.cells[c].d.last()?;
            if self.cells[c].heap.is_none() {
                self.cells[c].heap = Some(self.initial_heap(t, x, last.xp));
            }
            let next = self
                .prefix(t - 1, last.xp as usize, last.j as usize + 1)
                .map(|p| p.v.add(self.lat.step(t, last.xp as usize, x)))
                .filter(|v| v.feasible());
            let heap = self.cells[c].heap.as_mut()?;
            if let Some(v) = next {
                heap.push(Cand { v, xp: last.xp, j: last.j + 1 });
            }
            let best = heap.pop()?;
            self.cells[c].d.push(best);
        }
        Some(self.cells[c].d[j])
    }

    /// The first candidate of every predecessor but `taken` (whose first is d[0]).
    fn initial_heap(&self, t: usize, x: usize, taken: u32) -> BinaryHeap<Cand<L::V>> {
        let prev = (t - 1) * self.w;
        (0..self.w)
            .filter(|&xp| xp as u32 != taken && self.alpha[prev + xp].feasible())
            .map(|xp| Cand { v: self.alpha[prev + xp].add(self.lat.step(t, xp, x)), xp: xp as u32, j: 0 })
            .filter(|c| c.v.feasible())
            .collect()
    }

    /// The path ending with the j-th prefix into (t, x).
    fn path(&mut self, t: usize, x: usize, j: usize) -> Vec<usize> {
        let mut path = vec![0; t + 1];
        let (mut x, mut j) = (x, j);
        for tt in (0..=t).rev() {
            path[tt] = x;
            if tt > 0 {
                if let Some(p) = self.prefix(tt, x, j) {
                    (x, j) = (p.xp as usize, p.j as usize);
                }
            }
        }
        path
    }
}

/// The `k` best feasible paths, best first, as (value, extended states) — the same list as
/// [`super::dp::kbest`] (ties included), computed lazily.
/// Chains longer than [`MAX_LAZY_LEN`] take the list Viterbi: the lazy search recurses once per
/// position.
pub fn kbest_lazy<L: Lattice>(lat: &L, k: usize) -> Vec<(L::V, Vec<usize>)> {
    let (t_len, w) = (lat.positions(), lat.width());
    if t_len > MAX_LAZY_LEN {
        return super::dp::kbest(lat, k);
    }
    let k = k.max(1);
    let (alpha, back) = forward(lat);
    let mut lazy = Lazy {
        lat,
        w,
        alpha,
        back,
        cells: (0..t_len * w).map(|_| Cell { d: Vec::new(), heap: None }).collect(),
    };
    // The final merge: the end scores over the last position's prefixes.
    let last = (t_len - 1) * w;
    let mut heap: BinaryHeap<Cand<L::V>> = (0..w)
        .filter(|&x| lazy.alpha[last + x].feasible())
        .map(|x| Cand { v: lazy.alpha[last + x].add(lat.last(x)), xp: x as u32, j: 0 })
        .filter(|c| c.v.feasible())
        .collect();
    let mut out = Vec::with_capacity(k);
    while out.len() < k {
        let Some(top) = heap.pop() else { break };
        out.push((top.v, lazy.path(t_len - 1, top.xp as usize, top.j as usize)));
        if out.len() < k {
            if let Some(p) = lazy.prefix(t_len - 1, top.xp as usize, top.j as usize + 1) {
                let v = p.v.add(lat.last(top.xp as usize));
                if v.feasible() {
                    heap.push(Cand { v, xp: top.xp, j: top.j + 1 });
                }
            }
        }
    }
    out
}
