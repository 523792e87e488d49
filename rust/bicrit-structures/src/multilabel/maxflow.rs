//! Maximum flow / minimum cut by Dinic's algorithm on flat arrays (written for bicrit; the QPBO
//! networks are small and dense: 2K + 2 nodes and 2 arcs per MRF edge).
//!
//! Arcs are stored in pairs (a, a ^ 1) = (forward, reverse); `cap` holds residual capacities. The
//! adjacency is a CSR over arc ids, built once after all arcs are added. Residuals at or below
//! `eps` count as saturated, so floating-point dust never creates augmenting paths; the flow found
//! is maximal up to `eps` per arc, and every cut reported is minimum up to that tolerance.

/// A flow network with reusable buffers.
#[derive(Default, Debug)]
pub(crate) struct FlowGraph {
    n: usize,
    from: Vec<u32>,
    to: Vec<u32>,
    cap: Vec<f64>,
    start: Vec<u32>,
    order: Vec<u32>,
    level: Vec<i32>,
    it: Vec<u32>,
    queue: Vec<u32>,
    path: Vec<u32>,
    max_cap: f64,
}

impl FlowGraph {
    /// Clears the network and sets the number of nodes (buffers are kept).
    pub fn reset(&mut self, n: usize) {
        self.n = n;
        self.from.clear();
        self.to.clear();
        self.cap.clear();
        self.max_cap = 0.0;
    }

    /// Adds an arc u → v of capacity `c ≥ 0` (and its reverse of capacity 0). Zero arcs are skipped.
    pub fn add_arc(&mut self, u: usize, v: usize, c: f64) {
        if c <= 0.0 {
            return;
        }
        self.from.extend([u as u32, v as u32]);
        self.to.extend([v as u32, u as u32]);
        self.cap.extend([c, 0.0]);
        if c.is_finite() {
            self.max_cap = self.max_cap.max(c);
        }
    }

    /// Tolerance below which a residual counts as zero.
    pub fn eps(&self) -> f64 {
        1e-12 * self.max_cap.max(f64::MIN_POSITIVE)
    }

    fn build_adjacency(&mut self) {
        let n = self.n;
        self.start.clear();
        self.start.resize(n + 1, 0);
        for &u in &self.from {
            self.start[u as usize + 1] += 1;
        }
        for v in 0..n {
            self.start[v + 1] += self.start[v];
        }
        self.order.clear();
        self.order.resize(self.from.len(), 0);
        self.it.clear();
        self.it.extend_from_slice(&self.start[..n]);
        for (a, &u) in self.from.iter().enumerate() {
            let slot = &mut self.it[u as usize];
            self.order[*slot as usize] = a as u32;
            *slot += 1;
        }
    }

    fn bfs(&mut self, s: usize, t: usize, eps: f64) -> bool {
        self.level.clear();
        self.level.resize(self.n, -1);
        self.queue.clear();
        self.level[s] = 0;
        self.queue.push(s as u32);
        let mut head = 0;
        while head < self.queue.len() {
            let u = self.queue[head] as usize;
            head += 1;
            // nodes as deep as t cannot lie on a shortest augmenting path
            if self.level[t] >= 0 && self.level[u] >= self.level[t] {
                break;
            }
            for &a in &self.order[self.start[u] as usize..self.start[u + 1] as usize] {
                let v = self.to[a as usize] as usize;
                if self.level[v] < 0 && self.cap[a as usize] > eps {
                    self.level[v] = self.level[u] + 1;
                    self.queue.push(v as u32);
                }
            }
        }
        if self.level[t] < 0 {
            return false;
        }
        // other nodes at t's depth are dead ends of the level graph
        let depth = self.level[t];
        for v in 0..self.n {
            if v != t && self.level[v] >= depth {
                self.level[v] = -1;
            }
        }
        true
    }

    /// Pushes a maximum flow from `s` to `t`; returns its value (+∞ if an all-infinite path exists).
    pub fn max_flow(&mut self, s: usize, t: usize) -> f64 {
        self.build_adjacency();
        let eps = self.eps();
        let mut flow = 0.0;
        while self.bfs(s, t, eps) {
            self.it.clear();
            self.it.extend_from_slice(&self.start[..self.n]);
            self.path.clear();
            let mut u = s;
            loop {
                if u == t {
                    let b = self.path.iter().map(|&a| self.cap[a as usize]).fold(f64::INFINITY, f64::min);
                    if b.is_infinite() {
                        return f64::INFINITY;
                    }
                    flow += b;
                    let mut back_to = self.path.len();
                    for (pos, &a) in self.path.iter().enumerate() {
                        let a = a as usize;
                        self.cap[a] -= b;
                        self.cap[a ^ 1] += b;
                        if self.cap[a] <= eps && back_to == self.path.len() {
                            back_to = pos;
                        }
                    }
                    // resume from the tail of the first saturated arc
                    self.path.truncate(back_to);
                    u = self.path.last().map_or(s, |&a| self.to[a as usize] as usize);
                    continue;
                }
                let end = self.start[u + 1];
                let mut advanced = false;
                while self.it[u] < end {
                    let a = self.order[self.it[u] as usize] as usize;
                    let v = self.to[a] as usize;
                    if self.cap[a] > eps && self.level[v] == self.level[u] + 1 {
                        self.path.push(a as u32);
                        u = v;
                        advanced = true;
                        break;
                    }
                    self.it[u] += 1;
                }
                if !advanced {
                    if u == s {
                        break;
                    }
                    // dead end: retreat and never come back to u in this phase
                    self.level[u] = -1;
                    let a = self.path.pop().expect("non-source node on the path") as usize;
                    u = self.from[a] as usize;
                    self.it[u] += 1;
                }
            }
        }
        flow
    }

