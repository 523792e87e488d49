"""Sequence-labelling metrics: token accuracy and CoNLL entity (chunk) scores.

Inputs are corpora: a list of sentences, each a list of string tags, gold and predicted sentence by
sentence with equal lengths. Tags of the entity metrics follow the IOB schemes: ``"O"`` outside
any chunk, ``"B-TYPE"`` and ``"I-TYPE"`` inside a chunk of type ``TYPE``.

Chunk semantics are those of the CoNLL evaluation script ``conlleval`` (and of seqeval's default
``mode=None``): a token starts a new chunk when its tag is ``B-X``, or ``I-X`` after ``O``, after
a sentence start, or after a tag of another type; an ``I-X`` after ``B-X``/``I-X`` continues the
chunk. This one rule set reads both IOB1 (``I-`` starts a chunk unless it continues one of the
same type; ``B-`` only separates two adjacent chunks of the same type) and IOB2 (every chunk starts
with ``B-``; conlleval's leniency makes a stray ``I-`` after ``O`` or another type start a chunk),
so both schemes decode the same chunks and ``scheme`` only declares which one the caller uses.
A predicted chunk is correct when a gold chunk has the same type, start and end.

The thesis's NER table (``sec:NER``) reports "Macro-F1", the usual CoNLL entity F1, and
"Micro-F1", the per-sentence entity F1 averaged over sentences (the same per-instance F1 its
surrogate chapter defines for multi-label, ``sec:microf1``): :func:`entity_scores` and
:func:`sentence_f1` compute them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypedDict

import numpy as np

from bicrit.errors import InvalidInputError, InvalidParameterError
from bicrit.metrics._common import check_same_count, check_zero_division, divide, divide_scalar

__all__ = [
    "SCHEMES",
    "Entity",
    "EntityScores",
    "PRFScores",
    "TypeScores",
    "entity_scores",
    "extract_entities",
    "sentence_f1",
    "sequence_report",
    "token_accuracy",
]

Scheme = Literal["iob1", "iob2", "auto"]
SCHEMES: tuple[str, ...] = ("iob1", "iob2", "auto")

_OUT, _BEGIN, _INSIDE = 0, 1, 2


class Entity(NamedTuple):
    """A chunk of one sentence: its type and the half-open token span ``[start, end)``."""

    type: str
    start: int
    end: int


class PRFScores(TypedDict):
    """Precision, recall and F1."""

    precision: float
    recall: float
    f1: float


class TypeScores(PRFScores):
    """Precision, recall and F1 with the chunk counts they come from."""

    n_gold: int
    n_pred: int
    n_correct: int


class EntityScores(TypedDict):
    """Result of :func:`entity_scores`."""

    micro: TypeScores
    macro: PRFScores
    per_type: dict[str, TypeScores]


# --------------------------------------------------------------------------------------------
# input handling


def _check_scheme(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise InvalidParameterError(f"scheme must be one of {SCHEMES}, got {scheme!r}")


def _flatten(sentences: Any, name: str) -> tuple[list[Any], np.ndarray]:
    """Concatenate a corpus; return the tags and the length of each sentence."""
    if isinstance(sentences, str | bytes) or not isinstance(sentences, Sequence | np.ndarray):
        raise InvalidInputError(
            f"{name} must be a list of sentences (each a list of tags), "
            f"got {type(sentences).__name__}"
        )
    flat: list[Any] = []
    lengths = np.empty(len(sentences), dtype=np.int64)
    for i, sentence in enumerate(sentences):
        if isinstance(sentence, str | bytes) or not isinstance(sentence, Sequence | np.ndarray):
            raise InvalidInputError(
                f"{name}[{i}] must be a sequence of tags, got {type(sentence).__name__} "
                f"({name} must be a list of sentences, each a list of tags)"
            )
        if len(sentence) == 0:
            raise InvalidInputError(f"{name}[{i}] is an empty sentence")
        flat.extend(sentence)
        lengths[i] = len(sentence)
    return flat, lengths


@dataclass(frozen=True)
class _Corpus:
    """A gold and a predicted corpus with their tags encoded in one shared vocabulary."""

    names: tuple[str, str]
    lengths: np.ndarray  # tokens of each sentence
    gold: np.ndarray  # (N,) codes into vocab
    pred: np.ndarray  # (N,) codes into vocab
    vocab: np.ndarray  # sorted distinct tags
    single: bool = False  # one sentence given as a plain list of tags: locate as name[t]

    @property
    def offsets(self) -> np.ndarray:
        return np.concatenate(([0], np.cumsum(self.lengths)))

    def locate(self, flat_index: int) -> str:
        """``"gold[s][t]"`` for a position in the concatenation gold ++ pred."""
        n_tokens = self.gold.shape[0]
        which = 0 if flat_index < n_tokens else 1
        index = flat_index - which * n_tokens
        if self.single:
            return f"{self.names[which]}[{index}]"
        s = int(np.searchsorted(self.offsets, index, side="right") - 1)
        return f"{self.names[which]}[{s}][{index - self.offsets[s]}]"


def _encode(
    gold: Any, pred: Any, names: tuple[str, str] = ("gold", "pred"), single: bool = False
) -> _Corpus:
    """Validate a gold/predicted corpus pair and encode its tags as integers."""
    flat_gold, len_gold = _flatten(gold, names[0])
    flat_pred, len_pred = _flatten(pred, names[1])
    check_same_count(len(len_gold), len(len_pred), names[0], names[1], "sentences")
    bad = np.flatnonzero(len_gold != len_pred)
    if bad.size:
        s = int(bad[0])
        raise InvalidInputError(
            f"{names[0]}[{s}] and {names[1]}[{s}] differ in length: "
            f"{len_gold[s]} and {len_pred[s]} tags"
        )
    # encode with a dict (linear time), then renumber the codes in sorted tag order
    index: dict[Any, int] = {}
    flat = flat_gold + flat_pred
    try:
        raw = np.fromiter(
            (index.setdefault(tag, len(index)) for tag in flat), dtype=np.int64, count=len(flat)
        )
    except TypeError as err:  # an unhashable tag
        raise InvalidInputError(f"{names[0]} and {names[1]} must hold string tags: {err}") from err
    n_tokens = len(flat_gold)
    for tag, code in index.items():
        if not isinstance(tag, str):
            where = int(np.flatnonzero(raw == code)[0])
            name = names[0] if where < n_tokens else names[1]
            raise InvalidInputError(f"{name} must hold string tags, found {tag!r}")
    vocab = np.array(sorted(index), dtype=object)
    rank = np.empty(len(index), dtype=np.int64)
    rank[[index[tag] for tag in vocab]] = np.arange(len(index))
    codes = rank[raw]
    return _Corpus(names, len_gold, codes[:n_tokens], codes[n_tokens:], vocab, single)


@dataclass(frozen=True)
class _Chunks:
    """The chunks of a corpus as parallel arrays, in order of their start token."""

    start: np.ndarray  # first token (index into the concatenated corpus)
    end: np.ndarray  # one past the last token
    type: np.ndarray  # index into the type list


def _parse_iob(corpus: _Corpus) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Prefix code and type id of every vocabulary tag; raise on a tag outside the IOB schemes."""
    prefix = np.empty(len(corpus.vocab), dtype=np.int8)
    type_names: list[str] = []
    for code, tag in enumerate(corpus.vocab.tolist()):
        if tag == "O":
            prefix[code] = _OUT
            type_names.append("")
        elif len(tag) > 2 and tag[0] in "BI" and tag[1] == "-":
            prefix[code] = _BEGIN if tag[0] == "B" else _INSIDE
            type_names.append(tag[2:])
        else:
            where = int(np.flatnonzero(np.concatenate((corpus.gold, corpus.pred)) == code)[0])
            raise InvalidInputError(
                f"{corpus.locate(where)} = {tag!r} is not an IOB tag: expected 'O', "
                "'B-TYPE' or 'I-TYPE'"
            )
    types = sorted({t for t in type_names if t})
    index = {t: i for i, t in enumerate(types)}
    type_of = np.array([index.get(t, -1) for t in type_names], dtype=np.int64)
    return prefix, type_of, types


