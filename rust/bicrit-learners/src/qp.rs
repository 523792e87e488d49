//! The cutting-plane dual QP, solved by clarabel (interior point, pure Rust):
//!
//! `max_α Σ_k α_k·b_k − ½ αᵀGα` subject to `α ≥ 0` and `Σ_{k ∈ group g} α_k ≤ C` for every group,
//!
//! where G is the Gram matrix of the constraints' slopes (G_kl = a_k·a_l) and b their intercepts.
//! 1-slack has one group (all constraints); n-slack one group per instance. The primal weights are
//! then w = −Σ_k α_k·a_k.
//!
//! Two equivalent forms are handed to clarabel: the **Gram form** above (m variables, a dense
//! m × m quadratic term), and the **lifted form** `min ½‖z‖² − bᵀα` with `z = Aᵀα` over the
//! D′ coordinates the slopes touch (m + D′ variables, sparse). The interior point's factorisation
//! costs about min(m, D′)³ in the lifted form against m³ in the Gram form, so [`solve_dual_auto`]
//! lifts when the working set outgrows the slopes' support (n-slack on low-dimensional features).

use bicrit_core::{Error, Result, SparseVec};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus, ZeroConeT,
};

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
    let diag: Vec<f64> = (0..m).map(|k| gram[k][k]).collect();
    let (t, quad, lin, bound) = unit_scale(&diag, b, c);
    let (mut pr, mut pc, mut pv) = (Vec::new(), Vec::new(), Vec::new());
    for (j, row) in gram.iter().enumerate() {
        for (i, &g) in row.iter().enumerate().take(j + 1) {
            if g != 0.0 {
                pr.push(i);
                pc.push(j);
                pv.push(g * quad);
            }
        }
    }
    let p = CscMatrix::new_from_triplets(m, m, pr, pc, pv);
    let q: Vec<f64> = b.iter().map(|&x| -x * lin).collect();
    let beta = solve_constrained(&p, &q, 0, None, group, n_groups, bound)?;
    Ok(clean(beta.iter().map(|&x| x * t).collect(), group, n_groups, c))
}

/// The scale the dual is handed to clarabel in: variables β = α/t and the objective divided by
/// v, where t and v are the largest step and value that one constraint alone reaches
/// (α_k = min(C, b_k/G_kk), its value α_k·b_k − ½α_k²·G_kk): the same minimiser, with β and the
/// objective of order 1. clarabel's tolerances are absolute, so they hold relative to the problem
/// only in such a scale. Scaling G alone (its largest diagonal to 1) left the objective at
/// ≈ b²/G ≈ 1e-13 for the 1-slack cut of 10⁵ instances at C ≈ 1e-3 (α ≈ 1e-6 ≪ C): "solved"
/// there at any feasible point, the weights overshot and the certified gap stalled.
/// Returns (t, factor of G, factor of b, the groups' bound C/t).
fn unit_scale(diag: &[f64], b: &[f64], c: f64) -> (f64, f64, f64, f64) {
    let (mut t, mut v) = (0.0f64, 0.0f64);
    for (&g, &bk) in diag.iter().zip(b) {
        if bk > 0.0 {
            let a = if g > 0.0 { c.min(bk / g) } else { c };
            t = t.max(a);
            v = v.max(a * bk - 0.5 * a * a * g);
        }
    }
    if !(t > 0.0 && v > 0.0 && t.is_finite() && v.is_finite()) {
        // no constraint gains anything alone: α = 0 is optimal; keep the problem as it is
        (t, v) = (c, 1.0);
    }
    (t, t * t / v, t / v, c / t)
}

