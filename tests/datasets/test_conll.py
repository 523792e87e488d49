"""CoNLL column files (CoNLL-2002, WNUT-17, CoNLL-2000) against the READMEs; IOB1/IOB2."""

from __future__ import annotations

import re
from collections import Counter
from functools import cache

import pytest

from bicrit.datasets import (
    SequenceDataset,
    detect_tag_scheme,
    load,
    read_conll,
    spec,
    to_iob1,
    to_iob2,
)
from bicrit.errors import DataFormatError

# From the READMEs: (name, split) -> sentences, tokens, documents, entities per type.
README = {
    ("conll2002/esp", "train"): (8323, 264715, 0, dict(LOC=4914, MISC=2173, ORG=7390, PER=4321)),
    ("conll2002/esp", "testa"): (1915, 52923, 0, dict(LOC=985, MISC=445, ORG=1700, PER=1222)),
    ("conll2002/esp", "testb"): (1517, 51533, 0, dict(LOC=1084, MISC=340, ORG=1400, PER=735)),
    ("conll2002/ned", "train"): (15806, 202644, 287, dict(LOC=3208, MISC=3338, ORG=2082, PER=4716)),
    ("conll2002/ned", "testa"): (2895, 37687, 74, dict(LOC=479, MISC=748, ORG=686, PER=703)),
    ("conll2002/ned", "testb"): (5195, 68875, 119, dict(LOC=774, MISC=1187, ORG=882, PER=1098)),
    ("wnut17", "train"): (3394, 62730, 0, {
        "person": 660, "location": 548, "group": 264, "creative-work": 140,
        "corporation": 221, "product": 142}),
    ("wnut17", "dev"): (1009, 15733, 0, {
        "person": 470, "location": 74, "group": 39, "creative-work": 105,
        "corporation": 34, "product": 114}),
    ("wnut17", "test"): (1287, 23394, 0, {
        "person": 429, "location": 150, "group": 165, "creative-work": 142,
        "corporation": 66, "product": 127}),
    ("conll2000", "train"): (8936, 211727, 0, dict(
        NP=55081, VP=21467, PP=21281, ADVP=4227, SBAR=2207, ADJP=2060, PRT=556, CONJP=56,
        INTJ=31, LST=10, UCP=2)),
    ("conll2000", "test"): (2012, 47377, 0, dict(
        NP=12422, VP=4658, PP=4811, ADVP=866, SBAR=535, ADJP=438, PRT=106, CONJP=9, INTJ=2,
        LST=5)),
}  # fmt: skip


@cache
def _load(root, name, split):
    return load(name, split, root=root)


@pytest.mark.parametrize(("name", "split"), list(README))
def test_counts_equal_readme(data_dir, name, split):
    n_sent, n_tok, n_docs, entities = README[(name, split)]
    ds = _load(data_dir, name, split)
    assert isinstance(ds, SequenceDataset)
    assert (len(ds), ds.n_tokens, len(ds.doc_starts)) == (n_sent, n_tok, n_docs)
    assert spec(name).counts[split] == n_sent
    assert all(len(s) > 0 for s in ds.tokens)
    assert [len(s) for s in ds.tags] == [len(s) for s in ds.tokens]
    for col in ds.columns.values():
        assert [len(s) for s in col] == [len(s) for s in ds.tokens]
    # Entities counted the conlleval way: chunk starts, i.e. B- tags once in IOB2.
    found = Counter(t[2:] for s in ds.to_iob2().tags for t in s if t.startswith("B-"))
    assert dict(found) == entities
    assert ds.tag_scheme == "IOB2" == detect_tag_scheme(ds.tags)
    assert set(ds.entity_types) == set(entities)
    assert ds.tag_names[0] == "O"


