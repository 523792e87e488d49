"""The ``dependency`` structure: arc-factored first-order dependency parsing with labeled arcs
(docs/architecture.md, Structures; thesis §"Dependency Parsing on Deep Network"). The
algorithms run in Rust
(``rust/bicrit-structures/src/dependency/``).

Inputs
    A sentence is any object with the fields ``words``, ``upos`` and optionally ``lemmas``,
    ``xpos`` (sequences of str; a missing field becomes ``"_"`` for every token), read by
    attribute or, for mappings, by key — the sentences of bicrit's CoNLL-U / Malt-TAB loaders,
    dicts, namedtuples. Gold trees come from ``heads`` (ints, 0 = root) and ``deprels`` (str).
    ``X`` is a sequence of sentences (or a :class:`SentenceBatch` from :meth:`Dependency.prepare`).

Labels
    Labeled (default): a pair ``(heads, rels)`` of int arrays of length n — ``heads[j]`` is the head
    of token j + 1 (0 = root), ``rels[j]`` the index of its relation in :attr:`relations`. Relation
    *names* (str) are accepted wherever a label is read. Unlabeled (``labeled=False``): the int
    array ``heads`` alone (a ``(heads, rels)`` pair is accepted and its ``rels`` ignored). Labels
    returned by the oracle and ``predict_one`` use int arrays (int64).

Trees
    Both decoders return trees with exactly **one child of the root** (UD's convention); gold
    trees must have one too. ``projective=True`` decodes projective trees only (Eisner), but a
    non-projective gold tree is still accepted (training a projective parser on such data is
    common; those gold trees are simply outside the oracle's search space).

Loss and terms
    ``loss``: per token, 1 for a wrong head, ``label_weight`` for the right head with a wrong
    relation, 0 otherwise (with ``label_weight=1`` the number of tokens labeled attachment score
    counts wrong; unlabeled: head Hamming). ``size``: n, a constant — every tree has n arcs.
    ``hamming``: the Hamming distance between the sets of labeled arcs (h, d, r), i.e. 2 per token
    whose head or relation differs (the indicator-set Hamming of the Micro-F1 surrogate).

Features
    ``n_features`` hashed buckets (deterministic FNV-1a/Murmur hashing of the token strings; the
    same string always gets the same buckets, in any process). Unlabeled arc templates after
    McDonald, Crammer & Pereira (2005): word (lower-cased) / lemma / UPOS / XPOS of head and
    dependent and their conjunctions, the UPOS of their ±1 neighbours, and the UPOS of each token
    between head and dependent for spans ≤ 6; each conjoined with the direction and with direction
    × binned distance (1, 2, 3, 4, 5, 6–10, 11+). Labeled templates conjoin the relation with:
    direction, direction × distance bin, direction × head UPOS, head form, head lemma, direction ×
    dependent UPOS, direction × dependent XPOS, dependent form, dependent lemma, direction × head
    UPOS × dependent UPOS. The conjunctions of one template instance (the directions and distance
    bins, or the relations) occupy consecutive buckets from its hashed bucket, so scoring an arc
    touches few cache lines. The full list is in ``rust/…/dependency/features.rs``.

Oracles
    The objective decomposes per token, so each arc's relation is chosen independently given its
    head (exact for every coefficient sign and for the lexicographic λ = 0 / ∞ queries), and the
    tree search runs on per-arc label candidates. ``projective=True``: Eisner's algorithm with
    Huang & Chiang k-best lists; ``projective=False``: Chu–Liu–Edmonds (single root by a
    lexicographic root penalty) with Lawler's k-best partitioning. ``predict_one`` uses the same
    decoder. Ban lists are exact for both (the k best non-banned trees are among the k + |ban|
    best). Answers of equal value come in an unspecified but deterministic order. No cone
    (constrained λ-oracle). Costs: Eisner O(n³) (k-best O(n³ + n²k log k)), Chu–Liu–Edmonds
    O(n²) per contraction level; Lawler's k-best solves about n subproblems per extra tree.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

import numpy as np

from bicrit import _native
from bicrit.errors import InvalidInputError, InvalidParameterError
from bicrit.structures.native import NativeStructure

__all__ = ["Dependency", "SentenceBatch"]

Label = Any  # tuple[np.ndarray, np.ndarray] (labeled) or np.ndarray (unlabeled)


class SentenceBatch(NamedTuple):
    """Sentences flattened for the native code: lengths and four flat lists of token strings."""

    lengths: np.ndarray
    words: list[str]
    lemmas: list[str]
    upos: list[str]
    xpos: list[str]


def _field(sentence: Any, name: str) -> Any:
    if isinstance(sentence, Mapping):
        return sentence.get(name)
    return getattr(sentence, name, None)


def _looks_like_sentence(obj: Any) -> bool:
    return _field(obj, "words") is not None and not isinstance(obj, list | tuple)


def _flatten(sentences: Any) -> SentenceBatch:
    if isinstance(sentences, SentenceBatch):
        return sentences
    if _looks_like_sentence(sentences):
        raise InvalidInputError("X must be a sequence of sentences, got a single sentence")
    lengths: list[int] = []
    cols: dict[str, list[str]] = {"words": [], "lemmas": [], "upos": [], "xpos": []}
    for i, s in enumerate(sentences):
        words = _field(s, "words")
        if words is None:
            raise InvalidInputError(
                f"sentence {i} has no 'words' field (got {type(s).__name__}); a sentence needs "
                "words and upos, optionally lemmas and xpos"
            )
        words = list(words)
        n = len(words)
        if n == 0:
            raise InvalidInputError(f"sentence {i} is empty")
        for name in ("upos", "lemmas", "xpos"):
            vals = _field(s, name)
            if vals is None:
                if name == "upos":
                    raise InvalidInputError(f"sentence {i} has no 'upos' field")
                cols[name].extend(["_"] * n)
                continue
            vals = list(vals)
            if len(vals) != n:
                raise InvalidInputError(
                    f"sentence {i}: {name} has {len(vals)} entries but words has {n}"
                )
            cols[name].extend(vals)
        cols["words"].extend(words)
        lengths.append(n)
    if not lengths:
        raise InvalidInputError("X holds no sentences")
    return SentenceBatch(
        np.asarray(lengths, dtype=np.int64),
        cols["words"],
        cols["lemmas"],
        cols["upos"],
        cols["xpos"],
    )


def _int_array(values: Any, name: str) -> np.ndarray:
    a = np.asarray(values)
    if a.ndim != 1:
        raise InvalidInputError(f"{name} must be 1-D, got shape {a.shape}")
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise InvalidInputError(f"{name} must hold integers, got dtype {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.int64)


def sentence_trees(sentences: Sequence[Any], labeled: bool) -> list[Any]:
    """The trees sentences carry: ``(heads, relations)`` per sentence (``heads`` alone when
    ``labeled`` is False), from their ``heads`` and ``deprels`` fields."""
    out: list[Any] = []
    for i, s in enumerate(sentences):
        heads = _field(s, "heads")
        if heads is None:
            raise InvalidInputError(f"sentence {i} has no 'heads' field; pass Y explicitly")
        if labeled:
            rels = _field(s, "deprels")
            if rels is None:
                raise InvalidInputError(f"sentence {i} has no 'deprels' field; pass Y explicitly")
            out.append((np.asarray(heads), list(rels)))
        else:
            out.append(np.asarray(heads))
    return out


class Dependency(NativeStructure):
    """Arc-factored dependency trees with labeled arcs (see the module docstring).

    Parameters
    ----------
    n_features:
        Number of hashed feature buckets (the length of w), default 2**20.
    projective:
        ``True``: Eisner (projective trees); ``False``: Chu–Liu–Edmonds (any tree).
    labeled:
        Whether arcs carry relations.
    relations:
        Relation names (labeled only); ``None`` learns them in :meth:`initialize` (sorted).
    label_weight:
        Loss of a token with the right head and a wrong relation (≥ 0).
    """

    name = "dependency"

    report_names = (("uas", "UAS"), ("las", "LAS"), ("uem", "exact match (unlabelled)"))

    def __init__(
        self,
        n_features: int = 2**20,
        projective: bool = True,
        labeled: bool = True,
        relations: Sequence[str] | None = None,
        label_weight: float = 1.0,
    ) -> None:
        self.n_features = n_features
        self.projective = projective
        self.labeled = labeled
        self.relations = None if relations is None else list(relations)
        self.label_weight = label_weight
        self._rel_index: dict[str, int] = {}
        if not labeled or self.relations is not None:
            self._build()

    def _build(self) -> None:
        if isinstance(self.n_features, bool) or not isinstance(self.n_features, int | np.integer):
            raise InvalidParameterError(f"n_features must be an int, got {self.n_features!r}")
        if self.n_features < 1:
            raise InvalidParameterError(f"n_features must be at least 1, got {self.n_features}")
        rels = self.relations or []
        if self.labeled:
            if not rels:
                raise InvalidParameterError("a labeled dependency structure needs relations")
            if not all(isinstance(r, str) for r in rels):
                raise InvalidParameterError("relations must be strings")
            if len(set(rels)) != len(rels):
                raise InvalidParameterError("relations must be distinct")
        self._rel_index = {r: i for i, r in enumerate(rels)}
        self._native = _native.dependency_structure(
            int(self.n_features),
            bool(self.projective),
            bool(self.labeled),
            len(rels) if self.labeled else 0,
            float(self.label_weight),
        )

    # -- data ------------------------------------------------------------------------------

    def prepare(self, X: Any) -> SentenceBatch:
        """Flattens sentences once (reuse the result in repeated batch calls)."""
        return _flatten(X)

    def initialize(self, X: Any, Y: Any = None) -> Dependency:
        """Validates the sentences and their gold trees and fixes the relation set.

        ``Y`` holds one label per sentence; ``None`` takes ``heads`` and ``deprels`` from the
        sentences themselves. When ``relations`` was not given, they are learned from the gold
        relations (the sorted distinct names, or ``"0"…"R-1"`` when the relations are ints) and
        stay fixed afterwards: a later ``initialize`` with an unseen relation is an error.
        """
        if isinstance(X, SentenceBatch):
            if Y is None:
                raise InvalidInputError("a SentenceBatch carries no gold trees: pass Y")
            batch = X
        else:
            sentences = list(X)
            batch = _flatten(sentences)
        raw = sentence_trees(sentences, self.labeled) if Y is None else list(Y)
        if len(raw) != len(batch.lengths):
            raise InvalidInputError(
                f"X has {len(batch.lengths)} sentences but Y has {len(raw)} labels"
            )
        if self.labeled and self.relations is None:
            names: set[Any] = set()
            for i, y in enumerate(raw):
                if not (isinstance(y, tuple | list) and len(y) == 2):
                    raise InvalidInputError(f"label {i}: a labeled label is a pair (heads, rels)")
                names.update(np.asarray(y[1]).tolist())
            if all(isinstance(r, str) for r in names):
                self.relations = sorted(names)
            elif all(isinstance(r, int) for r in names):
                self.relations = [str(r) for r in range(max(names, default=0) + 1)]
            else:
                raise InvalidInputError("relations must be all str or all int")
        self._build()
        native = self._require()
        start = 0
        for i, (n, y) in enumerate(zip(batch.lengths.tolist(), raw, strict=True)):
            x = SentenceBatch(
                batch.lengths[i : i + 1],
                batch.words[start : start + n],
                batch.lemmas[start : start + n],
                batch.upos[start : start + n],
                batch.xpos[start : start + n],
            )
            start += n
            try:
                native.joint_feature_sparse(x, self._label(y))
            except InvalidInputError as exc:
                raise InvalidInputError(f"sentence {i}: {exc}") from None
        return self

    def gold_labels(self, X: Any) -> list[Label]:
        """The gold labels of sentences (from their ``heads`` and ``deprels``), normalised."""
        return [self._label(y) for y in sentence_trees(list(X), self.labeled)]

    def relation_names(self, rels: Any) -> list[str]:
        """Relation names of relation ids."""
        names = self.relations or []
        return [names[int(r)] for r in np.asarray(rels).tolist()]

    # -- normalisation hooks ---------------------------------------------------------------------

    def _rel_ids(self, rels: Any) -> np.ndarray:
        vals = list(rels) if not isinstance(rels, np.ndarray) else rels.tolist()
        if vals and all(isinstance(r, str) for r in vals):
            try:
                return np.asarray([self._rel_index[r] for r in vals], dtype=np.int64)
            except KeyError as exc:
                known = ", ".join(self.relations or [])
                raise InvalidInputError(
                    f"unknown relation {exc.args[0]!r}; known relations: {known}"
                ) from None
        return _int_array(rels, "rels")

    def _label(self, y: Any) -> Label:
        pair = isinstance(y, tuple | list) and len(y) == 2 and not np.isscalar(y[0])
        if self.labeled:
            if not pair:
                raise InvalidInputError(
                    f"a labeled dependency label is a pair (heads, rels), got {type(y).__name__}"
                )
            return (_int_array(y[0], "heads"), self._rel_ids(y[1]))
        return _int_array(y[0] if pair else y, "heads")

    def _x_one(self, x: Any) -> Any:
        if isinstance(x, SentenceBatch):
            return x
        return _flatten([x])

    def _x_many(self, X: Any) -> Any:
        return _flatten(X)

    def _y_one(self, y: Any) -> Any:
        self._require()
        return self._label(y)

    def _y_many(self, Y: Any) -> Any:
        self._require()
        return [self._label(y) for y in Y]

    # -- task behaviour (bicrit.structures.base) --------------------------------------------------

    def decode(self, P: Sequence[Any]) -> list[Any]:
        """``(heads, relation names)`` per sentence (``heads`` only when unlabeled)."""
        if not self.labeled:
            return [np.asarray(p) for p in P]
        return [(np.asarray(h), self.relation_names(r)) for h, r in P]

    def _heads(self, Y: Any) -> list[np.ndarray]:
        return [np.asarray(y[0] if self.labeled else y) for y in Y]

    def headline(self, Y: Any, P: Any) -> float:
        """UAS over all tokens, punctuation included."""
        from bicrit import metrics

        return float(metrics.uas(self._heads(Y), self._heads(P)))

    def report(self, Y: Any, P: Any) -> dict[str, Any]:
        """:func:`bicrit.metrics.dependency_report` (UAS, LAS, sentence averages, exact match)."""
        from bicrit import metrics

        if self.labeled:
            return metrics.dependency_report(
                self._heads(Y),
                self._heads(P),
                [[str(r) for r in y[1]] for y in Y],
                [list(p[1]) for p in P],
            )
        return metrics.dependency_report(self._heads(Y), self._heads(P))

    def record(self, p: Any) -> dict[str, Any]:
        if self.labeled:
            heads, rels = p
            return {"heads": np.asarray(heads).tolist(), "deprels": [str(r) for r in rels]}
        return {"heads": np.asarray(p).tolist()}

    def get_config(self) -> dict[str, Any]:
        return {
            "n_features": int(self.n_features),
            "projective": bool(self.projective),
            "labeled": bool(self.labeled),
            "relations": self.relations,
            "label_weight": float(self.label_weight),
        }
