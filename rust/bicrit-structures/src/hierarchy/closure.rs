//! Maximum-weight closure by one minimum cut (Picard 1976), for the "any ancestor-closed set"
//! label space of a DAG hierarchy (docs/architecture.md, Structures: the consistency constraints
//! y_child ≤ y_parent form a network matrix, so the problem is a closure problem, not an LP).
//!
//! Network: source s → v with capacity max(gain_v, 0), v → sink t with capacity max(−gain_v, 0),
//! and v → p with infinite capacity for every parent p ≠ root (choosing v forces p). The source
//! side of a minimum cut (nodes reachable from s in the residual graph) is a maximum-weight
//! closure — the smallest one among the optimal closures. The root is in every label and is left
//! out of the network. Only the positive nodes and their ancestors Ā(P) can be in an optimal
//! closure (removing every other chosen node keeps a closure and loses no positive gain), so the
//! network is built per call on Ā(P) alone: with trained weights, where few nodes score above
//! their cost, it has a handful of nodes instead of M. Dinic's algorithm on flat arrays (arc i and its reverse i ^ 1), with an
//! iterative depth-first search so that deep hierarchies cannot overflow the stack. Capacities
//! are generic over [`Val`], so lexicographic (primary, secondary) queries run unchanged.

use super::graph::HierarchyGraph;
use super::value::{vmin, Val};

const NONE: u32 = u32::MAX;

/// Per-call buffers of the max-flow (kept per thread by the caller).
#[derive(Debug, Default)]
pub struct FlowScratch<V> {
    local: Vec<u32>,
    nodes: Vec<u32>,
    from: Vec<u32>,
    to: Vec<u32>,
    cap: Vec<V>,
    adj_ptr: Vec<u32>,
    adj: Vec<u32>,
    level: Vec<i32>,
    it: Vec<u32>,
    queue: Vec<u32>,
    path: Vec<u32>,
}

impl<V: Val> FlowScratch<V> {
    fn arc(&mut self, a: u32, b: u32, c: V) {
        self.from.push(a);
        self.to.push(b);
        self.cap.push(c);
        self.from.push(b);
        self.to.push(a);
        self.cap.push(V::ZERO);
    }
}

/// The maximum-weight closure containing the root, with `fixed[v]` = 1 forcing v (and so its
/// ancestors) in and −1 forcing v (and so its descendants) out. An infinite flow (forced-in
/// nodes whose ancestors are forced out) returns `None`; the caller checks conflicts first.
/// Returns the chosen nodes, root included, sorted.
pub fn max_closure<V: Val>(
    g: &HierarchyGraph,
    gain: &[V],
    fixed: Option<&[i8]>,
    sc: &mut FlowScratch<V>,
) -> Option<Vec<u32>> {
    collect_support(g, gain, fixed, sc);
    let out = solve_support(g, gain, |v| fixed.map_or(0, |f| f[v]), sc);
    clear_support(sc);
    out
}

/// Fills the network's node set with Ā(P): the positive or forced-in nodes and their ancestors
/// (root excluded), with their local ids. Every optimal closure lies in it (module docs), also
/// under forcings of its own nodes; [`clear_support`] resets the local ids.
pub fn collect_support<V: Val>(
    g: &HierarchyGraph,
    gain: &[V],
    fixed: Option<&[i8]>,
    sc: &mut FlowScratch<V>,
) {
    let m = g.n_nodes();
    let root = g.root();
    let fix = |v: usize| fixed.map_or(0, |f| f[v]);
    sc.local.resize(m, NONE);
    sc.nodes.clear();
    for (v, &gv) in gain.iter().enumerate().take(m) {
        if v != root && (gv > V::ZERO || fix(v) > 0) && sc.local[v] == NONE {
            sc.local[v] = sc.nodes.len() as u32;
            sc.nodes.push(v as u32);
            let mut head = sc.nodes.len() - 1;
            while head < sc.nodes.len() {
                let u = sc.nodes[head] as usize;
                head += 1;
                for &p in g.parents(u) {
                    if p as usize != root && sc.local[p as usize] == NONE {
                        sc.local[p as usize] = sc.nodes.len() as u32;
                        sc.nodes.push(p);
                    }
                }
            }
        }
    }
}

/// Is `v` in the network's node set?
pub fn in_support<V>(sc: &FlowScratch<V>, v: usize) -> bool {
    sc.local.get(v).is_some_and(|&l| l != NONE)
}

/// Resets the local ids of [`collect_support`].
pub fn clear_support<V>(sc: &mut FlowScratch<V>) {
    for &v in &sc.nodes {
        sc.local[v as usize] = NONE;
    }
}

