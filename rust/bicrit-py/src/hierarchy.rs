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
use numpy::{IntoPyArray, PyArray1, PyReadonlyArray1, PyReadonlyArray2};
use pyo3::prelude::*;

use crate::errors;

/// (α, objective, method name).
type AlphaOut<'py> = (Bound<'py, PyArray1<f64>>, f64, &'static str);

/// Platt's (a, b), one entry per column.
type PlattOut<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

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

    /// The ancestor closure of every node set, ascending: with the root when `include_root`
    /// (also for an empty set), else without it. An id outside the graph is an error naming it.
    fn closures<'py>(
        &self,
        py: Python<'py>,
        sets: Vec<PyReadonlyArray1<'py, i64>>,
        include_root: bool,
    ) -> PyResult<Vec<Bound<'py, PyArray1<i64>>>> {
        let n = self.inner.n_nodes();
        let mut node_sets = Vec::with_capacity(sets.len());
        for set in &sets {
            let set = set.as_array();
            if let Some(&bad) = set.iter().find(|&&v| v < 0 || v as usize >= n) {
                let msg = format!("node id {bad} outside 0..{}", n - 1);
                return Err(errors::to_py(py, Error::input(msg)));
            }
            node_sets.push(set.iter().map(|&v| v as usize).collect::<Vec<usize>>());
        }
        let root = self.inner.root() as u32;
        let closed = errors::native(py, || Ok(self.inner.closures(&node_sets)))?;
        let fix = |mut c: Vec<u32>| {
            if !include_root {
                c.retain(|&v| v != root);
            } else if c.is_empty() {
                c.push(root);
            }
            c
        };
        Ok(closed.into_iter().map(|c| ids(py, fix(c))).collect())
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

/// Platt scaling of every column of `scores` (instances × nodes) against the 0/1 `labels` over
/// the rows where `weights` > 0 (`bicrit_hierarchy::platt`): (a, b) per column, the columns in
/// parallel with the GIL released.
#[pyfunction]
pub fn platt_fit<'py>(
    py: Python<'py>,
    scores: PyReadonlyArray2<'py, f64>,
    labels: PyReadonlyArray2<'py, f64>,
    weights: PyReadonlyArray2<'py, f64>,
) -> PyResult<PlattOut<'py>> {
    let (s, y, w) = (scores.as_array(), labels.as_array(), weights.as_array());
    for (name, a) in [("labels", &y), ("weights", &w)] {
        if a.shape() != s.shape() {
            let msg = format!("{name} have shape {:?}, the scores {:?}", a.shape(), s.shape());
            return Err(errors::to_py(py, Error::input(msg)));
        }
    }
    let column = |a: &numpy::ndarray::ArrayView2<'_, f64>, j: usize| a.column(j).to_vec();
    let cols: Vec<_> = (0..s.ncols()).map(|j| (column(&s, j), column(&y, j), column(&w, j))).collect();
    let fits: Vec<(f64, f64)> = errors::native(py, || {
        use rayon::prelude::*;
        Ok(cols.par_iter().map(|(s, y, w)| bicrit_hierarchy::platt::platt_fit(s, y, w)).collect())
    })?;
    let (a, b): (Vec<f64>, Vec<f64>) = fits.into_iter().unzip();
    Ok((a.into_pyarray(py), b.into_pyarray(py)))
}

/// Registers the family's functions.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyHierarchyGraph>()?;
    m.add_function(wrap_pyfunction!(platt_fit, m)?)?;
    m.add_function(wrap_pyfunction!(alpha_power, m)?)?;
    m.add_function(wrap_pyfunction!(alpha_maxmin, m)?)?;
    m.add_function(wrap_pyfunction!(alpha_shared, m)?)?;
    m.add_function(wrap_pyfunction!(crate::structures::hierarchy::hierarchy_ratio_oracle, m)?)?;
    m.add_function(wrap_pyfunction!(crate::structures::hierarchy::hierarchy_ratio_oracle_scores, m)?)?;
    m.add_class::<crate::nhsvm3::Nhsvm3Trainer>()?;
    Ok(())
}
