//! Frontier search: the exact integral optimum in one oracle call, for every ψ non-decreasing in
//! h, when the oracle can give the frontier by loss value ([`LambdaOracle::frontier`]).
//!
//! With H(c) = max {h(y) : g(y) = c}, every label y is dominated by (H(g(y)), g(y)), so for ψ
//! non-decreasing in h for fixed g
//!
//! `max_y ψ(h(y), g(y)) = max_c ψ(H(c), c)`,
//!
//! over the attainable values c of g (on chains with the token Hamming loss, c = 0..=T: one DP over
//! (position, state, count) computes every H(c)). Every built-in surrogate is non-decreasing in h
//! on g ≥ 0; the [`bicrit_surrogates::Surrogate`] contract asks it of a plugin on the super-level
//! set of ψ(gold), and the gold label is the floor, so the answer is exact whenever the oracle
//! knows the gold label. No quasi-concavity is needed: unlike the convex hull + ban-list loop
//! (thesis §`sec:NER`), the cost does not grow with the number of labels between the hull and the
//! integral optimum — ProbLoss on CoNLL needed hundreds of ban-list calls per inference.
//!
//! Ties between points of equal Φ go to the larger h, then to the smaller g; the gold label wins
//! every tie (zero loss, zero subgradient). The certified upper bound is the value itself.

use bicrit_core::{LambdaOracle, Result};

use crate::session::Session;
use crate::{Found, Requirements, Search, WarmStart};

/// Frontier search (no options: one call, exact).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Frontier;

impl Search for Frontier {
    fn name(&self) -> &'static str {
        "frontier"
    }

    fn requirements(&self) -> Requirements {
        Requirements { frontier: true, ..Requirements::default() }
    }

    fn max_calls(&self) -> usize {
        1
    }

    fn search<'a, O: LambdaOracle>(
        &self,
        s: &mut Session<'a, O>,
        _warm: Option<&'a WarmStart<O::Label>>,
        _xi: Option<f64>,
    ) -> Result<Found<O::Label>> {
        for p in s.frontier()? {
            s.add(p)?;
        }
        // Best Φ; ties: larger h, then smaller g; the gold label on any tie with the best Φ.
        let key = |i: usize| (s.known[i].phi, s.known[i].h, -s.known[i].g);
        let mut best: Option<usize> = None;
        for i in 0..s.known.len() {
            if best.is_none_or(|b| key(i) > key(b)) {
                best = Some(i);
            }
        }
        if let (Some(b), Some(gi)) = (best, s.known.iter().position(|c| c.gold)) {
            if s.known[gi].phi >= s.known[b].phi {
                best = Some(gi);
            }
        }
        // exact: the certified upper bound is the value itself (`at` raises −∞ to it)
        Ok(Found::at(s, best, best.map(|_| f64::NEG_INFINITY)))
    }
}
