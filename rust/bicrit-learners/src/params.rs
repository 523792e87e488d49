//! Learner parameters: names, defaults, domains and documentation, in one place ([`docs`]); the
//! Python module `bicrit.learners` reads them from here.

use bicrit_core::{Error, Result};

use crate::{Kind, ObjectiveKind};

/// A parameter value as it comes from Python (or Rust callers).
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A float.
    Float(f64),
    /// An integer.
    Int(i64),
    /// A boolean.
    Bool(bool),
    /// A string.
    Str(String),
    /// None.
    None,
}

impl std::fmt::Display for Value {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Value::Float(x) => write!(f, "{x}"),
            Value::Int(x) => write!(f, "{x}"),
            Value::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            Value::Str(s) => write!(f, "'{s}'"),
            Value::None => write!(f, "None"),
        }
    }
}

/// One documented parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamDoc {
    /// Name.
    pub name: &'static str,
    /// Default value.
    pub default: Value,
    /// What it does and its domain.
    pub doc: &'static str,
}

fn p(name: &'static str, default: Value, doc: &'static str) -> ParamDoc {
    ParamDoc { name, default, doc }
}

/// The parameters of a learner, with defaults and documentation.
pub fn docs(kind: Kind) -> Vec<ParamDoc> {
    let mut v = vec![
        p(
            "C",
            Value::Float(1.0),
            "float > 0: minimise ½‖w‖² + C·Σ_i ℓ_i(w) (scikit-learn's C; the thesis's chapters 1–4 \
             use C_t with C = 1/(n·C_t))",
        ),
        p(
            "n_jobs",
            Value::Int(1),
            "threads for the parallel inferences of a block (-1: all cores); the result does not \
             depend on it",
        ),
        p("random_state", Value::Int(0), "int ≥ 0: seed of the per-epoch instance order"),
        p(
            "warm_start",
            Value::Bool(true),
            "start each instance's search from its previous inference (labels re-scored at the \
             current weights, no oracle call) — thesis §convex_hull_search's label cache",
        ),
        p(
            "cache_size",
            Value::Int(8),
            "int ≥ 1: labels per instance carried to its next search: the last search's hull chain \
             first, then earlier labels not on it",
        ),
        p(
            "task_loss",
            Value::Bool(false),
            "after each epoch, predict the training set and report the mean task loss (one more \
             pass of prediction)",
        ),
    ];
    match kind {
        Kind::Sgd => v.extend([
            p(
                "objective",
                Value::Str("running".into()),
                "'running': ½‖w‖² of the last iterate + C·(losses met during the epoch), free; \
                 'exact': one more inference pass at the returned weights",
            ),
            p(
                "schedule",
                Value::Str("pegasos".into()),
                "step size η_t at step t: 'pegasos' 1/(λ(t + t0)) with λ = 1/(n·C); 'constant' eta0; \
                 'invscaling' eta0/t^power_t",
            ),
            p("t0", Value::Float(1.0), "float ≥ 0: offset of the 'pegasos' schedule"),
            p("eta0", Value::Float(0.01), "float > 0: step size of 'constant' and 'invscaling'"),
            p("power_t", Value::Float(0.5), "float > 0: exponent of 'invscaling'"),
            p(
                "average",
                Value::Str("weighted".into()),
                "averaged weights returned by weights(): 'none', 'uniform' (Polyak–Ruppert) or \
                 'weighted' (step t weighs t; Lacoste-Julien et al. 2012); True means 'weighted'",
            ),
            p(
                "batch_size",
                Value::Int(1),
                "int ≥ 1: instances whose subgradients are averaged into one step",
            ),
            p(
                "block_size",
                Value::Int(32),
                "int ≥ 1: instances whose inferences run in parallel against the same weights before \
                 their steps are applied in order (staleness ≤ block_size − 1 steps)",
            ),
            p("shuffle", Value::Bool(true), "visit the instances in a new seeded order every epoch"),
            p(
                "project",
                Value::Bool(false),
                "project w onto the ball ‖w‖² ≤ 2C·Σ_i ℓ_i(0) that holds the optimum (Pegasos's projection; \
                 one inference pass at w = 0 before the first epoch) — keeps the large early steps of \
                 losses scaled by the task loss (slack rescaling) from blowing w up. Measured: a lower \
                 objective after 10 epochs on emotions (slack 1.4e4 vs 3.3e4), but a lower entity F1 on \
                 a 150-sentence CoNLL slice after 5–10 epochs, so off by default",
            ),
        ]),
        Kind::Bcfw => v.extend([
            p(
                "objective",
                Value::Str("running".into()),
                "'running': primal and duality gap from the block gaps met during the epoch, free; \
                 'exact': one more inference pass at the returned weights gives the exact primal and gap",
            ),
            p("line_search", Value::Bool(true), "exact line search on the block step (else γ = 2n/(k + 2n))"),
            p(
                "average",
                Value::Bool(true),
                "weighted averaging w̄ ← k/(k+2)·w̄ + 2/(k+2)·w (returned by weights())",
            ),
            p(
                "block_size",
                Value::Str("auto".into()),
                "int ≥ 1 or 'auto': the mini-batch: instances whose corners (oracle calls) run in \
                 parallel on the n_jobs threads at the same weights, their block steps then applied \
                 in order with exact line search at the current weights (every step still raises the \
                 dual; the gap stays certified). 1 is sequential BCFW; the model depends on it, never \
                 on n_jobs. 'auto': 2^⌊log2(√n/8)⌋ within [1, 8] for n instances (1 below 256, 4 on \
                 yeast, 8 from 4096): the gap lost per epoch grows like block_size/√n, measured at \
                 most 4.4 % at the sizes 'auto' picks on yeast and CoNLL-2002",
            ),
            p("shuffle", Value::Bool(true), "visit the instances in a new seeded order every epoch"),
            p("tol", Value::Float(1e-3), "float ≥ 0: 'converged' when gap ≤ tol·|objective|"),
            p(
                "slack_norm",
                Value::Int(1),
                "1 or 2: the power of the slacks in the objective — 1: ½‖w‖² + C·Σ_i ℓ_i(w) (the \
                 hinge form); 2: ½‖w‖² + C·Σ_i max(0, ℓ_i(w))² (squared slacks, SVM^struct's `-p 2`; \
                 on a binary problem, LinearSVC's squared hinge — on K labels the square is of the \
                 instance's whole slack, not a sum of K squares)",
            ),
        ]),
        Kind::CuttingPlane | Kind::CuttingPlaneN => {
            v.extend([
                p(
                    "eps",
                    Value::Float(1e-3),
                    "float > 0: stop when the most violated constraint exceeds the working set's slack by \
                     at most eps per instance (Joachims et al. 2009)",
                ),
                p(
                    "inactive_window",
                    Value::Int(50),
                    "int ≥ 1: drop a constraint whose dual variable stayed below inactive_threshold·C \
                     for this many QP solves",
                ),
                p("inactive_threshold", Value::Float(1e-5), "float ≥ 0: see inactive_window"),
                p(
                    "max_constraints",
                    Value::Int(5000),
                    "int ≥ 1: largest working set (the dual QP is dense in the constraints)",
                ),
            ]);
            if kind == Kind::CuttingPlaneN {
                v.push(p(
                    "batch_size",
                    Value::Int(0),
                    "int ≥ 0: instances between QP solves (0: the whole training set, so the epoch's \
                     objective is exact)",
                ));
            }
        }
    }
    v
}

