//! Non-projective decoding: the maximum spanning arborescence by Chu–Liu–Edmonds (Chu & Liu 1965,
//! Edmonds 1967) on a dense graph, and k-best / ban-list answers by Lawler's partitioning
//! (Lawler 1972, as used for k-best arborescences by Camerini, Fratta & Maffioli 1980).
//!
//! Single root (UD): arcs leaving the root carry `root = −1` in the lexicographic value
//! (−#root children, primary, secondary) (`val.rs`). Every single-root tree beats every tree with
//! several root children, so the maximum arborescence is the best single-root tree whenever one
//! exists (always without constraints; under Lawler's constraints, a result with several root
//! children proves the subproblem has no single-root tree). CLE is exact on any totally ordered
//! abelian group of weights, so one run suffices (no re-run per root child, no big-M constant).
//!
//! Contraction is the textbook recursive form: pick every node's best incoming arc; if they form a
//! cycle C, contract it, with w'(u → C) = max_{v∈C} w(u → v) − w(best_in(v) → v) and
//! w'(C → v) = max_{x∈C} w(x → v); solve the smaller graph and expand. O(n²) per level, at most
//! n/2 levels (O(n³) worst case, a few levels in practice).
//!
//! Lawler's partitioning over *labeled* arcs: a subproblem fixes the arcs of some dependents
//! (forced) and bans labeled candidates. After popping the best tree T of a subproblem, for the
//! free dependents d₁ < d₂ < … it creates the subproblems "arcs of d₁..d_{i−1} as in T, candidate of
//! d_i in T banned", which partition the subproblem's trees other than T. Each subproblem is solved
//! by one CLE run on arc values max over non-banned candidates. T always uses the first non-banned
//! candidate of every free arc, so the bans of an arc are a prefix of its sorted candidate list, and
//! a subproblem popped j-th has at most j − 1 bans: candidate lists of length k suffice for the
//! k best trees (`arcs.rs`).
//!
//! Subproblems are solved lazily: a new one enters the queue under an upper bound of its best
//! tree — every dependent's best allowed arc, the cycle and single-root constraints dropped — and
//! is solved by CLE only when that bound reaches the top. A solved tree at the top is at least
//! every bound left, hence the next best tree. Of the n subproblems a pop creates, few are ever
//! solved (a ban-list query on a 50-word sentence: a handful of CLE runs instead of 50 per ban).
//! Ties are popped in the order of creation, as when every subproblem was solved at once, so the
//! same trees come out in the same order (tested against that order and against enumeration).

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use super::arcs::{ArcTable, Tree};
use super::val::Val;

/// Maximum spanning arborescence rooted at node 0 of the dense graph on `nn` nodes, where
/// `w[u * nn + v]` is the value of arc u → v and `ok[u * nn + v]` says whether it exists. Returns the
/// parent of every node (`parent[0]` is meaningless), or `None` when some node is unreachable.
pub fn cle_dense(nn: usize, w: &[Val], ok: &[bool]) -> Option<Vec<usize>> {
    let mut parent = vec![usize::MAX; nn];
    for v in 1..nn {
        let mut best: Option<usize> = None;
        for u in 0..nn {
            if u != v && ok[u * nn + v] && best.is_none_or(|b| w[u * nn + v].gt(&w[b * nn + v])) {
                best = Some(u);
            }
        }
        parent[v] = best?;
    }
    let Some(cycle) = find_cycle(&parent) else {
        return Some(parent);
    };
    let mut in_c = vec![false; nn];
    for &c in &cycle {
        in_c[c] = true;
    }
    // node 0 has no incoming arc, so it is never on a cycle and keeps index 0
    let orig: Vec<usize> = (0..nn).filter(|&v| !in_c[v]).collect();
    let c = orig.len();
    let n2 = c + 1;
    let mut w2 = vec![Val::ZERO; n2 * n2];
    let mut ok2 = vec![false; n2 * n2];
    let mut enter = vec![usize::MAX; n2];
    let mut leave = vec![usize::MAX; n2];
    for (u2, &u) in orig.iter().enumerate() {
        for (v2, &v) in orig.iter().enumerate() {
            if ok[u * nn + v] {
                w2[u2 * n2 + v2] = w[u * nn + v];
                ok2[u2 * n2 + v2] = true;
            }
        }
        let mut best: Option<(Val, usize)> = None;
        for &v in &cycle {
            if ok[u * nn + v] {
                let val = w[u * nn + v] - w[parent[v] * nn + v];
                if best.is_none_or(|(b, _)| val.gt(&b)) {
                    best = Some((val, v));
                }
            }
        }
        if let Some((val, v)) = best {
            w2[u2 * n2 + c] = val;
            ok2[u2 * n2 + c] = true;
            enter[u2] = v;
        }
    }
    for (v2, &v) in orig.iter().enumerate().skip(1) {
        let mut best: Option<(Val, usize)> = None;
        for &x in &cycle {
            if ok[x * nn + v] && best.is_none_or(|(b, _)| w[x * nn + v].gt(&b)) {
                best = Some((w[x * nn + v], x));
            }
        }
        if let Some((val, x)) = best {
            w2[c * n2 + v2] = val;
            ok2[c * n2 + v2] = true;
            leave[v2] = x;
        }
    }
    let sub = cle_dense(n2, &w2, &ok2)?;
    for (v2, &v) in orig.iter().enumerate().skip(1) {
        let p2 = sub[v2];
        parent[v] = if p2 == c { leave[v2] } else { orig[p2] };
    }
    let u2 = sub[c];
    parent[enter[u2]] = orig[u2];
    Some(parent)
}

