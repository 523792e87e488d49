"""A deterministic, hashed feature map for tokens in context (sequence labelling).

Each token gets string features — identity, lower case, prefixes and suffixes, word shape,
capitalisation, digit and punctuation flags, the neighbouring words and sentence-boundary
markers, optional extra columns such as POS tags — hashed into ``n_features`` columns as
scikit-learn's :class:`~sklearn.feature_extraction.FeatureHasher` hashes them (its
MurmurHash3 with seed 0 on the UTF-8 bytes, ``alternate_sign=False``: the same columns on every
run, process and machine, unlike Python's ``hash``). Each distinct string is built and hashed
once per call (:meth:`SequenceFeaturizer.transform`); :meth:`SequenceFeaturizer.token_features`
lists the strings of one sentence.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.utils import murmurhash3_32

from bicrit.datasets.conll import SequenceDataset
from bicrit.errors import InvalidInputError, InvalidParameterError

__all__ = ["HashedSequences", "SequenceFeaturizer", "word_shape"]

BOS, EOS = "<BOS>", "<EOS>"


class HashedSequences(NamedTuple):
    """Token features of many sentences: rows ``offsets[i]:offsets[i + 1]`` are sentence ``i``."""

    X: sp.csr_array
    """(n_tokens, n_features) float64 CSR, int32 sorted indices."""
    offsets: np.ndarray
    """int64, length n_sentences + 1, starting at 0."""

    def sentence(self, i: int) -> sp.csr_array:
        """The rows of sentence ``i``."""
        return self.X[self.offsets[i] : self.offsets[i + 1]]

    @property
    def n_sentences(self) -> int:
        """Number of sentences."""
        return len(self.offsets) - 1


def word_shape(word: str, *, collapse: bool = False) -> str:
    """``X`` per upper-case letter, ``x`` lower case, ``d`` digit, other characters kept.

    ``collapse=True`` merges runs of the same symbol: ``"McDonald's"`` → ``"XxXx'x"``.
    """
    out: list[str] = []
    for c in word:
        s = "X" if c.isupper() else "x" if c.islower() else "d" if c.isdigit() else c
        if not (collapse and out and out[-1] == s):
            out.append(s)
    return "".join(out)


def _is_punct(c: str) -> bool:
    return unicodedata.category(c)[0] in "PS"


#: The widest neighbour window (each token gets ``2·window`` neighbour features).
MAX_WINDOW = 100


class SequenceFeaturizer:
    """Hashed token features for sequence labelling; stateless, so ``fit`` does nothing.

    Parameters
    ----------
    n_features
        Number of hashed columns.
    affix_length
        Prefixes and suffixes of the lower-cased word of lengths 1..affix_length (only those
        not longer than the word).
    window
        Lower-cased neighbouring words at offsets ±1..±window, ``<BOS>``/``<EOS>`` past the ends.
    columns
        Names of extra per-token columns (e.g. ``("pos",)``) given to :meth:`transform`; each
        contributes its value at offsets -1, 0 and +1.

    Notes
    -----
    Features of the token ``w`` at position ``i`` (strings before hashing; see
    :meth:`token_features`): ``bias``, ``w=<w>``, ``lw=<lower>``, ``p<k>=``/``s<k>=`` affixes,
    ``shape=``, ``sshape=`` (collapsed), the flags ``title``, ``upper``, ``lower``,
    ``has_upper``, ``digit``, ``has_digit``, ``punct``, ``has_punct``, ``hyphen``, the neighbours
    ``w-1=``, ``w+1=``, … and ``BOS``/``EOS`` on the first/last token.
    """

    def __init__(
        self,
        n_features: int = 2**18,
        affix_length: int = 4,
        window: int = 2,
        columns: Sequence[str] = (),
    ) -> None:
        self.n_features = n_features
        self.affix_length = affix_length
        self.window = window
        self.columns = columns

    def _check_params(self) -> None:
        for name, value, low in [
            ("n_features", self.n_features, 1),
            ("affix_length", self.affix_length, 0),
            ("window", self.window, 0),
        ]:
            if not isinstance(value, int | np.integer) or value < low:
                raise InvalidParameterError(f"{name} must be an integer >= {low}, got {value!r}")
        if self.n_features > 2**31 - 1:
            raise InvalidParameterError(f"n_features must be < 2**31, got {self.n_features}")
        if self.window > MAX_WINDOW:  # every token gets 2·window neighbour features
            raise InvalidParameterError(f"window must be <= {MAX_WINDOW}, got {self.window}")
        cols = self.columns
        if not isinstance(cols, list | tuple) or not all(isinstance(c, str) for c in cols):
            raise InvalidParameterError(f"columns must be a list of column names, got {cols!r}")

    def fit(self, sentences: object = None, y: object = None) -> SequenceFeaturizer:
        """Check the parameters; there is nothing to learn."""
        self._check_params()
        return self

    def token_features(
        self,
        sentence: Sequence[str],
        extra: Mapping[str, Sequence[str]] | None = None,
        _cache: dict[str, list[str]] | None = None,
    ) -> list[list[str]]:
        """The feature strings of every token of one sentence (before hashing)."""
        n = len(sentence)
        cache = {} if _cache is None else _cache
        lower = [w.lower() for w in sentence]
        cols = [(name, list((extra or {})[name])) for name in self.columns]
        out = []
        for i, w in enumerate(sentence):
            own = cache.get(w)
            if own is None:
                own = cache[w] = self._word_features(w)
            f = list(own)
            for d in range(1, self.window + 1):
                f.append(f"w-{d}=" + (lower[i - d] if i - d >= 0 else BOS))
                f.append(f"w+{d}=" + (lower[i + d] if i + d < n else EOS))
            if i == 0:
                f.append("BOS")
            if i == n - 1:
                f.append("EOS")
            for name, vals in cols:
                f.append(f"{name}={vals[i]}")
                f.append(f"{name}-1=" + (vals[i - 1] if i > 0 else BOS))
                f.append(f"{name}+1=" + (vals[i + 1] if i + 1 < n else EOS))
            out.append(f)
        return out

    def _word_features(self, w: str) -> list[str]:
        """The features of a word that do not depend on its context."""
        lw = w.lower()
        f = ["bias", "w=" + w, "lw=" + lw]
        for k in range(1, min(self.affix_length, len(lw)) + 1):
            f.append(f"p{k}={lw[:k]}")
            f.append(f"s{k}={lw[-k:]}")
        f.append("shape=" + word_shape(w))
        f.append("sshape=" + word_shape(w, collapse=True))
        if w.istitle():
            f.append("title")
        if w.isupper():
            f.append("upper")
        if w.islower():
            f.append("lower")
        if any(c.isupper() for c in w):
            f.append("has_upper")
        if w.isdigit():
            f.append("digit")
        if any(c.isdigit() for c in w):
            f.append("has_digit")
        punct = [_is_punct(c) for c in w]
        if all(punct):
            f.append("punct")
        if any(punct):
            f.append("has_punct")
        if "-" in w:
            f.append("hyphen")
        return f

    def transform(
        self,
        sentences: Sequence[Sequence[str]] | SequenceDataset,
        columns: Mapping[str, Sequence[Sequence[str]]] | None = None,
    ) -> HashedSequences:
        """Hashed features of every token of every sentence.

        ``sentences`` is a list of token lists or a :class:`SequenceDataset` (whose ``columns``
        then supply the extra columns). Raises :class:`InvalidInputError` for an empty sentence,
        a token that is not a non-empty string, or an extra column that is missing or of the
        wrong length.
        """
        self._check_params()
        if isinstance(sentences, SequenceDataset):
            columns = sentences.columns if columns is None else columns
            sentences = sentences.tokens
        columns = columns or {}
        for name in self.columns:
            if name not in columns:
                raise InvalidInputError(
                    f"extra column {name!r} not given (have: {sorted(columns)})"
                )
        lengths = np.zeros(len(sentences) + 1, dtype=np.int64)
        for s, sent in enumerate(sentences):
            if isinstance(sent, str) or len(sent) == 0:
                what = "is empty" if len(sent) == 0 else "is a string, not a list of tokens"
                raise InvalidInputError(f"sentence {s} {what}")
            for t, tok in enumerate(sent):
                if not isinstance(tok, str) or not tok:
                    raise InvalidInputError(f"token {t} of sentence {s} is {tok!r}")
            for name in self.columns:
                if len(columns[name][s]) != len(sent):
                    raise InvalidInputError(
                        f"column {name!r} of sentence {s} has {len(columns[name][s])} values "
                        f"for {len(sent)} tokens"
                    )
            lengths[s + 1] = len(sent)
        rows, ids, strings = self._feature_ids(sentences, columns, np.cumsum(lengths))
        n_tokens, d = int(lengths.sum()), int(self.n_features)
        # each distinct feature string hashed once: FeatureHasher's column (alternate_sign
        # off), |MurmurHash3(UTF-8, seed 0)| mod n_features, in Python integers (so −2³¹ too)
        hashed = (abs(murmurhash3_32(f, seed=0)) % d for f in strings)
        table = np.fromiter(hashed, dtype=np.int64, count=len(strings))
        cols = table[ids]
        X = sp.coo_array((np.ones(len(cols)), (rows, cols)), shape=(n_tokens, d)).tocsr()
        X.sum_duplicates()
        X.sort_indices()
        X = sp.csr_array(
            (X.data, X.indices.astype(np.int32), X.indptr.astype(np.int32)), shape=X.shape
        )
        return HashedSequences(X, np.cumsum(lengths))

    def _feature_ids(
        self,
        sentences: Sequence[Sequence[str]],
        columns: Mapping[str, Sequence[Sequence[str]]],
        offsets: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """The features of :meth:`token_features` as (token row, string id) pairs into a list
        of distinct feature strings: a word's own features and its neighbour features are
        built once per distinct word and laid out over the tokens with array operations, so
        every string is made and hashed once (the same features as :meth:`token_features`;
        their order within a token is not kept — the matrix sums and sorts them)."""
        index: dict[str, int] = {}
        strings: list[str] = []

        def sid(f: str) -> int:
            i = index.get(f)
            if i is None:
                i = index[f] = len(strings)
                strings.append(f)
            return i

        types: dict[str, int] = {}
        tok = np.fromiter(
            (types.setdefault(w, len(types)) for sent in sentences for w in sent),
            dtype=np.int64,
            count=int(offsets[-1]),
        )
        words = list(types)
        lower = [w.lower() for w in words]
        n = len(tok)
        pos = np.arange(n, dtype=np.int64)
        sent_of = np.repeat(np.arange(len(sentences)), np.diff(offsets))
        first, last = offsets[:-1][sent_of], offsets[1:][sent_of] - 1  # per token
        parts_r: list[np.ndarray] = []
        parts_i: list[np.ndarray] = []
        # the word's own features: one list of ids per distinct word, gathered per token
        own = [[sid(f) for f in self._word_features(w)] for w in words]
        own_len = np.fromiter((len(o) for o in own), dtype=np.int64, count=len(own))
        own_ids = np.fromiter((i for o in own for i in o), dtype=np.int64)
        own_start = np.cumsum(own_len) - own_len
        k = own_len[tok]
        rows = np.repeat(pos, k)
        within = np.arange(len(rows)) - np.repeat(np.cumsum(k) - k, k)
        parts_r.append(rows)
        parts_i.append(own_ids[np.repeat(own_start[tok], k) + within])
        # neighbours at ±d: "w-d=<lower word>" or the boundary marker
        for d in range(1, int(self.window) + 1):
            for sign, marker in ((-1, BOS), (1, EOS)):
                ids = np.array([sid(f"w{sign * d:+d}=" + lw) for lw in lower], dtype=np.int64)
                j = pos + sign * d
                inside = (j >= first) if sign < 0 else (j <= last)
                got = np.full(n, sid(f"w{sign * d:+d}=" + marker), dtype=np.int64)
                got[inside] = ids[tok[j[inside]]]
                parts_r.append(pos)
                parts_i.append(got)
        parts_r += [offsets[:-1], offsets[1:] - 1]
        parts_i += [np.full(len(sentences), sid("BOS")), np.full(len(sentences), sid("EOS"))]
        # extra columns at offsets 0, -1, +1
        for name in self.columns:
            values: dict[str, int] = {}
            val = np.fromiter(
                (values.setdefault(v, len(values)) for vals in columns[name] for v in vals),
                dtype=np.int64,
                count=n,
            )
            names = list(values)
            for k_off, label in ((0, name), (-1, f"{name}-1"), (1, f"{name}+1")):
                ids = np.array([sid(f"{label}={v}") for v in names], dtype=np.int64)
                if k_off == 0:
                    got = ids[val]
                else:
                    j = pos + k_off
                    inside = (j >= first) if k_off < 0 else (j <= last)
                    marker = BOS if k_off < 0 else EOS
                    got = np.full(n, sid(f"{label}={marker}"), dtype=np.int64)
                    got[inside] = ids[val[j[inside]]]
                parts_r.append(pos)
                parts_i.append(got)
        return np.concatenate(parts_r), np.concatenate(parts_i), strings

    def fit_transform(
        self,
        sentences: Sequence[Sequence[str]] | SequenceDataset,
        columns: Mapping[str, Sequence[Sequence[str]]] | None = None,
    ) -> HashedSequences:
        """:meth:`fit`, then :meth:`transform`."""
        return self.fit().transform(sentences, columns)
