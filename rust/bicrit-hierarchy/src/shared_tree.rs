//! The α step of Shared SVM on a tree, in closed form and O(M) (thesis Alg. `argmin_alpha`,
//! `ArgminAlphaTree`, derived from the recursion `recursive` / `leaf_f`):
//!
//! min_α Σ_n N_n / α_n  s.t.  Σ_{n ∈ Ā(l)} α_n ≤ 1 for every leaf l, α ≥ 0,   N_n = ‖U_n‖².
//!
//! Let f(n, B) be the optimum over the subtree of n when every path from n down to a leaf may
//! use a budget B. A leaf takes the whole budget: f(l, B) = N_l / B (E_l = 1). At an internal
//! node, giving n the share E of the budget, f(n, B) = min_E N_n/(E·B) + S_n/((1 − E)·B) with
//! S_n = Σ_{c ∈ C(n)} K_c and f(c, B) = K_c / B; the minimiser is
//! E_n = √N_n / (√N_n + √S_n) and K_n = (√N_n + √S_n)² (eq. `leaf_f`).
//!
//! The printed algorithm has three slips (docs/architecture.md, Hierarchies), fixed here: E_n is computed from the
//! *original* N_n before N_n is overwritten by K_n; leaves use E = 1; and the top-down pass is
//! α_n = L_p·E_n, L_n = L_p·(1 − E_n) with L_p the budget the parent passes down (the root's
//! budget is 1, so α_root = E_root) — not √(L_p·E_n), and the root's α is assigned.
//!
//! A subtree with N = 0 everywhere (√N_n + √S_n = 0) keeps E_n = 0 as in the printed algorithm:
//! its budget flows down to its leaves. The optimum is f(root, 1) = K_root; every leaf sum is
//! exactly 1, so the answer is also feasible for NHSVM's exact constraints. α_n = 0 exactly
//! where N_n = 0 (and beneath a node that took the whole budget): under U = √α·V such a node
//! never moves again, so callers keep α away from 0 (docs/architecture.md, Hierarchies: start from NHSVM ρ = 2, mix in a
//! positive reference, see `bicrit.hierarchy.keep_positive`).

use bicrit_core::{Error, Result};

use crate::paths::check_per_node;
use crate::{AlphaSolution, AlphaSolver, HierarchyGraph, Method};

/// ArgminAlphaTree (see the module documentation). `sq_norms[n]` = ‖U_n‖².
#[derive(Clone, Debug)]
pub struct SharedTreeAlpha {
    /// N_n = ‖U_n‖² per node.
    pub sq_norms: Vec<f64>,
}

impl AlphaSolver for SharedTreeAlpha {
    fn name(&self) -> &'static str {
        "shared_tree"
    }

    fn solve(&self, g: &HierarchyGraph) -> Result<AlphaSolution> {
        if !g.is_tree() {
            return Err(Error::unsupported(
                "ArgminAlphaTree needs a tree; use the conic Shared SVM α step on a DAG",
            ));
        }
        check_per_node(g, "sq_norms", &self.sq_norms)?;
        let m = g.n_nodes();
        // Scale N to max 1 (the argmin does not change; the objective scales back).
        let big = self.sq_norms.iter().copied().fold(0.0, f64::max);
        let scale = if big > 0.0 { big } else { 1.0 };
        // r_n = √K_n = √N_n + √S_n, bottom-up; E_n from the original N_n (slip 1).
        let mut r = vec![0.0; m];
        let mut e = vec![0.0; m];
        for &v in g.topo().iter().rev() {
            let v = v as usize;
            let sqrt_n = (self.sq_norms[v] / scale).sqrt();
            let ch = g.children(v);
            if ch.is_empty() {
                r[v] = sqrt_n;
                e[v] = 1.0; // slip 2: a leaf takes the whole remaining budget
                continue;
            }
            let s: f64 = ch.iter().map(|&c| r[c as usize] * r[c as usize]).sum();
            let sqrt_s = s.sqrt();
            r[v] = sqrt_n + sqrt_s;
            e[v] = if r[v] > 0.0 { sqrt_n / r[v] } else { 0.0 };
        }
        // Top-down: α_n = L_p·E_n, L_n = L_p·(1 − E_n), L_p = 1 above the root (slip 3).
        let mut budget = vec![0.0; m];
        let mut alpha = vec![0.0; m];
        for &v in g.topo() {
            let v = v as usize;
            let lp = g.parents(v).first().map_or(1.0, |&p| budget[p as usize]);
            alpha[v] = lp * e[v];
            budget[v] = lp * (1.0 - e[v]);
        }
        let objective = self.objective(g, &alpha);
        Ok(AlphaSolution { alpha, objective, method: Method::ClosedForm })
    }

    /// Σ N_n / α_n (0/0 = 0; N_n > 0 with α_n = 0 is +∞).
    fn objective(&self, _g: &HierarchyGraph, alpha: &[f64]) -> f64 {
        shared_objective(&self.sq_norms, alpha)
    }
}

