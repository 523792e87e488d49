//! Searches: loss-augmented inference `max_y ψ(h(y), g(y))` using only a λ-oracle
//! (thesis chapters `cha:inference` and `cha:inference2`; docs/architecture.md "Searches").
//!
//! The family trait is [`Search`]; each search lives in its own module and [`SearchSpec`] builds
//! one from its registry name and options, checks it against a surrogate and an oracle's
//! [`Capabilities`] (docs/architecture.md "Which pieces combine") and runs one inference:
//!
//! ```
//! use bicrit_searches::{PointSetOracle, SearchSpec};
//! use bicrit_surrogates::SlackRescaling;
//! // Labels as points (h, g) = (m, L); the gold label is (0, 0).
//! let mut oracle = PointSetOracle::new(vec![0.0, -0.5, 0.2], vec![0.0, 3.0, 1.0], None).unwrap();
//! let spec = SearchSpec::from_name("convex-hull").unwrap();
//! let out = spec.run(&mut oracle, &SlackRescaling, None, None).unwrap();
//! assert!(out.value >= 1.5 - 1e-12); // (1 − 0.5)·3 at the label 1, or better on an edge
//! ```
//!
//! | search | module | oracle | ψ | guarantee |
//! |---|---|---|---|---|
//! | `sarawagi` | [`sarawagi`] | λ | product form, needs ξ_i | approximate |
//! | `binary` | [`binary`] | λ | product form | approximate |
//! | `bisecting` | [`bisecting`] | λ | product form | approximate |
//! | `angular` | [`angular`] | cone | product form, shift 1 | exact, ≤ 2M + 3 calls |
//! | `convex-hull` | [`convex_hull`] | λ | any quasi-concave increasing | exact over the hull |
//! | `convex-hull-ban` / `-kbest` | [`integral`] | ban / k-best | any | exact integral |
//! | `frontier` | [`frontier`] | frontier by loss value | any non-decreasing in h | exact integral, 1 call |

pub mod angular;
pub mod binary;
pub mod bisecting;
pub mod catalog;
pub mod convex_hull;
pub mod frontier;
pub mod geometry;
pub mod integral;
mod planes;
pub mod point_set;
pub mod sarawagi;
pub mod session;

pub use angular::Angular;
pub use binary::Binary;
pub use bisecting::Bisecting;
pub use convex_hull::ConvexHull;
pub use frontier::Frontier;
pub use integral::Integral;
pub use point_set::PointSetOracle;
pub use sarawagi::Sarawagi;
pub use session::{Candidate, Session, Slot};

use bicrit_core::{Capabilities, Cone, Error, Lambda, LambdaOracle, Result};
use bicrit_surrogates::Surrogate;

/// Oracle calls of one inference, by kind. Each query counts once, under the first kind that
/// applies: `cone`, `kbest` (k > 1), `ban` (non-empty ban list), `extreme` (λ = 0 or ∞), `lambda`;
/// a frontier query (best h for every loss value) counts as `frontier`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Calls {
    /// Plain λ-oracle calls with a finite λ > 0.
    pub lambda: usize,
    /// Lexicographic calls λ = 0 or λ = ∞.
    pub extreme: usize,
    /// Constrained λ-oracle calls.
    pub cone: usize,
    /// Calls with a ban list.
    pub ban: usize,
    /// k-best calls.
    pub kbest: usize,
    /// Frontier-by-loss-value calls.
    pub frontier: usize,
    /// Labels re-evaluated for a warm start (not oracle calls; not in [`Calls::total`]).
    pub evaluated: usize,
}

impl Calls {
    /// All oracle calls.
    pub fn total(&self) -> usize {
        self.lambda + self.extreme + self.cone + self.ban + self.kbest + self.frontier
    }

    pub(crate) fn record(&mut self, lambda: Lambda, nban: usize, k: usize, cone: bool) {
        if cone {
            self.cone += 1;
        } else if k > 1 {
            self.kbest += 1;
        } else if nban > 0 {
            self.ban += 1;
        } else if matches!(lambda, Lambda::Zero | Lambda::Infinity) {
            self.extreme += 1;
        } else {
            self.lambda += 1;
        }
    }

