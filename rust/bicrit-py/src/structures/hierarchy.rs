//! Bindings of the `hierarchy` structure: constructor, label conversions (sorted int64 arrays of
//! node ids), and hierarchy-specific helpers — the LP relaxation (tests against scipy's
//! `linprog`, benchmarks against the min-cut), a description of the oracle in use, the batch
//! oracle from precomputed node scores, and NHSVM3's normalized-difference oracle
//! (`hierarchy_ratio_oracle*`, registered by the hierarchy family's bindings).

use bicrit_core::{Error, Objective};
use bicrit_structures::hierarchy::{
    HierLabel, HierLoss, HierarchyGraph, HierarchyOptions, HierarchyStructure, LabelSpace, WeightLayout,
};
use bicrit_structures::Structure;
use numpy::{IntoPyArray, PyArray1};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use super::{AnyStructure, BindStructure, NativeStructure};
use crate::convert::{csr_from_py, terms_from_dict, weights};
use crate::errors;

impl BindStructure for HierarchyStructure {
    fn data_from_py(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Self::Data> {
        csr_from_py(py, x, "X")
    }

    fn one_from_py(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Self::Data> {
        let m = csr_from_py(py, x, "x")?;
        if m.n_rows() != 1 {
            return Err(errors::to_py(
                py,
                Error::input(format!("x must be one instance, got {} rows", m.n_rows())),
            ));
        }
        Ok(m)
    }

    /// Any sequence of node ids; sorted and deduplicated here, validated by `check_label`.
    fn label_from_py(&self, py: Python<'_>, y: &Bound<'_, PyAny>) -> PyResult<HierLabel> {
        let ids: Vec<i64> = y.extract().map_err(|_| {
            errors::to_py(py, Error::input("a hierarchy label is a 1-D sequence of integer node ids"))
        })?;
        let m = self.n_nodes();
        let mut out = Vec::with_capacity(ids.len());
        for v in ids {
            if v < 0 || v as usize >= m {
                return Err(errors::to_py(
                    py,
                    Error::input(format!("label has node {v}, outside the nodes 0..{m}")),
                ));
            }
            out.push(v as u32);
        }
        out.sort_unstable();
        out.dedup();
        Ok(out)
    }

    fn label_to_py(&self, py: Python<'_>, y: &HierLabel) -> PyResult<Py<PyAny>> {
        let v: Vec<i64> = y.iter().map(|&n| i64::from(n)).collect();
        Ok(v.into_pyarray(py).into_any().unbind())
    }
}

fn parse<T>(py: Python<'_>, what: &str, value: &str, options: &[(&str, T)]) -> PyResult<T>
where
    T: Copy,
{
    options.iter().find(|(n, _)| *n == value).map(|(_, t)| *t).ok_or_else(|| {
        let names: Vec<&str> = options.iter().map(|(n, _)| *n).collect();
        errors::to_py(py, Error::param(format!("{what} must be one of {names:?}, got {value:?}")))
    })
}

/// The `hierarchy` structure over the graph `parents` (node → parent ids) rooted at `root`.
#[pyfunction]
#[pyo3(signature = (parents, root, n_features, *, labels="any", multilabel=true, loss="node", node_scale=None, node_loss_weight=None, node_miss_weight=None, layout="node", names=None))]
#[allow(clippy::too_many_arguments)]
pub fn hierarchy_structure(
    py: Python<'_>,
    parents: Vec<Vec<i64>>,
    root: i64,
    n_features: usize,
    labels: &str,
    multilabel: bool,
    loss: &str,
    node_scale: Option<Vec<f64>>,
    node_loss_weight: Option<Vec<f64>>,
    node_miss_weight: Option<Vec<f64>>,
    layout: &str,
    names: Option<Vec<String>>,
) -> PyResult<NativeStructure> {
    let space = parse(py, "labels", labels, &[("any", LabelSpace::Any), ("leaves", LabelSpace::Leaves)])?;
    let loss = parse(
        py,
        "loss",
        loss,
        &[("node", HierLoss::Node), ("leaf", HierLoss::Leaf), ("normalized", HierLoss::Normalized)],
    )?;
    let layout = parse(
        py,
        "layout",
        layout,
        &[("node", WeightLayout::NodeMajor), ("feature", WeightLayout::FeatureMajor)],
    )?;
    let ps = crate::hierarchy::parent_ids(py, &parents, names.as_deref())?;
    if root < 0 || root as usize >= ps.len() {
        let msg = format!("root id {root} outside 0..{}", ps.len() as i64 - 1);
        return Err(errors::to_py(py, Error::input(msg)));
    }
    let s = py
        .detach(|| {
            let g = HierarchyGraph::new(&ps, root as usize, names)?;
            let opts = HierarchyOptions {
                space,
                multilabel,
                loss,
                n_features,
                node_scale,
                node_loss_weight,
                node_miss_weight,
                layout,
            };
            HierarchyStructure::new(g, opts)
        })
        .map_err(|e| errors::to_py(py, e))?;
    Ok(NativeStructure::wrap(AnyStructure::Hierarchy(Box::new(s))))
}

fn hierarchy_of<'a>(py: Python<'_>, s: &'a NativeStructure) -> PyResult<&'a HierarchyStructure> {
    match &*s.inner {
        AnyStructure::Hierarchy(h) => Ok(h),
        #[allow(unreachable_patterns)]
        _ => Err(errors::to_py(py, Error::input("not a hierarchy structure"))),
    }
}

/// Facts about a hierarchy structure: `oracle` (enumeration, tree_dp, min_cut, lp_ip),
/// `is_tree`, `n_nodes`, `root`, `leaves`.
#[pyfunction]
pub fn hierarchy_info<'py>(py: Python<'py>, s: &NativeStructure) -> PyResult<Bound<'py, PyDict>> {
    use bicrit_structures::hierarchy::OracleKind;
    let h = hierarchy_of(py, s)?;
    let d = PyDict::new(py);
    let kind = match h.oracle_kind() {
        OracleKind::Enumeration => "enumeration",
        OracleKind::TreeDp => "tree_dp",
        OracleKind::MinCut => "min_cut",
        OracleKind::LpIp => "lp_ip",
    };
    d.set_item("oracle", kind)?;
    d.set_item("is_tree", h.graph().is_tree())?;
    d.set_item("n_nodes", h.n_nodes())?;
    d.set_item("root", h.graph().root())?;
    let leaves: Vec<i64> = h.graph().leaves().iter().map(|&l| i64::from(l)).collect();
    d.set_item("leaves", leaves.into_pyarray(py))?;
    Ok(d)
}

/// The LP relaxation of the multi-label label space for `margin_coef·m + Σ coef·terms` at one
/// instance: `(value, z)` with `value` = Σ_n z_n·gain_n (gains relative to the empty label:
/// constants of the terms and −score(y_true) omitted) and z per node.
#[pyfunction]
#[pyo3(signature = (s, w, x, y_true, coef=None, margin_coef=1.0))]
pub fn hierarchy_relaxation<'py>(
    py: Python<'py>,
    s: &NativeStructure,
    w: numpy::PyReadonlyArray1<'py, f64>,
    x: &Bound<'py, PyAny>,
    y_true: &Bound<'py, PyAny>,
    coef: Option<Bound<'py, PyDict>>,
    margin_coef: f64,
) -> PyResult<(f64, Bound<'py, PyArray1<f64>>)> {
    let h = hierarchy_of(py, s)?;
    let w = weights(py, &w, h.size_joint_feature())?;
    let data = h.one_from_py(py, x)?;
    let yt = h.label_from_py(py, y_true)?;
    let o = Objective { margin: margin_coef, terms: terms_from_dict(py, coef.as_ref())? };
    let sol = errors::native(py, || h.relaxation(w, &data, 0, &yt, &o))?;
    Ok((sol.value, sol.z.into_pyarray(py)))
}

