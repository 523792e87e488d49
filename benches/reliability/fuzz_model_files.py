"""Model-file fuzzing at scale (issue 15, Done-when 2): ``N`` mutated model files (default
10⁶) of the five estimators of ``tests/estimators/test_model_fuzz.py``, every mutation of
``tests/estimators/model_fuzz.py`` in turn, split over ``--jobs`` processes with their own
seeds. Prints (and with ``--md`` writes) the counts by mutation and outcome; exits 1 when
anything escaped (an exception other than ModelFormatError, or a crash of a worker).

Run: ``nice python benches/reliability/fuzz_model_files.py -n 1000000 --jobs 2``
(the table of ``benches/RESULTS-reliability.md``).
"""

from __future__ import annotations

import argparse
import multiprocessing
import resource
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bicrit._atomic import atomic_write
from tests.estimators.model_fuzz import (
    BYTE_MUTATIONS,
    STRUCTURAL_MUTATIONS,
    run,
)
from tests.estimators.test_model_fuzz import fuzz_bases

#: Address space of a worker: a mutated file that makes a load allocate more raises
#: MemoryError (counted as escaped) instead of waking the kernel's OOM killer.
MEMORY_CAP = 4 << 30


def _worker(args: tuple[int, int]) -> tuple[Counter, list]:
    n, seed = args
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))
    with tempfile.TemporaryDirectory() as d:
        bases = fuzz_bases(Path(d))
        tally = run(bases, n, seed=seed, workdir=Path(d))
    return tally.counts, tally.failures


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-n", type=int, default=1_000_000, help="mutated files in all")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--seed", type=int, default=1000, help="first worker's seed")
    p.add_argument("--md", type=Path, default=None, help="write the Markdown table here")
    a = p.parse_args(argv)
    shares = [a.n // a.jobs + (i < a.n % a.jobs) for i in range(a.jobs)]
    t0 = time.perf_counter()
    counts: Counter = Counter()
    failures: list = []
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(a.jobs, mp_context=ctx) as pool:  # a dead worker is an error
        for c, f in pool.map(_worker, [(n, a.seed + i) for i, n in enumerate(shares)]):
            counts.update(c)
            failures += f
    wall = time.perf_counter() - t0
    outcomes = ["refused", "loaded", "loaded-changed", "escaped"]
    lines = [
        f"{sum(counts.values())} mutated model files, {a.jobs} processes (seeds {a.seed}–"
        f"{a.seed + a.jobs - 1}), {wall:.0f} s wall",
        "",
        "| mutation | " + " | ".join(outcomes) + " |",
        "|---|" + "---|" * len(outcomes),
    ]
    for kind in (*BYTE_MUTATIONS, *STRUCTURAL_MUTATIONS):
        lines.append(f"| {kind} | " + " | ".join(str(counts[(kind, o)]) for o in outcomes) + " |")
    total = Counter()
    for (_, o), k in counts.items():
        total[o] += k
    lines.append("| **all** | " + " | ".join(f"**{total[o]}**" for o in outcomes) + " |")
    text = "\n".join(lines) + "\n"
    print(text)
    for f in failures[:20]:
        print("ESCAPED", *f)
    if a.md is not None:
        with atomic_write(a.md) as fh:
            fh.write(text)
    return 1 if failures or total["escaped"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
