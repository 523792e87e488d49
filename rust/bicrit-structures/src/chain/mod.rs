//! Chain: first-order linear-chain sequence labeling (docs/architecture.md, Structures; the thesis's NER
//! experiments, §`sec:NER`). Oracles: Viterbi for any [`TermQuery`], exact k-best Viterbi, ban
//! lists; no cone.
//!
//! # Model
//! `n_states` tags S, `n_features` token features d. A dataset ([`ChainData`]) is one CSR matrix
//! with a row per token of all sequences, and `offsets` (length n_sequences + 1) delimiting each
//! sequence. Weights, in this order:
//!
//! | block | size | index |
//! |---|---|---|
//! | emission | d·S | `f·S + s` (feature-major: one token feature reads S contiguous weights) |
//! | transition | S² | `d·S + p·S + c` (from p to c) |
//! | start | S | `d·S + S² + s` |
//! | end | S | `d·S + S² + S + s` |
//!
//! `score(y) = Σ_t x_t·W[·, y_t] + Σ_{t≥1} A[y_{t−1}, y_t] + start[y_0] + end[y_{T−1}]`.
//!
//! # Terms (against the gold label g)
//! * `size` = |{t : y_t ∉ O}|, the number of non-O tokens.
//! * `hamming` = Σ_t h_t with h_t = 0 if y_t = g_t, 1 if exactly one of y_t, g_t is an O tag,
//!   2 if they are two different non-O tags (and 0 if both are O tags): the Hamming distance
//!   between the indicator sets {(t, y_t) : y_t ∉ O} and {(t, g_t) : g_t ∉ O}, which the
//!   Micro-F1 surrogate needs (docs/architecture.md, Structures; token Hamming would break its upper bound).
//! * `loss`, by [`ChainLoss`]:
//!   - `Hamming`: the number of tokens with y_t ≠ g_t;
//!   - `Segment`: the chunk-level symmetric difference |C(y) △ C(g)|, where C(·) is the set of
//!     entity chunks (first token, last token, type) decoded by the conlleval rules (see
//!     [`tags`]). It counts every predicted chunk that is not exactly a gold chunk (spurious, or
//!     wrong span or type) plus every gold chunk not exactly predicted (missed), so a chunk with
//!     the right span and the wrong type costs 2 — it is FP + FN of chunk-level F1, and
//!     1 − F1_chunk = |C(y) △ C(g)| / (|C(y)| + |C(g)|).
//!
//! # Oracles
//! Every term is folded into the DP exactly. Token terms are node scores. The segment loss is
//! |C(y)| + |C(g)| − 2·M(y) with M(y) the number of gold chunks reproduced exactly: |C(y)| counts
//! chunk starts, a function of (y_{t−1}, y_t); M(y) needs "y has reproduced the current gold chunk
//! so far", a boolean that is a deterministic function of the path, carried as a flag in an
//! extended state (y_t, f_t) — the DP runs over 2S states instead of S (4× the work), and only
//! when the segment loss has a non-zero coefficient. [`dp`] gives Viterbi and list-Viterbi k-best;
//! a ban list B is answered by k-best with k + |B| and filtering (exact: at most |B| of those are
//! banned). Viterbi is O(T·W²), k-best O(T·W²·k) time and O(T·W·k) memory, so a query with k and
//! ban list B costs O(T·W²·(k + |B|)), for W = S, or 2S with the segment loss (fewer in practice:
//! the flag is only possible on tags of the gold chunk's type).
//!
//! The frontier by loss value (Hamming loss only): [`dp::best_by_count`] over the plain lattice
//! with the token error 1[y_t ≠ g_t] as the count — the best label for every number of wrong
//! tokens c = 0..=T in one O(T²·S²/2) pass (the `frontier` search, docs/architecture.md, Searches).

mod all_wrong;
pub mod dp;
pub mod lazy;
pub mod tags;

use bicrit_core::{Capabilities, CsrMatrix, CsrView, Error, Objective, Result, SparseVec, Terms};

use crate::{Scored, Structure, TermQuery};
use dp::{best_by_count, viterbi, Lattice, Lex, Val};
use lazy::kbest_lazy;
pub use tags::{Chunk, TagKind, TagScheme, Tags};

/// Task loss of a chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChainLoss {
    /// Token Hamming loss: tokens with a wrong tag.
    Hamming,
    /// Chunk-level symmetric difference |C(y) △ C(g)| (needs tag names).
    Segment,
}

impl ChainLoss {
    /// Parses `"hamming"` or `"segment"`.
    pub fn from_name(name: &str) -> Result<Self> {
        match name {
            "hamming" => Ok(ChainLoss::Hamming),
            "segment" => Ok(ChainLoss::Segment),
            _ => {
                Err(Error::param(format!("unknown chain loss {name:?}; expected \"hamming\" or \"segment\"")))
            }
        }
    }
}

/// Token features of many sequences: a CSR matrix with one row per token and the offsets that
/// delimit the sequences (sequence i is rows `offsets[i]..offsets[i + 1]`).
#[derive(Clone, Debug)]
pub struct ChainData {
    x: CsrMatrix,
    offsets: Vec<usize>,
}

impl ChainData {
    /// Validates the offsets: they start at 0, increase strictly (an empty sequence is an error)
    /// and end at the number of rows of `x`.
    pub fn new(x: CsrMatrix, offsets: &[i64]) -> Result<Self> {
        let n_rows = x.n_rows();
        if offsets.is_empty() {
            return Err(Error::input("offsets must have n_sequences + 1 entries, got an empty array"));
        }
        if offsets[0] != 0 {
            return Err(Error::input(format!("offsets must start at 0, got {}", offsets[0])));
        }
        for i in 0..offsets.len() - 1 {
            let (a, b) = (offsets[i], offsets[i + 1]);
            if b == a {
                return Err(Error::input(format!(
                    "sequence {i} is empty (offsets[{i}] = offsets[{}] = {a}); every sequence needs at least one token",
                    i + 1
                )));
            }
            if b < a {
                return Err(Error::input(format!(
                    "offsets must increase, but offsets[{}] = {b} < offsets[{i}] = {a}",
                    i + 1
                )));
            }
        }
        let last = *offsets.last().expect("non-empty");
        if last as usize != n_rows {
            return Err(Error::input(format!(
                "offsets end at {last} but the token feature matrix has {n_rows} rows (one per token of all sequences)"
            )));
        }
        Ok(ChainData { x, offsets: offsets.iter().map(|&o| o as usize).collect() })
    }

    /// A dataset of one sequence (every row of `x`).
    pub fn single(x: CsrMatrix) -> Result<Self> {
        let n = x.n_rows() as i64;
        if n == 0 {
            return Err(Error::input("empty sequence: the token feature matrix has no rows"));
        }
        ChainData::new(x, &[0, n])
    }

