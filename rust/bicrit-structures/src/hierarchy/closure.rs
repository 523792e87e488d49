//! Maximum-weight closure by one minimum cut (Picard 1976), for the "any ancestor-closed set"
//! label space of a DAG hierarchy (DESIGN §4, dependencies note §2.2: the consistency constraints
//! y_child ≤ y_parent form a network matrix, so the problem is a closure problem, not an LP).
//!
//! Network: source s → v with capacity max(gain_v, 0), v → sink t with capacity max(−gain_v, 0),
//! and v → p with infinite capacity for every parent p ≠ root (choosing v forces p). The source
//! side of a minimum cut (nodes reachable from s in the residual graph) is a maximum-weight
//! closure — the smallest one among the optimal closures. The root is in every label and is left
//! out of the network. Dinic's algorithm on flat arrays (arc i and its reverse i ^ 1), with an
//! iterative depth-first search so that deep hierarchies cannot overflow the stack. Capacities
//! are generic over [`Val`], so lexicographic (primary, secondary) queries run unchanged.

use super::graph::HierarchyGraph;
use super::value::{vmin, Val};

/// The fixed topology of the closure network of one hierarchy (built once per structure).
#[derive(Clone, Debug)]
pub struct ClosureNet {
    n_nodes: usize,
    adj_ptr: Vec<u32>,
    adj: Vec<u32>,
    to: Vec<u32>,
    /// For arc 2i: the node whose gain sets its capacity (source or sink arc), or NONE for an
    /// infinite arc.
    kind: Vec<ArcKind>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum ArcKind {
    Source(u32),
    Sink(u32),
    Infinite,
}

/// Per-call buffers of the max-flow (kept per thread by the caller).
#[derive(Debug, Default)]
pub struct FlowScratch<V> {
    cap: Vec<V>,
    level: Vec<i32>,
    it: Vec<u32>,
    queue: Vec<u32>,
    path: Vec<u32>,
}

impl ClosureNet {
    /// The network of `g`: nodes 0..M (the root isolated), source M, sink M + 1.
    pub fn new(g: &HierarchyGraph) -> Self {
        let n = g.n_nodes();
        let (s, t) = (n as u32, n as u32 + 1);
        let root = g.root();
        let mut to = Vec::new();
        let mut from = Vec::new();
        let mut kind = Vec::new();
        let mut add = |a: u32, b: u32, k: ArcKind| {
            from.push(a);
            to.push(b);
            from.push(b);
            to.push(a);
            kind.push(k);
        };
        for v in 0..n {
            if v == root {
                continue;
            }
            add(s, v as u32, ArcKind::Source(v as u32));
            add(v as u32, t, ArcKind::Sink(v as u32));
            for &p in g.parents(v) {
                if p as usize != root {
                    add(v as u32, p, ArcKind::Infinite);
                }
            }
        }
        let mut adj_ptr = vec![0u32; n + 3];
        for &a in &from {
            adj_ptr[a as usize + 1] += 1;
        }
        for i in 0..n + 2 {
            adj_ptr[i + 1] += adj_ptr[i];
        }
        let mut fill = adj_ptr.clone();
        let mut adj = vec![0u32; from.len()];
        for (arc, &a) in from.iter().enumerate() {
            adj[fill[a as usize] as usize] = arc as u32;
            fill[a as usize] += 1;
        }
        ClosureNet { n_nodes: n, adj_ptr, adj, to, kind }
    }

    /// Number of arcs (each with its reverse counted once).
    pub fn n_arcs(&self) -> usize {
        self.kind.len()
    }

    /// The maximum-weight closure containing the root, with `fixed[v]` = 1 forcing v (and so its
    /// ancestors) in and −1 forcing v (and so its descendants) out. The caller checks that the
    /// forced sets do not conflict; an infinite flow (a conflict) returns `None`. Returns the
    /// chosen nodes, root included, sorted.
    pub fn max_closure<V: Val>(
        &self,
        g: &HierarchyGraph,
        gain: &[V],
        fixed: Option<&[i8]>,
        sc: &mut FlowScratch<V>,
    ) -> Option<Vec<u32>> {
        let n = self.n_nodes;
        let (s, t) = (n, n + 1);
        sc.cap.clear();
        sc.cap.reserve(2 * self.kind.len());
        for &k in &self.kind {
            let c = match k {
                ArcKind::Source(v) => {
                    let f = fixed.map_or(0, |f| f[v as usize]);
                    if f > 0 {
                        V::INF
                    } else if gain[v as usize] > V::ZERO {
                        gain[v as usize]
                    } else {
                        V::ZERO
                    }
                }
                ArcKind::Sink(v) => {
                    let f = fixed.map_or(0, |f| f[v as usize]);
                    if f < 0 {
                        V::INF
                    } else if gain[v as usize] < V::ZERO {
                        V::ZERO - gain[v as usize]
                    } else {
                        V::ZERO
                    }
                }
                ArcKind::Infinite => V::INF,
            };
            sc.cap.push(c);
            sc.cap.push(V::ZERO);
        }
        sc.level.clear();
        sc.level.resize(n + 2, -1);
        sc.it.clear();
        sc.it.resize(n + 2, 0);
        loop {
            // BFS levels over arcs with residual capacity.
            sc.level.iter_mut().for_each(|l| *l = -1);
            sc.queue.clear();
            sc.queue.push(s as u32);
            sc.level[s] = 0;
            let mut head = 0;
            while head < sc.queue.len() {
                let u = sc.queue[head] as usize;
                head += 1;
                for &a in &self.adj[self.adj_ptr[u] as usize..self.adj_ptr[u + 1] as usize] {
                    let v = self.to[a as usize] as usize;
                    if sc.level[v] < 0 && sc.cap[a as usize] > V::ZERO {
                        sc.level[v] = sc.level[u] + 1;
                        sc.queue.push(v as u32);
                    }
                }
            }
            if sc.level[t] < 0 {
                break;
            }
            sc.it.copy_from_slice(&self.adj_ptr[..n + 2]);
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
                        return None; // forced-in reaches forced-out: infeasible
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
                        Some(&a) => self.to[a as usize] as usize,
                        None => s,
                    };
                    continue;
                }
                let end = self.adj_ptr[u + 1];
                let mut advanced = false;
                while sc.it[u] < end {
                    let a = self.adj[sc.it[u] as usize] as usize;
                    let v = self.to[a] as usize;
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
                    u = self.to[a ^ 1] as usize;
                    sc.it[u] += 1;
                }
            }
        }
        // Source side of the minimum cut: reachable from s in the residual graph.
        sc.level.iter_mut().for_each(|l| *l = -1);
        sc.queue.clear();
        sc.queue.push(s as u32);
        sc.level[s] = 0;
        let mut head = 0;
        while head < sc.queue.len() {
            let u = sc.queue[head] as usize;
            head += 1;
            for &a in &self.adj[self.adj_ptr[u] as usize..self.adj_ptr[u + 1] as usize] {
                let v = self.to[a as usize] as usize;
                if sc.level[v] < 0 && sc.cap[a as usize] > V::ZERO {
                    sc.level[v] = 0;
                    sc.queue.push(v as u32);
                }
            }
        }
        let mut label: Vec<u32> = (0..n).filter(|&v| sc.level[v] >= 0).map(|v| v as u32).collect();
        label.push(g.root() as u32);
        label.sort_unstable();
        Some(label)
    }
}
