//! The linear and integer programs of the DAG hierarchy (thesis eq. `integerprogram`, with the
//! slips of docs/architecture.md (Hierarchies) fixed: the program *maximises* Σ z_n r_n, and Σ_{c ∈ C(n)} z_c ≥ z_n holds
//! for internal nodes only).
//!
//! Variables z_n ∈ [0, 1] (LP) or {0, 1} (IP) for the non-root nodes; the root is in every label
//! (z_root = 1, a constant). Rows:
//! * z_c ≤ z_p for every edge p → c with p ≠ root (ancestor closure);
//! * leaf-terminated spaces only: Σ_{c ∈ C(n)} z_c ≥ z_n for every internal n ≠ root,
//!   Σ_{c ∈ C(root)} z_c ≥ 1, and Σ_{l ∈ leaves} z_l ≥ 1 (implied for integers, tightens the LP).
//!
//! The LP is solved with `clarabel` (interior point); the IP with `microlp` (branch and bound over
//! a dual simplex with warm starts between nodes: vertex solutions make the integrality test
//! exact, and no rounding tolerances enter the branching, unlike a hand-written branch and bound
//! over interior-point LPs).

use bicrit_core::{Error, Result};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus};
use microlp::{ComparisonOp, OptimizationDirection, Problem, SolveOutcome};

use super::graph::HierarchyGraph;

/// An optimal point of the LP relaxation.
#[derive(Clone, Debug, PartialEq)]
pub struct LpSolution {
    /// Optimal value Σ_n r_n z_n (root included).
    pub value: f64,
    /// z_n for every node (z_root = 1).
    pub z: Vec<f64>,
}

/// Index of each non-root node among the variables.
fn var_index(g: &HierarchyGraph) -> (Vec<usize>, Vec<usize>) {
    let n = g.n_nodes();
    let root = g.root();
    let mut var = vec![usize::MAX; n];
    let mut node = Vec::with_capacity(n - 1);
    for (v, slot) in var.iter_mut().enumerate() {
        if v != root {
            *slot = node.len();
            node.push(v);
        }
    }
    (var, node)
}

/// Rows `Σ coef·z {≤ | ≥} rhs` of the program, as (terms, is_ge, rhs).
type Row = (Vec<(usize, f64)>, bool, f64);

fn rows(g: &HierarchyGraph, leaf_terminated: bool, var: &[usize]) -> Vec<Row> {
    let root = g.root();
    let mut out = Vec::new();
    for c in 0..g.n_nodes() {
        if c == root {
            continue;
        }
        for &p in g.parents(c) {
            if p as usize != root {
                out.push((vec![(var[c], 1.0), (var[p as usize], -1.0)], false, 0.0));
            }
        }
    }
    if leaf_terminated {
        for v in 0..g.n_nodes() {
            if g.is_leaf(v) {
                continue;
            }
            let mut t: Vec<(usize, f64)> = g.children(v).iter().map(|&c| (var[c as usize], 1.0)).collect();
            if v == root {
                out.push((t, true, 1.0));
            } else {
                t.push((var[v], -1.0));
                out.push((t, true, 0.0));
            }
        }
        let t = g.leaves().iter().map(|&l| (var[l as usize], 1.0)).collect();
        out.push((t, true, 1.0));
    }
    out
}

