//! One inference in progress: the oracle, the surrogate, the labels revealed so far (the label
//! cache), the calls made by kind and a trace of the queries for plots.

use bicrit_core::error::check_finite;
use bicrit_core::{Cone, Error, Lambda, LambdaOracle, PlaneQuery, Point, Result};
use bicrit_surrogates::Surrogate;

use crate::geometry::upper_right_chain_into;
use crate::{Calls, QueryRecord, WarmLabel, WarmPlan, WarmStart};

/// Where a candidate's label is: owned by the session (the gold label, oracle answers), or the
/// j-th label of the warm start the session was given (read in place, never copied).
#[derive(Clone, Debug)]
pub enum Slot<L> {
    /// A label the session owns.
    Own(L),
    /// Index into the warm start's labels.
    Warm(usize),
}

/// A label known to the search, with its coordinates and Φ = ψ(h, g).
#[derive(Clone, Debug)]
pub struct Candidate<L> {
    /// The label (read it through [`Session::label`]).
    pub slot: Slot<L>,
    /// h(y).
    pub h: f64,
    /// g(y).
    pub g: f64,
    /// ψ(h, g).
    pub phi: f64,
    /// Whether this is the gold label y_i (the floor of every search).
    pub gold: bool,
    /// Whether an integral-recovery loop has banned it (excluded from the hull of the round).
    pub banned: bool,
    /// Whether an integral-recovery loop bans it from the oracle's answers while keeping it in
    /// the hull: the gold label, whose Φ is the floor that keeps the search where ψ is
    /// quasi-concave and increasing.
    pub ban_only_answers: bool,
}

/// The state of one inference: what the searches share.
pub struct Session<'a, O: LambdaOracle> {
    oracle: &'a mut O,
    psi: &'a dyn Surrogate,
    /// Oracle calls made so far, by kind.
    pub calls: Calls,
    /// Every query with its answers (for plots and debugging).
    pub trace: Vec<QueryRecord>,
    /// Labels revealed so far (gold first when the oracle knows it).
    pub known: Vec<Candidate<O::Label>>,
    /// The last λ queried.
    pub last_lambda: Option<Lambda>,
    /// The labels of the warm start given to [`Session::warm_points`] (candidates refer to them
    /// by index).
    warm: &'a [O::Label],
    max_calls: usize,
    need_nonneg_g: bool,
    /// Whether queries are recorded in `trace` (plots; learners switch it off).
    tracing: bool,
    /// Reused buffer of warm-start coordinates.
    coords: Vec<(f64, f64)>,
    /// Cuts of the integral recovery ([`crate::integral`]): after the query at λ, every label
    /// neither banned nor returned then has h + λg ≤ K (λ = 0: h ≤ K; λ = ∞: g ≤ K; K = −∞: no
    /// such label). Recorded by the ban-list and k-best queries.
    pub(crate) cuts: Vec<(Lambda, f64)>,
    /// Largest Φ of a query's top answer (answers are not all added to `known`).
    pub(crate) top_phi: f64,
    /// Planes (λ, K) bounding every label the oracle may still return, h + λg ≤ K (λ = 0: h ≤ K;
    /// λ = ∞: g ≤ K): the top answers of the convex hull search's queries and the oracle's
    /// [`LambdaOracle::g_bound`] ([`crate::planes`]).
    pub(crate) planes: Vec<(Lambda, f64)>,
    /// The oracle's lower bound on g over the labels other than gold
    /// ([`LambdaOracle::g_floor`]), when above the gold label's g.
    pub(crate) g_floor: Option<f64>,
    /// Work space of the hull of the labels known, reused from round to round.
    pub(crate) hull: HullBuffers,
}

/// Reused buffers of the upper-right chain of the candidates ([`Session::chain_of`]).
#[derive(Default)]
pub(crate) struct HullBuffers {
    idx: Vec<usize>,
    pts: Vec<(f64, f64)>,
    cand: Vec<usize>,
    /// The chain's vertices, as indices into `known`, by increasing g.
    pub chain: Vec<usize>,
}