/// The ancestor closure of `nodes` (root included), as a label.
#[pyfunction]
pub fn hierarchy_closure(py: Python<'_>, s: &NativeStructure, nodes: Vec<i64>) -> PyResult<Py<PyAny>> {
    let h = hierarchy_of(py, s)?;
    let m = h.n_nodes() as i64;
    let mut ids = Vec::with_capacity(nodes.len());
    for v in nodes {
        if v < 0 || v >= m {
            return Err(errors::to_py(py, Error::input(format!("node {v} outside the nodes 0..{m}"))));
        }
        ids.push(v as u32);
    }
    let y = h.closure_of(&ids).map_err(|e| errors::to_py(py, e))?;
    h.label_to_py(py, &y)
}

/// The oracle for many instances from precomputed node scores `scores[i, n]` = s_n·W_n·x_i
/// (e.g. float32 or hashed weights scored by the caller), in parallel with the GIL released.
/// Returns one list of `(label, margin, terms)` per instance, like `batch_oracle`.
#[pyfunction]
#[pyo3(signature = (s, scores, y_true, coef=None, *, margin_coef=1.0, tiebreak=None, k=1, cone=None, n_jobs=None))]
#[allow(clippy::too_many_arguments)]
pub fn hierarchy_batch_oracle_scores<'py>(
    py: Python<'py>,
    s: &NativeStructure,
    scores: numpy::PyReadonlyArray2<'py, f64>,
    y_true: &Bound<'py, PyAny>,
    coef: Option<Bound<'py, PyDict>>,
    margin_coef: f64,
    tiebreak: Option<(f64, Bound<'py, PyDict>)>,
    k: usize,
    cone: Option<(f64, bool, f64, bool)>,
    n_jobs: Option<i64>,
) -> PyResult<Py<PyAny>> {
    use bicrit_structures::TermQuery;
    use pyo3::types::PyList;
    use rayon::prelude::*;
    let h = hierarchy_of(py, s)?;
    let bad = |m: String| errors::to_py(py, Error::input(m));
    let shape = scores.as_array().shape().to_vec();
    if shape[1] != h.n_nodes() {
        return Err(bad(format!("scores have {} columns for {} nodes", shape[1], h.n_nodes())));
    }
    let flat = scores.as_slice().map_err(|_| bad("scores must be a C-contiguous float64 array".into()))?;
    let labels = h.labels_from_py(py, y_true)?;
    if labels.len() != shape[0] {
        return Err(bad(format!("scores have {} rows but Y has {} labels", shape[0], labels.len())));
    }
    if k == 0 {
        return Err(bad("k must be at least 1".into()));
    }
    if !margin_coef.is_finite() {
        return Err(bad(format!("margin_coef is not finite ({margin_coef})")));
    }
    let primary = Objective { margin: margin_coef, terms: terms_from_dict(py, coef.as_ref())? };
    let secondary = match &tiebreak {
        None => None,
        Some((m, d)) => Some(Objective { margin: *m, terms: terms_from_dict(py, Some(d))? }),
    };
    let cone = cone.map(|(lo, lo_closed, hi, hi_closed)| bicrit_core::Cone { lo, lo_closed, hi, hi_closed });
    let m = h.n_nodes();
    let all = errors::native(py, || {
        crate::convert::with_threads(n_jobs, || {
            let q = TermQuery { primary, secondary, ban: &[], k, cone };
            (0..labels.len())
                .into_par_iter()
                .map(|i| {
                    h.oracle_from_scores(&flat[i * m..(i + 1) * m], &labels[i], &q)
                        .map_err(|e| Error::input(format!("instance {i}: {e}")))
                })
                .collect::<bicrit_core::Result<Vec<_>>>()
        })?
    })?;
    let mut out = Vec::with_capacity(all.len());
    for found in &all {
        let items = found
            .iter()
            .map(|a| {
                let t =
                    (h.label_to_py(py, &a.label)?, a.margin, crate::convert::terms_to_dict(py, &a.terms)?);
                Ok(t.into_pyobject(py)?.into_any().unbind())
            })
            .collect::<PyResult<Vec<_>>>()?;
        out.push(PyList::new(py, items)?.into_any().unbind());
    }
    Ok(PyList::new(py, out)?.into_any().unbind())
}