    /// Number of sequences.
    pub fn n_sequences(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Length of sequence `i`.
    pub fn len_of(&self, i: usize) -> usize {
        self.offsets[i + 1] - self.offsets[i]
    }

    /// Number of token features.
    pub fn n_features(&self) -> usize {
        self.x.n_cols
    }

    /// Rows of sequence `i`.
    fn rows(&self, i: usize) -> std::ops::Range<usize> {
        self.offsets[i]..self.offsets[i + 1]
    }

    fn view(&self) -> CsrView<'_> {
        self.x.view()
    }
}

/// The `chain` structure (see the module documentation).
#[derive(Clone, Debug)]
pub struct Chain {
    n_states: usize,
    n_features: usize,
    loss: ChainLoss,
    tags: Tags,
}

impl Chain {
    /// A chain over `n_states` unnamed tags whose O tags are `outside` (Hamming loss only: the
    /// segment loss needs tag names, see [`Chain::with_tags`]).
    pub fn new(n_states: usize, n_features: usize, outside: &[usize], loss: ChainLoss) -> Result<Self> {
        if loss == ChainLoss::Segment {
            return Err(Error::param("the segment loss needs tag names (B-/I- structure); pass tag_names"));
        }
        Self::check_sizes(n_states, n_features)?;
        Ok(Chain { n_states, n_features, loss, tags: Tags::from_outside(n_states, outside)? })
    }

    /// A chain over named tags (`"O"`, `"B-X"`, `"I-X"`, and `"E-X"`, `"S-X"` under IOBES); the
    /// O tags are those named `"O"`. When `outside` is also given it must list exactly those.
    pub fn with_tags<S: AsRef<str>>(
        n_features: usize,
        tag_names: &[S],
        scheme: TagScheme,
        outside: Option<&[usize]>,
        loss: ChainLoss,
    ) -> Result<Self> {
        let n_states = tag_names.len();
        Self::check_sizes(n_states, n_features)?;
        let tags = Tags::from_names(tag_names, scheme)?;
        if let Some(out) = outside {
            let mut given: Vec<usize> = out.to_vec();
            given.sort_unstable();
            given.dedup();
            let named = tags.outside_ids();
            if given != named {
                return Err(Error::param(format!(
                    "outside = {given:?} disagrees with the tags named \"O\" in tag_names ({named:?})"
                )));
            }
        }
        Ok(Chain { n_states, n_features, loss, tags })
    }

    fn check_sizes(n_states: usize, n_features: usize) -> Result<()> {
        if n_states == 0 {
            return Err(Error::param("n_states must be at least 1"));
        }
        if n_features == 0 {
            return Err(Error::param("n_features must be at least 1"));
        }
        let size =
            n_features.checked_mul(n_states).and_then(|e| e.checked_add(n_states * n_states + 2 * n_states));
        if size.is_none() {
            return Err(Error::param("n_features × n_states overflows"));
        }
        Ok(())
    }

    /// Number of tags S.
    pub fn n_states(&self) -> usize {
        self.n_states
    }

    /// Number of token features d.
    pub fn n_features(&self) -> usize {
        self.n_features
    }

    /// The task loss.
    pub fn loss_kind(&self) -> ChainLoss {
        self.loss
    }

    /// The tag set.
    pub fn tags(&self) -> &Tags {
        &self.tags
    }

    fn trans_offset(&self) -> usize {
        self.n_features * self.n_states
    }

    fn start_offset(&self) -> usize {
        self.trans_offset() + self.n_states * self.n_states
    }

    fn end_offset(&self) -> usize {
        self.start_offset() + self.n_states
    }

    fn check_data(&self, data: &ChainData) -> Result<()> {
        if data.n_features() != self.n_features {
            return Err(Error::input(format!(
                "token features have width {} but the structure was initialised with n_features = {}",
                data.n_features(),
                self.n_features
            )));
        }
        Ok(())
    }

    fn check_instance(&self, data: &ChainData, i: usize) -> Result<()> {
        self.check_data(data)?;
        if i >= data.n_sequences() {
            return Err(Error::input(format!("sequence {i} out of range (0..{})", data.n_sequences())));
        }
        Ok(())
    }

    fn check_w(&self, w: &[f64]) -> Result<()> {
        if w.len() != self.size_joint_feature() {
            return Err(Error::input(format!(
                "w has length {} but the joint feature size is {}",
                w.len(),
                self.size_joint_feature()
            )));
        }
        Ok(())
    }

    fn check_states(&self, y: &[usize], what: &str) -> Result<()> {
        if y.is_empty() {
            return Err(Error::input(format!("{what} is empty; a sequence has at least one token")));
        }
        if let Some(t) = y.iter().position(|&s| s >= self.n_states) {
            return Err(Error::input(format!(
                "{what} has state {} at position {t}, outside the states 0..{}",
                y[t], self.n_states
            )));
        }
        Ok(())
    }

    /// Emission scores of sequence `i`: `out[t·S + s] = x_t · W_{·,s}`.
    ///
    /// This gather over a d·S table (19 MB for 2^18 hashed features × 9 tags) is where the time
    /// goes on NER sizes: the kernel keeps the S accumulators in registers (S is a const
    /// parameter for S ≤ 16) and prefetches the weight rows of token t + 1 while computing t.
    fn emissions(&self, w: &[f64], data: &ChainData, i: usize, out: &mut Vec<f64>) {
        let s_n = self.n_states;
        let x = data.view();
        let rows = data.rows(i);
        out.clear();
        out.resize(rows.len() * s_n, 0.0);
        macro_rules! fixed {
            ($($n:literal)*) => {
                match s_n {
                    $($n => emissions_fixed::<$n>(&x, rows, w, out),)*
                    _ => emissions_any(&x, rows, w, s_n, out),
                }
            };
        }
        fixed!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16);
    }

    /// The emission scores of sequence `i`: the shared ones of this inference
    /// ([`Structure::shared_scores`], already checked) when given, else computed and checked.
    fn emissions_of<'a>(
        &self,
        w: &[f64],
        data: &ChainData,
        i: usize,
        shared: Option<&'a [f64]>,
    ) -> Result<std::borrow::Cow<'a, [f64]>> {
        match shared {
            Some(e) if e.len() == data.len_of(i) * self.n_states => Ok(std::borrow::Cow::Borrowed(e)),
            _ => {
                let mut emit = Vec::new();
                self.emissions(w, data, i, &mut emit);
                self.check_used_weights(w, &emit, i)?;
                Ok(std::borrow::Cow::Owned(emit))
            }
        }
    }

    /// Fails when a weight that sequence `i` uses is NaN or infinite (or the emission scores
    /// overflow): O(T·S + S²), unlike a check of all of `w`.
    fn check_used_weights(&self, w: &[f64], emit: &[f64], i: usize) -> Result<()> {
        let finite = |v: &[f64]| v.iter().all(|x| x.is_finite());
        if !finite(emit) || !finite(&w[self.trans_offset()..self.size_joint_feature()]) {
            return Err(Error::input(format!(
                "w holds non-finite values used by sequence {i} (or its emission scores overflow)"
            )));
        }
        Ok(())
    }

    /// The raw score arrays of sequence `i` (emissions `emit` computed from `w`).
    fn raw<'a>(&self, w: &'a [f64], emit: &'a [f64]) -> RawScores<'a> {
        let s_n = self.n_states;
        RawScores {
            n_states: s_n,
            unary: emit,
            trans: &w[self.trans_offset()..self.trans_offset() + s_n * s_n],
            trans_per_step: false,
            start: &w[self.start_offset()..self.start_offset() + s_n],
            end: &w[self.end_offset()..self.end_offset() + s_n],
        }
    }

    /// Tables of the node, transition, start and end scores of one query.
    fn tables<V: Val>(
        &self,
        w: &[f64],
        emit: &[f64],
        gold: Option<&[usize]>,
        primary: &Objective,
        secondary: Option<&Objective>,
    ) -> Tables<V> {
        fold_tables(&self.raw(w, emit), &self.tags, self.loss, gold, primary, secondary)
    }

    /// Checks a label of sequence `i` (length and states).
    fn check_label_len(&self, data: &ChainData, i: usize, y: &[usize], what: &str) -> Result<()> {
        self.check_states(y, what)?;
        let n = data.len_of(i);
        if y.len() != n {
            return Err(Error::input(format!(
                "{what} has length {} but sequence {i} has {n} tokens",
                y.len()
            )));
        }
        Ok(())
    }
}