/// A cycle among `parent` pointers (node 0 is the root), if any.
fn find_cycle(parent: &[usize]) -> Option<Vec<usize>> {
    let nn = parent.len();
    let mut colour = vec![0u8; nn]; // 0 unseen, 1 on the current walk, 2 done
    colour[0] = 2;
    let mut path = Vec::new();
    for start in 1..nn {
        let mut v = start;
        path.clear();
        while colour[v] == 0 {
            colour[v] = 1;
            path.push(v);
            v = parent[v];
        }
        if colour[v] == 1 {
            let pos = path.iter().position(|&u| u == v).unwrap_or(0);
            return Some(path[pos..].to_vec());
        }
        for &u in &path {
            colour[u] = 2;
        }
    }
    None
}

/// A Lawler subproblem: forced (head, candidate slot) per dependent, and banned candidates as a
/// multiset of arcs (an arc banned c times has its first c candidates banned).
#[derive(Clone, Debug)]
struct Sub {
    forced: Vec<Option<(u32, u32)>>,
    bans: Vec<(u32, u32)>,
}

/// A solved subproblem: the tree with the candidate slot of every arc.
struct Solved {
    val: Val,
    heads: Vec<u32>,
    slots: Vec<u32>,
}

struct Scratch {
    w: Vec<Val>,
    ok: Vec<bool>,
    slot: Vec<u32>,
    banned: Vec<u32>,
}

fn solve(arcs: &ArcTable, sub: &Sub, sc: &mut Scratch) -> Option<Solved> {
    let n = arcs.n();
    let nn = n + 1;
    sc.w.clear();
    sc.w.resize(nn * nn, Val::ZERO);
    sc.ok.clear();
    sc.ok.resize(nn * nn, false);
    sc.slot.clear();
    sc.slot.resize(nn * nn, 0);
    ban_counts(sub, nn, &mut sc.banned);
    for d in 1..=n {
        let mut set = |h: usize, s: usize| {
            let mut v = arcs.vals(h, d)[s];
            if h == 0 && !arcs.multi_root() {
                v.root = -1;
            }
            sc.w[h * nn + d] = v;
            sc.ok[h * nn + d] = true;
            sc.slot[h * nn + d] = s as u32;
        };
        match sub.forced[d] {
            Some((h, s)) => set(h as usize, s as usize),
            None => {
                for h in 0..=n {
                    let c = sc.banned[h * nn + d] as usize;
                    if h != d && c < arcs.vals(h, d).len() {
                        set(h, c);
                    }
                }
            }
        }
    }
    let parent = cle_dense(nn, &sc.w, &sc.ok)?;
    if !arcs.multi_root() && (1..=n).filter(|&d| parent[d] == 0).count() != 1 {
        return None;
    }
    let mut val = Val::ZERO;
    for (d, &p) in parent.iter().enumerate().skip(1) {
        val = val + sc.w[p * nn + d];
    }
    val.root = 0;
    Some(Solved {
        val,
        heads: (1..=n).map(|d| parent[d] as u32).collect(),
        slots: (1..=n).map(|d| sc.slot[parent[d] * nn + d]).collect(),
    })
}

/// A queued subproblem: its best tree's value once solved, before that an upper bound of it
/// (secondary component +∞, so that a bound tied with a solved value in the primary is solved
/// first).
struct Node {
    val: Val,
    seq: u64,
    sub: Sub,
    tree: Option<Solved>,
}