impl<'a, O: LambdaOracle> Session<'a, O> {
    /// Starts an inference; the gold label (when the oracle knows it) becomes the first candidate.
    pub fn new(
        oracle: &'a mut O,
        psi: &'a dyn Surrogate,
        max_calls: usize,
        need_nonneg_g: bool,
    ) -> Result<Self> {
        let gold = oracle.gold();
        let planes =
            oracle.g_bound().filter(|b| b.is_finite()).map(|b| (Lambda::Infinity, b)).into_iter().collect();
        let mut s = Session {
            oracle,
            psi,
            calls: Calls::default(),
            trace: Vec::new(),
            known: Vec::new(),
            last_lambda: None,
            warm: &[],
            max_calls,
            need_nonneg_g,
            tracing: true,
            coords: Vec::new(),
            cuts: Vec::new(),
            top_phi: f64::NEG_INFINITY,
            planes,
            g_floor: None,
            hull: HullBuffers::default(),
        };
        if let Some(p) = gold {
            s.check_point("the oracle's gold label", &p)?;
            s.g_floor = s.oracle.g_floor().filter(|f| f.is_finite() && *f > p.g);
            let phi = s.phi(p.h, p.g)?;
            s.known.push(Candidate {
                slot: Slot::Own(p.label),
                h: p.h,
                g: p.g,
                phi,
                gold: true,
                banned: false,
                ban_only_answers: false,
            });
        }
        Ok(s)
    }

    /// Stops (or resumes) recording queries in `trace`: a learner never reads it, and each record
    /// holds an allocation.
    pub fn set_tracing(&mut self, on: bool) {
        self.tracing = on;
    }

    /// The label of candidate `i`.
    pub fn label(&self, i: usize) -> &O::Label {
        match &self.known[i].slot {
            Slot::Own(l) => l,
            Slot::Warm(j) => &self.warm[*j],
        }
    }

