//! Bindings of the catalog: what every built-in piece is and what it combines with, read from
//! the native crates (their `catalog` modules, the searches' requirements, the surrogates'
//! properties and the learners' compatibility check). The Python registry, `bicrit plugins`,
//! error messages and the documentation's tables are built from `catalog()`: nothing about
//! which pieces combine is written in Python.

use bicrit_core::{Capabilities, Terms};
use bicrit_learners::{check_compatible, Kind};
use bicrit_searches::SearchSpec;
use bicrit_surrogates::Surrogate;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

use crate::errors::to_py;
use crate::py_surrogate::SurrogateRef;

fn kinds() -> Vec<Kind> {
    bicrit_learners::NAMES.iter().filter_map(|n| Kind::from_name(n).ok()).collect()
}

fn spec(name: &str) -> SearchSpec {
    SearchSpec::from_name(name).expect("the catalog names built-in searches")
}

/// The searches `psi` can run with some learner, and the learners it can train with.
fn combinations(psi: &dyn Surrogate) -> (Vec<&'static str>, Vec<&'static str>) {
    let all = Capabilities::all();
    let searches = bicrit_searches::NAMES
        .iter()
        .copied()
        .filter(|s| kinds().into_iter().any(|k| check_compatible(k, psi, &spec(s), all).is_ok()))
        .collect();
    let learners = kinds()
        .into_iter()
        .filter(|&k| bicrit_searches::NAMES.iter().any(|s| check_compatible(k, psi, &spec(s), all).is_ok()))
        .map(Kind::name)
        .collect();
    (searches, learners)
}

/// Capabilities of a surrogate (built-in or a Python object), as the registry shows them.
fn surrogate_caps<'py>(py: Python<'py>, psi: &dyn Surrogate) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("affine_in_h", psi.affine_in_h())?;
    d.set_item("convex_in_h", psi.convex_in_h())?;
    d.set_item("product_form", psi.product_shift().is_some())?;
    d.set_item("g_by_loss", psi.factor_map(&Terms::default()).g_by_loss())?;
    let (searches, learners) = combinations(psi);
    d.set_item("searches", searches)?;
    d.set_item("learners", learners)?;
    Ok(d)
}

fn entry<'py>(
    py: Python<'py>,
    name: &str,
    description: &str,
    caps: Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("name", name)?;
    d.set_item("description", description)?;
    d.set_item("capabilities", caps)?;
    Ok(d)
}

fn surrogates<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for info in bicrit_surrogates::catalog::INFO {
        let psi = bicrit_surrogates::by_name(info.name, info.example).map_err(|e| to_py(py, e))?;
        let caps = surrogate_caps(py, psi.as_ref())?;
        if !info.product_form_when.is_empty() {
            caps.set_item("product_form", info.product_form_when)?;
        }
        let params = PyDict::new(py);
        for (k, domain) in info.params {
            params.set_item(*k, *domain)?;
        }
        caps.set_item("params", params)?;
        out.append(entry(py, info.name, info.formula, caps)?)?;
    }
    Ok(out)
}

fn oracle_needs(r: &bicrit_searches::Requirements) -> Vec<&'static str> {
    let mut needs = Vec::new();
    if !r.frontier {
        needs.push("lambda");
    }
    for (flag, what) in [(r.cone, "cone"), (r.ban, "ban"), (r.kbest, "kbest"), (r.frontier, "frontier")] {
        if flag {
            needs.push(what);
        }
    }
    needs
}

fn surrogate_needs(r: &bicrit_searches::Requirements) -> &'static str {
    if r.unit_shift {
        "product form with shift 1: ψ = (h + 1)·g (slack)"
    } else if r.product_form {
        "product form ψ = (h + s)·g"
    } else if r.frontier {
        "any non-decreasing in h whose g is the task loss (not microf1)"
    } else {
        "any quasi-concave increasing"
    }
}

