//! `bicrit._native`: the thin pyo3 layer over the Rust core. Each family has its own module that
//! only converts arguments, releases the GIL around native work ([`errors::native`]) and maps
//! errors ([`errors::to_py`]); no algorithm lives here.

mod catalog;
mod convert;
mod errors;
mod hierarchy;
mod learners;
mod nhsvm3;
mod partition;
mod pooled;
mod py_oracle;
mod py_surrogate;
mod scores;
mod searches;
mod structures;
mod surrogates;
mod warm_cache;

use pyo3::prelude::*;

/// Raises a Rust panic inside native code; used by the tests to prove that panics surface as
/// `bicrit.errors.NativePanic`, never as a crash. With `n_jobs` > 1 the panic happens where an
/// epoch runs (`pooled::run`): in the last item of a parallel pass on the learners' pool.
#[pyfunction]
#[pyo3(signature = (message, n_jobs=1))]
fn _panic_for_tests(py: Python<'_>, message: String, n_jobs: i64) -> PyResult<()> {
    let pool = bicrit_learners::Context::pool(n_jobs).map_err(|e| errors::to_py(py, e))?;
    pooled::run(py, pool.as_ref(), move |ctx| {
        ctx.map(&[0, 1, 2, 3], |i| if i == 3 { panic!("{message}") } else { Ok(i) }).map(drop)
    })
}

/// Returns an error of the given kind from native code (tests of the error mapping).
#[pyfunction]
fn _error_for_tests(py: Python<'_>, kind: String, message: String) -> PyResult<()> {
    use bicrit_core::Error;
    errors::native(py, move || -> bicrit_core::Result<()> {
        Err(match kind.as_str() {
            "input" => Error::input(message),
            "param" => Error::param(message),
            "incompatible" => Error::incompatible(message),
            "unsupported" => Error::unsupported(message),
            _ => Error::solver(message),
        })
    })
}

/// Number of threads of rayon's global pool (what `n_jobs=-1` means).
#[pyfunction]
fn default_threads() -> usize {
    rayon::current_num_threads()
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(_panic_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(_error_for_tests, m)?)?;
    m.add_function(wrap_pyfunction!(default_threads, m)?)?;
    // structures
    m.add_class::<structures::NativeStructure>()?;
    m.add_function(wrap_pyfunction!(structures::multiclass::multiclass_structure, m)?)?;
    m.add_function(wrap_pyfunction!(structures::python::python_structure, m)?)?;
    m.add_function(wrap_pyfunction!(structures::chain::chain_structure, m)?)?;
    m.add_function(wrap_pyfunction!(structures::hierarchy::hierarchy_structure, m)?)?;
    m.add_function(wrap_pyfunction!(structures::hierarchy::hierarchy_info, m)?)?;
    m.add_function(wrap_pyfunction!(structures::hierarchy::hierarchy_relaxation, m)?)?;
    m.add_function(wrap_pyfunction!(structures::hierarchy::hierarchy_closure, m)?)?;
    m.add_function(wrap_pyfunction!(structures::hierarchy::hierarchy_batch_oracle_scores, m)?)?;
    m.add_function(wrap_pyfunction!(structures::hierarchy::hierarchy_max_marginals, m)?)?;
    m.add_function(wrap_pyfunction!(structures::dependency::dependency_structure, m)?)?;
    m.add_function(wrap_pyfunction!(structures::multilabel::multilabel_structure, m)?)?;
    m.add_function(wrap_pyfunction!(structures::multilabel::multilabel_chow_liu, m)?)?;
    m.add_function(wrap_pyfunction!(structures::multilabel::multilabel_label_counts, m)?)?;
    surrogates::register(m)?;
    hierarchy::register(m)?;
    searches::register(m)?;
    learners::register(m)?;
    partition::register(m)?;
    catalog::register(m)?;
    scores::register(m)?;
    Ok(())
}
