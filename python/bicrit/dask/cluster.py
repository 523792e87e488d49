"""The client side of a distributed fit: the partitions, where each lives, and one round on all
of them — only the weights go out and only the partitions' sums come back (summed as a tree on
the workers when there are more than two). A partition whose worker died is rebuilt on a live
worker from its source (its ``dask.delayed`` object, future or path) and its round is run again;
the runner repairs its own state (:meth:`Runner.rebuilt`)."""

from __future__ import annotations

import contextlib
import signal
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from bicrit.dask import worker
from bicrit.dask.sources import describe
from bicrit.errors import InvalidInputError
from bicrit.learners.fit import LostTraining

__all__ = ["ClusterLostError", "Shard", "Shards", "combine", "deferred_sigint"]

#: Times a partition is rebuilt in one round before the fit gives up.
MAX_REBUILDS = 3
#: Times per partition a round's task may run away from the partition's live worker (and be
#: sent again) before the fit gives up.
MAX_MOVES = 5
#: Seconds a rebuild waits for a worker when the cluster has none (a nanny restarting one).
WORKER_WAIT = 60.0
#: Seconds between two looks at a Ctrl-C while a round's tasks run.
POLL = 0.1


@contextlib.contextmanager
def deferred_sigint() -> Iterator[Callable[[], bool]]:
    """Ctrl-C during a distributed fit, recorded where it lands and raised as
    ``KeyboardInterrupt`` by the round's wait (:meth:`Shards._run_all`), between two of
    distributed's calls. Raised inside one of them (``distributed.utils.sync``), it can cancel
    a future that does not exist yet, and the event loop logs a ``NameError`` traceback under
    the user's one-line warning. Yields whether Ctrl-C was pressed; outside the main thread
    (where no handler can be set) it never is."""
    if threading.current_thread() is not threading.main_thread():
        yield lambda: False
        return
    pressed = False

    def record(signum: int, frame: object) -> None:
        nonlocal pressed
        pressed = True

    previous = signal.signal(signal.SIGINT, record)
    try:
        yield lambda: pressed
    finally:
        signal.signal(signal.SIGINT, previous)


class ClusterLostError(LostTraining):
    """A partition could not be rebuilt (its source is gone with its worker, or the workers keep
    dying). Raised after the first round, the estimator is left fitted with the model of the
    last finished round (``estimator``; :func:`bicrit.dask.fit` says so in the message)."""

    #: The estimator, fitted with the finished rounds (None when the fit lost its data before
    #: its first round).
    estimator: Any = None


@dataclass
class Shard:
    """One partition: its registry key on the workers, its source and where it lives."""

    index: int
    key: str
    source: Any
    address: str = ""
    n: int = 0
    #: The ``dask.delayed`` object (or other dask collection) the partition was given as: its
    #: ``source`` is then the future computing it, and a rebuild computes it again.
    origin: Any = None


def combine(a: dict[str, Any], b: dict[str, Any], kind: str) -> dict[str, Any]:
    """The sum of two round results (or partial sums) of learner ``kind``: cuts, weight
    changes, counts and dual shares add; times and sizes are kept per partition."""
    out: dict[str, Any] = {
        "time": {**a["time"], **b["time"]},
        "cpu": {**a["cpu"], **b["cpu"]},
        "bytes": {**a["bytes"], **b["bytes"]},
    }
    out["n"] = a["n"] + b["n"]
    if kind == "cutting-plane":
        (ia, va, ca, ka), (ib, vb, cb, kb) = a["out"], b["out"]
        idx = np.concatenate([ia, ib])
        vals = np.concatenate([va, vb])
        u, inv = np.unique(idx, return_inverse=True)
        sums = np.zeros(len(u))
        np.add.at(sums, inv, vals)
        keep = sums != 0.0
        out["out"] = (u[keep], sums[keep], ca + cb, _add(ka, kb))
    elif kind == "bcfw":
        (da, ka, sa, ua), (db, kb, sb, ub) = a["out"], b["out"]
        out["out"] = (da + db, _add(ka, kb), _add(sa, sb), ua + ub)
    else:  # sgd: weighted by partition size
        (ia, aa, ka), (ib, ab, kb) = a["out"], b["out"]
        out["out"] = (ia + ib, aa + ab, _add(ka, kb))
    return out


