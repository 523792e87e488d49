"""The worker side of :mod:`bicrit.dask`: each partition lives in its worker's process for the
whole fit, in a registry keyed by the fit and the partition — the inputs in the structure's form
and, per phase, the native :class:`bicrit._native.Partition` with its per-instance state. Tasks
pinned to that worker run its rounds; a task that finds no entry (the worker died and the task
ran elsewhere) raises :class:`PartitionLost`, and the client rebuilds the partition."""

from __future__ import annotations

import copy
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "PartitionLost",
    "close",
    "drop",
    "evaluate",
    "open_phase",
    "prepare",
    "probe",
    "run_round",
    "share",
]


class PartitionLost(RuntimeError):
    """The partition is not held by the worker that ran the task."""


@dataclass
class _Held:
    structure: Any
    X: Any
    Y: Any
    n: int
    phases: dict[int, Any] = field(default_factory=dict)
    #: The prepared inputs (the structure's form) until the fit's probe is taken from them.
    prepared: tuple[Any, Any] | None = None


_REGISTRY: dict[str, _Held] = {}
_LOCK = threading.Lock()


def _address() -> str:
    from distributed import get_worker

    try:
        return str(get_worker().address)
    except ValueError:  # run outside a worker (tests of the functions themselves)
        return "local"


def prepare(
    key: str,
    index: int,
    source: Any,
    estimator: Any,
    shared: dict[str, Any] | None = None,
    keep_prepared: bool = False,
    continuing: bool = False,
) -> dict[str, Any]:
    """Reads partition ``index`` (from ``source``), converts it to the structure's form as
    ``estimator``'s fit does (with the ``shared`` statistics of every partition when given),
    and keeps it here under ``key``. Returns its summary: the worker's address, the number of
    instances, its label space (structure configuration, the estimator's fitted vocabularies)
    for the client to compare across partitions, and the statistics it learnt its shape from
    (:meth:`StructuredSVM._fit_statistics`) for the client to merge. ``keep_prepared`` keeps
    the inputs in the structure's form until :func:`probe` takes the fit's probe from them.
    ``continuing``: prepared as the fitted ``estimator`` continues (``warm_start``: its
    structure, vocabularies and scaling)."""
    from sklearn.base import clone

    from bicrit.dask.sources import PartitionError, describe, materialize, split
    from bicrit.dask.space import label_space
    from bicrit.estimators import validation

    start = time.perf_counter()
    try:
        X, Y = split(materialize(source))
        est = copy.deepcopy(estimator) if continuing else clone(estimator)
        X0, _ = est._split(X, Y)
        if validation.n_rows(X0) == 0:
            return {"key": key, "address": _address(), "n": 0, "space": None}
        structure, Xp, Yp = est._prepared(X, Y, continuing=continuing, shared=shared)
        Xn, Yn = structure.native_inputs(Xp, Yp)
        est._set_n_features(Xn)
        n = validation.n_rows(Xp)
        assert n is not None  # prepared inputs have a length
        space = label_space(est, structure)
        statistics = est._fit_statistics(structure)
    except Exception as e:
        raise PartitionError(f"{describe(index, source)}: {e}") from e
    with _LOCK:
        _REGISTRY[key] = _Held(structure, Xn, Yn, n, prepared=(Xp, Yp) if keep_prepared else None)
    return {
        "key": key,
        "address": _address(),
        "n": n,
        "space": space,
        "statistics": statistics,
        "n_features_in": getattr(est, "n_features_in_", None),
        "time": time.perf_counter() - start,
    }


def _held(key: str) -> _Held:
    with _LOCK:
        held = _REGISTRY.get(key)
    if held is None:
        raise PartitionLost(f"partition {key} is not held by worker {_address()}")
    return held


def open_phase(
    key: str,
    phase: int,
    structure_config: Any,
    surrogate: Any,
    search: Any,
    learner: Any,
) -> int:
    """Builds the native partition of ``phase`` (its surrogate, search and learner, on the
    structure described by ``structure_config``, or the prepared one for None)."""
    from bicrit import _native
    from bicrit.estimators.pieces import create_piece
    from bicrit.learners import resolve_search, resolve_surrogate
    from bicrit.structures.base import as_native

    held = _held(key)
    structure = (
        held.structure if structure_config is None else create_piece("structure", structure_config)
    )
    part = _native.Partition(
        as_native(structure),
        held.X,
        held.Y,
        resolve_surrogate(surrogate),
        resolve_search(search),
        learner,
    )
    with _LOCK:
        held.phases = {phase: part}  # earlier phases are over
    return held.n


def probe(key: str, size: int, seed: int) -> Any:
    """``size`` instances of the partition drawn with ``seed`` and their labels, in the
    structure's form (the stability rule's probe, :meth:`StructuredSVM._stability`, whose task
    loss is the history's ``task_loss``); the prepared inputs are then
    released (a partition rebuilt later is not asked again)."""
    held = _held(key)
    with _LOCK:
        prepared, held.prepared = held.prepared, None
    if prepared is None or size <= 0:
        return None
    from bicrit.structures.base import take

    Xp, Yp = prepared
    rng = np.random.default_rng(seed)
    idx = np.sort(rng.choice(held.n, size=min(size, held.n), replace=False)).tolist()
    return held.structure.take(Xp, idx), list(take(Yp, idx))


def _phase(key: str, phase: int) -> Any:
    part = _held(key).phases.get(phase)
    if part is None:
        raise PartitionLost(f"partition {key} has no phase {phase} on worker {_address()}")
    return part


def run_round(
    key: str, phase: int, w: np.ndarray, scale: float, task_loss: bool, sigma: float = 1.0
) -> dict[str, Any]:
    """One round of the partition at ``w``: its native pass (GIL released), the wall time and
    the worker process's CPU time it took, with the size of what it sends back."""
    held = _held(key)
    part = _phase(key, phase)
    start, cpu = time.perf_counter(), time.process_time()
    out = part.round(np.ascontiguousarray(w, dtype=np.float64), scale, task_loss, sigma)
    elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
    nbytes = sum(int(x.nbytes) for x in out if isinstance(x, np.ndarray))
    return {
        "out": out,
        "time": {key: elapsed},
        "cpu": {key: cpu},
        "bytes": {key: nbytes},
        "n": held.n,
    }


def evaluate(key: str, phase: int, w: np.ndarray) -> dict[str, Any]:
    """The exact pass of the partition at ``w`` (:meth:`Partition.evaluate`): Σ_i ℓ_i(w) in
    ``loss`` and the pass's counters, with the time it took."""
    part = _phase(key, phase)
    start = time.perf_counter()
    counts = dict(part.evaluate(np.ascontiguousarray(w, dtype=np.float64)))
    counts["time"] = time.perf_counter() - start
    return counts


def share(key: str, phase: int) -> tuple[np.ndarray, float] | None:
    """The partition's share of the BCFW dual point (see :meth:`Partition.dual_share`)."""
    part = _phase(key, phase)
    share: tuple[np.ndarray, float] | None = part.dual_share()
    return share


def drop(key: str) -> bool:
    """Forgets the partition (end of the fit)."""
    with _LOCK:
        return _REGISTRY.pop(key, None) is not None


def close(keys: list[str]) -> int:
    """Forgets every partition of ``keys`` held here."""
    return sum(drop(k) for k in keys)
