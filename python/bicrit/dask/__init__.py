"""Training on a Dask cluster (``pip install "bicrit[dask]"``): the data stays on the workers,
only weights and sums cross the network, and the result is an ordinary fitted estimator.

>>> from distributed import Client, LocalCluster
>>> import dask, bicrit, bicrit.dask
>>> client = Client(LocalCluster(n_workers=2, threads_per_worker=1))
>>> parts = [dask.delayed(bicrit.datasets.read_conll)(p) for p in paths]   # or futures, paths
>>> model = bicrit.dask.fit(bicrit.SequenceSVM(learner="cutting-plane"), parts)
>>> model.save("ner.bicrit"); labels = bicrit.dask.predict(model, parts).compute()

Each partition (a dataset object or an ``(X, Y)`` pair, given as a ``dask.delayed`` object, a
future, or the path of a file each worker reads itself) is read and prepared once on one worker
and kept there with its learner's per-instance state (:mod:`bicrit.dask.worker`). The fit goes
through the estimator's own plan and the one fit driver (:mod:`bicrit.learners.fit`); its
epochs are rounds on the cluster (:mod:`bicrit.dask.runners`): ``cutting-plane`` gives the
local learner's iterates, ``bcfw`` runs CoCoA with a certified duality gap, ``sgd`` mixes
parameters every round. ``history_`` has the local columns plus ``round``, ``partitions``,
``bytes_sent`` (client → workers), ``bytes_per_worker`` (weights in + sums out),
``worker_time`` (slowest partition), ``worker_time_mean``, ``worker_cpu`` (the largest
partition's CPU seconds: its worker process's, not inflated by a loaded machine),
``worker_cpu_total`` (the partitions' CPU seconds: the round's compute on one machine),
``round_time`` and ``rebuilt``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from typing import Any

from bicrit.dask.cluster import ClusterLostError
from bicrit.dask.sources import PartitionError

__all__ = ["ClusterLostError", "PartitionError", "fit", "predict"]

#: Learners that train on partitions; ``"auto"`` picks BCFW where it applies, else SGD
#: (:func:`bicrit.learners.auto.auto_learner` with ``distributed=True``).
LEARNERS = ("cutting-plane", "bcfw", "sgd")

#: How distributed BCFW combines the partitions' changes
#: (:class:`~bicrit.dask.runners.CocoaRunner`).
AGGREGATIONS = ("add", "average")


def _client(client: Any) -> Any:
    if client is not None:
        return client
    from distributed import default_client

    try:
        return default_client()
    except ValueError:
        raise ValueError(
            "no Dask client: pass client=, or create one first (distributed.Client(...))"
        ) from None


def fit(
    estimator: Any,
    parts: Sequence[Any],
    *,
    client: Any = None,
    callback: Callable[[dict[str, Any]], Any] | None = None,
    aggregation: str = "add",
) -> Any:
    """Trains ``estimator`` (any :class:`~bicrit.StructuredSVM`) on the partitions ``parts`` on
    the cluster of ``client`` (None: the current default client) and returns it fitted.

    ``callback(row)`` is called after every round with its history row, as the estimator's
    ``fit(callback=)``. ``aggregation`` is how ``learner="bcfw"`` combines the partitions'
    changes: ``"add"`` (CoCoA+, σ' = K; the default, fewer rounds) or ``"average"`` (CoCoA).

    Partitions whose label spaces disagree (tags, classes, label counts, hierarchy) are refused
    before the first round; a partition that cannot be read or prepared is named in the error
    (:class:`PartitionError`). A partition lost with its worker is rebuilt on another from its
    source and the round is run again; when that is impossible, :class:`ClusterLostError` is
    raised and, after the first round, the estimator is left fitted with the last finished
    round's model (also in the error's ``estimator``). Ctrl-C keeps the finished rounds (the
    driver's rule: ``interrupted_`` is True). With ``warm_start=True`` a fitted estimator
    continues from its weights on the partitions (each prepared as the fitted estimator
    continues locally: its label space, vocabularies and scaling; the history goes on), with
    the 1-slack cutting plane or SGD: distributed BCFW's weights are the sum of its dual blocks
    and cannot start from given ones. The stability stop (``n_iter_no_change``)
    decodes a probe of at most 1000 training instances drawn from the partitions in proportion
    to their sizes and sent to the client once."""
    from bicrit.dask.cluster import Shards, deferred_sigint
    from bicrit.dask.runners import ClusterTraining
    from bicrit.dask.space import agree
    from bicrit.errors import IncompatibleError, InvalidParameterError
    from bicrit.estimators.pieces import create_piece
    from bicrit.learners import Learner
    from bicrit.learners.fit import PROBE_SIZE

    client = _client(client)
    parts = list(parts)
    if not parts:
        raise ValueError("parts is empty: give at least one partition")
    if aggregation not in AGGREGATIONS:
        raise InvalidParameterError(
            f"aggregation must be one of {AGGREGATIONS}, got {aggregation!r}"
        )
    if isinstance(estimator.C, str):
        raise InvalidParameterError(
            'C="auto" does not run on a cluster: it scores each C on held-out instances with '
            "the task's headline metric (e.g. entity F1), which does not add up over "
            "partitions; choose C locally on a sample (C='auto'), then fit on the cluster with "
            "that C (C=model.C_)"
        )
    continuing = bool(getattr(estimator, "warm_start", False)) and hasattr(estimator, "coef_")
    estimator._check_params()
    refusal = estimator._cluster_refusal()
    if refusal:
        raise IncompatibleError(refusal)
    if not continuing:
        estimator._forget()
    shards = Shards(client, parts, estimator, continuing=continuing)
    sigint = contextlib.ExitStack()
    shards.interrupted = sigint.enter_context(deferred_sigint())
    try:
        summaries = shards.prepare()
        names = [shards.name(s) for s in shards.all]
        if continuing:
            # each partition was prepared as the fitted estimator continues (its structure,
            # vocabularies and scaling): the label space is the fitted one
            agree(summaries, names)
            structure = estimator.structure_
        else:
            summaries = shards.share_statistics(summaries)
            space = agree(summaries, names)
            structure = create_piece("structure", space["structure"])
            for name, value in space.get("learnt", {}).items():
                setattr(structure, name, value)
            estimator.structure_ = structure
            estimator._import_extra(space["extra"], space["arrays"])
        _surrogate, _search, learner, params = estimator._pieces(structure, distributed=True)
        if learner not in LEARNERS:
            raise IncompatibleError(
                f"learner {learner!r} does not train on partitions: use one of {LEARNERS}"
            )
        if params.get("slack_norm", 1) != 1:
            raise IncompatibleError(
                "slack_norm=2 (squared slacks) does not train on partitions yet: CoCoA rounds "
                "add the partitions' changes of the 1-norm dual only"
            )
        stops = []
        if estimator.n_iter_no_change is not None:
            probe = shards.probe(PROBE_SIZE, estimator._probe_seed())
            gold = [y for _, ys in probe for y in ys]
            stop = estimator._stability_on(structure, [x for x, _ in probe], gold)
            stops += [] if stop is None else [stop]
            if stops and "task_loss" not in (estimator.learner_params or {}):
                params["task_loss"] = False  # the probe reports it, as in local fits
        else:
            shards.probe(0, 0)  # the workers release the inputs kept for it
        training = ClusterTraining(
            structure, None, None, Learner(learner, **params), shards, aggregation=aggregation
        )
        estimator._run(training, callback, continuing, stops=stops)
        _set_features(estimator, summaries)
    except ClusterLostError as exc:
        if not hasattr(estimator, "coef_"):
            estimator._forget()
            raise
        _set_features(estimator, summaries)
        exc.estimator = estimator
        exc.args = (
            f"{exc}; the estimator keeps the model of the last finished round "
            f"({estimator.n_epochs_} rounds)",
        )
        raise
    except BaseException:
        if not continuing:  # a failed continued fit keeps the model it continued, as locally
            estimator._forget()
        raise
    finally:
        shards.close()
        sigint.close()
        if hasattr(estimator, "coef_"):
            estimator._trainer = None  # the cluster's runner does not outlive the fit
    return estimator


def _set_features(estimator: Any, summaries: list[dict[str, Any]]) -> None:
    first = next(s for s in summaries if s["n"])
    if first.get("n_features_in") is not None:
        estimator.n_features_in_ = int(first["n_features_in"])


def _predict_part(model: Any, source: Any) -> list[Any]:
    from bicrit.dask.sources import materialize, split

    X, _ = split(materialize(source))
    return list(model.predict(X))


def predict(model: Any, parts: Sequence[Any]) -> Any:
    """The predictions of the fitted ``model`` on each partition (sources as :func:`fit`
    takes), as a :class:`dask.bag.Bag` of one prediction per instance, partition by
    partition."""
    import dask.bag as db
    from dask.delayed import delayed

    return db.from_delayed([delayed(_predict_part)(model, p) for p in parts])
