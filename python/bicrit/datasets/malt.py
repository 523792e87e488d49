"""Malt-TAB reader: ``word<TAB>tag<TAB>head[<TAB>deprel]`` per line, a blank line between sentences.

Heads are 1-based, 0 the root. Every line of a file has the same number of columns (3, or 4 with
dependency relations); a file's end also ends a sentence. The POS tags land in
``TreebankDataset.xpos`` (they are treebank-specific tags, e.g. Penn Treebank), ``deprels`` is
``None`` for 3-column files. Checked, with errors naming the file and line: the column count,
integer heads within 0..n, no cycle (several root words are allowed, unlike CoNLL-U).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import numpy as np

from bicrit.datasets._io import PathLike, read_lines
from bicrit.datasets.treebank import TreebankDataset, check_tree, parse_heads
from bicrit.errors import DataFormatError

__all__ = ["read_malt_tab"]


def read_malt_tab(paths: PathLike | Iterable[PathLike]) -> TreebankDataset:
    """Read one or more Malt-TAB files, in the given order, into a :class:`TreebankDataset`."""
    path_list = [Path(paths)] if isinstance(paths, str | os.PathLike) else [Path(p) for p in paths]
    words: list[list[str]] = []
    tags: list[list[str]] = []
    heads: list[np.ndarray] = []
    rels: list[list[str]] = []
    sent_ids: list[str] = []
    n_cols_seen: set[int] = set()
    for p in path_list:
        n_cols = _read_one(p, words, tags, heads, rels, sent_ids)
        if n_cols:
            n_cols_seen.add(n_cols)
    if len(n_cols_seen) > 1:
        raise DataFormatError(
            path_list[-1], None, "some files have dependency relations (4 columns), others not"
        )
    has_rel = n_cols_seen == {4}
    return TreebankDataset(
        words=words,
        heads=heads,
        deprels=rels if has_rel else None,
        xpos=tags,
        sent_ids=sent_ids,
        paths=tuple(path_list),
    )


def _read_one(
    p: Path,
    words: list[list[str]],
    tags: list[list[str]],
    heads: list[np.ndarray],
    rels: list[list[str]],
    sent_ids: list[str],
) -> int:
    """Append the sentences of ``p``; return its column count (0 for an empty file)."""
    n_cols = 0
    rows: list[list[str]] = []
    row_lines: list[int] = []
    count = 0

    def flush() -> None:
        nonlocal count
        if not rows:
            return
        cols = list(zip(*rows, strict=True))
        h = parse_heads(cols[2], p, row_lines, "head")
        check_tree(h, p, row_lines, single_root=False)
        count += 1
        words.append(list(cols[0]))
        tags.append(list(cols[1]))
        heads.append(h)
        if n_cols == 4:
            rels.append(list(cols[3]))
        sent_ids.append(f"{p.name}:{count}")
        rows.clear()
        row_lines.clear()

    for i, line in enumerate(read_lines(p)):
        if not line or line.isspace():
            flush()
            continue
        fields = line.split("\t")
        if not n_cols:
            n_cols = len(fields)
            if n_cols not in (3, 4):
                raise DataFormatError(
                    p, i + 1, f"expected 3 or 4 tab-separated columns, found {n_cols}"
                )
        if len(fields) != n_cols:
            raise DataFormatError(
                p,
                i + 1,
                f"expected {n_cols} tab-separated columns (as on the first line), "
                f"found {len(fields)}",
            )
        if "" in fields:
            raise DataFormatError(p, i + 1, f"empty column {fields.index('') + 1}")
        rows.append(fields)
        row_lines.append(i + 1)
    flush()
    return n_cols
