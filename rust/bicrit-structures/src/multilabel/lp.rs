//! The local-polytope LP with optional extra rows, solved by the `clarabel` interior-point solver
//! (pure Rust). It answers what max-flow cannot: the constrained λ-oracle (the LP plus the two cone
//! rows, thesis eq. `constrained_oracle`) and lexicographic queries whose tie-breaking objective is
//! not separable. It is also the reference the QPBO answers are measured against.
//!
//! Variables are the node marginals μ_k and, for each edge whose z_e = μ_e(1,1) has a non-zero
//! coefficient somewhere, z_e, with the local-polytope constraints
//! `max(0, μ_i + μ_j − 1) ≤ z_e ≤ min(μ_i, μ_j)`, `0 ≤ μ ≤ 1` (equivalent to the usual
//! marginalisation constraints on the four edge states). Without extra rows only the two
//! constraints on the side the objective pushes z to are needed.

use bicrit_core::{Error, Result};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus};

use super::energy::LinForm;

/// An extra constraint `form(μ, z) ≤ rhs`.
pub(crate) struct Row {
    pub form: LinForm,
    pub rhs: f64,
}

/// Outcome of one LP.
pub(crate) enum LpResult {
    /// An optimal point as returned by the solver (not cleaned: may be off the bounds by the
    /// solver's feasibility tolerance); `z` is NaN on edges the LP did not model.
    Optimal { mu: Vec<f64>, z: Vec<f64> },
    /// The rows exclude every point of the local polytope.
    Infeasible,
}

/// Maximises `objective` over the local polytope intersected with `rows`.
///
/// With extra rows the interior-point method is not trusted on its own: it can stop with a
/// numerical error, or claim infeasibility or optimality wrongly, when the rows leave an empty, a
/// lower-dimensional or a very thin feasible set (a cone whose open end grazes the polytope).
/// Whenever it fails, reports infeasibility, or returns a point that breaks a row by more than
/// 1e-6 (relative), a phase-1 LP decides: maximise t with `form(x) + t ≤ rhs` for every row
/// (t ≤ 1). If t* < −[`PHASE1_TOLERANCE`] the rows are infeasible; otherwise the LP is solved again
/// with every row relaxed by [`PHASE1_TOLERANCE`]·(1 + |rhs|) (answers then satisfy the rows up to
/// that, which is below the strict-end slack δ).
pub(crate) fn solve(edges: &[(usize, usize)], objective: &LinForm, rows: &[Row]) -> Result<LpResult> {
    let first = solve_once(edges, objective, rows, None)?;
    let trusted = match &first {
        Attempt::Failed(_) => false,
        // clarabel has reported thin but feasible cone slivers as infeasible: confirm by phase 1
        Attempt::Done(LpResult::Infeasible) => false,
        // an "optimal" point that breaks a row means the solver lost its way (seen on empty cones)
        Attempt::Done(LpResult::Optimal { mu, z }) => rows.iter().all(|r| row_holds(r, mu, z)),
        _ => true,
    };
    if rows.is_empty() || trusted {
        return first.into_result();
    }
    // phase 1: maximise the common slack t of all rows
    let n_nodes = objective.node.len();
    let t_obj = LinForm::zeros(n_nodes, edges.len());
    match solve_once(edges, &t_obj, rows, Some(()))? {
        Attempt::Phase1(t) if t < -PHASE1_TOLERANCE => return Ok(LpResult::Infeasible),
        Attempt::Phase1(_) => {}
        Attempt::Failed(s) => {
            return Err(Error::solver(format!("the phase-1 LP (clarabel) stopped with status {s}")));
        }
        other => return other.into_result(),
    }
    let relaxed: Vec<Row> = rows
        .iter()
        .map(|r| Row { form: r.form.clone(), rhs: r.rhs + PHASE1_TOLERANCE * (1.0 + r.rhs.abs()) })
        .collect();
    solve_once(edges, objective, &relaxed, None)?.into_result()
}

/// Does the raw solver point satisfy `row` up to 1e-6 relative to the row's size?
fn row_holds(row: &Row, mu: &[f64], z: &[f64]) -> bool {
    let z0: Vec<f64> = z.iter().map(|v| if v.is_nan() { 0.0 } else { *v }).collect();
    let size: f64 = row.form.node.iter().chain(&row.form.edge).map(|c| c.abs()).sum::<f64>() + row.rhs.abs();
    row.form.eval(mu, &z0) <= row.rhs + 1e-6 * (1.0 + size)
}

/// Tolerance of the phase-1 feasibility decision and of the row relaxation after it.
pub(crate) const PHASE1_TOLERANCE: f64 = 1e-8;

