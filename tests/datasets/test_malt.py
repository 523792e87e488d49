"""Malt-TAB (NLTK dependency treebank) against its README; malformed input."""

from __future__ import annotations

import re

import pytest

from bicrit.datasets import TreebankDataset, load, read_malt_tab, spec
from bicrit.errors import DataFormatError


def test_counts_equal_readme(data_dir):
    # nltk_dependency_treebank/README.md: 199 files, 3914 sentences, 94084 tokens, one root
    # per sentence, no relation column.
    ds = load("nltk_dependency_treebank", "all", root=data_dir)
    assert isinstance(ds, TreebankDataset)
    assert (len(ds), ds.n_tokens) == (3914, 94084)
    assert spec("nltk_dependency_treebank").counts["all"] == 3914
    assert len(ds.paths) == 199 and ds.deprels is None and ds.upos is None
    assert all((h == 0).sum() == 1 for h in ds.heads)
    assert ds.words[0][:2] == ["Pierre", "Vinken"] and ds.xpos[0][:2] == ["NNP", "NNP"]
    assert ds.heads[0][:2].tolist() == [2, 8]
    assert ds.pos is ds.xpos and ds.sent_ids[0] == "wsj_0001.dp:1"
    train = load("nltk_dependency_treebank", "train", root=data_dir)
    test = load("nltk_dependency_treebank", "test", root=data_dir)
    assert len(train) + len(test) == 3914 and len(train.paths) == 179


def test_four_columns_and_several_files(tmp_path):
    a, b = tmp_path / "a.dp", tmp_path / "b.dp"
    a.write_text("John\tNNP\t2\tSUB\nsleeps\tVBZ\t0\tROOT\n\nHe\tPRP\t0\tROOT\n")
    b.write_text("Yes\tUH\t0\tROOT\n")
    ds = read_malt_tab([a, b])
    assert ds.words == [["John", "sleeps"], ["He"], ["Yes"]]
    assert ds.deprels == [["SUB", "ROOT"], ["ROOT"], ["ROOT"]]
    assert ds.sent_ids == ["a.dp:1", "a.dp:2", "b.dp:1"]


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("a\tDT\t2\nb\tNN\n", 2, "expected 3 tab-separated columns .*found 2"),  # truncated
        ("a\tDT\n", 1, "expected 3 or 4 tab-separated columns, found 2"),
        ("a\tDT\t2\nb\tNN\t3\n", 2, "head 3 of word 2 is outside 0..2"),
        ("a\tDT\t2\nb\tNN\tx\n", 2, "head 'x' of word 2 is not an integer"),
        ("a\tDT\t2\nb\tNN\t1\n", 1, "the heads form a cycle through word 1"),
        ("a\t\t0\n", 1, "empty column 2"),
    ],
)
def test_malformed(tmp_path, text, line, message):
    p = tmp_path / "bad.dp"
    p.write_text(text)
    with pytest.raises(DataFormatError, match=re.escape(f"{p}, line {line}: ") + message):
        read_malt_tab(p)


def test_mixed_column_counts_across_files(tmp_path):
    a, b = tmp_path / "a.dp", tmp_path / "b.dp"
    a.write_text("x\tNN\t0\n")
    b.write_text("x\tNN\t0\tROOT\n")
    with pytest.raises(DataFormatError, match="dependency relations"):
        read_malt_tab([a, b])