/// Σ_n N_n / α_n with 0/0 = 0 and N_n/0 = +∞ for N_n > 0.
pub fn shared_objective(sq_norms: &[f64], alpha: &[f64]) -> f64 {
    sq_norms
        .iter()
        .zip(alpha)
        .map(|(&n, &a)| {
            if n == 0.0 {
                0.0
            } else if a > 0.0 {
                n / a
            } else {
                f64::INFINITY
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::{max_violation, LeafPaths};
    use crate::LeafSum;

    #[test]
    fn parent_of_leaves_matches_eq_leaf_f() {
        // r → a, b with N = (B1, B2, B3): f = (√B1 + √(B2 + B3))².
        let g = HierarchyGraph::new(&[vec![], vec![0], vec![0]], 0, None).unwrap();
        let s = SharedTreeAlpha { sq_norms: vec![4.0, 1.0, 8.0] };
        let sol = s.solve(&g).unwrap();
        let want = (2.0f64 + 3.0).powi(2);
        assert!((sol.objective - want).abs() < 1e-12, "{sol:?}");
        assert!((sol.alpha[0] - 0.4).abs() < 1e-15);
        assert!((sol.alpha[1] - 0.6).abs() < 1e-15 && (sol.alpha[2] - 0.6).abs() < 1e-15);
    }

    #[test]
    fn deeper_tree_is_feasible_with_exact_sums() {
        let g = HierarchyGraph::new(
            &[vec![], vec![0], vec![0], vec![1], vec![1], vec![4], vec![4], vec![2]],
            0,
            None,
        )
        .unwrap();
        let s = SharedTreeAlpha { sq_norms: vec![1.0, 0.5, 0.0, 2.0, 0.0, 0.3, 0.0, 0.0] };
        let sol = s.solve(&g).unwrap();
        let paths = LeafPaths::new(&g);
        assert!(max_violation(&paths, &sol.alpha, LeafSum::Exact) < 1e-15, "{sol:?}");
        assert!(sol.objective.is_finite());
    }

    #[test]
    fn dag_and_bad_norms_are_refused() {
        let dag = HierarchyGraph::new(&[vec![], vec![0], vec![0], vec![1, 2]], 0, None).unwrap();
        assert!(SharedTreeAlpha { sq_norms: vec![1.0; 4] }.solve(&dag).is_err());
        let g = HierarchyGraph::new(&[vec![], vec![0], vec![0]], 0, None).unwrap();
        let e = SharedTreeAlpha { sq_norms: vec![1.0, -1.0, 0.0] }.solve(&g).unwrap_err();
        assert!(e.to_string().contains("node 1"), "{e}");
        assert!(SharedTreeAlpha { sq_norms: vec![1.0] }.solve(&g).is_err());
    }
}
