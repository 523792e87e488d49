//! Exact inference when the label graph is a forest (the Chow–Liu tree that `edges="auto"` learns
//! beyond [`super::MAX_EXACT_LABELS`] labels): max-sum dynamic programming over the tree, O(K)
//! per query. Every objective of the oracle is `constant + Σ_k node_k·y_k + Σ_e edge_e·y_i·y_j`
//! on integral labels ([`super::energy`]); a lexicographic query (λ = 0 or ∞) carries a second
//! form, and the program maximises the pair (primary, tie-break) in lexicographic order — an
//! order compatible with addition, so the recursion stays exact.

use bicrit_core::{Error, Result};

use super::energy::LinForm;

/// A forest over K labels, rooted: every node's parent and the edge to it, and an order in which
/// every parent comes before its children.
#[derive(Clone, Debug, PartialEq)]
pub struct Forest {
    order: Vec<usize>,
    parent: Vec<Option<(usize, usize)>>,
}

impl Forest {
    /// The forest of `edges` (validated, i < j) over `n_labels` nodes; an error when they hold a
    /// cycle.
    pub fn new(n_labels: usize, edges: &[(usize, usize)]) -> Result<Self> {
        let mut adj: Vec<Vec<(usize, usize)>> = vec![Vec::new(); n_labels];
        for (e, &(i, j)) in edges.iter().enumerate() {
            adj[i].push((j, e));
            adj[j].push((i, e));
        }
        let mut parent: Vec<Option<(usize, usize)>> = vec![None; n_labels];
        let mut seen = vec![false; n_labels];
        let mut order = Vec::with_capacity(n_labels);
        for root in 0..n_labels {
            if seen[root] {
                continue;
            }
            seen[root] = true;
            let start = order.len();
            order.push(root);
            let mut at = start;
            while at < order.len() {
                let v = order[at];
                at += 1;
                for &(u, e) in &adj[v] {
                    if parent[v].is_some_and(|(_, pe)| pe == e) {
                        continue;
                    }
                    if seen[u] {
                        return Err(Error::input(format!(
                            "the label graph has a cycle (through edge {e} = {:?}): tree inference needs a \
                             forest; use inference='relaxed' or 'auto'",
                            edges[e]
                        )));
                    }
                    seen[u] = true;
                    parent[u] = Some((v, e));
                    order.push(u);
                }
            }
        }
        Ok(Forest { order, parent })
    }

    /// Whether `edges` form a forest over `n_labels` nodes.
    pub fn is_forest(n_labels: usize, edges: &[(usize, usize)]) -> bool {
        edges.len() < n_labels.max(1) && Forest::new(n_labels, edges).is_ok()
    }

    /// argmax over y ∈ {0, 1}^K of `primary`, ties broken by `secondary` (lexicographically);
    /// remaining ties go to y_k = 0.
    pub(crate) fn maximize(&self, primary: &LinForm, secondary: Option<&LinForm>) -> Vec<u8> {
        let k = self.order.len();
        let pair = |f: &LinForm, e: usize| f.edge[e];
        let node = |v: usize, s: usize| -> (f64, f64) {
            if s == 0 {
                (0.0, 0.0)
            } else {
                (primary.node[v], secondary.map_or(0.0, |f| f.node[v]))
            }
        };
        let add = |a: (f64, f64), b: (f64, f64)| (a.0 + b.0, a.1 + b.1);
        let better = |a: (f64, f64), b: (f64, f64)| a.0 > b.0 || (a.0 == b.0 && a.1 > b.1);
        // best[v][s]: the best value of v's subtree with y_v = s
        let mut best: Vec<[(f64, f64); 2]> = (0..k).map(|v| [node(v, 0), node(v, 1)]).collect();
        // choice[v][s_parent]: y_v in the best subtree of v given its parent's value
        let mut choice = vec![[0u8; 2]; k];
        for &v in self.order.iter().rev() {
            let Some((p, e)) = self.parent[v] else { continue };
            for sp in 0..2 {
                let mut pick = 0usize;
                let mut val = best[v][0];
                let with = if sp == 1 {
                    add(best[v][1], (pair(primary, e), secondary.map_or(0.0, |f| pair(f, e))))
                } else {
                    best[v][1]
                };
                if better(with, val) {
                    pick = 1;
                    val = with;
                }
                choice[v][sp] = pick as u8;
                best[p][sp] = add(best[p][sp], val);
            }
        }
        let mut y = vec![0u8; k];
        for &v in &self.order {
            y[v] = match self.parent[v] {
                None => u8::from(better(best[v][1], best[v][0])),
                Some((p, _)) => choice[v][y[p] as usize],
            };
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cycles_are_refused_and_forests_accepted() {
        assert!(Forest::new(3, &[(0, 1), (1, 2), (0, 2)]).is_err());
        assert!(Forest::is_forest(4, &[(0, 1), (2, 3)]));
        assert!(Forest::is_forest(1, &[]));
        assert!(!Forest::is_forest(3, &[(0, 1), (1, 2), (0, 2)]));
    }
}
