"""Training-time ratios of the bi-criteria surrogates against margin rescaling on NER
(issue 5: "slack rescaling with warm-started convex-hull search costs at most 1.5× margin
rescaling's training time for the same epochs … and the same with ban-list recovery (the thesis
reports 2.3× for ProbLoss with ban lists on NER)"), with python-crfsuite beside them.

Data: CoNLL-2002 Spanish, a ``BICRIT_BENCH_SCALE`` fraction of the training sentences (default
0.05; ``benches/RESULTS-sequence.md`` used 0.25), the hashed features of
:mod:`bicrit.reproduce.ner`, evaluation on ``testb``. Every bicrit configuration trains SGD for
``BICRIT_BENCH_EPOCHS`` epochs (default 3) with the same λ, seed and instance order, one thread.

Run:

* ``pytest benches/learners/bench_sequence.py --benchmark-enable`` — one round per
  configuration (group ``ner-train-{margin,probloss-ban,probloss-hull-warm,slack-hull-warm,
  slack-ban}-vs-crfsuite``); ``extra_info`` holds calls per inference, fractional answers, test F1
  and the time ratio to the margin run of the same session. Without ``--benchmark-enable`` each
  runs once (a correctness check).
* ``python benches/learners/bench_sequence.py`` — all configurations in one process, margin first,
  printing the markdown table of ``RESULTS-sequence.md``: the Trainer's own epoch time (inference
  + updates) and the process CPU time, each as a ratio to margin rescaling.
"""

from __future__ import annotations

import os
import time
from typing import Any

import pytest

from bicrit.reproduce import ner

SCALE = float(os.environ.get("BICRIT_BENCH_SCALE", "0.05"))
EPOCHS = int(os.environ.get("BICRIT_BENCH_EPOCHS", "3"))
DATASET = "conll2002/esp"

#: name → (surrogate, search); margin first (the reference of the ratios).
CONFIGS: dict[str, tuple[str, Any]] = {
    "margin": ("margin", "convex-hull"),
    "probloss-ban (capped)": ("probloss", ner.BAN),
    "probloss-hull-warm": ("probloss", "convex-hull"),
    "slack-hull-warm": ("slack", "convex-hull"),
    "slack-ban (capped)": ("slack", ner.BAN),
}

_margin: dict[str, float] = {}


def train(corpus: Any, name: str) -> dict[str, Any]:
    """One training run of configuration ``name``: times, calls and test scores."""
    surrogate, search = CONFIGS[name]
    cpu0 = time.process_time()
    result, scores = ner.train_method(
        corpus,
        "margin",
        surrogate=surrogate,
        search=search,
        epochs=EPOCHS,
        track=False,
        params={"n_jobs": 1},
        warmup=0,
    )
    return {
        "config": name,
        "surrogate": surrogate,
        "search": ner._search_name(search),
        "trainer_time": result.fit_time,
        "cpu_time": time.process_time() - cpu0,  # includes the final test prediction
        "calls_per_inference": result.calls_per_inference,
        "fractional": result.fractional_rate,
        **scores,
    }


#: Configurations timed from the weights of a margin run (steady state of a warm-started run).
FROM_MARGIN: dict[str, tuple[str, Any]] = {
    "margin (continued)": ("margin", "convex-hull"),
    "probloss-ban (capped)": ("probloss", ner.BAN),
    "probloss-hull-warm": ("probloss", "convex-hull"),
    "slack-hull-warm": ("slack", "convex-hull"),
}


