//! Bindings of the `multilabel` structure. Integral labels are 1-D int64 arrays of 0/1; relaxed
//! labels are `(node_marginals (K,), edge_marginals (|E|, 4))` tuples of float64 arrays.

use bicrit_core::Error;
use bicrit_structures::multilabel::{
    chain_edges, check_sizes, chow_liu_tree, full_edge_count, full_edges, validate_edges, Inference,
    RelaxedSolver,
};
use bicrit_structures::{MlLabel, Multilabel};
use numpy::{
    IntoPyArray, PyArray2, PyArrayMethods, PyReadonlyArray1, PyReadonlyArray2, PyUntypedArrayMethods,
};
use pyo3::prelude::*;
use pyo3::types::{PyString, PyTuple};

use super::{AnyStructure, BindStructure, NativeStructure};
use crate::convert::csr_from_py;
use crate::errors;

fn input(py: Python<'_>, msg: String) -> PyErr {
    errors::to_py(py, Error::input(msg))
}

fn integral_from_values(py: Python<'_>, k: usize, values: impl Iterator<Item = i64>) -> PyResult<Vec<u8>> {
    let mut out = Vec::with_capacity(k);
    for (p, v) in values.enumerate() {
        if v != 0 && v != 1 {
            return Err(input(py, format!("label value {v} at position {p} is not 0 or 1")));
        }
        out.push(v as u8);
    }
    if out.len() != k {
        return Err(input(py, format!("label has length {} but there are {k} labels", out.len())));
    }
    Ok(out)
}

impl BindStructure for Multilabel {
    fn data_from_py(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Self::Data> {
        csr_from_py(py, x, "X")
    }

    fn one_from_py(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Self::Data> {
        let m = csr_from_py(py, x, "x")?;
        if m.n_rows() != 1 {
            return Err(input(py, format!("x must be one instance, got {} rows", m.n_rows())));
        }
        Ok(m)
    }

    fn label_from_py(&self, py: Python<'_>, y: &Bound<'_, PyAny>) -> PyResult<MlLabel> {
        let label = if let Ok(t) = y.cast::<PyTuple>() {
            if t.len() != 2 {
                return Err(input(
                    py,
                    format!(
                        "a relaxed label is a (node_marginals, edge_marginals) pair, got {} items",
                        t.len()
                    ),
                ));
            }
            let nodes: PyReadonlyArray1<'_, f64> = t
                .get_item(0)?
                .extract()
                .map_err(|_| input(py, "node marginals must be a 1-D float64 array".into()))?;
            let edges: PyReadonlyArray2<'_, f64> = t.get_item(1)?.extract().map_err(|_| {
                input(py, "edge marginals must be a 2-D float64 array of shape (n_edges, 4)".into())
            })?;
            let shape = edges.shape();
            if shape[1] != 4 || shape[0] != self.edges().len() {
                return Err(input(
                    py,
                    format!(
                        "edge marginals have shape ({}, {}) but the structure has {} edges (expected ({}, 4))",
                        shape[0],
                        shape[1],
                        self.edges().len(),
                        self.edges().len()
                    ),
                ));
            }
            let e = edges.as_array();
            MlLabel::Relaxed {
                nodes: nodes.as_array().to_vec(),
                edges: (0..shape[0]).map(|r| [e[[r, 0]], e[[r, 1]], e[[r, 2]], e[[r, 3]]]).collect(),
            }
        } else {
            let arr: PyReadonlyArray1<'_, i64> = y.extract().map_err(|_| {
                input(py, "an integral multilabel label must be a 1-D int64 array of 0/1 values".into())
            })?;
            MlLabel::Integral(integral_from_values(py, self.n_labels(), arr.as_array().iter().copied())?)
        };
        self.validate_label(&label).map_err(|e| errors::to_py(py, e))?;
        Ok(label)
    }

    fn label_to_py(&self, py: Python<'_>, y: &MlLabel) -> PyResult<Py<PyAny>> {
        match y {
            MlLabel::Integral(v) => {
                let a: Vec<i64> = v.iter().map(|&b| i64::from(b)).collect();
                Ok(a.into_pyarray(py).into_any().unbind())
            }
            MlLabel::Relaxed { nodes, edges } => {
                let n = nodes.clone().into_pyarray(py);
                let rows: Vec<Vec<f64>> = edges.iter().map(|r| r.to_vec()).collect();
                let e = if rows.is_empty() {
                    PyArray2::<f64>::zeros(py, [0, 4], false)
                } else {
                    PyArray2::from_vec2(py, &rows)?
                };
                Ok(PyTuple::new(py, [n.into_any(), e.into_any()])?.into_any().unbind())
            }
        }
    }

    fn labels_from_py(&self, py: Python<'_>, ys: &Bound<'_, PyAny>) -> PyResult<Vec<MlLabel>> {
        if let Ok(arr) = ys.extract::<PyReadonlyArray2<'_, i64>>() {
            let a = arr.as_array();
            if a.ncols() != self.n_labels() {
                return Err(input(
                    py,
                    format!("Y has {} columns but there are {} labels", a.ncols(), self.n_labels()),
                ));
            }
            return a
                .rows()
                .into_iter()
                .enumerate()
                .map(|(i, r)| {
                    integral_from_values(py, self.n_labels(), r.iter().copied())
                        .map(MlLabel::Integral)
                        .map_err(|e| input(py, format!("row {i}: {}", e.value(py))))
                })
                .collect();
        }
        ys.try_iter()?.map(|y| self.label_from_py(py, &y?)).collect()
    }

    fn labels_to_py(&self, py: Python<'_>, ys: &[MlLabel]) -> PyResult<Py<PyAny>> {
        if ys.iter().all(MlLabel::is_integral) {
            let k = self.n_labels();
            let mut flat = Vec::with_capacity(ys.len() * k);
            for y in ys {
                if let MlLabel::Integral(v) = y {
                    flat.extend(v.iter().map(|&b| i64::from(b)));
                }
            }
            let arr = flat.into_pyarray(py).reshape([ys.len(), k])?;
            return Ok(arr.into_any().unbind());
        }
        let items = ys.iter().map(|y| self.label_to_py(py, y)).collect::<PyResult<Vec<_>>>()?;
        Ok(pyo3::types::PyList::new(py, items)?.into_any().unbind())
    }
}

