"""Dependency-parsing metrics: unlabelled and labelled attachment scores.

A corpus is a list of sentences. For a sentence of ``n`` tokens, ``heads`` is an integer array of
length ``n`` whose entry ``t`` is the head of token ``t + 1`` in CoNLL numbering: ``0`` for the
root, ``1…n`` for the tokens. ``labels`` (dependency relations) are lists of strings of the same
lengths. Predictions need not be trees: the scores compare token by token.

Scores are corpus-level (pooled over all scored tokens, as in the CoNLL-X ``eval.pl`` and the
thesis's dependency-parsing table) unless ``per_sentence=True``, which returns one score per
sentence. Punctuation is scored unless the gold part-of-speech ``tags`` are given, in which case
tokens whose gold tag lies in ``punct_tags`` are left out — the usual protocol for the Penn
Treebank (the two quote tags and ``,`` ``.`` ``:``) and for Universal Dependencies (UPOS ``PUNCT``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bicrit.errors import InvalidInputError
from bicrit.metrics._common import check_same_count

__all__ = ["PUNCT_TAGS", "dependency_report", "las", "uas"]

#: Gold POS tags treated as punctuation: the Penn Treebank's two quote tags and ``,`` ``.`` ``:``
#: (the tags excluded by the standard PTB evaluation) and Universal Dependencies' UPOS ``PUNCT``.
PUNCT_TAGS: frozenset[str] = frozenset({"''", "``", ",", ".", ":", "PUNCT"})


@dataclass(frozen=True)
class _Trees:
    lengths: np.ndarray  # tokens per sentence
    sentence_of: np.ndarray  # (N,) sentence of each token
    head_ok: np.ndarray  # (N,) predicted head is the gold head
    label_ok: np.ndarray | None  # (N,) predicted label is the gold label
    scored: np.ndarray  # (N,) token counts in the scores


def _lengths(sentences: Any, name: str) -> np.ndarray:
    if isinstance(sentences, str | bytes) or not isinstance(sentences, Sequence | np.ndarray):
        raise InvalidInputError(
            f"{name} must be a list of sentences (one array per sentence), "
            f"got {type(sentences).__name__}"
        )
    lengths = np.empty(len(sentences), dtype=np.int64)
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, str | bytes) or not hasattr(sentence, "__len__"):
            raise InvalidInputError(
                f"{name}[{i}] must be a sequence, got {type(sentence).__name__} "
                f"({name} must be a list of sentences)"
            )
        lengths[i] = len(sentence)
    return lengths


def _check_lengths(lengths: np.ndarray, other: Any, name: str, ref: str) -> None:
    got = _lengths(other, name)
    if len(got) != len(lengths):
        raise InvalidInputError(
            f"{name} must hold one entry per sentence of {ref}: {ref} has {len(lengths)} "
            f"sentences, {name} has {len(got)}"
        )
    bad = np.flatnonzero(got != lengths)
    if bad.size:
        s = int(bad[0])
        raise InvalidInputError(f"{name}[{s}] has {got[s]} tokens but {ref}[{s}] has {lengths[s]}")


def _heads(sentences: Any, lengths: np.ndarray, name: str) -> np.ndarray:
    """Concatenated heads after checking they are integers in [0, n] for their sentence."""
    arrays = []
    for i, sentence in enumerate(sentences):
        arr = np.asarray(sentence)
        if arr.ndim != 1:
            raise InvalidInputError(f"{name}[{i}] must be 1-D, got shape {arr.shape}")
        if arr.size and arr.dtype.kind not in "iu":
            if arr.dtype.kind == "f" and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
                arr = arr.astype(np.int64)
            else:
                raise InvalidInputError(
                    f"{name}[{i}] must hold integer heads (0 = root), got dtype {arr.dtype}"
                )
        arr = arr.astype(np.int64, copy=False)
        bad = np.flatnonzero((arr < 0) | (arr > lengths[i]))
        if bad.size:
            t = int(bad[0])
            raise InvalidInputError(
                f"{name}[{i}][{t}] = {arr[t]} is out of range: heads of a {lengths[i]}-token "
                f"sentence lie in 0..{lengths[i]} (0 = root)"
            )
        arrays.append(arr)
    return np.concatenate(arrays)


def _strings(sentences: Any) -> np.ndarray:
    flat: list[Any] = []
    for sentence in sentences:
        flat.extend(sentence)
    return np.array(flat, dtype=object)


def _trees(
    heads: Any,
    heads_pred: Any,
    labels: Any = None,
    labels_pred: Any = None,
    tags: Any = None,
    punct_tags: Collection[str] = PUNCT_TAGS,
    need_labels: bool = False,
) -> _Trees:
    lengths = _lengths(heads, "heads")
    check_same_count(
        len(lengths), len(_lengths(heads_pred, "heads_pred")), "heads", "heads_pred", "sentences"
    )
    _check_lengths(lengths, heads_pred, "heads_pred", "heads")
    if np.any(lengths == 0):
        raise InvalidInputError(
            f"heads[{int(np.flatnonzero(lengths == 0)[0])}] is an empty sentence"
        )
    head_ok = _heads(heads, lengths, "heads") == _heads(heads_pred, lengths, "heads_pred")
    if (labels is None) != (labels_pred is None):
        raise InvalidInputError("give both labels and labels_pred, or neither")
    if need_labels and labels is None:
        raise InvalidInputError("las needs labels and labels_pred")
    label_ok = None
    if labels is not None:
        _check_lengths(lengths, labels, "labels", "heads")
        _check_lengths(lengths, labels_pred, "labels_pred", "heads")
        label_ok = _strings(labels) == _strings(labels_pred)
        label_ok = label_ok.astype(bool)
    if tags is None:
        scored = np.ones(head_ok.shape[0], dtype=bool)
    else:
        _check_lengths(lengths, tags, "tags", "heads")
        punct = frozenset(punct_tags)
        scored = np.array([tag not in punct for tag in _strings(tags)], dtype=bool)
    sentence_of = np.repeat(np.arange(len(lengths)), lengths)
    return _Trees(lengths, sentence_of, head_ok, label_ok, scored)


def _score(t: _Trees, ok: np.ndarray, per_sentence: bool) -> float | np.ndarray:
    if per_sentence:
        n = len(t.lengths)
        hits = np.bincount(t.sentence_of, weights=ok & t.scored, minlength=n)
        counts = np.bincount(t.sentence_of, weights=t.scored, minlength=n)
        out = np.full(n, np.nan)
        np.divide(hits, counts, out=out, where=counts > 0)
        return out
    total = int(t.scored.sum())
    if total == 0:
        raise InvalidInputError("no token left to score: every token is punctuation")
    return float((ok & t.scored).sum() / total)


def uas(
    heads: Sequence[Sequence[int] | np.ndarray],
    heads_pred: Sequence[Sequence[int] | np.ndarray],
    *,
    tags: Sequence[Sequence[str]] | None = None,
    punct_tags: Collection[str] = PUNCT_TAGS,
    per_sentence: bool = False,
) -> float | np.ndarray:
    """Unlabelled attachment score: the fraction of scored tokens with the correct head.

    .. math:: \\mathrm{UAS} = \\frac{\\sum_{t \\in T} \\mathbf{1}[\\hat h_t = h_t]}{|T|}

    where ``T`` is the set of scored tokens of the corpus (all tokens, or the non-punctuation
    ones when ``tags`` are given).

    Parameters
    ----------
    heads, heads_pred : list of array-like of int
        Gold and predicted head of every token, one array per sentence (0 = root, tokens 1…n).
    tags : list of list of str, optional
        Gold POS tags; when given, tokens whose tag is in ``punct_tags`` are not scored.
    punct_tags : collection of str, default :data:`PUNCT_TAGS`
        The tags treated as punctuation.
    per_sentence : bool, default False
        Return an array with the UAS of each sentence (NaN for a sentence with no scored token)
        instead of the corpus-level score.

    Returns
    -------
    float or numpy.ndarray
        Corpus-level UAS, or the per-sentence scores.
    """
    t = _trees(heads, heads_pred, tags=tags, punct_tags=punct_tags)
    return _score(t, t.head_ok, per_sentence)


def las(
    heads: Sequence[Sequence[int] | np.ndarray],
    heads_pred: Sequence[Sequence[int] | np.ndarray],
    labels: Sequence[Sequence[str]],
    labels_pred: Sequence[Sequence[str]],
    *,
    tags: Sequence[Sequence[str]] | None = None,
    punct_tags: Collection[str] = PUNCT_TAGS,
    per_sentence: bool = False,
) -> float | np.ndarray:
    """Labelled attachment score: the fraction of scored tokens with correct head and label.

    .. math:: \\mathrm{LAS} = \\frac{\\sum_{t \\in T}
              \\mathbf{1}[\\hat h_t = h_t \\wedge \\hat r_t = r_t]}{|T|}

    Parameters
    ----------
    heads, heads_pred : list of array-like of int
        Gold and predicted heads (0 = root, tokens 1…n), one array per sentence.
    labels, labels_pred : list of list of str
        Gold and predicted dependency relations, one list per sentence.
    tags : list of list of str, optional
        Gold POS tags; when given, tokens whose tag is in ``punct_tags`` are not scored.
    punct_tags : collection of str, default :data:`PUNCT_TAGS`
        The tags treated as punctuation.
    per_sentence : bool, default False
        Return the LAS of each sentence (NaN where no token is scored).

    Returns
    -------
    float or numpy.ndarray
        Corpus-level LAS, or the per-sentence scores.
    """
    t = _trees(heads, heads_pred, labels, labels_pred, tags, punct_tags, need_labels=True)
    assert t.label_ok is not None
    return _score(t, t.head_ok & t.label_ok, per_sentence)


def dependency_report(
    heads: Sequence[Sequence[int] | np.ndarray],
    heads_pred: Sequence[Sequence[int] | np.ndarray],
    labels: Sequence[Sequence[str]] | None = None,
    labels_pred: Sequence[Sequence[str]] | None = None,
    *,
    tags: Sequence[Sequence[str]] | None = None,
    punct_tags: Collection[str] = PUNCT_TAGS,
) -> dict[str, float]:
    """Corpus-level and sentence-averaged attachment scores and exact-match rates.

    .. math:: \\mathrm{UEM} = \\frac{1}{S}\\sum_{s} \\mathbf{1}[\\forall t \\in T_s:
              \\hat h_t = h_t]

    and likewise LEM with labels, where ``T_s`` are the scored tokens of sentence ``s``.

    Parameters
    ----------
    heads, heads_pred : list of array-like of int
        Gold and predicted heads (0 = root), one array per sentence.
    labels, labels_pred : list of list of str, optional
        Gold and predicted relations; without them the labelled entries are absent.
    tags : list of list of str, optional
        Gold POS tags; when given, tokens whose tag is in ``punct_tags`` are not scored.
    punct_tags : collection of str, default :data:`PUNCT_TAGS`
        The tags treated as punctuation.

    Returns
    -------
    dict
        ``uas``, ``uas_sentence`` (mean of the per-sentence UAS over sentences with a scored
        token), ``uem`` (fraction of sentences whose scored heads are all correct) and, with
        labels, ``las``, ``las_sentence``, ``lem`` and ``label_accuracy`` (fraction of scored
        tokens with the correct relation, whatever the head); plus ``n_sentences`` and
        ``n_scored_tokens``.
    """
    t = _trees(heads, heads_pred, labels, labels_pred, tags, punct_tags)
    out: dict[str, float] = {}
    checks = {"u": t.head_ok}
    if t.label_ok is not None:
        checks["l"] = t.head_ok & t.label_ok
    for prefix, ok in checks.items():
        per_sentence = np.asarray(_score(t, ok, True))
        out[f"{prefix}as"] = float(_score(t, ok, False))
        out[f"{prefix}as_sentence"] = float(np.nanmean(per_sentence))
        errors = np.bincount(t.sentence_of, weights=~ok & t.scored, minlength=len(t.lengths))
        out[f"{prefix}em"] = float(np.mean(errors == 0))
    if t.label_ok is not None:
        out["label_accuracy"] = float(_score(t, t.label_ok, False))
    out["n_sentences"] = len(t.lengths)
    out["n_scored_tokens"] = int(t.scored.sum())
    return out
