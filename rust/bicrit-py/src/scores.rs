//! Bindings of the score-level structures (`bicrit_structures::scores`): `scores_loss` and
//! `scores_decode` take a kind, a dict of float64 score arrays, a dict of options and (for the
//! loss) the gold labels, and return dicts of numpy arrays. The batch runs with the GIL released
//! and rayon over the examples when the surrogate is a built-in; a surrogate written in Python runs
//! example by example under the GIL. Shapes are checked here (and, with friendlier messages, in
//! `bicrit.scores`).

use bicrit_core::{Error, Result};
use bicrit_structures::chain::{ChainLoss, TagScheme, Tags};
use bicrit_structures::multilabel::{Inference, MlLabel, RelaxedSolver};
use bicrit_structures::scores::chain::ScoreChain;
use bicrit_structures::scores::hierarchy::ScoreHierarchy;
use bicrit_structures::scores::multiclass::ScoreMulticlass;
use bicrit_structures::scores::multilabel::ScoreMultilabel;
use bicrit_structures::scores::tree::ScoreTree;
use bicrit_structures::scores::{
    decode_batch, kbest_batch, loss_batch_warm, loss_gradient, InstanceLoss, Method, ScoreStructure,
};
use bicrit_structures::DepLabel;
use numpy::{IntoPyArray, PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn, PyUntypedArrayMethods};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::errors::{self, to_py};
use crate::py_surrogate::SurrogateRef;
use crate::searches::PySearchSpec;
use crate::structures::{AnyStructure, NativeStructure};
use crate::warm_cache::PyWarmCache;

/// A float64 array from the dict, with its shape.
struct Arr {
    shape: Vec<usize>,
    data: Vec<f64>,
}

