"""``SequenceSVM()`` with the defaults users get against sklearn-crfsuite, in one run (issue 16,
Done-when 5): process CPU seconds of each fit and entity micro-F1 on the official test split.

CRFsuite: L-BFGS, 100 iterations, c1 = 0.1, c2 = 0.01, all possible transitions, on the feature
strings of ``SequenceSVM``'s own default featurizer (the standard word template: the word, its
shape, prefixes/suffixes and the neighbouring words; POS when the corpus has it) — the same
template for both. Tags in IOB2. Nothing is tuned: both run their defaults.

    python benches/learners/bench_sequence_vs_crfsuite.py [--sets conll2002/esp,conll2000]
"""

from __future__ import annotations

import argparse
import json
import time

SETS = ["conll2002/esp", "conll2002/ned", "conll2000"]


def strings(feat, cols, d):
    """The featurizer's feature strings of every token (CRFsuite's input)."""
    cache: dict = {}
    return [
        feat.token_features(s, {c: d.columns[c][i] for c in cols}, cache)
        for i, s in enumerate(d.tokens)
    ]


def main() -> int:
    import sklearn_crfsuite

    from bicrit import SequenceSVM
    from bicrit.datasets import load
    from bicrit.metrics import sequence_report

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sets", default=",".join(SETS))
    a = p.parse_args()
    for name in a.sets.split(","):
        tr = load(name, "train").to_iob2()
        te = load(name, "test").to_iob2()
        row: dict = {"data": name, "n_train": len(tr.tokens)}

        c0, t0 = time.process_time(), time.perf_counter()
        est = SequenceSVM().fit(tr)
        row["svm_cpu"] = time.process_time() - c0
        row["svm_wall"] = time.perf_counter() - t0
        row["svm_epochs"] = int(est.n_epochs_)
        row["svm_learner"] = est.learner_
        row["svm_f1"] = float(sequence_report(te.tags, est.predict(te), "iob2")["f1"])

        feat = est.featurizer_ if hasattr(est, "featurizer_") else None
        if feat is None:
            from bicrit.datasets import SequenceFeaturizer

            feat = SequenceFeaturizer()
        cols = tuple(c for c in getattr(feat, "columns", ()) if c in tr.columns)

        c0, t0 = time.process_time(), time.perf_counter()
        Xtr = strings(feat, cols, tr)
        crf = sklearn_crfsuite.CRF(
            algorithm="lbfgs", c1=0.1, c2=0.01, max_iterations=100, all_possible_transitions=True
        )
        crf.fit(Xtr, tr.tags)
        row["crf_cpu"] = time.process_time() - c0
        row["crf_wall"] = time.perf_counter() - t0
        pred = [list(s) for s in crf.predict(strings(feat, cols, te))]
        row["crf_f1"] = float(sequence_report(te.tags, pred, "iob2")["f1"])
        row["cpu_ratio"] = row["svm_cpu"] / row["crf_cpu"]
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
