//! The largest-loss query of a chain under the token Hamming loss as one plain Viterbi.
//!
//! The lexicographic query λ = ∞ (largest g, ties broken by largest h; docs/architecture.md,
//! Objects; thesis eq. `lambda_oracle` with λ → ∞) asks, for g = c·L with c > 0 and L the number
//! of wrong tokens, for the best label among those of largest loss. Every score is finite, so with
//! S ≥ 2 tags some label gets every token wrong: the labels of largest loss are exactly those with
//! y_t ≠ g_t at every t, and the query is a Viterbi over the secondary objective with the gold tag
//! of every position removed (its node score −∞). That is one dense `f64` pass instead of the
//! dense pass over (primary, secondary) pairs, with the same answer: at every cell of the
//! lexicographic pass the best prefix is an all-wrong one when one exists (it has the larger
//! primary), the secondary sums are the same floating-point operations in the same order, and
//! ties go to the same (smallest) predecessor and final state. With S = 1 no label is all wrong;
//! the caller then runs the lexicographic pass.

use bicrit_core::Objective;

use super::{fold_into, viterbi_dense_in, ChainLoss, QueryBuffers, RawScores, Tags};

/// Whether `primary` is c·(number of wrong tokens) with c > 0 under `loss`: a query whose
/// primary objective is maximised exactly by the labels with every token wrong.
pub(super) fn maximises_token_errors(loss: ChainLoss, primary: &Objective) -> bool {
    let t = &primary.terms;
    loss == ChainLoss::Hamming && primary.margin == 0.0 && t.loss > 0.0 && t.size == 0.0 && t.hamming == 0.0
}

/// The best label under `objective` among those with y_t ≠ `y_true[t]` at every position (None
/// when there is none, i.e. S = 1), in `buf`'s tables and arrays.
pub(super) fn best_all_wrong(
    raw: &RawScores<'_>,
    tags: &Tags,
    loss: ChainLoss,
    y_true: &[usize],
    objective: &Objective,
    buf: &mut QueryBuffers,
) -> Option<Vec<usize>> {
    fold_into(&mut buf.tables, raw, tags, loss, Some(y_true), objective, None);
    let s_n = raw.n_states;
    for (t, &g) in y_true.iter().enumerate() {
        buf.tables.node[t * s_n + g] = f64::NEG_INFINITY;
    }
    viterbi_dense_in(&buf.tables, &mut buf.dp)
}

#[cfg(test)]
mod tests {
    use bicrit_core::Terms;

    use super::super::{fold_tables, oracle_raw, path_score_raw, terms_of, viterbi_dense_lex, Lex};
    use super::*;
    use crate::TermQuery;

    /// Every label of length `t` over `s` tags.
    fn all_labels(s: usize, t: usize) -> Vec<Vec<usize>> {
        (0..s.pow(t as u32))
            .map(|mut code| {
                (0..t)
                    .map(|_| {
                        let v = code % s;
                        code /= s;
                        v
                    })
                    .collect()
            })
            .collect()
    }

    #[test]
    fn largest_loss_query_equals_the_lexicographic_pass_and_brute_force() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut all_wrong_cases = 0;
        for case in 0..3000 {
            let s = 1 + (next() % 4) as usize;
            let t = 1 + (next() % 5) as usize;
            let per_step = case % 2 == 0;
            // a small integer grid: many exact ties in both components
            let mut grid = |n: usize| -> Vec<f64> { (0..n).map(|_| (next() % 3) as f64 - 1.0).collect() };
            let unary = grid(t * s);
            let trans = grid(if per_step { t.saturating_sub(1) * s * s } else { s * s });
            let (start, end) = (grid(s), grid(s));
            let raw = RawScores {
                n_states: s,
                unary: &unary,
                trans: &trans,
                trans_per_step: per_step,
                start: &start,
                end: &end,
            };
            let outside: Vec<usize> = (0..s).filter(|_| next() % 3 == 0).collect();
            let tags = Tags::from_outside(s, &outside).unwrap();
            let gold: Vec<usize> = (0..t).map(|_| (next() % s as u64) as usize).collect();
            let c = [1.0, 2.5][case % 2];
            let primary = Objective { margin: 0.0, terms: Terms { loss: c, ..Terms::default() } };
            // the secondary: h of margin-type surrogates, or with size / Hamming terms too
            let secondary = match case % 3 {
                0 => Objective { margin: 1.0, terms: Terms::default() },
                1 => Objective { margin: 1.0, terms: Terms { loss: 0.5, size: -1.0, hamming: 1.0 } },
                _ => Objective { margin: 0.5, terms: Terms { size: 1.0, ..Terms::default() } },
            };
            assert!(maximises_token_errors(ChainLoss::Hamming, &primary));
            let q = TermQuery { primary, secondary: Some(secondary), ban: &[], k: 1, cone: None };
            let found = oracle_raw(&raw, &tags, ChainLoss::Hamming, &gold, &q, &[]);
            // the lexicographic pass the query replaces: the very same label
            let lex =
                fold_tables::<Lex>(&raw, &tags, ChainLoss::Hamming, Some(&gold), &primary, Some(&secondary));
            let want = viterbi_dense_lex(&lex).unwrap();
            assert_eq!(found.len(), 1, "case {case}");
            assert_eq!(found[0].label, want, "case {case}: S={s} T={t} gold={gold:?}");
            // brute force: the largest (primary, secondary) over every label
            let gold_score = path_score_raw(&raw, &gold);
            let key = |y: &Vec<usize>| {
                let terms = terms_of(&tags, ChainLoss::Hamming, y, &gold);
                let m = path_score_raw(&raw, y) - gold_score;
                (primary.value(m, &terms), secondary.value(m, &terms))
            };
            let best = all_labels(s, t)
                .iter()
                .map(key)
                .fold((f64::NEG_INFINITY, f64::NEG_INFINITY), |a, b| if b > a { b } else { a });
            let got = key(&found[0].label);
            assert!(got.0 == best.0 && (got.1 - best.1).abs() < 1e-9, "case {case}: {got:?} vs {best:?}");
            if s >= 2 {
                all_wrong_cases += 1;
                assert!(found[0].label.iter().zip(&gold).all(|(a, g)| a != g), "case {case}");
            }
        }
        assert!(all_wrong_cases > 1000);
    }

    #[test]
    fn only_the_token_hamming_count_qualifies() {
        let loss = |c: f64| Objective { margin: 0.0, terms: Terms { loss: c, ..Terms::default() } };
        assert!(maximises_token_errors(ChainLoss::Hamming, &loss(1.0)));
        assert!(!maximises_token_errors(ChainLoss::Segment, &loss(1.0)));
        assert!(!maximises_token_errors(ChainLoss::Hamming, &loss(-1.0)));
        assert!(!maximises_token_errors(ChainLoss::Hamming, &Objective { margin: 1.0, ..loss(1.0) }));
        let sized = Objective { margin: 0.0, terms: Terms { loss: 1.0, size: -1.0, hamming: 0.0 } };
        assert!(!maximises_token_errors(ChainLoss::Hamming, &sized));
    }
}
