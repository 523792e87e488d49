"""1,000,000 documents and a 10,000-node hierarchy on a LocalCluster, generated on the workers
(:func:`bicrit.datasets.synthetic_lshtc_parts`): no process — the client included — ever holds
the whole set; each worker's memory limit is below the size of the prepared set
(benches/RESULTS-distributed.md, "1M documents").

Each of the ``--parts`` partitions is a pure ``dask.delayed`` call of
:func:`bicrit.datasets.synthetic_lshtc_part` (the set's generator parameters, the partition
index), computed on the worker that keeps it. Model: ``HierarchicalSVM(model="nhsvm",
learner="cutting-plane")``, the words hashed onto ``--hashed`` columns, C = ``--Cn``/n, for
``--rounds`` rounds (the distributed 1-slack cutting plane: the local learner's iterates),
``scale=False`` (the rows are L2-normalised already).
Recorded per round (a callback): the history row (objective, certified gap, the client's CPU,
the partitions' CPU, bytes per worker) and every worker's resident memory; at the end every
worker's peak (VmHWM) and the client's. One row file: ``--out`` (JSON, written after every
round).

    python benches/distributed/lshtc_million.py                        # the run of RESULTS
    python benches/distributed/lshtc_million.py --n 40000 --memory-limit 2GiB --rounds 2 \\
        --out /tmp/small.json                                           # the same, small
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

from bicrit._atomic import write_text


def _status(field: str) -> float:
    """This process's ``field`` of /proc/self/status (VmHWM, VmRSS), in MiB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _rss() -> float:
    return _status("VmRSS")


def _peak() -> float:
    return _status("VmHWM")


def generator(args: argparse.Namespace) -> dict[str, Any]:
    """The generator parameters shared by every partition."""
    return {
        "n_nodes": args.nodes,
        "n": args.n,
        "d": args.d,
        "words_per_doc": args.words,
        "seed": args.seed,
    }


def estimator(args: argparse.Namespace) -> Any:
    from bicrit import HierarchicalSVM

    return HierarchicalSVM(
        model="nhsvm",
        learner="cutting-plane",
        C=args.Cn / args.n,
        max_epochs=args.rounds,
        tol=None,
        n_iter_no_change=None,
        n_hashed_features=args.hashed,
        # the rows are L2-normalised tf-idf already; scaling would prepare every partition
        # twice (once for its moments, once with the merged ones)
        scale=False,
        n_jobs=1,
        random_state=0,
        learner_params={"task_loss": False},
    )


KEEP = (
    "round",
    "objective",
    "gap",
    "working_set",
    "cpu",
    "time",
    "worker_time",
    "worker_cpu",
    "worker_cpu_total",
    "partitions",
    "round_time",
    "bytes_per_worker",
    "bytes_sent",
    "rebuilt",
)


def run(args: argparse.Namespace) -> None:
    import dask
    from distributed import Client, LocalCluster

    import bicrit.dask
    from bicrit.datasets import synthetic_lshtc_parts

    out = Path(args.out)
    result: dict[str, Any] = {
        "params": {k: v for k, v in vars(args).items() if k != "out"},
        "generator": generator(args),
        "started": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        "rounds": [],
    }

    def save() -> None:
        write_text(out, json.dumps(result, indent=1) + "\n")

    # the partitions are memory dask does not manage (it cannot spill them): pausing a worker
    # would only stall the fit; the limit acts as the nanny's, which restarts a worker above
    # 95 % of it
    with (
        dask.config.set({"distributed.worker.memory.pause": False}),
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=args.memory_limit,
            dashboard_address=None,
            worker_dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        result["worker_rss_before_mib"] = client.run(_rss)
        result["client_rss_before_mib"] = _rss()
        parts = synthetic_lshtc_parts(args.parts, **generator(args))
        result["graph_bytes"] = sum(
            len(__import__("pickle").dumps(dict(p.__dask_graph__()))) for p in parts
        )
        start = time.perf_counter()
        cpu0 = time.process_time()
        last = [start]

        def callback(row: dict[str, Any]) -> None:
            now = time.perf_counter()
            r = {k: row[k] for k in KEEP if k in row}
            r["wall_since_last"] = now - last[0]
            r["worker_rss_mib"] = client.run(_rss)
            r["worker_peak_mib"] = client.run(_peak)
            r["client_rss_mib"] = _rss()
            last[0] = now
            result["rounds"].append(r)
            save()
            print(json.dumps(r), flush=True)

        model = bicrit.dask.fit(estimator(args), parts, client=client, callback=callback)
        result["wall"] = time.perf_counter() - start
        result["client_cpu"] = time.process_time() - cpu0
        result["worker_peak_mib"] = client.run(_peak)
        result["worker_memory_limit_bytes"] = {
            a: w["memory_limit"] for a, w in client.scheduler_info()["workers"].items()
        }
        result["client_peak_mib"] = _peak()
        result["dim"] = int(model.coef_.size)
        result["nodes"] = int(model.hierarchy_.n_nodes)
        result["leaves"] = len(model.hierarchy_.leaves)
        result["n_features_in"] = int(model.n_features_in_)
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    save()
    print(json.dumps({k: v for k, v in result.items() if k != "rounds"}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1_000_000, help="training documents")
    ap.add_argument("--nodes", type=int, default=10_000)
    ap.add_argument("--d", type=int, default=100_000, help="word features before hashing")
    ap.add_argument("--words", type=float, default=10.0, help="mean word tokens per document")
    ap.add_argument("--hashed", type=int, default=256)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--parts", type=int, default=8)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--Cn", type=float, default=100.0, help="C·n (C = Cn / n)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--memory-limit", default="1.6GiB")
    ap.add_argument("--out", default="benches/distributed/lshtc_million.json")
    run(ap.parse_args())


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