/// Parameters every learner has.
#[derive(Clone, Debug, PartialEq)]
pub struct Common {
    /// scikit-learn's C.
    pub c: f64,
    /// Threads (−1: all).
    pub n_jobs: i64,
    /// Seed.
    pub random_state: u64,
    /// Running or exact objective.
    pub objective: ObjectiveKind,
    /// Report the training task loss.
    pub task_loss: bool,
    /// Warm-start the searches.
    pub warm_start: bool,
    /// Labels kept per instance for the warm start.
    pub cache_size: usize,
}

struct Reader<'a> {
    learner: &'static str,
    params: &'a [(String, Value)],
    known: Vec<ParamDoc>,
}

impl<'a> Reader<'a> {
    fn new(kind: Kind, params: &'a [(String, Value)]) -> Result<Self> {
        let known = docs(kind);
        for (k, _) in params {
            if !known.iter().any(|d| d.name == k) {
                let names: Vec<&str> = known.iter().map(|d| d.name).collect();
                return Err(Error::param(format!(
                    "learner '{}' has no parameter '{k}' (its parameters: {})",
                    kind.name(),
                    names.join(", ")
                )));
            }
        }
        Ok(Reader { learner: kind.name(), params, known })
    }

    fn raw(&self, key: &str) -> Value {
        self.params
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
            .or_else(|| self.known.iter().find(|d| d.name == key).map(|d| d.default.clone()))
            .unwrap_or(Value::None)
    }

