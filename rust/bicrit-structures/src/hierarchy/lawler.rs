//! k-best labels from any exact oracle that accepts fixed nodes, by Lawler's (1972) partition
//! scheme (as in Murty's k-best assignments): after the best label y* of a subspace, split the
//! rest of the subspace by the free nodes v_1, v_2, … in order — subspace j keeps v_1..v_{j−1} as
//! in y* and flips v_j — and solve each part exactly. The parts are disjoint and cover every label
//! but y*, so popping parts by value yields the exact k best, best first.
//!
//! Used for the DAG label spaces (min-cut for ancestor-closed sets, the integer program for
//! leaf-terminated ones): up to M exact solves per returned label.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use bicrit_core::Result;

use super::value::Lex;

struct Part {
    value: Lex,
    seq: usize,
    fixed: Vec<i8>,
    label: Vec<u32>,
}

impl PartialEq for Part {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o) == Ordering::Equal
    }
}
impl Eq for Part {}
impl PartialOrd for Part {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Part {
    fn cmp(&self, o: &Self) -> Ordering {
        // max-heap: larger value first, then earlier discovery first
        self.value.partial_cmp(&o.value).unwrap_or(Ordering::Equal).then(o.seq.cmp(&self.seq))
    }
}

/// The `k` best labels (best first) under `value`, where `solve(fixed)` returns the best label
/// with `fixed[v]` ∈ {−1, 0, 1} (out, free, in) or `None` when no label agrees with `fixed`.
/// `root` is never branched on (it is in every label).
pub fn lawler_kbest(
    n: usize,
    root: usize,
    k: usize,
    mut solve: impl FnMut(&[i8]) -> Result<Option<Vec<u32>>>,
    value: impl Fn(&[u32]) -> Lex,
) -> Result<Vec<(Lex, Vec<u32>)>> {
    let mut out = Vec::new();
    let mut heap = BinaryHeap::new();
    let mut seq = 0;
    let fixed0 = vec![0i8; n];
    if let Some(label) = solve(&fixed0)? {
        heap.push(Part { value: value(&label), seq, fixed: fixed0, label });
        seq += 1;
    }
    let mut member = vec![false; n];
    while out.len() < k {
        let Some(part) = heap.pop() else { break };
        if out.len() + 1 < k {
            for &v in &part.label {
                member[v as usize] = true;
            }
            let mut f = part.fixed.clone();
            for v in 0..n {
                if v == root || part.fixed[v] != 0 {
                    continue;
                }
                let inside: i8 = if member[v] { 1 } else { -1 };
                let mut g = f.clone();
                g[v] = -inside;
                if let Some(label) = solve(&g)? {
                    heap.push(Part { value: value(&label), seq, fixed: g, label });
                    seq += 1;
                }
                f[v] = inside;
            }
            for &v in &part.label {
                member[v as usize] = false;
            }
        }
        out.push((part.value, part.label));
    }
    Ok(out)
}
