//! Hashed arc features (McDonald, Crammer & Pereira 2005, "Online large-margin training of
//! dependency parsers", Table 1, first-order templates) and the arc scores w·f(h, d, r).
//!
//! A feature is a template id combined with token atoms (`corpus.rs`) into a 64-bit base —
//! word-level FNV-1a over the atoms — hashed to a bucket of `n_features` (MurmurHash3's finaliser,
//! then Lemire's multiply-shift range reduction). The conjunctions of a base are *offsets* from
//! that bucket (wrapping around): for an unlabeled template, direction (offsets 0–1) and direction
//! × distance bin (2–15); for a labeled template, the relation r (offset r). The weights a base
//! touches are thus contiguous — one or two cache lines instead of one miss per conjunction or per
//! relation — while distinct bases still land independently. Everything is deterministic (no
//! random seed, no std `RandomState`). A labeled arc's features are the unlabeled arc features
//! plus the labeled ones: f(h, d, r) = f_u(h, d) + f_l(h, d, r), so its score is
//! s(h, d, r) = s_u(h, d) + s_l(h, d, r).
//!
//! Notation: for head h and dependent d (0 = the root), w = lower-cased form, l = lemma, p = UPOS,
//! x = XPOS; p−1/p+1 the UPOS of the left/right neighbour (outside the sentence: boundary atoms).
//! `dir` says whether the head precedes the dependent; `bin` is the distance |h − d| binned as
//! 1, 2, 3, 4, 5, 6–10, 11+.
//!
//! Unlabeled templates, each emitted twice — conjoined with `dir`, and with (`dir`, `bin`):
//! bias; hw·hp, hw, hp, hl, hx; dw·dp, dw, dp, dl, dx; hw·hp·dw·dp, hp·dw·dp, hw·dw·dp, hw·hp·dp,
//! hw·hp·dw, hw·dw, hp·dp, hl·dl, hx·dx; hp·hp+1·dp−1·dp, hp−1·hp·dp−1·dp, hp·hp+1·dp·dp+1,
//! hp−1·hp·dp·dp+1; and, for spans |h − d| ≤ [`BETWEEN_MAX`], hp·bp·dp for every token b strictly
//! between (conjoined with `dir` only).
//!
//! Labeled templates, each conjoined with the relation r: r·dir; r·dir·bin; r·dir·hp, r·hw, r·hl;
//! r·dir·dp, r·dir·dx, r·dw, r·dl; r·dir·hp·dp (the lexical ones without direction).

use super::corpus::{atom, fmix64, Field, Sentence, FNV_OFFSET, FNV_PRIME};

/// Number of distance bins.
pub const N_BINS: usize = 7;
/// Longest span (|h − d|) whose in-between POS features are emitted.
pub const BETWEEN_MAX: usize = 6;

/// Distance bin of |h − d| ≥ 1: 1, 2, 3, 4, 5, 6–10, 11+.
#[inline]
pub fn dist_bin(dist: usize) -> usize {
    match dist {
        0..=5 => dist.saturating_sub(1),
        6..=10 => 5,
        _ => 6,
    }
}

#[inline]
fn mix(h: u64, x: u64) -> u64 {
    (h ^ x).wrapping_mul(FNV_PRIME)
}

// Tags separating the conjunction parts (arbitrary fixed constants).
const BETWEEN_TEMPLATE: u64 = 24;
const LABELED_BASE: u64 = 100;

/// Generates the feature indices of arcs of one sentence.
#[derive(Clone, Debug)]
pub struct Featurizer<'a> {
    sent: Sentence<'a>,
    n: usize,
    n_features: usize,
    root: [u64; 4],
    before: u64,
    after: u64,
}

/// Offsets of the two conjunctions of an unlabeled template inside its block: direction
/// (slots 0–1), direction × distance bin (slots 2–15).
#[inline]
fn arc_tags(dir: bool, bin: usize) -> (usize, usize) {
    (dir as usize, 2 + dir as usize * N_BINS + bin)
}

