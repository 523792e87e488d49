//! Max-marginals of the label score over the structure's label space (docs/hierarchy-scores.md):
//! for every node n, the best score S(y) = Σ_{v ∈ y} σ_v of a label containing n and of a label
//! without n. Both are coherent with the hierarchy — a label containing a node contains its
//! ancestors, so with(parent) ≥ with(child) and without(parent) ≤ without(child) — and their
//! difference is the node score of `HierarchicalSVM.node_scores`, positive exactly when the node
//! is in the predicted label (up to ties).
//!
//! | space | method |
//! |---|---|
//! | single path | the candidate paths' scores; with: the best candidate below n (a reverse topological max), without: the best candidate whose path misses n |
//! | multi, tree | inside–outside DP: V(v) the best subtree value with v present, O(v) the best value of the rest of the label given v present, O(n) = O(p) + σ_p + Σ_{c ≠ n} max(0, V(c)) |
//! | multi, `Any`, DAG | the maximum closure y* by one min-cut; with(n) for n ∉ y*: one min-cut with Ā(n) forced in, or y* plus Ā(n) when no ancestor of n is in the network outside y*; without(n) for n ∈ y*: one min-cut with the descendants of n forced out |
//! | multi, `Leaves`, DAG | the integer program with n forced in or out (exact, one IP per node) |

use bicrit_core::{Error, Result};

use super::graph::HierarchyGraph;
use super::{closure, with_scratch, HierarchyStructure, LabelSpace, OracleKind, Scratch};

/// Max-marginals of one instance's node scores.
#[derive(Clone, Debug, PartialEq)]
pub struct MaxMarginals {
    /// max_{y ∋ n} S(y) for every node n.
    pub with: Vec<f64>,
    /// max_{y ∌ n} S(y) for every node n (−∞ when every label contains n: the root).
    pub without: Vec<f64>,
}

impl HierarchyStructure {
    /// The max-marginals of S(y) = Σ_{v ∈ y} σ_v over the label space, from the node scores σ
    /// (length M, finite). Exact in every space (module docs for the method of each).
    pub fn max_marginals(&self, sigma: &[f64]) -> Result<MaxMarginals> {
        if sigma.len() != self.n_nodes() {
            return Err(Error::input(format!("{} node scores for {} nodes", sigma.len(), self.n_nodes())));
        }
        bicrit_core::error::check_finite("node scores", sigma)?;
        match self.oracle_kind() {
            OracleKind::Enumeration => Ok(with_scratch(|sc| self.mm_single(sigma, sc))),
            OracleKind::TreeDp => Ok(mm_tree(&self.graph, sigma, self.space == LabelSpace::Leaves)),
            OracleKind::MinCut => Ok(with_scratch(|sc| self.mm_closure(sigma, sc))),
            OracleKind::LpIp => self.mm_ip(sigma),
        }
    }

    /// Single paths: the candidates' path scores, the best one below each node, and for each node
    /// the best candidate (by decreasing score) whose path misses it.
    fn mm_single(&self, sigma: &[f64], sc: &mut Scratch) -> MaxMarginals {
        let g = &self.graph;
        let m = g.n_nodes();
        sc.mask.clear();
        sc.mask.resize(m, false);
        self.accumulate_single(sigma, None, sc);
        let leaves_only = self.space == LabelSpace::Leaves;
        let is_cand = |t: usize| !leaves_only || g.is_leaf(t);
        let score: Vec<f64> =
            (0..m).map(|t| if is_cand(t) { sc.acc[t][0] } else { f64::NEG_INFINITY }).collect();
        let mut with = score.clone();
        for &v in g.topo().iter().rev() {
            let v = v as usize;
            for &c in g.children(v) {
                with[v] = with[v].max(with[c as usize]);
            }
        }
        let mut order: Vec<usize> = (0..m).filter(|&t| is_cand(t)).collect();
        order.sort_by(|&a, &b| score[b].total_cmp(&score[a]).then(a.cmp(&b)));
        let mut paths: Vec<Option<Vec<u32>>> = vec![None; order.len()];
        let mut without = vec![f64::NEG_INFINITY; m];
        for (n, slot) in without.iter_mut().enumerate() {
            if n == g.root() {
                continue;
            }
            for (r, &t) in order.iter().enumerate() {
                if paths[r].is_none() {
                    paths[r] = Some(self.path_label(t, sc));
                }
                let on_path = paths[r].as_ref().is_some_and(|p| p.binary_search(&(n as u32)).is_ok());
                if !on_path {
                    *slot = score[t];
                    break;
                }
            }
        }
        MaxMarginals { with, without }
    }

