"""CoNLL column files (NER, chunking): one token per line, a blank line between sentences.

The first column is the token, the last the tag; the columns between (POS tags) are kept by
name. Columns are split on tabs when the file's first token line has a tab, else on single
spaces (so characters such as U+00A0 inside a token never split it). A line of only whitespace
ends a sentence (WNUT-17 writes ``"\\t"`` there). ``-DOCSTART-`` lines are skipped; the index of
the sentence that follows each is kept in ``SequenceDataset.doc_starts``.

Tags are ``O``, ``B-type`` or ``I-type``, in the IOB1 or IOB2 scheme (IOB2: every chunk starts
with ``B-``; IOB1: ``B-`` only where a chunk follows a chunk of the same type). The loader keeps
the tags as written; :func:`to_iob2` / :func:`to_iob1` convert, :func:`detect_tag_scheme` guesses.
A chunk start written ``I-`` in an IOB2 file (the three in CoNLL-2002 Spanish) is read the
conlleval way — it starts a chunk — and :func:`to_iob2` rewrites it as ``B-``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from bicrit.datasets._io import PathLike, read_lines
from bicrit.errors import DataFormatError, InvalidInputError

__all__ = [
    "SequenceDataset",
    "detect_tag_scheme",
    "read_conll",
    "to_iob1",
    "to_iob2",
]

TagScheme = Literal["IOB1", "IOB2"]
DOCSTART = "-DOCSTART-"


@dataclass(frozen=True)
class SequenceDataset:
    """Tagged sentences: parallel lists of tokens, tags and extra columns."""

    tokens: list[list[str]]
    tags: list[list[str]]
    columns: dict[str, list[list[str]]] = field(default_factory=dict)
    """Extra columns by name (e.g. ``"pos"``), each a list of per-sentence lists."""
    tag_scheme: TagScheme = "IOB2"
    doc_starts: list[int] = field(default_factory=list)
    """Index of the first sentence of each document (files with ``-DOCSTART-`` lines)."""
    path: Path | None = None

    def __len__(self) -> int:
        return len(self.tokens)

    def subset(self, indices: Sequence[int]) -> SequenceDataset:
        """The sentences ``indices`` (in that order) as a dataset; a document start is kept
        where its sentence is."""
        idx = [int(i) for i in indices]
        starts = set(self.doc_starts)
        return replace(
            self,
            tokens=[self.tokens[i] for i in idx],
            tags=[self.tags[i] for i in idx],
            columns={k: [v[i] for i in idx] for k, v in self.columns.items()},
            doc_starts=[k for k, i in enumerate(idx) if i in starts],
        )

    def context(self, i: int) -> dict[str, Any]:
        """What ``bicrit predict`` writes beside sentence ``i``'s prediction: its tokens."""
        return {"tokens": list(self.tokens[i])}

    def __repr__(self) -> str:
        return (
            f"SequenceDataset({len(self)} sentences, {self.n_tokens} tokens, "
            f"{len(self.tag_names)} tags, {self.tag_scheme})"
        )

    @property
    def n_tokens(self) -> int:
        """Number of tokens over all sentences."""
        return sum(len(s) for s in self.tokens)

    @property
    def tag_names(self) -> list[str]:
        """The tags that occur: ``O`` first, then by entity type, ``B-`` before ``I-``."""
        seen = {t for sent in self.tags for t in sent}
        return sorted(seen, key=lambda t: (t != "O", t[2:], t[:2]))

    @property
    def entity_types(self) -> list[str]:
        """The chunk types that occur (``PER``, ``NP``, …), sorted."""
        return sorted({t[2:] for sent in self.tags for t in sent if t != "O"})

    def to_iob2(self) -> SequenceDataset:
        """A copy with the tags in IOB2 (also repairs chunks that start with ``I-``)."""
        return replace(self, tags=[to_iob2(s) for s in self.tags], tag_scheme="IOB2")

    def to_iob1(self) -> SequenceDataset:
        """A copy with the tags in IOB1."""
        return replace(self, tags=[to_iob1(s) for s in self.tags], tag_scheme="IOB1")


def _type(tag: str) -> str | None:
    return None if tag == "O" else tag[2:]


def to_iob2(tags: Sequence[str]) -> list[str]:
    """One sentence's tags in IOB2: every chunk starts with ``B-`` (input IOB1 or IOB2)."""
    out = []
    prev: str | None = None
    for t in tags:
        typ = _type(t)
        if typ is not None and t[0] == "I" and prev != typ:
            t = "B-" + typ
        out.append(t)
        prev = typ
    return out


def to_iob1(tags: Sequence[str]) -> list[str]:
    """One sentence's tags in IOB1: ``B-`` only where a chunk follows one of the same type."""
    out = []
    prev: str | None = None
    for t in tags:
        typ = _type(t)
        if typ is not None:
            starts = t[0] == "B" or prev != typ
            t = ("B-" if starts and prev == typ else "I-") + typ
        out.append(t)
        prev = typ
    return out


