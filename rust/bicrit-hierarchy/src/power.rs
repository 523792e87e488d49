//! NHSVM node weights by the power problem (thesis eq. `beta_1`):
//!
//! min Σ_n α_n^ρ  s.t.  Σ_{n ∈ Ā(l)} α_n = 1 for every leaf l (or 1 ≤ Σ ≤ T), α ≥ 0,
//!
//! for ρ > 1 (ρ = 2 in the thesis's experiments; ρ → 1 gives the duplication invariance of
//! Theorem `thm:invarinace`), optionally with the directional constraints α_n ≥ α_parent.
//!
//! **Trees, exact sums, no directional constraints: closed form in O(M).** Let B be the budget
//! left for the subtree of n (B = 1 at the root; Σ over the path from n down to every leaf must
//! be B). The subtree's optimum is f_n(B) = K_n·B^ρ by homogeneity, with K_leaf = 1 (α_l = B).
//! At an internal node, with S = Σ_{c ∈ C(n)} K_c and α_n = k·B,
//! f_n(B) = B^ρ·min_k k^ρ + S(1 − k)^ρ, whose minimiser is k = S^q / (1 + S^q) with
//! q = 1/(ρ − 1), and K_n = S / (1 + S^q)^(ρ−1). Then α_n = k_n·B_n and B_c = (1 − k_n)·B_n top
//! down. Near ρ = 1 the exponent q is large (100 at ρ = 1.01), so the recursion runs in logs:
//! k = sigmoid(q ln S), ln K = ln S − (ρ − 1)·softplus(q ln S), ln S = logsumexp(ln K_c).
//!
//! A chain of single-child nodes (duplicated nodes) gets equal weights: on a chain the child's
//! K is the only term of S, and the split is symmetric; as ρ → 1 the factor |F|^(ρ−1) of the
//! theorem's proof tends to 1 and the chain's total tends to the merged node's weight.
//!
//! **Otherwise** (DAGs, the relaxed range, directional constraints): a conic program, ρ = 2 as a
//! QP (P = 2I), general ρ with one power cone per node, (t_n, 1, α_n) ∈ K_pow(1/ρ) ⇔
//! |α_n|^ρ ≤ t_n, minimising Σ t_n. The power cone stays well-posed for ρ close to 1 (its
//! exponent 1/ρ tends to 1, not to a boundary of (0, 1)).

use bicrit_core::{Error, Result};

use crate::conic::{Cone3, Program, Row};
use crate::paths::LeafPaths;
use crate::{clean_nonneg, AlphaSolution, AlphaSolver, HierarchyGraph, LeafSum, Method};

/// Which algorithm [`PowerAlpha`] uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerMethod {
    /// The closed form when it applies (tree, exact sums, no directional constraints), else conic.
    Auto,
    /// The closed form; an error when it does not apply.
    ClosedForm,
    /// The conic program.
    Conic,
}

/// The power problem (see the module documentation).
#[derive(Clone, Debug)]
pub struct PowerAlpha {
    /// ρ > 1.
    pub rho: f64,
    /// Leaf-sum constraint ([`LeafSum::Exact`] or [`LeafSum::Range`]).
    pub sum: LeafSum,
    /// α_n ≥ α_parent on every edge.
    pub directional: bool,
    /// Count the root (the thesis's problem); `false` fixes α_root = 0 (see the crate docs).
    pub include_root: bool,
    /// Algorithm.
    pub method: PowerMethod,
}

impl PowerAlpha {
    /// ρ with exact sums, no directional constraints, automatic method.
    pub fn new(rho: f64) -> Self {
        PowerAlpha {
            rho,
            sum: LeafSum::Exact,
            directional: false,
            include_root: true,
            method: PowerMethod::Auto,
        }
    }

    fn check(&self) -> Result<()> {
        if !(self.rho.is_finite() && self.rho > 1.0) {
            return Err(Error::param(format!(
                "rho must be finite and > 1 for the power problem, got {} (rho = 1 is the max-min problem)",
                self.rho
            )));
        }
        if self.sum == LeafSum::AtMost {
            return Err(Error::param("the power problem takes exact or range leaf sums"));
        }
        self.sum.check()?;
        Ok(())
    }

