//! The validated node graph of a hierarchy: a rooted tree or DAG over M nodes stored as flat
//! parent and child CSR arrays, with a topological order (parents first) and the leaf set
//! (thesis §"Label Structure": P(n), C(n), leaves L).
//!
//! Validation names the offending node: several roots, a root with parents, parent ids out of
//! range, repeated parents, cycles (which are also the only way a node can be unreachable from a
//! single root).

use bicrit_core::{Error, Result};

/// A rooted tree or DAG (edges parent → child), validated on construction.
#[derive(Clone, Debug)]
pub struct HierarchyGraph {
    n: usize,
    root: usize,
    parent_ptr: Vec<u32>,
    parent_idx: Vec<u32>,
    child_ptr: Vec<u32>,
    child_idx: Vec<u32>,
    /// Topological order from the root (every parent before its children).
    topo: Vec<u32>,
    leaves: Vec<u32>,
    is_tree: bool,
    names: Option<Vec<String>>,
}

impl HierarchyGraph {
    /// Builds the graph from `parents[n]` (the parent ids of node n; empty for the root only).
    /// `names`, when given, is used in error messages and must have one entry per node.
    pub fn new(parents: &[Vec<usize>], root: usize, names: Option<Vec<String>>) -> Result<Self> {
        let n = parents.len();
        if n < 2 {
            return Err(Error::input(format!(
                "a hierarchy needs at least one node besides the root, got {n} node(s)"
            )));
        }
        if n >= u32::MAX as usize {
            return Err(Error::input(format!("a hierarchy has at most 2^32 − 2 nodes, got {n}")));
        }
        if let Some(names) = &names {
            if names.len() != n {
                return Err(Error::input(format!("{} names given for {n} nodes", names.len())));
            }
        }
        let label = |v: usize| describe(names.as_deref(), v);
        if root >= n {
            return Err(Error::input(format!("root {root} outside the nodes 0..{n}")));
        }
        if !parents[root].is_empty() {
            return Err(Error::input(format!(
                "the root {} has parents {:?}; the root must have none",
                label(root),
                parents[root]
            )));
        }
        let mut parent_ptr = Vec::with_capacity(n + 1);
        let mut parent_idx = Vec::new();
        parent_ptr.push(0u32);
        let mut n_children = vec![0u32; n];
        for (v, ps) in parents.iter().enumerate() {
            if v != root && ps.is_empty() {
                return Err(Error::input(format!(
                    "several roots: {} has no parent but the root is {}",
                    label(v),
                    label(root)
                )));
            }
            let start = parent_idx.len();
            for &p in ps {
                if p >= n {
                    return Err(Error::input(format!(
                        "{} lists parent {p}, outside the nodes 0..{n}",
                        label(v)
                    )));
                }
                if p == v {
                    return Err(Error::input(format!(
                        "the hierarchy has a cycle: {} is its own parent",
                        label(v)
                    )));
                }
                if parent_idx[start..].contains(&(p as u32)) {
                    return Err(Error::input(format!("{} lists parent {} twice", label(v), label(p))));
                }
                parent_idx.push(p as u32);
                n_children[p] += 1;
            }
            parent_idx[start..].sort_unstable();
            parent_ptr.push(parent_idx.len() as u32);
        }
        let mut child_ptr = vec![0u32; n + 1];
        for v in 0..n {
            child_ptr[v + 1] = child_ptr[v] + n_children[v];
        }
        let mut fill = child_ptr.clone();
        let mut child_idx = vec![0u32; parent_idx.len()];
        for v in 0..n {
            for &p in &parent_idx[parent_ptr[v] as usize..parent_ptr[v + 1] as usize] {
                child_idx[fill[p as usize] as usize] = v as u32;
                fill[p as usize] += 1;
            }
        }
        // Kahn's algorithm from the root: nodes left unvisited lie on or below a cycle.
        let mut indeg: Vec<u32> = (0..n).map(|v| parent_ptr[v + 1] - parent_ptr[v]).collect();
        let mut topo = Vec::with_capacity(n);
        topo.push(root as u32);
        let mut head = 0;
        while head < topo.len() {
            let u = topo[head] as usize;
            head += 1;
            for &c in &child_idx[child_ptr[u] as usize..child_ptr[u + 1] as usize] {
                indeg[c as usize] -= 1;
                if indeg[c as usize] == 0 {
                    topo.push(c);
                }
            }
        }
        if topo.len() < n {
            let mut seen = vec![false; n];
            for &v in &topo {
                seen[v as usize] = true;
            }
            // Walk up through unvisited parents until a node repeats: that node is on a cycle.
            let mut v = (0..n).find(|&v| !seen[v]).expect("an unvisited node");
            let mut on_path = vec![false; n];
            while !on_path[v] {
                on_path[v] = true;
                v = parent_idx[parent_ptr[v] as usize..parent_ptr[v + 1] as usize]
                    .iter()
                    .map(|&p| p as usize)
                    .find(|&p| !seen[p])
                    .expect("an unvisited node has an unvisited parent");
            }
            return Err(Error::input(format!(
                "the hierarchy has a cycle through {} ({} node(s) are not reachable from the root without it)",
                label(v),
                n - topo.len()
            )));
        }
        let leaves = (0..n).filter(|&v| child_ptr[v] == child_ptr[v + 1]).map(|v| v as u32).collect();
        let is_tree = (0..n).all(|v| v == root || parent_ptr[v + 1] - parent_ptr[v] == 1);
        Ok(HierarchyGraph {
            n,
            root,
            parent_ptr,
            parent_idx,
            child_ptr,
            child_idx,
            topo,
            leaves,
            is_tree,
            names,
        })
    }

