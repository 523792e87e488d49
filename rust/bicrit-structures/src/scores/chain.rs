//! Score-level linear chain: the `chain` structure's oracles (Viterbi, k-best, ban lists, the
//! frontier DP; [`crate::chain`]) on given scores.
//!
//! # Layout of `w` (batch B, padded length T, S tags)
//! | block | shape | flat index |
//! |---|---|---|
//! | unary | [B, T, S] | `(b·T + t)·S + s` |
//! | transitions | [S, S] (shared) or [B, T − 1, S, S] | `p·S + c` or `((b·(T − 1) + t − 1)·S + p)·S + c` (into position t) |
//! | start | [S] (optional) | `s` |
//! | end | [S] (optional) | `s` |
//!
//! Sequence b has `lengths[b]` ≥ 1 tokens; entries beyond it are ignored (and may hold anything).
//! `score(y) = Σ_t unary[t, y_t] + Σ_{t≥1} trans[y_{t−1}, y_t] + start[y_0] + end[y_{T−1}]`.
//! Task losses are those of [`crate::chain`]: token Hamming, or the chunk-level segment loss (with
//! tag names).

use bicrit_core::{Capabilities, Error, Objective, Result, SparseVec, Terms};

use super::{check_finite_named, ScoreStructure};
use crate::chain::{
    fold_tables, frontier_raw, max_loss_of, oracle_raw, path_score_raw, solve_tables_f64, terms_of,
    ChainLoss, RawScores, Tags,
};
use crate::{Scored, Structure, TermQuery};

/// A batch of chain scores (see the module documentation).
#[derive(Clone, Debug)]
pub struct ScoreChain {
    n_states: usize,
    t_max: usize,
    lengths: Vec<usize>,
    trans_per_step: bool,
    has_start: bool,
    has_end: bool,
    loss: ChainLoss,
    tags: Tags,
    zeros: Vec<f64>,
}

impl ScoreChain {
    /// A batch of `lengths.len()` sequences padded to `t_max` over `tags` (its number of states
    /// is S). `w` must then follow the module's layout ([`ScoreChain::size`]).
    pub fn new(
        tags: Tags,
        t_max: usize,
        lengths: Vec<usize>,
        trans_per_step: bool,
        has_start: bool,
        has_end: bool,
        loss: ChainLoss,
    ) -> Result<Self> {
        let n_states = tags.n_states();
        if n_states == 0 {
            return Err(Error::input("a chain needs at least one tag (S ≥ 1)"));
        }
        if loss == ChainLoss::Segment && !tags.named() {
            return Err(Error::param("the segment loss needs tag names (B-/I- structure); pass tag_names"));
        }
        if let Some((b, &l)) = lengths.iter().enumerate().find(|(_, &l)| l == 0 || l > t_max) {
            return Err(Error::input(format!(
                "lengths[{b}] = {l} must be between 1 and the padded length T = {t_max}"
            )));
        }
        Ok(ScoreChain {
            n_states,
            t_max,
            lengths,
            trans_per_step,
            has_start,
            has_end,
            loss,
            tags,
            zeros: vec![0.0; n_states],
        })
    }

    /// Number of tags S.
    pub fn n_states(&self) -> usize {
        self.n_states
    }

    /// Length of sequence `b`.
    pub fn len_of(&self, b: usize) -> usize {
        self.lengths[b]
    }

    /// The padded length T.
    pub fn t_max(&self) -> usize {
        self.t_max
    }

    fn trans_len(&self) -> usize {
        let s2 = self.n_states * self.n_states;
        if self.trans_per_step {
            self.lengths.len() * self.t_max.saturating_sub(1) * s2
        } else {
            s2
        }
    }

    fn off_trans(&self) -> usize {
        self.lengths.len() * self.t_max * self.n_states
    }

    fn off_start(&self) -> usize {
        self.off_trans() + self.trans_len()
    }

    fn off_end(&self) -> usize {
        self.off_start() + if self.has_start { self.n_states } else { 0 }
    }

    /// Length of `w`.
    pub fn size(&self) -> usize {
        self.off_end() + if self.has_end { self.n_states } else { 0 }
    }

    /// The score arrays of sequence `b`.
    fn raw<'a>(&'a self, w: &'a [f64], b: usize) -> RawScores<'a> {
        let (s_n, n) = (self.n_states, self.lengths[b]);
        let u0 = b * self.t_max * s_n;
        let s2 = s_n * s_n;
        let trans = if self.trans_per_step {
            let t0 = self.off_trans() + b * (self.t_max - 1) * s2;
            &w[t0..t0 + (n - 1) * s2]
        } else {
            &w[self.off_trans()..self.off_trans() + s2]
        };
        let pick = |has: bool, off: usize| if has { &w[off..off + s_n] } else { &self.zeros[..] };
        RawScores {
            n_states: s_n,
            unary: &w[u0..u0 + n * s_n],
            trans,
            trans_per_step: self.trans_per_step,
            start: pick(self.has_start, self.off_start()),
            end: pick(self.has_end, self.off_end()),
        }
    }

    /// Fails when a score sequence `b` uses is NaN or infinite.
    fn check_scores(&self, w: &[f64], b: usize) -> Result<()> {
        let r = self.raw(w, b);
        check_finite_named(format_args!("unary scores of sequence {b}"), r.unary)?;
        check_finite_named(format_args!("transition scores of sequence {b}"), r.trans)?;
        check_finite_named(format_args!("start scores"), r.start)?;
        check_finite_named(format_args!("end scores"), r.end)
    }

