"""Sequence metrics: hand-computed IOB1/IOB2 cases, a loop reference and seqeval on random tags."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bicrit.errors import InvalidInputError, InvalidParameterError
from bicrit.metrics import (
    Entity,
    entity_scores,
    extract_entities,
    sentence_f1,
    sequence_report,
    token_accuracy,
)

# --- a loop reference of conlleval's chunking ---------------------------------------------


def reference_chunks(tags: list[str]) -> list[tuple[str, int, int]]:
    """conlleval's startOfChunk/endOfChunk, token by token (IOB tags only), end exclusive."""
    chunks, start, prev_tag, prev_type = [], None, "O", ""
    for i, tag in enumerate([*tags, "O"]):
        prefix, kind = (tag, "") if tag == "O" else (tag[0], tag[2:])
        ends = prev_tag != "O" and (prefix in "BO" or kind != prev_type)
        starts = prefix == "B" or (prefix == "I" and (prev_tag == "O" or kind != prev_type))
        if ends:
            chunks.append((prev_type, start, i))
        if starts:
            start = i
        prev_tag, prev_type = prefix, kind
    return chunks


# --- hand-computed ------------------------------------------------------------------------

# IOB2, 3 gold chunks; the prediction gets one right, one with the wrong type, one with the
# wrong end.
#            0        1        2     3        4     5        6        7
IOB2_GOLD = ["B-PER", "I-PER", "O", "B-LOC", "O", "B-ORG", "I-ORG", "I-ORG"]
IOB2_PRED = ["B-PER", "I-PER", "O", "B-ORG", "O", "B-ORG", "I-ORG", "O"]
# gold: PER[0,2) LOC[3,4) ORG[5,8);  pred: PER[0,2) ✓, ORG[3,4) (type), ORG[5,7) (end)
# correct 1, gold 3, pred 3 -> P = R = F = 1/3
# per type  PER: g1 p1 c1 -> 1, 1, 1
#           LOC: g1 p0 c0 -> P = 0/0 := 0, R = 0, F = 0
#           ORG: g1 p2 c0 -> P = 0, R = 0, F = 0
# macro: P = R = F = (1 + 0 + 0)/3 = 1/3; token accuracy: tokens 3 and 7 wrong -> 6/8

# IOB1, 3 gold chunks; B- separates two adjacent PER chunks.
#            0        1        2        3     4        5
IOB1_GOLD = ["I-PER", "B-PER", "I-PER", "O", "I-LOC", "I-LOC"]
IOB1_PRED = ["I-PER", "B-PER", "O", "O", "I-ORG", "I-ORG"]
# gold: PER[0,1) PER[1,3) LOC[4,6);  pred: PER[0,1) ✓, PER[1,2) (end), ORG[4,6) (type)
# correct 1, gold 3, pred 3 -> P = R = F = 1/3
# per type  LOC: g1 p0 c0 -> P = 0/0 := 0, R = 0, F = 0
#           ORG: g0 p1 c0 -> P = 0, R = 0/0 := 0, F = 0
#           PER: g2 p2 c1 -> P = R = F = 1/2
# macro: P = R = F = (0 + 0 + 1/2)/3 = 1/6; token accuracy: tokens 2, 4, 5 wrong -> 3/6


def test_extract_iob2():
    assert extract_entities(IOB2_GOLD, "iob2") == [
        Entity("PER", 0, 2),
        Entity("LOC", 3, 4),
        Entity("ORG", 5, 8),
    ]
    assert extract_entities(IOB2_PRED, "iob2") == [
        Entity("PER", 0, 2),
        Entity("ORG", 3, 4),
        Entity("ORG", 5, 7),
    ]


def test_extract_iob1():
    assert extract_entities(IOB1_GOLD, "iob1") == [
        Entity("PER", 0, 1),
        Entity("PER", 1, 3),
        Entity("LOC", 4, 6),
    ]
    assert extract_entities(IOB1_PRED, "iob1") == [
        Entity("PER", 0, 1),
        Entity("PER", 1, 2),
        Entity("ORG", 4, 6),
    ]


def test_extract_lenient_iob2():
    # conlleval: an I- after O, at the start, or after another type starts a chunk; B- always
    # starts one, even inside a chunk of the same type.
    tags = ["I-PER", "O", "I-PER", "I-PER", "I-LOC", "B-LOC", "I-LOC", "B-LOC", "I-ORG"]
    assert extract_entities(tags) == [
        Entity("PER", 0, 1),
        Entity("PER", 2, 4),
        Entity("LOC", 4, 5),
        Entity("LOC", 5, 7),
        Entity("LOC", 7, 8),
        Entity("ORG", 8, 9),
    ]


