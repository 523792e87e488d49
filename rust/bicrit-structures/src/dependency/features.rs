//! Hashed arc features (McDonald, Crammer & Pereira 2005, "Online large-margin training of
//! dependency parsers", Table 1, first-order templates) and the arc scores w·f(h, d, r).
//!
//! A feature is a template id combined with token atoms (`corpus.rs`), hashed into `n_features`
//! buckets: word-level FNV-1a over the 64-bit atoms, MurmurHash3's finaliser, then Lemire's
//! multiply-shift range reduction. Everything is deterministic (no random seed, no std
//! `RandomState`). A labeled arc's features are the unlabeled arc features plus the labeled ones:
//! f(h, d, r) = f_u(h, d) + f_l(h, d, r), so its score is s(h, d, r) = s_u(h, d) + s_l(h, d, r).
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
//! Labeled templates, each conjoined with the relation r and `dir`: r; r·bin; r·hp, r·hw, r·hl;
//! r·dp, r·dx, r·dw, r·dl; r·hp·dp.

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
const DIR_TAG: u64 = 0x6469_7200_0000_0001;
const DIST_TAG: u64 = 0x6469_7374_0000_0002;
const REL_TAG: u64 = 0x7265_6c00_0000_0003;
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

    /// Emits the unlabeled features f_u(h, d) (h ∈ 0..=n, d ∈ 1..=n, h ≠ d).
    #[inline]
    pub fn unlabeled(&self, h: usize, d: usize, mut emit: impl FnMut(usize)) {
        let dir = (h < d) as u64;
        let dist = h.abs_diff(d);
        let tag_dir = mix(DIR_TAG, dir);
        let tag_dist = mix(mix(DIST_TAG, dir), dist_bin(dist) as u64);
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
                #[allow(unused_mut)]
                let mut b = mix(FNV_OFFSET, $id);
                $( b = mix(b, $a); )*
                emit(self.index(mix(b, tag_dir)));
                emit(self.index(mix(b, tag_dist)));
            }};
        }
        t!(0);
        t!(1, hw, hp);
        t!(2, hw);
        t!(3, hp);
        t!(4, hl);
        t!(5, hx);
        t!(6, dw, dp);
        t!(7, dw);
        t!(8, dp);
        t!(9, dl);
        t!(10, dx);
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
            let base = mix(mix(mix(FNV_OFFSET, BETWEEN_TEMPLATE), hp), dp);
            let (lo, hi_) = if h < d { (h, d) } else { (d, h) };
            for b in lo + 1..hi_ {
                let bp = self.tok(Field::Upos, b as isize);
                emit(self.index(mix(mix(base, bp), tag_dir)));
            }
        }
    }

    #[inline]
    fn rel_code(r: usize) -> u64 {
        mix(REL_TAG, r as u64)
    }

    /// Bases of the head-side labeled templates r·hp, r·hw, r·hl (conjoined with `dir`).
    #[inline]
    pub fn lab_head_bases(&self, h: usize, dir: bool) -> [u64; 3] {
        let hi = h as isize;
        let t = |id: u64, a: u64| mix(mix(mix(FNV_OFFSET, LABELED_BASE + id), dir as u64), a);
        [t(2, self.tok(Field::Upos, hi)), t(3, self.tok(Field::Form, hi)), t(4, self.tok(Field::Lemma, hi))]
    }

    /// Bases of the dependent-side labeled templates r·dp, r·dx, r·dw, r·dl (with `dir`).
    #[inline]
    pub fn lab_dep_bases(&self, d: usize, dir: bool) -> [u64; 4] {
        let di = d as isize;
        let t = |id: u64, a: u64| mix(mix(mix(FNV_OFFSET, LABELED_BASE + id), dir as u64), a);
        [
            t(5, self.tok(Field::Upos, di)),
            t(6, self.tok(Field::Xpos, di)),
            t(7, self.tok(Field::Form, di)),
            t(8, self.tok(Field::Lemma, di)),
        ]
    }

    /// Bases of the labeled templates r and r·bin (with `dir`).
    #[inline]
    pub fn lab_dist_bases(dir: bool, bin: usize) -> [u64; 2] {
        let t0 = mix(mix(FNV_OFFSET, LABELED_BASE), dir as u64);
        let t1 = mix(mix(mix(FNV_OFFSET, LABELED_BASE + 1), dir as u64), bin as u64);
        [t0, t1]
    }

    /// Base of the labeled template r·hp·dp (with `dir`).
    #[inline]
    pub fn lab_pair_base(&self, h: usize, d: usize) -> u64 {
        let dir = h < d;
        let hp = self.tok(Field::Upos, h as isize);
        let dp = self.tok(Field::Upos, d as isize);
        mix(mix(mix(mix(FNV_OFFSET, LABELED_BASE + 9), dir as u64), hp), dp)
    }

    /// Bucket of a labeled template base conjoined with relation `r`.
    #[inline]
    pub fn lab_index(&self, base: u64, r: usize) -> usize {
        self.index(mix(base, Self::rel_code(r)))
    }

    /// Emits the labeled features f_l(h, d, r).
    pub fn labeled(&self, h: usize, d: usize, r: usize, mut emit: impl FnMut(usize)) {
        let dir = h < d;
        for b in self.lab_head_bases(h, dir) {
            emit(self.lab_index(b, r));
        }
        for b in self.lab_dep_bases(d, dir) {
            emit(self.lab_index(b, r));
        }
        for b in Self::lab_dist_bases(dir, dist_bin(h.abs_diff(d))) {
            emit(self.lab_index(b, r));
        }
        emit(self.lab_index(self.lab_pair_base(h, d), r));
    }
}