/// Asks the CPU to fetch the weight rows of CSR row `r` (no effect on results).
#[inline(always)]
fn prefetch_rows(x: &CsrView<'_>, r: usize, w: &[f64], s_n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let (idx, _) = x.row(r);
        for &c in idx {
            let p = w[c as usize * s_n..].as_ptr();
            // SAFETY: prefetching is a hint that never faults; `p` points into `w` (the CSR
            // columns are validated < n_features, so c·S < w.len()), and the second line it may
            // touch starts at most S − 1 elements further, still within the emission block.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(p as *const i8);
                _mm_prefetch::<_MM_HINT_T0>(p.add(s_n - 1) as *const i8);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (x, r, w, s_n);
}

/// Asks the CPU to fetch the cache lines of `v` (no effect on results).
#[inline]
fn prefetch_slice<T>(v: &[T]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let bytes = std::mem::size_of_val(v);
        let p = v.as_ptr() as *const i8;
        // every line from the first byte's to the last byte's (the buffer need not be aligned)
        for off in (0..bytes).step_by(64).chain(bytes.checked_sub(1)) {
            // SAFETY: prefetching is a hint that never faults; `p + off` lies within `v`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.add(off)) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = v;
}

/// Emission kernel for a compile-time number of states.
fn emissions_fixed<const S: usize>(
    x: &CsrView<'_>,
    rows: std::ops::Range<usize>,
    w: &[f64],
    out: &mut [f64],
) {
    let end = rows.end;
    if !rows.is_empty() {
        prefetch_rows(x, rows.start, w, S);
    }
    for (t, r) in rows.enumerate() {
        if r + 1 < end {
            prefetch_rows(x, r + 1, w, S);
        }
        let mut acc = [0.0f64; S];
        let (idx, val) = x.row(r);
        for (&c, &v) in idx.iter().zip(val) {
            let base = c as usize * S;
            let ws: &[f64; S] = w[base..base + S].try_into().expect("row of S weights");
            for s in 0..S {
                acc[s] += v * ws[s];
            }
        }
        out[t * S..(t + 1) * S].copy_from_slice(&acc);
    }
}

/// Emission kernel for any number of states.
fn emissions_any(x: &CsrView<'_>, rows: std::ops::Range<usize>, w: &[f64], s_n: usize, out: &mut [f64]) {
    for (t, r) in rows.enumerate() {
        let e = &mut out[t * s_n..(t + 1) * s_n];
        let (idx, val) = x.row(r);
        for (&c, &v) in idx.iter().zip(val) {
            let base = c as usize * s_n;
            for (acc, &wv) in e.iter_mut().zip(&w[base..base + s_n]) {
                *acc += v * wv;
            }
        }
    }
}

/// Raw scores of one sequence: unary `[T, S]`, transitions `[S, S]` (or `[T − 1, S, S]` when
/// `trans_per_step`: the scores of moving into position t are block t − 1), start and end `[S]`.
/// The `chain` structure computes the unary scores as w·x; score-level chains
/// ([`crate::scores::chain`]) take them as given.
pub(crate) struct RawScores<'a> {
    pub n_states: usize,
    pub unary: &'a [f64],
    pub trans: &'a [f64],
    pub trans_per_step: bool,
    pub start: &'a [f64],
    pub end: &'a [f64],
}

/// Per-token term coefficients folded into a node score: c·[terms of tag s at token t].
#[inline]
fn node_terms(tags: &Tags, c: &Terms, token_loss: bool, s: usize, g: Option<usize>) -> f64 {
    let mut v = 0.0;
    let out_s = tags.is_outside(s);
    if c.size != 0.0 && !out_s {
        v += c.size;
    }
    if let Some(g) = g {
        if s != g {
            if token_loss {
                v += c.loss;
            }
            if c.hamming != 0.0 {
                let out_g = tags.is_outside(g);
                let h = match (out_s, out_g) {
                    (true, true) => 0.0,
                    (false, false) => 2.0,
                    _ => 1.0,
                };
                v += c.hamming * h;
            }
        }
    }
    v
}

/// The DP tables of one query: every term folded into the node scores (the segment loss is
/// added by the [`Segmented`] lattice).
pub(crate) fn fold_tables<V: Val>(
    raw: &RawScores<'_>,
    tags: &Tags,
    loss: ChainLoss,
    gold: Option<&[usize]>,
    primary: &Objective,
    secondary: Option<&Objective>,
) -> Tables<V> {
    let mut tab = Tables::default();
    fold_into(&mut tab, raw, tags, loss, gold, primary, secondary);
    tab
}

/// [`fold_tables`] into `tab`, reusing its buffers.
fn fold_into<V: Val>(
    tab: &mut Tables<V>,
    raw: &RawScores<'_>,
    tags: &Tags,
    loss: ChainLoss,
    gold: Option<&[usize]>,
    primary: &Objective,
    secondary: Option<&Objective>,
) {
    let s_n = raw.n_states;
    let t_len = raw.unary.len() / s_n;
    let zero = Objective::default();
    let sec = secondary.unwrap_or(&zero);
    let token_loss = loss == ChainLoss::Hamming;
    // The folded terms depend on (gold tag, tag) only: one table of S + 1 rows (row g for gold
    // tag g, row S without a gold label) of the values `node_terms` gives, instead of calling
    // it T·S times (the same values, so the same node scores).
    let terms = &mut tab.terms;
    terms.clear();
    for g in (0..s_n).map(Some).chain([None]) {
        for s in 0..s_n {
            terms.push((
                node_terms(tags, &primary.terms, token_loss, s, g),
                node_terms(tags, &sec.terms, token_loss, s, g),
            ));
        }
    }
    let node = &mut tab.node;
    node.clear();
    node.reserve(t_len * s_n);
    for t in 0..t_len {
        let row = gold.map_or(s_n, |g| g[t]) * s_n;
        let folded = &terms[row..row + s_n];
        let unary = &raw.unary[t * s_n..(t + 1) * s_n];
        node.extend(
            unary
                .iter()
                .zip(folded)
                .map(|(&e, &(pa, pb))| V::pair(primary.margin * e + pa, sec.margin * e + pb)),
        );
    }
    let pick = |out: &mut Vec<V>, v: &[f64]| {
        out.clear();
        out.extend(v.iter().map(|&v| V::pair(primary.margin * v, sec.margin * v)));
    };
    pick(&mut tab.trans, raw.trans);
    pick(&mut tab.start, raw.start);
    pick(&mut tab.end, raw.end);
    tab.s = s_n;
    tab.t = t_len;
    tab.trans_stride = if raw.trans_per_step { s_n * s_n } else { 0 };
}

/// The `k` best labels of `tab` (before ban filtering): the plain lattice, or the segment-loss
/// lattice when the segment loss has a non-zero coefficient.
pub(crate) fn solve_tables<V: Val>(
    tab: &Tables<V>,
    tags: &Tags,
    loss: ChainLoss,
    gold: Option<&[usize]>,
    primary: &Objective,
    secondary: Option<&Objective>,
    k: usize,
) -> Vec<Vec<usize>> {
    let seg_coef = V::pair(primary.terms.loss, secondary.map_or(0.0, |o| o.terms.loss));
    let segmented = loss == ChainLoss::Segment
        && (primary.terms.loss != 0.0 || secondary.is_some_and(|o| o.terms.loss != 0.0));
    let n_states = tab.s;
    match (gold, segmented) {
        (Some(g), true) => {
            let lat = Segmented::new(tab, tags, g, seg_coef);
            run(&lat, k, |x| x % n_states)
        }
        _ => run(&Plain(tab), k, |x| x),
    }
}

/// score(y) = Σ_t unary[t, y_t] + Σ_{t≥1} trans[y_{t−1}, y_t] + start[y_0] + end[y_{T−1}].
pub(crate) fn path_score_raw(raw: &RawScores<'_>, y: &[usize]) -> f64 {
    let s_n = raw.n_states;
    let stride = if raw.trans_per_step { s_n * s_n } else { 0 };
    let mut v = raw.start[y[0]] + raw.end[y[y.len() - 1]];
    for (t, &s) in y.iter().enumerate() {
        v += raw.unary[t * s_n + s];
        if t > 0 {
            v += raw.trans[(t - 1) * stride + y[t - 1] * s_n + s];
        }
    }
    v
}

/// Terms of `y` against `y_true` (validated: same length, states in range).
pub(crate) fn terms_of(tags: &Tags, loss: ChainLoss, y: &[usize], y_true: &[usize]) -> Terms {
    let mut t = Terms::default();
    let mut token_errors = 0usize;
    for (&a, &g) in y.iter().zip(y_true) {
        let (oa, og) = (tags.is_outside(a), tags.is_outside(g));
        if !oa {
            t.size += 1.0;
        }
        if a != g {
            token_errors += 1;
            t.hamming += match (oa, og) {
                (true, true) => 0.0,
                (false, false) => 2.0,
                _ => 1.0,
            };
        }
    }
    t.loss = match loss {
        ChainLoss::Hamming => token_errors as f64,
        ChainLoss::Segment => tags.chunk_symmetric_difference(y, y_true) as f64,
    };
    t
}

/// An upper bound on the task loss of any label against `y_true`: its length for the token
/// Hamming loss (every token wrong); none kept for the segment loss.
pub(crate) fn max_loss_of(loss: ChainLoss, y_true: &[usize]) -> Option<f64> {
    (loss == ChainLoss::Hamming).then_some(y_true.len() as f64)
}

/// Answers a query on raw scores (labels validated by the caller; `banned` deduplicated): the
/// k + |ban| best labels, filtered (exact: at most |ban| of them are banned).
pub(crate) fn oracle_raw(
    raw: &RawScores<'_>,
    tags: &Tags,
    loss: ChainLoss,
    y_true: &[usize],
    q: &TermQuery<'_, Vec<usize>>,
    banned: &[&Vec<usize>],
) -> Vec<Scored<Vec<usize>>> {
    let k = q.k.max(1);
    let want = k + banned.len();
    let found = match &q.secondary {
        None => with_buffers(|b| {
            fold_into(&mut b.tables, raw, tags, loss, Some(y_true), &q.primary, None);
            let segmented = loss == ChainLoss::Segment && q.primary.terms.loss != 0.0;
            if want != 1 || segmented {
                return solve_tables(&b.tables, tags, loss, Some(y_true), &q.primary, None, want);
            }
            viterbi_dense_in(&b.tables, &mut b.dp).map_or_else(Vec::new, |p| vec![p])
        }),
        Some(sec) => {
            // λ = ∞ with the token Hamming loss: the best label with every token wrong, one plain
            // Viterbi ([`all_wrong`]; the same answer as the lexicographic pass below)
            if want == 1 && all_wrong::maximises_token_errors(loss, &q.primary) {
                let found = with_buffers(|b| all_wrong::best_all_wrong(raw, tags, loss, y_true, sec, b));
                if let Some(p) = found {
                    return scored(raw, tags, loss, y_true, vec![p], banned, k);
                }
            }
            let tab = fold_tables::<Lex>(raw, tags, loss, Some(y_true), &q.primary, Some(sec));
            let segmented =
                loss == ChainLoss::Segment && (q.primary.terms.loss != 0.0 || sec.terms.loss != 0.0);
            if want == 1 && !segmented {
                viterbi_dense_lex(&tab).map_or_else(Vec::new, |p| vec![p])
            } else {
                solve_tables(&tab, tags, loss, Some(y_true), &q.primary, Some(sec), want)
            }
        }
    };
    scored(raw, tags, loss, y_true, found, banned, k)
}

/// The first `k` labels of `found` that are not banned, with their margins and terms.
fn scored(
    raw: &RawScores<'_>,
    tags: &Tags,
    loss: ChainLoss,
    y_true: &[usize],
    found: Vec<Vec<usize>>,
    banned: &[&Vec<usize>],
    k: usize,
) -> Vec<Scored<Vec<usize>>> {
    let gold_score = path_score_raw(raw, y_true);
    let mut out = Vec::with_capacity(k);
    for y in found {
        if out.len() == k {
            break;
        }
        if banned.iter().any(|b| **b == y) {
            continue;
        }
        let margin = path_score_raw(raw, &y) - gold_score;
        let terms = terms_of(tags, loss, &y, y_true);
        out.push(Scored { label: y, margin, terms });
    }
    out
}

/// The best label for every number of wrong tokens (Hamming loss; the caller refuses the segment
/// loss): one DP over (t, s, c), [`dp::best_by_count`].
pub(crate) fn frontier_raw(
    raw: &RawScores<'_>,
    tags: &Tags,
    loss: ChainLoss,
    y_true: &[usize],
    objective: &Objective,
) -> Vec<Scored<Vec<usize>>> {
    let tab = fold_tables::<f64>(raw, tags, loss, Some(y_true), objective, None);
    let found = best_by_count(&Plain(&tab), |t, s| s != y_true[t]);
    let gold_score = path_score_raw(raw, y_true);
    found
        .into_iter()
        .flatten()
        .map(|(_, y)| {
            let margin = path_score_raw(raw, &y) - gold_score;
            let terms = terms_of(tags, loss, &y, y_true);
            Scored { label: y, margin, terms }
        })
        .collect()
}

/// [`solve_tables`] on plain `f64` values, with a dense Viterbi for the common case (one label, no
/// segment-loss lattice): the same recurrence, predecessors in the outer loop so that the inner
/// loop over current states is contiguous and vectorises; identical arithmetic
/// (prev + (trans + node)) and tie-breaking (the smallest predecessor state, then the smallest
/// final state) as [`dp::viterbi`] on [`Plain`].
pub(crate) fn solve_tables_f64(
    tab: &Tables<f64>,
    tags: &Tags,
    loss: ChainLoss,
    gold: Option<&[usize]>,
    primary: &Objective,
    k: usize,
) -> Vec<Vec<usize>> {
    let segmented = loss == ChainLoss::Segment && primary.terms.loss != 0.0 && gold.is_some();
    if k != 1 || segmented {
        return solve_tables(tab, tags, loss, gold, primary, None, k);
    }
    viterbi_dense(tab).map_or_else(Vec::new, |p| vec![p])
}

fn viterbi_dense(tab: &Tables<f64>) -> Option<Vec<usize>> {
    viterbi_dense_in(tab, &mut DpBuffers::default())
}

/// [`viterbi_dense`] for a lexicographic query (λ = 0 or ∞: pairs of values): the same
/// recurrence as [`dp::viterbi`] on [`Plain`] over [`Lex`] — componentwise sums
/// prev + (trans + node), comparisons by [`Val::cmp_val`], the smallest predecessor and then the
/// smallest final state on ties — with the predecessors in the outer loop, on two dense arrays
/// instead of the generic lattice's per-cell calls.
fn viterbi_dense_lex(tab: &Tables<Lex>) -> Option<Vec<usize>> {
    let (s, t_len) = (tab.s, tab.t);
    let mut prev: Vec<Lex> = (0..s).map(|x| tab.start[x].add(tab.node[x])).collect();
    let mut cur = vec![Lex::NEG_INF; s];
    let mut arg = vec![0u32; s];
    let mut back = vec![0u32; t_len * s];
    for t in 1..t_len {
        let trans = &tab.trans[(t - 1) * tab.trans_stride..(t - 1) * tab.trans_stride + s * s];
        let node = &tab.node[t * s..(t + 1) * s];
        cur.fill(Lex::NEG_INF);
        arg.fill(0);
        for (xp, pv) in prev.iter().enumerate() {
            if !pv.feasible() {
                continue;
            }
            let row = &trans[xp * s..(xp + 1) * s];
            for ((c, a), (tr, nd)) in cur.iter_mut().zip(arg.iter_mut()).zip(row.iter().zip(node)) {
                let v = pv.add(tr.add(*nd));
                if v.cmp_val(c) == std::cmp::Ordering::Greater {
                    *c = v;
                    *a = xp as u32;
                }
            }
        }
        back[t * s..(t + 1) * s].copy_from_slice(&arg);
        std::mem::swap(&mut prev, &mut cur);
    }
    let mut best = Lex::NEG_INF;
    let mut last = 0;
    for (x, pv) in prev.iter().enumerate() {
        if !pv.feasible() {
            continue;
        }
        let v = pv.add(tab.end[x]);
        if v.cmp_val(&best) == std::cmp::Ordering::Greater {
            best = v;
            last = x;
        }
    }
    if !best.feasible() {
        return None;
    }
    Some(backtrack(back.as_slice(), s, t_len, last))
}

/// The best path of a Viterbi pass, read back from its back-pointers (`back[t·S + x]`: the best
/// state at t − 1 before state x at t) from the last state `last`.
fn backtrack(back: &[u32], s: usize, t_len: usize, last: usize) -> Vec<usize> {
    let mut path = vec![0usize; t_len];
    path[t_len - 1] = last;
    for t in (1..t_len).rev() {
        path[t - 1] = back[t * s + path[t]] as usize;
    }
    path
}

/// The per-query buffers of the one-answer path of [`oracle_raw`]: the folded tables and the
/// Viterbi arrays, one set per thread, reused from query to query (a search's certificate calls
/// then allocate only their answer).
#[derive(Default)]
struct QueryBuffers {
    tables: Tables<f64>,
    dp: DpBuffers,
}

/// The arrays of [`viterbi_dense_in`].
#[derive(Default)]
struct DpBuffers {
    prev: Vec<f64>,
    cur: Vec<f64>,
    arg: Vec<u32>,
    back: Vec<u32>,
}

thread_local! {
    static BUFFERS: std::cell::RefCell<QueryBuffers> = std::cell::RefCell::new(QueryBuffers::default());
}

/// Runs `f` with this thread's query buffers (a nested call gets fresh ones).
fn with_buffers<R>(f: impl FnOnce(&mut QueryBuffers) -> R) -> R {
    BUFFERS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut b) => f(&mut b),
        Err(_) => f(&mut QueryBuffers::default()),
    })
}

