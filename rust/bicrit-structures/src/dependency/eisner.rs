//! Projective decoding: Eisner's O(n³) dynamic program (Eisner 1996) with k-best lists in every
//! chart cell, merged lazily in the manner of Huang & Chiang (2005), "Better k-best parsing",
//! Algorithm 2 (a heap over the frontier of each cell's hyperedges).
//!
//! Items over tokens 1..=n (the root is handled apart, below):
//! * `CR[s][t]` complete, head s, covering s..=t;  `CL[s][t]` complete, head t;
//! * `IR[s][t]` incomplete, arc s → t;             `IL[s][t]` incomplete, arc t → s;
//! * `IR/IL[s][t] = ⊕_{s ≤ m < t} CR[s][m] ⊗ CL[m+1][t] ⊗ A(arc)`,
//!   `CR[s][t] = ⊕_{s < m ≤ t} IR[s][m] ⊗ CR[m][t]`, `CL[s][t] = ⊕_{s ≤ m < t} CL[s][m] ⊗ IL[m][t]`,
//!
//! where ⊗ of sorted lists is the sorted list of pairwise sums, ⊕ the merge, both truncated at k,
//! and A(arc) the arc's candidate labels (`arcs.rs`). Every labeled projective tree has exactly one
//! derivation, so the k best derivations are the k best trees, in exact order of values.
//!
//! Single root (UD): the root has exactly one child r. A projective tree over 0..=n with one root
//! child r is a projective tree over 1..=n headed by r plus the arc 0 → r (an arc (h, d) spanning
//! r would need r to descend from h), so the answer is `⊕_r CL[1][r] ⊗ CR[r][n] ⊗ A(0 → r)`.
//!
//! Several root children ([`ArcTable::multi_root`]): the root is position 0 of the chart, with
//! no arc into it, and the answer is `CR[0][n]` (the textbook first-order Eisner).
//!
//! The frontier of a product of three sorted lists is enumerated without duplicates by giving each
//! index triple (i, j, l) one parent: (i, j, l−1) if l > 0, else (i, j−1, 0) if j > 0, else
//! (i−1, 0, 0); a parent is never worse than its child, so popping the heap yields exact order.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::arcs::{ArcTable, Tree};
use super::val::Val;

// The four item kinds of a span (complete/incomplete, head right/left); shared with the lazy
// k-best (`eisner_lazy`).
pub(super) const CR: usize = 0;
pub(super) const CL: usize = 1;
pub(super) const IR: usize = 2;
pub(super) const IL: usize = 3;

/// One derivation of an item: hyperedge `m` with sub-derivations `i`, `j` and arc label `l`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Entry {
    pub(super) val: Val,
    pub(super) m: u32,
    pub(super) i: u32,
    pub(super) j: u32,
    pub(super) l: u32,
}

#[derive(Clone, Copy, Debug)]
struct Cand {
    e: Entry,
    lens: [u32; 3],
}

