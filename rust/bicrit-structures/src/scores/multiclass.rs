//! Score-level multiclass: class scores [B, K] (`w[b·K + k]`), 0-1 loss, oracle by enumeration
//! (every query: ban list, k-best, cone and the frontier by loss value; [`crate::multiclass`]).

use bicrit_core::{Capabilities, Error, Objective, Result, SparseVec, Terms};

use super::{check_finite_named, ScoreStructure};
use crate::select::{frontier_by_loss, select_best};
use crate::{Scored, Structure, TermQuery};

/// A batch of class scores.
#[derive(Clone, Debug)]
pub struct ScoreMulticlass {
    batch: usize,
    n_classes: usize,
}

impl ScoreMulticlass {
    /// `batch` rows of `n_classes ≥ 2` scores.
    pub fn new(batch: usize, n_classes: usize) -> Result<Self> {
        if n_classes < 2 {
            return Err(Error::input(format!("multiclass scores need at least 2 classes, got {n_classes}")));
        }
        Ok(ScoreMulticlass { batch, n_classes })
    }

    fn row<'a>(&self, w: &'a [f64], i: usize) -> Result<&'a [f64]> {
        if w.len() != self.batch * self.n_classes {
            return Err(Error::input(format!(
                "{} scores for a [{}, {}] layout",
                w.len(),
                self.batch,
                self.n_classes
            )));
        }
        let r = &w[i * self.n_classes..(i + 1) * self.n_classes];
        check_finite_named(format_args!("scores of example {i}"), r)?;
        Ok(r)
    }

    fn every_class(&self, w: &[f64], i: usize, y_true: usize) -> Result<Vec<Scored<usize>>> {
        self.check_label(&(), i, &y_true)?;
        let r = self.row(w, i)?;
        (0..self.n_classes)
            .map(|k| Ok(Scored { label: k, margin: r[k] - r[y_true], terms: self.terms(&k, &y_true)? }))
            .collect()
    }
}

impl Structure for ScoreMulticlass {
    type Label = usize;
    type Data = ();

    fn name(&self) -> &str {
        "multiclass"
    }

    fn n_instances(&self, _data: &()) -> usize {
        self.batch
    }

    fn size_joint_feature(&self) -> usize {
        self.batch * self.n_classes
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { ban: true, kbest: true, cone: true, frontier: true, ..Capabilities::default() }
    }

    fn check_label(&self, _data: &(), i: usize, y: &usize) -> Result<()> {
        if i >= self.batch {
            return Err(Error::input(format!("example {i} out of range (0..{})", self.batch)));
        }
        if *y >= self.n_classes {
            return Err(Error::input(format!("label {y} outside the classes 0..{}", self.n_classes)));
        }
        Ok(())
    }

    fn joint_feature(&self, _data: &(), i: usize, y: &usize) -> Result<SparseVec> {
        self.check_label(&(), i, y)?;
        let mut v = SparseVec::new();
        v.push(i * self.n_classes + y, 1.0);
        Ok(v)
    }

    fn terms(&self, y: &usize, y_true: &usize) -> Result<Terms> {
        for l in [y, y_true] {
            if *l >= self.n_classes {
                return Err(Error::input(format!("label {l} outside the classes 0..{}", self.n_classes)));
            }
        }
        let wrong = if y == y_true { 0.0 } else { 1.0 };
        Ok(Terms { loss: wrong, size: 1.0, hamming: 2.0 * wrong })
    }

    fn score(&self, w: &[f64], _data: &(), i: usize, y: &usize) -> Result<f64> {
        self.check_label(&(), i, y)?;
        Ok(self.row(w, i)?[*y])
    }

    fn predict(&self, w: &[f64], _data: &(), i: usize) -> Result<usize> {
        let r = self.row(w, i)?;
        let mut best = 0;
        for (k, &s) in r.iter().enumerate() {
            if s > r[best] {
                best = k;
            }
        }
        Ok(best)
    }

    fn oracle(
        &self,
        w: &[f64],
        _data: &(),
        i: usize,
        y_true: &usize,
        q: &TermQuery<'_, usize>,
    ) -> Result<Vec<Scored<usize>>> {
        Ok(select_best(q, self.every_class(w, i, *y_true)?))
    }

    fn frontier(
        &self,
        w: &[f64],
        _data: &(),
        i: usize,
        y_true: &usize,
        objective: &Objective,
    ) -> Result<Vec<Scored<usize>>> {
        Ok(frontier_by_loss(objective, self.every_class(w, i, *y_true)?))
    }
}

impl ScoreStructure for ScoreMulticlass {
    fn batch(&self) -> usize {
        self.batch
    }
}