/// The LP relaxation `max Σ r_n z_n` over the label space's polytope (`leaf_terminated` selects
/// the thesis's Y_m rows; without them the polytope is integral). `gain` has one entry per node.
pub fn lp_relaxation(g: &HierarchyGraph, gain: &[f64], leaf_terminated: bool) -> Result<LpSolution> {
    let (var, node) = var_index(g);
    let nv = node.len();
    // clarabel: minimise ½xᵀPx + qᵀx subject to Ax + s = b, s ≥ 0.
    let mut ti = Vec::new();
    let mut tj = Vec::new();
    let mut tv = Vec::new();
    let mut b = Vec::new();
    let mut push_row = |terms: &[(usize, f64)], sign: f64, rhs: f64, b: &mut Vec<f64>| {
        let r = b.len();
        for &(j, c) in terms {
            ti.push(r);
            tj.push(j);
            tv.push(sign * c);
        }
        b.push(sign * rhs);
    };
    for (terms, ge, rhs) in rows(g, leaf_terminated, &var) {
        // a·z ≥ rhs  ⇔  −a·z ≤ −rhs
        let sign = if ge { -1.0 } else { 1.0 };
        push_row(&terms, sign, rhs, &mut b);
    }
    for j in 0..nv {
        push_row(&[(j, 1.0)], 1.0, 1.0, &mut b);
        push_row(&[(j, -1.0)], 1.0, 0.0, &mut b);
    }
    let m = b.len();
    let a = CscMatrix::new_from_triplets(m, nv, ti, tj, tv);
    let p = CscMatrix::zeros((nv, nv));
    let q: Vec<f64> = node.iter().map(|&v| -gain[v]).collect();
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .build()
        .map_err(|e| Error::solver(format!("clarabel settings: {e:?}")))?;
    let cones = [NonnegativeConeT(m)];
    let mut solver = DefaultSolver::new(&p, &q, &a, &b, &cones, settings)
        .map_err(|e| Error::solver(format!("clarabel setup failed: {e:?}")))?;
    solver.solve();
    let sol = &solver.solution;
    match sol.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {}
        other => {
            return Err(Error::solver(format!("the hierarchy LP was not solved: clarabel status {other:?}")))
        }
    }
    let mut z = vec![1.0; g.n_nodes()];
    for (j, &v) in node.iter().enumerate() {
        z[v] = sol.x[j].clamp(0.0, 1.0);
    }
    let value = z.iter().zip(gain).map(|(zi, gi)| zi * gi).sum();
    Ok(LpSolution { value, z })
}

/// A linear side constraint `Σ_n coef_n z_n ≥ rhs` (coef over all nodes, root included as the
/// constant z_root = 1).
pub struct SideRow<'a> {
    /// Coefficients per node.
    pub coef: &'a [f64],
    /// Right-hand side.
    pub rhs: f64,
}

/// The integer program `max Σ r_n z_n` over the label space, with `fixed[v]` ∈ {−1, 0, 1}
/// (forced out, free, forced in) and an optional side row. `None` when infeasible. Returns the
/// chosen nodes (root included, sorted).
pub fn ip_solve(
    g: &HierarchyGraph,
    gain: &[f64],
    leaf_terminated: bool,
    fixed: Option<&[i8]>,
    side: Option<SideRow<'_>>,
) -> Result<Option<Vec<u32>>> {
    let (var, node) = var_index(g);
    let root = g.root();
    let mut pb = Problem::new(OptimizationDirection::Maximize);
    let vars: Vec<microlp::Variable> = node
        .iter()
        .map(|&v| match fixed.map_or(0, |f| f[v]) {
            0 => pb.add_binary_var(gain[v]),
            f => {
                let x = i32::from(f > 0);
                pb.add_integer_var(gain[v], (x, x))
            }
        })
        .collect();
    for (terms, ge, rhs) in rows(g, leaf_terminated, &var) {
        let expr: Vec<(microlp::Variable, f64)> = terms.iter().map(|&(j, c)| (vars[j], c)).collect();
        pb.add_constraint(expr.as_slice(), if ge { ComparisonOp::Ge } else { ComparisonOp::Le }, rhs);
    }
    if let Some(side) = side {
        let expr: Vec<(microlp::Variable, f64)> = node
            .iter()
            .enumerate()
            .filter(|(_, &v)| side.coef[v] != 0.0)
            .map(|(j, &v)| (vars[j], side.coef[v]))
            .collect();
        pb.add_constraint(expr.as_slice(), ComparisonOp::Ge, side.rhs - side.coef[root]);
    }
    match pb.solve() {
        Ok(SolveOutcome::Solution(sol)) => {
            let mut label: Vec<u32> = node
                .iter()
                .zip(&vars)
                .filter(|(_, &x)| sol.var_value(x) > 0.5)
                .map(|(&v, _)| v as u32)
                .collect();
            label.push(root as u32);
            label.sort_unstable();
            Ok(Some(label))
        }
        Ok(SolveOutcome::Interrupted(_)) => {
            Err(Error::solver("the hierarchy integer program was interrupted"))
        }
        Err(microlp::Error::Infeasible) => Ok(None),
        Err(e) => Err(Error::solver(format!("the hierarchy integer program failed: {e:?}"))),
    }
}

/// Rounds an LP point when every coordinate is within `tol` of 0 or 1.
pub fn round_integral(z: &[f64], tol: f64) -> Option<Vec<u32>> {
    let mut label = Vec::new();
    for (v, &x) in z.iter().enumerate() {
        if x >= 1.0 - tol {
            label.push(v as u32);
        } else if x > tol {
            return None;
        }
    }
    Some(label)
}
