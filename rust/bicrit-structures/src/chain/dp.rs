//! Max-sum dynamic programs over a first-order lattice: Viterbi (k = 1) and exact k-best Viterbi.
//!
//! A [`Lattice`] has `len()` positions and `width()` extended states per position; a path picks
//! one state per position and scores `first(x_0) + Σ_{t≥1} step(t, x_{t-1}, x_t) + last(x_{T-1})`.
//! Infeasible pieces score [`Val::NEG_INF`]; such paths are never returned. Values are generic:
//! `f64`, or [`Lex`] pairs compared lexicographically for the λ ∈ {0, ∞} queries (docs/architecture.md,
//! Objects): (max, +) over a totally ordered abelian group is still a semiring, so both
//! DPs stay exact under the lexicographic order.
//!
//! k-best is the list Viterbi algorithm (keep the k best prefixes per state and position; Seshadri
//! & Sundberg 1994): a path among the k best overall has its prefix among the k best prefixes into
//! its state at every position (otherwise k distinct better-or-equal prefixes, completed by the
//! same suffix, would give k distinct better-or-equal paths), so the multiset of returned values
//! is exact, ties included. Each cell merges the `width()` sorted predecessor lists: O(T·W²·k)
//! time, O(T·W·k) memory.
//!
//! [`best_by_count`] is Viterbi with a counter: the best path for every value c of a 0/1 cost
//! summed over positions (the token Hamming loss), over cells (t, x, c) with c ≤ t + 1:
//! best[t][x][c] = max_{x'} best[t−1][x'][c − cost(t, x)] + step(t, x', x). O(T²·W²/2) time and
//! O(T²·W/2) stored values — the frontier by loss value of the `frontier` search (docs/architecture.md, Searches).

use std::cmp::Ordering;

/// A value of the max-sum semiring.
pub trait Val: Copy + std::fmt::Debug {
    /// Score of an infeasible piece (absorbing under [`Val::add`]).
    const NEG_INF: Self;
    /// Sum.
    fn add(self, o: Self) -> Self;
    /// Total order (values are never NaN: inputs are checked finite).
    fn cmp_val(&self, o: &Self) -> Ordering;
    /// Is this a feasible (finite) value?
    fn feasible(&self) -> bool;
    /// Builds a value from its primary and secondary parts (`f64` ignores the secondary).
    fn pair(primary: f64, secondary: f64) -> Self;
    /// Multiplies by a scalar.
    fn scale(self, k: f64) -> Self;
}

impl Val for f64 {
    const NEG_INF: Self = f64::NEG_INFINITY;
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self + o
    }
    #[inline(always)]
    fn cmp_val(&self, o: &Self) -> Ordering {
        self.partial_cmp(o).unwrap_or(Ordering::Equal)
    }
    #[inline(always)]
    fn feasible(&self) -> bool {
        *self > f64::NEG_INFINITY
    }
    #[inline(always)]
    fn pair(primary: f64, _secondary: f64) -> Self {
        primary
    }
    #[inline(always)]
    fn scale(self, k: f64) -> Self {
        self * k
    }
}

/// A (primary, secondary) pair, ordered lexicographically.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lex(pub f64, pub f64);

impl Val for Lex {
    const NEG_INF: Self = Lex(f64::NEG_INFINITY, f64::NEG_INFINITY);
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        Lex(self.0 + o.0, self.1 + o.1)
    }
    #[inline(always)]
    fn cmp_val(&self, o: &Self) -> Ordering {
        self.0
            .partial_cmp(&o.0)
            .unwrap_or(Ordering::Equal)
            .then(self.1.partial_cmp(&o.1).unwrap_or(Ordering::Equal))
    }
    #[inline(always)]
    fn feasible(&self) -> bool {
        self.0 > f64::NEG_INFINITY
    }
    #[inline(always)]
    fn pair(primary: f64, secondary: f64) -> Self {
        Lex(primary, secondary)
    }
    #[inline(always)]
    fn scale(self, k: f64) -> Self {
        Lex(self.0 * k, self.1 * k)
    }
}

