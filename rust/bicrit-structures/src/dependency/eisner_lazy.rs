//! Lazy k-best Eisner: Huang & Chiang (2005), "Better k-best parsing", Algorithm 3, on the
//! hypergraph of Eisner's chart (the items and recurrences of `eisner.rs`).
//!
//! The 1-best chart is filled first (values and best split of every item, O(n³)); an item's
//! candidate heap is built only when a second derivation of that item is asked for, and the
//! j-th derivation of an item asks its sub-items for at most their (j+1)-th. Asking for the k
//! best trees thus costs one Viterbi pass plus work along the k derivations, instead of a k-best
//! list in every cell (the eager `eisner::eisner_kbest`): what the ban-list oracle needs, which
//! asks for (banned) + 1 trees and skips the banned ones.
//!
//! Candidates of an item are index triples (i, j, l) into its two sub-items' derivation lists and
//! the arc's label list; (i, j, l)'s successors are enumerated without duplicates by the same
//! one-parent rule as the eager merge ((i, j, l + 1); (i, j + 1, 0) if l = 0; (i + 1, 0, 0) if
//! j = l = 0), so popping the heap yields exact order. Values and trees are the eager version's;
//! ties between equal values may come in another order.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::arcs::{ArcTable, Tree};
use super::eisner::{Entry, CL, CR, IL, IR};
use super::val::Val;

#[derive(Clone, Copy, Debug)]
struct Cand(Entry);

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
        let key = |c: &Cand| (c.0.m, c.0.i, c.0.j, c.0.l);
        self.0.val.lex_cmp(&other.0.val).then_with(|| key(other).cmp(&key(self)))
    }
}

/// The hypergraph of Eisner's chart with lazily extended derivation lists.
struct Lazy<'a> {
    arcs: &'a ArcTable,
    n: usize,
    np: usize,
    /// The 1-best derivation of every item (None: the item has none).
    best: Vec<Option<Entry>>,
    /// Derivations found so far, best first (empty until the item's heap is built).
    found: Vec<Vec<Entry>>,
    heap: Vec<BinaryHeap<Cand>>,
}

/// An item's hyperedges: the split range, its two sub-items, and its arc (h, d) if any.
struct Edges {
    ms: std::ops::Range<usize>,
    ty: usize,
    s: usize,
    t: usize,
}

impl<'a> Lazy<'a> {
    fn idx(&self, ty: usize, s: usize, t: usize) -> usize {
        (ty * self.np + s) * self.np + t
    }

    fn root(&self) -> usize {
        4 * self.np * self.np
    }

    fn edges(&self, c: usize) -> Edges {
        if c == self.root() {
            return Edges { ms: 1..self.n + 1, ty: usize::MAX, s: 0, t: self.n };
        }
        let (ty, s, t) = (c / (self.np * self.np), (c / self.np) % self.np, c % self.np);
        let ms = match ty {
            CR => s + 1..t + 1,
            _ => s..t,
        };
        Edges { ms, ty, s, t }
    }

    /// The two sub-items of hyperedge m of `e`.
    fn tails(&self, e: &Edges, m: usize) -> (usize, usize) {
        match e.ty {
            IR | IL => (self.idx(CR, e.s, m), self.idx(CL, m + 1, e.t)),
            CR => (self.idx(IR, e.s, m), self.idx(CR, m, e.t)),
            CL => (self.idx(CL, e.s, m), self.idx(IL, m, e.t)),
            _ => (self.idx(CL, 1, m), self.idx(CR, m, self.n)),
        }
    }