/// [`viterbi_dense`] in the arrays of `buf` (the same arithmetic and tie-breaking); for S ≤ 16
/// tags the compile-time-sized [`viterbi_fixed`].
fn viterbi_dense_in(tab: &Tables<f64>, buf: &mut DpBuffers) -> Option<Vec<usize>> {
    macro_rules! fixed {
        ($($n:literal)*) => {
            match tab.s {
                $($n => viterbi_fixed::<$n>(tab, &mut buf.back),)*
                _ => viterbi_dense_any(tab, buf),
            }
        };
    }
    fixed!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

/// [`viterbi_dense_any`] for a compile-time number of tags S: the rows of the DP in registers
/// (arrays of S values), the inner loop unrolled — the same sums prev + (trans + node), the same
/// strict comparison in the same order (the smallest predecessor, then the smallest final state,
/// on ties), hence the same path bit for bit.
fn viterbi_fixed<const S: usize>(tab: &Tables<f64>, back: &mut Vec<u32>) -> Option<Vec<usize>> {
    let t_len = tab.t;
    let mut prev = [f64::NEG_INFINITY; S];
    for (x, p) in prev.iter_mut().enumerate() {
        *p = tab.start[x] + tab.node[x];
    }
    back.clear();
    back.resize(t_len * S, 0);
    for t in 1..t_len {
        let base = (t - 1) * tab.trans_stride;
        let trans: &[f64] = &tab.trans[base..base + S * S];
        let node: &[f64; S] = tab.node[t * S..(t + 1) * S].try_into().expect("S node scores");
        let mut cur = [f64::NEG_INFINITY; S];
        let mut arg = [0u32; S];
        for (xp, &pv) in prev.iter().enumerate() {
            if pv == f64::NEG_INFINITY {
                continue;
            }
            let row: &[f64; S] = trans[xp * S..(xp + 1) * S].try_into().expect("S transitions");
            for xc in 0..S {
                let v = pv + (row[xc] + node[xc]);
                let better = v > cur[xc];
                cur[xc] = if better { v } else { cur[xc] };
                arg[xc] = if better { xp as u32 } else { arg[xc] };
            }
        }
        back[t * S..(t + 1) * S].copy_from_slice(&arg);
        prev = cur;
    }
    best_final(&prev, &tab.end).map(|last| backtrack(back.as_slice(), S, t_len, last))
}

/// The dense Viterbi for any number of tags, in the arrays of `buf`.
fn viterbi_dense_any(tab: &Tables<f64>, buf: &mut DpBuffers) -> Option<Vec<usize>> {
    let (s, t_len) = (tab.s, tab.t);
    let DpBuffers { prev, cur, arg, back } = buf;
    prev.clear();
    prev.extend((0..s).map(|x| tab.start[x] + tab.node[x]));
    cur.clear();
    cur.resize(s, f64::NEG_INFINITY);
    arg.clear();
    arg.resize(s, 0);
    back.clear();
    back.resize(t_len * s, 0);
    for t in 1..t_len {
        let trans = &tab.trans[(t - 1) * tab.trans_stride..(t - 1) * tab.trans_stride + s * s];
        let node = &tab.node[t * s..(t + 1) * s];
        cur.fill(f64::NEG_INFINITY);
        arg.fill(0);
        for (xp, &pv) in prev.iter().enumerate() {
            if pv == f64::NEG_INFINITY {
                continue;
            }
            let row = &trans[xp * s..(xp + 1) * s];
            for ((c, a), (&tr, &nd)) in cur.iter_mut().zip(arg.iter_mut()).zip(row.iter().zip(node)) {
                let v = pv + (tr + nd);
                let better = v > *c;
                *c = if better { v } else { *c };
                *a = if better { xp as u32 } else { *a };
            }
        }
        back[t * s..(t + 1) * s].copy_from_slice(arg);
        std::mem::swap(prev, cur);
    }
    best_final(prev, &tab.end).map(|last| backtrack(back.as_slice(), s, t_len, last))
}

/// The last state of a dense Viterbi pass's best path: the largest prev + end, the smallest state
/// on ties; `None` when every path is infeasible.
fn best_final(prev: &[f64], end: &[f64]) -> Option<usize> {
    let mut best = f64::NEG_INFINITY;
    let mut last = 0;
    for (x, &pv) in prev.iter().enumerate() {
        if pv == f64::NEG_INFINITY {
            continue;
        }
        let v = pv + end[x];
        if v > best {
            best = v;
            last = x;
        }
    }
    (best != f64::NEG_INFINITY).then_some(last)
}

fn run<L: Lattice>(lat: &L, k: usize, state: impl Fn(usize) -> usize) -> Vec<Vec<usize>> {
    if k == 1 {
        let mut path = Vec::new();
        match viterbi(lat, &mut path) {
            Some(_) => {
                path.iter_mut().for_each(|x| *x = state(*x));
                vec![path]
            }
            None => Vec::new(),
        }
    } else {
        kbest_lazy(lat, k)
            .into_iter()
            .map(|(_, mut p)| {
                p.iter_mut().for_each(|x| *x = state(*x));
                p
            })
            .collect()
    }
}

/// Score tables of one query (values in the DP's value type). Transitions into position t ≥ 1
/// are `trans[(t − 1)·trans_stride + p·S + c]`: one shared S × S block (`trans_stride = 0`) or
/// one block per position (`trans_stride = S²`).
pub(crate) struct Tables<V> {
    s: usize,
    t: usize,
    node: Vec<V>,
    /// Work space of the fold: the folded terms by (gold tag, tag), primary and secondary.
    terms: Vec<(f64, f64)>,
    trans: Vec<V>,
    trans_stride: usize,
    start: Vec<V>,
    end: Vec<V>,
}

impl<V> Default for Tables<V> {
    fn default() -> Self {
        Tables {
            s: 0,
            t: 0,
            node: Vec::new(),
            terms: Vec::new(),
            trans: Vec::new(),
            trans_stride: 0,
            start: Vec::new(),
            end: Vec::new(),
        }
    }
}

/// The plain chain lattice: extended state = tag.
pub(crate) struct Plain<'a, V>(pub(crate) &'a Tables<V>);