    /// (name, count) pairs including `total`, for reports and the Python dict.
    pub fn by_kind(&self) -> [(&'static str, usize); 8] {
        [
            ("lambda", self.lambda),
            ("extreme", self.extreme),
            ("cone", self.cone),
            ("ban", self.ban),
            ("kbest", self.kbest),
            ("frontier", self.frontier),
            ("evaluated", self.evaluated),
            ("total", self.total()),
        ]
    }
}

/// One query of a search with its answers' coordinates (for plots).
#[derive(Clone, Debug, PartialEq)]
pub struct QueryRecord {
    /// λ (0 and +∞ for the lexicographic queries).
    pub lambda: f64,
    /// The cone of a constrained query.
    pub cone: Option<Cone>,
    /// k.
    pub k: usize,
    /// Length of the ban list.
    pub banned: usize,
    /// (h, g) of the answers.
    pub answers: Vec<(f64, f64)>,
    /// A frontier query (λ is NaN then; `answers` holds the frontier points).
    pub frontier: bool,
}

/// One label of an answer with its coordinates and weight.
#[derive(Clone, Debug, PartialEq)]
pub struct Item<L> {
    /// The label.
    pub label: L,
    /// h(y).
    pub h: f64,
    /// g(y).
    pub g: f64,
    /// Weight in the answer (1 for an integral answer; the two weights of a point on a hull
    /// edge sum to 1).
    pub weight: f64,
}

/// What a search needs to warm-start the next inference of the same instance (next epoch): the
/// labels of the previous hull chain / label cache, re-evaluated through
/// [`LambdaOracle::evaluate`], and the last λ (used alone when the oracle cannot evaluate).
#[derive(Clone, Debug, PartialEq)]
pub struct WarmStart<L> {
    /// Cached labels.
    pub labels: Vec<L>,
    /// The last finite λ > 0 queried.
    pub lambda: Option<f64>,
}

impl<L> Default for WarmStart<L> {
    fn default() -> Self {
        WarmStart { labels: Vec::new(), lambda: None }
    }
}

/// A label of the warm start a search leaves ([`WarmPlan`]).
#[derive(Clone, Debug, PartialEq)]
pub enum WarmLabel<L> {
    /// The j-th label of the warm start the search was given.
    Previous(usize),
    /// A label the search found.
    New(L),
}

/// The warm start a search leaves for the next inference of the instance, relative to the one it
/// was given: the labels of that one by index, so that a label cache is kept without copying its
/// labels ([`WarmPlan::resolve`] gives the plain [`WarmStart`]).
#[derive(Clone, Debug, PartialEq)]
pub struct WarmPlan<L> {
    /// The labels, in order.
    pub labels: Vec<WarmLabel<L>>,
    /// The last finite λ > 0 queried.
    pub lambda: Option<f64>,
}

impl<L> Default for WarmPlan<L> {
    fn default() -> Self {
        WarmPlan { labels: Vec::new(), lambda: None }
    }
}

impl<L: Clone> WarmPlan<L> {
    /// The plain warm start, `previous` being the warm start given to the search (its labels are
    /// copied). Fails when the plan refers to a label `previous` does not have.
    pub fn resolve(self, previous: Option<&WarmStart<L>>) -> Result<WarmStart<L>> {
        let prev: &[L] = previous.map_or(&[], |w| &w.labels);
        let labels = self
            .labels
            .into_iter()
            .map(|l| match l {
                WarmLabel::New(l) => Ok(l),
                WarmLabel::Previous(j) => prev.get(j).cloned().ok_or_else(|| out_of_range(j, prev.len())),
            })
            .collect::<Result<Vec<L>>>()?;
        Ok(WarmStart { labels, lambda: self.lambda })
    }
}

impl<L: PartialEq> WarmPlan<L> {
    /// The plan followed by the labels of `previous` that it does not hold (by value), at most
    /// `cache_size` labels in all: a label cache that keeps the labels of earlier inferences
    /// (what a learner stores). Reads `previous` only.
    pub fn merged(mut self, previous: Option<&WarmStart<L>>, cache_size: usize) -> Result<WarmPlan<L>> {
        let prev: &[L] = previous.map_or(&[], |w| &w.labels);
        for l in &self.labels {
            if let WarmLabel::Previous(j) = l {
                if *j >= prev.len() {
                    return Err(out_of_range(*j, prev.len()));
                }
            }
        }
        self.labels.reserve(prev.len().min(cache_size.saturating_sub(self.labels.len())));
        for (k, old) in prev.iter().enumerate() {
            if self.labels.len() >= cache_size {
                break;
            }
            let held = self.labels.iter().any(|l| match l {
                WarmLabel::Previous(j) => *j == k || prev[*j] == *old,
                WarmLabel::New(l) => l == old,
            });
            if !held {
                self.labels.push(WarmLabel::Previous(k));
            }
        }
        self.labels.truncate(cache_size);
        Ok(self)
    }
}

fn out_of_range(j: usize, n: usize) -> Error {
    Error::input(format!("a warm-start plan refers to label {j} of a warm start with {n} labels"))
}

/// The result of one inference.
#[derive(Clone, Debug)]
pub struct Outcome<L> {
    /// Φ at the answer (at the fractional point for a hull-edge answer).
    pub value: f64,
    /// One item for an integral answer, two for a fractional point on a hull edge.
    pub answer: Vec<Item<L>>,
    /// Oracle calls by kind.
    pub calls: Calls,
    /// A certified upper bound on the optimum over the label set the method targets (integral
    /// labels, or their convex hull for the relaxed search), where the method gives one.
    pub upper_bound: Option<f64>,
    /// The last λ queried.
    pub lambda: Option<Lambda>,
    /// Whether the answer is the gold label (nothing beat it: zero loss).
    pub is_gold: bool,
    /// What the next inference of this instance can warm-start from, relative to the warm start
    /// given ([`WarmPlan::resolve`]).
    pub warm: WarmPlan<L>,
    /// The queries made, in order.
    pub trace: Vec<QueryRecord>,
}

/// What a search returns to [`SearchSpec::run`], which adds the calls, trace and warm start.
#[derive(Clone, Debug)]
pub struct Found<L> {
    /// Φ at the answer.
    pub value: f64,
    /// The answer's labels with weights (empty: no label at all, not even a gold one).
    pub answer: Vec<Item<L>>,
    /// Certified upper bound, if any.
    pub upper_bound: Option<f64>,
    /// Whether the answer is the gold label.
    pub is_gold: bool,
}

impl<L: Clone> Found<L> {
    /// The integral answer at the best candidate of the session (gold preferred on ties).
    pub fn best_of<O: LambdaOracle<Label = L>>(s: &Session<'_, O>, upper_bound: Option<f64>) -> Self {
        Self::at(s, s.best(), upper_bound)
    }