impl PartialEq for Cand {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Cand {}
impl PartialOrd for Cand {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Cand {
    /// Larger value first; on equal values the smaller (m, i, j, l) first (deterministic).
    fn cmp(&self, other: &Self) -> Ordering {
        let key = |c: &Cand| (c.e.m, c.e.i, c.e.j, c.e.l);
        self.e.val.lex_cmp(&other.e.val).then_with(|| key(other).cmp(&key(self)))
    }
}

/// Scratch space of the k-best merges (reused across cells).
#[derive(Default)]
struct Merger {
    heap: BinaryHeap<Cand>,
    init: Vec<Cand>,
    out: Vec<Entry>,
}

impl Merger {
    /// The k best of `⊕_m L1(m) ⊗ L2(m) ⊗ L3(m)`, where edge m has list lengths `lens` and
    /// `val(m, i, j, l)` is the sum of the three entries; result in `self.out`, best first.
    fn merge(
        &mut self,
        k: usize,
        edges: impl Iterator<Item = (u32, [u32; 3])>,
        val: impl Fn(u32, u32, u32, u32) -> Val,
    ) {
        self.out.clear();
        if k == 1 {
            let mut best: Option<Entry> = None;
            for (m, lens) in edges {
                if lens.contains(&0) {
                    continue;
                }
                let v = val(m, 0, 0, 0);
                if best.is_none_or(|b| v.gt(&b.val)) {
                    best = Some(Entry { val: v, m, i: 0, j: 0, l: 0 });
                }
            }
            self.out.extend(best);
            return;
        }
        // Only the k best first elements of the hyperedges can be among the k pops (each of
        // them is popped before any worse one), so select them in O(#edges) and heapify.
        // For small k a sorted buffer with a rejection threshold is cheapest; otherwise select.
        self.init.clear();
        let small = k <= 16;
        for (m, lens) in edges {
            if lens.contains(&0) {
                continue;
            }
            let c = Cand { e: Entry { val: val(m, 0, 0, 0), m, i: 0, j: 0, l: 0 }, lens };
            if !small {
                self.init.push(c);
                continue;
            }
            if self.init.len() == k && c <= self.init[k - 1] {
                continue;
            }
            let mut pos = self.init.len();
            while pos > 0 && c > self.init[pos - 1] {
                pos -= 1;
            }
            if self.init.len() == k {
                self.init.pop();
            }
            self.init.insert(pos, c);
        }
        if !small && self.init.len() > k {
            self.init.select_nth_unstable_by(k - 1, |a, b| b.cmp(a));
            self.init.truncate(k);
        }
        self.heap.clear();
        self.heap.extend(self.init.drain(..));
        while self.out.len() < k {
            let Some(c) = self.heap.pop() else { break };
            self.out.push(c.e);
            let Entry { m, i, j, l, .. } = c.e;
            let mut push = |i: u32, j: u32, l: u32| {
                self.heap.push(Cand { e: Entry { val: val(m, i, j, l), m, i, j, l }, lens: c.lens });
            };
            if l + 1 < c.lens[2] {
                push(i, j, l + 1);
            }
            if l == 0 && j + 1 < c.lens[1] {
                push(i, j + 1, 0);
            }
            if l == 0 && j == 0 && i + 1 < c.lens[0] {
                push(i + 1, 0, 0);
            }
        }
    }
}

struct Chart {
    np: usize,
    spans: Vec<(u32, u32)>,
    arena: Vec<Entry>,
}

impl Chart {
    #[inline]
    fn idx(&self, ty: usize, s: usize, t: usize) -> usize {
        (ty * self.np + s) * self.np + t
    }
    #[inline]
    fn len(&self, ty: usize, s: usize, t: usize) -> u32 {
        self.spans[self.idx(ty, s, t)].1
    }
    #[inline]
    fn get(&self, ty: usize, s: usize, t: usize, i: u32) -> &Entry {
        &self.arena[self.spans[self.idx(ty, s, t)].0 as usize + i as usize]
    }
    fn store(&mut self, ty: usize, s: usize, t: usize, entries: &[Entry]) {
        let at = self.idx(ty, s, t);
        self.spans[at] = (self.arena.len() as u32, entries.len() as u32);
        self.arena.extend_from_slice(entries);
    }
}

/// Upper bound on the chart entries for `n` tokens and `k` answers (for memory guards).
pub fn chart_entries(n: usize, k: usize) -> usize {
    4 * (n + 1) * (n + 1) * k.max(1)
}

/// The `k` best single-root projective trees under `arcs` (any number of root children when
/// [`ArcTable::multi_root`]), best first (fewer when fewer exist).
pub fn eisner_kbest(arcs: &ArcTable, k: usize) -> Vec<Tree> {
    let n = arcs.n();
    if n == 0 || k == 0 {
        return Vec::new();
    }
    if k == 1 && arcs.is_complete() && !arcs.multi_root() {
        return vec![eisner_best(arcs)];
    }
    // first chart position: 0 when the root is an ordinary head (several children), else 1
    let lo = usize::from(!arcs.multi_root());
    let np = n + 1;
    let mut ch = Chart { np, spans: vec![(0, 0); 4 * np * np], arena: Vec::with_capacity(4 * np * np) };
    let mut mg = Merger::default();
    let zero = [Entry { val: Val::ZERO, m: 0, i: 0, j: 0, l: 0 }];
    for s in lo..=n {
        ch.store(CR, s, s, &zero);
        ch.store(CL, s, s, &zero);
    }
    for width in 1..=n - lo {
        for s in lo..=n - width {
            let t = s + width;
            // Incomplete items: arc s → t (IR) and t → s (IL), same splits.
            for (ty, h, d) in [(IR, s, t), (IL, t, s)] {
                let a = arcs.vals(h, d);
                mg.merge(
                    k,
                    (s..t).map(|m| (m as u32, [ch.len(CR, s, m), ch.len(CL, m + 1, t), a.len() as u32])),
                    |m, i, j, l| {
                        let m = m as usize;
                        ch.get(CR, s, m, i).val + ch.get(CL, m + 1, t, j).val + a[l as usize]
                    },
                );
                ch.store(ty, s, t, &mg.out);
            }
            mg.merge(
                k,
                (s + 1..=t).map(|m| (m as u32, [ch.len(IR, s, m), ch.len(CR, m, t), 1])),
                |m, i, j, _| ch.get(IR, s, m as usize, i).val + ch.get(CR, m as usize, t, j).val,
            );
            ch.store(CR, s, t, &mg.out);
            mg.merge(k, (s..t).map(|m| (m as u32, [ch.len(CL, s, m), ch.len(IL, m, t), 1])), |m, i, j, _| {
                ch.get(CL, s, m as usize, i).val + ch.get(IL, m as usize, t, j).val
            });
            ch.store(CL, s, t, &mg.out);
        }
    }
    if lo == 0 {
        // arcs into the root are absent (empty candidate lists), so IL/CL items headed left of 0
        // are empty and CR[0][n] holds the trees
        return (0..ch.len(CR, 0, n))
            .map(|i| backtrack_from(&ch, arcs, ch.get(CR, 0, n, i).val, vec![(CR, 0, n, i)]))
            .collect();
    }
    mg.merge(
        k,
        (1..=n).map(|r| (r as u32, [ch.len(CL, 1, r), ch.len(CR, r, n), arcs.vals(0, r).len() as u32])),
        |r, i, j, l| {
            let r = r as usize;
            ch.get(CL, 1, r, i).val + ch.get(CR, r, n, j).val + arcs.vals(0, r)[l as usize]
        },
    );
    let roots = std::mem::take(&mut mg.out);
    roots.iter().map(|e| backtrack(&ch, arcs, e)).collect()
}

fn backtrack(ch: &Chart, arcs: &ArcTable, root: &Entry) -> Tree {
    let n = arcs.n();
    let r = root.m as usize;
    let mut tree = backtrack_from(ch, arcs, root.val, vec![(CL, 1, r, root.i), (CR, r, n, root.j)]);
    tree.rels[r - 1] = arcs.rel(0, r, root.l as usize);
    tree
}

/// Follows the chart from the items on `stack` (type, s, t, entry index).
fn backtrack_from(ch: &Chart, arcs: &ArcTable, val: Val, mut stack: Vec<(usize, usize, usize, u32)>) -> Tree {
    let n = arcs.n();
    let mut heads = vec![0u32; n];
    let mut rels = vec![0u32; n];
    while let Some((ty, s, t, ix)) = stack.pop() {
        if s == t {
            continue;
        }
        let e = *ch.get(ty, s, t, ix);
        let m = e.m as usize;
        match ty {
            IR => {
                heads[t - 1] = s as u32;
                rels[t - 1] = arcs.rel(s, t, e.l as usize);
                stack.push((CR, s, m, e.i));
                stack.push((CL, m + 1, t, e.j));
            }
            IL => {
                heads[s - 1] = t as u32;
                rels[s - 1] = arcs.rel(t, s, e.l as usize);
                stack.push((CR, s, m, e.i));
                stack.push((CL, m + 1, t, e.j));
            }
            CR => {
                stack.push((IR, s, m, e.i));
                stack.push((CR, m, t, e.j));
            }
            _ => {
                stack.push((CL, s, m, e.i));
                stack.push((IL, m, t, e.j));
            }
        }
    }
    Tree { val, heads, rels }
}

/// The best tree (k = 1) on a complete table: the same recurrences on flat arrays, each
/// incomplete span's split maximised once for both arc directions (the arc value is added after
/// the split, whose sum does not depend on the direction). Ties go to the smallest split.
fn eisner_best(arcs: &ArcTable) -> Tree {
    let n = arcs.n();
    let np = n + 1;
    let at = |s: usize, t: usize| s * np + t;
    let mut cr = vec![Val::ZERO; np * np];
    let mut cl = vec![Val::ZERO; np * np];
    let mut ir = vec![Val::ZERO; np * np];
    let mut il = vec![Val::ZERO; np * np];
    let mut bp_i = vec![0u32; np * np];
    let mut bp_r = vec![0u32; np * np];
    let mut bp_l = vec![0u32; np * np];
    for width in 1..n {
        for s in 1..=n - width {
            let t = s + width;
            let mut best = cr[at(s, s)] + cl[at(s + 1, t)];
            let mut bm = s;
            for m in s + 1..t {
                let v = cr[at(s, m)] + cl[at(m + 1, t)];
                if v.gt(&best) {
                    best = v;
                    bm = m;
                }
            }
            ir[at(s, t)] = best + arcs.vals(s, t)[0];
            il[at(s, t)] = best + arcs.vals(t, s)[0];
            bp_i[at(s, t)] = bm as u32;
            let mut best = ir[at(s, s + 1)] + cr[at(s + 1, t)];
            let mut bm = s + 1;
            for m in s + 2..=t {
                let v = ir[at(s, m)] + cr[at(m, t)];
                if v.gt(&best) {
                    best = v;
                    bm = m;
                }
            }
            cr[at(s, t)] = best;
            bp_r[at(s, t)] = bm as u32;
            let mut best = cl[at(s, s)] + il[at(s, t)];
            let mut bm = s;
            for m in s + 1..t {
                let v = cl[at(s, m)] + il[at(m, t)];
                if v.gt(&best) {
                    best = v;
                    bm = m;
                }
            }
            cl[at(s, t)] = best;
            bp_l[at(s, t)] = bm as u32;
        }
    }
    let mut best = cl[at(1, 1)] + cr[at(1, n)] + arcs.vals(0, 1)[0];
    let mut root = 1;
    for r in 2..=n {
        let v = cl[at(1, r)] + cr[at(r, n)] + arcs.vals(0, r)[0];
        if v.gt(&best) {
            best = v;
            root = r;
        }
    }
    let mut heads = vec![0u32; n];
    let mut rels = vec![0u32; n];
    rels[root - 1] = arcs.rel(0, root, 0);
    let mut stack = vec![(CL, 1, root), (CR, root, n)];
    while let Some((ty, s, t)) = stack.pop() {
        if s == t {
            continue;
        }
        match ty {
            IR | IL => {
                let (h, d) = if ty == IR { (s, t) } else { (t, s) };
                heads[d - 1] = h as u32;
                rels[d - 1] = arcs.rel(h, d, 0);
                let m = bp_i[at(s, t)] as usize;
                stack.push((CR, s, m));
                stack.push((CL, m + 1, t));
            }
            CR => {
                let m = bp_r[at(s, t)] as usize;
                stack.push((IR, s, m));
                stack.push((CR, m, t));
            }
            _ => {
                let m = bp_l[at(s, t)] as usize;
                stack.push((CL, s, m));
                stack.push((IL, m, t));
            }
        }
    }
    Tree { val: best, heads, rels }
}