fn get_f64(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<Arr>> {
    let Some(v) = d.get_item(key)? else { return Ok(None) };
    if v.is_none() {
        return Ok(None);
    }
    let a: PyReadonlyArrayDyn<'_, f64> = v
        .extract()
        .map_err(|_| to_py(d.py(), Error::input(format!("'{key}' must be a float64 numpy array"))))?;
    let shape = a.shape().to_vec();
    let data = match a.as_slice() {
        Ok(s) => s.to_vec(),
        Err(_) => a.as_array().iter().copied().collect(),
    };
    Ok(Some(Arr { shape, data }))
}

fn need_f64(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Arr> {
    get_f64(d, key)?.ok_or_else(|| to_py(d.py(), Error::input(format!("missing score array '{key}'"))))
}

fn get_i64(d: &Bound<'_, PyDict>, key: &str) -> PyResult<Option<(Vec<usize>, Vec<i64>)>> {
    let Some(v) = d.get_item(key)? else { return Ok(None) };
    if v.is_none() {
        return Ok(None);
    }
    let a: PyReadonlyArrayDyn<'_, i64> = v
        .extract()
        .map_err(|_| to_py(d.py(), Error::input(format!("'{key}' must be an int64 numpy array"))))?;
    let shape = a.shape().to_vec();
    Ok(Some((shape, a.as_array().iter().copied().collect())))
}

fn need_i64(d: &Bound<'_, PyDict>, key: &str) -> PyResult<(Vec<usize>, Vec<i64>)> {
    get_i64(d, key)?.ok_or_else(|| to_py(d.py(), Error::input(format!("missing integer array '{key}'"))))
}

fn opt<'py, T: FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str, default: T) -> PyResult<T> {
    match d.get_item(key)? {
        Some(v) if !v.is_none() => v.extract::<T>().map_err(|_| {
            to_py(d.py(), Error::param(format!("option '{key}' has the wrong type ({})", v.get_type())))
        }),
        _ => Ok(default),
    }
}

fn shape_err(what: &str, want: &str, got: &[usize]) -> Error {
    Error::input(format!("{what} must have shape {want}, got {got:?}"))
}

fn lengths_of(d: &Bound<'_, PyDict>, batch: usize, t_max: usize) -> PyResult<Vec<usize>> {
    match get_i64(d, "lengths")? {
        None => Ok(vec![t_max; batch]),
        Some((shape, v)) => {
            if shape != [batch] {
                return Err(to_py(d.py(), shape_err("lengths", &format!("[{batch}]"), &shape)));
            }
            v.iter()
                .enumerate()
                .map(|(b, &l)| {
                    if l < 1 || l as usize > t_max {
                        Err(to_py(
                            d.py(),
                            Error::input(format!(
                                "lengths[{b}] = {l} must be between 1 and the padded length {t_max}"
                            )),
                        ))
                    } else {
                        Ok(l as usize)
                    }
                })
                .collect()
        }
    }
}

/// A built score-level structure with its scores `w`.
enum Built {
    Chain(ScoreChain),
    Tree(ScoreTree),
    Multilabel(ScoreMultilabel),
    Multiclass(ScoreMulticlass),
    Hierarchy(Box<ScoreHierarchy>),
}

fn build(
    py: Python<'_>,
    kind: &str,
    a: &Bound<'_, PyDict>,
    o: &Bound<'_, PyDict>,
) -> PyResult<(Built, Vec<f64>)> {
    let e = |err: Error| to_py(py, err);
    match kind {
        "chain" => {
            let u = need_f64(a, "unary")?;
            let [b, t, s] = u.shape[..] else { return Err(e(shape_err("unary", "[B, T, S]", &u.shape))) };
            let tr = need_f64(a, "transitions")?;
            let per_step = match tr.shape[..] {
                [p, c] if p == s && c == s => false,
                [bb, tt, p, c] if bb == b && tt + 1 == t.max(1) && p == s && c == s => true,
                _ => {
                    return Err(e(shape_err(
                        "transitions",
                        &format!("[{s}, {s}] or [{b}, {}, {s}, {s}]", t.saturating_sub(1)),
                        &tr.shape,
                    )))
                }
            };
            let start = get_f64(a, "start")?;
            let end = get_f64(a, "end")?;
            for (name, x) in [("start", &start), ("end", &end)] {
                if let Some(x) = x {
                    if x.shape != [s] {
                        return Err(e(shape_err(name, &format!("[{s}]"), &x.shape)));
                    }
                }
            }
            let lengths = lengths_of(o, b, t)?;
            let loss = ChainLoss::from_name(&opt::<String>(o, "task_loss", "hamming".into())?).map_err(e)?;
            let names: Option<Vec<String>> = opt(o, "tag_names", None)?;
            let tags = match names {
                Some(n) => {
                    if n.len() != s {
                        return Err(e(Error::param(format!("{} tag names for S = {s} tags", n.len()))));
                    }
                    let scheme =
                        TagScheme::from_name(&opt::<String>(o, "scheme", "iob2".into())?).map_err(e)?;
                    Tags::from_names(&n, scheme).map_err(e)?
                }
                None => Tags::from_outside(s, &opt::<Vec<usize>>(o, "outside", Vec::new())?).map_err(e)?,
            };
            let st = ScoreChain::new(tags, t, lengths, per_step, start.is_some(), end.is_some(), loss)
                .map_err(e)?;
            let mut w = u.data;
            w.extend_from_slice(&tr.data);
            for x in [start, end].into_iter().flatten() {
                w.extend_from_slice(&x.data);
            }
            Ok((Built::Chain(st), w))
        }
        "tree" => {
            let arcs = need_f64(a, "arcs")?;
            let [b, n1, n2] = arcs.shape[..] else {
                return Err(e(shape_err("arcs", "[B, N + 1, N + 1]", &arcs.shape)));
            };
            if n1 != n2 || n1 < 2 {
                return Err(e(shape_err("arcs", "[B, N + 1, N + 1] with N ≥ 1", &arcs.shape)));
            }
            let labels = get_f64(a, "labels")?;
            let nr = match &labels {
                None => 0,
                Some(l) => match l.shape[..] {
                    [bb, x, y, r] if bb == b && x == n1 && y == n1 && r >= 1 => r,
                    _ => return Err(e(shape_err("labels", &format!("[{b}, {n1}, {n1}, R]"), &l.shape))),
                },
            };
            let lengths = lengths_of(o, b, n1 - 1)?;
            let st = ScoreTree::new(
                n1 - 1,
                lengths,
                nr,
                opt(o, "projective", false)?,
                opt(o, "multi_root", false)?,
                opt(o, "label_weight", 1.0)?,
            )
            .map_err(e)?;
            let mut w = arcs.data;
            if let Some(l) = labels {
                w.extend_from_slice(&l.data);
            }
            Ok((Built::Tree(st), w))
        }
        "multilabel" => {
            let u = need_f64(a, "unary")?;
            let [b, l] = u.shape[..] else { return Err(e(shape_err("unary", "[B, L]", &u.shape))) };
            let (es, ev) = need_i64(o, "edges")?;
            let ne = match es[..] {
                [ne, 2] => ne,
                [0] => 0,
                _ => return Err(e(shape_err("edges", "[E, 2]", &es))),
            };
            let edges: Vec<(i64, i64)> = (0..ne).map(|k| (ev[2 * k], ev[2 * k + 1])).collect();
            let p = get_f64(a, "pairwise")?;
            let (per_example, pdata) = match &p {
                None if ne == 0 => (false, Vec::new()),
                None => return Err(e(Error::input("edges given without 'pairwise' scores"))),
                Some(p) => match p.shape[..] {
                    [x, 2, 2] if x == ne => (false, p.data.clone()),
                    [bb, x, 2, 2] if bb == b && x == ne => (true, p.data.clone()),
                    _ => {
                        return Err(e(shape_err(
                            "pairwise",
                            &format!("[{ne}, 2, 2] or [{b}, {ne}, 2, 2]"),
                            &p.shape,
                        )))
                    }
                },
            };
            let solver = match opt::<String>(o, "solver", "qpbo".into())?.as_str() {
                "qpbo" => RelaxedSolver::Qpbo,
                "lp" => RelaxedSolver::Lp,
                other => {
                    return Err(e(Error::param(format!("solver must be 'qpbo' or 'lp', got {other:?}"))))
                }
            };
            let inference =
                Inference::parse(&opt::<String>(o, "inference", "auto".into())?, l, solver).map_err(e)?;
            let st = ScoreMultilabel::new(b, l, &edges, per_example, inference).map_err(e)?;
            let mut w = u.data;
            w.extend_from_slice(&pdata);
            Ok((Built::Multilabel(st), w))
        }
        "multiclass" => {
            let s = need_f64(a, "scores")?;
            let [b, k] = s.shape[..] else { return Err(e(shape_err("scores", "[B, K]", &s.shape))) };
            Ok((Built::Multiclass(ScoreMulticlass::new(b, k).map_err(e)?), s.data))
        }
        "hierarchy" => {
            let s = need_f64(a, "scores")?;
            let [b, m] = s.shape[..] else { return Err(e(shape_err("scores", "[B, M]", &s.shape))) };
            let st = o.get_item("structure")?.ok_or_else(|| e(Error::param("missing option 'structure'")))?;
            let st = st.cast::<NativeStructure>().map_err(|_| {
                e(Error::param(
                    "option 'structure' must be a hierarchy structure (bicrit.structure('hierarchy', ...))",
                ))
            })?;
            let h = match &*st.get().inner {
                AnyStructure::Hierarchy(h) => (**h).clone(),
                #[allow(unreachable_patterns)]
                _ => return Err(e(Error::param("option 'structure' must be a hierarchy structure"))),
            };
            if h.n_nodes() != m {
                return Err(e(Error::input(format!(
                    "scores have {m} columns but the hierarchy has {} nodes",
                    h.n_nodes()
                ))));
            }
            Ok((Built::Hierarchy(Box::new(ScoreHierarchy::new(b, h))), s.data))
        }
        other => Err(e(Error::param(format!(
            "unknown score kind {other:?}; known kinds: chain, tree, multilabel, multiclass, hierarchy"
        )))),
    }
}

/// Converts gold labels and packs answers for one kind.
trait Kind: ScoreStructure {
    fn gold(&self, py: Python<'_>, g: &Bound<'_, PyDict>) -> PyResult<Vec<Self::Label>>;
    /// Packs `labels[b][j]` (j < width; missing entries repeat entry 0) into arrays of `out`.
    fn pack(
        &self,
        py: Python<'_>,
        labels: &[Vec<&Self::Label>],
        width: usize,
        out: &Bound<'_, PyDict>,
    ) -> PyResult<()>;
    /// Bytes of a label's data (the warm-start cache's budget).
    fn label_bytes(y: &Self::Label) -> usize;
}

fn arr<'py>(py: Python<'py>, data: Vec<f64>, shape: &[usize]) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
    data.into_pyarray(py).reshape(shape.to_vec())
}

