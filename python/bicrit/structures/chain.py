"""The ``chain`` structure: first-order linear chain for sequence labeling and NER
(docs/architecture.md, Structures; the thesis's NER experiments, §``sec:NER``). Oracles run in
Rust: Viterbi for any term query, exact k-best Viterbi and ban lists (no cone).

Inputs
------
A dataset of sequences is either

* ``(M, offsets)``: one matrix ``M`` (dense or scipy sparse) with a row per token of all
  sequences, and ``offsets`` (int, length n_sequences + 1) with sequence ``i`` in rows
  ``offsets[i]:offsets[i + 1]`` — the format of the sequence featurizer; or
* a list of per-sequence ``(T_i × n_features)`` matrices (dense or sparse), converted to the above.

One sequence (``joint_feature``, ``predict_one``, ``oracle``) is a ``(T × n_features)`` matrix.
A label is a 1-D int array of length T with state ids in ``0..n_states``. Labels of a dataset are a
list of such arrays, or one flat int array over all tokens (split by the offsets). Sequences may
have different lengths; an empty sequence is an error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from bicrit import _native
from bicrit.errors import InvalidInputError, InvalidParameterError, check_choice
from bicrit.structures._inputs import CsrTuple, as_csr_tuple
from bicrit.structures.native import NativeStructure

__all__ = ["Chain", "as_label", "as_sequences", "is_iob", "split_labels"]

LOSSES = ("hamming", "segment")
SCHEMES = ("iob1", "iob2", "iobes", "bio", "bioes")

SequencesTuple = tuple[CsrTuple, np.ndarray]


def _is_native_form(X: Any) -> bool:
    return (
        isinstance(X, tuple)
        and len(X) == 2
        and isinstance(X[0], tuple)
        and len(X[0]) == 4
        and isinstance(X[1], np.ndarray)
    )


def _looks_like_offsets(o: Any) -> bool:
    if sp.issparse(o):
        return False
    try:
        a = np.asarray(o)
    except (TypeError, ValueError):
        return False
    return a.ndim == 1 and (a.size == 0 or np.issubdtype(a.dtype, np.integer))


def as_sequences(X: Any, *, name: str = "X", n_features: int | None = None) -> SequencesTuple:
    """``((indptr, indices, data, n_cols), offsets int64)`` of a dataset of sequences.

    ``X`` is ``(M, offsets)`` or a list of per-sequence ``(T_i × d)`` matrices (see the module
    docstring). Offsets are validated natively (start at 0, strictly increasing, end at the
    number of rows); a wrong feature width, an empty sequence or a non-2-D sequence raise
    :class:`InvalidInputError` naming ``name``.
    """
    if _is_native_form(X):
        native: SequencesTuple = X
        return native
    if isinstance(X, tuple) and len(X) == 2 and _looks_like_offsets(X[1]):
        M, offsets = X
        if not sp.issparse(M) and np.ndim(M) != 2:
            raise InvalidInputError(
                f"{name}: the token matrix must be 2-D (tokens × features), got {np.ndim(M)}-D"
            )
        csr = as_csr_tuple(M, name=name, n_features=n_features)
        return csr, np.asarray(offsets, dtype=np.int64)
    if isinstance(X, list | tuple) or (isinstance(X, np.ndarray) and X.dtype == object):
        parts = []
        width = n_features
        for i, x in enumerate(X):
            what = f"{name}[{i}]"
            if not sp.issparse(x) and np.ndim(x) != 2:
                raise InvalidInputError(
                    f"{what}: a sequence is a 2-D (tokens × features) matrix, got {np.ndim(x)}-D"
                )
            m = sp.csr_array(x, dtype=np.float64) if sp.issparse(x) else sp.csr_array(np.asarray(x))
            if m.shape[0] == 0:
                raise InvalidInputError(f"{what} is an empty sequence (0 tokens)")
            if width is not None and m.shape[1] != width:
                raise InvalidInputError(f"{what} has {m.shape[1]} features, expected {width}")
            width = m.shape[1]
            parts.append(m)
        if not parts:
            if n_features is None:
                raise InvalidInputError(f"{name} holds no sequences")
            stacked = sp.csr_array((0, n_features))
        else:
            stacked = sp.vstack(parts, format="csr")
        offsets = np.zeros(len(parts) + 1, dtype=np.int64)
        np.cumsum([p.shape[0] for p in parts], out=offsets[1:])
        return as_csr_tuple(stacked, name=name, n_features=n_features), offsets
    raise InvalidInputError(
        f"{name} must be (token_matrix, offsets) or a list of per-sequence (T × d) matrices, "
        f"got {type(X).__name__}"
    )


def as_label(y: Any, *, name: str = "y") -> np.ndarray:
    """A chain label as a 1-D int64 array (states are range-checked natively)."""
    if type(y) is np.ndarray and y.dtype == np.int64 and y.ndim == 1:
        return y
    a = np.asarray(y)
    if a.ndim != 1:
        raise InvalidInputError(
            f"{name}: a chain label is a 1-D int array of state ids, got shape {a.shape}"
        )
    if a.size and not np.issubdtype(a.dtype, np.integer):
        raise InvalidInputError(f"{name}: a chain label holds integer state ids, got {a.dtype}")
    return a.astype(np.int64, copy=False)


def split_labels(Y: Any, offsets: np.ndarray, *, name: str = "Y") -> list[np.ndarray]:
    """Labels of a dataset as one int64 array per sequence.

    ``Y`` is a list of per-sequence labels, or one flat int array over all tokens, split at
    ``offsets``. The number of labels and (for a flat ``Y``) of tokens must match.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    n_seq = len(offsets) - 1
    flat = isinstance(Y, np.ndarray) and Y.dtype != object and Y.ndim == 1
    if not flat and isinstance(Y, list | tuple) and len(Y) and np.ndim(Y[0]) == 0:
        flat = True
    if flat:
        a = as_label(Y, name=name)
        if a.shape[0] != offsets[-1]:
            raise InvalidInputError(
                f"{name} is a flat label array of {a.shape[0]} tokens but X has {offsets[-1]}"
            )
        return list(np.split(a, offsets[1:-1]))
    labels = [as_label(y, name=f"{name}[{i}]") for i, y in enumerate(Y)]
    if len(labels) != n_seq:
        raise InvalidInputError(f"X has {n_seq} sequences but {name} has {len(labels)} labels")
    return labels