@pytest.mark.parametrize(
    ("gold", "pred", "micro", "macro", "per_type", "tok"),
    [
        (IOB2_GOLD, IOB2_PRED, 1 / 3, 1 / 3, {"LOC": 0.0, "ORG": 0.0, "PER": 1.0}, 6 / 8),
        (IOB1_GOLD, IOB1_PRED, 1 / 3, 1 / 6, {"LOC": 0.0, "ORG": 0.0, "PER": 0.5}, 3 / 6),
    ],
    ids=["iob2", "iob1"],
)
def test_hand_computed_scores(gold, pred, micro, macro, per_type, tok):
    for scheme in ("iob1", "iob2", "auto"):
        s = entity_scores([gold], [pred], scheme)
        assert s["micro"]["precision"] == pytest.approx(micro)
        assert s["micro"]["recall"] == pytest.approx(micro)
        assert s["micro"]["f1"] == pytest.approx(micro)
        assert (s["micro"]["n_gold"], s["micro"]["n_pred"], s["micro"]["n_correct"]) == (3, 3, 1)
        for key in ("precision", "recall", "f1"):
            assert s["macro"][key] == pytest.approx(macro)
        assert list(s["per_type"]) == sorted(per_type)
        assert {t: v["f1"] for t, v in s["per_type"].items()} == pytest.approx(per_type)
    assert token_accuracy([gold], [pred]) == pytest.approx(tok)


def test_zero_division_on_per_type_scores():
    # IOB1 example: LOC has no predicted chunk (precision 0/0), ORG no gold chunk (recall 0/0).
    s = entity_scores([IOB1_GOLD], [IOB1_PRED], zero_division=1.0)
    assert s["per_type"]["LOC"]["precision"] == 1.0
    assert s["per_type"]["ORG"]["recall"] == 1.0
    assert s["per_type"]["LOC"]["f1"] == 0.0  # 2·0 / (1 + 0): defined, unaffected
    # macro precision (0 + 1 + 1/2)/3 -> with LOC's 0/0 := 1: (1 + 0 + 1/2)/3
    assert s["macro"]["precision"] == pytest.approx(1.5 / 3)
    assert s["macro"]["recall"] == pytest.approx(1.5 / 3)


def test_sentence_f1_hand_computed():
    gold = [IOB2_GOLD, ["O", "O"], ["B-PER"]]
    pred = [IOB2_PRED, ["O", "O"], ["O"]]
    # sentence F1: 2·1/(3+3) = 1/3; no entity anywhere -> 1; gold entity missed -> 2·0/(1+0) = 0
    assert sentence_f1(gold, pred) == pytest.approx((1 / 3 + 1 + 0) / 3)
    report = sequence_report(gold, pred)
    assert report["sentence_f1"] == pytest.approx(4 / 9)
    # precision: 1/3, 1 (no prediction), 1 (no prediction); recall: 1/3, 1 (no gold), 0
    assert report["sentence_precision"] == pytest.approx((1 / 3 + 1 + 1) / 3)
    assert report["sentence_recall"] == pytest.approx((1 / 3 + 1 + 0) / 3)
    # pooled over the corpus: correct 1, gold 4, pred 3 -> P = 1/3, R = 1/4, F = 2/7
    assert report["precision"] == pytest.approx(1 / 3)
    assert report["recall"] == pytest.approx(1 / 4)
    assert report["f1"] == pytest.approx(2 / 7)
    assert report["token_accuracy"] == pytest.approx(8 / 11)
    assert (report["n_sentences"], report["n_tokens"]) == (3, 11)
    assert (report["n_gold"], report["n_pred"], report["n_correct"]) == (4, 3, 1)


def test_no_entities_anywhere():
    gold = pred = [["O", "O"], ["O"]]
    assert sentence_f1(gold, pred) == 1.0
    s = entity_scores(gold, pred)
    assert s["per_type"] == {}
    assert s["micro"]["f1"] == 0.0 and s["macro"]["f1"] == 0.0
    assert entity_scores(gold, pred, zero_division=1.0)["micro"]["f1"] == 1.0


def test_chunks_do_not_cross_sentences():
    # the I-PER opening sentence 2 starts a new chunk, even though sentence 1 ends inside PER
    gold = [["B-PER", "I-PER"], ["I-PER", "O"]]
    pred = [["B-PER", "I-PER"], ["B-PER", "O"]]
    assert entity_scores(gold, pred)["micro"]["f1"] == 1.0