impl<V: Val> Lattice for Plain<'_, V> {
    type V = V;
    #[inline(always)]
    fn positions(&self) -> usize {
        self.0.t
    }
    #[inline(always)]
    fn width(&self) -> usize {
        self.0.s
    }
    #[inline(always)]
    fn first(&self, x: usize) -> V {
        self.0.start[x].add(self.0.node[x])
    }
    #[inline(always)]
    fn step(&self, t: usize, xp: usize, xc: usize) -> V {
        let s = self.0.s;
        self.0.trans[(t - 1) * self.0.trans_stride + xp * s + xc].add(self.0.node[t * s + xc])
    }
    #[inline(always)]
    fn last(&self, x: usize) -> V {
        self.0.end[x]
    }
}

/// The segment-loss lattice: extended state x = f·S + s, with f = 1 iff the path has reproduced
/// the gold chunk covering this token from its first token up to here (module documentation).
struct Segmented<'a, V> {
    tab: &'a Tables<V>,
    tags: &'a Tags,
    /// Type of the gold chunk starting at t, if any.
    gold_start: Vec<Option<u32>>,
    /// t lies in a gold chunk, after its first token.
    gold_inside: Vec<bool>,
    /// A gold chunk ends at t.
    gold_end: Vec<bool>,
    /// Type of the gold chunk covering t, if any (where the flag may be 1).
    gold_type: Vec<Option<u32>>,
    coef: V,
    /// coef · |C(g)|, added once at the first position.
    constant: V,
}

