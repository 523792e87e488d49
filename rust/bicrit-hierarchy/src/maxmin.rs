//! NHSVM node weights for ρ = 1 (thesis eq. `nbeta_1`):
//!
//! max min_n α_n  s.t.  Σ_{n ∈ Ā(l)} α_n = 1 for every leaf l (or 1 ≤ Σ ≤ T), α ≥ 0,
//!                      α_n ≥ α_p for every edge p → n (the "directional constraint"),
//!
//! an LP in (α, t): max t s.t. α_n ≥ t. Its optimum is not unique (only the smallest weight is
//! pinned), so ties are broken as docs/architecture.md (Hierarchies) says: the returned α minimises Σ α² over the optimal
//! face {α feasible, α_n ≥ t*} — a strictly convex QP, hence one answer, computed
//! deterministically.
//!
//! On a tree t* has a closed form: t* = T / P with P the number of nodes on the longest
//! root-to-leaf path (T = 1 for exact sums; P − 1 nodes when the root is left out). It is an upper bound (that path's P weights are ≥ t
//! and sum to at most T), and it is reached by α = t* on internal nodes and α_l =
//! max(t*, 1 − (|Ā(l)| − 1)·t*) on the leaves, which also satisfies the directional constraints.
//! On DAGs t* comes from the LP (clarabel); the face is then taken as α_n ≥ t*·(1 − 1e-7) so that
//! the interior-point round-off of t* cannot make the QP infeasible.

use bicrit_core::Result;

use crate::conic::Program;
use crate::paths::{tree_path_nodes, LeafPaths};
use crate::{clean_nonneg, AlphaSolution, AlphaSolver, HierarchyGraph, LeafSum, Method};

/// The ρ = 1 max-min problem (see the module documentation).
#[derive(Clone, Debug)]
pub struct MaxMinAlpha {
    /// Leaf-sum constraint ([`LeafSum::Exact`] or [`LeafSum::Range`]).
    pub sum: LeafSum,
    /// α_n ≥ α_parent on every edge (the thesis's problem has it).
    pub directional: bool,
    /// Count the root (the thesis's problem); `false` fixes α_root = 0 and maximises the
    /// smallest non-root weight (see the crate docs).
    pub include_root: bool,
    /// Break ties by min Σα² on the optimal face (otherwise: the LP's interior-point answer).
    pub tie_break: bool,
}

impl Default for MaxMinAlpha {
    fn default() -> Self {
        MaxMinAlpha { sum: LeafSum::Exact, directional: true, include_root: true, tie_break: true }
    }
}

impl MaxMinAlpha {
    fn check(&self) -> Result<()> {
        if self.sum == LeafSum::AtMost {
            return Err(bicrit_core::Error::param("the max-min problem takes exact or range leaf sums"));
        }
        self.sum.check()?;
        Ok(())
    }

    fn constraints(&self, g: &HierarchyGraph, paths: &LeafPaths, prog: &mut Program) {
        let m = g.n_nodes();
        prog.leaf_sums(g, paths, 0, self.sum);
        prog.nonneg(0, m);
        if self.directional {
            prog.directional(g, 0);
        }
        if !self.include_root {
            prog.eq(vec![(g.root(), 1.0)], 0.0);
        }
    }

    /// The nodes whose smallest weight is maximised.
    fn counted(&self, g: &HierarchyGraph) -> impl Iterator<Item = usize> {
        let skip = (!self.include_root).then_some(g.root());
        (0..g.n_nodes()).filter(move |&v| Some(v) != skip)
    }

    /// The optimal value t* = max min_n α_n.
    pub fn optimal_min(&self, g: &HierarchyGraph) -> Result<f64> {
        self.check()?;
        let t_max = self.sum.bounds().1;
        if g.is_tree() {
            let nodes = tree_path_nodes(g) - usize::from(!self.include_root);
            return Ok(t_max / nodes as f64);
        }
        let m = g.n_nodes();
        let paths = LeafPaths::new(g);
        let mut prog = Program::new(m);
        self.constraints(g, &paths, &mut prog);
        let t = prog.add_vars(1);
        prog.set_linear(t, -1.0);
        for v in self.counted(g) {
            prog.le(vec![(t, 1.0), (v, -1.0)], 0.0);
        }
        let x = prog.solve("the max-min LP for α (rho = 1)")?;
        Ok(x[t].clamp(0.0, t_max))
    }
}

impl AlphaSolver for MaxMinAlpha {
    fn name(&self) -> &'static str {
        "maxmin"
    }

    fn solve(&self, g: &HierarchyGraph) -> Result<AlphaSolution> {
        self.check()?;
        let m = g.n_nodes();
        let paths = LeafPaths::new(g);
        let t_star = self.optimal_min(g)?;
        let mut prog = Program::new(m);
        self.constraints(g, &paths, &mut prog);
        if self.tie_break {
            let floor = if g.is_tree() { t_star } else { t_star * (1.0 - 1e-7) };
            for v in 0..m {
                prog.add_diag(v, 2.0);
            }
            for v in self.counted(g) {
                prog.ge(vec![(v, 1.0)], floor);
            }
        } else {
            let t = prog.add_vars(1);
            prog.set_linear(t, -1.0);
            for v in self.counted(g) {
                prog.le(vec![(t, 1.0), (v, -1.0)], 0.0);
            }
        }
        let x = prog.solve("the tie-break QP of the max-min α (rho = 1)")?;
        let mut alpha = x[..m].to_vec();
        clean_nonneg(&mut alpha);
        Program::repair_leaf_sums(&paths, &mut alpha, self.sum);
        let objective = self.objective(g, &alpha);
        Ok(AlphaSolution { alpha, objective, method: Method::Conic })
    }

    /// min_n α_n over the counted nodes (the quantity maximised).
    fn objective(&self, g: &HierarchyGraph, alpha: &[f64]) -> f64 {
        self.counted(g).map(|v| alpha[v]).fold(f64::INFINITY, f64::min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::max_violation;

    #[test]
    fn tree_value_and_face() {
        // r → a → {c, d}, r → b: longest path has 3 nodes ⇒ t* = 1/3.
        let g = HierarchyGraph::new(&[vec![], vec![0], vec![0], vec![1], vec![1]], 0, None).unwrap();
        let s = MaxMinAlpha::default();
        assert!((s.optimal_min(&g).unwrap() - 1.0 / 3.0).abs() < 1e-15);
        let sol = s.solve(&g).unwrap();
        let paths = LeafPaths::new(&g);
        assert!(max_violation(&paths, &sol.alpha, LeafSum::Exact) < 1e-7);
        assert!(sol.objective > 1.0 / 3.0 - 1e-7, "{sol:?}");
        // the min-norm point of the face: r = a = c = d = 1/3, b = 2/3
        for (v, want) in [(0, 1.0 / 3.0), (1, 1.0 / 3.0), (2, 2.0 / 3.0), (3, 1.0 / 3.0)] {
            assert!((sol.alpha[v] - want).abs() < 1e-6, "{:?}", sol.alpha);
        }
    }

    #[test]
    fn dag_lp_matches_tree_bound_when_tree_like() {
        // 0 → 1, 2; 1 → 3; 2 → 3 (a diamond): Ā(3) = {0,1,2,3} ⇒ t* = 1/4.
        let g = HierarchyGraph::new(&[vec![], vec![0], vec![0], vec![1, 2]], 0, None).unwrap();
        let t = MaxMinAlpha::default().optimal_min(&g).unwrap();
        assert!((t - 0.25).abs() < 1e-7, "{t}");
    }
}
