//! Labels of the `hierarchy` structure: checks against the label space, the symmetric
//! difference and its terms, terminals and single-path labels, ancestor closures, and the
//! ancestor table of single-path DAG spaces.

use bicrit_core::{Error, Result, Terms};

use super::{HierLabel, HierLoss, HierarchyGraph, HierarchyStructure, LabelSpace, Scratch};

/// Largest ancestor table (Σ_t |Ā(t)| entries) kept for single-path DAG spaces; beyond it the
/// ancestors are found by a search per candidate and call.
const ANCESTOR_TABLE_LIMIT: usize = 1 << 24;

/// Ā(t), sorted, for every leaf (or every node) t, as CSR indexed by node id.
pub(super) fn ancestor_table(g: &HierarchyGraph, leaves_only: bool) -> Option<(Vec<usize>, Vec<u32>)> {
    let m = g.n_nodes();
    let mut ptr = Vec::with_capacity(m + 1);
    let mut idx = Vec::new();
    let mut stamp = vec![usize::MAX; m];
    ptr.push(0);
    for t in 0..m {
        if !leaves_only || g.is_leaf(t) {
            let start = idx.len();
            idx.push(t as u32);
            stamp[t] = t;
            let mut head = start;
            while head < idx.len() {
                let v = idx[head] as usize;
                head += 1;
                for &p in g.parents(v) {
                    if stamp[p as usize] != t {
                        stamp[p as usize] = t;
                        idx.push(p);
                    }
                }
            }
            if idx.len() > ANCESTOR_TABLE_LIMIT {
                return None;
            }
            idx[start..].sort_unstable();
        }
        ptr.push(idx.len());
    }
    Some((ptr, idx))
}

impl HierarchyStructure {
    /// Is `v` in the sorted label `y`?
    #[inline]
    pub(super) fn has(y: &[u32], v: u32) -> bool {
        y.binary_search(&v).is_ok()
    }

    /// Validates a label of this structure's space (errors name the node).
    pub fn check(&self, y: &[u32]) -> Result<()> {
        let g = &self.graph;
        let m = g.n_nodes();
        if y.is_empty() {
            return Err(Error::input("a hierarchy label is a non-empty node set (it contains the root)"));
        }
        for (i, &v) in y.iter().enumerate() {
            if v as usize >= m {
                return Err(Error::input(format!("label has node {v}, outside the nodes 0..{m}")));
            }
            if i > 0 && y[i - 1] >= v {
                return Err(Error::input(format!(
                    "label node ids must be sorted and distinct, got {} before {v}",
                    y[i - 1]
                )));
            }
        }
        if !Self::has(y, g.root() as u32) {
            return Err(Error::input(format!(
                "label lacks the root {}; every label contains it",
                g.describe(g.root())
            )));
        }
        for &v in y {
            for &p in g.parents(v as usize) {
                if !Self::has(y, p) {
                    return Err(Error::input(format!(
                        "label is not ancestor-closed: it has {} but not its parent {}",
                        g.describe(v as usize),
                        g.describe(p as usize)
                    )));
                }
            }
        }
        if self.multilabel && self.space == LabelSpace::Any {
            return Ok(()); // any terminal nodes, any number of them
        }
        let mut terminals = Vec::new();
        for &v in y {
            let ch = g.children(v as usize);
            if !ch.iter().any(|&c| Self::has(y, c)) {
                if self.space == LabelSpace::Leaves && !ch.is_empty() {
                    return Err(Error::input(format!(
                        "label ends at {}, which is not a leaf; labels='leaves' needs leaf-terminated labels \
                         (add a virtual leaf under it, or use labels='any')",
                        g.describe(v as usize)
                    )));
                }
                terminals.push(v);
            }
        }
        if !self.multilabel && terminals.len() > 1 {
            return Err(Error::input(format!(
                "label has {} terminal nodes ({}, {}, …) but the structure is single-label (multilabel=False)",
                terminals.len(),
                g.describe(terminals[0] as usize),
                g.describe(terminals[1] as usize)
            )));
        }
        Ok(())
    }

    /// Visits y △ y_true: `f(node, in_y)`.
    pub(super) fn sym_diff(y: &[u32], yt: &[u32], mut f: impl FnMut(usize, bool)) {
        let (mut i, mut j) = (0, 0);
        while i < y.len() || j < yt.len() {
            if j == yt.len() || (i < y.len() && y[i] < yt[j]) {
                f(y[i] as usize, true);
                i += 1;
            } else if i == y.len() || yt[j] < y[i] {
                f(yt[j] as usize, false);
                j += 1;
            } else {
                i += 1;
                j += 1;
            }
        }
    }

    /// Terms of two labels assumed valid.
    pub(super) fn terms_unchecked(&self, y: &[u32], yt: &[u32]) -> Terms {
        let mut t = Terms::default();
        Self::sym_diff(y, yt, |v, in_y| {
            if self.counted[v] {
                t.loss += if in_y { self.loss_weight[v] } else { self.miss_weight[v] };
                t.hamming += 1.0;
            }
        });
        t.size = y.iter().filter(|&&v| self.counted[v as usize]).count() as f64;
        if self.loss == HierLoss::Normalized {
            t.loss = t.loss.sqrt();
        }
        t
    }

    /// The terminal node of a single-path label (its deepest node), if it is one.
    pub(super) fn terminal(&self, y: &[u32]) -> Option<usize> {
        let mut ts = y.iter().filter(|&&v| !self.graph.children(v as usize).iter().any(|&c| Self::has(y, c)));
        let t = ts.next()?;
        ts.next().is_none().then_some(*t as usize)
    }

    /// Ā(t), sorted.
    pub(super) fn path_label(&self, t: usize, sc: &mut Scratch) -> HierLabel {
        if let Some((ptr, idx)) = &self.ancestors {
            return idx[ptr[t]..ptr[t + 1]].to_vec();
        }
        let g = &self.graph;
        let m = g.n_nodes();
        sc.stamp.resize(m, 0);
        sc.stamp_id = sc.stamp_id.wrapping_add(1);
        if sc.stamp_id == 0 {
            sc.stamp.iter_mut().for_each(|s| *s = 0);
            sc.stamp_id = 1;
        }
        let id = sc.stamp_id;
        let mut out = vec![t as u32];
        sc.stamp[t] = id;
        let mut head = 0;
        while head < out.len() {
            let v = out[head] as usize;
            head += 1;
            for &p in g.parents(v) {
                if sc.stamp[p as usize] != id {
                    sc.stamp[p as usize] = id;
                    out.push(p);
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// Ancestor closure of a node set (root included), sorted: the label of a set of terminals.
    pub fn closure_of(&self, nodes: &[u32]) -> Result<HierLabel> {
        let g = &self.graph;
        let m = g.n_nodes();
        let mut seen = vec![false; m];
        let mut stack = vec![g.root() as u32];
        for &v in nodes {
            if v as usize >= m {
                return Err(Error::input(format!("node {v} outside the nodes 0..{m}")));
            }
            stack.push(v);
        }
        let mut out = Vec::new();
        while let Some(v) = stack.pop() {
            if !seen[v as usize] {
                seen[v as usize] = true;
                out.push(v);
                stack.extend_from_slice(g.parents(v as usize));
            }
        }
        out.sort_unstable();
        Ok(out)
    }
}