impl PartialEq for Node {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}
impl Eq for Node {}
impl PartialOrd for Node {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Node {
    /// Larger value first; on equal values the older subproblem first (deterministic).
    fn cmp(&self, other: &Self) -> Ordering {
        self.val.lex_cmp(&other.val).then_with(|| other.seq.cmp(&self.seq))
    }
}

/// Up to `k` single-root trees (not necessarily projective) in decreasing order of value,
/// skipping those `accept` rejects; at most `max_pops` trees are examined. With `accept` always
/// true and `max_pops = k` these are the k best trees; with a ban list of b labels, `max_pops =
/// k + b` and `accept = not banned` give the k best non-banned trees.
pub fn cle_kbest(
    arcs: &ArcTable,
    k: usize,
    max_pops: usize,
    mut accept: impl FnMut(&[u32], &[u32]) -> bool,
) -> Vec<Tree> {
    let n = arcs.n();
    let mut out = Vec::new();
    if n == 0 || k == 0 {
        return out;
    }
    let mut sc = Scratch { w: Vec::new(), ok: Vec::new(), slot: Vec::new(), banned: Vec::new() };
    let mut heap = BinaryHeap::new();
    let mut seq = 0u64;
    let root = Sub { forced: vec![None; n + 1], bans: Vec::new() };
    if let Some(t) = solve(arcs, &root, &mut sc) {
        heap.push(Node { val: t.val, seq, sub: root, tree: Some(t) });
        seq += 1;
    }
    let mut pops = 0;
    let mut bound = Vec::new();
    while out.len() < k && pops < max_pops {
        let Some(node) = heap.pop() else { break };
        let Some(tree) = node.tree else {
            // A bound at the top: solve the subproblem; back in the queue under its value.
            if let Some(t) = solve(arcs, &node.sub, &mut sc) {
                heap.push(Node { val: t.val, seq: node.seq, sub: node.sub, tree: Some(t) });
            }
            continue;
        };
        pops += 1;
        let rels: Vec<u32> =
            (1..=n).map(|d| arcs.rel(tree.heads[d - 1] as usize, d, tree.slots[d - 1] as usize)).collect();
        if accept(&tree.heads, &rels) {
            out.push(Tree { val: node.val, heads: tree.heads.clone(), rels });
        }
        if out.len() == k || pops == max_pops {
            break;
        }
        best_allowed(arcs, &node.sub, &mut sc.banned, &mut bound);
        let mut forced = node.sub.forced.clone();
        for d in 1..=n {
            if node.sub.forced[d].is_some() {
                continue;
            }
            let (h, s) = (tree.heads[d - 1], tree.slots[d - 1]);
            if let Some(p) = child_bound(arcs, &forced, &tree, &bound, &sc.banned, d, h) {
                let mut bans = node.sub.bans.clone();
                bans.push((h, d as u32));
                let child = Sub { forced: forced.clone(), bans };
                heap.push(Node { val: Val { root: 0, p, s: f64::INFINITY }, seq, sub: child, tree: None });
                seq += 1;
            }
            forced[d] = Some((h, s));
        }
    }
    out
}

/// How many times `sub` bans each arc, `banned[h·nn + d]` (an arc banned c times has its first c
/// candidates banned).
fn ban_counts(sub: &Sub, nn: usize, banned: &mut Vec<u32>) {
    banned.clear();
    banned.resize(nn * nn, 0);
    for &(h, d) in &sub.bans {
        banned[h as usize * nn + d as usize] += 1;
    }
}

/// The value of an arc as the subproblems score it (primary and secondary; the single-root
/// penalty is dropped, as it is from a solved tree's value).
fn arc_val(arcs: &ArcTable, h: usize, d: usize, slot: usize) -> Option<Val> {
    arcs.vals(h, d).get(slot).map(|v| Val { root: 0, ..*v })
}

/// Every dependent's best allowed arc under `sub` (`bound[d]`, `None` when it has none), and
/// `banned` = the ban counts of `sub` (`banned[h·(n + 1) + d]`).
fn best_allowed(arcs: &ArcTable, sub: &Sub, banned: &mut Vec<u32>, bound: &mut Vec<Option<Val>>) {
    let n = arcs.n();
    ban_counts(sub, n + 1, banned);
    bound.clear();
    bound.push(None);
    for d in 1..=n {
        bound.push(match sub.forced[d] {
            Some((h, s)) => arc_val(arcs, h as usize, d, s as usize),
            None => best_in(arcs, banned, d, usize::MAX),
        });
    }
}

/// The best allowed arc into `d` given the ban counts, with one more ban on the arc from `extra`.
fn best_in(arcs: &ArcTable, banned: &[u32], d: usize, extra: usize) -> Option<Val> {
    let nn = arcs.n() + 1;
    let mut best: Option<Val> = None;
    for h in (0..nn).filter(|&h| h != d) {
        let c = banned[h * nn + d] as usize + usize::from(h == extra);
        if let Some(v) = arc_val(arcs, h, d, c) {
            if best.is_none_or(|b| v.gt(&b)) {
                best = Some(v);
            }
        }
    }
    best
}

/// The primary part of an upper bound on the best tree of the child "free dependents before `di`
/// as in `tree`, the arc (`hi`, `di`) banned once more" (`None`: `di` has no arc left). Summed over
/// the dependents in the order [`solve`] sums a tree's value, each term at least the tree's, so
/// rounding keeps it a bound.
fn child_bound(
    arcs: &ArcTable,
    forced: &[Option<(u32, u32)>],
    tree: &Solved,
    bound: &[Option<Val>],
    banned: &[u32],
    di: usize,
    hi: u32,
) -> Option<f64> {
    let mut p = 0.0;
    for d in 1..=arcs.n() {
        let v = if d == di {
            best_in(arcs, banned, d, hi as usize)?
        } else if d < di && forced[d].is_some() {
            arc_val(arcs, tree.heads[d - 1] as usize, d, tree.slots[d - 1] as usize)?
        } else {
            bound[d]?
        };
        p += v.p;
    }
    Some(p)
}