#[inline]
fn base(id: u64) -> u64 {
    mix(FNV_OFFSET, id)
}

impl<'a> Featurizer<'a> {
    /// Featurizer of `sent` hashing into `n_features ≥ 1` buckets.
    pub fn new(sent: Sentence<'a>, n_features: usize) -> Self {
        Featurizer {
            sent,
            n: sent.len(),
            n_features,
            root: [atom("<root:form>"), atom("<root:lemma>"), atom("<root:upos>"), atom("<root:xpos>")],
            before: atom("<s>"),
            after: atom("</s>"),
        }
    }

    /// Number of tokens.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Hash → bucket (Lemire's multiply-shift reduction of the finalised hash).
    #[inline]
    pub fn index(&self, h: u64) -> usize {
        ((fmix64(h) as u128 * self.n_features as u128) >> 64) as usize
    }

    /// Bucket `off` of the block that starts at the hashed bucket of `h` (wrapping around).
    #[inline]
    pub fn slot(&self, h: u64, off: usize) -> usize {
        let i = self.index(h) + off;
        if i < self.n_features {
            i
        } else {
            i % self.n_features
        }
    }

    /// Atom of `field` at position `i` (0 = root, 1..=n tokens, outside = boundary atoms).
    #[inline]
    fn tok(&self, f: Field, i: isize) -> u64 {
        if i == 0 {
            self.root[f as usize]
        } else if i < 0 {
            self.before
        } else if i as usize > self.n {
            self.after
        } else {
            self.sent.field(f)[i as usize - 1]
        }
    }

    /// Bases of the head-side unigram templates bias, hw·hp, hw, hp, hl, hx (the bias rides
    /// along with the head: every arc has one).
    #[inline]
    pub fn uni_head_bases(&self, h: usize) -> [u64; 6] {
        let i = h as isize;
        let (w, l, p, x) = (
            self.tok(Field::Form, i),
            self.tok(Field::Lemma, i),
            self.tok(Field::Upos, i),
            self.tok(Field::Xpos, i),
        );
        [base(0), mix(mix(base(1), w), p), mix(base(2), w), mix(base(3), p), mix(base(4), l), mix(base(5), x)]
    }

    /// Bases of the dependent-side unigram templates dw·dp, dw, dp, dl, dx.
    #[inline]
    pub fn uni_dep_bases(&self, d: usize) -> [u64; 5] {
        let i = d as isize;
        let (w, l, p, x) = (
            self.tok(Field::Form, i),
            self.tok(Field::Lemma, i),
            self.tok(Field::Upos, i),
            self.tok(Field::Xpos, i),
        );
        [mix(mix(base(6), w), p), mix(base(7), w), mix(base(8), p), mix(base(9), l), mix(base(10), x)]
    }

    /// Emits a unigram base conjoined with both arc tags.
    #[inline]
    fn emit_tagged(&self, b: u64, tags: (usize, usize), emit: &mut impl FnMut(usize)) {
        emit(self.slot(b, tags.0));
        emit(self.slot(b, tags.1));
    }

