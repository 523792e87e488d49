//! The cutting-plane dual QP, solved by clarabel (interior point, pure Rust):
//!
//! `max_α Σ_k α_k·b_k − ½ αᵀGα` subject to `α ≥ 0` and `Σ_{k ∈ group g} α_k ≤ C` for every group,
//!
//! where G is the Gram matrix of the constraints' slopes (G_kl = a_k·a_l) and b their intercepts.
//! 1-slack has one group (all constraints); n-slack one group per instance. The primal weights are
//! then w = −Σ_k α_k·a_k.

use bicrit_core::{Error, Result};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus};

/// Solves the dual QP; `group[k]` is constraint k's group in `0..n_groups`.
pub(crate) fn solve_dual(
    gram: &[Vec<f64>],
    b: &[f64],
    group: &[usize],
    n_groups: usize,
    c: f64,
) -> Result<Vec<f64>> {
    let m = b.len();
    if m == 0 {
        return Ok(Vec::new());
    }
    // Scale the objective so that the largest diagonal entry is 1 (same minimiser).
    let diag_max = (0..m).map(|k| gram[k][k]).fold(0.0f64, f64::max);
    let scale = if diag_max > 0.0 { 1.0 / diag_max } else { 1.0 };
    let (mut pr, mut pc, mut pv) = (Vec::new(), Vec::new(), Vec::new());
    for (j, row) in gram.iter().enumerate() {
        for (i, &g) in row.iter().enumerate().take(j + 1) {
            if g != 0.0 {
                pr.push(i);
                pc.push(j);
                pv.push(g * scale);
            }
        }
    }
    let p = CscMatrix::new_from_triplets(m, m, pr, pc, pv);
    let q: Vec<f64> = b.iter().map(|&x| -x * scale).collect();
    let (mut ar, mut ac, mut av) = (Vec::new(), Vec::new(), Vec::new());
    for (k, &g) in group.iter().enumerate() {
        ar.push(k);
        ac.push(k);
        av.push(-1.0);
        ar.push(m + g);
        ac.push(k);
        av.push(1.0);
    }
    let a = CscMatrix::new_from_triplets(m + n_groups, m, ar, ac, av);
    let mut rhs = vec![0.0; m + n_groups];
    rhs[m..].iter_mut().for_each(|x| *x = c);
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .max_threads(1)
        .max_iter(500)
        .build()
        .map_err(|e| Error::solver(format!("cutting-plane QP settings: {e}")))?;
    let cones = [NonnegativeConeT(m + n_groups)];
    let mut solver = DefaultSolver::new(&p, &q, &a, &rhs, &cones, settings)
        .map_err(|e| Error::solver(format!("cutting-plane QP setup failed: {e:?}")))?;
    solver.solve();
    let sol = &solver.solution;
    match sol.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {
            // Clean the interior point's tolerance-sized infeasibilities.
            let mut alpha: Vec<f64> = sol.x.iter().map(|&x| x.max(0.0)).collect();
            let mut sums = vec![0.0; n_groups];
            for k in 0..m {
                sums[group[k]] += alpha[k];
            }
            for k in 0..m {
                if sums[group[k]] > c {
                    alpha[k] *= c / sums[group[k]];
                }
            }
            Ok(alpha)
        }
        s => Err(Error::solver(format!(
            "the cutting-plane dual QP ({m} constraints) was not solved: clarabel status {s:?} after {} iterations",
            sol.iterations
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_constraint_closed_form() {
        // max α b − ½ α² g, 0 ≤ α ≤ C: α = min(C, b/g)
        let a = solve_dual(&[vec![4.0]], &[2.0], &[0], 1, 10.0).unwrap();
        assert!((a[0] - 0.5).abs() < 1e-6, "{a:?}");
        let a = solve_dual(&[vec![4.0]], &[2.0], &[0], 1, 0.1).unwrap();
        assert!((a[0] - 0.1).abs() < 1e-6, "{a:?}");
        let a = solve_dual(&[vec![4.0]], &[-2.0], &[0], 1, 1.0).unwrap();
        assert!(a[0].abs() < 1e-6, "{a:?}");
    }

    #[test]
    fn groups_bound_their_sums() {
        // two orthogonal constraints in two groups, each wants α = 1, capped at C = 0.5
        let g = vec![vec![1.0, 0.0], vec![0.0, 1.0]];
        let a = solve_dual(&g, &[1.0, 1.0], &[0, 1], 2, 0.5).unwrap();
        assert!((a[0] - 0.5).abs() < 1e-6 && (a[1] - 0.5).abs() < 1e-6, "{a:?}");
        // one group: the sum is capped
        let a = solve_dual(&g, &[1.0, 1.0], &[0, 0], 1, 0.5).unwrap();
        assert!((a[0] + a[1] - 0.5).abs() < 1e-6, "{a:?}");
    }
}