/// A first-order lattice (see the module documentation).
pub trait Lattice {
    /// Value type.
    type V: Val;
    /// Number of positions T ≥ 1.
    fn positions(&self) -> usize;
    /// Number of extended states per position.
    fn width(&self) -> usize;
    /// Score of starting in `x` (including position 0's own score).
    fn first(&self, x: usize) -> Self::V;
    /// Score of moving from `xp` at t − 1 to `xc` at t (including position t's own score).
    fn step(&self, t: usize, xp: usize, xc: usize) -> Self::V;
    /// Score of ending in `x`.
    fn last(&self, x: usize) -> Self::V;
    /// Can a feasible path be in `x` at position `t`? (A pruning hint: `false` only where every
    /// piece into `x` scores [`Val::NEG_INF`].)
    #[inline(always)]
    fn allowed(&self, _t: usize, _x: usize) -> bool {
        true
    }
}

/// The best path (ties: the smallest predecessor state wins) and its value; `None` when no path
/// is feasible. `path` receives the extended state of every position.
pub fn viterbi<L: Lattice>(lat: &L, path: &mut Vec<usize>) -> Option<L::V> {
    let (t_len, w) = (lat.positions(), lat.width());
    let (alpha, back) = forward(lat);
    let mut best = L::V::NEG_INF;
    let mut arg = 0;
    for (x, pv) in alpha[(t_len - 1) * w..].iter().enumerate() {
        if !pv.feasible() {
            continue;
        }
        let v = pv.add(lat.last(x));
        if v.cmp_val(&best) == Ordering::Greater {
            best = v;
            arg = x;
        }
    }
    if !best.feasible() {
        return None;
    }
    path.clear();
    path.resize(t_len, 0);
    path[t_len - 1] = arg;
    for t in (1..t_len).rev() {
        path[t - 1] = back[t * w + path[t]] as usize;
    }
    Some(best)
}

/// Viterbi's forward pass: the best prefix value into every cell, `alpha[t·W + x]`
/// ([`Val::NEG_INF`] where no feasible prefix reaches the cell), and that prefix's state at
/// t − 1, `back[t·W + x]` (the smallest state on ties).
pub fn forward<L: Lattice>(lat: &L) -> (Vec<L::V>, Vec<u32>) {
    let (t_len, w) = (lat.positions(), lat.width());
    let mut alpha: Vec<L::V> = vec![L::V::NEG_INF; t_len * w];
    let mut back: Vec<u32> = vec![0; t_len * w];
    for (x, a) in alpha.iter_mut().enumerate().take(w) {
        *a = lat.first(x);
    }
    for t in 1..t_len {
        let (done, rest) = alpha.split_at_mut(t * w);
        let prev = &done[(t - 1) * w..];
        for (xc, slot) in rest[..w].iter_mut().enumerate() {
            if !lat.allowed(t, xc) {
                continue;
            }
            let mut best = L::V::NEG_INF;
            let mut arg = 0u32;
            for (xp, pv) in prev.iter().enumerate() {
                if !pv.feasible() {
                    continue;
                }
                let v = pv.add(lat.step(t, xp, xc));
                if v.cmp_val(&best) == Ordering::Greater {
                    best = v;
                    arg = xp as u32;
                }
            }
            *slot = best;
            back[t * w + xc] = arg;
        }
    }
    (alpha, back)
}

/// Index of the largest head (first on ties: smallest state), or `None` when all are exhausted.
#[inline(always)]
fn best_head<V: Val>(heads: &[V]) -> Option<usize> {
    let mut arg = None;
    let mut best = V::NEG_INF;
    for (x, h) in heads.iter().enumerate() {
        if h.feasible() && (arg.is_none() || h.cmp_val(&best) == Ordering::Greater) {
            best = *h;
            arg = Some(x);
        }
    }
    arg
}