fn arr_i<'py>(py: Python<'py>, data: Vec<i64>, shape: &[usize]) -> PyResult<Bound<'py, PyArrayDyn<i64>>> {
    data.into_pyarray(py).reshape(shape.to_vec())
}

fn pick<'a, L>(row: &[&'a L], j: usize) -> &'a L {
    row.get(j).copied().unwrap_or(row[0])
}

fn int_rows(
    py: Python<'_>,
    key: &str,
    shape: &[usize],
    v: &[i64],
    lens: &[usize],
) -> PyResult<Vec<Vec<usize>>> {
    let t = shape[1];
    lens.iter()
        .enumerate()
        .map(|(b, &n)| {
            (0..n)
                .map(|j| {
                    let x = v[b * t + j];
                    if x < 0 {
                        Err(to_py(
                            py,
                            Error::input(format!("{key}[{b}, {j}] = {x} is negative (inside length {n})")),
                        ))
                    } else {
                        Ok(x as usize)
                    }
                })
                .collect()
        })
        .collect()
}

impl Kind for ScoreChain {
    fn label_bytes(y: &Self::Label) -> usize {
        y.len() * 8
    }

    fn gold(&self, py: Python<'_>, g: &Bound<'_, PyDict>) -> PyResult<Vec<Vec<usize>>> {
        let (shape, v) = need_i64(g, "tags")?;
        if shape != [self.batch(), self.t_max()] {
            return Err(to_py(
                py,
                shape_err("gold tags", &format!("[{}, {}]", self.batch(), self.t_max()), &shape),
            ));
        }
        let lens: Vec<usize> = (0..self.batch()).map(|b| self.len_of(b)).collect();
        int_rows(py, "gold", &shape, &v, &lens)
    }