    fn bad(&self, key: &str, v: &Value, domain: &str) -> Error {
        Error::param(format!("learner '{}': parameter {key} = {v} must be {domain}", self.learner))
    }

    fn float(&self, key: &str, ok: impl Fn(f64) -> bool, domain: &str) -> Result<f64> {
        let v = self.raw(key);
        let x = match v {
            Value::Float(x) => x,
            Value::Int(i) => i as f64,
            _ => return Err(self.bad(key, &v, domain)),
        };
        if x.is_finite() && ok(x) {
            Ok(x)
        } else {
            Err(self.bad(key, &v, domain))
        }
    }

    fn int(&self, key: &str, ok: impl Fn(i64) -> bool, domain: &str) -> Result<i64> {
        let v = self.raw(key);
        let x = match v {
            Value::Int(i) => i,
            Value::Float(f) if f.fract() == 0.0 && f.abs() < 9e15 => f as i64,
            _ => return Err(self.bad(key, &v, domain)),
        };
        if ok(x) {
            Ok(x)
        } else {
            Err(self.bad(key, &v, domain))
        }
    }

    fn boolean(&self, key: &str) -> Result<bool> {
        match self.raw(key) {
            Value::Bool(b) => Ok(b),
            v => Err(self.bad(key, &v, "True or False")),
        }
    }

    fn choice(&self, key: &str, options: &[&'static str]) -> Result<&'static str> {
        let v = self.raw(key);
        if let Value::Str(s) = &v {
            if let Some(o) = options.iter().find(|o| **o == s) {
                return Ok(o);
            }
        }
        Err(self.bad(key, &v, &format!("one of {}", options.join(", "))))
    }

    fn common(&self, default_objective: ObjectiveKind) -> Result<Common> {
        let objective = if self.known.iter().any(|d| d.name == "objective") {
            match self.choice("objective", &["running", "exact"])? {
                "running" => ObjectiveKind::Running,
                _ => ObjectiveKind::Exact,
            }
        } else {
            default_objective
        };
        Ok(Common {
            c: self.float("C", |x| x > 0.0, "a finite float > 0")?,
            n_jobs: self.int("n_jobs", |x| x == -1 || x >= 1, "a positive number of threads or -1")?,
            random_state: self.int("random_state", |x| x >= 0, "an int ≥ 0")? as u64,
            objective,
            task_loss: self.boolean("task_loss")?,
            warm_start: self.boolean("warm_start")?,
            cache_size: self.int("cache_size", |x| x >= 1, "an int ≥ 1")? as usize,
        })
    }
}

fn common_effective(c: &Common) -> Vec<(&'static str, Value)> {
    vec![
        ("C", Value::Float(c.c)),
        ("n_jobs", Value::Int(c.n_jobs)),
        ("random_state", Value::Int(c.random_state as i64)),
        ("task_loss", Value::Bool(c.task_loss)),
        ("warm_start", Value::Bool(c.warm_start)),
        ("cache_size", Value::Int(c.cache_size as i64)),
        ("objective", Value::Str(c.objective.name().into())),
    ]
}

/// The step-size schedule of SGD.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// η_t = 1/(λ(t + t0)).
    Pegasos,
    /// η_t = eta0.
    Constant,
    /// η_t = eta0 / t^power_t.
    InvScaling,
}

/// Averaging of SGD iterates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Averaging {
    /// None: the last iterate.
    None,
    /// Uniform weights.
    Uniform,
    /// Step t weighs t.
    Weighted,
}

