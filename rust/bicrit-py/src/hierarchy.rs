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
use bicrit_structures::hierarchy::graph::find_root;
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;

use crate::errors;

/// (α, objective, method name).
type AlphaOut<'py> = (Bound<'py, PyArray1<f64>>, f64, &'static str);

/// `parents` as node ids (negative or too large ids named with their node).
pub(crate) fn parent_ids(
    py: Python<'_>,
    parents: &[Vec<i64>],
    names: Option<&[String]>,
) -> PyResult<Vec<Vec<usize>>> {
    let n = parents.len() as i64;
    let mut ps = Vec::with_capacity(parents.len());
    for (v, p) in parents.iter().enumerate() {
        let mut row = Vec::with_capacity(p.len());
        for &q in p {
            if q < 0 || q >= n {
                let who = match names.and_then(|ns| ns.get(v)) {
                    Some(name) => format!("node '{name}'"),
                    None => format!("node {v}"),
                };
                let msg = format!("{who} has parent id {q}, outside 0..{}", n - 1);
                return Err(errors::to_py(py, Error::input(msg)));
            }
            row.push(q as usize);
        }
        ps.push(row);
    }
    Ok(ps)
}

fn graph(
    py: Python<'_>,
    parents: &[Vec<i64>],
    root: Option<i64>,
    names: Option<Vec<String>>,
) -> PyResult<HierarchyGraph> {
    let ps = parent_ids(py, parents, names.as_deref())?;
    let root = match root {
        Some(r) if r < 0 || r as usize >= ps.len() => {
            let msg = format!("root id {r} outside 0..{}", ps.len() as i64 - 1);
            return Err(errors::to_py(py, Error::input(msg)));
        }
        Some(r) => r as usize,
        None => errors::native(py, || find_root(&ps, names.as_deref()))?,
    };
    errors::native(py, || HierarchyGraph::new(&ps, root, names))
}

/// A validated hierarchy graph (`bicrit_structures::hierarchy::graph`): what
/// `bicrit.hierarchy.Hierarchy` holds. Node ids are 0..n_nodes; arrays are int64.
#[pyclass(name = "HierarchyGraph", module = "bicrit._native", frozen)]
pub struct PyHierarchyGraph {
    inner: HierarchyGraph,
}

fn ids<'py>(py: Python<'py>, v: impl IntoIterator<Item = u32>) -> Bound<'py, PyArray1<i64>> {
    v.into_iter().map(i64::from).collect::<Vec<i64>>().into_pyarray(py)
}

fn csr<'py>(
    py: Python<'py>,
    n: usize,
    row: impl Fn(usize) -> Vec<u32>,
) -> (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>) {
    let mut indptr = Vec::with_capacity(n + 1);
    indptr.push(0i64);
    let mut indices = Vec::new();
    for v in 0..n {
        indices.extend(row(v).into_iter().map(i64::from));
        indptr.push(indices.len() as i64);
    }
    (indptr.into_pyarray(py), indices.into_pyarray(py))
}

#[pymethods]
impl PyHierarchyGraph {
    /// Validates `parents` (node → parent ids); `root` None: the unique node without parents.
    /// Cycles, several roots, duplicate names and bad ids raise InvalidInputError naming a node.
    #[new]
    #[pyo3(signature = (parents, root=None, names=None))]
    fn new(
        py: Python<'_>,
        parents: Vec<Vec<i64>>,
        root: Option<i64>,
        names: Option<Vec<String>>,
    ) -> PyResult<Self> {
        Ok(PyHierarchyGraph { inner: graph(py, &parents, root, names)? })
    }

    #[getter]
    fn n_nodes(&self) -> usize {
        self.inner.n_nodes()
    }

    #[getter]
    fn root(&self) -> usize {
        self.inner.root()
    }

    #[getter]
    fn is_tree(&self) -> bool {
        self.inner.is_tree()
    }

    /// Node ids, every parent before its children, the root first.
    #[getter]
    fn topological_order<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        ids(py, self.inner.topo().iter().copied())
    }

    /// The nodes without children, ascending.
    #[getter]
    fn leaves<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        ids(py, self.inner.leaves().iter().copied())
    }

    /// 0 at the root, else 1 + the largest parent depth.
    #[getter]
    fn depth<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i64>> {
        ids(py, self.inner.depth())
    }

    /// (indptr, indices) of the parent lists, ascending within a node.
    fn parent_csr<'py>(&self, py: Python<'py>) -> (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>) {
        csr(py, self.inner.n_nodes(), |v| self.inner.parents(v).to_vec())
    }

    /// (indptr, indices) of the child lists, ascending within a node.
    fn child_csr<'py>(&self, py: Python<'py>) -> (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>) {
        csr(py, self.inner.n_nodes(), |v| self.inner.children(v).to_vec())
    }

    /// (indptr, indices) of every node's ancestors, itself and the root included, ascending.
    fn ancestor_csr<'py>(&self, py: Python<'py>) -> (Bound<'py, PyArray1<i64>>, Bound<'py, PyArray1<i64>>) {
        let (ptr, idx) = self.inner.ancestor_rows();
        let ptr: Vec<i64> = ptr.into_iter().map(|x| x as i64).collect();
        (ptr.into_pyarray(py), ids(py, idx))
    }
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
    let g = graph(py, &parents, Some(root), names)?;
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
    let g = graph(py, &parents, Some(root), names)?;
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
    let g = graph(py, &parents, Some(root), names)?;
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
    m.add_class::<PyHierarchyGraph>()?;
    m.add_function(wrap_pyfunction!(alpha_power, m)?)?;
    m.add_function(wrap_pyfunction!(alpha_maxmin, m)?)?;
    m.add_function(wrap_pyfunction!(alpha_shared, m)?)?;
    m.add_function(wrap_pyfunction!(crate::structures::hierarchy::hierarchy_ratio_oracle, m)?)?;
    m.add_function(wrap_pyfunction!(crate::structures::hierarchy::hierarchy_ratio_oracle_scores, m)?)?;
    m.add_class::<crate::nhsvm3::Nhsvm3Trainer>()?;
    Ok(())
}