    fn pack(
        &self,
        py: Python<'_>,
        labels: &[Vec<&Vec<usize>>],
        width: usize,
        out: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        let t = self.t_max();
        let mut v = vec![0i64; labels.len() * width * t];
        for (b, row) in labels.iter().enumerate() {
            for j in 0..width {
                for (p, &s) in pick(row, j).iter().enumerate() {
                    v[(b * width + j) * t + p] = s as i64;
                }
            }
        }
        out.set_item("tags", arr_i(py, v, &[labels.len(), width, t])?)
    }
}

impl Kind for ScoreTree {
    fn label_bytes(y: &Self::Label) -> usize {
        (y.heads.len() + y.rels.len()) * 4
    }

    fn gold(&self, py: Python<'_>, g: &Bound<'_, PyDict>) -> PyResult<Vec<DepLabel>> {
        let (shape, heads) = need_i64(g, "heads")?;
        let lens: Vec<usize> = (0..self.batch()).map(|b| self.len_of(b)).collect();
        if shape.len() != 2 || shape[0] != self.batch() || shape[1] != self.n_max() {
            return Err(to_py(
                py,
                shape_err("gold heads", &format!("[{}, {}]", self.batch(), self.n_max()), &shape),
            ));
        }
        let h = int_rows(py, "heads", &shape, &heads, &lens)?;
        let r = match get_i64(g, "rels")? {
            None if self.n_relations() > 0 => {
                return Err(to_py(py, Error::input("labeled trees need gold 'rels' (relation ids)")))
            }
            None => vec![Vec::new(); h.len()],
            Some((rs, rv)) => {
                if self.n_relations() == 0 {
                    return Err(to_py(py, Error::input("gold 'rels' given but no label scores")));
                }
                if rs != shape {
                    return Err(to_py(py, shape_err("gold rels", &format!("{shape:?}"), &rs)));
                }
                int_rows(py, "rels", &rs, &rv, &lens)?
            }
        };
        Ok(h.into_iter()
            .zip(r)
            .map(|(h, r)| DepLabel {
                heads: h.into_iter().map(|x| x as u32).collect(),
                rels: r.into_iter().map(|x| x as u32).collect(),
            })
            .collect())
    }