fn searches<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for info in bicrit_searches::catalog::INFO {
        let s = spec(info.name);
        let r = s.requirements();
        let caps = PyDict::new(py);
        caps.set_item("oracle", oracle_needs(&r))?;
        caps.set_item("surrogates", surrogate_needs(&r))?;
        caps.set_item("needs_xi", r.xi)?;
        caps.set_item("guarantee", info.guarantee)?;
        caps.set_item("target", info.target)?;
        let learners: Vec<&str> = kinds()
            .into_iter()
            .filter(|&k| !r.xi || bicrit_learners::catalog::provides_xi(k))
            .map(Kind::name)
            .collect();
        caps.set_item("learners", learners)?;
        let options: Vec<&str> = s.option_names().to_vec();
        caps.set_item("options", options)?;
        out.append(entry(py, info.name, info.description, caps)?)?;
    }
    Ok(out)
}

fn learners<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for kind in kinds() {
        let info = bicrit_learners::catalog::info(kind);
        let caps = PyDict::new(py);
        caps.set_item("needs_affine_in_h", kind.needs_affine())?;
        caps.set_item(
            "surrogates",
            if kind.needs_affine() { "affine in h (a maximum of functions affine in w)" } else { "every" },
        )?;
        caps.set_item("provides_xi", bicrit_learners::catalog::provides_xi(kind))?;
        caps.set_item("slack_norms", bicrit_learners::catalog::slack_norms(kind).to_vec())?;
        let params: Vec<&str> = bicrit_learners::params::docs(kind).into_iter().map(|d| d.name).collect();
        caps.set_item("params", params)?;
        out.append(entry(py, info.name, info.description, caps)?)?;
    }
    Ok(out)
}

fn structures<'py>(py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty(py);
    for info in bicrit_structures::catalog::INFO {
        let c = info.capabilities;
        let caps = PyDict::new(py);
        for (k, v) in [
            ("ban", c.ban),
            ("kbest", c.kbest),
            ("cone", c.cone),
            ("relaxed", c.relaxed),
            ("frontier", c.frontier),
        ] {
            caps.set_item(k, v)?;
        }
        let e = entry(py, info.name, info.description, caps)?;
        e.set_item("note", info.note)?;
        e.set_item("frontier_one_pass", info.frontier_one_pass)?;
        out.append(e)?;
    }
    Ok(out)
}

/// Every built-in piece by kind (`structure`, `surrogate`, `search`, `learner`): a list of
/// `{"name", "description", "capabilities"}` dicts.
#[pyfunction]
fn catalog(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("structure", structures(py)?)?;
    d.set_item("surrogate", surrogates(py)?)?;
    d.set_item("search", searches(py)?)?;
    d.set_item("learner", learners(py)?)?;
    Ok(d)
}

/// The capabilities of any surrogate object (a plugin's, or a stand-in with its class's
/// declarations), computed as for the built-ins.
#[pyfunction]
fn surrogate_capabilities<'py>(
    py: Python<'py>,
    surrogate: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let psi = SurrogateRef::from_py(surrogate)?;
    surrogate_caps(py, psi.get())
}

/// The search `search="auto"` runs for `surrogate` on the structure registered as `structure`
/// whose oracle answers `capabilities` (a mapping of flags; missing ones are false);
/// `integral` asks for the exact maximum over the integral labels
/// ([`bicrit_structures::catalog::auto_search`], the one place the choice is made).
#[pyfunction]
#[pyo3(signature = (structure, surrogate, capabilities, integral=false))]
fn auto_search(
    structure: &str,
    surrogate: &Bound<'_, PyAny>,
    capabilities: &Bound<'_, PyAny>,
    integral: bool,
) -> PyResult<&'static str> {
    let flag = |k: &str| -> PyResult<bool> {
        match capabilities.get_item(k) {
            Ok(v) => v.is_truthy(),
            Err(e) if e.is_instance_of::<pyo3::exceptions::PyKeyError>(capabilities.py()) => Ok(false),
            Err(e) => Err(e),
        }
    };
    let caps = Capabilities {
        ban: flag("ban")?,
        kbest: flag("kbest")?,
        cone: flag("cone")?,
        relaxed: flag("relaxed")?,
        frontier: flag("frontier")?,
    };
    let psi = SurrogateRef::from_py(surrogate)?;
    Ok(bicrit_structures::catalog::auto_search(structure, psi.get(), caps, integral))
}

/// Adds the catalog functions to the module.
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(catalog, m)?)?;
    m.add_function(wrap_pyfunction!(surrogate_capabilities, m)?)?;
    m.add_function(wrap_pyfunction!(auto_search, m)?)?;
    Ok(())
}