/// The `multilabel` structure: `edges` is `"full"`, `"chain"` or a sequence of `(i, j)` pairs;
/// `inference` is `"exact"`, `"relaxed"`, `"tree"` or `"auto"`; `relaxed_solver` is `"qpbo"` or `"lp"`.
#[pyfunction]
#[pyo3(signature = (n_labels, n_features, edges, inference="auto", relaxed_solver="qpbo"))]
pub fn multilabel_structure(
    py: Python<'_>,
    n_labels: usize,
    n_features: usize,
    edges: &Bound<'_, PyAny>,
    inference: &str,
    relaxed_solver: &str,
) -> PyResult<NativeStructure> {
    let err = |e: Error| errors::to_py(py, e);
    // sizes first: full_edges and the inference's per-label tables allocate O(K) to O(K²)
    let named = edges.cast::<PyString>().ok().map(|s| s.to_str().map(str::to_owned)).transpose()?;
    let n_edges = match named.as_deref() {
        Some("full") => full_edge_count(n_labels),
        Some("chain") => n_labels.saturating_sub(1),
        _ => edges.len().unwrap_or(0),
    };
    check_sizes(n_labels, n_features, n_edges).map_err(err)?;
    let list = if let Ok(s) = edges.cast::<PyString>() {
        match s.to_str()? {
            "full" => full_edges(n_labels),
            "chain" => chain_edges(n_labels),
            other => {
                return Err(err(Error::param(format!(
                    "edges must be 'full', 'chain', 'tree' or a list of (i, j) pairs, got {other:?}"
                ))))
            }
        }
    } else {
        let pairs: Vec<(i64, i64)> = edges
            .extract()
            .map_err(|_| err(Error::input("edges must be a sequence of (i, j) integer pairs".to_string())))?;
        validate_edges(n_labels, &pairs).map_err(err)?
    };
    let solver = match relaxed_solver {
        "qpbo" => RelaxedSolver::Qpbo,
        "lp" => RelaxedSolver::Lp,
        other => {
            return Err(err(Error::param(format!("relaxed_solver must be 'qpbo' or 'lp', got {other:?}"))))
        }
    };
    let mode = if inference == "auto" {
        Inference::auto(n_labels, &list, solver)
    } else {
        Inference::parse(inference, n_labels, solver).map_err(err)?
    };
    let s = Multilabel::new(n_labels, n_features, list, mode).map_err(err)?;
    Ok(NativeStructure::wrap(AnyStructure::Multilabel(s)))
}

/// The Chow–Liu tree of 0/1 training labels `Y` (n, K): the maximum spanning tree of pairwise
/// mutual information, as (i, j) pairs with i < j.
#[pyfunction]
pub fn multilabel_chow_liu(py: Python<'_>, y: PyReadonlyArray2<'_, i64>) -> PyResult<Vec<(usize, usize)>> {
    let a = y.as_array();
    let (n, k) = (a.nrows(), a.ncols());
    let mut flat = Vec::with_capacity(n * k);
    for (p, &v) in a.iter().enumerate() {
        if v != 0 && v != 1 {
            return Err(input(
                py,
                format!("Y holds {v} at row {}, label {}: labels must be 0 or 1", p / k, p % k),
            ));
        }
        flat.push(v as u8);
    }
    errors::native(py, move || chow_liu_tree(&flat, n, k))
}