/// Arc scores of one sentence under weights `w`: s_u(h, d) and s_l(h, d, r). The labeled part is
/// factored into head-side, dependent-side and distance tables over (position, dir, r), built once
/// per sentence, so a labeled arc costs one hashed lookup (r·hp·dp) instead of ten.
pub struct ArcScorer<'a> {
    f: Featurizer<'a>,
    w: &'a [f64],
    n_rel: usize,
    head: Vec<f64>,
    dep: Vec<f64>,
    dist: Vec<f64>,
}

impl<'a> ArcScorer<'a> {
    /// Scores of `f`'s sentence under `w` (length ≥ the featurizer's `n_features`), with
    /// `n_rel` relations (0: unlabeled).
    pub fn new(f: Featurizer<'a>, w: &'a [f64], n_rel: usize) -> Self {
        let n = f.n();
        let mut s = ArcScorer { f, w, n_rel, head: Vec::new(), dep: Vec::new(), dist: Vec::new() };
        if n_rel > 0 {
            s.head = vec![0.0; (n + 1) * 2 * n_rel];
            s.dep = vec![0.0; (n + 1) * 2 * n_rel];
            s.dist = vec![0.0; 2 * N_BINS * n_rel];
            for pos in 0..=n {
                for dir in [false, true] {
                    let row = (pos * 2 + dir as usize) * n_rel;
                    let hb = s.f.lab_head_bases(pos, dir);
                    let db = if pos > 0 { Some(s.f.lab_dep_bases(pos, dir)) } else { None };
                    for r in 0..n_rel {
                        s.head[row + r] = hb.iter().map(|&b| w[s.f.lab_index(b, r)]).sum();
                        if let Some(db) = &db {
                            s.dep[row + r] = db.iter().map(|&b| w[s.f.lab_index(b, r)]).sum();
                        }
                    }
                }
            }
            for dir in [false, true] {
                for bin in 0..N_BINS {
                    let row = (dir as usize * N_BINS + bin) * n_rel;
                    let bases = Featurizer::lab_dist_bases(dir, bin);
                    for r in 0..n_rel {
                        s.dist[row + r] = bases.iter().map(|&b| w[s.f.lab_index(b, r)]).sum();
                    }
                }
            }
        }
        s
    }

    /// The featurizer.
    pub fn featurizer(&self) -> &Featurizer<'a> {
        &self.f
    }

    /// s_u(h, d).
    #[inline]
    pub fn unlabeled(&self, h: usize, d: usize) -> f64 {
        let mut s = 0.0;
        self.f.unlabeled(h, d, |i| s += self.w[i]);
        s
    }

    /// s_l(h, d, r) for every relation r, written into `out` (length `n_rel`).
    #[inline]
    pub fn labeled_into(&self, h: usize, d: usize, out: &mut [f64]) {
        let nr = self.n_rel;
        let dir = (h < d) as usize;
        let hrow = &self.head[(h * 2 + dir) * nr..][..nr];
        let drow = &self.dep[(d * 2 + dir) * nr..][..nr];
        let brow = &self.dist[(dir * N_BINS + dist_bin(h.abs_diff(d))) * nr..][..nr];
        let pb = self.f.lab_pair_base(h, d);
        for r in 0..nr {
            out[r] = hrow[r] + drow[r] + brow[r] + self.w[self.f.lab_index(pb, r)];
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
        let sc = ArcScorer::new(f.clone(), &w, 3);
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