def test_token_accuracy_takes_any_tags():
    assert token_accuracy([["DT", "NN"], ["VB"]], [["DT", "VB"], ["VB"]]) == pytest.approx(2 / 3)


# --- random tags: the loop reference, IOB1/IOB2 round trips and seqeval --------------------

TAGS = ["O", "B-A", "I-A", "B-B", "I-B", "B-C", "I-C"]
sentences = st.lists(st.sampled_from(TAGS), min_size=1, max_size=9)


@st.composite
def corpus_pairs(draw):
    lengths = draw(st.lists(st.integers(1, 9), min_size=1, max_size=6))
    gold = [draw(st.lists(st.sampled_from(TAGS), min_size=n, max_size=n)) for n in lengths]
    pred = [draw(st.lists(st.sampled_from(TAGS), min_size=n, max_size=n)) for n in lengths]
    return gold, pred


@settings(max_examples=200, deadline=None)
@given(tags=sentences)
def test_extraction_matches_loop_reference(tags):
    assert [tuple(e) for e in extract_entities(tags)] == reference_chunks(tags)


@st.composite
def chunkings(draw):
    """A random chunking of a sentence: non-overlapping typed spans, adjacent ones allowed."""
    n = draw(st.integers(1, 12))
    spans, t = [], 0
    while t < n:
        if draw(st.booleans()):
            t += 1
            continue
        end = draw(st.integers(t + 1, n))
        spans.append((draw(st.sampled_from("ABC")), t, end))
        t = end
    return n, spans


def encode(n: int, spans: list[tuple[str, int, int]], scheme: str) -> list[str]:
    tags = ["O"] * n
    for kind, start, end in spans:
        adjacent_same = any(k == kind and e == start for k, _, e in spans)
        first = "B" if scheme == "iob2" or adjacent_same else "I"
        tags[start] = f"{first}-{kind}"
        for t in range(start + 1, end):
            tags[t] = f"I-{kind}"
    return tags


@settings(max_examples=200, deadline=None)
@given(chunking=chunkings())
def test_iob1_and_iob2_encodings_decode_to_the_chunking(chunking):
    n, spans = chunking
    for scheme in ("iob1", "iob2"):
        got = [tuple(e) for e in extract_entities(encode(n, spans, scheme), scheme)]
        assert got == spans


def reference_sentence_f1(gold, pred) -> float:
    scores = []
    for g, p in zip(gold, pred, strict=True):
        gs, ps = set(reference_chunks(g)), set(reference_chunks(p))
        scores.append(1.0 if not gs and not ps else 2 * len(gs & ps) / (len(gs) + len(ps)))
    return float(np.mean(scores))


@settings(max_examples=150, deadline=None)
@given(pair=corpus_pairs())
def test_sentence_f1_and_token_accuracy_match_reference(pair):
    gold, pred = pair
    assert sentence_f1(gold, pred) == pytest.approx(reference_sentence_f1(gold, pred))
    flat = [(g, p) for gs, ps in zip(gold, pred, strict=True) for g, p in zip(gs, ps, strict=True)]
    assert token_accuracy(gold, pred) == pytest.approx(np.mean([g == p for g, p in flat]))


@settings(max_examples=200, deadline=None)
@given(pair=corpus_pairs())
def test_against_seqeval(pair):
    seqeval = pytest.importorskip("seqeval.metrics.sequence_labeling")
    gold, pred = pair
    ours = entity_scores(gold, pred)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for g, p in zip(gold, pred, strict=True):  # seqeval's ends are inclusive
            assert [tuple(e) for e in extract_entities(g)] == [
                (t, s, e + 1) for t, s, e in seqeval.get_entities(g)
            ]
            assert [tuple(e) for e in extract_entities(p)] == [
                (t, s, e + 1) for t, s, e in seqeval.get_entities(p)
            ]
        micro = seqeval.precision_recall_fscore_support(
            gold, pred, average="micro", zero_division=0
        )
        assert (ours["micro"]["precision"], ours["micro"]["recall"], ours["micro"]["f1"]) == (
            pytest.approx(tuple(float(v) for v in micro[:3]))
        )
        if ours["per_type"]:  # seqeval averages an empty type list to NaN
            macro = seqeval.precision_recall_fscore_support(
                gold, pred, average="macro", zero_division=0
            )
            assert (ours["macro"]["precision"], ours["macro"]["recall"], ours["macro"]["f1"]) == (
                pytest.approx(tuple(float(v) for v in macro[:3]))
            )
            per_type = seqeval.precision_recall_fscore_support(
                gold, pred, average=None, zero_division=0
            )
            for key, values in zip(("precision", "recall", "f1"), per_type[:3], strict=True):
                assert [v[key] for v in ours["per_type"].values()] == pytest.approx(list(values))
            assert [v["n_gold"] for v in ours["per_type"].values()] == list(per_type[3])