impl<'a, V: Val> Segmented<'a, V> {
    fn new(tab: &'a Tables<V>, tags: &'a Tags, gold: &[usize], coef: V) -> Self {
        let n = gold.len();
        let mut gold_start = vec![None; n];
        let mut gold_inside = vec![false; n];
        let mut gold_end = vec![false; n];
        let mut gold_type = vec![None; n];
        let chunks = tags.chunks(gold);
        for &(a, b, ty) in &chunks {
            gold_start[a] = Some(ty);
            gold_end[b] = true;
            gold_inside[a + 1..=b].iter_mut().for_each(|v| *v = true);
            gold_type[a..=b].iter_mut().for_each(|v| *v = Some(ty));
        }
        let constant = coef.scale(chunks.len() as f64);
        Segmented { tab, tags, gold_start, gold_inside, gold_end, gold_type, coef, constant }
    }

    /// The flag forced at position t by (p, fp) → c; `p = None` at t = 0.
    #[inline(always)]
    fn flag(&self, t: usize, p: Option<(usize, bool)>, c: usize, cont: bool) -> bool {
        if let Some(ty) = self.gold_start[t] {
            !cont && !self.tags.is_outside(c) && self.tags.entity_type(c) == ty
        } else if self.gold_inside[t] {
            p.is_some_and(|(_, fp)| fp) && cont
        } else {
            false
        }
    }
}

