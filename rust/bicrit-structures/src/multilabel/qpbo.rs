//! Roof duality by max-flow (QPBO; Boros & Hammer 2002, Kolmogorov & Rother 2007 "Minimizing
//! non-submodular functions with graph cuts — a review"). Written for bicrit from the published
//! construction; no code from Kolmogorov's implementation.
//!
//! We maximise `f(y) = c + Σ_k a_k y_k + Σ_e c_e y_i y_j` over the local polytope, i.e. minimise
//! the energy E = −f. Each label k gets two nodes, k (x_k = 1 ⇔ k on the sink side) and k̄
//! (x_k = 1 ⇔ k̄ on the source side). An edge with c_e > 0 is submodular in E and becomes the arcs
//! i → j and j̄ → ī of capacity c_e (the term c_e·[x_i = 0 ∧ x_j = 1] plus a unary part); an edge
//! with c_e < 0 is not, and becomes i → j̄ and j → ī (the term |c_e|·[x_i = 0 ∧ x_j = 0]). Unary
//! terms become terminal arcs on both copies. For any minimum cut S the node values
//! μ_k = ([k ∉ S] + [k̄ ∈ S]) / 2 ∈ {0, ½, 1} form an optimal solution of the local-polytope LP
//! (its value is the roof dual), and every half-integral LP optimum arises from some minimum cut.
//!
//! Two refinements pick a particular minimum cut (the minimum cuts are exactly the sets that
//! contain s, exclude t and are closed under the residual arcs of a maximum flow):
//! * **Integral when possible.** If the LP has an integral optimum, a *symmetric* closed set
//!   (k ∈ S ⇔ k̄ ∉ S) exists; finding one is 2-SAT over the implications "u ∈ S ⇒ v ∈ S" of the
//!   residual arcs and their mirror images, solved by strongly connected components. Only when
//!   it is unsatisfiable is the answer fractional (weak persistency of the integral part).
//! * **Lexicographic tie-break by a separable secondary objective** (λ = 0: largest margin, then
//!   largest loss): maximising a linear function of μ over the closed sets is a maximum-weight
//!   closure problem (Picard 1976), i.e. a second max-flow on the residual graph.

use std::cell::RefCell;

use super::energy::LinForm;
use super::maxflow::FlowGraph;

thread_local! {
    static WORKSPACE: RefCell<(FlowGraph, FlowGraph, SatBuffers)> = RefCell::new(Default::default());
}

/// Builds the doubled network of `maximise form` on `g` (2K + 2 nodes; s = 2K, t = 2K + 1).
fn build(g: &mut FlowGraph, edges: &[(usize, usize)], form: &LinForm) {
    let k = form.node.len();
    let (s, t) = (2 * k, 2 * k + 1);
    g.reset(2 * k + 2);
    // alpha[p]: coefficient of x_p in the energy after moving the pairwise parts out
    let mut alpha: Vec<f64> = form.node.iter().map(|a| -a).collect();
    for (e, &(i, j)) in edges.iter().enumerate() {
        let c = form.edge[e];
        if c > 0.0 {
            // −c·x_i x_j = −c·x_j + c·[x_i = 0 ∧ x_j = 1]
            alpha[j] -= c;
            g.add_arc(i, j, c);
            g.add_arc(k + j, k + i, c);
        } else if c < 0.0 {
            // g·x_i x_j = −g + g·x_i + g·x_j + g·[x_i = 0 ∧ x_j = 0], g = −c
            let w = -c;
            alpha[i] += w;
            alpha[j] += w;
            g.add_arc(i, k + j, w);
            g.add_arc(j, k + i, w);
        }
    }
    for (p, &a) in alpha.iter().enumerate() {
        if a > 0.0 {
            // cost a when x_p = 1: p on the sink side, p̄ on the source side
            g.add_arc(s, p, a);
            g.add_arc(k + p, t, a);
        } else if a < 0.0 {
            g.add_arc(p, t, -a);
            g.add_arc(s, k + p, -a);
        }
    }
}

fn nodes_from_cut(side: &[bool], k: usize) -> Vec<f64> {
    (0..k).map(|p| (f64::from(u8::from(!side[p])) + f64::from(u8::from(side[k + p]))) / 2.0).collect()
}