    /// The integral answer at candidate `i` of the session (none: no label, value −∞); the
    /// upper bound is raised to the answer's value.
    pub fn at<O: LambdaOracle<Label = L>>(
        s: &Session<'_, O>,
        i: Option<usize>,
        upper_bound: Option<f64>,
    ) -> Self {
        match i {
            None => Found { value: f64::NEG_INFINITY, answer: Vec::new(), upper_bound, is_gold: false },
            Some(i) => {
                let c = &s.known[i];
                Found {
                    value: c.phi,
                    answer: vec![Item { label: s.label(i).clone(), h: c.h, g: c.g, weight: 1.0 }],
                    upper_bound: upper_bound.map(|u| u.max(c.phi)),
                    is_gold: c.gold,
                }
            }
        }
    }
}

/// What a search needs from the surrogate and the oracle (docs/architecture.md, "Which pieces combine").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Requirements {
    /// ψ = (h + s)·g (slack rescaling): [`Surrogate::product_shift`] is `Some`.
    pub product_form: bool,
    /// The shift is exactly 1, so that cones in (h + 1, g) coordinates are the search's own.
    pub unit_shift: bool,
    /// The constrained λ-oracle.
    pub cone: bool,
    /// Ban lists.
    pub ban: bool,
    /// k-best.
    pub kbest: bool,
    /// The instance's slack ξ_i (n-slack cutting plane).
    pub xi: bool,
    /// The frontier by loss value ([`LambdaOracle::frontier`]).
    pub frontier: bool,
}

