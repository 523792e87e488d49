//! Score-level hierarchies: node scores σ [B, M] (`w[b·M + n]`) over a tree or DAG, labels as
//! ancestor-closed node sets, every loss, label space and exact oracle of
//! [`crate::hierarchy`] (tree DP, min-cut, LP/IP, enumeration) through
//! [`HierarchyStructure::oracle_from_scores`]. `score(y) = Σ_{n ∈ y} σ_n`.

use bicrit_core::{Capabilities, Error, Result, SparseVec, Terms};

use super::{check_finite_named, ScoreStructure};
use crate::hierarchy::{HierLabel, HierarchyStructure};
use crate::{Scored, Structure, TermQuery};

/// A batch of node scores over one hierarchy.
#[derive(Clone, Debug)]
pub struct ScoreHierarchy {
    batch: usize,
    h: HierarchyStructure,
}

impl ScoreHierarchy {
    /// `batch` rows of node scores over `h` (its feature count and node scales are not used: the
    /// scores are given).
    pub fn new(batch: usize, h: HierarchyStructure) -> Self {
        ScoreHierarchy { batch, h }
    }

    /// Number of nodes M.
    pub fn n_nodes(&self) -> usize {
        self.h.n_nodes()
    }

    fn row<'a>(&self, w: &'a [f64], i: usize) -> Result<&'a [f64]> {
        let m = self.h.n_nodes();
        if w.len() != self.batch * m {
            return Err(Error::input(format!("{} scores for a [{}, {m}] layout", w.len(), self.batch)));
        }
        let r = &w[i * m..(i + 1) * m];
        check_finite_named(format_args!("node scores of example {i}"), r)?;
        Ok(r)
    }
}

impl Structure for ScoreHierarchy {
    type Label = HierLabel;
    type Data = ();

    fn name(&self) -> &str {
        "hierarchy"
    }

    fn n_instances(&self, _data: &()) -> usize {
        self.batch
    }

    fn size_joint_feature(&self) -> usize {
        self.batch * self.h.n_nodes()
    }

    fn capabilities(&self) -> Capabilities {
        self.h.capabilities()
    }

    fn check_label(&self, _data: &(), i: usize, y: &HierLabel) -> Result<()> {
        if i >= self.batch {
            return Err(Error::input(format!("example {i} out of range (0..{})", self.batch)));
        }
        self.h.check(y)
    }

    fn joint_feature(&self, _data: &(), i: usize, y: &HierLabel) -> Result<SparseVec> {
        self.check_label(&(), i, y)?;
        let m = self.h.n_nodes();
        let mut v = SparseVec::new();
        for &n in y {
            v.push(i * m + n as usize, 1.0);
        }
        Ok(v)
    }

    fn terms(&self, y: &HierLabel, y_true: &HierLabel) -> Result<Terms> {
        self.h.terms(y, y_true)
    }

    fn score(&self, w: &[f64], _data: &(), i: usize, y: &HierLabel) -> Result<f64> {
        self.check_label(&(), i, y)?;
        let r = self.row(w, i)?;
        Ok(y.iter().map(|&n| r[n as usize]).sum())
    }

    fn predict(&self, w: &[f64], _data: &(), i: usize) -> Result<HierLabel> {
        self.h.predict_from_scores(self.row(w, i)?)
    }

    fn oracle(
        &self,
        w: &[f64],
        _data: &(),
        i: usize,
        y_true: &HierLabel,
        q: &TermQuery<'_, HierLabel>,
    ) -> Result<Vec<Scored<HierLabel>>> {
        self.h.oracle_from_scores(self.row(w, i)?, y_true, q)
    }
}

impl ScoreStructure for ScoreHierarchy {
    fn batch(&self) -> usize {
        self.batch
    }
}
