//! Multiclass: one weight block per class, 0-1 loss, oracle by enumeration (docs/architecture.md, Structures; the flat
//! baseline). Every query is answered: ban list, k-best, cone and the frontier by loss value (the
//! gold class for loss 0, the best other class for loss 1).

use bicrit_core::{Capabilities, CsrMatrix, Error, Result, SparseVec, Terms};

use crate::select::{frontier_by_loss, select_best};
use crate::{Scored, Structure, TermQuery};

/// φ(x, y) = x placed in block y of K blocks of `n_features`; L(y, y_i) = [y ≠ y_i].
///
/// Terms: `loss` = 0-1 loss, `size` = 1 (one class per label), `hamming` = indicator-set Hamming
/// distance between {y} and {y_i} (0 or 2).
#[derive(Clone, Debug)]
pub struct Multiclass {
    n_classes: usize,
    n_features: usize,
}

impl Multiclass {
    /// A structure over `n_classes ≥ 2` classes and `n_features ≥ 1` features.
    pub fn new(n_classes: usize, n_features: usize) -> Result<Self> {
        if n_classes < 2 {
            return Err(Error::param(format!("n_classes must be at least 2, got {n_classes}")));
        }
        if n_features == 0 {
            return Err(Error::param("n_features must be at least 1"));
        }
        Ok(Multiclass { n_classes, n_features })
    }

    /// Number of classes K.
    pub fn n_classes(&self) -> usize {
        self.n_classes
    }

    /// Number of input features d.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    fn check_data(&self, data: &CsrMatrix) -> Result<()> {
        if data.n_cols != self.n_features {
            return Err(Error::input(format!(
                "X has {} features but the structure was initialised with {}",
                data.n_cols, self.n_features
            )));
        }
        Ok(())
    }

    /// Every class as a scored label against `y_true` (the oracles enumerate the K classes).
    fn every_class(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y_true: &usize,
    ) -> Result<Vec<Scored<usize>>> {
        self.check_data(data)?;
        self.check_label(data, i, y_true)?;
        let scores = self.class_scores(w, data, i);
        let gold = scores[*y_true];
        (0..self.n_classes)
            .map(|k| Ok(Scored { label: k, margin: scores[k] - gold, terms: self.terms(&k, y_true)? }))
            .collect()
    }

    fn class_scores(&self, w: &[f64], data: &CsrMatrix, i: usize) -> Vec<f64> {
        let x = data.view();
        (0..self.n_classes).map(|k| x.row_dot(i, w, k * self.n_features)).collect()
    }
}

impl Structure for Multiclass {
    type Label = usize;
    type Data = CsrMatrix;

    fn name(&self) -> &str {
        "multiclass"
    }

    fn n_instances(&self, data: &CsrMatrix) -> usize {
        data.n_rows()
    }

    fn size_joint_feature(&self) -> usize {
        self.n_classes * self.n_features
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities { ban: true, kbest: true, cone: true, frontier: true, ..Capabilities::default() }
    }

    fn check_label(&self, _data: &CsrMatrix, _i: usize, y: &usize) -> Result<()> {
        if *y >= self.n_classes {
            return Err(Error::input(format!("label {y} outside the classes 0..{}", self.n_classes)));
        }
        Ok(())
    }

    fn joint_feature(&self, data: &CsrMatrix, i: usize, y: &usize) -> Result<SparseVec> {
        self.check_data(data)?;
        self.check_label(data, i, y)?;
        let mut v = SparseVec::new();
        v.push_row(&data.view(), i, y * self.n_features, 1.0);
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

    fn predict(&self, w: &[f64], data: &CsrMatrix, i: usize) -> Result<usize> {
        self.check_data(data)?;
        let scores = self.class_scores(w, data, i);
        // First maximum: deterministic tie-break towards the smaller class index.
        let mut best = 0;
        for (k, &s) in scores.iter().enumerate() {
            if s > scores[best] {
                best = k;
            }
        }
        Ok(best)
    }

    fn oracle(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y_true: &usize,
        q: &TermQuery<'_, usize>,
    ) -> Result<Vec<Scored<usize>>> {
        Ok(select_best(q, self.every_class(w, data, i, y_true)?))
    }

    fn frontier(
        &self,
        w: &[f64],
        data: &CsrMatrix,
        i: usize,
        y_true: &usize,
        objective: &bicrit_core::Objective,
    ) -> Result<Vec<Scored<usize>>> {
        Ok(frontier_by_loss(objective, self.every_class(w, data, i, y_true)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bicrit_core::{Cone, Objective};

    fn setup() -> (Multiclass, CsrMatrix, Vec<f64>) {
        let s = Multiclass::new(3, 2).unwrap();
        let x = CsrMatrix::from_dense(&[vec![1.0, 2.0]], 2).unwrap();
        // class scores: 1, 3, 2
        let w = vec![1.0, 0.0, 1.0, 1.0, 0.0, 1.0];
        (s, x, w)
    }

    #[test]
    fn oracle_is_loss_augmented_argmax() {
        let (s, x, w) = setup();
        // gold 1 (score 3): margins −2, 0, −1; with λ = 1.5 class 2 scores −1 + 1.5 = 0.5 > 0.
        let a = s.oracle(&w, &x, 0, &1, &TermQuery::loss_augmented(1.5)).unwrap();
        assert_eq!(a[0].label, 2);
        assert_eq!(a[0].margin, -1.0);
        let b = s.oracle(&w, &x, 0, &1, &TermQuery::loss_augmented(0.5)).unwrap();
        assert_eq!(b[0].label, 1);
    }

    #[test]
    fn ban_kbest_cone() {
        let (s, x, w) = setup();
        let q = TermQuery { ban: &[1], k: 2, ..TermQuery::loss_augmented(0.5) };
        let a = s.oracle(&w, &x, 0, &1, &q).unwrap();
        assert_eq!(a.iter().map(|s| s.label).collect::<Vec<_>>(), vec![2, 0]);
        // cone G ≥ 0.6·H with H = 1 + m: class 0 (H = −1) passes, class 2 (H = 0) passes, gold (H = 1, G = 0) fails
        let cone = Cone { lo: 0.6, lo_closed: true, hi: f64::INFINITY, hi_closed: false };
        let q = TermQuery { cone: Some(cone), k: 3, ..TermQuery::loss_augmented(0.0) };
        let a = s.oracle(&w, &x, 0, &1, &q).unwrap();
        assert_eq!(a.iter().map(|s| s.label).collect::<Vec<_>>(), vec![2, 0]);
    }

    #[test]
    fn lexicographic_secondary_breaks_ties() {
        let (s, x, w) = setup();
        // primary = loss only: classes 0 and 2 tie at 1; secondary = margin prefers class 2.
        let q = TermQuery {
            primary: Objective { margin: 0.0, terms: Terms { loss: 1.0, ..Terms::default() } },
            secondary: Some(Objective { margin: 1.0, terms: Terms::default() }),
            ..TermQuery::loss_augmented(0.0)
        };
        assert_eq!(s.oracle(&w, &x, 0, &1, &q).unwrap()[0].label, 2);
    }

    #[test]
    fn bad_input_is_an_error() {
        let (s, x, w) = setup();
        assert!(s.oracle(&w, &x, 0, &7, &TermQuery::loss_augmented(1.0)).is_err());
        let wide = CsrMatrix::from_dense(&[vec![1.0, 2.0, 3.0]], 3).unwrap();
        assert!(s.predict(&w, &wide, 0).is_err());
        assert!(Multiclass::new(1, 2).is_err());
    }
}