def _chunks(
    codes: np.ndarray, sentence_start: np.ndarray, prefix_of: np.ndarray, type_of: np.ndarray
) -> _Chunks:
    """Extract the chunks of an encoded corpus with conlleval's rules, vectorised."""
    prefix = prefix_of[codes]
    kind = type_of[codes]
    inside = prefix != _OUT
    prev_inside = np.concatenate(([False], inside[:-1]))
    prev_kind = np.concatenate(([-1], kind[:-1]))
    # An I-X continues the chunk of the previous token when that token is B-X or I-X of the same
    # sentence; everything else inside a chunk (B-X, a stray I-X) starts a new one.
    continues = (prefix == _INSIDE) & prev_inside & (prev_kind == kind) & ~sentence_start
    starts = inside & ~continues
    ends = inside & ~np.concatenate((continues[1:], [False]))
    return _Chunks(np.flatnonzero(starts), np.flatnonzero(ends) + 1, kind[starts])


@dataclass(frozen=True)
class _Matched:
    """Chunks of gold and prediction with the correct ones marked."""

    types: list[str]
    sentence_of: np.ndarray  # sentence of each token
    gold: _Chunks
    pred: _Chunks
    correct: np.ndarray  # (n_pred_chunks,) bool


def _match(corpus: _Corpus) -> _Matched:
    prefix_of, type_of, types = _parse_iob(corpus)
    n_tokens = corpus.gold.shape[0]
    sentence_start = np.zeros(n_tokens, dtype=bool)
    sentence_start[corpus.offsets[:-1]] = True
    gold = _chunks(corpus.gold, sentence_start, prefix_of, type_of)
    pred = _chunks(corpus.pred, sentence_start, prefix_of, type_of)
    # At most one gold chunk starts at a token: index gold chunks by their start.
    gold_end = np.full(n_tokens, -1, dtype=np.int64)
    gold_type = np.full(n_tokens, -1, dtype=np.int64)
    gold_end[gold.start] = gold.end
    gold_type[gold.start] = gold.type
    correct = (gold_end[pred.start] == pred.end) & (gold_type[pred.start] == pred.type)
    sentence_of = np.repeat(np.arange(len(corpus.lengths)), corpus.lengths)
    return _Matched(types, sentence_of, gold, pred, correct)


