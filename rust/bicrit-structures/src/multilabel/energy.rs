//! Linear forms over the local polytope of a binary pairwise MRF.
//!
//! Every quantity the oracle needs — the score w·φ, the Hamming loss, the label size |y| and any
//! objective `c_m·m(y) + Σ_t c_t·term_t(y)` — is linear in the marginals (thesis ch. 4: h and g are
//! linear on fractional labels). With node marginals μ_k = P(y_k = 1) and, per edge, z_e = μ_e(1, 1),
//! the marginalisation constraints give the other three edge states
//! (μ_e(0,0), μ_e(0,1), μ_e(1,0)) = (1 − μ_i − μ_j + z, μ_j − z, μ_i − z), so every such function is
//! `constant + Σ_k node_k·μ_k + Σ_e edge_e·z_e`: a QUBO over {0,1}^K on integral labels and the
//! objective of the local-polytope LP on relaxed ones.

use bicrit_core::Objective;

/// `constant + Σ_k node[k]·μ_k + Σ_e edge[e]·z_e`.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct LinForm {
    pub node: Vec<f64>,
    pub edge: Vec<f64>,
    pub constant: f64,
}

impl LinForm {
    pub fn zeros(n_nodes: usize, n_edges: usize) -> Self {
        LinForm { node: vec![0.0; n_nodes], edge: vec![0.0; n_edges], constant: 0.0 }
    }

    /// self += s · other.
    pub fn add_scaled(&mut self, other: &LinForm, s: f64) {
        if s == 0.0 {
            return;
        }
        for (a, b) in self.node.iter_mut().zip(&other.node) {
            *a += s * b;
        }
        for (a, b) in self.edge.iter_mut().zip(&other.edge) {
            *a += s * b;
        }
        self.constant += s * other.constant;
    }

    /// Value at node marginals `mu` and edge values `z` (z_e = μ_e(1, 1)).
    pub fn eval(&self, mu: &[f64], z: &[f64]) -> f64 {
        let n: f64 = self.node.iter().zip(mu).map(|(a, m)| a * m).sum();
        let e: f64 = self.edge.iter().zip(z).map(|(a, m)| a * m).sum();
        self.constant + n + e
    }

    /// Does the form have no pairwise part?
    pub fn is_separable(&self) -> bool {
        self.edge.iter().all(|&c| c == 0.0)
    }
}

/// The raw scores of one instance: θ_k = w_k·x (unary block of label k) and the four weights of
/// each edge, indexed by the state `2·y_i + y_j`.
pub(crate) struct Scores<'a> {
    pub theta: std::borrow::Cow<'a, [f64]>,
    pub pair: &'a [f64],
    pub edges: &'a [(usize, usize)],
}

impl Scores<'_> {
    pub fn n_nodes(&self) -> usize {
        self.theta.len()
    }

    pub fn w(&self, e: usize) -> [f64; 4] {
        let p = &self.pair[4 * e..4 * e + 4];
        [p[0], p[1], p[2], p[3]]
    }

    /// w·φ(x, y) of an integral label, summed in a fixed order (nodes, then edges). Labels that
    /// differ only in places contributing exact zeros get bit-identical scores, so structural ties
    /// stay exact ties.
    pub fn score_bits(&self, bit: impl Fn(usize) -> usize) -> f64 {
        let mut s = 0.0;
        for (k, &t) in self.theta.iter().enumerate() {
            if bit(k) == 1 {
                s += t;
            }
        }
        for (e, &(i, j)) in self.edges.iter().enumerate() {
            s += self.pair[4 * e + 2 * bit(i) + bit(j)];
        }
        s
    }

    /// w·φ(x, y) at marginals (node marginals `mu`, full edge marginals `me`).
    pub fn score_marginals(&self, mu: &[f64], me: &[[f64; 4]]) -> f64 {
        let mut s: f64 = self.theta.iter().zip(mu).map(|(t, m)| t * m).sum();
        for (e, m) in me.iter().enumerate() {
            let w = self.w(e);
            s += w[0] * m[0] + w[1] * m[1] + w[2] * m[2] + w[3] * m[3];
        }
        s
    }

    /// The score as a linear form.
    pub fn score_form(&self) -> LinForm {
        let mut f = LinForm::zeros(self.n_nodes(), self.edges.len());
        f.node.copy_from_slice(&self.theta);
        for (e, &(i, j)) in self.edges.iter().enumerate() {
            let [w00, w01, w10, w11] = self.w(e);
            f.constant += w00;
            f.node[i] += w10 - w00;
            f.node[j] += w01 - w00;
            f.edge[e] = w11 - w10 - w01 + w00;
        }
        f
    }
}