def test_columns_and_documents(data_dir):
    esp = _load(data_dir, "conll2002/esp", "train")
    assert list(esp.columns) == ["pos"]
    assert (esp.tokens[0][:3], esp.columns["pos"][0][:3], esp.tags[0][:3]) == (
        ["Melbourne", "(", "Australia"],
        ["NP", "Fpa", "NP"],
        ["B-LOC", "O", "B-LOC"],
    )
    ned = _load(data_dir, "conll2002/ned", "train")
    assert ned.doc_starts[0] == 0 and "-DOCSTART-" not in {t for s in ned.tokens for t in s}
    assert list(_load(data_dir, "conll2000", "test").columns) == ["pos"]
    assert _load(data_dir, "wnut17", "dev").columns == {}


@pytest.mark.parametrize("split", ["train", "testa", "testb"])
def test_spanish_has_one_chunk_opened_by_i(data_dir, split):
    # conll2002/README.md: each Spanish file has exactly one I- tag that follows O.
    ds = _load(data_dir, "conll2002/esp", split)
    opened_by_i = [
        (s, j)
        for s, tags in enumerate(ds.tags)
        for j, t in enumerate(tags)
        if t.startswith("I-") and (j == 0 or tags[j - 1][2:] != t[2:])
    ]
    assert len(opened_by_i) == 1
    s, j = opened_by_i[0]
    assert ds.to_iob2().tags[s][j] == "B-" + ds.tags[s][j][2:]


def test_splits_have_aliases(data_dir):
    assert len(_load(data_dir, "conll2002/esp", "testa")) == len(
        load("conll2002/esp", "dev", root=data_dir)
    )
    assert len(load("conll2002/ned", "test", root=data_dir)) == 5195


# ---------------------------------------------------------------------------- IOB schemes

IOB1 = ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "I-ORG", "O"]
IOB2 = ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG", "I-ORG", "O"]


def test_iob_conversions():
    assert to_iob2(IOB1) == IOB2
    assert to_iob1(IOB2) == IOB1
    assert to_iob2(IOB2) == IOB2 and to_iob1(IOB1) == IOB1
    assert to_iob2(["O", "I-X", "I-Y", "B-Y"]) == ["O", "B-X", "B-Y", "B-Y"]
    assert detect_tag_scheme([IOB1]) == "IOB1"
    assert detect_tag_scheme([IOB2]) == "IOB2"
    assert detect_tag_scheme([["O", "O"]]) == "IOB2"


def test_read_iob1_file_and_convert(tmp_path):
    p = tmp_path / "iob1.txt"
    p.write_text("".join(f"w{k} {t}\n" for k, t in enumerate(IOB1)) + "\n")
    ds = read_conll(p)
    assert ds.tag_scheme == "IOB1" and ds.tags == [IOB1]
    assert ds.to_iob2().tags == [IOB2] and ds.to_iob2().tag_scheme == "IOB2"
    assert ds.to_iob2().to_iob1().tags == [IOB1]


# ---------------------------------------------------------------------------- bad input


def test_tab_file_with_blank_tab_lines(tmp_path):
    p = tmp_path / "w.conll"
    p.write_text("a b\tO\nc\tB-x\n\t\n\nd\tI-x\n")
    ds = read_conll(p)
    assert ds.tokens == [["a b", "c"], ["d"]] and ds.tags == [["O", "B-x"], ["I-x"]]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a NN O\nb NN\n", 2, "expected 3 space-separated columns, found 2"),  # truncated line
        ("a NN O\nb NN O extra\n", 2, "expected 3 space-separated columns, found 4"),
        ("a NN O\nb  O\n", 2, "empty column 2"),
        ("a NN O\n\nb NN X-PER\n", 3, "tag 'X-PER' is not O, B-type or I-type"),
        ("a NN O\nb NN B-\n", 2, "tag 'B-' is not O"),
    ],
)
def test_malformed_lines(tmp_path, text, line, message):
    p = tmp_path / "bad.txt"
    p.write_text(text)
    with pytest.raises(DataFormatError, match=re.escape(f"{p}, line {line}: {message}")):
        read_conll(p)


def test_declared_column_names_fix_the_count(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_text("a O\n")
    with pytest.raises(DataFormatError, match=re.escape(f"{p}, line 1: expected 3")):
        read_conll(p, column_names=("word", "pos", "ner"))
