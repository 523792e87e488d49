"""``SequenceSVM``: sequence labelling and NER with a first-order chain (structure ``chain``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from bicrit import datasets
from bicrit.errors import InvalidInputError, InvalidParameterError, ModelFormatError, check_choice
from bicrit.estimators.structured import StructuredSVM, _init_params
from bicrit.structures.chain import is_iob

__all__ = ["SequenceSVM"]

DEFAULT_FEATURES = 2**18


def _is_token_lists(X: Any) -> bool:
    if not isinstance(X, list | tuple) or not X:
        return False
    first = X[0]
    return isinstance(first, list | tuple) and (not first or isinstance(first[0], str))


def _check_not_raw_tokens(X: Any) -> None:
    """Sequences of scalars that are not strings are neither tokens nor feature matrices."""
    if isinstance(X, list | tuple) and X and isinstance(X[0], list | tuple) and X[0]:
        tok = X[0][0]
        if np.isscalar(tok) and not isinstance(tok, str):
            raise InvalidInputError(
                f"X[0][0] is {tok!r} ({type(tok).__name__}): tokens must be strings; pass token "
                "lists of str, a SequenceDataset, or featurized (tokens × features) matrices"
            )


def _order_tags(tags: set[str]) -> list[str]:
    """``O`` first, then by entity type, ``B-`` before ``I-`` (as ``SequenceDataset``)."""
    return sorted(tags, key=lambda t: (t != "O", t[2:], t[:2]))


def _featurizer_config(featurizer: Any) -> dict[str, Any]:
    """A featurizer's constructor parameters as JSON (a model file's)."""
    from bicrit.estimators.pieces import ctor_params

    params = ctor_params(featurizer)
    params["columns"] = list(params.get("columns", ()))
    return params


class SequenceSVM(StructuredSVM):
    """Sequence labelling (NER, chunking, POS) with a first-order linear chain
    (:class:`bicrit.structures.Chain`), trained with any surrogate.

    Inputs ``X``: a :class:`bicrit.datasets.SequenceDataset` (``Y`` then defaults to its tags),
    raw token sequences (a list of lists of str), both featurized by ``featurizer`` (default
    :class:`bicrit.datasets.SequenceFeaturizer` with ``2**18`` hashed features); or already
    featurized tokens: a :class:`bicrit.datasets.HashedSequences`, a ``(token_matrix,
    offsets)`` pair or a list of per-sequence ``(T × d)`` matrices (dense or CSR). ``Y``: tag
    strings per sequence (mapped to ids, ``tags_``, and back in :meth:`predict`) or int state ids.

    **score** is the *entity micro-F1* (CoNLL chunk semantics, pooled over types) when the tags
    are IOB tags (``O``, ``B-X``, ``I-X``), the *token accuracy* otherwise; :meth:`report` gives
    token accuracy, micro/macro entity scores and the per-sentence F1 (the thesis's NER
    "Micro-F1").

    Parameters
    ----------
    featurizer : SequenceFeaturizer or None
        Applied to token inputs; None: ``SequenceFeaturizer()``.
    loss : {"hamming", "segment"}, default "hamming"
        The chain's task loss: wrong tokens, or chunk-level FP + FN (IOB string tags only).
    learner : str, default "auto"
        ``"auto"`` trains with BCFW (line search, no step size to tune) the surrogates that
        allow it — margin, slack, β, generalized, Micro-F1 — and with SGD (Pegasos schedule)
        ProbLoss and the log loss (:func:`bicrit.learners.auto_learner`): on CoNLL-2002 BCFW
        reaches a better dev entity F1 in fewer epochs than SGD's default Pegasos step
        (``benches/RESULTS-sequence.md``, ``benches/learners/bench_sequence_default.py``).
        ProbLoss learns
        nothing from scratch on chains (its subgradient vanishes at large margins), so its
        fits warm up with margin rescaling for half of ``max_epochs`` (``warmup="auto"``, see
        :class:`StructuredSVM`), as :mod:`bicrit.reproduce.ner` does.

    Notes
    -----
    The other parameters are :class:`StructuredSVM`'s. Hashed binary features need no scaling.
    """

    dataset_type = datasets.SequenceDataset
    # fitted attributes (set by fit, absent before)
    tags_: list[Any] | None
    _fit_tags: list[Any] | None

    def __init__(
        self,
        featurizer: Any = None,
        loss: str = "hamming",
        surrogate: Any = "margin",
        search: Any = "auto",
        learner: str = "auto",
        slack_norm: int = 1,
        C: float = 1.0,
        max_epochs: int = 50,
        tol: float | None = 1e-3,
        n_iter_no_change: int | None = 3,
        n_jobs: int | None = None,
        random_state: int | None = None,
        warm_start: bool = False,
        warmup: int | str = "auto",
        verbose: int = 0,
        surrogate_params: Mapping[str, Any] | None = None,
        search_params: Mapping[str, Any] | None = None,
        learner_params: Mapping[str, Any] | None = None,
    ) -> None:
        _init_params(self, locals())

    def _check_params(self) -> None:
        super()._check_params()
        check_choice("loss", self.loss, ("hamming", "segment"))

    def _structure_spec(self) -> tuple[Any, dict[str, Any]]:
        params: dict[str, Any] = {"loss": self.loss}
        tags = getattr(self, "_fit_tags", None)
        if tags is not None:
            params["tag_names"] = tags
            params["scheme"] = self._fit_scheme
        elif self.loss == "segment":
            raise InvalidParameterError("loss='segment' needs string IOB tags in Y")
        return "chain", params

    def _featurizer(self) -> Any:
        from bicrit.datasets import SequenceFeaturizer

        return SequenceFeaturizer(DEFAULT_FEATURES) if self.featurizer is None else self.featurizer

    def _features(self, X: Any) -> Any:
        """Token inputs featurized; featurized inputs as the chain takes them."""
        from bicrit.datasets import HashedSequences, SequenceDataset

        if isinstance(X, SequenceDataset) or _is_token_lists(X):
            if isinstance(X, SequenceDataset) and len(X) == 0:
                raise InvalidInputError("X holds no sentences")
            hs = self._featurizer().transform(X)
            return (hs.X, hs.offsets)
        if isinstance(X, HashedSequences):
            return (X.X, X.offsets)
        if isinstance(X, list | tuple) and len(X) == 0:
            raise InvalidInputError("X holds no sequences")
        _check_not_raw_tokens(X)
        return X

    def _split(self, X: Any, Y: Any) -> tuple[Any, Any]:
        from bicrit.datasets import SequenceDataset

        if isinstance(X, SequenceDataset) and Y is None:
            return X, X.tags
        return X, Y

    def _prepare_fit(
        self, X: Any, Y: Any, source: Any = None, shared: Mapping[str, Any] | None = None
    ) -> tuple[Any, Any]:
        from bicrit.datasets import SequenceDataset, detect_tag_scheme

        if Y is None:
            raise InvalidInputError("Y is required (tags per sequence) unless X is a dataset")
        Y = list(Y) if not isinstance(Y, np.ndarray) else Y
        continuing = bool(self.warm_start) and hasattr(self, "coef_")
        strings = len(Y) > 0 and not isinstance(Y, np.ndarray) and self._string_tags(Y)
        if strings:
            if continuing and self.tags_ is not None:
                tags = list(self.tags_)
            else:
                tags = _order_tags({t for seq in Y for t in seq})
            self.tags_ = tags
            self.iob_ = is_iob(tags)
            if self.iob_:
                if isinstance(X, SequenceDataset):
                    scheme = X.tag_scheme.lower()
                else:
                    scheme = detect_tag_scheme(Y).lower()
            else:
                scheme = "iob2"
            self._fit_tags, self._fit_scheme = tags, scheme
            Y = self._encode(Y)
        else:
            self.tags_ = None
            self.iob_ = False
            self._fit_tags = None
        if not continuing:
            self.featurizer_ = self._featurizer()
        return self._features(X), Y

    @staticmethod
    def _string_tags(Y: Any) -> bool:
        for seq in Y:
            if isinstance(seq, str):
                raise InvalidInputError("Y must hold one tag sequence per sentence, got a str")
            if len(seq):
                return isinstance(seq[0], str)
        return False

    def _encode(self, Y: Any) -> list[np.ndarray]:
        index = {t: i for i, t in enumerate(self.tags_ or [])}
        out = []
        for i, seq in enumerate(Y):
            try:
                out.append(np.fromiter((index[t] for t in seq), dtype=np.int64, count=len(seq)))
            except KeyError as exc:
                raise InvalidInputError(
                    f"Y[{i}] has the tag {exc.args[0]!r}, unseen in training "
                    f"(known tags: {', '.join(self.tags_ or [])})"
                ) from None
        return out

    def _prepare_inputs(self, X: Any) -> Any:
        from bicrit.datasets import SequenceDataset

        if isinstance(X, SequenceDataset) or _is_token_lists(X):
            hs = self.featurizer_.transform(X)
            return (hs.X, hs.offsets)
        return self._features(X)

    def _score_labels(self, X: Any, Y: Any, P: Any = None) -> list[Any]:
        if Y is None:
            raise InvalidInputError("Y is required unless X is a dataset")
        gold = list(Y)
        if gold and np.ndim(gold[0]) == 0 and P is not None:  # one flat array over all tokens
            gold = np.split(np.asarray(gold), np.cumsum([len(p) for p in P])[:-1])
        if P is not None and len(gold) != len(P):
            raise InvalidInputError(f"X has {len(P)} sequences but Y has {len(gold)}")
        return gold

    # -- model file ----------------------------------------------------------------------------

    def _params_config(self) -> dict[str, Any]:
        out = super()._params_config()
        if self.featurizer is not None:
            params = _featurizer_config(self.featurizer)
            out["featurizer"] = {"featurizer": "SequenceFeaturizer", "params": params}
        return out

    def _extra_config(self) -> dict[str, Any]:
        fp = _featurizer_config(self.featurizer_)
        return {"tags": self.tags_, "iob": bool(self.iob_), "featurizer_": fp}

    @classmethod
    def _import(cls, config: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> Any:
        from bicrit.datasets import SequenceFeaturizer

        config = dict(config)
        params = dict(config["params"])
        f = params.get("featurizer")
        if isinstance(f, Mapping):
            params["featurizer"] = SequenceFeaturizer(**dict(f["params"]))
        config["params"] = params
        return super()._import(config, arrays)

    def _import_extra(self, config: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
        from bicrit.datasets import SequenceFeaturizer

        self.tags_ = config.get("tags")
        self.iob_ = bool(config.get("iob"))
        self.featurizer_ = SequenceFeaturizer(**dict(config["featurizer_"]))
        self.featurizer_._check_params()
        tags, k = self.tags_, int(self.structure_.n_states)
        strings = isinstance(tags, list) and all(isinstance(t, str) for t in tags)
        if not strings or not isinstance(tags, list) or len(tags) != k:
            raise ModelFormatError(f"tags must be {k} strings, got {tags!r:.80}")
        if self.featurizer_.n_features != self.structure_.n_features:
            raise ModelFormatError(
                f"the featurizer makes {self.featurizer_.n_features} features, the structure "
                f"takes {self.structure_.n_features}"
            )
        self._fit_tags = self.tags_
        self._fit_scheme = getattr(self.structure_, "scheme", "iob2")
