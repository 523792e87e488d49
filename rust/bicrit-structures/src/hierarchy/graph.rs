//! The validated node graph of a hierarchy: a rooted tree or DAG over M nodes stored as flat
//! parent and child CSR arrays, with a topological order (parents first) and the leaf set
//! (thesis §"Label Structure": P(n), C(n), leaves L).
//!
//! Validation names the offending node: duplicate names, several roots, a root with parents,
//! parent ids out of range, repeated parents, cycles (named along the cycle; they are also the
//! only way a node can be unreachable from a single root). This is bicrit's one implementation of
//! a hierarchy graph: the Python `bicrit.hierarchy.Hierarchy` holds one (through the bindings)
//! for its checks, orders, depths and ancestor closures.

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
            let mut seen = std::collections::HashMap::with_capacity(n);
            for (i, name) in names.iter().enumerate() {
                if let Some(j) = seen.insert(name.as_str(), i) {
                    return Err(Error::input(format!("duplicate node name '{name}' (ids {j} and {i})")));
                }
            }
        }
        let label = |v: usize| node(names.as_deref(), v);
        if root >= n {
            return Err(Error::input(format!("root id {root} outside 0..{}", n - 1)));
        }
        if !parents[root].is_empty() {
            return Err(Error::input(format!(
                "the root {} has parents {:?}; the root must have none",
                label(root),
                parents[root]
            )));
        }
        let roots: Vec<usize> = (0..n).filter(|&v| parents[v].is_empty()).collect();
        if roots.len() > 1 {
            return Err(several_roots(names.as_deref(), &roots));
        }
        let mut parent_ptr = Vec::with_capacity(n + 1);
        let mut parent_idx = Vec::new();
        parent_ptr.push(0u32);
        let mut n_children = vec![0u32; n];
        for (v, ps) in parents.iter().enumerate() {
            let start = parent_idx.len();
            for &p in ps {
                if p >= n {
                    return Err(Error::input(format!(
                        "{} has parent id {p}, outside 0..{}",
                        label(v),
                        n - 1
                    )));
                }
                if p == v {
                    return Err(Error::input(format!(
                        "the hierarchy has a cycle: {} is its own parent",
                        label(v)
                    )));
                }
                if parent_idx[start..].contains(&(p as u32)) {
                    return Err(Error::input(format!("{} lists a parent twice: {}", label(v), label(p))));
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
            let mut step = vec![usize::MAX; n];
            let mut walk = Vec::new();
            while step[v] == usize::MAX {
                step[v] = walk.len();
                walk.push(v);
                v = parent_idx[parent_ptr[v] as usize..parent_ptr[v + 1] as usize]
                    .iter()
                    .map(|&p| p as usize)
                    .find(|&p| !seen[p])
                    .expect("an unvisited node has an unvisited parent");
            }
            // the cycle in parent → child order, from v back to v: the walk went up, so read it
            // backwards
            let mut cycle = vec![quoted(names.as_deref(), v)];
            cycle.extend(walk[step[v]..].iter().rev().map(|&c| quoted(names.as_deref(), c)));
            return Err(Error::input(format!(
                "the hierarchy has a cycle through {} ({}); {} nodes are on or below a cycle and \
                 unreachable from the root",
                label(v),
                cycle.join(" -> "),
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

    /// The depth of every node: 0 at the root, else 1 + the largest depth of its parents (the
    /// path length to the root in a tree, the longest one in a DAG).
    pub fn depth(&self) -> Vec<u32> {
        let mut depth = vec![0u32; self.n];
        for &v in &self.topo[1..] {
            let v = v as usize;
            depth[v] = 1 + self.parents(v).iter().map(|&p| depth[p as usize]).max().unwrap_or(0);
        }
        depth
    }

    /// The ancestors of every node, itself and the root included, as CSR rows (sorted).
    pub fn ancestor_rows(&self) -> (Vec<u64>, Vec<u32>) {
        let mut rows: Vec<Vec<u32>> = vec![Vec::new(); self.n];
        for &v in &self.topo {
            let v = v as usize;
            let mut row: Vec<u32> =
                self.parents(v).iter().flat_map(|&p| rows[p as usize].iter().copied()).collect();
            row.push(v as u32);
            row.sort_unstable();
            row.dedup();
            rows[v] = row;
        }
        let mut indptr = Vec::with_capacity(self.n + 1);
        indptr.push(0u64);
        let mut indices = Vec::new();
        for row in rows {
            indices.extend_from_slice(&row);
            indptr.push(indices.len() as u64);
        }
        (indptr, indices)
    }

    /// The ancestor closure of every node set: its nodes and all their ancestors, the root
    /// included (an empty set stays empty), ascending. Ids must be below [`Self::n_nodes`].
    pub fn closures(&self, sets: &[Vec<usize>]) -> Vec<Vec<u32>> {
        let mut mark = vec![usize::MAX; self.n]; // the last set that reached each node
        let mut stack = Vec::new();
        let mut out = Vec::with_capacity(sets.len());
        for (i, set) in sets.iter().enumerate() {
            let mut closed = Vec::new();
            stack.extend(set.iter().copied());
            while let Some(v) = stack.pop() {
                if mark[v] != i {
                    mark[v] = i;
                    closed.push(v as u32);
                    stack.extend(self.parents(v).iter().map(|&p| p as usize));
                }
            }
            closed.sort_unstable();
            out.push(closed);
        }
        out
    }

    /// "node 3 ('Physics')" for error messages.
    pub fn describe(&self, v: usize) -> String {
        describe(self.names.as_deref(), v)
    }
}

/// The unique node without parents: the root of `parents`.
pub fn find_root(parents: &[Vec<usize>], names: Option<&[String]>) -> Result<usize> {
    if parents.len() < 2 {
        return Err(Error::input(format!(
            "a hierarchy needs at least one node besides the root, got {} node(s)",
            parents.len()
        )));
    }
    let roots: Vec<usize> = (0..parents.len()).filter(|&v| parents[v].is_empty()).collect();
    match roots.as_slice() {
        [r] => Ok(*r),
        [] => Err(Error::input("no node is without parents, so there is no root (a cycle?)")),
        _ => Err(several_roots(names, &roots)),
    }
}

fn several_roots(names: Option<&[String]>, roots: &[usize]) -> Error {
    const SHOWN: usize = 10;
    let mut listed: Vec<String> = roots.iter().take(SHOWN).map(|&r| quoted(names, r)).collect();
    if roots.len() > SHOWN {
        listed.push(format!("and {} more", roots.len() - SHOWN));
    }
    Error::input(format!(
        "a hierarchy needs one root, found {} nodes without parents: {} (join them under one root \
         node)",
        roots.len(),
        listed.join(", ")
    ))
}

/// `node 'Physics'` when the node has a name, else `node 3`.
fn node(names: Option<&[String]>, v: usize) -> String {
    match names.and_then(|ns| ns.get(v)) {
        Some(name) => format!("node '{name}'"),
        None => format!("node {v}"),
    }
}

/// `'Physics'` when the node has a name, else `node 3`.
fn quoted(names: Option<&[String]>, v: usize) -> String {
    match names.and_then(|ns| ns.get(v)) {
        Some(name) => format!("'{name}'"),
        None => format!("node {v}"),
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

    fn names_of(n: usize) -> Option<Vec<String>> {
        Some((0..n).map(|i| format!("n{i}")).collect())
    }

    #[test]
    fn depth_and_ancestors() {
        // 0 → 1, 2; 1 → 3; 2 → 3 (DAG); 3 → 4
        let g = HierarchyGraph::new(&[vec![], vec![0], vec![0], vec![1, 2], vec![3]], 0, None).unwrap();
        assert_eq!(g.depth(), vec![0, 1, 1, 2, 3]);
        let (ptr, idx) = g.ancestor_rows();
        let row = |v: usize| idx[ptr[v] as usize..ptr[v + 1] as usize].to_vec();
        assert_eq!(row(0), vec![0]);
        assert_eq!(row(3), vec![0, 1, 2, 3]);
        assert_eq!(row(4), vec![0, 1, 2, 3, 4]);
        assert_eq!(find_root(&[vec![1], vec![], vec![1]], None).unwrap(), 1);
        assert!(find_root(&[vec![], vec![]], None).unwrap_err().to_string().contains("found 2"));
    }

    #[test]
    fn closures_hold_every_ancestor() {
        // 0 → 1, 2; 1 → 3; 2 → 3 (DAG); 3 → 4
        let g = HierarchyGraph::new(&[vec![], vec![0], vec![0], vec![1, 2], vec![3]], 0, None).unwrap();
        let c = g.closures(&[vec![4], vec![], vec![2, 1], vec![0]]);
        assert_eq!(c, vec![vec![0, 1, 2, 3, 4], vec![], vec![0, 1, 2], vec![0]]);
    }

    #[test]
    fn bad_graphs_name_the_node() {
        let names = Some(vec!["r".into(), "a".into(), "b".into()]);
        let e = HierarchyGraph::new(&[vec![], vec![2], vec![1]], 0, names.clone()).unwrap_err();
        assert!(e.to_string().contains("cycle"), "{e}");
        let e = HierarchyGraph::new(&[vec![], vec![0], vec![]], 0, names.clone()).unwrap_err();
        assert!(e.to_string().contains("found 2 nodes without parents: 'r', 'b'"), "{e}");
        let e = HierarchyGraph::new(&[vec![], vec![0], vec![7]], 0, None).unwrap_err();
        assert!(e.to_string().contains("parent id 7, outside 0..2"), "{e}");
        let e = HierarchyGraph::new(
            &[vec![], vec![0], vec![0]],
            0,
            Some(vec!["r".into(), "a".into(), "a".into()]),
        )
        .unwrap_err();
        assert!(e.to_string().contains("duplicate node name 'a'"), "{e}");
        let e = HierarchyGraph::new(&[vec![], vec![3], vec![1], vec![2]], 0, names_of(4)).unwrap_err();
        assert!(e.to_string().contains("cycle through node 'n1' ('n1' -> 'n2' -> 'n3' -> 'n1')"), "{e}");
        let e = HierarchyGraph::new(&[vec![1], vec![0], vec![0]], 0, None).unwrap_err();
        assert!(e.to_string().contains("root"), "{e}");
        let e = HierarchyGraph::new(&[vec![], vec![0, 0]], 0, None).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        assert!(HierarchyGraph::new(&[vec![]], 0, None).is_err());
        let e = HierarchyGraph::new(&[vec![], vec![1]], 0, None).unwrap_err();
        assert!(e.to_string().contains("cycle"), "{e}");
    }
}
