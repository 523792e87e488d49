//! Bindings of the hierarchy family (`bicrit-hierarchy`): the α solvers of NHSVM and Shared SVM,
//! each taking the graph as `parents` (node → parent ids) and `root`, validated natively
//! (cycles, several roots, unreachable nodes are reported by name). Also registers the
//! hierarchy structure's NHSVM3 oracle (defined with the structure's bindings) and NHSVM3's
//! learner (`Nhsvm3Trainer`, `nhsvm3.rs`).

use bicrit_core::Error;
use bicrit_hierarchy::{
    AlphaSolution, AlphaSolver, HierarchyGraph, LeafSum, MaxMinAlpha, PowerAlpha, PowerMethod,
    SharedConicAlpha, SharedTreeAlpha,
};
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use crate::errors;

/// (α, objective, method name).
type AlphaOut<'py> = (Bound<'py, PyArray1<f64>>, f64, &'static str);

fn graph(
    py: Python<'_>,
    parents: &[Vec<i64>],
    root: i64,
    names: Option<Vec<String>>,
) -> PyResult<HierarchyGraph> {
    let n = parents.len() as i64;
    let bad = |m: String| errors::to_py(py, Error::input(m));
    let mut ps = Vec::with_capacity(parents.len());
    for (v, p) in parents.iter().enumerate() {
        let mut row = Vec::with_capacity(p.len());
        for &q in p {
            if q < 0 || q >= n {
                return Err(bad(format!("node {v} lists parent {q}, outside the nodes 0..{n}")));
            }
            row.push(q as usize);
        }
        ps.push(row);
    }
    if root < 0 || root >= n {
        return Err(bad(format!("root {root} outside the nodes 0..{n}")));
    }
    errors::native(py, || HierarchyGraph::new(&ps, root as usize, names))
}

fn leaf_sum(py: Python<'_>, t: Option<f64>) -> PyResult<LeafSum> {
    let s = match t {
        None => LeafSum::Exact,
        Some(t) => LeafSum::Range(t),
    };
    s.check().map_err(|e| errors::to_py(py, e))
}

fn out<'py>(py: Python<'py>, sol: AlphaSolution) -> AlphaOut<'py> {
    (sol.alpha.into_pyarray(py), sol.objective, sol.method.name())
}

/// NHSVM's power problem min Σ α^ρ (thesis eq. `beta_1`): `t` = None for exact leaf sums, or T
/// for 1 ≤ Σ ≤ T; `method` is "auto", "closed_form" (trees) or "conic".
#[pyfunction]
#[pyo3(signature = (parents, root, rho, *, t=None, directional=false, include_root=true, method="auto", names=None))]
#[allow(clippy::too_many_arguments)]
pub fn alpha_power<'py>(
    py: Python<'py>,
    parents: Vec<Vec<i64>>,
    root: i64,
    rho: f64,
    t: Option<f64>,
    directional: bool,
    include_root: bool,
    method: &str,
    names: Option<Vec<String>>,
) -> PyResult<AlphaOut<'py>> {
    let method = match method {
        "auto" => PowerMethod::Auto,
        "closed_form" => PowerMethod::ClosedForm,
        "conic" => PowerMethod::Conic,
        other => {
            return Err(errors::to_py(
                py,
                Error::param(format!("method must be 'auto', 'closed_form' or 'conic', got {other:?}")),
            ))
        }
    };
    let sum = leaf_sum(py, t)?;
    let g = graph(py, &parents, root, names)?;
    let solver = PowerAlpha { rho, sum, directional, include_root, method };
    let sol = errors::native(py, || solver.solve(&g))?;
    Ok(out(py, sol))
}

/// NHSVM's ρ = 1 problem max min α (thesis eq. `nbeta_1`), ties broken by min Σα² on the optimal
/// face; `t` as in [`alpha_power`]. The objective reported is min_n α_n (over the non-root nodes
/// when `include_root` is false).
#[pyfunction]
#[pyo3(signature = (parents, root, *, t=None, directional=true, include_root=true, tie_break=true, names=None))]
#[allow(clippy::too_many_arguments)]
pub fn alpha_maxmin<'py>(
    py: Python<'py>,
    parents: Vec<Vec<i64>>,
    root: i64,
    t: Option<f64>,
    directional: bool,
    include_root: bool,
    tie_break: bool,
    names: Option<Vec<String>>,
) -> PyResult<AlphaOut<'py>> {
    let sum = leaf_sum(py, t)?;
    let g = graph(py, &parents, root, names)?;
    let solver = MaxMinAlpha { sum, directional, include_root, tie_break };
    let sol = errors::native(py, || solver.solve(&g))?;
    Ok(out(py, sol))
}

/// Shared SVM's α step min Σ N_n/α_n s.t. leaf sums ≤ 1 (thesis eq. `optimize_alpha`), with
/// `sq_norms[n]` = ‖U_n‖²: "auto" (closed form on trees, conic on DAGs), "closed_form" or "conic".
#[pyfunction]
#[pyo3(signature = (parents, root, sq_norms, *, method="auto", names=None))]
pub fn alpha_shared<'py>(
    py: Python<'py>,
    parents: Vec<Vec<i64>>,
    root: i64,
    sq_norms: Vec<f64>,
    method: &str,
    names: Option<Vec<String>>,
) -> PyResult<AlphaOut<'py>> {
    if !matches!(method, "auto" | "closed_form" | "conic") {
        return Err(errors::to_py(
            py,
            Error::param(format!("method must be 'auto', 'closed_form' or 'conic', got {method:?}")),
        ));
    }
    let g = graph(py, &parents, root, names)?;
    let closed = method == "closed_form" || (method == "auto" && g.is_tree());
    let sol = errors::native(py, || {
        if closed {
            SharedTreeAlpha { sq_norms }.solve(&g)
        } else {
            SharedConicAlpha { sq_norms }.solve(&g)
        }
    })?;
    Ok(out(py, sol))
}

/// Registers the family's functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(alpha_power, m)?)?;
    m.add_function(wrap_pyfunction!(alpha_maxmin, m)?)?;
    m.add_function(wrap_pyfunction!(alpha_shared, m)?)?;
    m.add_function(wrap_pyfunction!(crate::structures::hierarchy::hierarchy_ratio_oracle, m)?)?;
    m.add_function(wrap_pyfunction!(crate::structures::hierarchy::hierarchy_ratio_oracle_scores, m)?)?;
    m.add_class::<crate::nhsvm3::Nhsvm3Trainer>()?;
    Ok(())
}
