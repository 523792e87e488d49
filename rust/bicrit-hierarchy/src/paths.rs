//! Ā(l) for every leaf l (thesis §"Label Structure": the leaf with all its ancestors; in a DAG
//! the union of its paths to the root), and the leaf sums Σ_{n ∈ Ā(l)} α_n of a weight vector.

use bicrit_core::{Error, Result};

use crate::{HierarchyGraph, LeafSum};

/// Ā(l) of every leaf, as CSR rows in the order of `graph.leaves()`; each row is sorted.
#[derive(Clone, Debug)]
pub struct LeafPaths {
    /// The leaves, increasing (row r is Ā(leaves[r])).
    pub leaves: Vec<u32>,
    /// Row pointers (length |L| + 1).
    pub ptr: Vec<usize>,
    /// Node ids.
    pub idx: Vec<u32>,
}

impl LeafPaths {
    /// Ā(l) of every leaf of `g` (breadth-first search up the parents, O(Σ_l |Ā(l)|·indegree)).
    pub fn new(g: &HierarchyGraph) -> Self {
        let m = g.n_nodes();
        let leaves = g.leaves().to_vec();
        let mut ptr = Vec::with_capacity(leaves.len() + 1);
        let mut idx = Vec::new();
        let mut stamp = vec![u32::MAX; m];
        ptr.push(0);
        for (r, &l) in leaves.iter().enumerate() {
            let start = idx.len();
            idx.push(l);
            stamp[l as usize] = r as u32;
            let mut head = start;
            while head < idx.len() {
                let v = idx[head] as usize;
                head += 1;
                for &p in g.parents(v) {
                    if stamp[p as usize] != r as u32 {
                        stamp[p as usize] = r as u32;
                        idx.push(p);
                    }
                }
            }
            idx[start..].sort_unstable();
            ptr.push(idx.len());
        }
        LeafPaths { leaves, ptr, idx }
    }

    /// Number of leaves.
    pub fn len(&self) -> usize {
        self.leaves.len()
    }

    /// True when there is no leaf (never for a validated graph).
    pub fn is_empty(&self) -> bool {
        self.leaves.is_empty()
    }

    /// Ā(leaves[r]).
    pub fn row(&self, r: usize) -> &[u32] {
        &self.idx[self.ptr[r]..self.ptr[r + 1]]
    }

    /// Σ_{n ∈ Ā(l)} α_n for every leaf, in the order of `leaves`.
    pub fn sums(&self, alpha: &[f64]) -> Vec<f64> {
        (0..self.len()).map(|r| self.row(r).iter().map(|&v| alpha[v as usize]).sum()).collect()
    }

    /// Largest |Ā(l)|.
    pub fn max_len(&self) -> usize {
        (0..self.len()).map(|r| self.ptr[r + 1] - self.ptr[r]).max().unwrap_or(0)
    }
}

/// The largest violation of the leaf-sum constraints and of α ≥ 0 (0 when feasible).
pub fn max_violation(paths: &LeafPaths, alpha: &[f64], sum: LeafSum) -> f64 {
    let (lo, hi) = sum.bounds();
    let mut worst = alpha.iter().map(|&a| (-a).max(0.0)).fold(0.0, f64::max);
    for s in paths.sums(alpha) {
        worst = worst.max(lo - s).max(s - hi);
    }
    worst
}

/// Number of nodes on the longest root-to-leaf path of a tree (1 + the largest depth).
pub fn tree_path_nodes(g: &HierarchyGraph) -> usize {
    let mut depth = vec![0usize; g.n_nodes()];
    let mut best = 0;
    for &v in g.topo() {
        let v = v as usize;
        let d = g.parents(v).first().map_or(0, |&p| depth[p as usize] + 1);
        depth[v] = d;
        best = best.max(d + 1);
    }
    best
}

/// Checks a per-node vector: M entries, finite, ≥ 0.
pub fn check_per_node(g: &HierarchyGraph, what: &str, v: &[f64]) -> Result<()> {
    if v.len() != g.n_nodes() {
        return Err(Error::input(format!("{what} has {} entries for {} nodes", v.len(), g.n_nodes())));
    }
    for (n, &x) in v.iter().enumerate() {
        if !x.is_finite() || x < 0.0 {
            return Err(Error::input(format!(
                "{what} of {} is {x}; it must be finite and ≥ 0",
                g.describe(n)
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dag_paths_are_unions() {
        // 0 → 1, 2; 1 → 3; 2 → 3, 4
        let g = HierarchyGraph::new(&[vec![], vec![0], vec![0], vec![1, 2], vec![2]], 0, None).unwrap();
        let p = LeafPaths::new(&g);
        assert_eq!(p.leaves, vec![3, 4]);
        assert_eq!(p.row(0), &[0, 1, 2, 3]);
        assert_eq!(p.row(1), &[0, 2, 4]);
        assert_eq!(p.max_len(), 4);
        let a = [0.25, 0.25, 0.25, 0.25, 0.5];
        assert_eq!(p.sums(&a), vec![1.0, 1.0]);
        assert_eq!(max_violation(&p, &a, LeafSum::Exact), 0.0);
        assert!((max_violation(&p, &[0.0, 0.0, 0.0, 0.5, 1.0], LeafSum::Exact) - 0.5).abs() < 1e-15);
    }

    #[test]
    fn longest_tree_path() {
        let g = HierarchyGraph::new(&[vec![], vec![0], vec![1], vec![0]], 0, None).unwrap();
        assert_eq!(tree_path_nodes(&g), 3);
    }
}