/// The maximum-weight closure within the node set of [`collect_support`], with `fix(v)` = 1
/// forcing a node of the set in and −1 forcing it out (forced-in nodes must have their
/// ancestors in the set). `None` when the forcings conflict; else the chosen nodes, root
/// included, sorted.
pub fn solve_support<V: Val>(
    g: &HierarchyGraph,
    gain: &[V],
    fix: impl Fn(usize) -> i8,
    sc: &mut FlowScratch<V>,
) -> Option<Vec<u32>> {
    let root = g.root();
    let n = sc.nodes.len();
    let (s, t) = (n, n + 1);
    sc.from.clear();
    sc.to.clear();
    sc.cap.clear();
    for u in 0..n {
        let v = sc.nodes[u] as usize;
        let f = fix(v);
        if f > 0 {
            sc.arc(s as u32, u as u32, V::INF);
        } else if gain[v] > V::ZERO {
            sc.arc(s as u32, u as u32, gain[v]);
        }
        if f < 0 {
            sc.arc(u as u32, t as u32, V::INF);
        } else if gain[v] < V::ZERO {
            sc.arc(u as u32, t as u32, V::ZERO - gain[v]);
        }
        for &p in g.parents(v) {
            if p as usize != root {
                let lp = sc.local[p as usize];
                sc.arc(u as u32, lp, V::INF);
            }
        }
    }
    sc.adj_ptr.clear();
    sc.adj_ptr.resize(n + 3, 0);
    for &a in &sc.from {
        sc.adj_ptr[a as usize + 1] += 1;
    }
    for i in 0..n + 2 {
        sc.adj_ptr[i + 1] += sc.adj_ptr[i];
    }
    sc.adj.clear();
    sc.adj.resize(sc.from.len(), 0);
    sc.it.clear();
    sc.it.extend_from_slice(&sc.adj_ptr[..n + 2]);
    for (arc, &a) in sc.from.iter().enumerate() {
        sc.adj[sc.it[a as usize] as usize] = arc as u32;
        sc.it[a as usize] += 1;
    }
    let feasible = dinic(sc, s, t);
    feasible.then(|| {
        // Source side of the minimum cut: reachable from s in the residual graph.
        reach(sc, s, None);
        let mut label: Vec<u32> = (0..n).filter(|&u| sc.level[u] >= 0).map(|u| sc.nodes[u]).collect();
        label.push(root as u32);
        label.sort_unstable();
        label
    })
}

/// Marks in `level` (≥ 0) the nodes reachable from `s` through arcs with residual capacity;
/// returns the BFS levels. With `target`, stops as soon as the target is reached: every node of
/// a lower level has its level by then (BFS order), and Dinic's phase only walks arcs that go
/// one level up towards it, so the nodes left unvisited (level −1) are never needed.
fn reach<V: Val>(sc: &mut FlowScratch<V>, s: usize, target: Option<usize>) {
    sc.level.clear();
    sc.level.resize(sc.adj_ptr.len() - 1, -1);
    sc.queue.clear();
    sc.queue.push(s as u32);
    sc.level[s] = 0;
    let mut head = 0;
    while head < sc.queue.len() {
        let u = sc.queue[head] as usize;
        head += 1;
        for &a in &sc.adj[sc.adj_ptr[u] as usize..sc.adj_ptr[u + 1] as usize] {
            let v = sc.to[a as usize] as usize;
            if sc.level[v] < 0 && sc.cap[a as usize] > V::ZERO {
                sc.level[v] = sc.level[u] + 1;
                if target == Some(v) {
                    return;
                }
                sc.queue.push(v as u32);
            }
        }
    }
}

/// Dinic's max-flow from `s` to `t` on the scratch network; `false` when the flow is infinite.
fn dinic<V: Val>(sc: &mut FlowScratch<V>, s: usize, t: usize) -> bool {
    loop {
        reach(sc, s, Some(t));
        if sc.level[t] < 0 {
            return true;
        }
        sc.it.clear();
        sc.it.extend_from_slice(&sc.adj_ptr[..sc.adj_ptr.len() - 1]);
        // Blocking flow by iterative DFS with current-arc pointers.
        sc.path.clear();
        let mut u = s;
        loop {
            if u == t {
                let mut f = V::INF;
                for &a in &sc.path {
                    f = vmin(f, sc.cap[a as usize]);
                }
                if !f.is_finite() {
                    return false;
                }
                let mut first_sat = sc.path.len();
                for (pos, &a) in sc.path.iter().enumerate() {
                    let a = a as usize;
                    sc.cap[a] = sc.cap[a] - f;
                    sc.cap[a ^ 1] = sc.cap[a ^ 1] + f;
                    if first_sat == sc.path.len() && sc.cap[a] <= V::ZERO {
                        first_sat = pos;
                    }
                }
                sc.path.truncate(first_sat);
                u = match sc.path.last() {
                    Some(&a) => sc.to[a as usize] as usize,
                    None => s,
                };
                continue;
            }
            let end = sc.adj_ptr[u + 1];
            let mut advanced = false;
            while sc.it[u] < end {
                let a = sc.adj[sc.it[u] as usize] as usize;
                let v = sc.to[a] as usize;
                if sc.level[v] == sc.level[u] + 1 && sc.cap[a] > V::ZERO {
                    sc.path.push(a as u32);
                    u = v;
                    advanced = true;
                    break;
                }
                sc.it[u] += 1;
            }
            if !advanced {
                if u == s {
                    break;
                }
                sc.level[u] = -1; // dead end for the rest of this phase
                let a = sc.path.pop().expect("non-empty path below the source") as usize;
                u = sc.to[a ^ 1] as usize;
                sc.it[u] += 1;
            }
        }
    }
}