/// A search family member: its requirements and one inference.
pub trait Search {
    /// Registry name.
    fn name(&self) -> &'static str;
    /// What it needs.
    fn requirements(&self) -> Requirements;
    /// Runs one inference in `session` (the session already holds the gold label).
    fn search<'a, O: LambdaOracle>(
        &self,
        session: &mut Session<'a, O>,
        warm: Option<&'a WarmStart<O::Label>>,
        xi: Option<f64>,
    ) -> Result<Found<O::Label>>;
    /// The call budget.
    fn max_calls(&self) -> usize;
}

/// A search chosen by name and options: what learners store and call per instance.
#[derive(Clone, Debug, PartialEq)]
pub enum SearchSpec {
    /// Sarawagi–Gupta.
    Sarawagi(Sarawagi),
    /// Binary search on F̄(λ).
    Binary(Binary),
    /// Bisecting search.
    Bisecting(Bisecting),
    /// Angular search.
    Angular(Angular),
    /// Convex hull search, with optional integral recovery.
    ConvexHull(ConvexHull),
    /// Frontier search (exact, one frontier call).
    Frontier(Frontier),
}

/// Registry names of the built-in searches.
pub const NAMES: [&str; 8] = [
    "sarawagi",
    "binary",
    "bisecting",
    "angular",
    "convex-hull",
    "convex-hull-ban",
    "convex-hull-kbest",
    "frontier",
];

impl SearchSpec {
    /// The search registered as `name`, with default options.
    pub fn from_name(name: &str) -> Result<Self> {
        Ok(match name {
            "sarawagi" => SearchSpec::Sarawagi(Sarawagi::default()),
            "binary" => SearchSpec::Binary(Binary::default()),
            "bisecting" => SearchSpec::Bisecting(Bisecting::default()),
            "angular" => SearchSpec::Angular(Angular::default()),
            "convex-hull" => SearchSpec::ConvexHull(ConvexHull::default()),
            "convex-hull-ban" => {
                SearchSpec::ConvexHull(ConvexHull { integral: Integral::Ban, ..ConvexHull::default() })
            }
            "convex-hull-kbest" => {
                SearchSpec::ConvexHull(ConvexHull { integral: Integral::KBest, ..ConvexHull::default() })
            }
            "frontier" => SearchSpec::Frontier(Frontier),
            _ => {
                return Err(Error::param(format!(
                    "unknown search '{name}'; known searches: {}",
                    NAMES.join(", ")
                )))
            }
        })
    }

    /// Sets one numeric option (`max_calls`, `eps`, `tol`, `lambda0`), refusing unknown names and
    /// values outside their domain with an [`Error::InvalidParameter`] naming both.
    pub fn set(&mut self, option: &str, value: f64) -> Result<()> {
        let name = self.name();
        let check = |ok: bool, dom: &str| {
            if ok {
                Ok(value)
            } else {
                Err(Error::param(format!("search '{name}': option {option} = {value} must be {dom}")))
            }
        };
        let finite = value.is_finite();
        match (self, option) {
            (SearchSpec::Frontier(_), _) => {
                return Err(Error::param(format!(
                    "search '{name}' has no numeric option '{option}' (it makes exactly one frontier call)"
                )))
            }
            (s, "max_calls") => {
                let n = check(finite && value >= 1.0 && value.fract() == 0.0, "a positive integer")? as usize;
                match s {
                    SearchSpec::Sarawagi(x) => x.max_calls = n,
                    SearchSpec::Binary(x) => x.max_calls = n,
                    SearchSpec::Bisecting(x) => x.max_calls = n,
                    SearchSpec::Angular(x) => x.max_calls = n,
                    SearchSpec::ConvexHull(x) => x.max_calls = n,
                    SearchSpec::Frontier(_) => {}
                }
            }
            (s, "lambda0") => {
                let l = Some(check(finite && value > 0.0, "finite and > 0")?);
                match s {
                    SearchSpec::Sarawagi(x) => x.lambda0 = l,
                    SearchSpec::Binary(x) => x.lambda0 = l,
                    SearchSpec::Bisecting(x) => x.lambda0 = l,
                    SearchSpec::Angular(x) => x.lambda0 = l,
                    SearchSpec::ConvexHull(x) => x.lambda0 = l,
                    SearchSpec::Frontier(_) => {}
                }
            }
            (SearchSpec::Angular(x), "eps") => x.eps = check(finite && value >= 0.0, "finite and >= 0")?,
            (SearchSpec::Sarawagi(x), "tol") => {
                x.tol = check(finite && value > 0.0 && value < 1.0, "in (0, 1)")?
            }
            (SearchSpec::Binary(x), "tol") => {
                x.tol = check(finite && value > 0.0 && value < 1.0, "in (0, 1)")?
            }
            (SearchSpec::Bisecting(x), "tol") => {
                x.tol = check(finite && value > 0.0 && value < 1.0, "in (0, 1)")?
            }
            (s, _) => {
                return Err(Error::param(format!(
                    "search '{name}' has no numeric option '{option}' (options: {})",
                    s.option_names().join(", ")
                )))
            }
        }
        Ok(())
    }

