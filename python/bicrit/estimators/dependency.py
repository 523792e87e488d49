"""``DependencySVM``: arc-factored dependency parsing (structure ``dependency``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from bicrit import datasets
from bicrit.errors import InvalidInputError, InvalidParameterError
from bicrit.estimators.structured import StructuredSVM, _init_params

__all__ = ["DependencySVM", "sentences_of"]


def sentences_of(X: Any) -> list[Any]:
    """Sentence objects from a :class:`bicrit.datasets.TreebankDataset` (one dict per sentence
    with ``words``, ``upos`` — XPOS when the treebank has no UPOS —, ``lemmas``, ``xpos``,
    ``heads``, ``deprels``) or a sequence of sentence objects (returned as a list)."""
    from bicrit.datasets import TreebankDataset

    if isinstance(X, TreebankDataset):
        upos = X.upos if X.upos is not None else X.xpos
        if upos is None:
            raise InvalidInputError("the treebank has no POS column (UPOS or XPOS)")
        out = []
        for i in range(len(X)):
            out.append(
                {
                    "words": X.words[i],
                    "upos": upos[i],
                    "lemmas": None if X.lemmas is None else X.lemmas[i],
                    "xpos": None if X.xpos is None else X.xpos[i],
                    "heads": X.heads[i],
                    "deprels": None if X.deprels is None else X.deprels[i],
                }
            )
        return out
    if isinstance(X, Mapping) or hasattr(X, "words"):
        raise InvalidInputError("X must be a sequence of sentences, got a single sentence")
    try:
        return list(X)
    except TypeError:
        raise InvalidInputError(
            f"X must be a TreebankDataset or a sequence of sentences, got {type(X).__name__}"
        ) from None


class DependencySVM(StructuredSVM):
    """Dependency parsing with arc-factored trees (:class:`bicrit.structures.Dependency`:
    hashed McDonald-style arc features, Eisner or Chu–Liu–Edmonds), trained with any surrogate.

    Inputs ``X``: a :class:`bicrit.datasets.TreebankDataset` or a sequence of sentence objects
    (fields ``words``, ``upos``, optionally ``lemmas``, ``xpos``; dicts or attributes). ``Y``:
    ``(heads, relations)`` per sentence; ``None`` takes the sentences' own ``heads`` and
    ``deprels``. Features are hashed from the token strings: nothing to scale.

    :meth:`predict` returns one ``(heads, relation names)`` pair per sentence (``heads`` an int
    array, 0 = root) — only ``heads`` when ``labeled=False``.

    **score** is the *UAS* (unlabelled attachment score) over all tokens, punctuation included;
    :meth:`report` gives UAS/LAS, sentence-averaged scores and exact match
    (:func:`bicrit.metrics.dependency_report`).

    Parameters
    ----------
    n_features : int, default 2**20
        Hashed feature buckets (the length of the weight vector).
    projective : bool, default True
        Eisner (projective trees) or Chu–Liu–Edmonds (any tree).
    labeled : bool, default True
        Arcs carry relations (learned from the training trees: ``relations_``).
    label_weight : float, default 1.0
        Task loss of a right head with a wrong relation.

    Notes
    -----
    The other parameters are :class:`StructuredSVM`'s.
    """

    dataset_type = datasets.TreebankDataset

    @classmethod
    def for_dataset(cls, data: Any, **params: Any) -> DependencySVM:
        """Labelled trees when the treebank has relations (Malt-TAB may not)."""
        if isinstance(data, datasets.TreebankDataset) and data.deprels is None:
            params.setdefault("labeled", False)
        return cls(**params)

    def __init__(
        self,
        n_features: int = 2**20,
        projective: bool = True,
        labeled: bool = True,
        label_weight: float = 1.0,
        surrogate: Any = "margin",
        search: Any = "auto",
        learner: str = "sgd",
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
        lw = self.label_weight
        if isinstance(lw, bool) or not isinstance(lw, int | float | np.number) or not lw >= 0:
            raise InvalidParameterError(f"label_weight must be a float ≥ 0, got {lw!r}")

    def _structure_spec(self) -> tuple[Any, dict[str, Any]]:
        return "dependency", {
            "n_features": self.n_features,
            "projective": bool(self.projective),
            "labeled": bool(self.labeled),
            "label_weight": float(self.label_weight),
        }

    def _pairs(self, X: Any, Y: Any) -> tuple[list[Any], list[Any]]:
        """Sentences and their trees (``Y``, or the sentences' own ``heads``/``deprels``)."""
        from bicrit.structures.dependency import sentence_trees

        sentences = sentences_of(X)
        if not sentences:
            raise InvalidInputError("X holds no sentences")
        gold = sentence_trees(sentences, bool(self.labeled)) if Y is None else list(Y)
        if len(gold) != len(sentences):
            raise InvalidInputError(
                f"X has {len(sentences)} sentences but Y has {len(gold)} labels"
            )
        return sentences, gold

    def _prepare_fit(
        self, X: Any, Y: Any, source: Any = None, shared: Mapping[str, Any] | None = None
    ) -> tuple[Any, Any]:
        return self._pairs(X, Y)

    def _prepare_inputs(self, X: Any) -> Any:
        return sentences_of(X)

    def _score_labels(self, X: Any, Y: Any, P: Any = None) -> list[Any]:
        return self._pairs(X, Y)[1]

    @property
    def relations_(self) -> list[str]:
        """The relation names the model predicts."""
        from sklearn.utils.validation import check_is_fitted

        check_is_fitted(self, "coef_")
        return list(self.structure_.relations or [])
