//! Dynamic programs over a tree hierarchy for the multi-label spaces (thesis §"Calculating the most
//! violating label": "when the graph is a tree, ŷ_i can be computed in time O(M) using dynamic
//! programming").
//!
//! Every label contains the root. With `gain[v]` the objective contribution of node v:
//! * any ancestor-closed set: V(v) = gain(v) + Σ_{c ∈ C(v)} max(0, V(c)) — a child subtree is
//!   kept when it adds a positive value (ties: dropped);
//! * leaf-terminated sets (Y_m): a present internal node needs ≥ 1 present child, so
//!   V(v) = gain(v) + Σ_c max(0, V(c)) when some V(c) > 0, else gain(v) + max_c V(c).
//!
//! The k-best versions keep, per node, the k best values of its subtree's configurations with the
//! node present (B_v), merge children one at a time (top-k of sums of two sorted lists, only pairs
//! with (i+1)(j+1) ≤ k can enter), and store back-pointers to rebuild the labels: O(M·k log k)
//! time and O(M·k) memory, exact over the whole space.

use super::graph::HierarchyGraph;
use super::value::Val;

const NONE: u32 = u32::MAX;

/// Reusable buffers of the tree programs (kept per thread by the caller).
#[derive(Debug, Default)]
pub struct TreeScratch<V> {
    val: Vec<V>,
    best: Vec<u32>,
    bvals: Vec<V>,
    blen: Vec<u32>,
    apos: Vec<u32>,
    bp: Vec<(u32, u32)>,
    acc: Vec<V>,
    cand: Vec<(V, u32, u32)>,
    stack: Vec<(u32, u32)>,
}

/// The best label (sorted node ids, root included) and its value Σ_{v ∈ y} gain(v).
pub fn tree_best<V: Val>(
    g: &HierarchyGraph,
    gain: &[V],
    leaf_terminated: bool,
    s: &mut TreeScratch<V>,
) -> (V, Vec<u32>) {
    let n = g.n_nodes();
    s.val.clear();
    s.val.resize(n, V::ZERO);
    s.best.clear();
    s.best.resize(n, NONE);
    for &v in g.topo().iter().rev() {
        let v = v as usize;
        let ch = g.children(v);
        let mut sum = V::ZERO;
        let mut any = false;
        let mut arg = NONE;
        let mut argv = V::ZERO;
        for &c in ch {
            let x = s.val[c as usize];
            if x > V::ZERO {
                sum = sum + x;
                any = true;
            }
            if arg == NONE || x > argv {
                arg = c;
                argv = x;
            }
        }
        s.val[v] = if !leaf_terminated || ch.is_empty() || any {
            gain[v] + sum
        } else {
            s.best[v] = arg;
            gain[v] + argv
        };
    }
    let root = g.root();
    let mut label = Vec::new();
    s.stack.clear();
    s.stack.push((root as u32, 0));
    while let Some((v, _)) = s.stack.pop() {
        label.push(v);
        let v = v as usize;
        if s.best[v] != NONE {
            s.stack.push((s.best[v], 0));
        } else {
            for &c in g.children(v) {
                if s.val[c as usize] > V::ZERO {
                    s.stack.push((c, 0));
                }
            }
        }
    }
    label.sort_unstable();
    (s.val[root], label)
}

/// Appends to `s.cand` the pairs (i, j) of two descending lists whose sum can be among the k
/// largest: those with (i + 1)(j + 1) ≤ k.
fn pair_candidates<V: Val>(
    a: &[V],
    b_len: usize,
    b_at: impl Fn(usize) -> V,
    k: usize,
    cand: &mut Vec<(V, u32, u32)>,
) {
    for (i, &ai) in a.iter().enumerate() {
        let jmax = (k / (i + 1)).min(b_len);
        if jmax == 0 {
            break;
        }
        for j in 0..jmax {
            cand.push((ai + b_at(j), i as u32, j as u32));
        }
    }
}

fn sort_candidates<V: Val>(cand: &mut [(V, u32, u32)]) {
    cand.sort_by(|x, y| {
        y.0.partial_cmp(&x.0).unwrap_or(std::cmp::Ordering::Equal).then(x.1.cmp(&y.1)).then(x.2.cmp(&y.2))
    });
}

/// The k best labels, best first, with their values (fewer when the space is smaller).
pub fn tree_kbest<V: Val>(
    g: &HierarchyGraph,
    gain: &[V],
    leaf_terminated: bool,
    k: usize,
    s: &mut TreeScratch<V>,
) -> Vec<(V, Vec<u32>)> {
    let n = g.n_nodes();
    let k = k.max(1);
    s.bvals.clear();
    s.bvals.resize(n * k, V::ZERO);
    s.blen.clear();
    s.blen.resize(n, 0);
    s.apos.clear();
    s.apos.resize(n, NONE);
    s.bp.clear();
    s.bp.resize(n * k, (NONE, NONE));
    for &v in g.topo().iter().rev() {
        let v = v as usize;
        let ch = g.children(v);
        // acc: k best values of the processed children's joint configurations.
        s.acc.clear();
        if !leaf_terminated || ch.is_empty() {
            s.acc.push(V::ZERO);
        }
        for &c in ch {
            let c = c as usize;
            let bl = s.blen[c] as usize;
            let bc = &s.bvals[c * k..c * k + bl];
            // A_c: "c absent" (value 0) inserted after the entries of B_c that are > 0.
            let p = bc.iter().take_while(|&&x| x > V::ZERO).count();
            s.apos[c] = p as u32;
            let a_len = (bl + 1).min(k);
            let a_at = |j: usize| -> V {
                if j < p {
                    bc[j]
                } else if j == p {
                    V::ZERO
                } else {
                    bc[j - 1]
                }
            };
            s.cand.clear();
            pair_candidates(&s.acc, a_len, a_at, k, &mut s.cand);
            if leaf_terminated {
                // c is the first present child: all earlier children absent.
                for (j, &x) in bc.iter().enumerate() {
                    s.cand.push((x, NONE, j as u32));
                }
            }
            sort_candidates(&mut s.cand);
            s.cand.truncate(k);
            s.acc.clear();
            for (e, &(x, i, j)) in s.cand.iter().enumerate() {
                s.acc.push(x);
                s.bp[c * k + e] = (i, j);
            }
        }
        let len = s.acc.len();
        for e in 0..len {
            s.bvals[v * k + e] = gain[v] + s.acc[e];
        }
        s.blen[v] = len as u32;
    }
    let root = g.root();
    let mut out = Vec::with_capacity(s.blen[root] as usize);
    for e in 0..s.blen[root] as usize {
        let mut label = Vec::new();
        s.stack.clear();
        s.stack.push((root as u32, e as u32));
        while let Some((v, mut e)) = s.stack.pop() {
            label.push(v);
            let v = v as usize;
            for &c in g.children(v).iter().rev() {
                let c = c as usize;
                let (i, j) = s.bp[c * k + e as usize];
                if i == NONE {
                    // first present child of a leaf-terminated node: earlier children absent
                    s.stack.push((c as u32, j));
                    break;
                }
                let p = s.apos[c];
                if j != p {
                    let idx = if j < p { j } else { j - 1 };
                    s.stack.push((c as u32, idx));
                }
                e = i;
            }
        }
        label.sort_unstable();
        out.push((s.bvals[root * k + e], label));
    }
    out
}
