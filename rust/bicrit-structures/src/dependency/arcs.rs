//! Arc candidate tables: for every arc (h → d) the best `kmax` labeled candidates (value, relation),
//! best first. The decoders only ever see this table.
//!
//! Why a table of per-arc label lists suffices (the max-over-labels reduction): the objective
//! `margin_coef·m(y) + Σ_t c_t·term_t(y)` of the `dependency` structure is a sum over tokens d of a
//! value v(h_d, d, r_d) — the arc score, the token's loss (1 for a wrong head, `label_weight` for a
//! right head with a wrong relation), its indicator-set Hamming term and the constant size term all
//! decompose per token, whatever the signs of the coefficients. The tree constraint involves heads
//! only. Hence, for a fixed head vector, the best relations are chosen independently per token, and
//! the best labeled tree is the best tree under the arc values max_r v(h, d, r) — exact for the
//! λ-oracle with label-Hamming loss, and for the lexicographic (primary, secondary) values too,
//! since lexicographic pairs are an ordered group. For k-best lists the j-th best labeled tree uses,
//! on every arc, one of the arc's j best labels, so keeping the best `kmax ≥ k` labels per arc loses
//! nothing (see `eisner.rs` and `cle.rs`).

use super::val::Val;

/// Best `kmax` labeled candidates per arc (h ∈ 0..=n, d ∈ 1..=n, h ≠ d), sorted best first; ties
/// keep insertion order (smaller relation id first).
#[derive(Clone, Debug)]
pub struct ArcTable {
    n: usize,
    kmax: usize,
    multi_root: bool,
    len: Vec<u32>,
    vals: Vec<Val>,
    rels: Vec<u32>,
}

impl ArcTable {
    /// An empty table for `n` tokens keeping `kmax ≥ 1` candidates per arc.
    pub fn new(n: usize, kmax: usize) -> Self {
        let kmax = kmax.max(1);
        let cells = (n + 1) * (n + 1);
        ArcTable {
            n,
            kmax,
            multi_root: false,
            len: vec![0; cells],
            vals: vec![Val::ZERO; cells * kmax],
            rels: vec![0; cells * kmax],
        }
    }

    /// Number of tokens.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Lets the decoders return trees with several children of the root (default: exactly one,
    /// UD's convention).
    pub fn set_multi_root(&mut self, multi_root: bool) {
        self.multi_root = multi_root;
    }

    /// May the root have several children?
    pub fn multi_root(&self) -> bool {
        self.multi_root
    }

    /// Candidates kept per arc.
    pub fn kmax(&self) -> usize {
        self.kmax
    }

    #[inline]
    fn cell(&self, h: usize, d: usize) -> usize {
        h * (self.n + 1) + d
    }

    /// Offers candidate (value, relation) for arc h → d; kept when among the `kmax` best.
    #[inline]
    pub fn offer(&mut self, h: usize, d: usize, val: Val, rel: u32) {
        let c = self.cell(h, d);
        let base = c * self.kmax;
        let len = self.len[c] as usize;
        // position after every candidate that is at least as good (stable)
        let mut pos = len;
        while pos > 0 && val.gt(&self.vals[base + pos - 1]) {
            pos -= 1;
        }
        if pos >= self.kmax {
            return;
        }
        let new_len = (len + 1).min(self.kmax);
        let mut i = new_len - 1;
        while i > pos {
            self.vals[base + i] = self.vals[base + i - 1];
            self.rels[base + i] = self.rels[base + i - 1];
            i -= 1;
        }
        self.vals[base + pos] = val;
        self.rels[base + pos] = rel;
        self.len[c] = new_len as u32;
    }

    /// Candidate values of arc h → d, best first (empty: the arc is absent).
    #[inline]
    pub fn vals(&self, h: usize, d: usize) -> &[Val] {
        let c = self.cell(h, d);
        &self.vals[c * self.kmax..c * self.kmax + self.len[c] as usize]
    }

    /// Does every arc h → d (h ∈ 0..=n, d ∈ 1..=n, h ≠ d) have at least one candidate?
    pub fn is_complete(&self) -> bool {
        (1..=self.n).all(|d| (0..=self.n).all(|h| h == d || self.len[self.cell(h, d)] > 0))
    }

    /// Relation of candidate `slot` of arc h → d.
    #[inline]
    pub fn rel(&self, h: usize, d: usize, slot: usize) -> u32 {
        self.rels[self.cell(h, d) * self.kmax + slot]
    }
}

/// A decoded tree: its value under the table, heads (`heads[j]` the head of token j + 1) and the
/// relation of every arc (0 when the table is unlabeled).
#[derive(Clone, Debug, PartialEq)]
pub struct Tree {
    /// Sum of the chosen candidates' values (root component 0).
    pub val: Val,
    /// Heads of tokens 1..=n.
    pub heads: Vec<u32>,
    /// Relations of tokens 1..=n.
    pub rels: Vec<u32>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_best_stably() {
        let mut t = ArcTable::new(2, 2);
        t.offer(0, 1, Val::new(1.0, 0.0), 0);
        t.offer(0, 1, Val::new(3.0, 0.0), 1);
        t.offer(0, 1, Val::new(3.0, 0.0), 2);
        t.offer(0, 1, Val::new(2.0, 0.0), 3);
        assert_eq!(t.vals(0, 1).iter().map(|v| v.p).collect::<Vec<_>>(), vec![3.0, 3.0]);
        assert_eq!((t.rel(0, 1, 0), t.rel(0, 1, 1)), (1, 2));
        assert!(t.vals(2, 1).is_empty());
    }
}