def _check_dataset(
    offsets: np.ndarray, csr: CsrTuple, labels: list[np.ndarray], n_states: int
) -> None:
    """Offsets delimit non-empty sequences covering the rows; each label fits its sequence."""
    n_rows = csr[0].shape[0] - 1
    if offsets.ndim != 1 or offsets.size == 0 or offsets[0] != 0:
        raise InvalidInputError("offsets must be 1-D, start at 0 and have n_sequences + 1 entries")
    steps = np.diff(offsets)
    if steps.size and steps.min() <= 0:
        i = int(np.flatnonzero(steps <= 0)[0])
        what = "is empty" if steps[i] == 0 else "has offsets that decrease"
        raise InvalidInputError(
            f"sequence {i} {what} (offsets[{i}:{i + 2}] = {offsets[i : i + 2]})"
        )
    if offsets[-1] != n_rows:
        raise InvalidInputError(
            f"offsets end at {offsets[-1]} but the token feature matrix has {n_rows} rows"
        )
    for i, (y, t) in enumerate(zip(labels, steps, strict=True)):
        if y.shape[0] != t:
            raise InvalidInputError(
                f"Y[{i}] has length {y.shape[0]} but sequence {i} has {t} tokens"
            )
        if y.size and (y.min() < 0 or y.max() >= n_states):
            bad = int(y[(y < 0) | (y >= n_states)][0])
            raise InvalidInputError(f"Y[{i}] has state {bad}, outside the states 0..{n_states}")