    fn check_len(&self, b: usize, y: &[usize], what: std::fmt::Arguments<'_>) -> Result<()> {
        let n = self.lengths[b];
        if y.len() != n {
            return Err(Error::input(format!(
                "{what} has length {} but sequence {b} has {n} tokens",
                y.len()
            )));
        }
        if let Some(t) = y.iter().position(|&s| s >= self.n_states) {
            return Err(Error::input(format!(
                "{what} has tag {} at position {t}, outside the tags 0..{}",
                y[t], self.n_states
            )));
        }
        Ok(())
    }

    fn check_w(&self, w: &[f64]) -> Result<()> {
        if w.len() != self.size() {
            return Err(Error::input(format!("{} scores for a chain layout of {}", w.len(), self.size())));
        }
        Ok(())
    }
}

impl Structure for ScoreChain {
    type Label = Vec<usize>;
    type Data = ();

    fn name(&self) -> &str {
        "chain"
    }

    fn max_loss(&self, _data: &(), _i: usize, y_true: &Vec<usize>) -> Option<f64> {
        max_loss_of(self.loss, y_true)
    }

    fn n_instances(&self, _data: &()) -> usize {
        self.lengths.len()
    }

    fn size_joint_feature(&self) -> usize {
        self.size()
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            ban: true,
            kbest: true,
            frontier: self.loss == ChainLoss::Hamming,
            ..Capabilities::default()
        }
    }

    fn check_label(&self, _data: &(), i: usize, y: &Vec<usize>) -> Result<()> {
        if i >= self.lengths.len() {
            return Err(Error::input(format!("sequence {i} out of range (0..{})", self.lengths.len())));
        }
        self.check_len(i, y, format_args!("label"))
    }

    /// The indicator of the score entries `y` uses (unary, transitions, start, end).
    fn joint_feature(&self, _data: &(), i: usize, y: &Vec<usize>) -> Result<SparseVec> {
        self.check_label(&(), i, y)?;
        let s_n = self.n_states;
        let mut v = SparseVec::new();
        let u0 = i * self.t_max * s_n;
        for (t, &s) in y.iter().enumerate() {
            v.push(u0 + t * s_n + s, 1.0);
            if t > 0 {
                let base = if self.trans_per_step {
                    self.off_trans() + (i * (self.t_max - 1) + t - 1) * s_n * s_n
                } else {
                    self.off_trans()
                };
                v.push(base + y[t - 1] * s_n + s, 1.0);
            }
        }
        if self.has_start {
            v.push(self.off_start() + y[0], 1.0);
        }
        if self.has_end {
            v.push(self.off_end() + y[y.len() - 1], 1.0);
        }
        Ok(v)
    }

    fn terms(&self, y: &Vec<usize>, y_true: &Vec<usize>) -> Result<Terms> {
        if y.len() != y_true.len() {
            return Err(Error::input(format!(
                "labels of different lengths ({} and {}) are not labels of one sequence",
                y.len(),
                y_true.len()
            )));
        }
        for (what, l) in [("label", y), ("gold label", y_true)] {
            if let Some(t) = l.iter().position(|&s| s >= self.n_states) {
                return Err(Error::input(format!("{what} has tag {} at position {t}", l[t])));
            }
        }
        Ok(terms_of(&self.tags, self.loss, y, y_true))
    }

    fn score(&self, w: &[f64], _data: &(), i: usize, y: &Vec<usize>) -> Result<f64> {
        self.check_w(w)?;
        self.check_label(&(), i, y)?;
        Ok(path_score_raw(&self.raw(w, i), y))
    }

    fn predict(&self, w: &[f64], _data: &(), i: usize) -> Result<Vec<usize>> {
        self.check_w(w)?;
        self.check_scores(w, i)?;
        let obj = Objective { margin: 1.0, terms: Terms::default() };
        let tab = fold_tables::<f64>(&self.raw(w, i), &self.tags, self.loss, None, &obj, None);
        let mut found = solve_tables_f64(&tab, &self.tags, self.loss, None, &obj, 1);
        found.pop().ok_or_else(|| Error::solver("Viterbi found no path"))
    }

    fn oracle(
        &self,
        w: &[f64],
        _data: &(),
        i: usize,
        y_true: &Vec<usize>,
        q: &TermQuery<'_, Vec<usize>>,
    ) -> Result<Vec<Scored<Vec<usize>>>> {
        self.check_w(w)?;
        self.check_label(&(), i, y_true)?;
        if q.cone.is_some() {
            return Err(Error::unsupported("structure 'chain' has no constrained λ-oracle (cone)"));
        }
        let mut banned: Vec<&Vec<usize>> = Vec::with_capacity(q.ban.len());
        for (j, b) in q.ban.iter().enumerate() {
            self.check_len(i, b, format_args!("ban[{j}]"))?;
            if !banned.contains(&b) {
                banned.push(b);
            }
        }
        self.check_scores(w, i)?;
        Ok(oracle_raw(&self.raw(w, i), &self.tags, self.loss, y_true, q, &banned))
    }

    fn frontier(
        &self,
        w: &[f64],
        _data: &(),
        i: usize,
        y_true: &Vec<usize>,
        objective: &Objective,
    ) -> Result<Vec<Scored<Vec<usize>>>> {
        self.check_w(w)?;
        self.check_label(&(), i, y_true)?;
        if self.loss != ChainLoss::Hamming {
            return Err(Error::unsupported(
                "structure 'chain' has a frontier query for the Hamming loss only (the segment loss is not a token count)",
            ));
        }
        self.check_scores(w, i)?;
        Ok(frontier_raw(&self.raw(w, i), &self.tags, self.loss, y_true, objective))
    }
}

impl ScoreStructure for ScoreChain {
    fn batch(&self) -> usize {
        self.lengths.len()
    }
}
