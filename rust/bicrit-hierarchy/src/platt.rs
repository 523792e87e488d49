//! Platt scaling of per-node scores (docs/hierarchy-scores.md): for one node, the slope and
//! offset (a, b) of p = σ(a·s + b) minimising the weighted cross-entropy against Platt's
//! smoothed targets (N₊ + 1)/(N₊ + 2) for positives and 1/(N₋ + 2) for negatives (Platt 1999),
//! by Newton's method with a backtracking line search (Lin, Lin and Weng 2007). The smoothed
//! targets keep the fit finite for a node with few or no positives.

/// Newton steps at most.
const NEWTON_STEPS: usize = 100;
/// Halvings of the step in one line search at most.
const HALVINGS: usize = 30;
/// Stop when |∂a| + |∂b| < GRAD_TOL·(1 + N₊ + N₋).
const GRAD_TOL: f64 = 1e-7;

/// log(1 + e^f), without overflow.
fn softplus(f: f64) -> f64 {
    f.max(0.0) + (-f.abs()).exp().ln_1p()
}

/// (a, b) of one node from its `scores`, 0/1 `labels` and row `weights` (a row of weight 0
/// does not count); a node with no row gets (0, 0).
pub fn platt_fit(scores: &[f64], labels: &[f64], weights: &[f64]) -> (f64, f64) {
    let s: Vec<f64> = scores.iter().zip(weights).map(|(&s, &w)| if w > 0.0 { s } else { 0.0 }).collect();
    let n_pos: f64 = labels.iter().zip(weights).map(|(&y, &w)| y * w).sum();
    let n_neg: f64 = labels.iter().zip(weights).map(|(&y, &w)| (1.0 - y) * w).sum();
    let t: Vec<f64> =
        labels.iter().map(|&y| if y > 0.0 { (n_pos + 1.0) / (n_pos + 2.0) } else { 1.0 / (n_neg + 2.0) }).collect();
    let tol = GRAD_TOL * (1.0 + n_pos + n_neg);
    let objective = |a: f64, b: f64| -> f64 {
        (0..s.len()).map(|i| weights[i] * (softplus(a * s[i] + b) - t[i] * (a * s[i] + b))).sum()
    };
    let (mut a, mut b) = (0.0, ((n_pos + 1.0) / (n_neg + 1.0)).ln());
    let mut value = objective(a, b);
    for _ in 0..NEWTON_STEPS {
        let (mut ga, mut gb, mut haa, mut hab, mut hbb) = (0.0, 0.0, 1e-12, 0.0, 1e-12);
        for i in 0..s.len() {
            let p = 1.0 / (1.0 + (-(a * s[i] + b)).exp());
            let (r, q) = (weights[i] * (p - t[i]), weights[i] * p * (1.0 - p));
            ga += r * s[i];
            gb += r;
            haa += q * s[i] * s[i];
            hab += q * s[i];
            hbb += q;
        }
        if ga.abs() + gb.abs() < tol {
            break;
        }
        let det = haa * hbb - hab * hab;
        let (da, db) = (-(hbb * ga - hab * gb) / det, -(haa * gb - hab * ga) / det);
        let slope = ga * da + gb * db;
        let mut step = 1.0;
        let mut moved = false;
        for _ in 0..HALVINGS {
            let (ca, cb) = (a + step * da, b + step * db);
            let candidate = objective(ca, cb);
            if candidate <= value + 1e-4 * step * slope {
                (a, b, value, moved) = (ca, cb, candidate, true);
                break;
            }
            step /= 2.0;
        }
        if !moved {
            break; // no decrease along the Newton direction: at the optimum up to rounding
        }
    }
    (a, b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gradient_vanishes_at_the_fit() {
        let s = [-2.0, -1.0, -0.5, 0.3, 0.8, 1.5, 2.0, -0.2];
        let y = [0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 1.0, 0.0];
        let w = [1.0; 8];
        let (a, b) = platt_fit(&s, &y, &w);
        let (n_pos, n_neg) = (4.0, 4.0);
        let (mut ga, mut gb) = (0.0, 0.0);
        for i in 0..8 {
            let t = if y[i] > 0.0 { (n_pos + 1.0) / (n_pos + 2.0) } else { 1.0 / (n_neg + 2.0) };
            let r = 1.0 / (1.0 + (-(a * s[i] + b)).exp()) - t;
            ga += r * s[i];
            gb += r;
        }
        assert!(a > 0.0 && ga.abs() < 1e-6 && gb.abs() < 1e-6, "{a} {b} {ga} {gb}");
        assert_eq!(platt_fit(&s, &y, &[0.0; 8]), (0.0, 0.0));
    }
}