# --------------------------------------------------------------------------------------------
# public API


def extract_entities(tags: Sequence[str], scheme: Scheme = "auto") -> list[Entity]:
    """The chunks of one tagged sentence, with CoNLL (conlleval) chunk semantics.

    A token at position ``t`` starts a chunk when its tag is ``B-X``, or when it is ``I-X``
    and ``t = 0`` or the tag at ``t − 1`` is ``O`` or has a type other than ``X``; a chunk runs
    over the following ``I-X`` tokens.

    Parameters
    ----------
    tags : sequence of str
        The tags of one sentence (``"O"``, ``"B-X"``, ``"I-X"``).
    scheme : {"iob1", "iob2", "auto"}, default "auto"
        The tagging scheme. Both decode with the same rules (see the module docstring).

    Returns
    -------
    list of Entity
        ``(type, start, end)`` with ``end`` exclusive, in order of ``start``.
    """
    _check_scheme(scheme)
    if isinstance(tags, str | bytes) or not isinstance(tags, Sequence | np.ndarray):
        raise InvalidInputError(
            f"tags must be the sequence of tags of one sentence, got {type(tags).__name__}"
        )
    if len(tags) == 0:
        return []
    corpus = _encode([tags], [tags], ("tags", "tags"), single=True)
    prefix_of, type_of, types = _parse_iob(corpus)
    sentence_start = np.zeros(corpus.gold.shape[0], dtype=bool)
    sentence_start[0] = True
    chunks = _chunks(corpus.gold, sentence_start, prefix_of, type_of)
    return [
        Entity(types[k], s, e)
        for k, s, e in zip(
            chunks.type.tolist(), chunks.start.tolist(), chunks.end.tolist(), strict=True
        )
    ]