    /// The arc's candidate values of hyperedge m (one zero value for complete items).
    fn arc(&self, e: &Edges, m: usize) -> &'a [Val] {
        const ONE: [Val; 1] = [Val::ZERO];
        match e.ty {
            IR => self.arcs.vals(e.s, e.t),
            IL => self.arcs.vals(e.t, e.s),
            CR | CL => &ONE,
            _ => self.arcs.vals(0, m),
        }
    }

    fn new(arcs: &'a ArcTable) -> Self {
        let n = arcs.n();
        let np = n + 1;
        let cells = 4 * np * np + 1;
        let mut lz = Lazy {
            arcs,
            n,
            np,
            best: vec![None; cells],
            found: vec![Vec::new(); cells],
            heap: vec![BinaryHeap::new(); cells],
        };
        let lo = usize::from(!arcs.multi_root());
        let zero = Entry { val: Val::ZERO, m: 0, i: 0, j: 0, l: 0 };
        for s in lo..=n {
            let (a, b) = (lz.idx(CR, s, s), lz.idx(CL, s, s));
            lz.best[a] = Some(zero);
            lz.best[b] = Some(zero);
        }
        for width in 1..=n - lo {
            for s in lo..=n - width {
                let t = s + width;
                // incomplete items: one split maximisation for both arc directions
                let split = lz.best_split(s..t, |m| (lz.idx(CR, s, m), lz.idx(CL, m + 1, t)));
                for (ty, h, d) in [(IR, s, t), (IL, t, s)] {
                    let c = lz.idx(ty, s, t);
                    lz.best[c] = match (split, arcs.vals(h, d).first()) {
                        (Some(e), Some(a)) => Some(Entry { val: e.val + *a, ..e }),
                        _ => None,
                    };
                }
                let c = lz.idx(CR, s, t);
                lz.best[c] = lz.best_split(s + 1..t + 1, |m| (lz.idx(IR, s, m), lz.idx(CR, m, t)));
                let c = lz.idx(CL, s, t);
                lz.best[c] = lz.best_split(s..t, |m| (lz.idx(CL, s, m), lz.idx(IL, m, t)));
            }
        }
        if lo == 1 {
            let r = lz.root();
            lz.best[r] = lz.viterbi(r);
        }
        lz
    }

    /// The best split m of two sub-items (ties: the smallest m), without an arc.
    fn best_split(
        &self,
        ms: std::ops::Range<usize>,
        tails: impl Fn(usize) -> (usize, usize),
    ) -> Option<Entry> {
        let mut best: Option<Entry> = None;
        for m in ms {
            let (a, b) = tails(m);
            let (Some(x), Some(y)) = (&self.best[a], &self.best[b]) else { continue };
            let v = x.val + y.val;
            if best.is_none_or(|b| v.gt(&b.val)) {
                best = Some(Entry { val: v, m: m as u32, i: 0, j: 0, l: 0 });
            }
        }
        best
    }

    /// The best derivation of item `c` from its sub-items' best (ties: the smallest split).
    fn viterbi(&self, c: usize) -> Option<Entry> {
        let e = self.edges(c);
        let mut best: Option<Entry> = None;
        for m in e.ms.clone() {
            let (a, b) = self.tails(&e, m);
            let (Some(x), Some(y), Some(z)) = (self.best[a], self.best[b], self.arc(&e, m).first()) else {
                continue;
            };
            let v = x.val + y.val + *z;
            if best.is_none_or(|b| v.gt(&b.val)) {
                best = Some(Entry { val: v, m: m as u32, i: 0, j: 0, l: 0 });
            }
        }
        best
    }

    /// The value of the k-th derivation of item `c`, if it has one.
    fn value(&mut self, c: usize, k: u32) -> Option<Val> {
        self.kth(c, k as usize).map(|e| e.val)
    }

    /// The candidate (m, i, j, l) of item `c` with its value, if its parts exist.
    fn cand(&mut self, c: usize, m: u32, i: u32, j: u32, l: u32) -> Option<Cand> {
        let e = self.edges(c);
        let (a, b) = self.tails(&e, m as usize);
        let z = *self.arc(&e, m as usize).get(l as usize)?;
        let x = self.value(a, i)?;
        let y = self.value(b, j)?;
        Some(Cand(Entry { val: x + y + z, m, i, j, l }))
    }

    /// The k-th best derivation of item `c` (0: the best), if it has one.
    fn kth(&mut self, c: usize, k: usize) -> Option<Entry> {
        if k == 0 {
            return self.best[c];
        }
        if self.edges(c).ms.is_empty() {
            return None; // a one-token complete item has one derivation
        }
        if self.found[c].is_empty() {
            // build the heap: every hyperedge's first candidate but the best one's
            let best = self.best[c]?;
            self.found[c].push(best);
            let e = self.edges(c);
            let mut init = Vec::with_capacity(e.ms.len());
            for m in e.ms.clone() {
                if m as u32 == best.m {
                    continue;
                }
                let (a, b) = self.tails(&e, m);
                let (Some(x), Some(y), Some(z)) = (self.best[a], self.best[b], self.arc(&e, m).first())
                else {
                    continue;
                };
                init.push(Cand(Entry { val: x.val + y.val + *z, m: m as u32, i: 0, j: 0, l: 0 }));
            }
            self.heap[c] = BinaryHeap::from(init);
        }
        while self.found[c].len() <= k {
            // push the successors of the last derivation found, then pop the next one
            let Entry { m, i, j, l, .. } = *self.found[c].last()?;
            let mut next = Vec::with_capacity(3);
            next.extend(self.cand(c, m, i, j, l + 1));
            if l == 0 {
                next.extend(self.cand(c, m, i, j + 1, 0));
                if j == 0 {
                    next.extend(self.cand(c, m, i + 1, 0, 0));
                }
            }
            self.heap[c].extend(next);
            let Cand(e) = self.heap[c].pop()?;
            self.found[c].push(e);
        }
        Some(self.found[c][k])
    }

    /// The tree of derivation `e` of item `c`.
    fn tree(&mut self, c: usize, e: Entry) -> Tree {
        let n = self.n;
        let mut heads = vec![0u32; n];
        let mut rels = vec![0u32; n];
        let val = e.val;
        let mut stack = vec![(c, e)];
        while let Some((c, e)) = stack.pop() {
            let ed = self.edges(c);
            if ed.ms.is_empty() && c != self.root() {
                continue; // a one-token complete item
            }
            let m = e.m as usize;
            match ed.ty {
                IR => {
                    heads[ed.t - 1] = ed.s as u32;
                    rels[ed.t - 1] = self.arcs.rel(ed.s, ed.t, e.l as usize);
                }
                IL => {
                    heads[ed.s - 1] = ed.t as u32;
                    rels[ed.s - 1] = self.arcs.rel(ed.t, ed.s, e.l as usize);
                }
                CR | CL => {}
                _ => rels[m - 1] = self.arcs.rel(0, m, e.l as usize),
            }
            let (a, b) = self.tails(&ed, m);
            let ea = self.kth(a, e.i as usize).expect("a found derivation's parts exist");
            let eb = self.kth(b, e.j as usize).expect("a found derivation's parts exist");
            stack.push((a, ea));
            stack.push((b, eb));
        }
        Tree { val, heads, rels }
    }
}

/// The `k` best single-root projective trees under `arcs` (any number of root children when
/// [`ArcTable::multi_root`]), best first (fewer when fewer exist): the values of
/// `eisner::eisner_kbest`, computed lazily.
pub fn eisner_kbest_lazy(arcs: &ArcTable, k: usize) -> Vec<Tree> {
    let n = arcs.n();
    if n == 0 || k == 0 {
        return Vec::new();
    }
    let mut lz = Lazy::new(arcs);
    let goal = if arcs.multi_root() { lz.idx(CR, 0, n) } else { lz.root() };
    let mut out = Vec::with_capacity(k);
    for r in 0..k {
        let Some(e) = lz.kth(goal, r) else { break };
        out.push(lz.tree(goal, e));
    }
    out
}