/// SGD parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct SgdParams {
    /// Common parameters.
    pub common: Common,
    /// Step sizes.
    pub schedule: Schedule,
    /// Offset of the Pegasos schedule.
    pub t0: f64,
    /// Step size of the constant and inverse-scaling schedules.
    pub eta0: f64,
    /// Exponent of the inverse-scaling schedule.
    pub power_t: f64,
    /// Averaging.
    pub average: Averaging,
    /// Instances per step.
    pub batch_size: usize,
    /// Instances per parallel block.
    pub block_size: usize,
    /// New order every epoch.
    pub shuffle: bool,
    /// Projection onto the ball holding the optimum.
    pub project: bool,
}

impl SgdParams {
    /// Parses and validates.
    pub fn parse(params: &[(String, Value)]) -> Result<Self> {
        let r = Reader::new(Kind::Sgd, params)?;
        let schedule = match r.choice("schedule", &["pegasos", "constant", "invscaling"])? {
            "pegasos" => Schedule::Pegasos,
            "constant" => Schedule::Constant,
            _ => Schedule::InvScaling,
        };
        let average = match r.raw("average") {
            Value::Bool(true) => Averaging::Weighted,
            Value::Bool(false) => Averaging::None,
            _ => match r.choice("average", &["none", "uniform", "weighted"])? {
                "none" => Averaging::None,
                "uniform" => Averaging::Uniform,
                _ => Averaging::Weighted,
            },
        };
        Ok(SgdParams {
            common: r.common(ObjectiveKind::Running)?,
            schedule,
            t0: r.float("t0", |x| x >= 0.0, "a finite float ≥ 0")?,
            eta0: r.float("eta0", |x| x > 0.0, "a finite float > 0")?,
            power_t: r.float("power_t", |x| x > 0.0, "a finite float > 0")?,
            average,
            batch_size: r.int("batch_size", |x| x >= 1, "an int ≥ 1")? as usize,
            block_size: r.int("block_size", |x| x >= 1, "an int ≥ 1")? as usize,
            shuffle: r.boolean("shuffle")?,
            project: r.boolean("project")?,
        })
    }

    /// Every parameter with its effective value.
    pub fn effective(&self) -> Vec<(&'static str, Value)> {
        let mut v = common_effective(&self.common);
        let name = match self.schedule {
            Schedule::Pegasos => "pegasos",
            Schedule::Constant => "constant",
            Schedule::InvScaling => "invscaling",
        };
        v.extend([
            ("schedule", Value::Str(name.into())),
            ("t0", Value::Float(self.t0)),
            ("eta0", Value::Float(self.eta0)),
            ("power_t", Value::Float(self.power_t)),
            (
                "average",
                Value::Str(
                    match self.average {
                        Averaging::None => "none",
                        Averaging::Uniform => "uniform",
                        Averaging::Weighted => "weighted",
                    }
                    .into(),
                ),
            ),
            ("batch_size", Value::Int(self.batch_size as i64)),
            ("block_size", Value::Int(self.block_size as i64)),
            ("shuffle", Value::Bool(self.shuffle)),
            ("project", Value::Bool(self.project)),
        ]);
        v
    }
}

