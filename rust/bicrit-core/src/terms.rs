//! Decomposable terms a structure's oracle can add to the margin (docs/architecture.md,
//! Objects). Every structure knows at least the task loss and the label size |y|; chains
//! and multi-label structures also know the indicator-set Hamming distance that the Micro-F1
//! surrogate needs (a token costs 0, 1 or 2; thesis §`sec:microf1`).

/// Values of the decomposable terms for one label y against the gold label y_i.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Terms {
    /// Task loss L(y, y_i) (Hamming, 0-1, tree loss, …).
    pub loss: f64,
    /// Label size |y|: positive labels (multi-label), non-O tokens (chains), nodes (hierarchy).
    pub size: f64,
    /// Hamming distance between indicator sets, H(y, y_i) of the Micro-F1 surrogate.
    pub hamming: f64,
}

impl Terms {
    /// Names of the terms, in the order of [`Terms::to_array`]; the Python protocol uses them as
    /// keys of the `coef` dictionary.
    pub const NAMES: [&'static str; 3] = ["loss", "size", "hamming"];

    /// The terms as an array in the order of [`Terms::NAMES`].
    pub fn to_array(self) -> [f64; 3] {
        [self.loss, self.size, self.hamming]
    }

    /// Builds terms from an array in the order of [`Terms::NAMES`].
    pub fn from_array(a: [f64; 3]) -> Self {
        Terms { loss: a[0], size: a[1], hamming: a[2] }
    }

    /// Σ_t c_t · term_t.
    pub fn dot(&self, c: &Terms) -> f64 {
        self.loss * c.loss + self.size * c.size + self.hamming * c.hamming
    }

    /// Componentwise a·self + b·other (fractional labels are convex combinations).
    pub fn combine(&self, a: f64, other: &Terms, b: f64) -> Terms {
        Terms {
            loss: a * self.loss + b * other.loss,
            size: a * self.size + b * other.size,
            hamming: a * self.hamming + b * other.hamming,
        }
    }

    /// Is every coefficient zero?
    pub fn is_zero(&self) -> bool {
        self.loss == 0.0 && self.size == 0.0 && self.hamming == 0.0
    }
}

/// A linear objective over a label: `margin · m(y) + Σ_t terms_t · term_t(y)`.
///
/// A structure's oracle maximises a [`Objective`] (the `primary`), breaking exact ties by a second
/// one when asked (lexicographic queries: λ = 0 and λ = ∞ are never huge or tiny floats).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Objective {
    /// Coefficient of the margin m(y) = w·φ(x, y) − w·φ(x, y_i).
    pub margin: f64,
    /// Coefficients of the decomposable terms.
    pub terms: Terms,
}

impl Objective {
    /// Margin-rescaled inference with the loss weighted by `lam`: m(y) + λ·L(y, y_i).
    pub fn loss_augmented(lam: f64) -> Self {
        Objective { margin: 1.0, terms: Terms { loss: lam, ..Terms::default() } }
    }

    /// Value of the objective at a label with margin `m` and terms `t`.
    pub fn value(&self, m: f64, t: &Terms) -> f64 {
        self.margin * m + t.dot(&self.terms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objective_value_is_linear() {
        let t = Terms { loss: 2.0, size: 3.0, hamming: 4.0 };
        let o = Objective { margin: 1.0, terms: Terms { loss: 0.5, size: -1.0, hamming: 1.0 } };
        assert_eq!(o.value(1.5, &t), 1.5 + 1.0 - 3.0 + 4.0);
        assert_eq!(Terms::from_array(t.to_array()), t);
        let mid = t.combine(0.5, &Terms::default(), 0.5);
        assert_eq!(mid.size, 1.5);
    }
}