/// Mirror of a node of the doubled network (k ↔ k̄, s ↔ t).
fn mirror(v: usize, k: usize) -> usize {
    if v < k {
        v + k
    } else if v < 2 * k {
        v - k
    } else if v == 2 * k {
        2 * k + 1
    } else {
        2 * k
    }
}

/// Reused buffers of the 2-SAT search.
#[derive(Default)]
struct SatBuffers {
    start: Vec<usize>,
    adj: Vec<usize>,
    fill: Vec<usize>,
}

/// Strongly connected components (iterative Tarjan); ids in reverse topological order.
fn tarjan(n: usize, start: &[usize], adj: &[usize]) -> Vec<usize> {
    const UNSEEN: usize = usize::MAX;
    let mut index = vec![UNSEEN; n];
    let mut low = vec![0usize; n];
    let mut on_stack = vec![false; n];
    let mut comp = vec![UNSEEN; n];
    let mut stack = Vec::new();
    let mut calls: Vec<(usize, usize)> = Vec::new();
    let (mut counter, mut n_comp) = (0, 0);
    for root in 0..n {
        if index[root] != UNSEEN {
            continue;
        }
        index[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        calls.push((root, start[root]));
        while let Some(&mut (u, ref mut pos)) = calls.last_mut() {
            if *pos < start[u + 1] {
                let w = adj[*pos];
                *pos += 1;
                if index[w] == UNSEEN {
                    index[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, start[w]));
                } else if on_stack[w] {
                    low[u] = low[u].min(index[w]);
                }
            } else {
                calls.pop();
                if let Some(&(parent, _)) = calls.last() {
                    low[parent] = low[parent].min(low[u]);
                }
                if low[u] == index[u] {
                    while let Some(v) = stack.pop() {
                        on_stack[v] = false;
                        comp[v] = n_comp;
                        if v == u {
                            break;
                        }
                    }
                    n_comp += 1;
                }
            }
        }
    }
    comp
}

/// A symmetric closed set of the residual graph (an integral LP optimum), if one exists.
fn integral_cut(g: &FlowGraph, k: usize, buf: &mut SatBuffers) -> Option<Vec<f64>> {
    let n = 2 * k + 2;
    let (s, t) = (2 * k, 2 * k + 1);
    // implication graph: every residual arc u → v and its mirror v̄ → ū, plus t → s (clause: s is
    // on the source side); CSR built in two passes over the residual arcs, in reused buffers
    let (start, adj, fill) = (&mut buf.start, &mut buf.adj, &mut buf.fill);
    start.clear();
    start.resize(n + 1, 0);
    for (u, v) in g.residual_arcs() {
        start[u + 1] += 1;
        start[mirror(v, k) + 1] += 1;
    }
    start[t + 1] += 1;
    for v in 0..n {
        start[v + 1] += start[v];
    }
    fill.clear();
    fill.extend_from_slice(&start[..n]);
    adj.clear();
    adj.resize(start[n], 0);
    let mut put = |u: usize, v: usize| {
        adj[fill[u]] = v;
        fill[u] += 1;
    };
    for (u, v) in g.residual_arcs() {
        put(u, v);
        put(mirror(v, k), mirror(u, k));
    }
    put(t, s);
    let comp = tarjan(n, start, adj);
    if (0..k).any(|p| comp[p] == comp[k + p]) || comp[s] == comp[t] {
        return None;
    }
    // literal v true (v ∈ S) iff its component comes later in topological order than its mirror's
    Some((0..k).map(|p| if comp[p] < comp[k + p] { 0.0 } else { 1.0 }).collect())
}

