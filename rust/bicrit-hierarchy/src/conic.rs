//! A small builder of the conic programs of the α solvers, solved by `clarabel`:
//! minimise ½xᵀPx + qᵀx subject to rows s = b − a·x with s in a zero cone (equalities), the
//! non-negative orthant (a·x ≤ b), or three-row cones (power cones, second-order cones).
//!
//! The leaf-sum constraints are written once here for every solver ([`Program::leaf_sums`]): on
//! trees with prefix-sum variables R_n = R_parent + α_n (sparse rows), on DAGs with one row
//! Σ_{n ∈ Ā(l)} α_n per leaf.

use bicrit_core::{Error, Result};
use clarabel::algebra::CscMatrix;
use clarabel::solver::{
    DefaultSettings, DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, PowerConeT,
    SecondOrderConeT, SolverStatus, SupportedConeT, ZeroConeT,
};

use crate::paths::LeafPaths;
use crate::{HierarchyGraph, LeafSum};

/// One row: s = rhs − Σ coef·x.
#[derive(Clone, Debug)]
pub(crate) struct Row {
    terms: Vec<(usize, f64)>,
    rhs: f64,
}

impl Row {
    pub(crate) fn new(terms: Vec<(usize, f64)>, rhs: f64) -> Self {
        Row { terms, rhs }
    }
}

/// A three-row cone.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Cone3 {
    /// {(x, y, z): x^a·y^(1−a) ≥ |z|, x, y ≥ 0}.
    Power(f64),
    /// {(x, y, z): x ≥ ‖(y, z)‖}.
    Soc,
}

/// A conic program under construction.
#[derive(Debug, Default)]
pub(crate) struct Program {
    n: usize,
    q: Vec<f64>,
    p_diag: Vec<(usize, f64)>,
    eq: Vec<Row>,
    le: Vec<Row>,
    cones: Vec<(Cone3, [Row; 3])>,
}

impl Program {
    /// A program over `n` variables with a zero objective.
    pub(crate) fn new(n: usize) -> Self {
        Program { n, q: vec![0.0; n], ..Default::default() }
    }

    /// Appends `k` variables; returns the index of the first.
    pub(crate) fn add_vars(&mut self, k: usize) -> usize {
        let first = self.n;
        self.n += k;
        self.q.resize(self.n, 0.0);
        first
    }

    /// Sets the linear objective coefficient of x_j.
    pub(crate) fn set_linear(&mut self, j: usize, c: f64) {
        self.q[j] = c;
    }

    /// Adds p·x_j² / 2 to the objective.
    pub(crate) fn add_diag(&mut self, j: usize, p: f64) {
        self.p_diag.push((j, p));
    }

    /// Σ coef·x = rhs.
    pub(crate) fn eq(&mut self, terms: Vec<(usize, f64)>, rhs: f64) {
        self.eq.push(Row::new(terms, rhs));
    }

    /// Σ coef·x ≤ rhs.
    pub(crate) fn le(&mut self, terms: Vec<(usize, f64)>, rhs: f64) {
        self.le.push(Row::new(terms, rhs));
    }

    /// Σ coef·x ≥ rhs.
    pub(crate) fn ge(&mut self, terms: Vec<(usize, f64)>, rhs: f64) {
        let neg = terms.into_iter().map(|(j, c)| (j, -c)).collect();
        self.le.push(Row::new(neg, -rhs));
    }

    /// (b₀ − a₀·x, b₁ − a₁·x, b₂ − a₂·x) ∈ cone.
    pub(crate) fn cone(&mut self, cone: Cone3, rows: [Row; 3]) {
        self.cones.push((cone, rows));
    }

    /// The leaf-sum constraints on α = x[alpha..alpha + M] (see the module documentation).
    pub(crate) fn leaf_sums(&mut self, g: &HierarchyGraph, paths: &LeafPaths, alpha: usize, sum: LeafSum) {
        let (lo, hi) = sum.bounds();
        let bound = |prog: &mut Program, terms: Vec<(usize, f64)>| {
            if lo == hi {
                prog.eq(terms, lo);
            } else {
                if lo.is_finite() {
                    prog.ge(terms.clone(), lo);
                }
                prog.le(terms, hi);
            }
        };
        if g.is_tree() {
            let m = g.n_nodes();
            let r = self.add_vars(m);
            for &v in g.topo() {
                let v = v as usize;
                match g.parents(v).first() {
                    None => self.eq(vec![(r + v, 1.0), (alpha + v, -1.0)], 0.0),
                    Some(&p) => self.eq(vec![(r + v, 1.0), (r + p as usize, -1.0), (alpha + v, -1.0)], 0.0),
                }
            }
            for &l in g.leaves() {
                bound(self, vec![(r + l as usize, 1.0)]);
            }
        } else {
            for k in 0..paths.len() {
                let terms = paths.row(k).iter().map(|&v| (alpha + v as usize, 1.0)).collect();
                bound(self, terms);
            }
        }
    }