    /// Emits the unlabeled features of arc h → d that involve both ends: bigrams, surrounding
    /// POS, in-between POS.
    #[inline]
    pub fn uni_pair(&self, h: usize, d: usize, mut emit: impl FnMut(usize)) {
        let dist = h.abs_diff(d);
        let tags = arc_tags(h < d, dist_bin(dist));
        let (hi, di) = (h as isize, d as isize);
        let hw = self.tok(Field::Form, hi);
        let hl = self.tok(Field::Lemma, hi);
        let hp = self.tok(Field::Upos, hi);
        let hx = self.tok(Field::Xpos, hi);
        let dw = self.tok(Field::Form, di);
        let dl = self.tok(Field::Lemma, di);
        let dp = self.tok(Field::Upos, di);
        let dx = self.tok(Field::Xpos, di);
        let hp_l = self.tok(Field::Upos, hi - 1);
        let hp_r = self.tok(Field::Upos, hi + 1);
        let dp_l = self.tok(Field::Upos, di - 1);
        let dp_r = self.tok(Field::Upos, di + 1);
        macro_rules! t {
            ($id:expr $(, $a:expr)*) => {{
                let mut b = base($id);
                $( b = mix(b, $a); )*
                self.emit_tagged(b, tags, &mut emit);
            }};
        }
        t!(11, hw, hp, dw, dp);
        t!(12, hp, dw, dp);
        t!(13, hw, dw, dp);
        t!(14, hw, hp, dp);
        t!(15, hw, hp, dw);
        t!(16, hw, dw);
        t!(17, hp, dp);
        t!(18, hl, dl);
        t!(19, hx, dx);
        t!(20, hp, hp_r, dp_l, dp);
        t!(21, hp_l, hp, dp_l, dp);
        t!(22, hp, hp_r, dp, dp_r);
        t!(23, hp_l, hp, dp, dp_r);
        if dist <= BETWEEN_MAX {
            let b0 = mix(mix(base(BETWEEN_TEMPLATE), hp), dp);
            let (lo, hi_) = if h < d { (h, d) } else { (d, h) };
            for b in lo + 1..hi_ {
                let bp = self.tok(Field::Upos, b as isize);
                emit(self.slot(mix(b0, bp), tags.0));
            }
        }
    }

    /// Emits the unlabeled features f_u(h, d) (h ∈ 0..=n, d ∈ 1..=n, h ≠ d).
    pub fn unlabeled(&self, h: usize, d: usize, mut emit: impl FnMut(usize)) {
        let tags = arc_tags(h < d, dist_bin(h.abs_diff(d)));
        for b in self.uni_head_bases(h) {
            self.emit_tagged(b, tags, &mut emit);
        }
        for b in self.uni_dep_bases(d) {
            self.emit_tagged(b, tags, &mut emit);
        }
        self.uni_pair(h, d, emit);
    }

    /// Base of the labeled template r·hp (conjoined with `dir`).
    #[inline]
    pub fn lab_head_dir_base(&self, h: usize, dir: bool) -> u64 {
        mix(mix(base(LABELED_BASE + 2), dir as u64), self.tok(Field::Upos, h as isize))
    }

    /// Bases of the lexical head-side labeled templates r·hw, r·hl (no direction).
    #[inline]
    pub fn lab_head_lex_bases(&self, h: usize) -> [u64; 2] {
        let i = h as isize;
        [
            mix(base(LABELED_BASE + 3), self.tok(Field::Form, i)),
            mix(base(LABELED_BASE + 4), self.tok(Field::Lemma, i)),
        ]
    }

    /// Bases of the dependent-side labeled templates r·dp, r·dx (conjoined with `dir`).
    #[inline]
    pub fn lab_dep_dir_bases(&self, d: usize, dir: bool) -> [u64; 2] {
        let i = d as isize;
        [
            mix(mix(base(LABELED_BASE + 5), dir as u64), self.tok(Field::Upos, i)),
            mix(mix(base(LABELED_BASE + 6), dir as u64), self.tok(Field::Xpos, i)),
        ]
    }

    /// Bases of the lexical dependent-side labeled templates r·dw, r·dl (no direction).
    #[inline]
    pub fn lab_dep_lex_bases(&self, d: usize) -> [u64; 2] {
        let i = d as isize;
        [
            mix(base(LABELED_BASE + 7), self.tok(Field::Form, i)),
            mix(base(LABELED_BASE + 8), self.tok(Field::Lemma, i)),
        ]
    }