/// BCFW parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct BcfwParams {
    /// Common parameters.
    pub common: Common,
    /// Exact line search.
    pub line_search: bool,
    /// Weighted averaging.
    pub average: bool,
    /// Instances per parallel mini-batch (None: `auto_block_size` of the training set's size).
    pub block_size: Option<usize>,
    /// New order every epoch.
    pub shuffle: bool,
    /// Relative gap of `converged`.
    pub tol: f64,
    /// Power of the slacks in the objective: 1 (Σξ_i) or 2 (Σξ_i²).
    pub slack_norm: u8,
}

impl BcfwParams {
    /// Parses and validates.
    pub fn parse(params: &[(String, Value)]) -> Result<Self> {
        let r = Reader::new(Kind::Bcfw, params)?;
        let block_size = match r.raw("block_size") {
            Value::Str(s) if s == "auto" => None,
            _ => Some(r.int("block_size", |x| x >= 1, "an int ≥ 1 or 'auto'")? as usize),
        };
        Ok(BcfwParams {
            common: r.common(ObjectiveKind::Running)?,
            line_search: r.boolean("line_search")?,
            average: r.boolean("average")?,
            block_size,
            shuffle: r.boolean("shuffle")?,
            tol: r.float("tol", |x| x >= 0.0, "a finite float ≥ 0")?,
            slack_norm: r.int(
                "slack_norm",
                |x| crate::catalog::slack_norms(Kind::Bcfw).contains(&x),
                "1 or 2",
            )? as u8,
        })
    }

    /// Every parameter with its effective value.
    pub fn effective(&self) -> Vec<(&'static str, Value)> {
        let mut v = common_effective(&self.common);
        v.extend([
            ("line_search", Value::Bool(self.line_search)),
            ("average", Value::Bool(self.average)),
            (
                "block_size",
                match self.block_size {
                    Some(b) => Value::Int(b as i64),
                    None => Value::Str("auto".into()),
                },
            ),
            ("shuffle", Value::Bool(self.shuffle)),
            ("tol", Value::Float(self.tol)),
            ("slack_norm", Value::Int(i64::from(self.slack_norm))),
        ]);
        v
    }
}

impl BcfwParams {
    /// The mini-batch size for `n` instances: the given one, or [`auto_block_size`].
    pub fn block_size_for(&self, n: usize) -> usize {
        self.block_size.unwrap_or_else(|| auto_block_size(n))
    }
}

/// BCFW's default mini-batch for `n` instances: 2^⌊log2(√n/8)⌋ within [1, 8]. A mini-batch's
/// corners are up to block_size − 1 steps stale; measured (`benches/learners/bench_bcfw_batch.py`),
/// the certified gap after an epoch grows by about 0.5·block_size/√n on CoNLL-2002 esp (8 at
/// n = 8323: +4.4 %; 8 at n = 500: +19 %) and 4× less on yeast, so block_size ≤ √n/8 keeps the
/// loss per epoch to a few percent. A power of two splits evenly over 2 or 4 threads.
pub fn auto_block_size(n: usize) -> usize {
    let target = (n as f64).sqrt() / 8.0;
    let mut b = 1;
    while b < 8 && (2 * b) as f64 <= target {
        b *= 2;
    }
    b
}

/// Cutting-plane parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct CpParams {
    /// Common parameters.
    pub common: Common,
    /// n-slack (else 1-slack).
    pub n_slack: bool,
    /// Stopping tolerance per instance.
    pub eps: f64,
    /// QP solves a constraint may stay inactive.
    pub inactive_window: usize,
    /// Inactivity threshold relative to C.
    pub inactive_threshold: f64,
    /// Largest working set.
    pub max_constraints: usize,
    /// n-slack: instances between QP solves (0: all).
    pub batch_size: usize,
}