    /// Source side of the minimum cut after [`FlowGraph::max_flow`]: nodes reachable from `s`
    /// through residual arcs (the smallest source set of all minimum cuts).
    pub fn source_side(&mut self, s: usize) -> Vec<bool> {
        let eps = self.eps();
        let mut seen = vec![false; self.n];
        self.queue.clear();
        seen[s] = true;
        self.queue.push(s as u32);
        let mut head = 0;
        while head < self.queue.len() {
            let u = self.queue[head] as usize;
            head += 1;
            for &a in &self.order[self.start[u] as usize..self.start[u + 1] as usize] {
                let v = self.to[a as usize] as usize;
                if !seen[v] && self.cap[a as usize] > eps {
                    seen[v] = true;
                    self.queue.push(v as u32);
                }
            }
        }
        seen
    }

    /// Nodes that reach `t` through residual arcs after [`FlowGraph::max_flow`] (they lie on the
    /// sink side of every minimum cut).
    pub fn sink_side(&mut self, t: usize) -> Vec<bool> {
        let eps = self.eps();
        let mut seen = vec![false; self.n];
        self.queue.clear();
        seen[t] = true;
        self.queue.push(t as u32);
        let mut head = 0;
        while head < self.queue.len() {
            let v = self.queue[head] as usize;
            head += 1;
            // the slots leaving v are the reverses of the arcs entering v
            for &b in &self.order[self.start[v] as usize..self.start[v + 1] as usize] {
                let u = self.to[b as usize] as usize;
                if !seen[u] && self.cap[b as usize ^ 1] > eps {
                    seen[u] = true;
                    self.queue.push(u as u32);
                }
            }
        }
        seen
    }

    /// Residual arcs (u, v) with positive residual capacity (above `eps`), after a max flow.
    pub fn residual_arcs(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        let eps = self.eps();
        (0..self.from.len())
            .filter(move |&a| self.cap[a] > eps)
            .map(|a| (self.from[a] as usize, self.to[a] as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Minimum cut by enumeration of all source sets.
    fn brute_min_cut(n: usize, arcs: &[(usize, usize, f64)], s: usize, t: usize) -> f64 {
        let mut best = f64::INFINITY;
        for mask in 0u32..(1 << n) {
            if (mask >> s) & 1 == 0 || (mask >> t) & 1 == 1 {
                continue;
            }
            let c: f64 = arcs
                .iter()
                .filter(|&&(u, v, _)| (mask >> u) & 1 == 1 && (mask >> v) & 1 == 0)
                .map(|a| a.2)
                .sum();
            best = best.min(c);
        }
        best
    }

    #[test]
    fn max_flow_equals_brute_force_min_cut() {
        let mut state = 12345u64;
        let mut rnd = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut g = FlowGraph::default();
        for _ in 0..500 {
            let n = 2 + (rnd() % 7) as usize;
            let m = (rnd() % 20) as usize;
            let arcs: Vec<(usize, usize, f64)> = (0..m)
                .map(|_| {
                    let u = (rnd() % n as u64) as usize;
                    let v = (rnd() % n as u64) as usize;
                    (u, v, (rnd() % 5) as f64 * 0.5)
                })
                .filter(|a| a.0 != a.1)
                .collect();
            g.reset(n);
            for &(u, v, c) in &arcs {
                g.add_arc(u, v, c);
            }
            let f = g.max_flow(0, n - 1);
            let cut = brute_min_cut(n, &arcs, 0, n - 1);
            assert!((f - cut).abs() < 1e-9, "{f} vs {cut}");
            let side = g.source_side(0);
            assert!(!side[n - 1]);
            let c: f64 = arcs.iter().filter(|a| side[a.0] && !side[a.1]).map(|a| a.2).sum();
            assert!((c - cut).abs() < 1e-9);
            // the complement of the sink side is a minimum cut too, containing the source side
            let sink = g.sink_side(n - 1);
            assert!(!sink[0]);
            let c: f64 = arcs.iter().filter(|a| !sink[a.0] && sink[a.1]).map(|a| a.2).sum();
            assert!((c - cut).abs() < 1e-9);
            assert!((0..n).all(|v| !(side[v] && sink[v])));
        }
    }
}