    /// Bases of the labeled templates r and r·bin (conjoined with `dir`).
    #[inline]
    pub fn lab_dist_bases(dir: bool, bin: usize) -> [u64; 2] {
        [mix(base(LABELED_BASE), dir as u64), mix(mix(base(LABELED_BASE + 1), dir as u64), bin as u64)]
    }

    /// Base of the labeled template r·hp·dp (conjoined with `dir`).
    #[inline]
    pub fn lab_pair_base(&self, h: usize, d: usize) -> u64 {
        let hp = self.tok(Field::Upos, h as isize);
        let dp = self.tok(Field::Upos, d as isize);
        mix(mix(mix(base(LABELED_BASE + 9), (h < d) as u64), hp), dp)
    }

    /// Bucket of a labeled template base conjoined with relation `r`.
    #[inline]
    pub fn lab_index(&self, base: u64, r: usize) -> usize {
        self.slot(base, r)
    }

    /// Emits the labeled features f_l(h, d, r).
    pub fn labeled(&self, h: usize, d: usize, r: usize, mut emit: impl FnMut(usize)) {
        let dir = h < d;
        emit(self.lab_index(self.lab_head_dir_base(h, dir), r));
        for b in self.lab_head_lex_bases(h) {
            emit(self.lab_index(b, r));
        }
        for b in self.lab_dep_dir_bases(d, dir) {
            emit(self.lab_index(b, r));
        }
        for b in self.lab_dep_lex_bases(d) {
            emit(self.lab_index(b, r));
        }
        for b in Self::lab_dist_bases(dir, dist_bin(h.abs_diff(d))) {
            emit(self.lab_index(b, r));
        }
        emit(self.lab_index(self.lab_pair_base(h, d), r));
    }

    /// UPOS atom at position i (0 = root).
    #[inline]
    fn upos(&self, i: usize) -> u64 {
        self.tok(Field::Upos, i as isize)
    }
}

/// Arc scores of one sentence under weights `w`: s_u(h, d) and s_l(h, d, r).
///
/// Parts of the score that depend on one end of the arc only are tabulated once per sentence:
/// unigram templates per (position, dir, bin), labeled head-side and dependent-side templates per
/// (position, dir, r), labeled distance templates per (dir, bin, r); the labeled r·hp·dp part is
/// cached per (head UPOS, dependent UPOS, dir). What remains per arc are the two-ended unlabeled
/// templates (about 28 lookups) and, per labeled candidate, a few table reads.
pub struct ArcScorer<'a> {
    f: Featurizer<'a>,
    w: &'a [f64],
    n_rel: usize,
    uni_head: Vec<f64>,
    uni_dep: Vec<f64>,
    lab_head: Vec<f64>,
    lab_dep: Vec<f64>,
    lab_dist: Vec<f64>,
    pos_id: Vec<u32>,
    n_pos: usize,
    pair_row: Vec<u32>,
    pair: Vec<f64>,
    finite: bool,
    scratch: Vec<f64>,
}

const UNSET: u32 = u32::MAX;