/// The `k` best feasible paths, best first, as (value, extended states). Fewer than `k` when
/// fewer feasible paths exist.
///
/// Each cell merges the W sorted predecessor lists by a linear scan over their heads (O(W) per
/// extracted entry; faster than a heap for the W ≤ ~30 of chains): O(T·W²·k) time in all.
pub fn kbest<L: Lattice>(lat: &L, k: usize) -> Vec<(L::V, Vec<usize>)> {
    let (t_len, w) = (lat.positions(), lat.width());
    let k = k.max(1);
    // vals[(t * w + x) * k + j]: j-th best prefix value into x at t; lens[t * w + x] of them.
    let mut vals: Vec<L::V> = vec![L::V::NEG_INF; t_len * w * k];
    let mut back: Vec<(u32, u32)> = vec![(0, 0); t_len * w * k];
    let mut lens: Vec<u32> = vec![0; t_len * w];
    for x in 0..w {
        let v = lat.first(x);
        if v.feasible() {
            vals[x * k] = v;
            lens[x] = 1;
        }
    }
    let mut add: Vec<L::V> = vec![L::V::NEG_INF; w];
    let mut heads: Vec<L::V> = vec![L::V::NEG_INF; w];
    let mut pos: Vec<u32> = vec![0; w];
    for t in 1..t_len {
        let prev = (t - 1) * w;
        for xc in 0..w {
            let cell = t * w + xc;
            if !lat.allowed(t, xc) {
                continue;
            }
            for xp in 0..w {
                pos[xp] = 0;
                heads[xp] = L::V::NEG_INF;
                if lens[prev + xp] == 0 {
                    continue;
                }
                let s = lat.step(t, xp, xc);
                add[xp] = s;
                heads[xp] = vals[(prev + xp) * k].add(s);
            }
            let mut n = 0;
            while n < k {
                let Some(xp) = best_head(&heads) else { break };
                vals[cell * k + n] = heads[xp];
                back[cell * k + n] = (xp as u32, pos[xp]);
                n += 1;
                pos[xp] += 1;
                heads[xp] = if pos[xp] < lens[prev + xp] {
                    vals[(prev + xp) * k + pos[xp] as usize].add(add[xp])
                } else {
                    L::V::NEG_INF
                };
            }
            lens[cell] = n as u32;
        }
    }
    // final merge with the end scores
    let prev = (t_len - 1) * w;
    for x in 0..w {
        pos[x] = 0;
        heads[x] = L::V::NEG_INF;
        if lens[prev + x] == 0 {
            continue;
        }
        let s = lat.last(x);
        add[x] = s;
        heads[x] = vals[(prev + x) * k].add(s);
    }
    let mut out = Vec::with_capacity(k);
    while out.len() < k {
        let Some(x0) = best_head(&heads) else { break };
        let mut path = vec![0usize; t_len];
        let (mut x, mut j) = (x0, pos[x0] as usize);
        for t in (0..t_len).rev() {
            path[t] = x;
            if t > 0 {
                let (bx, bj) = back[(t * w + x) * k + j];
                x = bx as usize;
                j = bj as usize;
            }
        }
        out.push((heads[x0], path));
        pos[x0] += 1;
        heads[x0] = if pos[x0] < lens[prev + x0] {
            vals[(prev + x0) * k + pos[x0] as usize].add(add[x0])
        } else {
            L::V::NEG_INF
        };
    }
    out
}