    fn pack(
        &self,
        py: Python<'_>,
        labels: &[Vec<&DepLabel>],
        width: usize,
        out: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        let n = self.n_max();
        let mut hv = vec![0i64; labels.len() * width * n];
        let mut rv = vec![0i64; labels.len() * width * n];
        for (b, row) in labels.iter().enumerate() {
            for j in 0..width {
                let y = pick(row, j);
                for (p, &h) in y.heads.iter().enumerate() {
                    hv[(b * width + j) * n + p] = h as i64;
                }
                for (p, &r) in y.rels.iter().enumerate() {
                    rv[(b * width + j) * n + p] = r as i64;
                }
            }
        }
        out.set_item("heads", arr_i(py, hv, &[labels.len(), width, n])?)?;
        if self.n_relations() > 0 {
            out.set_item("rels", arr_i(py, rv, &[labels.len(), width, n])?)?;
        }
        Ok(())
    }
}

impl Kind for ScoreMultilabel {
    fn label_bytes(y: &Self::Label) -> usize {
        match y {
            MlLabel::Integral(v) => v.len(),
            MlLabel::Relaxed { nodes, edges } => nodes.len() * 8 + edges.len() * 32,
        }
    }

    fn gold(&self, py: Python<'_>, g: &Bound<'_, PyDict>) -> PyResult<Vec<MlLabel>> {
        let (shape, v) = need_i64(g, "labels")?;
        let l = self.n_labels();
        if shape != [self.batch(), l] {
            return Err(to_py(py, shape_err("gold labels", &format!("[{}, {l}]", self.batch()), &shape)));
        }
        (0..self.batch())
            .map(|b| {
                (0..l)
                    .map(|k| match v[b * l + k] {
                        0 => Ok(0u8),
                        1 => Ok(1u8),
                        x => {
                            Err(to_py(py, Error::input(format!("gold labels[{b}, {k}] = {x} is not 0 or 1"))))
                        }
                    })
                    .collect::<PyResult<Vec<u8>>>()
                    .map(MlLabel::Integral)
            })
            .collect()
    }

    fn pack(
        &self,
        py: Python<'_>,
        labels: &[Vec<&MlLabel>],
        width: usize,
        out: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        let (l, ne) = (self.n_labels(), self.edges().len());
        let mut nv = vec![0.0; labels.len() * width * l];
        let mut ev = vec![0.0; labels.len() * width * ne * 4];
        for (b, row) in labels.iter().enumerate() {
            for j in 0..width {
                let (nodes, edges) = self.marginals(pick(row, j));
                let at = b * width + j;
                nv[at * l..(at + 1) * l].copy_from_slice(&nodes);
                for (e, m) in edges.iter().enumerate() {
                    ev[(at * ne + e) * 4..(at * ne + e + 1) * 4].copy_from_slice(m);
                }
            }
        }
        out.set_item("nodes", arr(py, nv, &[labels.len(), width, l])?)?;
        out.set_item("edges", arr(py, ev, &[labels.len(), width, ne, 4])?)
    }
}

impl Kind for ScoreMulticlass {
    fn label_bytes(y: &Self::Label) -> usize {
        let _ = y;
        8
    }

