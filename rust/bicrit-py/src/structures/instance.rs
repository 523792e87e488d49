//! One instance of a native structure as a λ-oracle for `bicrit.search`: the search then runs
//! natively over the structure's own oracle (issue "searches": the same searches run without
//! Python when a native structure supplies the oracle). Python-written structures go through the
//! same path via their adapter.

use std::any::Any;
use std::sync::Arc;

use bicrit_searches::{Outcome, SearchSpec, WarmStart};
use bicrit_structures::{Structure, StructureOracle};
use bicrit_surrogates::Surrogate;
use numpy::PyReadonlyArray1;
use pyo3::prelude::*;

use super::{checked_one, AnyStructure, BindStructure, NativeStructure};
use crate::convert::weights;
use crate::dispatch;
use crate::errors;

/// Instance data of some structure `S`: `(S::Data, S::Label)`, type-erased.
type Erased = Box<dyn Any + Send + Sync>;

/// Instance `x` with gold label `y_true` under weights `w`, for `bicrit.search`.
#[pyclass(name = "InstanceOracle", module = "bicrit._native", frozen)]
pub struct InstanceOracle {
    structure: Arc<AnyStructure>,
    w: Vec<f64>,
    instance: Erased,
}

impl InstanceOracle {
    fn parts<S: Structure + 'static>(&self) -> (&S::Data, &S::Label) {
        let (d, y) =
            self.instance.downcast_ref::<(S::Data, S::Label)>().expect("instance built for this structure");
        (d, y)
    }
}

/// A warm start carried between `bicrit.search` calls on instance oracles (type-erased labels).
pub struct ErasedWarm(pub Erased);

#[pymethods]
impl InstanceOracle {
    /// Capabilities of the structure's oracle.
    #[getter]
    fn capabilities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
        NativeStructure { inner: self.structure.clone() }.capabilities(py)
    }

    fn __repr__(&self) -> String {
        dispatch!(&*self.structure, s => format!("<InstanceOracle of {}>", s.name()))
    }
}

impl NativeStructure {
    /// Builds the instance oracle (validated inputs, copied weights).
    pub fn make_instance_oracle(
        &self,
        py: Python<'_>,
        w: PyReadonlyArray1<'_, f64>,
        x: &Bound<'_, PyAny>,
        y_true: &Bound<'_, PyAny>,
    ) -> PyResult<InstanceOracle> {
        dispatch!(&*self.inner, s => {
            let w = weights(py, &w, s.size_joint_feature())?.to_vec();
            let (data, y) = checked_one(py, s, x, Some(y_true))?;
            let instance: Erased = Box::new((data, y.expect("label given")));
            Ok(InstanceOracle { structure: self.inner.clone(), w, instance })
        })
    }
}

/// What one `bicrit.search` call asks of an instance oracle.
pub struct SearchCall<'a> {
    /// The search.
    pub spec: &'a SearchSpec,
    /// The surrogate.
    pub psi: &'a dyn Surrogate,
    /// Whether the surrogate is native (then the GIL is released during the search).
    pub native_psi: bool,
    /// The previous result's warm start on this instance.
    pub warm: Option<&'a ErasedWarm>,
    /// Slack ξ_i (Sarawagi–Gupta).
    pub xi: Option<f64>,
}

/// An outcome whose labels were converted to Python, and the warm start for the next call.
pub type InstanceOutcome = (Outcome<()>, Vec<Py<PyAny>>, ErasedWarm);

fn run_on<S: BindStructure + 'static>(
    py: Python<'_>,
    s: &S,
    o: &InstanceOracle,
    call: &SearchCall<'_>,
) -> PyResult<InstanceOutcome> {
    let (data, y) = o.parts::<S>();
    let warm = match call.warm {
        None => None,
        Some(ErasedWarm(b)) => Some(b.downcast_ref::<WarmStart<S::Label>>().ok_or_else(|| {
            errors::to_py(
                py,
                bicrit_core::Error::input("warm start comes from a result on another kind of oracle"),
            )
        })?),
    };
    let run = || -> bicrit_core::Result<Outcome<S::Label>> {
        let gold_terms = s.terms(y, y)?;
        let mut oracle = StructureOracle::new(s, &o.w, data, 0, y, call.psi.factor_map(&gold_terms));
        call.spec.run(&mut oracle, call.psi, warm, call.xi)
    };
    let out = if call.native_psi { errors::native(py, run)? } else { errors::with_gil(py, run)? };
    let labels = out.answer.iter().map(|i| s.label_to_py(py, &i.label)).collect::<PyResult<Vec<_>>>()?;
    let next = ErasedWarm(Box::new(out.warm.clone().resolve(warm).map_err(|e| errors::to_py(py, e))?));
    Ok((erase(out), labels, next))
}

/// Runs one search over an instance oracle.
pub fn run_instance(py: Python<'_>, o: &InstanceOracle, call: &SearchCall<'_>) -> PyResult<InstanceOutcome> {
    dispatch!(&*o.structure, s => run_on(py, s, o, call))
}

/// The outcome without its labels (they were converted separately).
fn erase<L>(out: Outcome<L>) -> Outcome<()> {
    Outcome {
        value: out.value,
        answer: out
            .answer
            .into_iter()
            .map(|i| bicrit_searches::Item { label: (), h: i.h, g: i.g, weight: i.weight })
            .collect(),
        calls: out.calls,
        upper_bound: out.upper_bound,
        lambda: out.lambda,
        is_gold: out.is_gold,
        warm: bicrit_searches::WarmPlan { labels: Vec::new(), lambda: out.warm.lambda },
        trace: out.trace,
    }
}