/// `e` with "instance i: " in front of its message, keeping its kind.
fn at_instance(i: usize, e: Error) -> Error {
    let p = |m: String| format!("instance {i}: {m}");
    match e {
        Error::InvalidInput(m) => Error::InvalidInput(p(m)),
        Error::InvalidParameter(m) => Error::InvalidParameter(p(m)),
        Error::Incompatible(m) => Error::Incompatible(p(m)),
        Error::Unsupported(m) => Error::Unsupported(p(m)),
        Error::Solver(m) => Error::Solver(p(m)),
        other => other,
    }
}

/// Labels, values, margins and losses of the NHSVM3 oracle over many instances.
type RatioOut<'py> =
    (Py<PyAny>, Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>, Bound<'py, PyArray1<f64>>);

fn ratio_out<'py>(
    py: Python<'py>,
    h: &HierarchyStructure,
    all: Vec<(bicrit_structures::Scored<HierLabel>, f64)>,
) -> PyResult<RatioOut<'py>> {
    let labels: Vec<HierLabel> = all.iter().map(|(a, _)| a.label.clone()).collect();
    let values: Vec<f64> = all.iter().map(|(_, v)| *v).collect();
    let margins: Vec<f64> = all.iter().map(|(a, _)| a.margin).collect();
    let losses: Vec<f64> = all.iter().map(|(a, _)| a.terms.loss).collect();
    Ok((
        h.labels_to_py(py, &labels)?,
        values.into_pyarray(py),
        margins.into_pyarray(py),
        losses.into_pyarray(py),
    ))
}