impl CpParams {
    /// Parses and validates.
    pub fn parse(params: &[(String, Value)], n_slack: bool) -> Result<Self> {
        let kind = if n_slack { Kind::CuttingPlaneN } else { Kind::CuttingPlane };
        let r = Reader::new(kind, params)?;
        Ok(CpParams {
            common: r.common(ObjectiveKind::Exact)?,
            n_slack,
            eps: r.float("eps", |x| x > 0.0, "a finite float > 0")?,
            inactive_window: r.int("inactive_window", |x| x >= 1, "an int ≥ 1")? as usize,
            inactive_threshold: r.float("inactive_threshold", |x| x >= 0.0, "a finite float ≥ 0")?,
            max_constraints: r.int("max_constraints", |x| x >= 1, "an int ≥ 1")? as usize,
            batch_size: if n_slack { r.int("batch_size", |x| x >= 0, "an int ≥ 0")? as usize } else { 0 },
        })
    }

    /// Every parameter with its effective value.
    pub fn effective(&self) -> Vec<(&'static str, Value)> {
        let mut v = common_effective(&self.common);
        v.retain(|(k, _)| *k != "objective");
        v.extend([
            ("eps", Value::Float(self.eps)),
            ("inactive_window", Value::Int(self.inactive_window as i64)),
            ("inactive_threshold", Value::Float(self.inactive_threshold)),
            ("max_constraints", Value::Int(self.max_constraints as i64)),
        ]);
        if self.n_slack {
            v.push(("batch_size", Value::Int(self.batch_size as i64)));
        }
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(k: &str, v: Value) -> (String, Value) {
        (k.to_string(), v)
    }

    #[test]
    fn auto_block_size_grows_like_the_root_of_n() {
        let got: Vec<usize> = [1, 100, 255, 256, 1023, 1024, 1500, 4095, 4096, 8323, 1 << 20]
            .iter()
            .map(|&n| auto_block_size(n))
            .collect();
        assert_eq!(got, vec![1, 1, 1, 2, 2, 4, 4, 4, 8, 8, 8]);
    }

    #[test]
    fn defaults_parse_and_errors_name_the_parameter() {
        let s = SgdParams::parse(&[]).unwrap();
        assert_eq!(s.common.c, 1.0);
        assert_eq!(s.average, Averaging::Weighted);
        let e = SgdParams::parse(&[kv("C", Value::Float(-1.0))]).unwrap_err().to_string();
        assert!(e.contains("parameter C = -1"), "{e}");
        let e = BcfwParams::parse(&[kv("schedule", Value::Str("x".into()))]).unwrap_err().to_string();
        assert!(e.contains("no parameter 'schedule'"), "{e}");
        let e = SgdParams::parse(&[kv("average", Value::Str("mean".into()))]).unwrap_err().to_string();
        assert!(e.contains("one of none, uniform, weighted"), "{e}");
        assert_eq!(BcfwParams::parse(&[]).unwrap().block_size, None);
        assert_eq!(BcfwParams::parse(&[kv("block_size", Value::Int(3))]).unwrap().block_size, Some(3));
        let e = BcfwParams::parse(&[kv("block_size", Value::Str("big".into()))]).unwrap_err().to_string();
        assert!(e.contains("block_size") && e.contains("'auto'"), "{e}");
        let c = CpParams::parse(&[kv("batch_size", Value::Int(10))], true).unwrap();
        assert_eq!(c.batch_size, 10);
        assert!(CpParams::parse(&[kv("batch_size", Value::Int(10))], false).is_err());
        assert!(CpParams::parse(&[kv("objective", Value::Str("running".into()))], false).is_err());
        let n = SgdParams::parse(&[kv("n_jobs", Value::Int(0))]).unwrap_err().to_string();
        assert!(n.contains("n_jobs"), "{n}");
        for k in [Kind::Sgd, Kind::Bcfw, Kind::CuttingPlane, Kind::CuttingPlaneN] {
            let names: Vec<&str> = docs(k).iter().map(|d| d.name).collect();
            let mut dedup = names.clone();
            dedup.sort_unstable();
            dedup.dedup();
            assert_eq!(dedup.len(), names.len(), "{k:?}");
        }
    }
}
