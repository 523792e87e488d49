//! Lazy weighted averages of iterates that change sparsely (Polyak–Ruppert averaging without O(D)
//! work per step).
//!
//! The iterate is w_t = s_t·v_t (s = 1 for learners without lazy scaling). The running sum
//! S_t = Σ_{τ ≤ t} ρ_τ·w_τ is kept as S = u + r·v for a dense u and a scalar r:
//! * a sparse change v ← v + δ keeps S if u ← u − r·δ (O(nnz δ));
//! * the end of step t adds ρ_t·s_t·v: r ← r + ρ_t·s_t (O(1));
//! * a renormalisation v ← s·v, s ← 1 (O(D) anyway) first folds r·v into u: u ← u + r·v, r ← 0.
//!   (Keeping S by r ← r/s instead is exact in theory but lets r grow by 1/s at every
//!   renormalisation, and u ≈ S − r·v then cancels catastrophically once the Pegasos projection
//!   makes renormalisations frequent.)
//! * resetting v to zero keeps S the same way: u ← u + r·v, r ← 0 (O(D), rare).

use bicrit_core::SparseVec;

/// S = u + r·v, with the total weight Σρ.
#[derive(Debug, PartialEq)]
pub struct LazyAverage {
    u: Vec<f64>,
    r: f64,
    total: f64,
}

impl Clone for LazyAverage {
    fn clone(&self) -> Self {
        LazyAverage { u: self.u.clone(), r: self.r, total: self.total }
    }

    /// Reuses `self`'s buffer (no allocation when it is large enough).
    fn clone_from(&mut self, source: &Self) {
        self.u.clone_from(&source.u);
        self.r = source.r;
        self.total = source.total;
    }
}

impl LazyAverage {
    /// An empty average over vectors of length `dim`.
    pub fn new(dim: usize) -> Self {
        LazyAverage { u: vec![0.0; dim], r: 0.0, total: 0.0 }
    }

    /// Records v ← v + scale·delta.
    #[inline]
    pub fn on_update(&mut self, delta: &SparseVec, scale: f64) {
        if self.r != 0.0 {
            let k = -self.r * scale;
            for (&i, &x) in delta.indices.iter().zip(&delta.values) {
                self.u[i] += k * x;
            }
        }
    }

    /// Applies v ← v + scale·delta to `v` and records it: [`LazyAverage::on_update`] and the
    /// update in one pass over delta's entries (the same arithmetic as the two apart).
    #[inline]
    pub fn on_update_axpy(&mut self, v: &mut [f64], delta: &SparseVec, scale: f64) {
        if self.r != 0.0 {
            let k = -self.r * scale;
            for (&i, &x) in delta.indices.iter().zip(&delta.values) {
                self.u[i] += k * x;
                v[i] += scale * x;
            }
        } else {
            for (&i, &x) in delta.indices.iter().zip(&delta.values) {
                v[i] += scale * x;
            }
        }
    }

    /// Adds the current iterate s·v with weight ρ (end of a step).
    #[inline]
    pub fn on_step(&mut self, s: f64, rho: f64) {
        self.r += rho * s;
        self.total += rho;
    }

    /// Folds the current r·v into u (r ← 0): call before v is rescaled (v ← s·v) or reset to 0.
    pub fn on_reset(&mut self, v: &[f64]) {
        if self.r != 0.0 {
            for (u, &x) in self.u.iter_mut().zip(v) {
                *u += self.r * x;
            }
        }
        self.r = 0.0;
    }

    /// Total weight Σρ so far (0: no step averaged yet).
    pub fn total(&self) -> f64 {
        self.total
    }

    /// The average S/Σρ given the current v, or None before the first step.
    pub fn average(&self, v: &[f64]) -> Option<Vec<f64>> {
        if self.total <= 0.0 {
            return None;
        }
        let inv = 1.0 / self.total;
        Some(self.u.iter().zip(v).map(|(&u, &x)| (u + self.r * x) * inv).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_explicit_weighted_average() {
        // iterates w = s·v with sparse changes, shrinks and a renormalisation
        let dim = 4;
        let mut v = vec![0.0; dim];
        let mut s = 1.0;
        let mut avg = LazyAverage::new(dim);
        let mut explicit = vec![0.0; dim];
        let mut total = 0.0;
        for t in 1..=20u32 {
            s *= 0.9;
            let mut d = SparseVec::new();
            d.push((t % 4) as usize, f64::from(t));
            d.push(((t + 1) % 4) as usize, -1.0);
            let scale = 0.5 / s;
            avg.on_update(&d, scale);
            for (&i, &x) in d.indices.iter().zip(&d.values) {
                v[i] += scale * x;
            }
            if t == 10 {
                avg.on_reset(&v);
                v.iter_mut().for_each(|x| *x *= s);
                s = 1.0;
            }
            if t == 15 {
                avg.on_reset(&v);
                v.iter_mut().for_each(|x| *x = 0.0);
            }
            let rho = f64::from(t);
            avg.on_step(s, rho);
            for i in 0..dim {
                explicit[i] += rho * s * v[i];
            }
            total += rho;
        }
        let got = avg.average(&v).unwrap();
        for i in 0..dim {
            let want = explicit[i] / total;
            assert!((got[i] - want).abs() < 1e-9 * (1.0 + want.abs()), "{i}: {} vs {want}", got[i]);
        }
        assert!(LazyAverage::new(2).average(&[1.0, 2.0]).is_none());
    }
}
