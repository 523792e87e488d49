//! Single-path oracles of the `hierarchy` structure: every candidate path scored by
//! enumeration, with its terms accumulated along the graph (the normalized loss of thesis eq.
//! `wserror` does not decompose over nodes, so single paths are enumerated).

use bicrit_core::Terms;

use super::{HierLabel, HierLoss, HierarchyStructure, LabelSpace, Scratch};
use crate::select::in_cone;
use crate::{Scored, TermQuery};

/// The gold label's constants in single-path enumeration.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct GoldSums {
    sigma: f64,
    loss: f64,
    ham: f64,
    /// Σ_{n ∈ y_i} λ_n summed as the candidates' common parts are.
    weight: f64,
}

impl HierarchyStructure {
    /// Sums over Ā(t) for every single-path candidate t into `sc.acc` (one entry per node; only
    /// the candidates of the space are filled), and the gold label's constants.
    ///
    /// Per node the contributions are [σ_n, loss part, 1, ±1, λ_n·[n ∈ y_i]] for counted nodes
    /// ([σ_n, 0, 0, 0, 0] otherwise): the loss part is ±λ_n (decomposable losses, − inside y_i) or
    /// λ_n·[n ∉ y_i] (normalized loss, which needs the sym-diff weight
    /// Σ_{Ā(t)∖y_i} λ + (Σ_{y_i} λ − Σ_{Ā(t)∩y_i} λ) exactly 0 when it should be, before the √).
    pub(super) fn accumulate_single(
        &self,
        sigma: &[f64],
        gold: Option<&[u32]>,
        sc: &mut Scratch,
    ) -> GoldSums {
        let g = &self.graph;
        let m = g.n_nodes();
        let normalized = self.loss == HierLoss::Normalized;
        let contrib = |v: usize| -> [f64; 5] {
            if self.counted[v] {
                let (sgn, lw, in_gold) = if sc.mask[v] {
                    (-1.0, self.miss_weight[v], self.miss_weight[v])
                } else {
                    (1.0, self.loss_weight[v], 0.0)
                };
                let part = if normalized { lw - in_gold } else { lw * sgn };
                [sigma[v], part, 1.0, sgn, in_gold]
            } else {
                [sigma[v], 0.0, 0.0, 0.0, 0.0]
            }
        };
        let mut gs = GoldSums::default();
        if let Some(gd) = gold {
            for &v in gd {
                let v = v as usize;
                gs.sigma += sigma[v];
                if self.counted[v] {
                    gs.loss += self.miss_weight[v];
                    gs.ham += 1.0;
                }
            }
        }
        let mut acc = std::mem::take(&mut sc.acc);
        acc.clear();
        acc.resize(m, [0.0; 5]);
        let add = |s: &mut [f64; 5], c: [f64; 5]| {
            for (x, y) in s.iter_mut().zip(c) {
                *x += y;
            }
        };
        if g.is_tree() {
            for &v in g.topo() {
                let v = v as usize;
                let mut sum = g.parents(v).first().map_or([0.0; 5], |&p| acc[p as usize]);
                add(&mut sum, contrib(v));
                acc[v] = sum;
            }
        } else if let Some((ptr, idx)) = &self.ancestors {
            let mut node_c = std::mem::take(&mut sc.node_c);
            node_c.clear();
            node_c.extend((0..m).map(contrib));
            for (t, slot) in acc.iter_mut().enumerate() {
                let mut sum = [0.0; 5];
                for &v in &idx[ptr[t]..ptr[t + 1]] {
                    add(&mut sum, node_c[v as usize]);
                }
                *slot = sum;
            }
            sc.node_c = node_c;
        } else {
            sc.stamp.resize(m, 0);
            let leaves_only = self.space == LabelSpace::Leaves;
            for (t, slot) in acc.iter_mut().enumerate() {
                if leaves_only && !g.is_leaf(t) {
                    continue;
                }
                sc.stamp_id = sc.stamp_id.wrapping_add(1);
                if sc.stamp_id == 0 {
                    sc.stamp.iter_mut().for_each(|s| *s = 0);
                    sc.stamp_id = 1;
                }
                let id = sc.stamp_id;
                let mut sum = [0.0; 5];
                sc.stack.clear();
                sc.stack.push(t as u32);
                sc.stamp[t] = id;
                while let Some(v) = sc.stack.pop() {
                    add(&mut sum, contrib(v as usize));
                    for &p in g.parents(v as usize) {
                        if sc.stamp[p as usize] != id {
                            sc.stamp[p as usize] = id;
                            sc.stack.push(p);
                        }
                    }
                }
                *slot = sum;
            }
        }
        // The gold's own weight summed the way every candidate's common part is (along its path
        // on trees, in node order with the ancestor table), so that equal sets cancel exactly.
        if let Some(t) = gold.and_then(|gd| self.terminal(gd)) {
            gs.weight = acc[t][4];
        }
        sc.acc = acc;
        gs
    }