    /// α ≥ 0 on x[alpha..alpha + M].
    pub(crate) fn nonneg(&mut self, alpha: usize, m: usize) {
        for v in 0..m {
            self.le(vec![(alpha + v, -1.0)], 0.0);
        }
    }

    /// Directional constraints α_child ≥ α_parent (thesis eq. `nbeta_1`) on every edge.
    pub(crate) fn directional(&mut self, g: &HierarchyGraph, alpha: usize) {
        for c in 0..g.n_nodes() {
            for &p in g.parents(c) {
                self.le(vec![(alpha + p as usize, 1.0), (alpha + c, -1.0)], 0.0);
            }
        }
    }

    /// Puts the interior point's round-off of the leaf sums on the leaves: every Ā(l) contains
    /// exactly one leaf (l itself), so α_l ← max(0, α_l + clamp(Σ, lo, hi) − Σ) restores every
    /// leaf-sum constraint to machine precision (unless α_l would turn negative), moving α by no
    /// more than the solver's feasibility tolerance.
    ///
    /// For Σ ≤ 1 (the Shared SVM step) α is instead scaled by 1 / max_l Σ when that exceeds 1: the
    /// answer is then feasible and its objective Σ N/α an upper bound of the optimum.
    pub(crate) fn repair_leaf_sums(paths: &LeafPaths, alpha: &mut [f64], sum: LeafSum) {
        if sum == LeafSum::AtMost {
            let worst = paths.sums(alpha).into_iter().fold(0.0, f64::max);
            if worst > 1.0 {
                alpha.iter_mut().for_each(|a| *a /= worst);
            }
            return;
        }
        let (lo, hi) = sum.bounds();
        for r in 0..paths.len() {
            let s: f64 = paths.row(r).iter().map(|&v| alpha[v as usize]).sum();
            let l = paths.leaves[r] as usize;
            let fix = s.clamp(lo, hi) - s;
            if fix != 0.0 {
                alpha[l] = (alpha[l] + fix).max(0.0);
            }
        }
    }

    fn settings(tight: bool) -> Result<DefaultSettings<f64>> {
        let mut b = DefaultSettingsBuilder::default();
        b.verbose(false).max_iter(200);
        if tight {
            // A tight duality gap pins the objective; feasibility stays at clarabel's 1e-8 (a
            // tighter one stalls on degenerate faces, and the leaf repair restores the sums).
            b.tol_gap_abs(1e-10).tol_gap_rel(1e-10);
        }
        b.build().map_err(|e| Error::solver(format!("clarabel settings: {e:?}")))
    }

    /// Solves; `what` names the problem in errors. A tight duality gap first (1e-10), clarabel's
    /// defaults (1e-8) when that stalls.
    pub(crate) fn solve(&self, what: &str) -> Result<Vec<f64>> {
        let mut ti = Vec::new();
        let mut tj = Vec::new();
        let mut tv = Vec::new();
        let mut b = Vec::new();
        let mut push = |row: &Row, b: &mut Vec<f64>| {
            let r = b.len();
            for &(j, c) in &row.terms {
                ti.push(r);
                tj.push(j);
                tv.push(c);
            }
            b.push(row.rhs);
        };
        let mut cones: Vec<SupportedConeT<f64>> = Vec::new();
        for row in &self.eq {
            push(row, &mut b);
        }
        if !self.eq.is_empty() {
            cones.push(ZeroConeT(self.eq.len()));
        }
        for row in &self.le {
            push(row, &mut b);
        }
        if !self.le.is_empty() {
            cones.push(NonnegativeConeT(self.le.len()));
        }
        for (cone, rows) in &self.cones {
            for row in rows {
                push(row, &mut b);
            }
            cones.push(match *cone {
                Cone3::Power(a) => PowerConeT(a),
                Cone3::Soc => SecondOrderConeT(3),
            });
        }
        let a = CscMatrix::new_from_triplets(b.len(), self.n, ti, tj, tv);
        let (pi, pv): (Vec<usize>, Vec<f64>) = self.p_diag.iter().copied().unzip();
        let p = CscMatrix::new_from_triplets(self.n, self.n, pi.clone(), pi, pv);
        let mut last = SolverStatus::Unsolved;
        for tight in [true, false] {
            let mut solver = DefaultSolver::new(&p, &self.q, &a, &b, &cones, Self::settings(tight)?)
                .map_err(|e| Error::solver(format!("{what}: clarabel setup failed: {e:?}")))?;
            solver.solve();
            let sol = &solver.solution;
            match sol.status {
                SolverStatus::Solved | SolverStatus::AlmostSolved => return Ok(sol.x.clone()),
                SolverStatus::PrimalInfeasible | SolverStatus::AlmostPrimalInfeasible => {
                    return Err(Error::solver(format!("{what} is infeasible (clarabel: {:?})", sol.status)))
                }
                other => last = other,
            }
        }
        Err(Error::solver(format!("{what} was not solved: clarabel status {last:?}")))
    }
}