    /// Ancestor-closed multi-label sets of a DAG: one min-cut for y*, then one per node whose
    /// max-marginal differs from S(y*) and is not a plain sum (module docs).
    fn mm_closure(&self, sigma: &[f64], sc: &mut Scratch) -> MaxMarginals {
        let g = &self.graph;
        let m = g.n_nodes();
        let root = g.root();
        let (ptr, idx) = self.ancestor_rows.get_or_init(|| g.ancestor_rows());
        let anc = |v: usize| &idx[ptr[v] as usize..ptr[v + 1] as usize];
        let value = |y: &[u32]| y.iter().map(|&v| sigma[v as usize]).sum::<f64>();
        let flow = &mut sc.flow_f;
        closure::collect_support(g, sigma, None, flow);
        let best =
            closure::solve_support(g, sigma, |_| 0, flow).expect("an unforced closure network is finite");
        let mu = value(&best);
        let in_best = &mut sc.mask;
        in_best.clear();
        in_best.resize(m, false);
        for &v in &best {
            in_best[v as usize] = true;
        }
        let mut with = vec![mu; m];
        let mut without = vec![mu; m];
        without[root] = f64::NEG_INFINITY;
        for n in (0..m).filter(|&n| n != root) {
            let a = anc(n);
            if in_best[n] {
                // n forced out: so is every descendant of n in the network
                let y = closure::solve_support(
                    g,
                    sigma,
                    |v| if anc(v).binary_search(&(n as u32)).is_ok() { -1 } else { 0 },
                    flow,
                );
                without[n] = y.map_or(f64::NEG_INFINITY, |y| value(&y));
            } else if a.iter().all(|&v| !closure::in_support(flow, v as usize) || in_best[v as usize]) {
                // forcing Ā(n) in leaves the network's optimum y* unchanged
                with[n] =
                    mu + a.iter().filter(|&&v| !in_best[v as usize]).map(|&v| sigma[v as usize]).sum::<f64>();
            } else {
                let outside: f64 = a
                    .iter()
                    .filter(|&&v| v as usize != root && !closure::in_support(flow, v as usize))
                    .map(|&v| sigma[v as usize])
                    .sum();
                let y = closure::solve_support(
                    g,
                    sigma,
                    |v| if a.binary_search(&(v as u32)).is_ok() { 1 } else { 0 },
                    flow,
                );
                with[n] = y.map_or(f64::NEG_INFINITY, |y| value(&y) + outside);
            }
        }
        closure::clear_support(flow);
        MaxMarginals { with, without }
    }

    /// Leaf-terminated multi-label sets of a DAG: the best label, then one integer program per
    /// node with the node forced to the other side.
    fn mm_ip(&self, sigma: &[f64]) -> Result<MaxMarginals> {
        let m = self.n_nodes();
        let root = self.graph.root();
        let zeros = vec![0.0; m];
        let best = self.lp_ip_best(sigma, &zeros, false)?;
        let value = |y: &[u32]| y.iter().map(|&v| sigma[v as usize]).sum::<f64>();
        let mu = value(&best);
        let mut with = vec![mu; m];
        let mut without = vec![mu; m];
        without[root] = f64::NEG_INFINITY;
        let mut fixed = vec![0i8; m];
        for n in (0..m).filter(|&n| n != root) {
            let inside = Self::has(&best, n as u32);
            fixed[n] = if inside { -1 } else { 1 };
            let y =
                if self.fixed_conflict(&fixed) { None } else { self.ip_checked(sigma, Some(&fixed), None)? };
            let v = y.map_or(f64::NEG_INFINITY, |y| value(&y));
            if inside {
                without[n] = v;
            } else {
                with[n] = v;
            }
            fixed[n] = 0;
        }
        Ok(MaxMarginals { with, without })
    }
}

/// Tree spaces by an inside–outside dynamic program (module docs); `leaf_terminated`: every
/// present internal node has a present child.
fn mm_tree(g: &HierarchyGraph, sigma: &[f64], leaf_terminated: bool) -> MaxMarginals {
    let m = g.n_nodes();
    let neg = f64::NEG_INFINITY;
    // inside: V(v), Σ_c max(0, V(c)), the number of children with V(c) > 0, the two best V(c)
    let mut inside = vec![0.0; m];
    let mut pos_sum = vec![0.0; m];
    let mut n_pos = vec![0usize; m];
    let mut top = vec![(neg, u32::MAX, neg); m];
    for &v in g.topo().iter().rev() {
        let v = v as usize;
        let ch = g.children(v);
        let (mut s, mut k, mut t) = (0.0, 0, (neg, u32::MAX, neg));
        for &c in ch {
            let x = inside[c as usize];
            if x > 0.0 {
                s += x;
                k += 1;
            }
            if x > t.0 {
                t = (x, c, t.0);
            } else if x > t.2 {
                t.2 = x;
            }
        }
        pos_sum[v] = s;
        n_pos[v] = k;
        top[v] = t;
        inside[v] = if !leaf_terminated || ch.is_empty() || k > 0 { sigma[v] + s } else { sigma[v] + t.0 };
    }
    let root = g.root();
    let mut outside = vec![0.0; m];
    let mut with = vec![0.0; m];
    let mut without = vec![neg; m];
    with[root] = inside[root];
    for &v in &g.topo()[1..] {
        let v = v as usize;
        let p = g.parents(v)[0] as usize;
        let own = inside[v].max(0.0);
        // the rest of p's children, given v present (p is then satisfied by v)
        let siblings = pos_sum[p] - own;
        outside[v] = outside[p] + sigma[p] + siblings;
        with[v] = inside[v] + outside[v];
        // p present and v absent: p needs another present child when labels are leaf-terminated
        let rest = if !leaf_terminated || n_pos[p] > usize::from(inside[v] > 0.0) {
            siblings
        } else if top[p].1 as usize == v {
            top[p].2
        } else {
            top[p].0
        };
        without[v] = without[p].max(outside[p] + sigma[p] + rest);
    }
    MaxMarginals { with, without }
}