impl<'a> ArcScorer<'a> {
    /// Scores of `f`'s sentence under `w` (length ≥ the featurizer's `n_features`), with
    /// `n_rel` relations (0: unlabeled).
    pub fn new(f: Featurizer<'a>, w: &'a [f64], n_rel: usize) -> Self {
        let n = f.n();
        let nb = N_BINS;
        let wsum = |f: &Featurizer<'_>, b: u64, off: usize| w[f.slot(b, off)];
        // unigram tables: [(pos * 2 + dir) * N_BINS + bin]
        let mut uni_head = vec![0.0; (n + 1) * 2 * nb];
        let mut uni_dep = vec![0.0; (n + 1) * 2 * nb];
        for pos in 0..=n {
            let hb = f.uni_head_bases(pos);
            let db = if pos > 0 { Some(f.uni_dep_bases(pos)) } else { None };
            for dir in [false, true] {
                let (td, _) = arc_tags(dir, 0);
                let h_dir: f64 = hb.iter().map(|&b| wsum(&f, b, td)).sum();
                let d_dir: f64 = db.as_ref().map_or(0.0, |db| db.iter().map(|&b| wsum(&f, b, td)).sum());
                for bin in 0..nb {
                    let (_, tb) = arc_tags(dir, bin);
                    let row = (pos * 2 + dir as usize) * nb + bin;
                    uni_head[row] = h_dir + hb.iter().map(|&b| wsum(&f, b, tb)).sum::<f64>();
                    if let Some(db) = &db {
                        uni_dep[row] = d_dir + db.iter().map(|&b| wsum(&f, b, tb)).sum::<f64>();
                    }
                }
            }
        }
        let mut s = ArcScorer {
            f,
            w,
            n_rel,
            uni_head,
            uni_dep,
            lab_head: Vec::new(),
            lab_dep: Vec::new(),
            lab_dist: Vec::new(),
            pos_id: Vec::new(),
            n_pos: 0,
            pair_row: Vec::new(),
            pair: Vec::new(),
            finite: true,
            scratch: Vec::new(),
        };
        if n_rel > 0 {
            s.build_labeled_tables();
        }
        s
    }

    fn build_labeled_tables(&mut self) {
        let (n, nr, w) = (self.f.n(), self.n_rel, self.w);
        let f = &self.f;
        self.lab_head = vec![0.0; (n + 1) * 2 * nr];
        self.lab_dep = vec![0.0; (n + 1) * 2 * nr];
        self.lab_dist = vec![0.0; 2 * N_BINS * nr];
        let mut lex = vec![0.0; nr];
        for pos in 0..=n {
            let hl = f.lab_head_lex_bases(pos);
            for (r, x) in lex.iter_mut().enumerate() {
                *x = hl.iter().map(|&b| w[f.lab_index(b, r)]).sum();
            }
            for dir in [false, true] {
                let row = (pos * 2 + dir as usize) * nr;
                let hd = f.lab_head_dir_base(pos, dir);
                for r in 0..nr {
                    self.lab_head[row + r] = lex[r] + w[f.lab_index(hd, r)];
                }
            }
            if pos == 0 {
                continue;
            }
            let dl = f.lab_dep_lex_bases(pos);
            for (r, x) in lex.iter_mut().enumerate() {
                *x = dl.iter().map(|&b| w[f.lab_index(b, r)]).sum();
            }
            for dir in [false, true] {
                let row = (pos * 2 + dir as usize) * nr;
                let dd = f.lab_dep_dir_bases(pos, dir);
                for r in 0..nr {
                    self.lab_dep[row + r] = lex[r] + dd.iter().map(|&b| w[f.lab_index(b, r)]).sum::<f64>();
                }
            }
        }
        for dir in [false, true] {
            for bin in 0..N_BINS {
                let row = (dir as usize * N_BINS + bin) * nr;
                let bases = Featurizer::lab_dist_bases(dir, bin);
                for r in 0..nr {
                    self.lab_dist[row + r] = bases.iter().map(|&b| w[f.lab_index(b, r)]).sum();
                }
            }
        }
        self.finite = self.lab_head.iter().chain(&self.lab_dep).chain(&self.lab_dist).all(|v| v.is_finite());
        // sentence-local UPOS ids for the r·hp·dp cache
        let mut seen: Vec<u64> = Vec::new();
        self.pos_id = (0..=n)
            .map(|i| {
                let a = f.upos(i);
                match seen.iter().position(|&x| x == a) {
                    Some(p) => p as u32,
                    None => {
                        seen.push(a);
                        (seen.len() - 1) as u32
                    }
                }
            })
            .collect();
        self.n_pos = seen.len();
        self.pair_row = vec![UNSET; self.n_pos * self.n_pos * 2];
        self.pair.clear();
    }