    fn gold(&self, py: Python<'_>, g: &Bound<'_, PyDict>) -> PyResult<Vec<usize>> {
        let (shape, v) = need_i64(g, "labels")?;
        if shape != [self.batch()] {
            return Err(to_py(py, shape_err("gold labels", &format!("[{}]", self.batch()), &shape)));
        }
        v.iter()
            .enumerate()
            .map(|(b, &x)| {
                if x < 0 {
                    Err(to_py(py, Error::input(format!("gold labels[{b}] = {x} is negative"))))
                } else {
                    Ok(x as usize)
                }
            })
            .collect()
    }

    fn pack(
        &self,
        py: Python<'_>,
        labels: &[Vec<&usize>],
        width: usize,
        out: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        let mut v = vec![0i64; labels.len() * width];
        for (b, row) in labels.iter().enumerate() {
            for j in 0..width {
                v[b * width + j] = *pick(row, j) as i64;
            }
        }
        out.set_item("labels", arr_i(py, v, &[labels.len(), width])?)
    }
}

impl Kind for ScoreHierarchy {
    fn label_bytes(y: &Self::Label) -> usize {
        y.len() * 4
    }

    fn gold(&self, py: Python<'_>, g: &Bound<'_, PyDict>) -> PyResult<Vec<Vec<u32>>> {
        let (shape, v) = need_i64(g, "nodes")?;
        let m = self.n_nodes();
        if shape != [self.batch(), m] {
            return Err(to_py(
                py,
                shape_err("gold node indicators", &format!("[{}, {m}]", self.batch()), &shape),
            ));
        }
        (0..self.batch())
            .map(|b| {
                let mut y = Vec::new();
                for k in 0..m {
                    match v[b * m + k] {
                        0 => {}
                        1 => y.push(k as u32),
                        x => {
                            return Err(to_py(
                                py,
                                Error::input(format!("gold nodes[{b}, {k}] = {x} is not 0 or 1")),
                            ))
                        }
                    }
                }
                Ok(y)
            })
            .collect()
    }

    fn pack(
        &self,
        py: Python<'_>,
        labels: &[Vec<&Vec<u32>>],
        width: usize,
        out: &Bound<'_, PyDict>,
    ) -> PyResult<()> {
        let m = self.n_nodes();
        let mut v = vec![0.0; labels.len() * width * m];
        for (b, row) in labels.iter().enumerate() {
            for j in 0..width {
                for &n in pick(row, j).iter() {
                    v[(b * width + j) * m + n as usize] = 1.0;
                }
            }
        }
        out.set_item("nodes", arr(py, v, &[labels.len(), width, m])?)
    }
}

fn method_of(
    py: Python<'_>,
    s: &impl ScoreStructure,
    psi: &dyn bicrit_surrogates::Surrogate,
    search: Option<&Bound<'_, PySearchSpec>>,
) -> PyResult<Method> {
    match search {
        Some(spec) => Ok(Method::Search(spec.get().inner.clone())),
        None => Method::auto_for(s, psi).map_err(|e| to_py(py, e)),
    }
}