/// The same dual in the lifted form (module documentation): variables (α, z), z ∈ R^{D′} over the
/// coordinates some slope touches.
pub(crate) fn solve_dual_lifted(
    slopes: &[&SparseVec],
    b: &[f64],
    group: &[usize],
    n_groups: usize,
    c: f64,
) -> Result<Vec<f64>> {
    let m = b.len();
    if m == 0 {
        return Ok(Vec::new());
    }
    let (support, nnz) = support_of(slopes);
    let d = support.len();
    let diag: Vec<f64> = slopes.iter().map(|a| a.values.iter().map(|v| v * v).sum::<f64>()).collect();
    let (t, quad, lin, bound) = unit_scale(&diag, b, c);
    let n = m + d;
    // in β = α/t: z = Aᵀβ, objective quad·½‖z‖² − lin·bᵀβ
    let p = CscMatrix::new_from_triplets(n, n, (m..n).collect(), (m..n).collect(), vec![quad; d]);
    let mut q = vec![0.0; n];
    q[..m].iter_mut().zip(b).for_each(|(qk, &bk)| *qk = -bk * lin);
    // z_j − Σ_k a_kj α_k = 0, one row per support coordinate
    let (mut er, mut ec, mut ev) = (Vec::with_capacity(nnz + d), Vec::with_capacity(nnz + d), Vec::new());
    for (k, a) in slopes.iter().enumerate() {
        for (&i, &v) in a.indices.iter().zip(&a.values) {
            if v != 0.0 {
                er.push(support[&i]);
                ec.push(k);
                ev.push(-v);
            }
        }
    }
    for j in 0..d {
        er.push(j);
        ec.push(m + j);
        ev.push(1.0);
    }
    let x = solve_constrained(&p, &q, d, Some((er, ec, ev)), group, n_groups, bound)?;
    Ok(clean(x[..m].iter().map(|&v| v * t).collect(), group, n_groups, c))
}

/// The lifted form when the working set has more constraints than the slopes have coordinates,
/// else the Gram form.
pub(crate) fn solve_dual_auto(
    gram: &[Vec<f64>],
    slopes: &[&SparseVec],
    b: &[f64],
    group: &[usize],
    n_groups: usize,
    c: f64,
) -> Result<Vec<f64>> {
    if support_of(slopes).0.len() < b.len() {
        solve_dual_lifted(slopes, b, group, n_groups, c)
    } else {
        solve_dual(gram, b, group, n_groups, c)
    }
}

/// The coordinates the slopes touch, numbered in order of first appearance, and their total nnz.
fn support_of(slopes: &[&SparseVec]) -> (std::collections::HashMap<usize, usize>, usize) {
    let mut support = std::collections::HashMap::new();
    let mut nnz = 0;
    for a in slopes {
        nnz += a.indices.len();
        for &i in &a.indices {
            let next = support.len();
            support.entry(i).or_insert(next);
        }
    }
    (support, nnz)
}

/// Solves min ½xᵀPx + qᵀx over x = (α, rest) with `n_eq` equality rows (given as triplets over
/// all columns) first, then α ≥ 0 and the groups' sums Σ_{k∈g} α_k ≤ C; α are the first
/// `group.len()` variables.
fn solve_constrained(
    p: &CscMatrix<f64>,
    q: &[f64],
    n_eq: usize,
    eq: Option<(Vec<usize>, Vec<usize>, Vec<f64>)>,
    group: &[usize],
    n_groups: usize,
    c: f64,
) -> Result<Vec<f64>> {
    let m = group.len();
    let (mut ar, mut ac, mut av) = eq.unwrap_or_default();
    for (k, &g) in group.iter().enumerate() {
        ar.push(n_eq + k);
        ac.push(k);
        av.push(-1.0);
        ar.push(n_eq + m + g);
        ac.push(k);
        av.push(1.0);
    }
    let rows = n_eq + m + n_groups;
    let a = CscMatrix::new_from_triplets(rows, q.len(), ar, ac, av);
    let mut rhs = vec![0.0; rows];
    rhs[n_eq + m..].iter_mut().for_each(|x| *x = c);
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .max_threads(1)
        .max_iter(500)
        .build()
        .map_err(|e| Error::solver(format!("cutting-plane QP settings: {e}")))?;
    let cones = [ZeroConeT(n_eq), NonnegativeConeT(m + n_groups)];
    let cones = if n_eq == 0 { &cones[1..] } else { &cones[..] };
    let mut solver = DefaultSolver::new(p, q, &a, &rhs, cones, settings)
        .map_err(|e| Error::solver(format!("cutting-plane QP setup failed: {e:?}")))?;
    solver.solve();
    let sol = &solver.solution;
    match sol.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => Ok(sol.x.clone()),
        s => Err(Error::solver(format!(
            "the cutting-plane dual QP ({m} constraints) was not solved: clarabel status {s:?} after {} iterations",
            sol.iterations
        ))),
    }
}

