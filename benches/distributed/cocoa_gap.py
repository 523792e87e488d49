"""Rounds to a certified duality gap for the distributed learners on CoNLL-2002 Spanish
(``esp.train``, SequenceSVM margin, C = 0.1), partitions read on the workers of a LocalCluster
of 2 workers (one thread each): BCFW as CoCoA+ (adding, σ' = K) and as CoCoA (averaging, γ = 1/K)
with K = 2 and 4 partitions, against the local BCFW's epochs (exact gap each epoch) and the
distributed 1-slack cutting plane (whose rounds are the local learner's epochs).

    python benches/distributed/cocoa_gap.py [--rounds 40] [--out benches/distributed/cocoa_gap.json]

Each run stops once its gap is ≤ 1 % of the primal (``tol`` of the learner) or after
``--rounds``; the rows are the gap/P after every round, with the worker and client times.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import time
from pathlib import Path

import numpy as np

from bicrit._atomic import write_text

C = 0.1
TOL = 0.01


def _slice(path: str, start: int, stop: int):
    """Partition [start, stop) of the file, read on the worker."""
    from bicrit.datasets import read_conll

    return read_conll(path).to_iob2().subset(range(start, stop))


def _gaps(model) -> list[float]:
    h = model.history_
    return (h["gap"] / h["objective"]).to_list()


def _first(gaps: list[float], t: float) -> int | None:
    return next((i + 1 for i, g in enumerate(gaps) if g is not None and g <= t), None)


def local(path: str, rounds: int) -> dict:
    import bicrit
    from bicrit.datasets import read_conll

    data = read_conll(path).to_iob2()
    est = bicrit.SequenceSVM(
        learner="bcfw",
        C=C,
        max_epochs=rounds,
        tol=1e-12,
        n_iter_no_change=None,
        random_state=0,
        learner_params={"objective": "exact", "tol": TOL, "task_loss": False},
    )
    cpu = time.process_time()
    est.fit(data)
    return {
        "run": "local bcfw",
        "gaps": _gaps(est),
        "cpu": time.process_time() - cpu,
        "epoch_time": float(np.median(est.history_["time"].to_numpy())),
    }


def distributed(path: str, n: int, rounds: int, k: int, learner: str, aggregation: str) -> dict:
    import dask
    from distributed import Client, LocalCluster

    import bicrit
    import bicrit.dask

    bounds = np.linspace(0, n, k + 1).astype(int)
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        parts = [dask.delayed(_slice)(path, int(a), int(b)) for a, b in itertools.pairwise(bounds)]
        est = bicrit.SequenceSVM(
            learner=learner,
            C=C,
            max_epochs=rounds,
            tol=1e-12,
            n_iter_no_change=None,
            random_state=0,
            learner_params={"task_loss": False, **({"tol": TOL} if learner == "bcfw" else {})},
        )
        start = time.perf_counter()
        bicrit.dask.fit(est, parts, client=client, aggregation=aggregation)
        wall = time.perf_counter() - start
    h = est.history_
    return {
        "run": f"{learner} K={k}" + (f" {aggregation}" if learner == "bcfw" else ""),
        "gaps": _gaps(est),
        "wall": wall,
        "round_time": float(np.median(h["round_time"].to_numpy())),
        "worker_time": float(np.median(h["worker_time"].to_numpy())),
        "bytes_per_worker": float(np.median(h["bytes_per_worker"].to_numpy())),
    }


def main() -> None:
    from bicrit.datasets import find_data_root, read_conll

    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--out", default="benches/distributed/cocoa_gap.json")
    ap.add_argument("--only", default=None, help="run only the runs whose name contains this")
    args = ap.parse_args()
    root = find_data_root()
    if root is None:
        raise SystemExit("BICRIT_DATA not found")
    path = str(Path(root) / "conll2002" / "esp.train")
    n = len(read_conll(path))
    out = Path(args.out)
    results = json.loads(out.read_text()) if out.is_file() else []
    runs = [
        ("local bcfw", lambda: local(path, args.rounds)),
        ("bcfw K=2 add", lambda: distributed(path, n, args.rounds, 2, "bcfw", "add")),
        ("bcfw K=2 average", lambda: distributed(path, n, args.rounds, 2, "bcfw", "average")),
        ("bcfw K=4 add", lambda: distributed(path, n, args.rounds, 4, "bcfw", "add")),
        ("bcfw K=4 average", lambda: distributed(path, n, args.rounds, 4, "bcfw", "average")),
    ]
    for name, run in runs:
        if args.only and args.only not in name:
            continue
        r = run()
        r["rounds_to"] = {str(t): _first(r["gaps"], t) for t in (0.1, 0.05, 0.02, 0.01)}
        results = [x for x in results if x["run"] != r["run"]] + [r]
        write_text(out, json.dumps(results, indent=1) + "\n")
        print(r["run"], r["rounds_to"], f"last gap/P {r['gaps'][-1]:.4g}", flush=True)


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