class Chain(NativeStructure):
    """First-order linear chain over ``n_states`` tags.

    score(y) = Σ_t x_t·W[:, y_t] + Σ_{t≥1} A[y_{t−1}, y_t] + start[y_0] + end[y_{T−1}]; the
    weight vector is ``[W (feature-major: index f·n_states + s), A (from·n_states + to), start,
    end]``, of length ``n_features·n_states + n_states² + 2·n_states``.

    Parameters
    ----------
    n_states, n_features:
        Sizes; ``None`` means "learn from data in :meth:`initialize`" (``n_states`` also comes
        from ``tag_names``).
    outside:
        Ids of the O (non-entity) tags. Default: the tags named ``"O"`` when ``tag_names`` is
        given, else ``(0,)``. ``()`` means no O tag (e.g. POS tagging).
    loss:
        ``"hamming"`` (tokens with a wrong tag) or ``"segment"`` (chunk-level symmetric
        difference, below; needs ``tag_names``).
    tag_names:
        Names of the states: ``"O"``, ``"B-X"``, ``"I-X"`` (and ``"E-X"``, ``"S-X"`` under
        ``"iobes"``). Needed for the segment loss.
    scheme:
        ``"iob2"`` (default), ``"iob1"`` or ``"iobes"``.

    Terms (against the gold label g)
    --------------------------------
    ``size``
        Number of non-O tokens of y.
    ``hamming``
        Indicator-set Hamming distance for the Micro-F1 surrogate: per token 0 if y_t = g_t,
        1 if exactly one of them is an O tag, 2 if they are two different non-O tags (0 if both
        are O tags) — ``|A(y) △ A(g)|`` with A(y) = {(t, y_t) : y_t not O}.
    ``loss``
        ``"hamming"``: number of tokens with y_t ≠ g_t. ``"segment"``: ``|C(y) △ C(g)|``, where
        C(·) is the set of entity chunks (first token, last token, type). Chunks are decoded
        with the conlleval rules, for IOB1 and IOB2 alike: a non-O tag c *continues* the chunk
        of the previous tag p iff p is ``B-X`` or ``I-X`` and c is ``I-X`` (or ``E-X``) of the
        same type X; every other non-O tag starts a new chunk (so ``I-X`` after ``O`` starts
        one, and ``B-X B-X`` are two). The loss counts every predicted chunk that is not
        exactly a gold chunk (spurious, or wrong span, or wrong type) plus every gold chunk not
        exactly predicted (missed): a chunk with the right span and the wrong type costs 2.
        It equals FP + FN of chunk-level F1. The oracles optimise it exactly (a DP over
        (tag, "gold chunk reproduced so far") pairs, 4× the work of plain Viterbi).

    Oracles: Viterbi for any coefficients (lexicographic ties for λ ∈ {0, ∞} by DP over value
    pairs), exact k-best (list Viterbi), ban lists (k-best with k + ``|ban|`` then filtered), and
    with the Hamming loss the frontier by loss value — the best label for every number of wrong
    tokens, one O(T²·S²) DP over (position, tag, count), what the exact one-call ``frontier``
    search needs. Capabilities: ban, kbest, and frontier when ``loss == "hamming"`` (no cone,
    no relaxed answers).
    """

    name = "chain"

    def __init__(
        self,
        n_states: int | None = None,
        n_features: int | None = None,
        outside: Sequence[int] | None = None,
        loss: str = "hamming",
        tag_names: Sequence[str] | None = None,
        scheme: str = "iob2",
    ) -> None:
        self.n_states = n_states
        self.n_features = n_features
        self.outside = outside
        self.loss_name = loss
        self.tag_names = tag_names
        self.scheme = scheme
        check_choice("loss", loss, LOSSES)
        if str(scheme).lower() not in SCHEMES:
            check_choice("scheme", scheme, SCHEMES)
        if tag_names is not None:
            names = [str(t) for t in tag_names]
            if n_states is not None and int(n_states) != len(names):
                raise InvalidParameterError(
                    f"tag_names has {len(names)} names but n_states = {n_states}"
                )
            self.n_states = len(names)
        if loss == "segment" and tag_names is None:
            raise InvalidParameterError(
                "loss='segment' needs tag_names (e.g. ['O', 'B-PER', 'I-PER', ...]) to know "
                "the chunk structure"
            )
        if self.n_states is not None and n_features is not None:
            self._build(int(self.n_states), int(n_features))

    report_names = (
        ("f1", "entity micro-F1"),
        ("macro_f1", "entity macro-F1"),
        ("sentence_f1", "sentence F1 (thesis NER Micro-F1)"),
        ("token_accuracy", "token accuracy"),
    )

    def _build(self, n_states: int, n_features: int) -> None:
        self._native = _native.chain_structure(
            n_states,
            n_features,
            outside=None if self.outside is None else [int(o) for o in self.outside],
            loss=self.loss_name,
            tag_names=None if self.tag_names is None else [str(t) for t in self.tag_names],
            scheme=str(self.scheme),
        )
        self.n_states, self.n_features = n_states, n_features

    def initialize(self, X: Any, Y: Any) -> Chain:
        """Fixes ``n_states`` (largest state id in ``Y`` + 1, unless given) and ``n_features``
        (the width of ``X``, unless given) and checks every label against its sequence."""
        Xn = as_sequences(X, name="X", n_features=self.n_features)
        labels = split_labels(Y, Xn[1])
        top = max((int(y.max()) for y in labels if y.size), default=0)
        n_states = self.n_states
        if n_states is None:
            floor = 1 + max((int(o) for o in self.outside or (0,)), default=0)
            n_states = max(top + 1, floor)
        n_features = self.n_features if self.n_features is not None else Xn[0][3]
        _check_dataset(Xn[1], Xn[0], labels, int(n_states))
        self._build(int(n_states), int(n_features))
        return self

    def _x_one(self, x: Any) -> Any:
        if not sp.issparse(x) and np.ndim(x) != 2:
            raise InvalidInputError(
                f"x: a sequence is a 2-D (tokens × features) matrix, got {np.ndim(x)}-D"
            )
        return as_csr_tuple(x, name="x", n_features=self.n_features)

    def _x_many(self, X: Any) -> Any:
        return as_sequences(X, name="X", n_features=self.n_features)

    def _y_one(self, y: Any) -> Any:
        return as_label(y)

    def _y_many(self, Y: Any) -> Any:
        return [as_label(y, name=f"Y[{i}]") for i, y in enumerate(Y)]

    def _y_batch(self, Xn: Any, Y: Any) -> Any:
        """A list of labels or one flat array over all tokens (split at the offsets)."""
        return self._y_many(split_labels(Y, Xn[1]))

    # -- task behaviour (bicrit.structures.base) --------------------------------------------------

    @property
    def iob(self) -> bool:
        """Whether the tags are named IOB tags (``O``, ``B-X``, ``I-X``): entity scores apply."""
        return is_iob(self.tag_names or [])

    def decode(self, P: Sequence[Any]) -> list[Any]:
        """Tag names per sequence when the chain has ``tag_names``, else state-id arrays."""
        if self.tag_names is None:
            return [np.asarray(p) for p in P]
        names = np.asarray([str(t) for t in self.tag_names], dtype=object)
        return [names[np.asarray(p, dtype=np.int64)].tolist() for p in P]

    def headline(self, Y: Any, P: Any) -> float:
        """Entity micro-F1 (CoNLL chunks, pooled over types) for IOB tags, else token
        accuracy."""
        from bicrit import metrics

        if self.iob:
            return float(metrics.entity_scores(_strings(Y), P)["micro"]["f1"])
        return _token_accuracy(Y, P)

    def report(self, Y: Any, P: Any) -> dict[str, Any]:
        """:func:`bicrit.metrics.sequence_report` for IOB tags, else the token accuracy."""
        from bicrit import metrics

        if self.iob:
            return metrics.sequence_report(_strings(Y), P)
        return {"token_accuracy": _token_accuracy(Y, P)}

    def take(self, X: Any, indices: Sequence[int] | np.ndarray) -> Any:
        """Sequences ``indices`` of ``(M, offsets)`` inputs (token rows kept in order) or of a
        list of per-sequence matrices."""
        if isinstance(X, tuple) and len(X) == 2 and _looks_like_offsets(X[1]):
            M, offsets = X
            offsets = np.asarray(offsets, dtype=np.int64)
            idx = np.asarray(indices, dtype=np.int64)
            rows = np.concatenate(
                [np.arange(offsets[i], offsets[i + 1]) for i in idx.tolist()] or [np.empty(0)]
            ).astype(np.int64)
            lengths = offsets[idx + 1] - offsets[idx]
            return (M[rows], np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64))
        return super().take(X, indices)

    def record(self, p: Any) -> dict[str, Any]:
        return {"tags": [str(t) for t in p] if self.tag_names else np.asarray(p).tolist()}

    def get_config(self) -> dict[str, Any]:
        return {
            "n_states": self.n_states,
            "n_features": self.n_features,
            "outside": None if self.outside is None else [int(o) for o in self.outside],
            "loss": self.loss_name,
            "tag_names": None if self.tag_names is None else [str(t) for t in self.tag_names],
            "scheme": self.scheme,
        }


def is_iob(tags: Sequence[str]) -> bool:
    """Whether ``tags`` are IOB tags: ``O``, ``B-X`` and ``I-X`` only."""
    return bool(tags) and all(t == "O" or str(t)[:2] in ("B-", "I-") for t in tags)


def _strings(Y: Any) -> list[list[str]]:
    return [[str(t) for t in y] for y in Y]


def _token_accuracy(Y: Any, P: Any) -> float:
    g = np.concatenate([np.asarray(y).ravel() for y in Y]).astype(str)
    p = np.concatenate([np.asarray(y).ravel() for y in P]).astype(str)
    if g.shape != p.shape:
        raise InvalidInputError(f"Y has {g.size} tokens but the predictions have {p.size}")
    return float(np.mean(g == p))
