//! The α step of Shared SVM on any graph (DAGs in particular) as a conic program:
//!
//! min Σ_n N_n / α_n  s.t.  Σ_{n ∈ Ā(l)} α_n ≤ 1 for every leaf l, α ≥ 0     (eq. `optimize_alpha`)
//!
//! with an epigraph variable t_n ≥ N_n / α_n per node of positive N_n, i.e. the rotated cone
//! t_n·α_n ≥ N_n, t_n, α_n ≥ 0, written as the second-order cone
//! ‖(2√N_n, t_n − α_n)‖ ≤ t_n + α_n. Nodes with N_n = 0 have no epigraph and cost nothing; their
//! α is whatever the interior point leaves (optima need not be unique there).
//!
//! N is scaled to max 1 before solving (the argmin does not change).

use bicrit_core::Result;

use crate::conic::{Cone3, Program, Row};
use crate::paths::{check_per_node, LeafPaths};
use crate::shared_tree::shared_objective;
use crate::{clean_nonneg, AlphaSolution, AlphaSolver, HierarchyGraph, LeafSum, Method};

/// The conic Shared SVM α step (see the module documentation). `sq_norms[n]` = ‖U_n‖².
#[derive(Clone, Debug)]
pub struct SharedConicAlpha {
    /// N_n = ‖U_n‖² per node.
    pub sq_norms: Vec<f64>,
}

impl AlphaSolver for SharedConicAlpha {
    fn name(&self) -> &'static str {
        "shared_conic"
    }

    fn solve(&self, g: &HierarchyGraph) -> Result<AlphaSolution> {
        check_per_node(g, "sq_norms", &self.sq_norms)?;
        let m = g.n_nodes();
        let big = self.sq_norms.iter().copied().fold(0.0, f64::max);
        let scale = if big > 0.0 { big } else { 1.0 };
        let paths = LeafPaths::new(g);
        let mut prog = Program::new(m);
        prog.leaf_sums(g, &paths, 0, LeafSum::AtMost);
        prog.nonneg(0, m);
        for v in 0..m {
            let n = self.sq_norms[v] / scale;
            if n > 0.0 {
                let t = prog.add_vars(1);
                prog.set_linear(t, 1.0);
                prog.cone(
                    Cone3::Soc,
                    [
                        Row::new(vec![(t, -1.0), (v, -1.0)], 0.0),
                        Row::new(vec![], 2.0 * n.sqrt()),
                        Row::new(vec![(t, -1.0), (v, 1.0)], 0.0),
                    ],
                );
            }
        }
        let x = prog.solve("the Shared SVM α step")?;
        let mut alpha = x[..m].to_vec();
        clean_nonneg(&mut alpha);
        Program::repair_leaf_sums(&paths, &mut alpha, LeafSum::AtMost);
        let objective = self.objective(g, &alpha);
        Ok(AlphaSolution { alpha, objective, method: Method::Conic })
    }

    fn objective(&self, _g: &HierarchyGraph, alpha: &[f64]) -> f64 {
        shared_objective(&self.sq_norms, alpha)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::max_violation;
    use crate::SharedTreeAlpha;

    #[test]
    fn conic_equals_closed_form_on_a_tree() {
        let g = HierarchyGraph::new(
            &[vec![], vec![0], vec![0], vec![1], vec![1], vec![4], vec![4], vec![2]],
            0,
            None,
        )
        .unwrap();
        let n = vec![1.0, 0.5, 0.2, 2.0, 0.1, 0.3, 0.7, 1.5];
        let a = SharedTreeAlpha { sq_norms: n.clone() }.solve(&g).unwrap();
        let b = SharedConicAlpha { sq_norms: n }.solve(&g).unwrap();
        assert!((a.objective - b.objective).abs() < 1e-7 * a.objective, "{a:?} {b:?}");
        let paths = LeafPaths::new(&g);
        assert!(max_violation(&paths, &b.alpha, LeafSum::AtMost) < 1e-8);
    }

    #[test]
    fn dag_solution_is_feasible() {
        let g = HierarchyGraph::new(&[vec![], vec![0], vec![0], vec![1, 2], vec![2]], 0, None).unwrap();
        let b = SharedConicAlpha { sq_norms: vec![1.0, 2.0, 0.0, 3.0, 0.5] }.solve(&g).unwrap();
        let paths = LeafPaths::new(&g);
        assert!(max_violation(&paths, &b.alpha, LeafSum::AtMost) < 1e-8);
        assert!(b.objective.is_finite() && b.objective > 0.0);
    }
}
