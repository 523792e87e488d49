"""CoNLL-U (Universal Dependencies) reader for basic dependency trees and tags.

Ten tab-separated columns ``ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC``; ``#`` lines are
comments (``# sent_id`` is kept); a blank line ends a sentence. Multiword-token ranges (``3-4``)
and empty nodes (``8.1``) are skipped, so a sentence holds its syntactic words. ``*.gz`` files are
read transparently. Checked, with errors naming the file and line: exactly 10 columns, word ids
1, 2, … in order, integer heads within 0..n, exactly one root, no cycle.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from bicrit.datasets._io import PathLike, read_lines
from bicrit.datasets.treebank import TreebankDataset, check_tree, parse_heads
from bicrit.errors import DataFormatError

__all__ = ["read_conllu"]

N_COLUMNS = 10


def read_conllu(paths: PathLike | Iterable[PathLike]) -> TreebankDataset:
    """Read one or more CoNLL-U files (``.gz`` too) into a :class:`TreebankDataset`."""
    path_list = [Path(paths)] if isinstance(paths, str | os.PathLike) else [Path(p) for p in paths]
    words: list[list[str]] = []
    lemmas: list[list[str]] = []
    upos: list[list[str]] = []
    xpos: list[list[str]] = []
    deprels: list[list[str]] = []
    heads: list[np.ndarray] = []
    sent_ids: list[str] = []
    for p in path_list:
        _read_one(p, words, lemmas, upos, xpos, deprels, heads, sent_ids)
    return TreebankDataset(
        words=words,
        heads=heads,
        deprels=deprels,
        upos=upos,
        xpos=xpos,
        lemmas=lemmas,
        sent_ids=sent_ids,
        paths=tuple(path_list),
    )


def _read_one(
    p: Path,
    words: list[list[str]],
    lemmas: list[list[str]],
    upos: list[list[str]],
    xpos: list[list[str]],
    deprels: list[list[str]],
    heads: list[np.ndarray],
    sent_ids: list[str],
) -> None:
    rows: list[list[str]] = []
    row_lines: list[int] = []
    sent_id = ""

    def flush() -> None:
        nonlocal sent_id
        if not rows:
            sent_id = ""
            return
        cols = list(zip(*rows, strict=True))
        h = parse_heads(cols[6], p, row_lines, "HEAD")
        check_tree(h, p, row_lines, single_root=True)
        words.append(list(cols[1]))
        lemmas.append(list(cols[2]))
        upos.append(list(cols[3]))
        xpos.append(list(cols[4]))
        deprels.append(list(cols[7]))
        heads.append(h)
        sent_ids.append(sent_id or f"{p.name}:{len(words)}")
        rows.clear()
        row_lines.clear()
        sent_id = ""

    for i, line in enumerate(read_lines(p)):
        if not line or line.isspace():
            flush()
            continue
        if line[0] == "#":
            if line.startswith("# sent_id") and "=" in line:
                sent_id = line.split("=", 1)[1].strip()
            continue
        fields = line.split("\t")
        if len(fields) != N_COLUMNS:
            raise DataFormatError(
                p, i + 1, f"expected {N_COLUMNS} tab-separated columns, found {len(fields)}"
            )
        wid = fields[0]
        if "-" in wid or "." in wid:  # multiword token range or empty node
            continue
        if wid != str(len(rows) + 1):
            raise DataFormatError(
                p, i + 1, f"word id {wid!r} out of sequence, expected {len(rows) + 1}"
            )
        rows.append(fields)
        row_lines.append(i + 1)
    flush()
