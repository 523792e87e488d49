"""Which learner should ``SequenceSVM`` use by default? (issue 5, NER task item 2)

CoNLL-2002 Spanish: a 10 % subsample of ``esp.train`` (seed 0, 832 sentences), scored on 30 %
of ``esp.testa`` (the dev split, seed 0) — no test data. Each configuration is one
``SequenceSVM(random_state=0, ...)`` fit; SGD with its Pegasos schedule 1/(λ(t + t0)), λ =
1/(n·C), against BCFW (line search). Prints a markdown table: epochs run, dev entity F1, process
CPU time of the fit.

Usage: ``python benches/learners/bench_sequence_default.py``
"""

from __future__ import annotations

import time
from typing import Any

from bicrit import SequenceSVM
from bicrit.datasets import load
from bicrit.reproduce._seq_common import subsample

CONFIGS: list[dict[str, Any]] = [
    {"learner": "sgd", "max_epochs": 5, "tol": None},
    {"learner": "sgd"},
    {"learner": "sgd", "C": 0.01, "max_epochs": 5, "tol": None},
    {"learner": "sgd", "max_epochs": 10, "tol": None, "learner_params": {"t0": 8320}},
    {
        "learner": "sgd",
        "max_epochs": 5,
        "tol": None,
        "learner_params": {"schedule": "constant", "eta0": 0.003},
    },
    {"learner": "bcfw", "max_epochs": 5, "tol": None},
    {"learner": "bcfw", "C": 0.1, "max_epochs": 5, "tol": None},
    {},
    {"surrogate": "slack", "learner": "sgd", "max_epochs": 10, "tol": None},
    {"surrogate": "slack", "loss": "segment", "learner": "sgd", "max_epochs": 10, "tol": None},
    {"surrogate": "slack", "loss": "segment", "learner": "bcfw", "max_epochs": 10, "tol": None},
    {"surrogate": "slack", "loss": "segment"},
    {"surrogate": "probloss", "max_epochs": 10, "tol": None},
]


def main() -> None:
    tr = load("conll2002/esp", "train").to_iob2()
    dv = load("conll2002/esp", "dev").to_iob2()
    keep = subsample(len(tr), 0.1, 0)
    X, Y = [tr.tokens[i] for i in keep], [tr.tags[i] for i in keep]
    kd = subsample(len(dv), 0.3, 0)
    Xd, Yd = [dv.tokens[i] for i in kd], [dv.tags[i] for i in kd]
    print(f"{len(X)} training sentences, {len(Xd)} dev sentences\n")
    print("| parameters (besides random_state=0) | learner | epochs | dev entity F1 | CPU (s) |")
    print("|---|---|---|---|---|")
    for kw in CONFIGS:
        t0 = time.process_time()
        m = SequenceSVM(random_state=0, **kw).fit(X, Y)
        cpu = time.process_time() - t0
        args = ", ".join(f"{k}={v!r}" for k, v in kw.items()) or "(defaults)"
        print(f"| {args} | {m.learner_} | {m.n_epochs_} | {m.score(Xd, Yd):.3f} | {cpu:.1f} |")


if __name__ == "__main__":
    main()
