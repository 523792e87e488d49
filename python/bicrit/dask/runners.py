"""Runners of the fit driver (:mod:`bicrit.learners.fit`) whose epochs are rounds on a Dask
cluster: the driver, the plan of phases, stopping, Ctrl-C and history are the local fit's; only
the epoch differs. Each round broadcasts the weights and sums what the partitions send back.

* :class:`CutRunner` — the 1-slack cutting plane (Joachims, Finley & Yu 2009): each partition
  returns its cut Σ_i (c_i·Δφ_i, b_i) at w, the client adds the sum and solves the QP
  (:class:`bicrit._native.CutCoordinator`). The iterates are the local learner's up to the order
  of the floating-point sums.
* :class:`CocoaRunner` — BCFW in the CoCoA style: each partition runs a BCFW pass over its own
  dual blocks from w; the changes are added with σ' = K (CoCoA+, Ma et al. 2015; the default) or
  averaged (γ = 1/K, σ' = 1: CoCoA, Jaggi et al. 2014). Both are safe: the dual never decreases.
  Each round certifies the duality gap of the weights it started from.
* :class:`MixingRunner` — SGD by iterative parameter mixing (McDonald, Hall & Mann 2010): each
  partition runs an SGD epoch from the mixed weights; the new weights are the size-weighted mean.
  The model is the average of the rounds' averaged weights, weighted by round (as SGD's
  ``average="weighted"``). No certificate: its quality is measured against local SGD.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from bicrit.dask import worker
from bicrit.dask.cluster import Shard, Shards
from bicrit.learners.fit import Training

__all__ = ["ClusterTraining", "CocoaRunner", "CutRunner", "MixingRunner"]


@dataclass
class ClusterTraining(Training):
    """A :class:`~bicrit.learners.fit.Training` whose runners train on the partitions of
    ``shards`` (``X`` and ``Y`` stay on the workers and are None here)."""

    shards: Shards | None = None
    phase_count: int = field(default=0)
    #: How distributed BCFW aggregates the partitions' changes: ``"add"`` or ``"average"``.
    aggregation: str = "add"

    def __post_init__(self) -> None:
        super().__post_init__()
        # the structure the partitions were prepared with: a phase on another one (a plan
        # may replace ``structure``) sends its configuration to the workers
        self._prepared_on = self.structure

    def runner(
        self,
        surrogate: Any,
        search: Any,
        learner: Any = None,
        w0: Any = None,
        structure: Any = None,
    ) -> Any:
        """A runner on the cluster for ``surrogate`` and ``search`` from ``w0``."""
        from bicrit.learners import check

        assert self.shards is not None
        learner = self.learner if learner is None else learner
        s = self.structure if structure is None else structure
        check(learner.name, surrogate, search, s)
        self.phase_count += 1
        cls = {"cutting-plane": CutRunner, "bcfw": CocoaRunner, "sgd": MixingRunner}.get(
            learner.name
        )
        if cls is None:
            from bicrit.errors import IncompatibleError

            raise IncompatibleError(
                f"learner {learner.name!r} does not train on partitions: use 'cutting-plane', "
                "'bcfw' or 'sgd'"
            )
        config = None
        if s is not self._prepared_on:  # e.g. Shared SVM's new node weights
            from bicrit.estimators.pieces import structure_config

            config = structure_config(structure)
        runner = cls(self.shards, self.phase_count, surrogate, search, learner, w0, s, config)
        runner.aggregation = self.aggregation
        return runner


class _Runner:
    """What the three runners share: opening the phase's partitions, one round on them, the
    exact objective at the weights (an inference pass on every partition: Shared SVM's α steps
    ask for it), the cluster statistics in each row."""

    kind = ""
    aggregation = "add"

    def __init__(
        self,
        shards: Shards,
        phase: int,
        surrogate: Any,
        search: Any,
        learner: Any,
        w0: Any,
        structure: Any,
        structure_config: Any,
    ) -> None:
        self.shards = shards
        self.phase = phase
        self.surrogate = surrogate
        self.search = search
        self.learner = learner
        self.structure_config = structure_config
        self.dim = int(structure.size_joint_feature)
        self.n_instances = shards.n
        self.n_epochs = 0
        self.params = dict(learner.params)
        self.w = np.zeros(self.dim) if w0 is None else np.array(w0, dtype=np.float64)
        self.task_loss = bool(self.params.get("task_loss", False))
        self.shards.open(self._open)

    def _spec(self, shard: Shard) -> Any:
        """The learner of ``shard``'s native partition."""
        return self.learner

    def _open(self, shard: Shard) -> None:
        from bicrit.learners import resolve_search, resolve_surrogate

        self.shards.client.gather(
            self.shards.submit(
                shard,
                worker.open_phase,
                self.phase,
                self.structure_config,
                resolve_surrogate(self.surrogate),
                resolve_search(self.search),
                self._spec(shard),
            )
        )

    def _round(
        self, scale: float = 1.0, sigma: float = 1.0
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        def run(s: Shard, wf: Any) -> Any:
            return self.shards.submit(
                s, worker.run_round, self.phase, wf, scale, self.task_loss, sigma
            )

        return self.shards.round(self.w, run, self.kind, self._rebuilt)

    def _rebuilt(self, shard: Shard) -> None:
        self._open(shard)

    def evaluate(self, averaged: bool = True, task_loss: bool = False) -> dict[str, Any]:
        """The exact objective ½‖w‖² + C·Σ_i ℓ_i(w) at ``weights(averaged)``: one inference pass
        on every partition (warm starts read, not updated), as the local trainer's
        ``evaluate``; ``task_loss`` is not computed on the cluster (None)."""
        import time

        w = np.asarray(self.weights(averaged), dtype=np.float64)
        start = time.perf_counter()
        parts = self.shards.each_rebuilt(
            w,
            lambda s, wf: self.shards.submit(s, worker.evaluate, self.phase, wf),
            self._rebuilt,
        )
        loss = float(sum(p["loss"] for p in parts))
        norm_sq = float(w @ w)
        return {
            "objective": 0.5 * norm_sq + float(self.params["C"]) * loss,
            "loss": loss / self.n_instances,
            "norm_sq": norm_sq,
            "task_loss": None,
            "time": time.perf_counter() - start,
            **_calls(_sum_counts(parts)),
        }

    def objective(self, averaged: bool = True) -> float:
        """The exact primal objective at ``weights(averaged)`` (:meth:`evaluate`)."""
        return float(self.evaluate(averaged)["objective"])

    def weights(self, averaged: bool = True) -> np.ndarray:
        raise NotImplementedError

    def _row(self, stats: Mapping[str, Any], cluster: Mapping[str, Any]) -> dict[str, Any]:
        self.n_epochs += 1
        return {**stats, **cluster, "round": self.n_epochs}


class CutRunner(_Runner):
    """The distributed 1-slack cutting plane (module documentation)."""

    kind = "cutting-plane"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        from bicrit import _native

        self.coordinator = _native.CutCoordinator(self.learner, self.n_instances, self.dim, self.w)

    def epoch(self) -> Mapping[str, Any]:
        self.w = self.coordinator.weights()
        total, cluster = self._round()
        idx, vals, intercept, counts = total["out"]
        task = counts.pop("task_loss", None)
        stats = self.coordinator.round(
            np.ascontiguousarray(idx, dtype=np.int64),
            np.ascontiguousarray(vals, dtype=np.float64),
            float(intercept),
            counts,
            None if task is None else float(task) / self.n_instances,
        )
        self.w = self.coordinator.weights()
        return self._row(stats, cluster)

    def weights(self, averaged: bool = True) -> np.ndarray:
        return self.coordinator.weights()


class CocoaRunner(_Runner):
    """Distributed BCFW, CoCoA+ (adding) or CoCoA (averaging) (module documentation). The
    weights start at 0 (a dual method's w is the sum of its blocks; a warm start ``w0`` is
    refused)."""

    kind = "bcfw"

    def __init__(self, *args: Any) -> None:
        w0 = args[5]
        if w0 is not None and np.any(np.asarray(w0) != 0):
            from bicrit.errors import IncompatibleError

            raise IncompatibleError(
                "distributed 'bcfw' starts from w = 0 (its weights are the sum of its dual "
                "blocks): train without a warm start or use 'cutting-plane' or 'sgd'"
            )
        super().__init__(*args)
        self.tol = float(self.params.get("tol", 0.0))

    def _spec(self, shard: Shard) -> Any:
        seed = int(self.params.get("random_state", 0)) + shard.index
        return self.learner.replace(
            {"average": False, "objective": "running", "task_loss": False, "random_state": seed}
        )

    def _rebuilt(self, shard: Shard) -> None:
        # the rebuilt partition's blocks restart at 0: w becomes the sum of the live shares
        super()._rebuilt(shard)
        self._resync = True

    def epoch(self) -> Mapping[str, Any]:
        w = self.w
        k = len(self.shards.live)
        # adding (γ = 1) with the local subproblems' σ' = K, or averaging (γ = 1/K, σ' = 1)
        if self.aggregation == "add":
            total, cluster = self._round(1.0, float(k))
        else:
            total, cluster = self._round(1.0 / k, 1.0)
        delta, counts, start, dual_lin = total["out"]
        c = float(self.params["C"])
        norm_sq = float(w @ w)
        primal = 0.5 * norm_sq + c * float(start["loss"])
        if self._resync:
            # a partition restarted from zero blocks during this round: its old share is gone
            # from the dual point, so the round's gap is not certified; w is rebuilt
            shares = self.shards.each(worker.share, self.phase)
            self.w = np.sum([s[0] for s in shares], axis=0)
            dual_lin = float(sum(s[1] for s in shares))
            gap = math.nan
            self._resync = False
        else:
            self.w = w + delta
            # the dual of the round's starting point, D = −½‖w‖² + Σ_k dual_k, is that of the
            # blocks before the round; the partitions report theirs after it, so the gap of w
            # uses the previous round's dual share (kept below)
            gap = primal - (-0.5 * norm_sq + self._dual_before) if self.n_epochs else primal
        self._dual_before = float(dual_lin)
        converged = bool(math.isfinite(gap) and gap <= self.tol * max(abs(primal), 1e-300))
        # the round certified the weights it started from: those are the model when it ends here
        self._certified = w if converged else None
        task = counts.pop("task_loss", None)
        n = self.n_instances
        stats = {
            "epoch": self.n_epochs + 1,
            "learner": "bcfw",
            "objective": primal,
            "objective_kind": "exact",
            "loss": float(start["loss"]) / n,
            "norm_sq": norm_sq,
            "dual": primal - gap if math.isfinite(gap) else None,
            "gap": gap if math.isfinite(gap) else None,
            "converged": converged,
            **_calls(counts),
            "exact_calls": _total_calls(start),
            "task_loss": None if task is None else float(task) / n,
            "time": cluster["round_time"],
        }
        return self._row(stats, cluster)

    _dual_before = 0.0
    _resync = False
    _certified: np.ndarray | None = None

    def weights(self, averaged: bool = True) -> np.ndarray:
        """The weights the last round certified when it converged (its gap is that of these),
        else the current ones."""
        return self.w if self._certified is None else self._certified


class MixingRunner(_Runner):
    """Distributed SGD by iterative parameter mixing (module documentation)."""

    kind = "sgd"

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.avg = np.zeros(self.dim)
        self.avg_weight = 0.0
        self.t0_extra: dict[int, float] = {}

    def _spec(self, shard: Shard) -> Any:
        # C·n/n_k: the partition's λ = 1/(n_k·C_k) is the global λ = 1/(n·C)
        c = float(self.params["C"]) * self.shards.n / shard.n
        seed = int(self.params.get("random_state", 0)) + shard.index
        changes: dict[str, Any] = {"C": c, "random_state": seed, "task_loss": False}
        if self.params.get("schedule") == "pegasos" and self.n_epochs:
            # a rebuilt partition continues its step schedule
            steps = self.n_epochs * math.ceil(shard.n / int(self.params["batch_size"]))
            changes["t0"] = float(self.params["t0"]) + steps
        return self.learner.replace(changes)

    def epoch(self) -> Mapping[str, Any]:
        total, cluster = self._round()
        it_sum, av_sum, counts = total["out"]
        n = self.n_instances
        w_start = self.w
        self.w = it_sum / n
        round_avg = av_sum / n
        rho = float(self.n_epochs + 1)
        self.avg_weight += rho
        self.avg += (rho / self.avg_weight) * (round_avg - self.avg)
        task = counts.pop("task_loss", None)
        c = float(self.params["C"])
        norm_sq = float(w_start @ w_start)
        stats = {
            "epoch": self.n_epochs + 1,
            "learner": "sgd",
            "objective": 0.5 * norm_sq + c * float(counts["loss"]),
            "objective_kind": "running",
            "loss": float(counts["loss"]) / n,
            "norm_sq": norm_sq,
            "dual": None,
            "gap": None,
            "converged": False,
            **_calls(counts),
            "task_loss": None if task is None else float(task) / n,
            "time": cluster["round_time"],
        }
        return self._row(stats, cluster)

    def weights(self, averaged: bool = True) -> np.ndarray:
        if averaged and self.params.get("average", "none") != "none" and self.avg_weight > 0:
            return self.avg
        return self.w


_KINDS = ("lambda", "extreme", "cone", "ban", "kbest", "frontier")


def _sum_counts(parts: list[Mapping[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in parts:
        for k, v in p.items():
            if k != "time":
                out[k] = out.get(k, 0) + v
    return out


def _total_calls(counts: Mapping[str, Any]) -> int:
    return int(sum(int(counts.get(k, 0)) for k in _KINDS))


def _calls(counts: Mapping[str, Any]) -> dict[str, Any]:
    """The call counters of a round's summed counts, as the local stats name them."""
    total = _total_calls(counts)
    inf = int(counts.get("inferences", 0))
    return {
        "calls": total,
        **{f"calls_{k}": int(counts.get(k, 0)) for k in _KINDS},
        "evaluated": int(counts.get("evaluated", 0)),
        "inferences": inf,
        "calls_per_inference": total / inf if inf else 0.0,
        "fractional": int(counts.get("fractional", 0)),
        "gold": int(counts.get("gold", 0)),
    }