/// Hamming loss against the gold label `gold` (= indicator-set Hamming for multi-label):
/// Σ_k [y_k ≠ t_k] = Σ_k t_k + Σ_k (1 − 2 t_k) μ_k.
pub(crate) fn loss_form(gold: &[u8], n_edges: usize) -> LinForm {
    let mut f = LinForm::zeros(gold.len(), n_edges);
    for (k, &t) in gold.iter().enumerate() {
        f.node[k] = if t == 1 { -1.0 } else { 1.0 };
        f.constant += t as f64;
    }
    f
}

/// |y| = Σ_k μ_k.
pub(crate) fn size_form(n_nodes: usize, n_edges: usize) -> LinForm {
    LinForm { node: vec![1.0; n_nodes], edge: vec![0.0; n_edges], constant: 0.0 }
}

/// The forms of one oracle call: score, loss and size.
pub(crate) struct Forms {
    pub score: LinForm,
    pub loss: LinForm,
    pub size: LinForm,
    /// w·φ(x, y_true).
    pub gold_score: f64,
}

impl Forms {
    pub fn new(s: &Scores<'_>, gold: &[u8]) -> Self {
        let gold_score = s.score_bits(|k| gold[k] as usize);
        Forms {
            score: s.score_form(),
            loss: loss_form(gold, s.edges.len()),
            size: size_form(s.n_nodes(), s.edges.len()),
            gold_score,
        }
    }

    /// `o.margin·(score − score(y_true)) + (c_loss + c_hamming)·loss + c_size·size` (for
    /// multi-label the indicator-set Hamming distance is the Hamming loss).
    pub fn objective(&self, o: &Objective) -> LinForm {
        let mut f = LinForm::zeros(self.score.node.len(), self.score.edge.len());
        f.add_scaled(&self.score, o.margin);
        f.constant -= o.margin * self.gold_score;
        f.add_scaled(&self.loss, o.terms.loss + o.terms.hamming);
        f.add_scaled(&self.size, o.terms.size);
        f
    }

    /// The node and edge coefficients of [`Forms::objective`] without building the three forms:
    /// `score` is [`Scores::score_form`] (the same for every query of an inference), and the
    /// values are the same floating-point operations in the same order (the loss form's node
    /// coefficients are ∓1, the size form's 1, their edge coefficients 0), so the tree DP breaks
    /// ties as it did. The constant is left at 0 (the argmax does not read it).
    pub fn objective_of(score: (&[f64], &[f64]), gold: &[u8], o: &Objective) -> LinForm {
        let (node, edge) = score;
        let mut f = LinForm::zeros(node.len(), edge.len());
        let (cm, cl, cs) = (o.margin, o.terms.loss + o.terms.hamming, o.terms.size);
        for (k, v) in f.node.iter_mut().enumerate() {
            if cm != 0.0 {
                *v += cm * node[k];
            }
            if cl != 0.0 {
                *v += cl * if gold[k] == 1 { -1.0 } else { 1.0 };
            }
            if cs != 0.0 {
                *v += cs * 1.0;
            }
        }
        for (e, v) in f.edge.iter_mut().enumerate() {
            if cm != 0.0 {
                *v += cm * edge[e];
            }
            if cl != 0.0 {
                *v += cl * 0.0;
            }
            if cs != 0.0 {
                *v += cs * 0.0;
            }
        }
        f
    }

    /// The margin m = score − score(y_true) as a form.
    pub fn margin(&self) -> LinForm {
        let mut f = self.score.clone();
        f.constant -= self.gold_score;
        f
    }
}

/// Edge marginals (states 00, 01, 10, 11) from node marginals and z = μ_e(1, 1).
/// Each state is clamped to [0, 1]: rounding can leave e.g. μ_i − z at −1e-17.
pub(crate) fn edge_marginals_from_z(mu_i: f64, mu_j: f64, z: f64) -> [f64; 4] {
    [1.0 - mu_i - mu_j + z, mu_j - z, mu_i - z, z].map(|v| v.clamp(0.0, 1.0))
}