    /// Sets the integral recovery of a convex hull search (`"none"`, `"ban"`, `"kbest"`).
    pub fn set_integral(&mut self, how: &str) -> Result<()> {
        let name = self.name();
        match self {
            SearchSpec::ConvexHull(x) => {
                x.integral = match how {
                    "none" => Integral::None,
                    "ban" => Integral::Ban,
                    "kbest" => Integral::KBest,
                    _ => {
                        return Err(Error::param(format!(
                            "search '{name}': option integral = '{how}' must be one of none, ban, kbest"
                        )))
                    }
                };
                Ok(())
            }
            _ => Err(Error::param(format!(
                "search '{name}' has no option 'integral' (only convex-hull recovers integral answers)"
            ))),
        }
    }

    /// Option names accepted by [`SearchSpec::set`] (and `integral` for convex hull).
    pub fn option_names(&self) -> &'static [&'static str] {
        match self {
            SearchSpec::Sarawagi(_) | SearchSpec::Binary(_) | SearchSpec::Bisecting(_) => {
                &["max_calls", "lambda0", "tol"]
            }
            SearchSpec::Angular(_) => &["max_calls", "lambda0", "eps"],
            SearchSpec::ConvexHull(_) => &["max_calls", "lambda0", "integral"],
            SearchSpec::Frontier(_) => &[],
        }
    }

    /// The registry name (convex hull with recovery reports `convex-hull-ban` / `-kbest`).
    pub fn name(&self) -> &'static str {
        match self {
            SearchSpec::Sarawagi(x) => x.name(),
            SearchSpec::Binary(x) => x.name(),
            SearchSpec::Bisecting(x) => x.name(),
            SearchSpec::Angular(x) => x.name(),
            SearchSpec::ConvexHull(x) => x.name(),
            SearchSpec::Frontier(x) => x.name(),
        }
    }

    /// What the search needs.
    pub fn requirements(&self) -> Requirements {
        match self {
            SearchSpec::Sarawagi(x) => x.requirements(),
            SearchSpec::Binary(x) => x.requirements(),
            SearchSpec::Bisecting(x) => x.requirements(),
            SearchSpec::Angular(x) => x.requirements(),
            SearchSpec::ConvexHull(x) => x.requirements(),
            SearchSpec::Frontier(x) => x.requirements(),
        }
    }

    /// Checks the combination with a surrogate and an oracle (docs/architecture.md "Which pieces combine"); refuses the rest
    /// with an [`Error::Incompatible`] that names both pieces.
    pub fn check(&self, psi: &dyn Surrogate, caps: Capabilities) -> Result<()> {
        let r = self.requirements();
        let name = self.name();
        let psi_desc = describe(psi);
        if r.product_form && psi.product_shift().is_none() {
            return Err(Error::incompatible(format!(
                "search '{name}' is derived for the product form ψ = (h + 1)·g (slack rescaling) and cannot run \
                 with surrogate {psi_desc}; use 'convex-hull', which works for every quasi-concave increasing ψ"
            )));
        }
        if r.unit_shift && psi.product_shift() != Some(1.0) {
            return Err(Error::incompatible(format!(
                "search '{name}' queries cones in (h + 1, g) coordinates, so it needs ψ = (h + 1)·g exactly; \
                 surrogate {psi_desc} has product shift {:?}",
                psi.product_shift()
            )));
        }
        let missing = [
            (r.cone, caps.cone, "the constrained λ-oracle (cone)"),
            (r.ban, caps.ban, "a ban-list oracle"),
            (r.kbest, caps.kbest, "a k-best oracle"),
            (
                r.frontier,
                caps.frontier,
                "the frontier by loss value (the best label for every loss value: chains with the \
                 Hamming loss, multiclass and point sets, with a surrogate whose g is the loss — not \
                 Micro-F1 nor the chain's segment loss)",
            ),
        ];
        for (needed, has, what) in missing {
            if needed && !has {
                return Err(Error::incompatible(format!(
                    "search '{name}' needs {what}, which this oracle does not declare (with surrogate {psi_desc})"
                )));
            }
        }
        Ok(())
    }

    /// Runs one inference: checks the combination, then searches. `warm` is the previous
    /// outcome's [`Outcome::warm`] for this instance; `xi` the slack ξ_i (Sarawagi–Gupta only).
    pub fn run<O: LambdaOracle>(
        &self,
        oracle: &mut O,
        psi: &dyn Surrogate,
        warm: Option<&WarmStart<O::Label>>,
        xi: Option<f64>,
    ) -> Result<Outcome<O::Label>> {
        self.check(psi, oracle.capabilities())?;
        self.run_prechecked(oracle, psi, warm, xi)
    }

    /// One inference of a combination already checked with [`SearchSpec::check`]: the learners
    /// check theirs once, when they are built, not at every inference.
    pub fn run_prechecked<O: LambdaOracle>(
        &self,
        oracle: &mut O,
        psi: &dyn Surrogate,
        warm: Option<&WarmStart<O::Label>>,
        xi: Option<f64>,
    ) -> Result<Outcome<O::Label>> {
        self.run_with(oracle, psi, warm, xi, true)
    }

    /// [`SearchSpec::run_prechecked`] with the query trace on or off (`Outcome::trace` is then
    /// empty: what learners ask for, as they never read it).
    pub fn run_with<O: LambdaOracle>(
        &self,
        oracle: &mut O,
        psi: &dyn Surrogate,
        warm: Option<&WarmStart<O::Label>>,
        xi: Option<f64>,
        trace: bool,
    ) -> Result<Outcome<O::Label>> {
        match self {
            SearchSpec::Sarawagi(x) => run_search(x, oracle, psi, warm, xi, trace),
            SearchSpec::Binary(x) => run_search(x, oracle, psi, warm, xi, trace),
            SearchSpec::Bisecting(x) => run_search(x, oracle, psi, warm, xi, trace),
            SearchSpec::Angular(x) => run_search(x, oracle, psi, warm, xi, trace),
            SearchSpec::ConvexHull(x) => run_search(x, oracle, psi, warm, xi, trace),
            SearchSpec::Frontier(x) => run_search(x, oracle, psi, warm, xi, trace),
        }
    }
}