    /// The featurizer.
    pub fn featurizer(&self) -> &Featurizer<'a> {
        &self.f
    }

    /// Are the per-sentence labeled tables finite? (Sums of finite weights overflow only for
    /// weights near f64::MAX; the oracle then refuses the input.)
    pub fn tables_finite(&self) -> bool {
        self.finite
    }

    /// s_u(h, d).
    #[inline]
    pub fn unlabeled(&self, h: usize, d: usize) -> f64 {
        let dir = (h < d) as usize;
        let bin = dist_bin(h.abs_diff(d));
        let mut s = self.uni_head[(h * 2 + dir) * N_BINS + bin] + self.uni_dep[(d * 2 + dir) * N_BINS + bin];
        self.f.uni_pair(h, d, |i| s += self.w[i]);
        s
    }

    /// The relation r ≠ `skip` maximising `sign · s_l(h, d, r)` (the first on ties) with its
    /// s_l, and s_l(h, d, skip) when `skip < n_rel`. (The one-best fast path of the oracle.)
    #[inline]
    pub fn labeled_best(
        &mut self,
        h: usize,
        d: usize,
        sign: f64,
        skip: usize,
    ) -> (Option<(usize, f64)>, f64) {
        let nr = self.n_rel;
        let dir = (h < d) as usize;
        let prow = self.pair_row(h, d, dir);
        let prow = &self.pair[prow * nr..][..nr];
        let hrow = &self.lab_head[(h * 2 + dir) * nr..][..nr];
        let drow = &self.lab_dep[(d * 2 + dir) * nr..][..nr];
        let brow = &self.lab_dist[(dir * N_BINS + dist_bin(h.abs_diff(d))) * nr..][..nr];
        let mut best: Option<(usize, f64)> = None;
        let mut bk = f64::NEG_INFINITY;
        let mut gold = 0.0;
        for r in 0..nr {
            let x = hrow[r] + drow[r] + brow[r] + prow[r];
            if r == skip {
                gold = x;
                continue;
            }
            let key = sign * x;
            if best.is_none() || key > bk {
                best = Some((r, x));
                bk = key;
            }
        }
        (best, gold)
    }

    /// The `k` relations r ≠ `skip` with the largest `sign · s_l(h, d, r)` (best first, the
    /// smaller r first on ties) with their s_l, into `out`; returns s_l(h, d, skip) (0 when
    /// `skip ≥ n_rel`).
    pub fn labeled_topk(
        &mut self,
        h: usize,
        d: usize,
        sign: f64,
        skip: usize,
        k: usize,
        out: &mut Vec<(usize, f64)>,
    ) -> f64 {
        let nr = self.n_rel;
        let dir = (h < d) as usize;
        let prow = self.pair_row(h, d, dir);
        let mut xs = std::mem::take(&mut self.scratch);
        xs.clear();
        {
            let prow = &self.pair[prow * nr..][..nr];
            let hrow = &self.lab_head[(h * 2 + dir) * nr..][..nr];
            let drow = &self.lab_dep[(d * 2 + dir) * nr..][..nr];
            let brow = &self.lab_dist[(dir * N_BINS + dist_bin(h.abs_diff(d))) * nr..][..nr];
            xs.extend((0..nr).map(|r| hrow[r] + drow[r] + brow[r] + prow[r]));
        }
        out.clear();
        let mut thr = f64::NEG_INFINITY; // key of the k-th kept relation once `out` is full
        for (r, &x) in xs.iter().enumerate() {
            let key = sign * x;
            if r == skip || (out.len() == k && key <= thr) {
                continue;
            }
            let mut pos = out.len();
            while pos > 0 && key > sign * out[pos - 1].1 {
                pos -= 1;
            }
            if out.len() == k {
                out.pop();
            }
            out.insert(pos, (r, x));
            if out.len() == k {
                thr = sign * out[k - 1].1;
            }
        }
        let gold = if skip < nr { xs[skip] } else { 0.0 };
        self.scratch = xs;
        gold
    }

    /// Row of the r·hp·dp cache for arc h → d (filled on first use).
    #[inline]
    fn pair_row(&mut self, h: usize, d: usize, dir: usize) -> usize {
        let nr = self.n_rel;
        let key = (self.pos_id[h] as usize * self.n_pos + self.pos_id[d] as usize) * 2 + dir;
        if self.pair_row[key] == UNSET {
            self.pair_row[key] = (self.pair.len() / nr.max(1)) as u32;
            let pb = self.f.lab_pair_base(h, d);
            for r in 0..nr {
                let v = self.w[self.f.lab_index(pb, r)];
                self.pair.push(v);
            }
        }
        self.pair_row[key] as usize
    }

    /// s_l(h, d, r) for every relation r, written into `out` (length `n_rel`).
    #[inline]
    pub fn labeled_into(&mut self, h: usize, d: usize, out: &mut [f64]) {
        let nr = self.n_rel;
        let dir = (h < d) as usize;
        let prow = self.pair_row(h, d, dir);
        let prow = &self.pair[prow * nr..][..nr];
        let hrow = &self.lab_head[(h * 2 + dir) * nr..][..nr];
        let drow = &self.lab_dep[(d * 2 + dir) * nr..][..nr];
        let brow = &self.lab_dist[(dir * N_BINS + dist_bin(h.abs_diff(d))) * nr..][..nr];
        for r in 0..nr {
            out[r] = hrow[r] + drow[r] + brow[r] + prow[r];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::corpus::Sentences;
    use super::*;

    fn sentence() -> Sentences {
        let mut s = Sentences::new();
        s.push_strs(
            &["The", "dog", "barks", "loudly"],
            Some(&["the", "dog", "bark", "loudly"]),
            &["DET", "NOUN", "VERB", "ADV"],
            Some(&["DT", "NN", "VBZ", "RB"]),
        )
        .unwrap();
        s
    }

    #[test]
    fn bins() {
        let got: Vec<usize> = (1..=12).map(dist_bin).collect();
        assert_eq!(got, vec![0, 1, 2, 3, 4, 5, 5, 5, 5, 5, 6, 6]);
    }

    #[test]
    fn factored_scores_equal_feature_sums() {
        let s = sentence();
        let f = Featurizer::new(s.get(0).unwrap(), 1 << 12);
        let w: Vec<f64> = (0..1 << 12).map(|i| ((i * 7919) % 13) as f64 - 6.0).collect();
        let mut sc = ArcScorer::new(f.clone(), &w, 3);
        let mut out = [0.0; 3];
        for d in 1..=4 {
            for h in 0..=4 {
                if h == d {
                    continue;
                }
                let mut direct = 0.0;
                f.unlabeled(h, d, |i| direct += w[i]);
                assert_eq!(sc.unlabeled(h, d), direct);
                sc.labeled_into(h, d, &mut out);
                for (r, &got) in out.iter().enumerate() {
                    let mut want = 0.0;
                    f.labeled(h, d, r, |i| want += w[i]);
                    assert!((got - want).abs() < 1e-9, "{h} {d} {r}: {got} vs {want}");
                }
            }
        }
    }

    #[test]
    fn feature_counts_and_range() {
        let s = sentence();
        let f = Featurizer::new(s.get(0).unwrap(), 1000);
        let mut idx = Vec::new();
        f.unlabeled(1, 4, |i| idx.push(i));
        // 24 templates × 2 conjunctions + 2 in-between tokens
        assert_eq!(idx.len(), 50);
        assert!(idx.iter().all(|&i| i < 1000));
        let mut lab = Vec::new();
        f.labeled(0, 3, 1, |i| lab.push(i));
        assert_eq!(lab.len(), 10);
        // direction matters
        let mut back = Vec::new();
        f.unlabeled(4, 1, |i| back.push(i));
        assert_ne!(idx, back);
    }
}
