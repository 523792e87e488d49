"""Loader fuzzing at scale (issue 15, Done-when 2): ``N`` mutated inputs per format (default
10⁵) of ``tests/datasets/loader_fuzz.py`` (slices of real files of the development data,
``BICRIT_DATA``), every mutation in turn, the formats spread over ``--jobs`` processes with
their own seeds. Prints (and with ``--md`` writes) the outcomes per format; exits 1 when
anything escaped (an exception other than DataFormatError).

Run: ``nice python benches/reliability/fuzz_loaders.py -n 100000 --jobs 2`` (the table of
``benches/RESULTS-reliability.md``).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bicrit._atomic import atomic_write  # noqa: E402
from tests.datasets.loader_fuzz import formats, run  # noqa: E402


def _data() -> Path:
    return Path(os.environ.get("BICRIT_DATA", ROOT.parent / "shared" / "data"))


#: Address space of a worker: a mutated file that makes a load allocate more raises
#: MemoryError (counted as escaped) instead of waking the kernel's OOM killer.
MEMORY_CAP = 4 << 30


def _worker(args: tuple[str, int, int]) -> tuple[Counter, list, float]:
    name, n, seed = args
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    [fmt] = [f for f in formats(_data()) if f.name == name]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as d:
        tally = run([fmt], n, seed=seed, folder=Path(d))
    return tally.counts, tally.failures, time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=100_000, help="mutated inputs per format")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=1000, help="seed of the first format")
    p.add_argument("--md", type=Path, default=None, help="write the Markdown table here")
    a = p.parse_args(argv)
    names = [f.name for f in formats(_data())]
    t0 = time.perf_counter()
    counts: Counter = Counter()
    failures: list = []
    seconds: dict[str, float] = {}
    jobs = [(name, a.n, a.seed + i) for i, name in enumerate(names)]
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(a.jobs, mp_context=ctx) as pool:  # a dead worker is an error
        for (name, _, _), (c, f, s) in zip(jobs, pool.map(_worker, jobs), strict=True):
            counts.update(c)
            failures += f
            seconds[name] = s
    wall = time.perf_counter() - t0
    outcomes = ["loaded", "refused", "refused-file", "escaped"]
    lines = [
        f"{a.n} mutated inputs per format, {len(names)} formats, {a.jobs} processes (seeds "
        f"{a.seed}–{a.seed + len(names) - 1}), {wall:.0f} s wall",
        "",
        "| format | inputs | " + " | ".join(outcomes) + " | ms/input |",
        "|---|---|" + "---|" * (len(outcomes) + 1),
    ]
    total: Counter = Counter()
    for name in names:
        row = Counter()
        for (f, _, o), k in counts.items():
            if f == name:
                row[o] += k
        total.update(row)
        cells = " | ".join(str(row[o]) for o in outcomes)
        ms = 1000 * seconds[name] / max(sum(row.values()), 1)
        lines.append(f"| {name} | {sum(row.values())} | {cells} | {ms:.2f} |")
    cells = " | ".join(f"**{total[o]}**" for o in outcomes)
    lines.append(f"| **all** | **{sum(total.values())}** | {cells} | |")
    text = "\n".join(lines) + "\n"
    print(text)
    for f in failures[:20]:
        print("ESCAPED", *f)
    if a.md is not None:
        with atomic_write(a.md) as fh:
            fh.write(text)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