    /// Does the closed form apply to `g`?
    pub fn closed_form_applies(&self, g: &HierarchyGraph) -> bool {
        g.is_tree() && self.sum == LeafSum::Exact && !self.directional
    }

    /// The closed-form solution on a tree (module documentation).
    pub fn closed_form(&self, g: &HierarchyGraph) -> Result<Vec<f64>> {
        self.check()?;
        if !self.closed_form_applies(g) {
            return Err(Error::unsupported(
                "the closed-form power solution needs a tree, exact leaf sums and no directional constraints",
            ));
        }
        let m = g.n_nodes();
        let q = 1.0 / (self.rho - 1.0);
        let mut ln_k = vec![0.0f64; m];
        // z_n = q·ln S_n for internal nodes (the share k_n = sigmoid(z_n)); leaves take all.
        let mut z = vec![f64::INFINITY; m];
        for &v in g.topo().iter().rev() {
            let v = v as usize;
            let ch = g.children(v);
            if ch.is_empty() {
                continue; // K = 1, ln K = 0
            }
            let mx = ch.iter().map(|&c| ln_k[c as usize]).fold(f64::NEG_INFINITY, f64::max);
            let ln_s = mx + ch.iter().map(|&c| (ln_k[c as usize] - mx).exp()).sum::<f64>().ln();
            let zv = q * ln_s;
            z[v] = zv;
            ln_k[v] = ln_s - (self.rho - 1.0) * softplus(zv);
        }
        if !self.include_root {
            z[g.root()] = f64::NEG_INFINITY; // share 0: the children get the whole budget
        }
        let mut alpha = vec![0.0; m];
        let mut budget = vec![0.0; m];
        for &v in g.topo() {
            let v = v as usize;
            let b = g.parents(v).first().map_or(1.0, |&p| {
                let p = p as usize;
                budget[p] * sigmoid(-z[p])
            });
            budget[v] = b;
            alpha[v] = if g.is_leaf(v) { b } else { b * sigmoid(z[v]) };
        }
        Ok(alpha)
    }

    /// The conic program (module documentation).
    pub fn conic(&self, g: &HierarchyGraph) -> Result<Vec<f64>> {
        self.check()?;
        let m = g.n_nodes();
        let paths = LeafPaths::new(g);
        let mut prog = Program::new(m);
        prog.leaf_sums(g, &paths, 0, self.sum);
        prog.nonneg(0, m);
        if self.directional {
            prog.directional(g, 0);
        }
        if !self.include_root {
            prog.eq(vec![(g.root(), 1.0)], 0.0);
        }
        if self.rho == 2.0 {
            for v in 0..m {
                prog.add_diag(v, 2.0);
            }
        } else {
            let t = prog.add_vars(m);
            for v in 0..m {
                prog.set_linear(t + v, 1.0);
                prog.cone(
                    Cone3::Power(1.0 / self.rho),
                    [
                        Row::new(vec![(t + v, -1.0)], 0.0),
                        Row::new(vec![], 1.0),
                        Row::new(vec![(v, -1.0)], 0.0),
                    ],
                );
            }
        }
        let x = prog.solve("the power problem for α")?;
        let mut alpha = x[..m].to_vec();
        clean_nonneg(&mut alpha);
        Program::repair_leaf_sums(&paths, &mut alpha, self.sum);
        Ok(alpha)
    }
}

impl AlphaSolver for PowerAlpha {
    fn name(&self) -> &'static str {
        "power"
    }

    fn solve(&self, g: &HierarchyGraph) -> Result<AlphaSolution> {
        self.check()?;
        let (alpha, method) = match self.method {
            PowerMethod::Conic => (self.conic(g)?, Method::Conic),
            PowerMethod::ClosedForm => (self.closed_form(g)?, Method::ClosedForm),
            PowerMethod::Auto if self.closed_form_applies(g) => (self.closed_form(g)?, Method::ClosedForm),
            PowerMethod::Auto => (self.conic(g)?, Method::Conic),
        };
        let objective = self.objective(g, &alpha);
        Ok(AlphaSolution { alpha, objective, method })
    }

    fn objective(&self, _g: &HierarchyGraph, alpha: &[f64]) -> f64 {
        alpha.iter().map(|&a| a.max(0.0).powf(self.rho)).sum()
    }
}