enum Attempt {
    Done(LpResult),
    /// Phase-1 optimum t*.
    Phase1(f64),
    Failed(String),
}

impl Attempt {
    fn into_result(self) -> Result<LpResult> {
        match self {
            Attempt::Done(r) => Ok(r),
            Attempt::Phase1(_) => Err(Error::solver("internal: unexpected phase-1 result")),
            Attempt::Failed(s) => {
                Err(Error::solver(format!("the local-polytope LP (clarabel) stopped with status {s}")))
            }
        }
    }
}

/// One clarabel solve; with `phase1`, a variable t is appended to every extra row and maximised
/// (t ≤ 1) instead of `objective`.
fn solve_once(
    edges: &[(usize, usize)],
    objective: &LinForm,
    rows: &[Row],
    phase1: Option<()>,
) -> Result<Attempt> {
    let k = objective.node.len();
    let mut var_of_edge = vec![usize::MAX; edges.len()];
    let mut n_var = k;
    for (e, slot) in var_of_edge.iter_mut().enumerate() {
        if objective.edge[e] != 0.0 || rows.iter().any(|r| r.form.edge[e] != 0.0) {
            *slot = n_var;
            n_var += 1;
        }
    }
    let (mut ri, mut ci, mut vals, mut b) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut row = |entries: &[(usize, f64)], rhs: f64, b: &mut Vec<f64>| {
        let r = b.len();
        for &(c, v) in entries {
            if v != 0.0 {
                ri.push(r);
                ci.push(c);
                vals.push(v);
            }
        }
        b.push(rhs);
    };
    for p in 0..k {
        row(&[(p, -1.0)], 0.0, &mut b);
        row(&[(p, 1.0)], 1.0, &mut b);
    }
    for (e, &(i, j)) in edges.iter().enumerate() {
        let v = var_of_edge[e];
        if v == usize::MAX {
            continue;
        }
        let c = objective.edge[e];
        let upper = !rows.is_empty() || c > 0.0;
        let lower = !rows.is_empty() || c < 0.0;
        if upper {
            row(&[(v, 1.0), (i, -1.0)], 0.0, &mut b);
            row(&[(v, 1.0), (j, -1.0)], 0.0, &mut b);
        }
        if lower {
            row(&[(v, -1.0)], 0.0, &mut b);
            row(&[(v, -1.0), (i, 1.0), (j, 1.0)], 1.0, &mut b);
        }
    }
    let t_var = n_var;
    if phase1.is_some() {
        n_var += 1;
        row(&[(t_var, 1.0)], 1.0, &mut b);
    }
    for r in rows {
        let mut entries: Vec<(usize, f64)> = r.form.node.iter().copied().enumerate().collect();
        for (e, &c) in r.form.edge.iter().enumerate() {
            if c != 0.0 {
                entries.push((var_of_edge[e], c));
            }
        }
        if phase1.is_some() {
            entries.push((t_var, 1.0));
        }
        row(&entries, r.rhs - r.form.constant, &mut b);
    }
    let m = b.len();
    let a = CscMatrix::new_from_triplets(m, n_var, ri, ci, vals);
    let p = CscMatrix::<f64>::zeros((n_var, n_var));
    let mut q = vec![0.0; n_var];
    for (p_, &c) in objective.node.iter().enumerate() {
        q[p_] = -c;
    }
    for (e, &v) in var_of_edge.iter().enumerate() {
        if v != usize::MAX {
            q[v] = -objective.edge[e];
        }
    }
    if phase1.is_some() {
        q[t_var] = -1.0;
    }
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .max_threads(1)
        .build()
        .map_err(|e| Error::solver(format!("LP settings: {e}")))?;
    let cones = [NonnegativeConeT(m)];
    let mut solver = DefaultSolver::new(&p, &q, &a, &b, &cones, settings)
        .map_err(|e| Error::solver(format!("LP setup failed: {e:?}")))?;
    solver.solve();
    let sol = &solver.solution;
    Ok(match sol.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved if phase1.is_some() => {
            Attempt::Phase1(sol.x[t_var])
        }
        SolverStatus::Solved | SolverStatus::AlmostSolved => {
            let mu = sol.x[..k].to_vec();
            let z = var_of_edge.iter().map(|&v| if v == usize::MAX { f64::NAN } else { sol.x[v] }).collect();
            Attempt::Done(LpResult::Optimal { mu, z })
        }
        SolverStatus::PrimalInfeasible | SolverStatus::AlmostPrimalInfeasible => {
            Attempt::Done(LpResult::Infeasible)
        }
        s => Attempt::Failed(format!("{s:?} after {} iterations", sol.iterations)),
    })
}