/// The feasible interval of z = μ_e(1,1) given the node marginals.
pub(crate) fn z_bounds(mu_i: f64, mu_j: f64) -> (f64, f64) {
    let hi = mu_i.min(mu_j);
    // mathematically lo ≤ hi on [0, 1]²; rounding of μ_i + μ_j − 1 can break it by an ulp
    ((mu_i + mu_j - 1.0).max(0.0).min(hi), hi)
}

/// Optimal z for node marginals: a linear objective `c·z` over `z_bounds` is maximised at the
/// upper end when c > 0 and at the lower end when c < 0 (on an edge with ½ endpoints the LP-optimal edge marginals depend on the sign of the
/// edge's interaction weight). `signs` are tried in order; the first non-zero decides; when all
/// are zero the product μ_i·μ_j (independence) is used — every choice then has the same value.
pub(crate) fn best_z(mu_i: f64, mu_j: f64, signs: &[f64]) -> f64 {
    let (lo, hi) = z_bounds(mu_i, mu_j);
    match signs.iter().find(|&&c| c != 0.0) {
        Some(&c) if c > 0.0 => hi,
        Some(_) => lo,
        None => (mu_i * mu_j).clamp(lo, hi),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn score_form_matches_direct_score() {
        let edges = [(0, 1), (1, 2), (0, 2)];
        let pair = [0.5, -1.0, 2.0, 0.25, 1.0, 0.0, -3.0, 0.5, 0.0, 1.5, -0.5, 2.0];
        let s = Scores { theta: vec![1.0, -2.0, 0.5].into(), pair: &pair, edges: &edges };
        let f = s.score_form();
        for mask in 0..8usize {
            let bit = |k: usize| (mask >> k) & 1;
            let mu: Vec<f64> = (0..3).map(|k| bit(k) as f64).collect();
            let z: Vec<f64> = edges.iter().map(|&(i, j)| (bit(i) * bit(j)) as f64).collect();
            assert!((f.eval(&mu, &z) - s.score_bits(bit)).abs() < 1e-12);
        }
    }

    #[test]
    fn objective_of_is_the_objective_bit_for_bit() {
        // the tree oracle's node and edge coefficients equal Forms::objective's exactly (same
        // operations, same order), for every mix of zero and non-zero coefficients
        let edges = [(0, 1), (1, 2), (0, 3)];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut unit = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) * 4.0 - 2.0
        };
        for case in 0..500 {
            let pair: Vec<f64> = (0..4 * edges.len()).map(|_| unit()).collect();
            let theta: Vec<f64> = (0..4).map(|_| unit()).collect();
            let s = Scores { theta: theta.into(), pair: &pair, edges: &edges };
            let gold: Vec<u8> = (0..4).map(|_| u8::from(unit() > 0.0)).collect();
            let pick = |v: f64, z: bool| if z { 0.0 } else { v };
            let o = Objective {
                margin: pick(unit(), case % 2 == 0),
                terms: bicrit_core::Terms {
                    loss: pick(unit(), case % 3 == 0),
                    hamming: pick(unit(), case % 5 == 0),
                    size: pick(unit(), case % 7 == 0),
                },
            };
            let forms = Forms::new(&s, &gold);
            let want = forms.objective(&o);
            let got = Forms::objective_of((&forms.score.node, &forms.score.edge), &gold, &o);
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got.node), bits(&want.node), "case {case}");
            assert_eq!(bits(&got.edge), bits(&want.edge), "case {case}");
        }
    }

    #[test]
    fn best_z_follows_sign() {
        assert_eq!(best_z(0.5, 0.5, &[1.0]), 0.5);
        assert_eq!(best_z(0.5, 0.5, &[-1.0]), 0.0);
        assert_eq!(best_z(0.5, 0.5, &[0.0, -2.0]), 0.0);
        assert_eq!(best_z(0.5, 1.0, &[-1.0]), 0.5);
        assert_eq!(best_z(0.5, 0.5, &[0.0]), 0.25);
    }
}