def train_from_margin(corpus: Any, epochs: int = EPOCHS) -> list[dict[str, Any]]:
    """Margin rescaling for ``epochs`` epochs (untimed), then every :data:`FROM_MARGIN`
    configuration for ``epochs`` more epochs from those weights, each timed."""
    from bicrit.learners import make_trainer

    params = {"C": ner.sklearn_c(ner.LAM, corpus.n_train), **ner.SGD, "n_jobs": 1}
    s = corpus.structure()
    warm = make_trainer(s, corpus.X_train, corpus.Y_train, "margin", "convex-hull", "sgd", params)
    for _ in range(epochs):
        warm.epoch()
    w0 = warm.weights(True)
    rows = []
    for name, (surrogate, search) in FROM_MARGIN.items():
        t = make_trainer(s, corpus.X_train, corpus.Y_train, surrogate, search, "sgd", params, w0)
        cpu0 = time.process_time()
        stats = [t.epoch() for _ in range(epochs)]
        cpu = time.process_time() - cpu0
        calls = sum(st["calls"] for st in stats)
        inferences = sum(st["inferences"] for st in stats)
        pred = corpus.decode(s.batch_predict(t.weights(True), corpus.X_test))
        rows.append(
            {
                "config": f"from margin w0: {name}",
                "search": ner._search_name(search),
                "trainer_time": sum(st["time"] for st in stats),
                "cpu_time": cpu,
                "calls_per_inference": calls / inferences,
                "fractional": sum(st["fractional"] for st in stats) / inferences,
                **corpus.scores(pred),
            }
        )
    return rows


def crfsuite(corpus: Any) -> dict[str, Any] | None:
    out = ner.run_crfsuite(corpus)
    if out is None:
        return None
    scores, seconds = out
    return {"config": "crfsuite (L-BFGS, 100 it.)", "trainer_time": seconds, **scores}


@pytest.fixture(scope="module")
def corpus():
    from bicrit.datasets import data_root

    try:
        root = data_root()
    except Exception as exc:  # pragma: no cover - depends on the machine
        pytest.skip(f"no data root: {exc}")
    return ner.prepare(DATASET, SCALE, 0, root=root)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_train_vs_margin(benchmark, corpus, name: str) -> None:
    benchmark.group = f"ner-train-{name}-vs-crfsuite"
    if not _margin and name != "margin":
        _margin.update(train(corpus, "margin"))
    row = benchmark.pedantic(lambda: train(corpus, name), rounds=1, iterations=1)
    if name == "margin":
        _margin.update(row)
    benchmark.extra_info.update({k: v for k, v in row.items() if not isinstance(v, str)})
    benchmark.extra_info["time_ratio_vs_margin"] = row["trainer_time"] / _margin["trainer_time"]
    assert row["calls_per_inference"] >= 1.0
    assert 0.0 <= row["f1_micro"] <= 1.0


def test_crfsuite(benchmark, corpus) -> None:
    pytest.importorskip("sklearn_crfsuite", reason="pip install 'bicrit[peers]'")
    benchmark.group = "ner-train-crfsuite"
    row = benchmark.pedantic(lambda: crfsuite(corpus), rounds=1, iterations=1)
    assert row is not None
    benchmark.extra_info.update({k: v for k, v in row.items() if not isinstance(v, str)})


def table(rows: list[dict[str, Any]]) -> str:
    """The markdown table of ``RESULTS-sequence.md``."""
    ref = rows[0]  # margin rescaling
    lines = [
        "| configuration | search | Trainer time (s) | ratio | CPU time (s) | CPU ratio | "
        "calls / inference | fractional | entity F1 | macro F1 | sentence F1 |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        cpu = r.get("cpu_time")
        lines.append(
            f"| {r['config']} | {r.get('search', '–')} | {r['trainer_time']:.2f} | "
            f"{r['trainer_time'] / ref['trainer_time']:.2f}× | "
            + (f"{cpu:.2f} | {cpu / ref['cpu_time']:.2f}× | " if cpu is not None else "– | – | ")
            + (
                f"{r['calls_per_inference']:.2f} | {r['fractional']:.3f} | "
                if "calls_per_inference" in r
                else "– | – | "
            )
            + f"{r['f1_micro']:.4f} | {r['f1_macro']:.4f} | {r['sentence_f1']:.4f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    from bicrit.datasets import data_root

    c = ner.prepare(DATASET, SCALE, 0, root=data_root())
    print(f"{DATASET}: {c.n_train} training sentences (scale {SCALE}), {EPOCHS} epochs")
    rows = [train(c, name) for name in CONFIGS]
    extra = crfsuite(c)
    if extra is not None:
        rows.append(extra)
    print(table(rows))
    print()
    print(f"After {EPOCHS} epochs of margin rescaling, {EPOCHS} more epochs of each:")
    print(table(train_from_margin(c)))