    /// (m(y), terms) of the candidate with sums `a` (see [`Self::accumulate_single`]).
    #[inline]
    pub(super) fn candidate_terms(&self, a: &[f64; 5], gs: &GoldSums) -> (f64, Terms) {
        let loss = if self.loss == HierLoss::Normalized {
            (a[1] + (gs.weight - a[4])).max(0.0).sqrt()
        } else {
            a[1] + gs.loss
        };
        (a[0] - gs.sigma, Terms { loss, size: a[2], hamming: a[3] + gs.ham })
    }

    /// Single-path spaces: every label Ā(t) for t a leaf (`Leaves`) or any node (`Any`) is
    /// scored from sums over its nodes, then the query's ban list, cone and k are applied with
    /// the reference semantics of `select_best`.
    pub(super) fn enumerate_single(
        &self,
        sigma: &[f64],
        gold: Option<&[u32]>,
        q: &TermQuery<'_, HierLabel>,
        sc: &mut Scratch,
    ) -> Vec<HierLabel> {
        let g = &self.graph;
        let gs = self.accumulate_single(sigma, gold, sc);
        let acc = std::mem::take(&mut sc.acc);
        // banned labels → their terminal nodes
        let banned: Vec<usize> = q.ban.iter().filter_map(|b| self.terminal(b)).collect();
        let k = q.k.max(1);
        let mut kept = std::mem::take(&mut sc.kept);
        kept.clear();
        let mut best: Option<(f64, f64, u32)> = None;
        let leaves_only = self.space == LabelSpace::Leaves;
        let probe: TermQuery<'_, ()> =
            TermQuery { primary: q.primary, secondary: q.secondary, ban: &[], k: 1, cone: q.cone };
        for (t, a) in acc.iter().enumerate() {
            if (leaves_only && !g.is_leaf(t)) || banned.contains(&t) {
                continue;
            }
            let (margin, terms) = self.candidate_terms(a, &gs);
            let s = Scored { label: (), margin, terms };
            if !in_cone(&probe, &s) {
                continue;
            }
            let p = q.primary.value(s.margin, &s.terms);
            let r = q.secondary.map_or(0.0, |o| o.value(s.margin, &s.terms));
            if k == 1 {
                // first maximum in node order, as the stable sort of `select_best`
                if best.is_none_or(|b| p > b.0 || (p == b.0 && r > b.1)) {
                    best = Some((p, r, t as u32));
                }
            } else {
                kept.push((p, r, t as u32));
            }
        }
        sc.acc = acc;
        if k == 1 {
            kept.extend(best);
        } else {
            kept.sort_by(|a, b| {
                b.0.partial_cmp(&a.0)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(b.1.partial_cmp(&a.1).unwrap_or(std::cmp::Ordering::Equal))
            });
            kept.truncate(k);
        }
        let out = kept.iter().map(|&(_, _, t)| self.path_label(t as usize, sc)).collect();
        sc.kept = kept;
        out
    }
}