    /// The surrogate.
    pub fn psi(&self) -> &'a dyn Surrogate {
        self.psi
    }

    /// The oracle's capabilities.
    pub fn capabilities(&self) -> bicrit_core::Capabilities {
        self.oracle.capabilities()
    }

    /// Whether the call budget allows another query.
    pub fn budget_left(&self) -> bool {
        self.calls.total() < self.max_calls
    }

    /// ψ(h, g), refusing NaN/inf with a clear error.
    pub fn phi(&self, h: f64, g: f64) -> Result<f64> {
        let v = self.psi.try_value(h, g)?;
        if v.is_nan() || v == f64::INFINITY {
            return Err(Error::input(format!(
                "surrogate '{}' is undefined at (h, g) = ({h}, {g}) (ψ = {v}): the point is outside its domain",
                self.psi.name()
            )));
        }
        Ok(v)
    }

    /// ∇ψ(h, g), refusing NaN.
    pub fn grad(&self, h: f64, g: f64) -> Result<(f64, f64)> {
        let d = self.psi.try_grad(h, g)?;
        if d.0.is_nan() || d.1.is_nan() {
            return Err(Error::input(format!(
                "the gradient of surrogate '{}' is undefined at (h, g) = ({h}, {g})",
                self.psi.name()
            )));
        }
        Ok(d)
    }

    fn check_point(&self, what: &str, p: &Point<O::Label>) -> Result<()> {
        check_finite(what, &[p.h, p.g])?;
        if self.need_nonneg_g && p.g < 0.0 {
            return Err(Error::input(format!(
                "{what} has g = {} < 0, but the product-form searches need g ≥ 0 (a task loss)",
                p.g
            )));
        }
        Ok(())
    }

    /// One oracle query, counted by kind and traced; every answer is checked for NaN/inf.
    pub fn query(
        &mut self,
        lambda: Lambda,
        ban: &[O::Label],
        k: usize,
        cone: Option<Cone>,
    ) -> Result<Vec<Point<O::Label>>> {
        if let Lambda::Finite(l) = lambda {
            if !(l.is_finite() && l > 0.0) {
                return Err(Error::input(format!("internal: λ = {l} is not a positive finite value")));
            }
        }
        let q = PlaneQuery { lambda, ban, k: k.max(1), cone };
        let answers = self.oracle.query(&q)?;
        if answers.len() > q.k {
            return Err(Error::input(format!(
                "the oracle returned {} answers for k = {}",
                answers.len(),
                q.k
            )));
        }
        for p in &answers {
            self.check_point("an oracle answer", p)?;
        }
        self.calls.record(lambda, ban.len(), k, cone.is_some());
        self.last_lambda = Some(lambda);
        if !self.tracing {
            return Ok(answers);
        }
        self.trace.push(QueryRecord {
            lambda: lambda.as_f64(),
            cone,
            k: q.k,
            banned: ban.len(),
            answers: answers.iter().map(|p| (p.h, p.g)).collect(),
            frontier: false,
        });
        Ok(answers)
    }

    /// One frontier query (the best h for every loss value, [`LambdaOracle::frontier`]), counted
    /// as `frontier` and traced (λ = NaN); every point is checked for NaN/inf.
    pub fn frontier(&mut self) -> Result<Vec<Point<O::Label>>> {
        let answers = self.oracle.frontier()?;
        for p in &answers {
            self.check_point("a frontier point", p)?;
        }
        self.calls.frontier += 1;
        if !self.tracing {
            return Ok(answers);
        }
        self.trace.push(QueryRecord {
            lambda: f64::NAN,
            cone: None,
            k: answers.len(),
            banned: 0,
            answers: answers.iter().map(|p| (p.h, p.g)).collect(),
            frontier: true,
        });
        Ok(answers)
    }

    /// Adds a revealed label to the cache unless an active candidate has the same coordinates;
    /// returns its index and whether it is new.
    pub fn add(&mut self, p: Point<O::Label>) -> Result<(usize, bool)> {
        self.add_slot(Slot::Own(p.label), p.h, p.g)
    }

    fn add_slot(&mut self, slot: Slot<O::Label>, h: f64, g: f64) -> Result<(usize, bool)> {
        if let Some(i) = self.known.iter().position(|c| !c.banned && c.h == h && c.g == g) {
            return Ok((i, false));
        }
        let phi = self.phi(h, g)?;
        self.known.push(Candidate { slot, h, g, phi, gold: false, banned: false, ban_only_answers: false });
        Ok((self.known.len() - 1, true))
    }

    /// Re-evaluates a warm start's labels at the current weights and adds them to the cache (they
    /// stay where they are: candidates refer to them by index, [`Slot::Warm`]). Returns false
    /// when the oracle cannot evaluate labels (then only λ is reused).
    pub fn warm_points(&mut self, warm: &'a WarmStart<O::Label>) -> Result<bool> {
        if warm.labels.is_empty() {
            return Ok(true);
        }
        let mut coords = std::mem::take(&mut self.coords);
        coords.clear();
        let ok = self.oracle.evaluate(&warm.labels, &mut coords)?;
        if ok {
            if coords.len() != warm.labels.len() {
                return Err(Error::input(format!(
                    "the oracle evaluated {} of {} warm-start labels",
                    coords.len(),
                    warm.labels.len()
                )));
            }
            self.warm = &warm.labels;
            self.calls.evaluated += coords.len();
            self.known.reserve(coords.len() + 2);
            for (j, &(h, g)) in coords.iter().enumerate() {
                check_finite("a warm-start label", &[h, g])?;
                if self.need_nonneg_g && g < 0.0 {
                    return Err(Error::input(format!(
                        "a warm-start label has g = {g} < 0, but the product-form searches need g ≥ 0 (a task loss)"
                    )));
                }
                self.add_slot(Slot::Warm(j), h, g)?;
            }
        }
        self.coords = coords;
        Ok(ok)
    }

    /// The upper-right chain ([`crate::geometry::upper_right_chain`]) of the candidates `keep`
    /// selects, as indices into `known` by increasing g, in `self.hull.chain` (no allocation once
    /// the buffers have grown).
    pub(crate) fn chain_of(&mut self, keep: impl Fn(&Candidate<O::Label>) -> bool) {
        let HullBuffers { idx, pts, cand, chain } = &mut self.hull;
        idx.clear();
        idx.extend((0..self.known.len()).filter(|&i| keep(&self.known[i])));
        pts.clear();
        pts.extend(idx.iter().map(|&i| (self.known[i].h, self.known[i].g)));
        upper_right_chain_into(pts, cand, chain);
        chain.iter_mut().for_each(|j| *j = idx[*j]);
    }

    /// Index of the best active candidate (gold preferred on ties), if any.
    pub fn best(&self) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (i, c) in self.known.iter().enumerate() {
            let better = match best {
                None => true,
                Some(b) => c.phi > self.known[b].phi,
            };
            if better {
                best = Some(i);
            }
        }
        // Prefer the gold label when it ties with the best (zero loss).
        if let (Some(b), Some(gi)) = (best, self.known.iter().position(|c| c.gold)) {
            if self.known[gi].phi >= self.known[b].phi {
                return Some(gi);
            }
        }
        best
    }

    /// The warm start for the next inference: the labels on the upper-right chain of the cache
    /// (plus the best one), and the last λ — the labels of the warm start this session was given
    /// by index, the others moved out of the session (call it last).
    pub fn warm_plan(&mut self) -> WarmPlan<O::Label> {
        self.chain_of(|c| !c.gold);
        let mut keep = std::mem::take(&mut self.hull.chain);
        if let Some(b) = self.best() {
            if !self.known[b].gold && !keep.contains(&b) {
                keep.push(b);
            }
        }
        keep.truncate(32);
        let labels = keep
            .iter()
            .map(|&i| match std::mem::replace(&mut self.known[i].slot, Slot::Warm(usize::MAX)) {
                Slot::Own(l) => WarmLabel::New(l),
                Slot::Warm(j) => WarmLabel::Previous(j),
            })
            .collect();
        WarmPlan {
            labels,
            lambda: self.last_lambda.map(|l| l.as_f64()).filter(|l| l.is_finite() && *l > 0.0),
        }
    }
}