def token_accuracy(gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]]) -> float:
    """Fraction of tokens whose predicted tag equals the gold tag, over the whole corpus.

    .. math:: \\mathrm{Acc}_{\\mathrm{token}} = \\frac{\\sum_s \\sum_t
              \\mathbf{1}[\\hat y_{s,t} = y_{s,t}]}{\\sum_s |y_s|}

    Parameters
    ----------
    gold, pred : list of list of str
        Gold and predicted tags, sentence by sentence; any tag set (IOB or POS tags).

    Returns
    -------
    float
        Token-level accuracy, pooled over all tokens of all sentences.
    """
    corpus = _encode(gold, pred)
    return float(np.mean(corpus.gold == corpus.pred))


def _type_scores(n_gold: int, n_pred: int, n_correct: int, zd: float) -> TypeScores:
    return {
        "precision": divide_scalar(n_correct, n_pred, zd),
        "recall": divide_scalar(n_correct, n_gold, zd),
        "f1": divide_scalar(2 * n_correct, n_gold + n_pred, zd),
        "n_gold": int(n_gold),
        "n_pred": int(n_pred),
        "n_correct": int(n_correct),
    }


def _entity_scores(m: _Matched, zd: float) -> EntityScores:
    n_types = len(m.types)
    n_gold = np.bincount(m.gold.type, minlength=n_types)
    n_pred = np.bincount(m.pred.type, minlength=n_types)
    n_correct = np.bincount(m.pred.type[m.correct], minlength=n_types)
    per_type = {
        t: _type_scores(n_gold[k], n_pred[k], n_correct[k], zd) for k, t in enumerate(m.types)
    }
    if n_types:
        macro: PRFScores = {
            "precision": float(np.mean(divide(n_correct, n_pred, zd))),
            "recall": float(np.mean(divide(n_correct, n_gold, zd))),
            "f1": float(np.mean(divide(2 * n_correct, n_gold + n_pred, zd))),
        }
    else:
        macro = {"precision": zd, "recall": zd, "f1": zd}
    micro = _type_scores(n_gold.sum(), n_pred.sum(), n_correct.sum(), zd)
    return {"micro": micro, "macro": macro, "per_type": per_type}


def entity_scores(
    gold: Sequence[Sequence[str]],
    pred: Sequence[Sequence[str]],
    scheme: Scheme = "auto",
    *,
    zero_division: float = 0.0,
) -> EntityScores:
    """Entity-level precision, recall and F1 per type, micro- and macro-averaged (conlleval).

    For a type ``X`` with ``G_X`` gold chunks, ``P_X`` predicted chunks and ``C_X`` correct ones
    (same type, start and end):

    .. math:: P_X = \\frac{C_X}{P_X}, \\quad R_X = \\frac{C_X}{G_X}, \\quad
              F_X = \\frac{2 C_X}{G_X + P_X}

    micro scores pool the counts over types (``C = Σ C_X`` …; this is conlleval's overall line
    and the usual CoNLL "F1"); macro scores are the unweighted means of the per-type scores
    over the types that occur in gold or prediction (so macro F1 is the mean of the ``F_X``,
    not the harmonic mean of macro precision and recall).

    Parameters
    ----------
    gold, pred : list of list of str
        Gold and predicted IOB tags, sentence by sentence.
    scheme : {"iob1", "iob2", "auto"}, default "auto"
        The tagging scheme; both decode with the same rules (module docstring).
    zero_division : float, default 0.0
        Value of a score whose denominator is 0: precision with no predicted chunk, recall with
        no gold chunk, F1 and the macro scores when there is no chunk at all. conlleval and
        seqeval report 0.

    Returns
    -------
    EntityScores
        ``{"micro": {...}, "macro": {...}, "per_type": {type: {...}}}``; micro and per-type
        entries also give ``n_gold``, ``n_pred`` and ``n_correct``. Types sort alphabetically.
    """
    _check_scheme(scheme)
    zd = check_zero_division(zero_division)
    return _entity_scores(_match(_encode(gold, pred)), zd)