/// For every count c = 0..=T, the best path (ties: the smallest predecessor state, as in
/// [`viterbi`]) among the feasible paths with Σ_t cost(t, x_t) = c, as (value, extended states);
/// `None` where no feasible path has that count. `cost(t, x)` is 0 or 1 (false or true).
///
/// Values are kept for every cell (t, x, c ≤ t + 1), state-major so that the inner loop over
/// counts is a contiguous max-plus update the compiler vectorises; paths are recovered by
/// recomputing each cell's argmax over predecessors (no back-pointers). Memory: 8·W·T(T + 3)/2
/// bytes (55 MB for the longest CoNLL-2002 sentence, 1238 tokens, W = 9).
pub fn best_by_count<L: Lattice<V = f64>>(
    lat: &L,
    cost: impl Fn(usize, usize) -> bool,
) -> Vec<Option<(f64, Vec<usize>)>> {
    let (t_len, w) = (lat.positions(), lat.width());
    // Position t holds counts 0..=t + 1 for each state: cells base(t) + x·(t + 2) + c, with
    // base(t) = W·t(t + 3)/2 (triangular).
    let base = |t: usize| w * (t * (t + 3) / 2);
    let mut vals: Vec<f64> = vec![f64::NEG_INFINITY; base(t_len)];
    for x in 0..w {
        vals[x * 2 + usize::from(cost(0, x))] = lat.first(x);
    }
    for t in 1..t_len {
        let (done, rest) = vals.split_at_mut(base(t));
        let prev = &done[base(t - 1)..];
        let (np, nc) = (t + 1, t + 2);
        for xc in 0..w {
            if !lat.allowed(t, xc) {
                continue;
            }
            let k = usize::from(cost(t, xc));
            let row = &mut rest[xc * nc + k..xc * nc + k + np];
            for xp in 0..w {
                let s = lat.step(t, xp, xc);
                if !s.feasible() {
                    continue;
                }
                // count c' at t − 1 becomes c' + k at t; branch-free max (values are never NaN)
                // so that the loop vectorises and −∞ cells cost no mispredicted branches
                for (r, &p) in row.iter_mut().zip(&prev[xp * np..(xp + 1) * np]) {
                    *r = r.max(p + s);
                }
            }
        }
    }
    let last = base(t_len - 1);
    let n_counts = t_len + 1;
    (0..n_counts)
        .map(|c| {
            let mut best = f64::NEG_INFINITY;
            let mut arg = None;
            for x in 0..w {
                let v = vals[last + x * n_counts + c] + lat.last(x);
                if v > best {
                    best = v;
                    arg = Some(x);
                }
            }
            let mut x = arg?;
            let mut path = vec![0usize; t_len];
            path[t_len - 1] = x;
            let mut c = c;
            for t in (1..t_len).rev() {
                // the predecessor that attains the cell's value (first on ties)
                c -= usize::from(cost(t, x));
                let prev = &vals[base(t - 1)..base(t)];
                let mut pb = f64::NEG_INFINITY;
                let mut xp_best = 0;
                for xp in 0..w {
                    let v = prev[xp * (t + 1) + c] + lat.step(t, xp, x);
                    if v > pb {
                        pb = v;
                        xp_best = xp;
                    }
                }
                x = xp_best;
                path[t - 1] = x;
            }
            Some((best, path))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Dense lattice for tests: scores from small integer tables.
    struct Dense {
        t: usize,
        w: usize,
        first: Vec<f64>,
        step: Vec<f64>,
        last: Vec<f64>,
    }

    impl Lattice for Dense {
        type V = f64;
        fn positions(&self) -> usize {
            self.t
        }
        fn width(&self) -> usize {
            self.w
        }
        fn first(&self, x: usize) -> f64 {
            self.first[x]
        }
        fn step(&self, t: usize, xp: usize, xc: usize) -> f64 {
            self.step[(t * self.w + xp) * self.w + xc]
        }
        fn last(&self, x: usize) -> f64 {
            self.last[x]
        }
    }

    fn value(l: &Dense, p: &[usize]) -> f64 {
        let mut v = l.first(p[0]);
        for t in 1..p.len() {
            v += l.step(t, p[t - 1], p[t]);
        }
        v + l.last(p[p.len() - 1])
    }

    /// A xorshift generator for the random lattices of the tests.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    #[test]
    fn kbest_matches_enumeration_with_infeasible_pieces() {
        let mut next = xorshift(12345);
        for _ in 0..300 {
            let t = 1 + (next() % 4) as usize;
            let w = 1 + (next() % 3) as usize;
            let draw = |n: usize, next: &mut dyn FnMut() -> u64| -> Vec<f64> {
                (0..n)
                    .map(|_| match next() % 7 {
                        0 => f64::NEG_INFINITY,
                        r => r as f64 - 3.0,
                    })
                    .collect()
            };
            let first = draw(w, &mut next);
            let step = draw(t * w * w, &mut next);
            let last = draw(w, &mut next);
            let l = Dense { t, w, first, step, last };
            let mut all: Vec<f64> = Vec::new();
            let total = w.pow(t as u32);
            for mut code in 0..total {
                let mut p = vec![0; t];
                for s in p.iter_mut() {
                    *s = code % w;
                    code /= w;
                }
                let v = value(&l, &p);
                if v.feasible() {
                    all.push(v);
                }
            }
            all.sort_by(|a, b| b.partial_cmp(a).unwrap());
            let k = 1 + (next() % 6) as usize;
            let got = kbest(&l, k);
            assert_eq!(got.len(), k.min(all.len()));
            for (r, (v, p)) in got.iter().enumerate() {
                assert_eq!(*v, all[r]);
                assert_eq!(value(&l, p), *v);
            }
            // best_by_count against enumeration, with cost(t, x) = [x ≠ (t mod w)]
            let cost = |t: usize, x: usize| x != t % w;
            let by = best_by_count(&l, cost);
            assert_eq!(by.len(), t + 1);
            for (c, got) in by.iter().enumerate() {
                let mut want: Option<f64> = None;
                for mut code in 0..total {
                    let mut p = vec![0; t];
                    for s in p.iter_mut() {
                        *s = code % w;
                        code /= w;
                    }
                    let n = (0..t).filter(|&u| cost(u, p[u])).count();
                    let v = value(&l, &p);
                    if n == c && v.feasible() && want.is_none_or(|b| v > b) {
                        want = Some(v);
                    }
                }
                match (got, want) {
                    (None, None) => {}
                    (Some((v, p)), Some(b)) => {
                        assert_eq!(*v, b);
                        assert_eq!(value(&l, p), b);
                        assert_eq!((0..t).filter(|&u| cost(u, p[u])).count(), c);
                    }
                    _ => panic!("count {c}: got {got:?}, want {want:?}"),
                }
            }
            let mut path = Vec::new();
            match viterbi(&l, &mut path) {
                None => assert!(all.is_empty()),
                Some(v) => {
                    assert_eq!(v, all[0]);
                    assert_eq!(value(&l, &path), v);
                }
            }
        }
    }

    /// A lattice of lexicographic values with a pruning hint, for the lazy k-best.
    struct LexDense {
        d: Dense,
        second: Vec<f64>,
    }

    impl Lattice for LexDense {
        type V = Lex;
        fn positions(&self) -> usize {
            self.d.t
        }
        fn width(&self) -> usize {
            self.d.w
        }
        fn first(&self, x: usize) -> Lex {
            Lex(self.d.first[x], 0.0)
        }
        fn step(&self, t: usize, xp: usize, xc: usize) -> Lex {
            let i = (t * self.d.w + xp) * self.d.w + xc;
            Lex(self.d.step[i], self.second[i])
        }
        fn last(&self, x: usize) -> Lex {
            Lex(self.d.last[x], 0.0)
        }
        fn allowed(&self, t: usize, x: usize) -> bool {
            (0..self.d.w).any(|xp| self.d.step[(t * self.d.w + xp) * self.d.w + x] > f64::NEG_INFINITY)
        }
    }

    #[test]
    fn lazy_kbest_returns_the_list_viterbi_paths_in_the_same_order() {
        use crate::chain::lazy::kbest_lazy;
        let mut next = xorshift(987_654_321);
        for case in 0..600 {
            let t = 1 + (next() % 6) as usize;
            let w = 1 + (next() % 5) as usize;
            // Few distinct values: many ties; some infeasible pieces.
            let mut draw = |n: usize| -> Vec<f64> {
                (0..n)
                    .map(|_| match next() % 9 {
                        0 => f64::NEG_INFINITY,
                        r => (r % 4) as f64,
                    })
                    .collect()
            };
            let d = Dense { t, w, first: draw(w), step: draw(t * w * w), last: draw(w) };
            let second = draw(t * w * w).into_iter().map(|v| if v.is_finite() { v } else { 1.0 }).collect();
            for k in [1, 2, 3, 7, 40] {
                let (eager, lazy) = (kbest(&d, k), kbest_lazy(&d, k));
                assert_eq!(eager.len(), lazy.len(), "case {case} k {k}");
                for (a, b) in eager.iter().zip(&lazy) {
                    assert!(a.0 == b.0 && a.1 == b.1, "case {case} k {k}: {a:?} vs {b:?}");
                }
            }
            let l = LexDense { d, second };
            let (eager, lazy) = (kbest(&l, 9), kbest_lazy(&l, 9));
            assert_eq!(eager.len(), lazy.len(), "case {case} (lex)");
            for (a, b) in eager.iter().zip(&lazy) {
                assert!(a.0 == b.0 && a.1 == b.1, "case {case} (lex): {a:?} vs {b:?}");
            }
        }
    }

    #[test]
    fn lazy_kbest_on_the_longest_lazy_chain_and_past_it() {
        use crate::chain::lazy::{kbest_lazy, MAX_LAZY_LEN};
        for t in [MAX_LAZY_LEN, MAX_LAZY_LEN + 1] {
            let w = 3;
            let first = vec![0.0, 1.0, 0.5];
            let step = (0..t * w * w).map(|i| ((i * 7919) % 13) as f64 / 13.0).collect();
            let d = Dense { t, w, first, step, last: vec![0.0; w] };
            let (eager, lazy) = (kbest(&d, 5), kbest_lazy(&d, 5));
            assert_eq!(eager, lazy);
        }
    }
}