# --- input validation ---------------------------------------------------------------------

METRICS = [token_accuracy, entity_scores, sentence_f1, sequence_report]


@pytest.mark.parametrize(
    ("gold", "pred", "message"),
    [
        ([["O", "B-A"]], [["O"]], r"gold\[0\] and pred\[0\] differ in length: 2 and 1 tags"),
        ([["O"], ["O"]], [["O"]], r"same number of sentences: gold has 2, pred has 1"),
        ([], [], r"gold and pred are empty"),
        ([["O"], []], [["O"], []], r"gold\[1\] is an empty sentence"),
        (["O", "B-A"], ["O", "B-A"], r"gold\[0\] must be a sequence of tags, got str"),
        ("O B-A", "O B-A", r"gold must be a list of sentences"),
        ([["O", 3]], [["O", "O"]], r"gold must hold string tags, found 3"),
    ],
)
def test_invalid_corpus(gold, pred, message):
    for func in METRICS:
        with pytest.raises(InvalidInputError, match=message):
            func(gold, pred)


@pytest.mark.parametrize("tag", ["X-PER", "B-", "PER", "B_PER", "o", ""])
def test_invalid_tag_is_located(tag):
    gold = [["O"], ["O", "B-A", "O"]]
    pred = [["O"], ["O", "O", tag]]
    for func in (entity_scores, sentence_f1, sequence_report):
        with pytest.raises(InvalidInputError, match=rf"pred\[1\]\[2\] = '{tag}' is not an IOB tag"):
            func(gold, pred)
    with pytest.raises(InvalidInputError, match=rf"tags\[1\] = '{tag}' is not an IOB tag"):
        extract_entities(["O", tag])


def test_extract_entities_input():
    assert extract_entities([]) == []
    assert extract_entities(np.array(["B-A", "I-A"])) == [Entity("A", 0, 2)]
    with pytest.raises(
        InvalidInputError, match="tags must be the sequence of tags of one sentence"
    ):
        extract_entities("B-A I-A")


def test_invalid_parameters():
    with pytest.raises(InvalidParameterError, match="scheme must be one of"):
        entity_scores([["O"]], [["O"]], scheme="iobes")
    with pytest.raises(InvalidParameterError, match="scheme"):
        extract_entities(["O"], scheme="IOB2")
    with pytest.raises(InvalidParameterError, match="zero_division"):
        sequence_report([["O"]], [["O"]], zero_division=2)


# --- real CoNLL files (skipped without the development data) ------------------------------


def read_conll_tags(path) -> list[list[str]]:
    """Last column of a CoNLL file, one list per blank-line separated sentence."""
    sentences, current = [], []
    for line in path.read_text(encoding="latin-1").splitlines():
        fields = line.split()
        if not fields or fields[0] == "-DOCSTART-":
            if current:
                sentences.append(current)
                current = []
            continue
        current.append(fields[-1])
    if current:
        sentences.append(current)
    return sentences


@pytest.mark.parametrize("name", ["conll2000/test.txt", "conll2002/esp.testb"])
def test_real_corpus_against_seqeval(data_dir, name):
    seqeval = pytest.importorskip("seqeval.metrics.sequence_labeling")
    path = data_dir / name
    if not path.is_file():
        pytest.skip(f"{path} not found")
    gold = read_conll_tags(path)
    rng = np.random.default_rng(0)
    vocab = sorted({t for s in gold for t in s})
    pred = [[t if rng.random() > 0.1 else vocab[rng.integers(len(vocab))] for t in s] for s in gold]
    report = sequence_report(gold, pred)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for average in ("micro", "macro"):
            ref = seqeval.precision_recall_fscore_support(gold, pred, average=average)
            prefix = "" if average == "micro" else "macro_"
            ours = [report[f"{prefix}{k}"] for k in ("precision", "recall", "f1")]
            assert ours == pytest.approx([float(v) for v in ref[:3]])