/// (tag, flag) of extended state `x = f·S + s` without a division.
#[inline(always)]
fn split(x: usize, n: usize) -> (usize, bool) {
    if x >= n {
        (x - n, true)
    } else {
        (x, false)
    }
}

impl<V: Val> Lattice for Segmented<'_, V> {
    type V = V;
    #[inline(always)]
    fn positions(&self) -> usize {
        self.tab.t
    }
    #[inline(always)]
    fn width(&self) -> usize {
        2 * self.tab.s
    }
    #[inline(always)]
    fn allowed(&self, t: usize, x: usize) -> bool {
        // the flag can be 1 only on a non-O tag of the type of the gold chunk covering t
        let (s, _) = split(x, self.tab.s);
        x < self.tab.s
            || self.gold_type[t].is_some_and(|ty| !self.tags.is_outside(s) && self.tags.entity_type(s) == ty)
    }
    #[inline(always)]
    fn first(&self, x: usize) -> V {
        let (s, f) = split(x, self.tab.s);
        if f != self.flag(0, None, s, false) {
            return V::NEG_INF;
        }
        let starts = if self.tags.is_outside(s) { 0.0 } else { 1.0 };
        self.tab.start[s].add(self.tab.node[s]).add(self.coef.scale(starts)).add(self.constant)
    }
    #[inline(always)]
    fn step(&self, t: usize, xp: usize, xc: usize) -> V {
        let n = self.tab.s;
        let (p, fp) = split(xp, n);
        let (c, fc) = split(xc, n);
        let cont = self.tags.cont(p, c);
        if fc != self.flag(t, Some((p, fp)), c, cont) {
            return V::NEG_INF;
        }
        let mut count = 0.0;
        if !cont && !self.tags.is_outside(c) {
            count += 1.0; // a chunk of y starts at t
        }
        if fp && self.gold_end[t - 1] && !cont {
            count -= 2.0; // y reproduced the gold chunk ending at t − 1
        }
        let v = self.tab.trans[(t - 1) * self.tab.trans_stride + p * n + c].add(self.tab.node[t * n + c]);
        if count != 0.0 {
            v.add(self.coef.scale(count))
        } else {
            v
        }
    }
    #[inline(always)]
    fn last(&self, x: usize) -> V {
        let n = self.tab.s;
        let (s, f) = split(x, n);
        let v = self.tab.end[s];
        if f && self.gold_end[self.tab.t - 1] {
            v.add(self.coef.scale(-2.0))
        } else {
            v
        }
    }
}

impl Structure for Chain {
    type Label = Vec<usize>;
    type Data = ChainData;

    fn name(&self) -> &str {
        "chain"
    }

    fn max_loss(&self, _data: &ChainData, _i: usize, y_true: &Vec<usize>) -> Option<f64> {
        max_loss_of(self.loss, y_true)
    }

    /// The token Hamming loss counts the tokens that differ: at least 1 for any other label
    /// (labels are integral); none kept for the segment loss (zero for some other tag sequences).
    fn loss_floor(&self, _data: &ChainData, _i: usize, _y_true: &Vec<usize>) -> Option<f64> {
        (self.loss == ChainLoss::Hamming).then_some(1.0)
    }

    fn n_instances(&self, data: &ChainData) -> usize {
        data.n_sequences()
    }

    fn size_joint_feature(&self) -> usize {
        self.end_offset() + self.n_states
    }

    fn capabilities(&self) -> Capabilities {
        // The frontier DP counts token errors; the segment loss is not a per-token count.
        let frontier = self.loss == ChainLoss::Hamming;
        Capabilities { ban: true, kbest: true, frontier, ..Capabilities::default() }
    }

    fn check_label(&self, data: &ChainData, i: usize, y: &Vec<usize>) -> Result<()> {
        self.check_instance(data, i)?;
        self.check_label_len(data, i, y, "label")
    }

    fn joint_feature(&self, data: &ChainData, i: usize, y: &Vec<usize>) -> Result<SparseVec> {
        self.check_label(data, i, y)?;
        let s_n = self.n_states;
        let x = data.view();
        let mut v = SparseVec::new();
        for (t, r) in data.rows(i).enumerate() {
            let (idx, val) = x.row(r);
            for (&c, &xv) in idx.iter().zip(val) {
                v.push(c as usize * s_n + y[t], xv);
            }
            if t > 0 {
                v.push(self.trans_offset() + y[t - 1] * s_n + y[t], 1.0);
            }
        }
        v.push(self.start_offset() + y[0], 1.0);
        v.push(self.end_offset() + y[y.len() - 1], 1.0);
        Ok(v)
    }

    /// Only the tokens whose tag differs from the gold one (their feature rows, once with each
    /// tag), the transitions, start and end that differ: O(differing tokens · nnz) instead of
    /// three passes over the sentence's features.
    fn add_feature_difference(
        &self,
        data: &ChainData,
        i: usize,
        y_true: &Vec<usize>,
        answer: &[(&Vec<usize>, f64)],
        add: &mut dyn FnMut(usize, f64),
    ) -> Result<bool> {
        self.check_label(data, i, y_true)?;
        let s_n = self.n_states;
        let x = data.view();
        let g = y_true;
        for &(y, t) in answer {
            self.check_label(data, i, y)?;
            for (p, r) in data.rows(i).enumerate() {
                if p > 0 && (y[p - 1], y[p]) != (g[p - 1], g[p]) {
                    add(self.trans_offset() + y[p - 1] * s_n + y[p], t);
                    add(self.trans_offset() + g[p - 1] * s_n + g[p], -t);
                }
                if y[p] == g[p] {
                    continue;
                }
                let (idx, val) = x.row(r);
                for (&c, &xv) in idx.iter().zip(val) {
                    add(c as usize * s_n + y[p], t * xv);
                    add(c as usize * s_n + g[p], -t * xv);
                }
            }
            let last = y.len() - 1;
            if y[0] != g[0] {
                add(self.start_offset() + y[0], t);
                add(self.start_offset() + g[0], -t);
            }
            if y[last] != g[last] {
                add(self.end_offset() + y[last], t);
                add(self.end_offset() + g[last], -t);
            }
        }
        Ok(true)
    }

    fn terms(&self, y: &Vec<usize>, y_true: &Vec<usize>) -> Result<Terms> {
        self.check_states(y, "label")?;
        self.check_states(y_true, "gold label")?;
        if y.len() != y_true.len() {
            return Err(Error::input(format!(
                "labels of different lengths ({} and {}) are not labels of one sequence",
                y.len(),
                y_true.len()
            )));
        }
        Ok(terms_of(&self.tags, self.loss, y, y_true))
    }