/// 1 / (1 + e^{−x}) without overflow.
fn sigmoid(x: f64) -> f64 {
    if x >= 0.0 {
        1.0 / (1.0 + (-x).exp())
    } else {
        let e = x.exp();
        e / (1.0 + e)
    }
}

/// ln(1 + e^x) without overflow.
fn softplus(x: f64) -> f64 {
    x.max(0.0) + (-x.abs()).exp().ln_1p()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paths::max_violation;

    fn tree(parents: &[i64]) -> HierarchyGraph {
        let ps: Vec<Vec<usize>> =
            parents.iter().map(|&p| if p < 0 { vec![] } else { vec![p as usize] }).collect();
        let root = parents.iter().position(|&p| p < 0).unwrap();
        HierarchyGraph::new(&ps, root, None).unwrap()
    }

    #[test]
    fn two_leaves_rho_two() {
        // r → a, b: min r² + a² + b², r + a = r + b = 1 ⇒ r = 2/3.
        let g = tree(&[-1, 0, 0]);
        let a = PowerAlpha::new(2.0).closed_form(&g).unwrap();
        assert!((a[0] - 2.0 / 3.0).abs() < 1e-15 && (a[1] - 1.0 / 3.0).abs() < 1e-15, "{a:?}");
    }

    #[test]
    fn closed_form_equals_conic_on_trees() {
        let g = tree(&[-1, 0, 0, 1, 1, 1, 2, 6, 6, 7]);
        let paths = LeafPaths::new(&g);
        for rho in [1.01, 1.3, 2.0, 3.5] {
            let p = PowerAlpha::new(rho);
            let a = p.closed_form(&g).unwrap();
            let b = p.conic(&g).unwrap();
            assert!(max_violation(&paths, &a, LeafSum::Exact) < 1e-12);
            assert!(max_violation(&paths, &b, LeafSum::Exact) < 1e-7);
            let (fa, fb) = (p.objective(&g, &a), p.objective(&g, &b));
            assert!((fa - fb).abs() < 1e-7 * (1.0 + fa), "rho {rho}: {fa} vs {fb}");
        }
    }

    #[test]
    fn duplicated_chain_is_split_evenly() {
        // r → a → a' → l (a chain of duplicates) and r → b: a, a', l equal.
        let g = tree(&[-1, 0, 1, 2, 0]);
        for rho in [1.05, 2.0] {
            let a = PowerAlpha::new(rho).closed_form(&g).unwrap();
            assert!((a[1] - a[2]).abs() < 1e-14 && (a[2] - a[3]).abs() < 1e-14, "{a:?}");
        }
    }

    #[test]
    fn rootless_is_the_rescaled_rooted_solution() {
        let g = tree(&[-1, 0, 0, 1, 1, 1, 2, 6, 6, 7]);
        for rho in [1.2, 2.0] {
            let with = PowerAlpha::new(rho).closed_form(&g).unwrap();
            let p = PowerAlpha { include_root: false, ..PowerAlpha::new(rho) };
            let without = p.closed_form(&g).unwrap();
            let conic = p.conic(&g).unwrap();
            assert_eq!(without[0], 0.0);
            assert!(max_violation(&LeafPaths::new(&g), &without, LeafSum::Exact) < 1e-12);
            for v in 1..g.n_nodes() {
                assert!((with[v] - (1.0 - with[0]) * without[v]).abs() < 1e-12, "{with:?} {without:?}");
                assert!((conic[v] - without[v]).abs() < 1e-5, "{conic:?} {without:?}");
            }
            let (fa, fb) = (p.objective(&g, &without), p.objective(&g, &conic));
            assert!((fa - fb).abs() < 1e-7 * (1.0 + fa), "{fa} vs {fb}");
        }
    }

    #[test]
    fn bad_rho_is_refused() {
        let g = tree(&[-1, 0, 0]);
        for rho in [1.0, 0.5, f64::NAN, f64::INFINITY] {
            assert!(PowerAlpha::new(rho).solve(&g).is_err());
        }
        let p = PowerAlpha { sum: LeafSum::Range(0.5), ..PowerAlpha::new(2.0) };
        assert!(p.solve(&g).unwrap_err().to_string().contains("T must be"));
    }
}