#[allow(clippy::too_many_arguments)]
fn loss_of<'py, S: Kind>(
    py: Python<'py>,
    s: &S,
    w: Vec<f64>,
    gold: &Bound<'py, PyDict>,
    surrogate: &Bound<'py, PyAny>,
    search: Option<&Bound<'py, PySearchSpec>>,
    gradient: bool,
    cache: Option<(&PyWarmCache, &str, Vec<i64>)>,
) -> PyResult<Bound<'py, PyDict>>
where
    S::Label: 'static,
{
    let gold = s.gold(py, gold)?;
    let psi = SurrogateRef::from_py(surrogate)?;
    let method = method_of(py, s, psi.get(), search)?;
    // the one-call loss-augmented method has nothing to warm-start
    let cache = cache.filter(|_| method != Method::LossAugmented);
    let warm = match &cache {
        Some((c, kind, ids)) => c.get::<S::Label>(kind, ids).map_err(|e| to_py(py, e))?,
        None => Vec::new(),
    };
    let found = match &psi {
        SurrogateRef::Builtin(b) => {
            let p = b.get().inner.as_ref();
            errors::native(py, || loss_batch_warm(s, &w, &gold, p, &method, true, &warm))?
        }
        SurrogateRef::Python(p) => {
            errors::with_gil(py, || loss_batch_warm(s, &w, &gold, p, &method, false, &warm))?
        }
    };
    let (out, next): (Vec<InstanceLoss<S::Label>>, Vec<_>) = found.into_iter().unzip();
    if let Some((c, kind, ids)) = &cache {
        c.put(kind, ids, next, S::label_bytes);
    }
    let b = out.len();
    let d = PyDict::new(py);
    let mut weights = vec![0.0; b * 2];
    let mut points = vec![0.0; b * 4];
    let mut labels: Vec<Vec<&S::Label>> = Vec::with_capacity(b);
    for (i, o) in out.iter().enumerate() {
        if o.answer.len() > 2 || o.answer.is_empty() {
            return Err(to_py(py, Error::solver(format!("internal: {} answer labels", o.answer.len()))));
        }
        for (j, it) in o.answer.iter().enumerate() {
            weights[i * 2 + j] = it.weight;
            points[(i * 2 + j) * 2] = it.h;
            points[(i * 2 + j) * 2 + 1] = it.g;
        }
        labels.push(o.answer.iter().map(|it| &it.label).collect());
    }
    d.set_item("loss", arr(py, out.iter().map(|o| o.value).collect(), &[b])?)?;
    d.set_item("coef", arr(py, out.iter().map(|o| o.coef).collect(), &[b])?)?;
    d.set_item("weights", arr(py, weights, &[b, 2])?)?;
    d.set_item("points", arr(py, points, &[b, 2, 2])?)?;
    d.set_item("is_gold", out.iter().map(|o| o.is_gold).collect::<Vec<bool>>())?;
    d.set_item("calls", arr_i(py, out.iter().map(|o| o.calls as i64).collect(), &[b])?)?;
    d.set_item(
        "upper_bound",
        arr(py, out.iter().map(|o| o.upper_bound.unwrap_or(f64::NAN)).collect(), &[b])?,
    )?;
    d.set_item("method", method.name())?;
    if gradient {
        let grad = errors::native(py, || loss_gradient(s, &gold, &out))?;
        d.set_item("grad", grad.into_pyarray(py))?;
    }
    s.pack(py, &labels, 2, &d)?;
    Ok(d)
}

/// The structured loss of every example: `kind` in chain, tree, multilabel, multiclass,
/// hierarchy; `arrays` the float64 score arrays by name; `gold` the gold labels by name;
/// `options` the kind's options; `search` a `SearchSpec` or None for the automatic choice;
/// `gradient`: also the gradient of the summed loss w.r.t. the scores, flat in their order;
/// `cache` a `WarmCache` and `ids` [B] int64 example ids: warm starts across batches.
#[pyfunction]
#[pyo3(signature = (kind, arrays, gold, options, surrogate, search=None, gradient=false, cache=None, ids=None))]
#[allow(clippy::too_many_arguments)]
pub fn scores_loss<'py>(
    py: Python<'py>,
    kind: &str,
    arrays: &Bound<'py, PyDict>,
    gold: &Bound<'py, PyDict>,
    options: &Bound<'py, PyDict>,
    surrogate: &Bound<'py, PyAny>,
    search: Option<&Bound<'py, PySearchSpec>>,
    gradient: bool,
    cache: Option<&Bound<'py, PyWarmCache>>,
    ids: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyDict>> {
    let (built, w) = build(py, kind, arrays, options)?;
    let g = gradient;
    let ids = match (cache, ids) {
        (None, None) => None,
        (Some(c), Some(ids)) => {
            let a: PyReadonlyArrayDyn<'_, i64> =
                ids.extract().map_err(|_| to_py(py, Error::input("'ids' must be an int64 numpy array")))?;
            let b = match &built {
                Built::Chain(s) => s.batch(),
                Built::Tree(s) => s.batch(),
                Built::Multilabel(s) => s.batch(),
                Built::Multiclass(s) => s.batch(),
                Built::Hierarchy(s) => s.batch(),
            };
            if a.shape() != [b] {
                return Err(to_py(py, shape_err("ids", &format!("[{b}]"), a.shape())));
            }
            Some((c.get(), kind, a.as_array().iter().copied().collect()))
        }
        (Some(_), None) => return Err(to_py(py, Error::input("a warm-start cache needs the examples' ids"))),
        (None, Some(_)) => return Err(to_py(py, Error::input("ids given without a warm-start cache"))),
    };
    match &built {
        Built::Chain(s) => loss_of(py, s, w, gold, surrogate, search, g, ids),
        Built::Tree(s) => loss_of(py, s, w, gold, surrogate, search, g, ids),
        Built::Multilabel(s) => loss_of(py, s, w, gold, surrogate, search, g, ids),
        Built::Multiclass(s) => loss_of(py, s, w, gold, surrogate, search, g, ids),
        Built::Hierarchy(s) => loss_of(py, s.as_ref(), w, gold, surrogate, search, g, ids),
    }
}