    fn predict(&self, w: &[f64], data: &ChainData, i: usize) -> Result<Vec<usize>> {
        self.check_instance(data, i)?;
        self.check_w(w)?;
        let mut emit = Vec::new();
        self.emissions(w, data, i, &mut emit);
        self.check_used_weights(w, &emit, i)?;
        let obj = Objective { margin: 1.0, terms: Terms::default() };
        let tab = self.tables::<f64>(w, &emit, None, &obj, None);
        let mut found = solve_tables_f64(&tab, &self.tags, self.loss, None, &obj, 1);
        found.pop().ok_or_else(|| Error::solver("Viterbi found no path (non-finite weights?)"))
    }

    /// w·φ(x_i, y) without building φ: the same products summed in the same order as
    /// `joint_feature(…).dot(w)` (bit-identical), for the warm-start re-evaluations of a search.
    fn score(&self, w: &[f64], data: &ChainData, i: usize, y: &Vec<usize>) -> Result<f64> {
        self.check_label(data, i, y)?;
        self.check_w(w)?;
        let s_n = self.n_states;
        let x = data.view();
        let tokens = data.rows(i).enumerate().flat_map(|(t, r)| {
            let (idx, val) = x.row(r);
            let emit = idx.iter().zip(val).map(move |(&c, &xv)| (c as usize * s_n + y[t], xv));
            let trans = (t > 0).then(|| (self.trans_offset() + y[t - 1] * s_n + y[t], 1.0));
            emit.chain(trans)
        });
        let ends = [(self.start_offset() + y[0], 1.0), (self.end_offset() + y[y.len() - 1], 1.0)];
        Ok(tokens.chain(ends).map(|(j, v)| w[j] * v).sum())
    }

    /// w·φ(x_i, y) from the shared emission scores of this inference: O(T) per label (the
    /// warm-start re-evaluations of a search: 6.7 labels per inference late in a slack fit on
    /// CoNLL-2002), the same value as [`Structure::score`] up to the order of the sums.
    fn score_shared(
        &self,
        w: &[f64],
        data: &ChainData,
        i: usize,
        y: &Vec<usize>,
        shared: Option<&[f64]>,
    ) -> Result<f64> {
        match shared {
            Some(emit) if emit.len() == data.len_of(i) * self.n_states => {
                self.check_label(data, i, y)?;
                self.check_w(w)?;
                Ok(path_score_raw(&self.raw(w, emit), y))
            }
            _ => self.score(w, data, i, y),
        }
    }

    /// The warm-start labels of a search scored from the shared emission scores: the instance,
    /// `w` and the gold label validated once, each label once (length and states), then its path
    /// score and terms in O(T) — the values of [`Structure::score_shared`] and
    /// [`Structure::terms`].
    fn evaluate_shared(
        &self,
        w: &[f64],
        data: &ChainData,
        i: usize,
        y_true: &Vec<usize>,
        labels: &[Vec<usize>],
        shared: Option<&[f64]>,
    ) -> Result<Vec<(f64, Terms)>> {
        let emit = match shared {
            Some(e) if e.len() == data.len_of(i) * self.n_states => e,
            _ => {
                let gold = self.score_shared(w, data, i, y_true, shared)?;
                return labels
                    .iter()
                    .map(|y| Ok((self.score_shared(w, data, i, y, shared)? - gold, self.terms(y, y_true)?)))
                    .collect();
            }
        };
        self.check_label(data, i, y_true)?;
        self.check_w(w)?;
        let raw = self.raw(w, emit);
        let gold = path_score_raw(&raw, y_true);
        labels
            .iter()
            .map(|y| {
                self.check_label_len(data, i, y, "label")?;
                Ok((path_score_raw(&raw, y) - gold, terms_of(&self.tags, self.loss, y, y_true)))
            })
            .collect()
    }

    /// Each label's tags, one prefetch per cache line (a warm label of 32 tokens spans 4 lines).
    fn prefetch_labels(&self, labels: &[Vec<usize>]) {
        for y in labels {
            prefetch_slice(y);
        }
    }

    /// The emission scores of sequence `i` (validated finite): what every query of one inference
    /// shares, so that a search's certificate calls cost only the Viterbi DP.
    fn shared_scores(&self, w: &[f64], data: &ChainData, i: usize) -> Result<Option<Vec<f64>>> {
        self.check_instance(data, i)?;
        self.check_w(w)?;
        let mut emit = Vec::new();
        self.emissions(w, data, i, &mut emit);
        self.check_used_weights(w, &emit, i)?;
        Ok(Some(emit))
    }

    fn oracle(
        &self,
        w: &[f64],
        data: &ChainData,
        i: usize,
        y_true: &Vec<usize>,
        q: &TermQuery<'_, Vec<usize>>,
    ) -> Result<Vec<Scored<Vec<usize>>>> {
        self.oracle_shared(w, data, i, y_true, q, None)
    }

    fn oracle_shared(
        &self,
        w: &[f64],
        data: &ChainData,
        i: usize,
        y_true: &Vec<usize>,
        q: &TermQuery<'_, Vec<usize>>,
        shared: Option<&[f64]>,
    ) -> Result<Vec<Scored<Vec<usize>>>> {
        self.check_instance(data, i)?;
        self.check_w(w)?;
        self.check_label_len(data, i, y_true, "gold label")?;
        if q.cone.is_some() {
            return Err(Error::unsupported("structure 'chain' has no constrained λ-oracle (cone)"));
        }
        let mut banned: Vec<&Vec<usize>> = Vec::with_capacity(q.ban.len());
        for (j, b) in q.ban.iter().enumerate() {
            self.check_label_len(data, i, b, &format!("ban[{j}]"))?;
            if !banned.contains(&b) {
                banned.push(b);
            }
        }
        let emit = self.emissions_of(w, data, i, shared)?;
        Ok(oracle_raw(&self.raw(w, &emit), &self.tags, self.loss, y_true, q, &banned))
    }

    /// For every number c of wrong tokens, a label maximising `objective` among those with c
    /// wrong tokens (the Hamming loss; refused for the segment loss): one DP over (t, s, c).
    fn frontier(
        &self,
        w: &[f64],
        data: &ChainData,
        i: usize,
        y_true: &Vec<usize>,
        objective: &Objective,
    ) -> Result<Vec<Scored<Vec<usize>>>> {
        self.frontier_shared(w, data, i, y_true, objective, None)
    }

    fn frontier_shared(
        &self,
        w: &[f64],
        data: &ChainData,
        i: usize,
        y_true: &Vec<usize>,
        objective: &Objective,
        shared: Option<&[f64]>,
    ) -> Result<Vec<Scored<Vec<usize>>>> {
        self.check_instance(data, i)?;
        self.check_w(w)?;
        self.check_label_len(data, i, y_true, "gold label")?;
        if self.loss != ChainLoss::Hamming {
            return Err(Error::unsupported(
                "structure 'chain' has a frontier query for the Hamming loss only (the segment loss is not a token count)",
            ));
        }
        let emit = self.emissions_of(w, data, i, shared)?;
        Ok(frontier_raw(&self.raw(w, &emit), &self.tags, self.loss, y_true, objective))
    }
}

#[cfg(test)]
mod tests;