def _sentence_scores(m: _Matched) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n_sentences = int(m.sentence_of[-1]) + 1
    n_gold = np.bincount(m.sentence_of[m.gold.start], minlength=n_sentences)
    n_pred = np.bincount(m.sentence_of[m.pred.start], minlength=n_sentences)
    n_correct = np.bincount(m.sentence_of[m.pred.start[m.correct]], minlength=n_sentences)
    return (
        divide(n_correct, n_pred, 1.0),
        divide(n_correct, n_gold, 1.0),
        divide(2 * n_correct, n_gold + n_pred, 1.0),
    )


def sentence_f1(
    gold: Sequence[Sequence[str]], pred: Sequence[Sequence[str]], scheme: Scheme = "auto"
) -> float:
    """Per-sentence entity F1 averaged over sentences (the thesis's NER "Micro-F1").

    With ``G_s``, ``P_s`` and ``C_s`` the gold, predicted and correct chunks of sentence ``s``:

    .. math:: \\mathrm{F1}_{\\mathrm{sent}} = \\frac{1}{S}\\sum_{s=1}^{S}
              \\frac{2|C_s|}{|G_s| + |P_s|},
              \\qquad \\text{a sentence with } |G_s| = |P_s| = 0 \\text{ scores } 1

    Zero conventions: a sentence's precision ``|C_s|/|P_s|`` is 1 when it predicts no chunk and
    its recall ``|C_s|/|G_s|`` is 1 when it has no gold chunk (nothing wrong was predicted,
    nothing was missed). Its F1, the harmonic mean of the two, is then 1 when both sides are
    empty and 0 when exactly one is — the formula above in every case.

    Parameters
    ----------
    gold, pred : list of list of str
        Gold and predicted IOB tags, sentence by sentence.
    scheme : {"iob1", "iob2", "auto"}, default "auto"
        The tagging scheme; both decode with the same rules (module docstring).

    Returns
    -------
    float
        Mean over sentences of the per-sentence entity F1.
    """
    _check_scheme(scheme)
    return float(np.mean(_sentence_scores(_match(_encode(gold, pred)))[2]))


def sequence_report(
    gold: Sequence[Sequence[str]],
    pred: Sequence[Sequence[str]],
    scheme: Scheme = "auto",
    *,
    zero_division: float = 0.0,
) -> dict[str, Any]:
    """Token accuracy, entity scores and sentence-averaged scores in one pass.

    Parameters
    ----------
    gold, pred : list of list of str
        Gold and predicted IOB tags, sentence by sentence.
    scheme : {"iob1", "iob2", "auto"}, default "auto"
        The tagging scheme; both decode with the same rules (module docstring).
    zero_division : float, default 0.0
        Passed to :func:`entity_scores`.

    Returns
    -------
    dict
        ``token_accuracy``; ``precision``, ``recall``, ``f1`` (micro, pooled over chunks);
        ``macro_precision``, ``macro_recall``, ``macro_f1`` (means over types);
        ``sentence_precision``, ``sentence_recall``, ``sentence_f1`` (means over sentences,
        with the conventions of :func:`sentence_f1`); ``per_type`` (as in
        :func:`entity_scores`); and the counts ``n_sentences``, ``n_tokens``, ``n_gold``,
        ``n_pred``, ``n_correct``.
    """
    _check_scheme(scheme)
    zd = check_zero_division(zero_division)
    corpus = _encode(gold, pred)
    matched = _match(corpus)
    scores = _entity_scores(matched, zd)
    sent_p, sent_r, sent_f = _sentence_scores(matched)
    micro, macro = scores["micro"], scores["macro"]
    return {
        "token_accuracy": float(np.mean(corpus.gold == corpus.pred)),
        "precision": micro["precision"],
        "recall": micro["recall"],
        "f1": micro["f1"],
        "macro_precision": macro["precision"],
        "macro_recall": macro["recall"],
        "macro_f1": macro["f1"],
        "sentence_precision": float(np.mean(sent_p)),
        "sentence_recall": float(np.mean(sent_r)),
        "sentence_f1": float(np.mean(sent_f)),
        "per_type": scores["per_type"],
        "n_sentences": len(corpus.lengths),
        "n_tokens": int(corpus.gold.shape[0]),
        "n_gold": micro["n_gold"],
        "n_pred": micro["n_pred"],
        "n_correct": micro["n_correct"],
    }