fn decode_of<'py, S: Kind>(
    py: Python<'py>,
    s: &S,
    w: Vec<f64>,
    k: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    match k {
        None => {
            let found: Vec<S::Label> = errors::native(py, || decode_batch(s, &w))?;
            let scores = found
                .iter()
                .enumerate()
                .map(|(i, y)| s.score(&w, &(), i, y))
                .collect::<Result<Vec<f64>>>()
                .map_err(|e| to_py(py, e))?;
            let refs: Vec<Vec<&S::Label>> = found.iter().map(|y| vec![y]).collect();
            s.pack(py, &refs, 1, &d)?;
            d.set_item("scores", arr(py, scores, &[found.len(), 1])?)?;
            d.set_item("count", arr_i(py, vec![1; found.len()], &[found.len()])?)?;
        }
        Some(k) => {
            let found = errors::native(py, || kbest_batch(s, &w, k))?;
            let b = found.len();
            let mut scores = vec![f64::NEG_INFINITY; b * k];
            for (i, row) in found.iter().enumerate() {
                for (j, (_, v)) in row.iter().enumerate() {
                    scores[i * k + j] = *v;
                }
            }
            let refs: Vec<Vec<&S::Label>> =
                found.iter().map(|row| row.iter().map(|(y, _)| y).collect()).collect();
            s.pack(py, &refs, k, &d)?;
            d.set_item("scores", arr(py, scores, &[b, k])?)?;
            d.set_item("count", arr_i(py, found.iter().map(|r| r.len() as i64).collect(), &[b])?)?;
        }
    }
    Ok(d)
}

/// The best label (`k` None) or the `k` best labels of every example, with their scores.
#[pyfunction]
#[pyo3(signature = (kind, arrays, options, k=None))]
pub fn scores_decode<'py>(
    py: Python<'py>,
    kind: &str,
    arrays: &Bound<'py, PyDict>,
    options: &Bound<'py, PyDict>,
    k: Option<usize>,
) -> PyResult<Bound<'py, PyDict>> {
    let (built, w) = build(py, kind, arrays, options)?;
    match &built {
        Built::Chain(s) => decode_of(py, s, w, k),
        Built::Tree(s) => decode_of(py, s, w, k),
        Built::Multilabel(s) => decode_of(py, s, w, k),
        Built::Multiclass(s) => decode_of(py, s, w, k),
        Built::Hierarchy(s) => decode_of(py, s.as_ref(), w, k),
    }
}

/// Adds the score-level functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(scores_loss, m)?)?;
    m.add_function(wrap_pyfunction!(scores_decode, m)?)?;
    m.add_class::<PyWarmCache>()?;
    Ok(())
}