    /// Number of nodes M.
    pub fn n_nodes(&self) -> usize {
        self.n
    }

    /// The root (part of every label).
    pub fn root(&self) -> usize {
        self.root
    }

    /// Is every non-root node's parent unique?
    pub fn is_tree(&self) -> bool {
        self.is_tree
    }

    /// P(v), sorted.
    #[inline]
    pub fn parents(&self, v: usize) -> &[u32] {
        &self.parent_idx[self.parent_ptr[v] as usize..self.parent_ptr[v + 1] as usize]
    }

    /// C(v), sorted.
    #[inline]
    pub fn children(&self, v: usize) -> &[u32] {
        &self.child_idx[self.child_ptr[v] as usize..self.child_ptr[v + 1] as usize]
    }

    /// Is v a leaf (no children)?
    #[inline]
    pub fn is_leaf(&self, v: usize) -> bool {
        self.child_ptr[v] == self.child_ptr[v + 1]
    }

    /// The leaves, increasing.
    pub fn leaves(&self) -> &[u32] {
        &self.leaves
    }

    /// A topological order starting at the root (parents before children).
    pub fn topo(&self) -> &[u32] {
        &self.topo
    }

    /// Number of parent → child edges.
    pub fn n_edges(&self) -> usize {
        self.parent_idx.len()
    }

    /// "node 3 ('Physics')" for error messages.
    pub fn describe(&self, v: usize) -> String {
        describe(self.names.as_deref(), v)
    }
}

fn describe(names: Option<&[String]>, v: usize) -> String {
    match names.and_then(|ns| ns.get(v)) {
        Some(name) => format!("node {v} ({name:?})"),
        None => format!("node {v}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_and_dag_shapes() {
        // 0 → 1, 2; 1 → 3, 4; 2 → 4 (DAG)
        let g = HierarchyGraph::new(&[vec![], vec![0], vec![0], vec![1], vec![1, 2]], 0, None).unwrap();
        assert!(!g.is_tree());
        assert_eq!(g.children(1), &[3, 4]);
        assert_eq!(g.leaves(), &[3, 4]);
        assert_eq!(g.topo()[0], 0);
        let t = HierarchyGraph::new(&[vec![1], vec![], vec![1]], 1, None).unwrap();
        assert!(t.is_tree());
        assert_eq!(t.leaves(), &[0, 2]);
    }

    #[test]
    fn bad_graphs_name_the_node() {
        let names = Some(vec!["r".into(), "a".into(), "b".into()]);
        let e = HierarchyGraph::new(&[vec![], vec![2], vec![1]], 0, names.clone()).unwrap_err();
        assert!(e.to_string().contains("cycle"), "{e}");
        let e = HierarchyGraph::new(&[vec![], vec![0], vec![]], 0, names.clone()).unwrap_err();
        assert!(e.to_string().contains("several roots") && e.to_string().contains("\"b\""), "{e}");
        let e = HierarchyGraph::new(&[vec![], vec![0], vec![7]], 0, None).unwrap_err();
        assert!(e.to_string().contains("parent 7"), "{e}");
        let e = HierarchyGraph::new(&[vec![1], vec![0], vec![0]], 0, None).unwrap_err();
        assert!(e.to_string().contains("root"), "{e}");
        let e = HierarchyGraph::new(&[vec![], vec![0, 0]], 0, None).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        assert!(HierarchyGraph::new(&[vec![]], 0, None).is_err());
        let e = HierarchyGraph::new(&[vec![], vec![1]], 0, None).unwrap_err();
        assert!(e.to_string().contains("cycle"), "{e}");
    }
}
