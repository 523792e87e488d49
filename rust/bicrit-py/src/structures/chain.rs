//! Bindings of the `chain` structure. Inputs as normalised by `bicrit.structures.chain`:
//! many sequences are `((indptr, indices, data, n_cols), offsets)`, one sequence is a CSR tuple
//! with a row per token; a label is a 1-D int64 array of state ids.

use bicrit_structures::chain::{Chain, ChainData, ChainLoss, TagScheme};
use numpy::{IntoPyArray, PyReadonlyArray1, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyTuple;

use super::{AnyStructure, BindStructure, NativeStructure};
use crate::convert::csr_from_py;
use crate::errors;

fn input_error(py: Python<'_>, msg: String) -> PyErr {
    errors::to_py(py, bicrit_core::Error::input(msg))
}

impl BindStructure for Chain {
    fn data_from_py(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<ChainData> {
        let t = x.cast::<PyTuple>().map_err(|_| {
            PyValueError::new_err("X: expected (csr_tuple, offsets) for a dataset of sequences")
        })?;
        if t.len() != 2 {
            return Err(PyValueError::new_err(format!(
                "X: expected (csr_tuple, offsets), got a tuple of {} items",
                t.len()
            )));
        }
        let m = csr_from_py(py, &t.get_item(0)?, "X")?;
        let offsets: PyReadonlyArray1<'_, i64> = t.get_item(1)?.extract()?;
        let offsets = offsets.as_array().to_vec();
        ChainData::new(m, &offsets).map_err(|e| errors::to_py(py, e))
    }

    fn one_from_py(&self, py: Python<'_>, x: &Bound<'_, PyAny>) -> PyResult<ChainData> {
        let m = csr_from_py(py, x, "x")?;
        ChainData::single(m).map_err(|e| errors::to_py(py, e))
    }

    fn label_from_py(&self, py: Python<'_>, y: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
        let arr: PyReadonlyArray1<'_, i64> = y
            .extract()
            .map_err(|_| input_error(py, "a chain label is a 1-D int64 array of state ids".to_string()))?;
        if arr.len() == 0 {
            return Err(input_error(py, "a chain label is empty; a sequence has at least one token".into()));
        }
        let s = self.n_states();
        arr.as_array()
            .iter()
            .enumerate()
            .map(|(t, &v)| {
                if v < 0 || v as usize >= s {
                    Err(input_error(
                        py,
                        format!("label has state {v} at position {t}, outside the states 0..{s}"),
                    ))
                } else {
                    Ok(v as usize)
                }
            })
            .collect()
    }

    fn label_to_py(&self, py: Python<'_>, y: &Vec<usize>) -> PyResult<Py<PyAny>> {
        let v: Vec<i64> = y.iter().map(|&s| s as i64).collect();
        Ok(v.into_pyarray(py).into_any().unbind())
    }
}

/// The `chain` structure: `n_states` tags over `n_features` token features (see
/// `bicrit.structures.chain.Chain`).
#[pyfunction]
#[pyo3(signature = (n_states, n_features, outside=None, loss="hamming", tag_names=None, scheme="iob2"))]
pub fn chain_structure(
    py: Python<'_>,
    n_states: usize,
    n_features: usize,
    outside: Option<Vec<usize>>,
    loss: &str,
    tag_names: Option<Vec<String>>,
    scheme: &str,
) -> PyResult<NativeStructure> {
    let made = (|| {
        let loss = ChainLoss::from_name(loss)?;
        let scheme = TagScheme::from_name(scheme)?;
        match tag_names {
            Some(names) => {
                if names.len() != n_states {
                    return Err(bicrit_core::Error::param(format!(
                        "tag_names has {} names but n_states = {n_states}",
                        names.len()
                    )));
                }
                Chain::with_tags(n_features, &names, scheme, outside.as_deref(), loss)
            }
            None => Chain::new(n_states, n_features, outside.as_deref().unwrap_or(&[0]), loss),
        }
    })();
    let s = made.map_err(|e| errors::to_py(py, e))?;
    Ok(NativeStructure::wrap(AnyStructure::Chain(s)))
}