/// NHSVM3's oracle (thesis eq. `NHSVM3`) for every instance of `X` under weights `w`: per
/// instance the label maximising m(y)/L(y) + `offset` over y ≠ y_i with L(y) > 0, clipped at 0
/// (the gold label with value 0). Single-path spaces only. Returns `(labels, values, margins,
/// losses)`; the subgradient of instance i is (φ(x_i, ŷ_i) − φ(x_i, y_i)) / losses[i] where
/// values[i] > 0.
#[pyfunction]
#[pyo3(signature = (s, w, x, y_true, *, offset=1.0, n_jobs=None))]
pub fn hierarchy_ratio_oracle<'py>(
    py: Python<'py>,
    s: &NativeStructure,
    w: numpy::PyReadonlyArray1<'py, f64>,
    x: &Bound<'py, PyAny>,
    y_true: &Bound<'py, PyAny>,
    offset: f64,
    n_jobs: Option<i64>,
) -> PyResult<RatioOut<'py>> {
    use rayon::prelude::*;
    let h = hierarchy_of(py, s)?;
    let w = weights(py, &w, h.size_joint_feature())?;
    let data = h.data_from_py(py, x)?;
    let labels = h.labels_from_py(py, y_true)?;
    if labels.len() != data.n_rows() {
        return Err(errors::to_py(
            py,
            Error::input(format!("X has {} rows but Y has {} labels", data.n_rows(), labels.len())),
        ));
    }
    let all = errors::native(py, || {
        crate::convert::with_threads(n_jobs, || {
            (0..labels.len())
                .into_par_iter()
                .map(|i| h.ratio_oracle(w, &data, i, &labels[i], offset).map_err(|e| at_instance(i, e)))
                .collect::<bicrit_core::Result<Vec<_>>>()
        })?
    })?;
    ratio_out(py, h, all)
}

