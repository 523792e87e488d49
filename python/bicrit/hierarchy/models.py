"""The models of :class:`~bicrit.hierarchy.HierarchicalSVM` as small strategies (thesis
hierarchical chapter). Each says which node weights α, loss and node loss weights it trains
with, and which phases the fit driver runs (:mod:`bicrit.learners.fit`):

=========== ==================================================================================
model       node weights α, loss; phases
=========== ==================================================================================
``flat``    α = 1 on the leaves, 0 elsewhere (multiclass over the leaves): 0/1 loss (single
            label: half the node Hamming with weights α, two leaves differ), leaf Hamming
            (multi-label); the estimator's phases
``hsvm``    HSVM (Cai & Hofmann; eq. ``HSVM``): α = 1, node Hamming; the estimator's phases
``nhsvm``   NHSVM (eq. ``NHSVM``): α from ``min Σ α^ρ`` (:func:`~bicrit.hierarchy.node_weights`),
            feature map scaled by √α, normalized loss √(Σ_{y △ y_i} α) (eq. ``wserror``; single
            label) or leaf Hamming (multi-label); the estimator's phases
``nhsvm3``  NHSVM3 (eq. ``NHSVM3``): max(0, max_{y ≠ y_i} m(y)/‖Λ̃(y) − Λ̃(y_i)‖ + 1), single
            label; one phase of the native NHSVM3 SGD learner (the loss is a ratio, not a
            bi-criteria surrogate, so the generic learners do not run it)
``ssvm``    Shared SVM (eq. ``SSVMp``): alternation of ``alpha_every`` epochs on V with
            U = √α·V and the α step ``argmin Σ‖U_n‖²/α_n`` (eq. ``optimize_alpha``), from the
            ρ = 2 weights with α_root = 0; loss fixed while α moves (``ssvm_loss``)
=========== ==================================================================================

Multi-label models can train with another task loss (``multilabel_loss``, :func:`task_loss`):
``"leaf"`` (the thesis's leaf Hamming Δ_L), ``"node"`` (node Hamming over the non-root nodes,
HSVM's) or ``"weighted"`` (node Hamming with class-balanced costs: a missed node n costs
1/(2·f_n) and a wrongly predicted one 1/(2·(1 − f_n)), f_n its training frequency — the
weights of scikit-learn's ``class_weight="balanced"`` per node, so that rare nodes are not
simply never predicted); ``"auto"`` keeps the model's own.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any, ClassVar

import numpy as np

from bicrit.errors import IncompatibleError, check_choice
from bicrit.hierarchy.alpha import (
    flat_alpha,
    keep_positive,
    node_weights,
    power_alpha,
    shared_alpha,
)
from bicrit.hierarchy.graph import Hierarchy
from bicrit.learners.fit import FitState, Fixed, Phase, Training, continued

__all__ = ["MODELS", "MULTILABEL_LOSSES", "Model", "model", "task_loss"]

#: The task losses of multi-label models (``HierarchicalSVM(multilabel_loss=...)``).
MULTILABEL_LOSSES = ("auto", "leaf", "node", "weighted")


@dataclass(frozen=True)
class Weights:
    """What a model trains with on one hierarchy: node weights α (the feature scale squared),
    the loss kind of the ``hierarchy`` structure and its node loss weights."""

    alpha: np.ndarray
    loss: str
    loss_weight: np.ndarray
    miss_weight: np.ndarray | None = None
    """Cost of a missed node of y_i when it differs from ``loss_weight`` (``None``: the same)."""


class Model:
    """A hierarchical model: its node weights and loss (:meth:`weights`), its checks and its
    phases (:meth:`plan`; default: the estimator's, a warm-up when asked then the surrogate)."""

    name: ClassVar[str] = ""
    #: Whether the model trains single labels only.
    single_label: ClassVar[bool] = False
    #: Why the model cannot train on a cluster (:mod:`bicrit.dask`), or None.
    cluster_refusal: ClassVar[str | None] = None

    def weights(self, est: Any, h: Hierarchy, multilabel: bool) -> Weights:
        raise NotImplementedError

    def training_weights(
        self, est: Any, h: Hierarchy, multilabel: bool, counts: np.ndarray, n: int
    ) -> Weights:
        """:meth:`weights`, with the task loss of ``est.multilabel_loss`` for multi-label
        training labels whose node counts are ``counts`` (over the first nodes of ``h``) out of
        ``n`` labels (:func:`task_loss`)."""
        w = self.weights(est, h, multilabel)
        if multilabel and est.multilabel_loss != "auto":
            w = task_loss(est.multilabel_loss, w, h, counts, n, int(est.n_nodes_original_))
        return w

    def check(self, est: Any) -> None:
        """Model-specific parameter checks (before any data is read)."""

    def plan(self, est: Any, training: Training, surrogate: Any, search: Any, w0: Any) -> Any:
        return est._default_plan(training, surrogate, search, w0)


class Flat(Model):
    name = "flat"

    def weights(self, est: Any, h: Hierarchy, multilabel: bool) -> Weights:
        a = flat_alpha(h)
        if multilabel:
            return Weights(a, "leaf", np.ones(h.n_nodes))
        # two leaf paths differ in exactly two leaves: weights ½ give the 0/1 loss
        return Weights(a, "node", a / 2)


class HSVM(Model):
    name = "hsvm"

    def weights(self, est: Any, h: Hierarchy, multilabel: bool) -> Weights:
        return Weights(np.ones(h.n_nodes), "node", np.ones(h.n_nodes))


def _normalized(est: Any, h: Hierarchy, multilabel: bool, alpha: np.ndarray) -> Weights:
    alpha = np.maximum(alpha, 0.0)
    if multilabel:
        return Weights(alpha, "leaf", np.ones(h.n_nodes))
    return Weights(alpha, "normalized", alpha.copy())


class NHSVM(Model):
    name = "nhsvm"

    def weights(self, est: Any, h: Hierarchy, multilabel: bool) -> Weights:
        relaxed = est.T is not None
        a = node_weights(
            h,
            float(est.rho),
            relaxed=relaxed,
            T=float(est.T) if relaxed else 1.5,
            include_root=bool(est.include_root),
        )
        return _normalized(est, h, multilabel, a)


class NHSVM3(NHSVM):
    name = "nhsvm3"
    single_label = True
    cluster_refusal = (
        "model='nhsvm3' does not train on a cluster: its loss is a ratio (eq. NHSVM3), not a "
        "bi-criteria surrogate, so it runs its own native SGD loop over the whole training set "
        "(bicrit._native.Nhsvm3Trainer), which has no partition pass; train it on one machine, "
        "or use model='nhsvm' or 'ssvm' on the cluster"
    )

    def check(self, est: Any) -> None:
        if est.labels == "any":
            raise IncompatibleError(
                "labels='any' cannot train model='nhsvm3': its ratio oracle enumerates leaf paths"
            )
        if est.learner != "sgd" or est.surrogate != "margin":
            raise IncompatibleError(
                "model='nhsvm3' trains with its own SGD loop over the ratio oracle: it needs "
                f"learner='sgd' and surrogate='margin', got learner={est.learner!r}, "
                f"surrogate={est.surrogate!r}"
            )

    def plan(self, est: Any, training: Training, surrogate: Any, search: Any, w0: Any) -> Any:
        """One phase of ``bicrit._native.Nhsvm3Trainer`` (Pegasos SGD on eq. ``NHSVM3``:
        η_t = 1/(λ(t + 1)), λ = 1/(n·C), subgradient (φ(x, ŷ) − φ(x, y_i))/L(ŷ),
        t-weighted averaging; GIL released, the inferences of a block of SGD's ``block_size``
        instances on ``n_jobs`` threads at the block's starting weights, its steps then applied
        in order, as SGD's)."""
        from bicrit import _native

        s, p = training.structure, training.learner.params

        def start(previous: Any) -> Any:
            return _native.Nhsvm3Trainer(
                s._require(),
                training.X,
                training.Y,
                C=float(p["C"]),
                batch_size=int(p.get("batch_size", 1)),
                block_size=int(p.get("block_size", 1)),
                random_state=int(p["random_state"]),
                n_jobs=int(p["n_jobs"]),
                w0=None if w0 is None else np.ascontiguousarray(w0, dtype=np.float64),
            )

        return [Phase("v", start, int(est.max_epochs), {"round": 0})]


class SSVM(Model):
    name = "ssvm"

    def weights(self, est: Any, h: Hierarchy, multilabel: bool) -> Weights:
        relaxed = est.T is not None
        # the root is in every label, so its block cancels in every margin and SSVM's optimum
        # has U_root = 0, hence α_root = 0: start there (ρ = 2 weights of the other nodes)
        a = power_alpha(
            h, 2.0, relaxed=relaxed, T=float(est.T) if relaxed else 1.5, include_root=False
        )
        a = np.maximum(a, 0.0)
        if multilabel:
            return Weights(a, "leaf", np.ones(h.n_nodes))
        if est.ssvm_loss == "hamming":  # Δ = Δ^H (eq. HSVM): un-normalized, independent of α
            return Weights(a, "node", np.ones(h.n_nodes))
        if est.ssvm_loss == "zero_one":  # 1[l ≠ l_i]: two leaf paths differ in two leaves
            return Weights(a, "node", flat_alpha(h) / 2)
        return Weights(a, "normalized", a.copy())

    def plan(self, est: Any, training: Training, surrogate: Any, search: Any, w0: Any) -> Any:
        """Shared SVM's alternating optimisation (thesis §"Optimizing with the shared norm"):
        ``alpha_every`` epochs on V at fixed α, then the α step with U = √α·V fixed (so the loss
        is unchanged) — α ← argmin Σ‖U_n‖²/α_n, kept positive by mixing in ``alpha_eps`` of the
        starting α (α = 0 is absorbing) — V ← U/√α; until the exact objective after an α step
        changes by at most ``tol`` (relative) or ``max_alternations``. SGD's step schedule
        continues across the rounds."""
        alpha0 = est._alpha_now.copy()

        def phases(state: FitState) -> Iterator[Phase]:
            h = est.hierarchy_
            alpha, w, prev = alpha0, w0, None
            est.objective_path_ = []
            for r in range(int(est.max_alternations)):
                structure = est._hierarchy_structure(alpha)
                training.structure = structure

                def start(previous: Any, structure: Any = structure, w: Any = w) -> Any:
                    learner = training.learner
                    if previous is not None:
                        learner = continued(previous, learner)
                    return training.runner(surrogate, search, learner, w, structure=structure)

                yield Phase("v", start, int(est.alpha_every), {"round": r})
                # the native Trainer of the phase just run (its weights, not the protocol's)
                trainer: Any = state.runner
                w_v = np.asarray(trainer.weights(True), dtype=np.float64)
                U = np.sqrt(alpha)[:, None] * structure.rows(w_v)
                a_new = keep_positive(
                    shared_alpha(h, np.einsum("ij,ij->i", U, U)), alpha0, float(est.alpha_eps)
                )
                V = np.divide(
                    U, np.sqrt(a_new)[:, None], out=np.zeros_like(U), where=a_new[:, None] > 0
                )
                new = est._hierarchy_structure(a_new)
                w_new = new.flat(V)
                # the exact objective at (V, α): one inference pass of a trainer at w_new
                ev = dict(
                    training.runner(surrogate, search, None, w_new, structure=new).evaluate(
                        False, False
                    )
                )
                obj = float(ev["objective"])
                # the objective before the step, ½‖w_v‖² + C·Σξ: the step keeps U, so the node
                # scores and the slacks Σξ (one inference pass each) are those at w_new — only
                # the regulariser differs (equal up to rounding; no second pass)
                obj_v = obj + 0.5 * (float(w_v @ w_v) - float(w_new @ w_new))
                # the step lands at once: structure, α and weights together
                training.structure, est._alpha_now, alpha, w = new, a_new, a_new, w_new
                state.runner = Fixed(w_new, like=trainer)
                est.objective_path_.append((obj_v, obj))
                state.record(
                    {
                        "phase": "alpha",
                        "round": r,
                        "objective": obj,
                        "loss": ev.get("loss"),
                        "norm_sq": ev.get("norm_sq"),
                        "time": ev.get("time"),
                    }
                )
                if (
                    est.tol is not None
                    and prev is not None
                    and abs(prev - obj) <= est.tol * abs(obj)
                ):
                    break
                prev = obj
            est.n_alternations_ = len(est.objective_path_)

        return phases


def task_loss(
    kind: str, w: Weights, h: Hierarchy, counts: np.ndarray, n: int, n_original: int
) -> Weights:
    """``w`` with the multi-label task loss ``kind`` (module docstring) over the first
    ``n_original`` nodes (virtual leaves, added after them, cost nothing under ``"node"`` and
    ``"weighted"``), node frequencies ``counts / n`` from the ``n`` training labels
    (``counts`` over the first ``len(counts)`` nodes of ``h``)."""
    M = h.n_nodes
    if kind == "leaf":
        return replace(w, loss="leaf", loss_weight=np.ones(M), miss_weight=None)
    real = (np.arange(M) < n_original).astype(np.float64)
    if kind == "node":
        return replace(w, loss="node", loss_weight=real, miss_weight=None)
    full = np.zeros(M)
    full[: len(counts)] = counts
    n = max(n, 1)
    f = np.clip(full / n, 1.0 / (n + 1), n / (n + 1))  # unseen or ubiquitous nodes: finite
    return replace(w, loss="node", loss_weight=real / (2 * (1 - f)), miss_weight=real / (2 * f))


#: The models of :class:`~bicrit.hierarchy.HierarchicalSVM`, by name.
MODELS: dict[str, Model] = {m.name: m for m in (Flat(), HSVM(), NHSVM(), NHSVM3(), SSVM())}


def model(name: str) -> Model:
    """The model called ``name``."""
    check_choice("model", name, tuple(MODELS))
    return MODELS[name]
