"""An MLP encoder trained with the hierarchical structured loss (issue 18, item 4): features →
one score per node of a tree or DAG hierarchy, trained end to end with
:class:`bicrit.torch.HierarchyLoss` — the structured hinge (or any bicrit surrogate) of the
label scores S(y) = Σ_{n ∈ y} σ_n(x) over ancestor-closed node sets, loss-augmented inference
by a tree DP or a min-cut on DAGs, as :class:`~bicrit.HierarchicalSVM`'s HSVM does with linear
node scores (thesis eq. ``HSVM``, margin rescaling with the node Hamming loss).

Node scores for ranking (AU(PRC)) are the same max-marginal margins as the linear models'
(docs/hierarchy-scores.md): δ_n(x) = max_{y ∋ n} S(y) − max_{y ∌ n} S(y), coherent with the
hierarchy; :class:`~bicrit.hierarchy.NodeCalibration` turns them into probabilities.

Training: Adam on mini-batches; a seeded ``stop_fraction`` of the training data is held out
of the gradient steps, and the epoch with the best AU(PRC) of its node scores is kept (early
stopping after ``patience`` epochs without improvement). The held-out part's node scores and
labels at that epoch are kept (``stop_scores_``, ``stop_labels_``) as calibration data that the
kept weights were not trained on.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from bicrit.errors import InvalidInputError, InvalidParameterError

__all__ = ["HierarchicalMLP"]

#: Task losses: ``"node"`` — the node Hamming loss of HSVM; ``"weighted"`` — its class-balanced
#: form (a missed node n costs 1/(2·f_n), a wrongly predicted one 1/(2·(1 − f_n)), f_n its
#: training frequency; :func:`bicrit.hierarchy.models.task_loss`).
LOSSES = ("node", "weighted")


class HierarchicalMLP:
    """Per-node scores from an MLP, trained with the hierarchical structured loss.

    Parameters
    ----------
    hierarchy:
        A :class:`bicrit.hierarchy.Hierarchy` (tree or DAG).
    hidden:
        Widths of the hidden layers (ReLU, dropout after each).
    dropout:
        Dropout probability after each hidden layer.
    multilabel_loss:
        ``"node"`` or ``"weighted"`` (:data:`LOSSES`).
    surrogate:
        Any bicrit surrogate name (``"margin"``: the structured hinge).
    lr, weight_decay, batch_size:
        Adam's step size and L2 penalty; instances per step.
    max_epochs, patience, stop_fraction:
        Early stopping (module docstring).
    stop_exclude:
        Node ids left out of the early-stopping AU(PRC) besides the root (e.g. the Gene
        Ontology roots).
    random_state:
        Seeds the held-out split, the initialisation, dropout and the batch order.
    n_jobs:
        Threads of the native max-marginals (None: all).
    """

    def __init__(
        self,
        hierarchy: Any,
        *,
        hidden: Sequence[int] = (512, 512),
        dropout: float = 0.5,
        multilabel_loss: str = "node",
        surrogate: str = "margin",
        lr: float = 1e-3,
        weight_decay: float = 1e-5,
        batch_size: int = 32,
        max_epochs: int = 60,
        patience: int = 6,
        stop_fraction: float = 0.2,
        stop_exclude: Sequence[int] = (),
        random_state: int = 0,
        n_jobs: int | None = None,
    ) -> None:
        self.hierarchy = hierarchy
        self.hidden = tuple(int(h) for h in hidden)
        self.dropout = dropout
        self.multilabel_loss = multilabel_loss
        self.surrogate = surrogate
        self.lr = lr
        self.weight_decay = weight_decay
        self.batch_size = batch_size
        self.max_epochs = max_epochs
        self.patience = patience
        self.stop_fraction = stop_fraction
        self.stop_exclude = tuple(int(v) for v in stop_exclude)
        self.random_state = random_state
        self.n_jobs = n_jobs

    # ------------------------------------------------------------------ checks

    def _check_params(self) -> None:
        if self.multilabel_loss not in LOSSES:
            raise InvalidParameterError(
                f"multilabel_loss must be one of {LOSSES}, got {self.multilabel_loss!r}"
            )
        if not 0.0 <= float(self.dropout) < 1.0:
            raise InvalidParameterError(f"dropout must be in [0, 1), got {self.dropout}")
        if not 0.0 < float(self.stop_fraction) < 1.0:
            raise InvalidParameterError(
                f"stop_fraction must be in (0, 1), got {self.stop_fraction}"
            )
        for name in ("batch_size", "max_epochs", "patience"):
            if int(getattr(self, name)) < 1:
                raise InvalidParameterError(f"{name} must be ≥ 1, got {getattr(self, name)}")
        if not self.hidden or min(self.hidden) < 1:
            raise InvalidParameterError(f"hidden must be positive widths, got {self.hidden}")

    def _check_fitted(self) -> None:
        if not hasattr(self, "module_"):
            from sklearn.exceptions import NotFittedError

            raise NotFittedError("this HierarchicalMLP is not fitted yet; call fit(X, Y) first")

    def _original_hierarchy(self) -> Any:
        return self.hierarchy

    def _split(self, X: Any, Y: Any) -> tuple[Any, Any]:
        return X, Y

    def _check_y(self, h: Any, Y: Any, n: int) -> list[np.ndarray]:
        """Label sets (node-id sequences, ancestor-closed; the root may be left out), checked."""
        from bicrit.hierarchy.labels import check_labels

        try:
            out = [np.unique(np.asarray(list(y), dtype=np.int64)) for y in Y]
        except (TypeError, ValueError):
            raise InvalidInputError("Y must be a sequence of label sets (node ids)") from None
        out = [y[y != h.root] for y in out]
        check_labels(h, out, leaves=False)
        if len(out) != n:
            raise InvalidInputError(f"X has {n} instances but Y has {len(out)} labels")
        return out

    def _check_x(self, X: Any) -> np.ndarray:
        A = np.asarray(X, dtype=np.float64)
        if A.ndim != 2:
            raise InvalidInputError(f"X must be 2-D (instances × features), got shape {A.shape}")
        if hasattr(self, "mean_") and A.shape[1] != self.mean_.shape[0]:
            raise InvalidInputError(
                f"X has {A.shape[1]} features but the model was fitted on {self.mean_.shape[0]}"
            )
        if np.isinf(A).any():
            raise InvalidInputError("X contains infinity")
        return A

    def _standardised(self, A: np.ndarray) -> np.ndarray:
        """Standardised with the fitted moments; missing values (NaN) become the mean (0)."""
        Z = (A - self.mean_) / self.std_
        return np.where(np.isnan(Z), 0.0, Z)

    # ------------------------------------------------------------------ fit

    def _structure(self, Y: list[np.ndarray]) -> Any:
        from bicrit.hierarchy.models import Weights, task_loss
        from bicrit.structures.hierarchy import HierarchyStructure

        h = self.hierarchy
        M = h.n_nodes
        w = Weights(np.ones(M), "node", np.ones(M))
        kind = "node" if self.multilabel_loss == "node" else "weighted"
        w = task_loss(kind, w, h, [np.append(y, h.root) for y in Y], M)
        return HierarchyStructure(
            h,
            labels="any",
            multilabel=True,
            loss="node",
            node_loss_weight=w.loss_weight,
            node_miss_weight=w.miss_weight,
            n_features=1,
        )

    def _indicator(self, Y: list[np.ndarray]) -> np.ndarray:
        G = np.zeros((len(Y), self.hierarchy.n_nodes), dtype=np.int64)
        for i, y in enumerate(Y):
            G[i, y] = 1
        G[:, self.hierarchy.root] = 1
        return G

    def _build(self, d: int) -> nn.Module:
        layers: list[nn.Module] = []
        width = d
        for h in self.hidden:
            layers += [nn.Linear(width, h), nn.ReLU(), nn.Dropout(float(self.dropout))]
            width = h
        layers.append(nn.Linear(width, self.hierarchy.n_nodes))
        return nn.Sequential(*layers).to(torch.float64)

    def fit(self, X: Any, Y: Any) -> HierarchicalMLP:
        """Trains on ``(X, Y)`` (``Y``: label sets of node ids; module docstring) and returns
        ``self``. Attributes: ``module_`` (the network at the kept epoch), ``best_epoch_``,
        ``history_`` (per epoch: training loss, held-out AU(PRC)), ``stop_scores_`` and
        ``stop_labels_`` (held-out node scores and labels at the kept epoch)."""
        from bicrit.torch.losses import HierarchyLoss

        self._check_params()
        A = self._check_x(X)
        Ys = self._check_y(self.hierarchy, Y, A.shape[0])
        n = A.shape[0]
        n_stop = max(1, round(float(self.stop_fraction) * n))
        if n - n_stop < 1:
            raise InvalidInputError(f"{n} instances are too few to hold {n_stop} out")
        rng = np.random.default_rng(self.random_state)
        perm = rng.permutation(n)
        stop, train = np.sort(perm[:n_stop]), np.sort(perm[n_stop:])
        with np.errstate(invalid="ignore"):
            self.mean_ = np.nan_to_num(np.nanmean(A[train], axis=0))
            std = np.nan_to_num(np.nanstd(A[train], axis=0))
        self.std_ = np.where(std > 0, std, 1.0)
        Z = torch.from_numpy(self._standardised(A))
        Yt = [Ys[i] for i in train]
        self.structure_ = self._structure(Yt)
        G = torch.from_numpy(self._indicator(Ys))
        torch.manual_seed(int(self.random_state))
        net = self._build(A.shape[1])
        loss_fn = HierarchyLoss(self.structure_, surrogate=self.surrogate)
        opt = torch.optim.Adam(net.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        keep = self._evaluated()
        Ystop = [Ys[i] for i in stop]
        best: tuple[float, int, Any, np.ndarray] | None = None
        self.history_: list[dict[str, float]] = []
        bs = int(self.batch_size)
        for epoch in range(1, int(self.max_epochs) + 1):
            net.train()
            order = train[rng.permutation(len(train))]
            total = 0.0
            for a in range(0, len(order), bs):
                idx = torch.from_numpy(order[a : a + bs])
                loss = loss_fn(net(Z[idx]), G[idx])
                opt.zero_grad()
                loss.backward()
                opt.step()
                total += float(loss.detach()) * len(idx)
            S = self._margins(net, Z[torch.from_numpy(stop)])
            ap = _au_prc(Ystop, S, keep)
            self.history_.append({"epoch": epoch, "loss": total / len(train), "stop_au_prc": ap})
            if best is None or ap > best[0]:
                best = (ap, epoch, copy.deepcopy(net.state_dict()), S)
            elif epoch - best[1] >= int(self.patience):
                break
        assert best is not None
        net.load_state_dict(best[2])
        net.eval()
        self.module_ = net
        self.best_epoch_ = best[1]
        self.stop_scores_ = best[3]
        self.stop_labels_ = Ystop
        self.n_features_in_ = A.shape[1]
        return self

    def _evaluated(self) -> np.ndarray:
        skip = {self.hierarchy.root, *self.stop_exclude}
        return np.array([v for v in range(self.hierarchy.n_nodes) if v not in skip], dtype=np.int64)

    # ------------------------------------------------------------------ scores

    @torch.no_grad()
    def _margins(self, net: nn.Module, Z: torch.Tensor) -> np.ndarray:
        net.eval()
        S = net(Z).numpy()
        with_, without = self.structure_.max_marginals(S, n_jobs=self.n_jobs)
        return np.asarray(with_ - without)

    def node_raw_scores(self, X: Any) -> np.ndarray:
        """(n, n_nodes) the network's own score σ_n(x) of every node."""
        self._check_fitted()
        Z = torch.from_numpy(self._standardised(self._check_x(X)))
        with torch.no_grad():
            return np.asarray(self.module_(Z).numpy())

    def node_scores(self, X: Any, *, threshold: float = 0.0) -> np.ndarray:
        """(n, n_nodes) max-marginal margins δ_n(x) of the network's node scores (module
        docstring; the root scores +∞), ``threshold`` added to every non-root node's score
        first, as in :meth:`bicrit.HierarchicalSVM.node_scores`."""
        S = self.node_raw_scores(X)
        if threshold:
            S = S + float(threshold)
            S[:, self.hierarchy.root] -= float(threshold)
        with_, without = self.structure_.max_marginals(S, n_jobs=self.n_jobs)
        return np.asarray(with_ - without)

    def predict(self, X: Any) -> list[np.ndarray]:
        """The best label of every instance (sorted node ids, root excluded)."""
        d = self.node_scores(X)
        root = self.hierarchy.root
        return [np.flatnonzero((row > 0) & (np.arange(row.size) != root)) for row in d]


def _au_prc(Y: list[np.ndarray], S: np.ndarray, keep: np.ndarray) -> float:
    from bicrit.metrics.hierarchy import au_prc

    return float(au_prc(Y, S, exclude=np.setdiff1d(np.arange(S.shape[1]), keep)))
