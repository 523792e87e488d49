//! Bindings of the `dependency` structure. The Python wrapper (`bicrit/structures/dependency.py`)
//! normalises sentences to `(lengths, words, lemmas, upos, xpos)` — an int64 array of sentence
//! lengths and four flat lists of str — and labels to int64 arrays: `(heads, rels)` when labeled,
//! `heads` when unlabeled. Strings are hashed into atoms here, once (`corpus.rs`).

use bicrit_core::Error;
use bicrit_structures::dependency::corpus::{atom, atom_lower};
use bicrit_structures::dependency::Sentences;
use bicrit_structures::{DepLabel, Dependency};
use numpy::{IntoPyArray, PyReadonlyArray1};
use pyo3::prelude::*;
use pyo3::types::{PyList, PyString, PyTuple};

use super::{AnyStructure, BindStructure, NativeStructure};
use crate::errors;

fn bad(py: Python<'_>, msg: String) -> PyErr {
    errors::to_py(py, Error::input(msg))
}

fn sentences_from_py(py: Python<'_>, x: &Bound<'_, PyAny>, what: &str) -> PyResult<Sentences> {
    let t = x.cast::<PyTuple>().map_err(|_| {
        bad(py, format!("{what}: expected the normalised tuple (lengths, words, lemmas, upos, xpos)"))
    })?;
    if t.len() != 5 {
        return Err(bad(py, format!("{what}: the sentence tuple must have 5 items, got {}", t.len())));
    }
    let lengths: PyReadonlyArray1<'_, i64> = t.get_item(0)?.extract()?;
    let lengths = lengths.as_array();
    let names = ["words", "lemmas", "upos", "xpos"];
    let mut lists = Vec::with_capacity(4);
    for (f, name) in names.iter().enumerate() {
        let item = t.get_item(f + 1)?;
        let list = item
            .cast_into::<PyList>()
            .map_err(|_| bad(py, format!("{what}: {name} must be a list of str")))?;
        lists.push(list);
    }
    let total: i64 = lengths.iter().sum();
    for (list, name) in lists.iter().zip(names) {
        if list.len() as i64 != total {
            return Err(bad(
                py,
                format!("{what}: {name} has {} tokens, the lengths sum to {total}", list.len()),
            ));
        }
    }
    let mut out = Sentences::new();
    let mut pos = 0usize;
    for (i, &len) in lengths.iter().enumerate() {
        if len <= 0 {
            return Err(bad(py, format!("{what}: sentence {i} is empty")));
        }
        for j in 0..len as usize {
            let mut atoms = [0u64; 4];
            for (f, list) in lists.iter().enumerate() {
                let item = list.get_item(pos)?;
                let s = item.cast::<PyString>().map_err(|_| {
                    bad(py, format!("{what}: sentence {i}, token {}: {} is not a str", j + 1, names[f]))
                })?;
                let s = s.to_str()?;
                atoms[f] = if f == 0 { atom_lower(s) } else { atom(s) };
            }
            out.push_token(atoms[0], atoms[1], atoms[2], atoms[3]);
            pos += 1;
        }
        out.end_sentence().map_err(|e| errors::to_py(py, e))?;
    }
    Ok(out)
}

fn ids_from_py(py: Python<'_>, obj: &Bound<'_, PyAny>, name: &str) -> PyResult<Vec<u32>> {
    let arr: PyReadonlyArray1<'_, i64> =
        obj.extract().map_err(|_| bad(py, format!("{name} must be a 1-D int64 array")))?;
    arr.as_array()
        .iter()
        .enumerate()
        .map(|(j, &v)| {
            if v < 0 || v > u32::MAX as i64 {
                Err(bad(py, format!("{name}[{j}] = {v} is negative or too large")))
            } else {
                Ok(v as u32)
            }
        })
        .collect()
}

impl BindStructure for Dependency {
    fn data_from_py(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Sentences> {
        sentences_from_py(py, x, "X")
    }

    fn one_from_py(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<Sentences> {
        let s = sentences_from_py(py, x, "x")?;
        if s.len() != 1 {
            return Err(bad(py, format!("x must be one sentence, got {}", s.len())));
        }
        Ok(s)
    }

    fn label_from_py(&self, py: Python<'_>, y: &Bound<'_, PyAny>) -> PyResult<DepLabel> {
        if self.labeled() {
            let t = y
                .cast::<PyTuple>()
                .map_err(|_| bad(py, "a labeled dependency label is a tuple (heads, rels)".into()))?;
            if t.len() != 2 {
                return Err(bad(
                    py,
                    format!("a labeled dependency label is (heads, rels), got {} items", t.len()),
                ));
            }
            Ok(DepLabel {
                heads: ids_from_py(py, &t.get_item(0)?, "heads")?,
                rels: ids_from_py(py, &t.get_item(1)?, "rels")?,
            })
        } else {
            Ok(DepLabel::unlabeled(ids_from_py(py, y, "heads")?))
        }
    }

    fn label_to_py(&self, py: Python<'_>, y: &DepLabel) -> PyResult<Py<PyAny>> {
        let heads: Vec<i64> = y.heads.iter().map(|&h| h as i64).collect();
        let heads = heads.into_pyarray(py).into_any();
        if self.labeled() {
            let rels: Vec<i64> = y.rels.iter().map(|&r| r as i64).collect();
            let rels = rels.into_pyarray(py).into_any();
            Ok(PyTuple::new(py, [heads, rels])?.into_any().unbind())
        } else {
            Ok(heads.unbind())
        }
    }
}

/// The `dependency` structure (see `bicrit.structures.dependency`).
#[pyfunction]
#[pyo3(signature = (n_features, projective, labeled, n_relations, label_weight))]
pub fn dependency_structure(
    py: Python<'_>,
    n_features: usize,
    projective: bool,
    labeled: bool,
    n_relations: usize,
    label_weight: f64,
) -> PyResult<NativeStructure> {
    let s = Dependency::new(n_features, projective, labeled, n_relations, label_weight)
        .map_err(|e| errors::to_py(py, e))?;
    Ok(NativeStructure::wrap(AnyStructure::Dependency(s)))
}