fn describe(psi: &dyn Surrogate) -> String {
    let params = psi.params();
    if params.is_empty() {
        format!("'{}'", psi.name())
    } else {
        let p: Vec<String> = params.iter().map(|(k, v)| format!("{k}={v}")).collect();
        format!("'{}' ({})", psi.name(), p.join(", "))
    }
}

fn run_search<'a, S: Search, O: LambdaOracle>(
    s: &S,
    oracle: &'a mut O,
    psi: &'a dyn Surrogate,
    warm: Option<&'a WarmStart<O::Label>>,
    xi: Option<f64>,
    trace: bool,
) -> Result<Outcome<O::Label>> {
    let mut session = Session::new(oracle, psi, s.max_calls(), s.requirements().product_form)?;
    session.set_tracing(trace);
    let found = s.search(&mut session, warm, xi)?;
    if found.answer.is_empty() {
        return Err(Error::input(
            "the oracle revealed no label at all and knows no gold label: nothing to return (empty label set?)",
        ));
    }
    Ok(Outcome {
        value: found.value,
        answer: found.answer,
        calls: session.calls,
        upper_bound: found.upper_bound,
        lambda: session.last_lambda,
        is_gold: found.is_gold,
        warm: session.warm_plan(),
        trace: std::mem::take(&mut session.trace),
    })
}

#[cfg(test)]
mod tests;
