"""The dependency-treebank dataset type shared by the CoNLL-U and Malt-TAB readers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from bicrit.errors import DataFormatError

__all__ = ["TreebankDataset", "check_tree", "parse_heads"]


@dataclass(frozen=True)
class TreebankDataset:
    """Dependency-annotated sentences as parallel per-sentence lists.

    Word ``j`` of a sentence (0-based) has ``heads[s][j]`` — the 1-based index of its head word,
    0 for the root. A column the format lacks is ``None`` (Malt-TAB has no lemmas, no UPOS, and
    deprels only in its optional fourth column).
    """

    words: list[list[str]]
    heads: list[np.ndarray]
    """Per sentence, int64 head indices (1-based; 0 = root)."""
    deprels: list[list[str]] | None = None
    upos: list[list[str]] | None = None
    xpos: list[list[str]] | None = None
    lemmas: list[list[str]] | None = None
    sent_ids: list[str] = field(default_factory=list)
    """``# sent_id`` of each sentence (CoNLL-U), or ``file:number`` (Malt-TAB)."""
    paths: tuple[Path, ...] = ()

    def __len__(self) -> int:
        return len(self.words)

    def subset(self, indices: Sequence[int] | np.ndarray) -> TreebankDataset:
        """The sentences ``indices`` (in that order) as a dataset."""
        idx = [int(i) for i in indices]

        def pick(v: list[Any] | None) -> list[Any] | None:
            return None if v is None else [v[i] for i in idx]

        return replace(
            self,
            words=[self.words[i] for i in idx],
            heads=[self.heads[i] for i in idx],
            deprels=pick(self.deprels),
            upos=pick(self.upos),
            xpos=pick(self.xpos),
            lemmas=pick(self.lemmas),
            sent_ids=[self.sent_ids[i] for i in idx] if self.sent_ids else [],
        )

    def context(self, i: int) -> dict[str, Any]:
        """What ``bicrit predict`` writes beside sentence ``i``'s prediction: its words."""
        return {"words": list(self.words[i])}

    def __repr__(self) -> str:
        return f"TreebankDataset({len(self)} sentences, {self.n_tokens} words)"

    @property
    def n_tokens(self) -> int:
        """Number of (syntactic) words over all sentences."""
        return sum(len(w) for w in self.words)

    @property
    def pos(self) -> list[list[str]]:
        """The POS tags for tagging: UPOS when the format has them, else XPOS."""
        tags = self.upos if self.upos is not None else self.xpos
        if tags is None:
            raise AttributeError("this treebank has no POS column")
        return tags


_HEAD = re.compile(r"-?[0-9]{1,18}")


def parse_heads(
    values: Sequence[str], path: Path, word_lines: list[int], column: str
) -> np.ndarray:
    """The head column of a sentence as int64: plain decimal integers (``-?[0-9]+``, no signs,
    spaces, underscores or other digits that ``int()`` would take), else a DataFormatError
    naming the word's line."""
    for j, x in enumerate(values):
        if not _HEAD.fullmatch(x):
            raise DataFormatError(
                path, word_lines[j], f"{column} {x[:40]!r} of word {j + 1} is not an integer"
            )
    return np.array([int(x) for x in values], dtype=np.int64)


def check_tree(heads: np.ndarray, path: Path, word_lines: list[int], *, single_root: bool) -> None:
    """Raise unless ``heads`` (1-based, 0 = root) forms a tree rooted at 0.

    ``word_lines[j]`` is the file line of word ``j``; the message names the offending one.
    """
    n = len(heads)
    h = heads.tolist()
    if min(h, default=0) < 0 or max(h, default=0) > n:
        j = next(j for j, x in enumerate(h) if not 0 <= x <= n)
        raise DataFormatError(path, word_lines[j], f"head {h[j]} of word {j + 1} is outside 0..{n}")
    n_roots = h.count(0)
    if single_root and n_roots != 1:
        at = word_lines[h.index(0, h.index(0) + 1)] if n_roots > 1 else word_lines[0]
        raise DataFormatError(
            path, at, f"the sentence has {n_roots} roots (head 0), expected exactly one"
        )
    # Every word must reach 0 by following heads; state: 0 unknown, 1 on the walk, 2 reaches 0.
    state = [0] * (n + 1)
    state[0] = 2
    for start in range(1, n + 1):
        walk = []
        node = start
        while state[node] == 0:
            state[node] = 1
            walk.append(node)
            node = h[node - 1]
        if state[node] == 1:
            raise DataFormatError(
                path, word_lines[node - 1], f"the heads form a cycle through word {node}"
            )
        for v in walk:
            state[v] = 2