/// [`hierarchy_ratio_oracle`] from precomputed node scores `scores[i, n]` = s_n·W_n·x_i.
#[pyfunction]
#[pyo3(signature = (s, scores, y_true, *, offset=1.0, n_jobs=None))]
pub fn hierarchy_ratio_oracle_scores<'py>(
    py: Python<'py>,
    s: &NativeStructure,
    scores: numpy::PyReadonlyArray2<'py, f64>,
    y_true: &Bound<'py, PyAny>,
    offset: f64,
    n_jobs: Option<i64>,
) -> PyResult<RatioOut<'py>> {
    use rayon::prelude::*;
    let h = hierarchy_of(py, s)?;
    let bad = |m: String| errors::to_py(py, Error::input(m));
    let shape = scores.as_array().shape().to_vec();
    if shape[1] != h.n_nodes() {
        return Err(bad(format!("scores have {} columns for {} nodes", shape[1], h.n_nodes())));
    }
    let flat = scores.as_slice().map_err(|_| bad("scores must be a C-contiguous float64 array".into()))?;
    let labels = h.labels_from_py(py, y_true)?;
    if labels.len() != shape[0] {
        return Err(bad(format!("scores have {} rows but Y has {} labels", shape[0], labels.len())));
    }
    let m = h.n_nodes();
    let all = errors::native(py, || {
        crate::convert::with_threads(n_jobs, || {
            (0..labels.len())
                .into_par_iter()
                .map(|i| {
                    h.ratio_from_scores(&flat[i * m..(i + 1) * m], &labels[i], offset)
                        .map_err(|e| at_instance(i, e))
                })
                .collect::<bicrit_core::Result<Vec<_>>>()
        })?
    })?;
    ratio_out(py, h, all)
}

/// `(with, without)` max-marginals, each (instances × nodes).
type MaxMarginalsOut<'py> = (Bound<'py, numpy::PyArray2<f64>>, Bound<'py, numpy::PyArray2<f64>>);

/// Max-marginals of the label score for many instances from node scores `scores[i, n]` =
/// s_n·W_n·x_i, in parallel with the GIL released: `(with, without)`, each (instances × nodes),
/// the best score of a label of the space containing node n and of one without it (−∞ for the
/// root). Exact in every space (`bicrit_structures::hierarchy::MaxMarginals`).
#[pyfunction]
#[pyo3(signature = (s, scores, *, n_jobs=None))]
pub fn hierarchy_max_marginals<'py>(
    py: Python<'py>,
    s: &NativeStructure,
    scores: numpy::PyReadonlyArray2<'py, f64>,
    n_jobs: Option<i64>,
) -> PyResult<MaxMarginalsOut<'py>> {
    use rayon::prelude::*;
    let h = hierarchy_of(py, s)?;
    let bad = |m: String| errors::to_py(py, Error::input(m));
    let shape = scores.as_array().shape().to_vec();
    let m = h.n_nodes();
    if shape[1] != m {
        return Err(bad(format!("scores have {} columns for {m} nodes", shape[1])));
    }
    let flat = scores.as_slice().map_err(|_| bad("scores must be a C-contiguous float64 array".into()))?;
    let n = shape[0];
    let all = errors::native(py, || {
        crate::convert::with_threads(n_jobs, || {
            (0..n)
                .into_par_iter()
                .map(|i| h.max_marginals(&flat[i * m..(i + 1) * m]).map_err(|e| at_instance(i, e)))
                .collect::<bicrit_core::Result<Vec<_>>>()
        })?
    })?;
    let mut with = Vec::with_capacity(n * m);
    let mut without = Vec::with_capacity(n * m);
    for mm in all {
        with.extend_from_slice(&mm.with);
        without.extend_from_slice(&mm.without);
    }
    let as_2d = |v: Vec<f64>| {
        numpy::ndarray::Array2::from_shape_vec((n, m), v).map_err(|e| bad(format!("max-marginal shape: {e}")))
    };
    Ok((as_2d(with)?.into_pyarray(py), as_2d(without)?.into_pyarray(py)))
}
