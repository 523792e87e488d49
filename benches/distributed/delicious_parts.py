"""A partitioned run larger than the CoNLL one: delicious (983 labels, 12,920 training
instances, 500 features), the training ARFF split into K part files, each read by the worker that
holds it (file-path partitions, ``bicrit.datasets.read_file``), on a LocalCluster of 2 workers
with a memory limit. Default ``MultiLabelSVM`` (``edges="auto"``: the Chow–Liu tree of the
merged label counts; ``learner="auto"``: BCFW as CoCoA+ on the cluster), a fixed number of
rounds. Reports bytes per round per worker, each worker's peak resident memory, the round and
worker times, and micro-F1 on the test split against the local fit of the same rounds.

    python benches/distributed/delicious_parts.py [--parts 4] [--rounds 15]
        [--out benches/distributed/delicious_parts.json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import tempfile
import time
from pathlib import Path

import numpy as np

from bicrit._atomic import write_text


def split_arff(path: Path, xml: Path, k: int, out: Path) -> list[str]:
    """The data rows of ``path`` in ``k`` contiguous part files (header repeated), each with the
    label file beside it (its own folder)."""
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip().lower() == "@data")
    header, rows = lines[: at + 1], [r for r in lines[at + 1 :] if r.strip()]
    bounds = np.linspace(0, len(rows), k + 1).astype(int)
    paths = []
    for j in range(k):
        d = out / f"part-{j}"
        d.mkdir(parents=True)
        shutil.copy(xml, d / xml.name)
        p = d / f"part-{j}.arff"
        p.write_text("".join(header + rows[bounds[j] : bounds[j + 1]]))
        paths.append(str(p))
    return paths


def _peak_rss_mb() -> float:
    """This process's peak resident memory (VmHWM), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def main() -> None:
    import bicrit
    import bicrit.dask
    from bicrit.datasets import find_data_root, read_mulan

    ap = argparse.ArgumentParser()
    ap.add_argument("--parts", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=15)
    ap.add_argument("--memory-limit", default="3GiB")
    ap.add_argument("--out", default="benches/distributed/delicious_parts.json")
    args = ap.parse_args()
    root = find_data_root()
    if root is None:
        raise SystemExit("BICRIT_DATA not found")
    d = Path(root) / "delicious"
    xml = d / "delicious.xml"
    test = read_mulan(d / "delicious-test.arff", xml)
    params = dict(max_epochs=args.rounds, tol=None, n_iter_no_change=None, random_state=0)
    from distributed import Client, LocalCluster

    with tempfile.TemporaryDirectory() as tmp:
        paths = split_arff(d / "delicious-train.arff", xml, args.parts, Path(tmp))
        with (
            LocalCluster(
                n_workers=2,
                threads_per_worker=1,
                processes=True,
                memory_limit=args.memory_limit,
                dashboard_address=None,
            ) as cluster,
            Client(cluster) as client,
        ):
            base = client.run(_peak_rss_mb)
            start = time.perf_counter()
            model = bicrit.dask.fit(bicrit.MultiLabelSVM(**params), paths, client=client)
            wall = time.perf_counter() - start
            peaks = client.run(_peak_rss_mb)
    h = model.history_
    cpu = time.process_time()
    train = read_mulan(d / "delicious-train.arff", xml)
    local = bicrit.MultiLabelSVM(**params).fit(train)
    local_cpu = time.process_time() - cpu
    local_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    result = {
        "parts": args.parts,
        "rounds": int(model.n_epochs_),
        "learner": model.learner_,
        "edges": model.edges_kind_,
        "dim": int(model._w.size),
        "n_train": len(train),
        "wall": wall,
        "round_time": float(np.median(h["round_time"].to_numpy())),
        "worker_time": float(np.median(h["worker_time"].to_numpy())),
        "bytes_per_worker": float(np.median(h["bytes_per_worker"].to_numpy())),
        "bytes_sent": float(np.median(h["bytes_sent"].to_numpy())),
        "worker_peak_mb_before": base,
        "worker_peak_mb": peaks,
        "memory_limit": args.memory_limit,
        "gap_rel": [None if g is None else float(g) for g in (h["gap"] / h["objective"]).to_list()],
        "micro_f1": float(model.report(test)["micro_f1"]),
        "local_micro_f1": float(local.report(test)["micro_f1"]),
        "local_cpu": local_cpu,
        "local_peak_mb_client_process": local_peak,
    }
    write_text(Path(args.out), json.dumps(result, indent=1) + "\n")
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    main()