def detect_tag_scheme(tag_sequences: Sequence[Sequence[str]]) -> TagScheme:
    """``"IOB1"`` when chunks mostly start with ``I-``, else ``"IOB2"`` (also with no chunks).

    A chunk start is a tag whose type differs from the previous token's; IOB2 writes it ``B-``,
    IOB1 ``I-``. Majority vote, so a few ill-formed tags do not flip the answer.
    """
    b_starts = i_starts = 0
    for tags in tag_sequences:
        prev: str | None = None
        for t in tags:
            typ = _type(t)
            if typ is not None and typ != prev:
                if t[0] == "B":
                    b_starts += 1
                else:
                    i_starts += 1
            prev = typ
    return "IOB1" if i_starts > b_starts else "IOB2"


def read_conll(
    path: PathLike,
    *,
    column_names: Sequence[str] | None = None,
    tag_scheme: TagScheme | Literal["auto"] = "auto",
    encoding: str = "utf-8",
) -> SequenceDataset:
    """Read a CoNLL column file (see the module docstring).

    Parameters
    ----------
    path
        The file (``.gz`` too).
    column_names
        Names of all columns, token first and tag last (e.g. ``("word", "pos", "ner")``). When
        given, every line must have exactly that many columns; otherwise the first token line
        sets the count and the middle columns are called ``col1``, ``col2``, ….
    tag_scheme
        ``"IOB1"`` or ``"IOB2"`` to declare, ``"auto"`` to detect (:func:`detect_tag_scheme`).

    Raises
    ------
    DataFormatError
        Naming the file and line: a wrong number of columns (a truncated line), an empty column, a
        tag that is not ``O``, ``B-type`` or ``I-type``.
    """
    p = Path(path)
    if tag_scheme not in ("auto", "IOB1", "IOB2"):
        raise InvalidInputError(f"tag_scheme must be 'auto', 'IOB1' or 'IOB2', got {tag_scheme!r}")
    lines = read_lines(p, encoding)
    n_cols = len(column_names) if column_names is not None else 0
    if column_names is not None and n_cols < 2:
        raise InvalidInputError("column_names needs at least the token and the tag column")
    sep = ""
    tokens: list[list[str]] = []
    tags: list[list[str]] = []
    extra: list[list[list[str]]] = []
    doc_starts: list[int] = []
    cur: list[list[str]] = []
    tag_lines: dict[str, int] = {}

    def flush() -> None:
        if cur:
            cols = list(zip(*cur, strict=True))
            tokens.append(list(cols[0]))
            tags.append(list(cols[-1]))
            for k in range(1, len(cols) - 1):
                extra[k - 1].append(list(cols[k]))
            cur.clear()

    for i, line in enumerate(lines):
        if not line or line.isspace():
            flush()
            continue
        if not sep:
            sep = "\t" if "\t" in line else " "
            if not n_cols:
                n_cols = len(line.split(sep))
                if n_cols < 2:
                    raise DataFormatError(p, i + 1, "a token line needs a token and a tag column")
            extra = [[] for _ in range(n_cols - 2)]
        fields = line.split(sep)
        if fields[0] == DOCSTART:
            flush()
            doc_starts.append(len(tokens))
            continue
        if len(fields) != n_cols:
            sep_name = "tab" if sep == "\t" else "space"
            raise DataFormatError(
                p, i + 1, f"expected {n_cols} {sep_name}-separated columns, found {len(fields)}"
            )
        if "" in fields:
            raise DataFormatError(p, i + 1, f"empty column {fields.index('') + 1}")
        tag = fields[-1]
        if tag not in tag_lines:
            tag_lines[tag] = i + 1
        cur.append(fields)
    flush()
    for tag_name, first_line in tag_lines.items():
        if tag_name != "O" and (len(tag_name) < 3 or tag_name[0] not in "BI" or tag_name[1] != "-"):
            raise DataFormatError(p, first_line, f"tag {tag_name!r} is not O, B-type or I-type")
    if column_names is not None:
        names = list(column_names[1:-1])
    else:
        names = [f"col{k}" for k in range(1, max(n_cols - 1, 1))]
    scheme: TagScheme = detect_tag_scheme(tags) if tag_scheme == "auto" else tag_scheme
    # Dataset-level doc_starts pointing past the last sentence (a trailing -DOCSTART-) are dropped.
    doc_starts = [d for d in doc_starts if d < len(tokens)]
    return SequenceDataset(
        tokens=tokens,
        tags=tags,
        columns=dict(zip(names, extra, strict=True)),
        tag_scheme=scheme,
        doc_starts=sorted(set(doc_starts)),
        path=p,
    )
