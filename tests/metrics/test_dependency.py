"""Attachment scores: a hand-computed tree and a token loop as reference on random heads."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bicrit.errors import InvalidInputError
from bicrit.metrics import dependency_report, las, uas

# One 5-token sentence (CoNLL numbering, 0 = root); 2 wrong heads and 1 wrong label.
#   token       1        2       3      4      5
HEADS = [2, 0, 2, 5, 3]
LABELS = ["nsubj", "root", "obj", "det", "punct"]
HEADS_PRED = [2, 0, 1, 5, 2]  # token 3 (1 ≠ 2) and token 5 (2 ≠ 3) wrong
LABELS_PRED = ["nsubj", "root", "obj", "amod", "punct"]  # token 4's label wrong, its head right
TAGS = ["NN", "VBZ", "NN", "DT", "."]
# UAS = 3/5 (tokens 1, 2, 4); LAS = 2/5 (tokens 1, 2); label accuracy 4/5.
# Without punctuation (token 5, tag "."): UAS = 3/4, LAS = 2/4.

# A second, 2-token sentence, all correct.
HEADS2, LABELS2, TAGS2 = [0, 1], ["root", "punct"], ["UH", "PUNCT"]


def test_hand_computed_single_sentence():
    assert uas([HEADS], [HEADS_PRED]) == pytest.approx(3 / 5)
    assert las([HEADS], [HEADS_PRED], [LABELS], [LABELS_PRED]) == pytest.approx(2 / 5)
    assert uas([HEADS], [HEADS_PRED], tags=[TAGS]) == pytest.approx(3 / 4)
    assert las([HEADS], [HEADS_PRED], [LABELS], [LABELS_PRED], tags=[TAGS]) == pytest.approx(2 / 4)
    # a custom punctuation set that does not include "." scores every token again
    assert uas([HEADS], [HEADS_PRED], tags=[TAGS], punct_tags={"PUNCT"}) == pytest.approx(3 / 5)


def test_hand_computed_corpus_and_per_sentence():
    heads, pred = [HEADS, HEADS2], [HEADS_PRED, np.array(HEADS2)]
    labels, labels_pred = [LABELS, LABELS2], [LABELS_PRED, LABELS2]
    # corpus-level pools tokens: (3 + 2) / (5 + 2)
    assert uas(heads, pred) == pytest.approx(5 / 7)
    assert las(heads, pred, labels, labels_pred) == pytest.approx(4 / 7)
    np.testing.assert_allclose(uas(heads, pred, per_sentence=True), [3 / 5, 1.0])
    np.testing.assert_allclose(las(heads, pred, labels, labels_pred, per_sentence=True), [2 / 5, 1])
    # punctuation out: sentence 1 keeps 4 tokens, sentence 2 keeps token 1 only
    tags = [TAGS, TAGS2]
    assert uas(heads, pred, tags=tags) == pytest.approx((3 + 1) / (4 + 1))
    report = dependency_report(heads, pred, labels, labels_pred)
    assert report == pytest.approx(
        {
            "uas": 5 / 7,
            "uas_sentence": (3 / 5 + 1) / 2,
            "uem": 1 / 2,
            "las": 4 / 7,
            "las_sentence": (2 / 5 + 1) / 2,
            "lem": 1 / 2,
            "label_accuracy": 6 / 7,
            "n_sentences": 2,
            "n_scored_tokens": 7,
        }
    )
    assert set(dependency_report(heads, pred)) == {
        "uas",
        "uas_sentence",
        "uem",
        "n_sentences",
        "n_scored_tokens",
    }


def test_sentence_of_punctuation_only():
    heads, pred, tags = [HEADS, [0]], [HEADS_PRED, [0]], [TAGS, ["."]]
    per = uas(heads, pred, tags=tags, per_sentence=True)
    assert per[0] == pytest.approx(3 / 4) and np.isnan(per[1])
    report = dependency_report(heads, pred, tags=tags)
    assert report["uas_sentence"] == pytest.approx(3 / 4)  # the empty sentence is left out
    assert report["uem"] == pytest.approx(1 / 2)  # …but counts as matched in the exact match
    with pytest.raises(InvalidInputError, match="every token is punctuation"):
        uas([[0]], [[0]], tags=[["."]])


@st.composite
def treebanks(draw):
    lengths = draw(st.lists(st.integers(1, 8), min_size=1, max_size=5))
    gold = [draw(st.lists(st.integers(0, n), min_size=n, max_size=n)) for n in lengths]
    pred = [draw(st.lists(st.integers(0, n), min_size=n, max_size=n)) for n in lengths]
    lab = [draw(st.lists(st.sampled_from("ab"), min_size=n, max_size=n)) for n in lengths]
    lab_pred = [draw(st.lists(st.sampled_from("ab"), min_size=n, max_size=n)) for n in lengths]
    tags = [draw(st.lists(st.sampled_from(["NN", "."]), min_size=n, max_size=n)) for n in lengths]
    return gold, pred, lab, lab_pred, tags


@settings(max_examples=150, deadline=None)
@given(bank=treebanks())
def test_against_token_loop(bank):
    gold, pred, lab, lab_pred, tags = bank
    rows = [
        (h == hp, h == hp and r == rp, t != ".")
        for hs, hps, rs, rps, ts in zip(gold, pred, lab, lab_pred, tags, strict=True)
        for h, hp, r, rp, t in zip(hs, hps, rs, rps, ts, strict=True)
    ]
    u, l_, keep = (np.array(c) for c in zip(*rows, strict=True))
    assert uas(gold, pred) == pytest.approx(u.mean())
    assert las(gold, pred, lab, lab_pred) == pytest.approx(l_.mean())
    if keep.any():
        assert uas(gold, pred, tags=tags) == pytest.approx(u[keep].mean())
        assert las(gold, pred, lab, lab_pred, tags=tags) == pytest.approx(l_[keep].mean())
    # corpus UAS is the length-weighted mean of the per-sentence UAS
    lengths = np.array([len(h) for h in gold])
    per = uas(gold, pred, per_sentence=True)
    assert uas(gold, pred) == pytest.approx(np.sum(per * lengths) / lengths.sum())


@pytest.mark.parametrize(
    ("heads", "pred", "message"),
    [
        ([[2, 0]], [[2, 3]], r"heads_pred\[0\]\[1\] = 3 is out of range: .* lie in 0\.\.2"),
        ([[2, -1]], [[2, 0]], r"heads\[0\]\[1\] = -1 is out of range"),
        ([[2, 0]], [[2.5, 0]], r"heads_pred\[0\] must hold integer heads"),
        ([[2, 0]], [["2", "0"]], r"heads_pred\[0\] must hold integer heads"),
        ([[2, 0]], [[2, 0, 1]], r"heads_pred\[0\] has 3 tokens but heads\[0\] has 2"),
        ([[2, 0], [0]], [[2, 0]], r"same number of sentences: heads has 2, heads_pred has 1"),
        ([], [], r"heads and heads_pred are empty"),
        ([[0], []], [[0], []], r"heads\[1\] is an empty sentence"),
        ([[[0]]], [[[0]]], r"heads\[0\] must be 1-D"),
        ([2, 0], [2, 0], r"heads\[0\] must be a sequence"),
    ],
)
def test_invalid_heads(heads, pred, message):
    with pytest.raises(InvalidInputError, match=message):
        uas(heads, pred)


def test_integral_float_heads_are_accepted():
    assert uas([[2.0, 0.0]], [[2, 0]]) == 1.0


def test_invalid_labels_and_tags():
    with pytest.raises(
        InvalidInputError, match=r"labels_pred\[0\] has 4 tokens but heads\[0\] has 5"
    ):
        las([HEADS], [HEADS_PRED], [LABELS], [LABELS_PRED[:4]])
    with pytest.raises(InvalidInputError, match="give both labels and labels_pred"):
        dependency_report([HEADS], [HEADS_PRED], [LABELS])
    with pytest.raises(InvalidInputError, match="las needs labels"):
        las([HEADS], [HEADS_PRED], None, None)
    with pytest.raises(InvalidInputError, match=r"tags must hold one entry per sentence"):
        uas([HEADS], [HEADS_PRED], tags=[TAGS, TAGS])