/// Node marginals μ ∈ {0, ½, 1}^K of an optimum of `maximise form` over the local polytope;
/// integral whenever the LP has an integral optimum.
pub(crate) fn maximize(edges: &[(usize, usize)], form: &LinForm) -> Vec<f64> {
    let k = form.node.len();
    WORKSPACE.with(|ws| {
        let (g, _, buf) = &mut *ws.borrow_mut();
        build(g, edges, form);
        g.max_flow(2 * k, 2 * k + 1);
        let side = g.source_side(2 * k);
        let mu = nodes_from_cut(&side, k);
        if mu.iter().all(|&m| m != 0.5) {
            return mu;
        }
        // k and k̄ both reachable from s lie on the source side of every minimum cut, both
        // reaching t on the sink side: then no symmetric cut exists and 2-SAT can be skipped
        if (0..k).any(|p| side[p] && side[k + p]) {
            return mu;
        }
        let sink = g.sink_side(2 * k + 1);
        if (0..k).any(|p| sink[p] && sink[k + p]) {
            return mu;
        }
        integral_cut(g, k, buf).unwrap_or(mu)
    })
}

/// Lexicographic optimum: among the optima of `maximise primary` over the local polytope, one
/// maximising the separable `Σ_k secondary[k]·μ_k` (up to the max-flow tolerance on the primary).
pub(crate) fn maximize_lex(edges: &[(usize, usize)], primary: &LinForm, secondary: &[f64]) -> Vec<f64> {
    let k = primary.node.len();
    let (s, t) = (2 * k, 2 * k + 1);
    WORKSPACE.with(|ws| {
        let (g, h, _) = &mut *ws.borrow_mut();
        build(g, edges, primary);
        g.max_flow(s, t);
        // maximum-weight closure of the residual graph: weight −σ_p on p and +σ_p on p̄
        h.reset(2 * k + 2);
        for (u, v) in g.residual_arcs() {
            if u != t && v != s {
                h.add_arc(u, v, f64::INFINITY);
            }
        }
        for (p, &sigma) in secondary.iter().enumerate() {
            if sigma > 0.0 {
                h.add_arc(s, k + p, sigma);
                h.add_arc(p, t, sigma);
            } else if sigma < 0.0 {
                h.add_arc(s, p, -sigma);
                h.add_arc(k + p, t, -sigma);
            }
        }
        let f = h.max_flow(s, t);
        debug_assert!(f.is_finite());
        let side = h.source_side(s);
        nodes_from_cut(&side, k)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn brute_max(edges: &[(usize, usize)], f: &LinForm) -> f64 {
        let k = f.node.len();
        (0u32..1 << k)
            .map(|m| {
                let mu: Vec<f64> = (0..k).map(|p| ((m >> p) & 1) as f64).collect();
                let z: Vec<f64> = edges.iter().map(|&(i, j)| mu[i] * mu[j]).collect();
                f.eval(&mu, &z)
            })
            .fold(f64::NEG_INFINITY, f64::max)
    }

    fn relaxed_value(edges: &[(usize, usize)], f: &LinForm, mu: &[f64]) -> f64 {
        let z: Vec<f64> = edges
            .iter()
            .enumerate()
            .map(|(e, &(i, j))| super::super::energy::best_z(mu[i], mu[j], &[f.edge[e]]))
            .collect();
        f.eval(mu, &z)
    }

    #[test]
    fn submodular_energies_are_solved_exactly() {
        // all c_e ≥ 0: the LP is tight and QPBO returns an integral optimum
        let mut state = 7u64;
        let mut rnd = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % 9) as f64 - 4.0
        };
        for _ in 0..300 {
            let k = 5;
            let edges = super::super::edges::full_edges(k);
            let f = LinForm {
                node: (0..k).map(|_| rnd()).collect(),
                edge: edges.iter().map(|_| rnd().abs()).collect(),
                constant: 0.0,
            };
            let mu = maximize(&edges, &f);
            assert!(mu.iter().all(|&m| m == 0.0 || m == 1.0), "{mu:?}");
            assert_eq!(relaxed_value(&edges, &f, &mu), brute_max(&edges, &f));
        }
    }

    #[test]
    fn frustrated_triangle_is_half_integral() {
        // three labels that each want to differ from both others: LP optimum all ½
        let edges = vec![(0, 1), (1, 2), (0, 2)];
        let f = LinForm { node: vec![1.0; 3], edge: vec![-2.0; 3], constant: 0.0 };
        let mu = maximize(&edges, &f);
        assert_eq!(mu, vec![0.5; 3]);
        assert_eq!(relaxed_value(&edges, &f, &mu), 1.5);
        assert_eq!(brute_max(&edges, &f), 1.0);
    }
}