/// Cleans the interior point's tolerance-sized infeasibilities: α ≥ 0 and every group's sum ≤ C.
fn clean(x: Vec<f64>, group: &[usize], n_groups: usize, c: f64) -> Vec<f64> {
    let mut alpha: Vec<f64> = x.iter().map(|&v| v.max(0.0)).collect();
    let mut sums = vec![0.0; n_groups];
    for (k, &g) in group.iter().enumerate() {
        sums[g] += alpha[k];
    }
    for (k, &g) in group.iter().enumerate() {
        if sums[g] > c {
            alpha[k] *= c / sums[g];
        }
    }
    alpha
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
    fn lifted_form_equals_gram_form() {
        // random sparse slopes in 6 coordinates, 14 constraints in 3 groups
        let mut r = crate::rng::Rng::new(5);
        let slopes: Vec<SparseVec> = (0..14)
            .map(|_| {
                let indices: Vec<usize> = (0..6).filter(|_| r.below(3) != 0).map(|i| 10 * i).collect();
                let values = indices.iter().map(|_| r.below(1000) as f64 / 250.0 - 2.0).collect();
                SparseVec { indices, values }
            })
            .collect();
        let refs: Vec<&SparseVec> = slopes.iter().collect();
        let dot = |a: &SparseVec, b: &SparseVec| -> f64 {
            let mut s = 0.0;
            for (i, x) in a.indices.iter().zip(&a.values) {
                for (j, y) in b.indices.iter().zip(&b.values) {
                    if i == j {
                        s += x * y;
                    }
                }
            }
            s
        };
        let gram: Vec<Vec<f64>> = slopes.iter().map(|a| slopes.iter().map(|b| dot(a, b)).collect()).collect();
        let b: Vec<f64> = (0..14).map(|k| 0.2 + 0.1 * k as f64).collect();
        let group: Vec<usize> = (0..14).map(|k| k % 3).collect();
        let value = |alpha: &[f64]| -> f64 {
            let lin: f64 = alpha.iter().zip(&b).map(|(a, b)| a * b).sum();
            let quad: f64 = (0..14)
                .flat_map(|k| (0..14).map(move |l| (k, l)))
                .map(|(k, l)| alpha[k] * alpha[l] * gram[k][l])
                .sum();
            lin - 0.5 * quad
        };
        let g = solve_dual(&gram, &b, &group, 3, 0.7).unwrap();
        let l = solve_dual_lifted(&refs, &b, &group, 3, 0.7).unwrap();
        let a = solve_dual_auto(&gram, &refs, &b, &group, 3, 0.7).unwrap();
        assert!((value(&g) - value(&l)).abs() < 1e-6, "{} vs {}", value(&g), value(&l));
        assert!((value(&a) - value(&g)).abs() < 1e-6);
        for alpha in [&g, &l] {
            for gi in 0..3 {
                let sum: f64 = (0..14).filter(|k| k % 3 == gi).map(|k| alpha[k]).sum();
                assert!(sum <= 0.7 + 1e-12 && alpha.iter().all(|&x| x >= 0.0));
            }
        }
    }

    #[test]
    fn small_c_and_a_large_gram_matrix_reach_the_optimum() {
        // the 1-slack scale: cuts summed over ~10⁵ instances (G ~ 1e10, b ~ 1e5) at small C;
        // optimum by hand: α₁ = 0 (its gradient b₁ − G₁₂α₂ < 0), α₂ = b₂/G₂₂ = 1.5e-5 < C,
        // dual value b₂α₂ − ½G₂₂α₂² = 1.125
        let g = vec![vec![1e10, 9e9], vec![9e9, 1e10]];
        let b = [1e5, 1.5e5];
        let slopes = [
            SparseVec { indices: vec![0], values: vec![1e5] },
            SparseVec { indices: vec![0, 1], values: vec![9e4, 1e5 * 0.19f64.sqrt()] },
        ];
        let refs: Vec<&SparseVec> = slopes.iter().collect();
        for alpha in [
            solve_dual(&g, &b, &[0, 0], 1, 1e-3).unwrap(),
            solve_dual_lifted(&refs, &b, &[0, 0], 1, 1e-3).unwrap(),
        ] {
            let value = b[0] * alpha[0] + b[1] * alpha[1]
                - 0.5 * (g[0][0] * alpha[0] * alpha[0] + 2.0 * g[0][1] * alpha[0] * alpha[1] + g[1][1] * alpha[1] * alpha[1]);
            assert!((value - 1.125).abs() < 1e-6, "dual value {value}, α {alpha:?}");
            assert!(alpha[0] < 1e-9 && (alpha[1] - 1.5e-5).abs() < 1e-9, "{alpha:?}");
        }
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