def _add(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    return {k: a.get(k, 0) + b.get(k, 0) for k in set(a) | set(b)}


def _weighted(result: dict[str, Any]) -> dict[str, Any]:
    """An SGD partition's weights times its size (so that partial sums add)."""
    it, av, counts = result["out"]
    n = result["n"]
    return {**result, "out": (it * n, av * n, counts)}


class Shards:
    """The partitions of one fit on ``client`` (see the module documentation)."""

    def __init__(
        self, client: Any, sources: Sequence[Any], estimator: Any, continuing: bool = False
    ) -> None:
        self.client = client
        self.estimator = estimator
        #: The partitions are prepared as the fitted ``estimator`` continues (warm_start).
        self.continuing = continuing
        fit_id = uuid.uuid4().hex[:12]
        self.all = [Shard(i, f"bicrit-{fit_id}-{i}", s) for i, s in enumerate(sources)]
        self.rebuilds = 0
        #: The merged statistics of every partition (:meth:`share_statistics`), used again
        #: when a partition is rebuilt.
        self.shared: dict[str, Any] | None = None
        #: Whether the workers keep the prepared inputs for the probe (:meth:`probe`).
        self.keep_prepared = True
        #: Whether Ctrl-C was pressed (:func:`deferred_sigint`), looked at by every round.
        self.interrupted: Callable[[], bool] = lambda: False

    @property
    def live(self) -> list[Shard]:
        """The non-empty partitions."""
        return [s for s in self.all if s.n > 0]

    @property
    def n(self) -> int:
        return sum(s.n for s in self.all)

    def name(self, shard: Shard) -> str:
        return describe(shard.index, shard.source)

    def _workers(self) -> list[str]:
        """The scheduler's running workers, asked now: the client's own view
        (``scheduler_info``) can lag behind and still list a worker that died — a task
        restricted to it, even loosely, waits forever when no other worker is left."""

        def running(dask_scheduler: Any = None) -> list[str]:  # pickled by value
            return sorted(
                a for a, ws in dask_scheduler.workers.items() if ws.status.name == "running"
            )

        return list(self.client.run_on_scheduler(running))

    def _live_workers(self) -> list[str]:
        """The workers, after waiting up to :data:`WORKER_WAIT` seconds for one when there is
        none (a nanny restarting the cluster's only worker)."""
        deadline = time.monotonic() + WORKER_WAIT
        while not (workers := self._workers()):
            if time.monotonic() > deadline:

                def statuses(dask_scheduler: Any = None) -> dict[str, str]:
                    return {a: ws.status.name for a, ws in dask_scheduler.workers.items()}

                raise ClusterLostError(
                    f"the cluster has no running worker (waited {WORKER_WAIT:g} s; "
                    f"workers: {self.client.run_on_scheduler(statuses) or 'none'})"
                )
            self._raise_if_interrupted()
            time.sleep(POLL)
        return workers

    def prepare(self, shards: Sequence[Shard] | None = None) -> list[dict[str, Any]]:
        """Reads and prepares the partitions on the workers (spread round-robin, or where a
        future's data is); returns their summaries."""
        from dask.base import is_dask_collection

        first = shards is None
        shards = list(self.all if shards is None else shards)
        workers = self._live_workers()
        futures = []
        for j, s in enumerate(shards):
            where = [workers[(s.index if first else j) % len(workers)]]
            if is_dask_collection(s.source):
                # computed where it will live
                if s.origin is None:
                    s.origin = s.source
                s.source = self.client.compute(s.source, workers=where, allow_other_workers=True)
            futures.append(
                self.client.submit(
                    worker.prepare,
                    s.key,
                    s.index,
                    s.source,
                    self.estimator,
                    self.shared,
                    self.keep_prepared,
                    self.continuing,
                    key=f"prepare-{s.key}-{uuid.uuid4().hex[:6]}",
                    workers=where,
                    allow_other_workers=True,
                    pure=False,
                )
            )
        summaries = self._gather_named(shards, futures)
        for s, summary in zip(shards, summaries, strict=True):
            s.address, s.n = summary["address"], int(summary["n"])
        return list(summaries)

    def _gather_named(self, shards: Sequence[Shard], futures: list[Any]) -> list[Any]:
        """The results of the partitions' preparing tasks; a task cancelled because its source
        is gone (a future whose data was lost) is a :class:`PartitionError` naming the
        partition."""
        from concurrent.futures import CancelledError

        from bicrit.dask.sources import PartitionError

        with contextlib.suppress(CancelledError):  # told per partition below
            self._wait(futures)
        for s, f in zip(shards, futures, strict=True):
            if f.status == "cancelled":
                raise PartitionError(
                    f"{self.name(s)}: its source is gone (a future whose data was lost or "
                    "cancelled); a dask.delayed object or a path can be computed again"
                )
        return list(self.client.gather(futures))

    def share_statistics(self, summaries: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Merges the statistics each partition learnt its shape from (label counts of a
        learnt label graph, moments of a feature scaling) and, when there are any and more than
        one partition holds data, prepares every partition again with the merged ones, so that
        all of them learn the shape of the whole data; returns the summaries that hold."""
        parts = [s["statistics"] for s in summaries if s["n"] and s.get("statistics")]
        if len(parts) < 2:
            return summaries
        merged = dict(parts[0])
        for stats in parts[1:]:
            if set(stats) != set(merged):
                raise InvalidInputError(
                    f"partitions learnt different statistics: {sorted(merged)} and {sorted(stats)}"
                )
            merged = {k: merged[k].merge(v) for k, v in stats.items()}
        self.shared = merged
        return self.prepare()

    def submit(self, shard: Shard, fn: Callable[..., Any], *args: Any) -> Any:
        """``fn(shard.key, *args)`` on the partition's worker."""
        return self.client.submit(
            fn,
            shard.key,
            *args,
            workers=[shard.address],
            allow_other_workers=True,
            pure=False,
        )

    def each(self, fn: Callable[..., Any], *args: Any) -> list[Any]:
        """``fn`` on every non-empty partition; results in order (no rebuild)."""
        return list(self.client.gather([self.submit(s, fn, *args) for s in self.live]))

    def broadcast(self, w: np.ndarray) -> Any:
        """``w`` scattered to every worker once (a future): not once per task, nor inside the
        task graph. A worker that died a moment ago makes the scatter fail until the scheduler
        has removed it (a lost connection, or the scheduler's ``KeyError`` naming the worker it
        is removing): it is tried again."""
        for attempt in range(MAX_REBUILDS + 1):
            try:
                self._live_workers()
                return self.client.scatter(w, broadcast=True, hash=False)
            except Exception as exc:
                if not (_is_loss(exc) or isinstance(exc, KeyError)) or attempt == MAX_REBUILDS:
                    raise
                time.sleep(0.5 * (attempt + 1))
        raise AssertionError("unreachable")

    def probe(self, size: int, seed: int) -> list[Any]:
        """About ``size`` training instances in all with their labels (pairs, one per
        partition), drawn from each partition in proportion to its size (seeded by ``seed``
        and the partition), in the structure's form — the
        stability rule's probe; the workers then release the prepared inputs they kept for it
        (``size`` 0: release only)."""
        n = self.n
        futures = []
        for s in self.live:
            m = min(s.n, -(-size * s.n // n)) if size > 0 else 0
            futures.append(self.submit(s, worker.probe, m, seed * 1_000_003 + s.index))
        self.keep_prepared = False
        return [p for p in self.client.gather(futures) if p is not None]

    def open(self, open_one: Callable[[Shard], None]) -> None:
        """``open_one(shard)`` (a phase's native partition) on every non-empty partition,
        rebuilding those lost with their worker."""
        for s in self.live:
            try:
                open_one(s)
            except Exception as exc:
                if not _is_loss(exc):
                    raise
                self._rebuild([s])
                open_one(s)

    def each_rebuilt(
        self,
        w: np.ndarray,
        run: Callable[[Shard, Any], Any],
        rebuilt: Callable[[Shard], None],
    ) -> list[Any]:
        """The results of ``run(shard, wf)`` (a task submitted with the weights ``w`` sent to
        the workers as ``wf``) on every non-empty partition, in order; partitions lost with
        their worker are rebuilt (``rebuilt(shard)`` reopens their phase) and run again, with
        the weights sent again (:meth:`_run_all`)."""
        return list(self._retried(w, run, rebuilt, self.client.gather)[0])

    def _retried(
        self,
        w: np.ndarray,
        run: Callable[[Shard, Any], Any],
        rebuilt: Callable[[Shard], None],
        collect: Callable[[list[Any]], Any],
    ) -> tuple[Any, int]:
        """``collect`` (a gather or a reduction) of the round tasks ``run(shard, wf)`` of every
        non-empty partition (:meth:`_run_all`), with the number of rebuilds. A round whose
        finished results are lost before they are collected (their worker died: the
        scheduler runs the task again elsewhere, where the partition is not held, or cancels
        it) is run again from the start, at most :data:`MAX_REBUILDS` times."""
        rebuilds = 0
        for attempt in range(MAX_REBUILDS + 1):
            futures, n = self._run_all(w, run, rebuilt)
            rebuilds += n
            try:
                return collect([futures[s.key] for s in self.live]), rebuilds
            except Exception as exc:
                if not _is_loss(exc) or attempt == MAX_REBUILDS:
                    raise
        raise AssertionError("unreachable")

    def _run_all(
        self, w: np.ndarray, run: Callable[[Shard, Any], Any], rebuilt: Callable[[Shard], None]
    ) -> tuple[dict[str, Any], int]:
        """Sends ``w`` to the workers once (:meth:`broadcast`), submits ``run(shard, wf)`` for
        every non-empty partition and waits. Tasks that failed because their partition is
        gone, or were cancelled because their input is (the weights died with the only worker
        holding them), are run again with the weights sent again; partitions whose worker is
        gone are rebuilt first (at most :data:`MAX_REBUILDS` times). Ctrl-C cancels the
        tasks."""
        pending = {s.key: s for s in self.live}
        futures: dict[str, Any] = {}
        attempts = misplaced = 0
        wf = self.broadcast(w)
        try:
            while pending:
                self._raise_if_interrupted()
                for key, s in pending.items():
                    futures[key] = run(s, wf)
                self._wait([futures[k] for k in pending])
                lost = []
                for key in list(pending):
                    f = futures[key]
                    if f.status == "cancelled":  # an input is gone (the weights)
                        lost.append(pending[key])
                    elif f.status == "error":
                        exc = f.exception()
                        if not _is_loss(exc):
                            raise exc
                        lost.append(pending[key])
                pending = {}
                if not lost:
                    break
                # a task the scheduler moved away from a live holder (work stealing: the
                # restrictions are loose so that a dead worker's tasks still run), or cancelled
                # with its holder alive, is sent again; only partitions whose worker is gone are
                # rebuilt
                alive = set(self._workers())
                moved = [s for s in lost if s.address in alive]
                gone = [s for s in lost if s.address not in alive]
                misplaced += len(moved)
                if misplaced > MAX_MOVES * max(len(self.live), 1):
                    raise ClusterLostError(
                        f"the scheduler kept running rounds away from their partitions' workers "
                        f"({misplaced} times): is work stealing forcing tasks onto other workers?"
                    )
                if gone:
                    attempts += 1
                    if attempts > MAX_REBUILDS:
                        names = ", ".join(self.name(s) for s in gone)
                        raise ClusterLostError(f"{names}: lost {attempts} times in one round")
                    self._rebuild(gone)
                    for s in gone:
                        rebuilt(s)
                # the weights may have died with a worker (the only holder of their copy):
                # they are sent again, to the live workers
                wf.release()
                wf = self.broadcast(w)
                pending = {s.key: s for s in lost}
        except KeyboardInterrupt:
            # the round is abandoned: its tasks stop being waited for (the driver keeps the
            # finished rounds)
            with contextlib.suppress(Exception):
                self.client.cancel(list(futures.values()))
            raise
        finally:
            with contextlib.suppress(Exception):  # the tasks that used them have finished
                wf.release()
        return futures, attempts

    def _raise_if_interrupted(self) -> None:
        if self.interrupted():
            raise KeyboardInterrupt

    def _wait(self, futures: list[Any]) -> None:
        """Waits for ``futures``, looking at a deferred Ctrl-C (:func:`deferred_sigint`) every
        :data:`POLL` seconds. Cancelled futures end the wait as the others do (the caller
        reads each one's status)."""
        from concurrent.futures import CancelledError

        from distributed import wait

        while True:
            self._raise_if_interrupted()
            try:
                wait(futures, timeout=POLL)
                return
            except TimeoutError:
                continue
            except CancelledError:  # raised once every future is done, some cancelled
                return

    def round(
        self,
        w: np.ndarray,
        run: Callable[[Shard, Any], Any],
        kind: str,
        rebuilt: Callable[[Shard], None],
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """One round at ``w``: ``run(shard, wf)`` submits each partition's round task with the
        weights sent to the workers (``wf``); the results are summed (``combine``) and returned
        with the round's cluster statistics. Partitions lost with their worker are rebuilt
        (``rebuilt(shard)`` reopens their phase) and run again (:meth:`_retried`)."""
        start = time.perf_counter()
        total, attempts = self._retried(w, run, rebuilt, lambda fs: self._reduce(fs, kind))
        wall = time.perf_counter() - start
        times = total["time"]
        sizes = total["bytes"]
        k = len(self.live)
        stats = {
            "partitions": k,
            "bytes_sent": int(w.nbytes) * k,
            "bytes_per_worker": (int(w.nbytes) + sum(sizes.values()) / max(k, 1)),
            "worker_time": max(times.values()) if times else 0.0,
            "worker_time_mean": sum(times.values()) / max(k, 1),
            "worker_cpu": max(total["cpu"].values()) if times else 0.0,
            "worker_cpu_total": sum(total["cpu"].values()),
            "round_time": wall,
            "rebuilt": attempts,
        }
        return total, stats

    def _reduce(self, futures: list[Any], kind: str) -> dict[str, Any]:
        """The sum of the round results: on the client for one or two partitions, else as a
        binary tree of tasks on the workers (the client receives one result)."""
        prep = _weighted if kind == "sgd" else (lambda r: r)
        if len(futures) <= 2:
            results = [prep(r) for r in self.client.gather(futures)]
            total = results[0]
            for r in results[1:]:
                total = combine(total, r, kind)
            return total
        level = [self.client.submit(prep, f, pure=False) for f in futures]
        while len(level) > 1:
            nxt = [
                self.client.submit(combine, level[i], level[i + 1], kind, pure=False)
                for i in range(0, len(level) - 1, 2)
            ]
            if len(level) % 2:
                nxt.append(level[-1])
            level = nxt
        return dict(self.client.gather(level[0]))

    def _rebuild(self, lost: Sequence[Shard]) -> None:
        from dask.graph_manipulation import clone

        for s in lost:
            if s.origin is not None:
                # computed again under new keys: the scheduler can leave the old computation
                # waiting forever for the dead worker it was placed on (when no worker was left
                # at that moment), and the partition's worker is chosen anew
                s.source = clone(s.origin, seed=uuid.uuid4().hex)
        try:
            self.prepare(lost)
        except Exception as e:
            names = ", ".join(self.name(s) for s in lost)
            raise ClusterLostError(
                f"{names}: lost with its worker and could not be rebuilt from its source: {e}"
            ) from e
        self.rebuilds += len(lost)

    def close(self) -> None:
        """Forgets the partitions on every worker, and the data computed from their
        ``dask.delayed`` sources (held by the scheduler while this object lives, which a
        reference cycle can make last until Python's garbage collector runs)."""
        for s in self.all:
            if s.origin is not None and s.source is not s.origin:
                with contextlib.suppress(Exception):
                    s.source.release()
                s.source = s.origin
        keys = [s.key for s in self.all]
        with contextlib.suppress(Exception):  # a closed cluster holds nothing any more
            self.client.run(worker.close, keys)


def _is_loss(exc: BaseException | None) -> bool:
    """Whether a task failed because its partition or its worker is gone, or was cancelled
    because an input died with its worker (the scheduler's "lost dependencies")."""
    from concurrent.futures import CancelledError

    from distributed import KilledWorker
    from distributed.comm.core import CommClosedError

    return isinstance(
        exc, worker.PartitionLost | KilledWorker | CommClosedError | OSError | CancelledError
    )
