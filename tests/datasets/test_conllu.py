"""CoNLL-U (UD English EWT) against its README; malformed trees and columns."""

from __future__ import annotations

import gzip
import re
from functools import cache

import numpy as np
import pytest

from bicrit.datasets import TreebankDataset, load, read_conllu, spec
from bicrit.errors import DataFormatError

# ud_english_ewt/README.md: sentences, syntactic words, UPOS tags.
README = {"train": (12544, 204577, 17), "dev": (2001, 25147, 17), "test": (2077, 25094, 17)}


@cache
def _load(root, split):
    return load("ud_english_ewt", split, root=root)


@pytest.mark.parametrize("split", list(README))
def test_counts_equal_readme(data_dir, split):
    n_sent, n_words, n_upos = README[split]
    ds = _load(data_dir, split)
    assert isinstance(ds, TreebankDataset)
    assert (len(ds), ds.n_tokens) == (n_sent, n_words)
    assert spec("ud_english_ewt").counts[split] == n_sent
    assert len({u for s in ds.upos for u in s}) == n_upos
    for field in (ds.lemmas, ds.upos, ds.xpos, ds.deprels, ds.heads):
        assert [len(x) for x in field] == [len(w) for w in ds.words]
    assert all(h.dtype == np.int64 and (h == 0).sum() == 1 for h in ds.heads)
    assert all(h.min() >= 0 and h.max() <= len(h) for h in ds.heads)
    assert len(set(ds.sent_ids)) == n_sent


def test_first_dev_sentence(data_dir):
    ds = _load(data_dir, "dev")
    assert ds.sent_ids[0].endswith("ENG_20041117_172713-0001")
    assert ds.words[0] == ["From", "the", "AP", "comes", "this", "story", ":"]
    assert ds.heads[0].tolist() == [3, 3, 4, 0, 6, 4, 4]
    assert ds.deprels[0][3] == "root" and ds.upos[0][0] == "ADP" and ds.xpos[0][0] == "IN"
    assert ds.pos is ds.upos


SENT = """# sent_id = s1
# text = Don't go.
1-2	Don't	_	_	_	_	_	_	_	_
1	Do	do	AUX	VBP	_	3	aux	3:aux	_
2	n't	not	PART	RB	_	3	advmod	3:advmod	_
3	go	go	VERB	VB	_	0	root	0:root	_
3.1	went	go	VERB	VBD	_	_	_	3:conj	_
4	.	.	PUNCT	.	_	3	punct	3:punct	_

"""


def test_skips_ranges_and_empty_nodes_and_reads_gzip(tmp_path):
    p = tmp_path / "s.conllu.gz"
    p.write_bytes(gzip.compress((SENT + SENT.replace("s1", "s2")).encode()))
    ds = read_conllu(p)
    assert ds.sent_ids == ["s1", "s2"]
    assert ds.words[0] == ["Do", "n't", "go", "."]
    assert ds.lemmas[0] == ["do", "not", "go", "."]
    assert ds.heads[0].tolist() == [3, 3, 0, 3]


@pytest.mark.parametrize(
    ("old", "new", "line", "message"),
    [
        (
            "2\tn't\tnot\tPART\tRB\t_\t3\tadvmod\t3:advmod\t_",
            "2\tn't\tnot\tPART\tRB\t_\t3",
            5,
            "expected 10 tab-separated columns, found 7",
        ),  # truncated line
        (
            "\t_\t3\tadvmod\t3:advmod\t_",
            "\t_\t3\tadvmod\t3:advmod\t_\textra",
            5,
            "expected 10 tab-separated columns, found 11",
        ),
        ("\t_\t3\tpunct", "\t_\t9\tpunct", 8, "head 9 of word 4 is outside 0..4"),
        ("\t_\t3\tpunct", "\t_\t-1\tpunct", 8, "head -1 of word 4 is outside 0..4"),
        ("\t_\t3\tpunct", "\t_\tx\tpunct", 8, "HEAD 'x' of word 4 is not an integer"),
        ("4\t.\t.", "5\t.\t.", 8, "word id '5' out of sequence, expected 4"),
        ("\t_\t3\tpunct", "\t_\t0\tpunct", 8, r"the sentence has 2 roots \(head 0\)"),
        ("\t_\t0\troot", "\t_\t4\troot", 4, r"the sentence has 0 roots"),
    ],
)
def test_malformed(tmp_path, old, new, line, message):
    assert old in SENT
    p = tmp_path / "bad.conllu"
    p.write_text(SENT.replace(old, new, 1))
    with pytest.raises(DataFormatError, match=re.escape(f"{p}, line {line}: ") + message):
        read_conllu(p)


def test_cycle(tmp_path):
    p = tmp_path / "bad.conllu"
    p.write_text(SENT.replace("VBP\t_\t3", "VBP\t_\t2").replace("RB\t_\t3", "RB\t_\t1"))
    with pytest.raises(DataFormatError, match=re.escape(f"{p}, line 4: the heads form a cycle")):
        read_conllu(p)
