"""End-to-end checks of the sequence and tree reproductions (issue 5, 4(b)–(d)).

The ``slow`` tests train at a tiny size — the fraction of training sentences comes from
``BICRIT_REPRO_SCALE`` (default 0.01) — and check the reported numbers against independent
computations: entity scores recomputed with seqeval, attachment scores by hand, search answers
against the brute-force maximum over the recorded point clouds. The others are fast unit checks.
"""

from __future__ import annotations

import itertools
import math
import os

import numpy as np
import pytest
import scipy.sparse as sp

import bicrit
from bicrit.reproduce import EXPERIMENTS, _seq_common, searches

SCALE = float(os.environ.get("BICRIT_REPRO_SCALE", "0.01"))


# ------------------------------------------------------------------------------- fast checks


def test_registry_entries_resolve():
    import importlib

    assert {"ner", "parsing", "searches"} <= set(EXPERIMENTS)
    for name, target in EXPERIMENTS.items():
        module, function = target.split(":")
        assert callable(getattr(importlib.import_module(module), function)), name


def test_module_entry_parses_scale_seeds_out(tmp_path, capsys):
    import polars as pl

    seen = {}

    def run(scale, seeds, out):
        seen.update(scale=scale, seeds=seeds, out=out)
        return pl.DataFrame({"a": [1]})

    _seq_common.main(run, "x", ["--scale", "0.2", "--seeds", "3", "--out", str(tmp_path)])
    assert seen == {"scale": 0.2, "seeds": 3, "out": tmp_path}
    assert "shape" in capsys.readouterr().out


def test_subsample_is_seeded_and_sized():
    a = _seq_common.subsample(1000, 0.1, seed=3)
    assert len(a) == 100 and np.all(np.diff(a) > 0)
    assert np.array_equal(a, _seq_common.subsample(1000, 0.1, seed=3))
    assert len(_seq_common.subsample(1000, 0.001, seed=0)) == 20  # the minimum
    assert len(_seq_common.subsample(50, 2.0, seed=0)) == 50


def test_thesis_c_mapping():
    assert _seq_common.sklearn_c(1e-2, 100) == pytest.approx(1.0)


def _hull_max_reference(psi, h, g):
    """Max of ψ over every segment between two points (the hull's maximum is on one)."""
    best = float(np.max(psi.value(h, g)))
    t = np.linspace(0.0, 1.0, 4001)
    for i, j in itertools.combinations(range(len(h)), 2):
        best = max(
            best, float(np.max(psi.value(h[i] + t * (h[j] - h[i]), g[i] + t * (g[j] - g[i]))))
        )
    return best


@pytest.mark.parametrize("seed", range(5))
def test_hull_max_matches_all_segments(seed):
    rng = np.random.default_rng(seed)
    h = np.append(rng.uniform(-2, 1, 12), 0.0)
    g = np.append(rng.integers(0, 5, 12).astype(float), 0.0)
    psi = bicrit.surrogate("slack")
    assert searches.hull_max(psi, h, g) == pytest.approx(_hull_max_reference(psi, h, g), rel=1e-6)


def test_chain_points_match_native_oracle():
    """The independent (m, L) of the recorded clouds agree with the chain's own oracle."""
    rng = np.random.default_rng(0)
    S, d, T = 5, 7, 4
    x = sp.csr_array(rng.random((T, d)) * (rng.random((T, d)) < 0.5))
    y = rng.integers(0, S, T)
    s = bicrit.structure("chain", n_states=S, n_features=d)
    w = rng.normal(size=s.size_joint_feature)
    labels = np.array(list(itertools.product(range(S), repeat=T)))
    m, loss = searches.chain_points(w, x, labels, y, S)
    for lam in (0.0, 0.5, 2.0):
        (a,) = s.oracle(w, x, y, {"loss": lam}) if lam else s.oracle(w, x, y)
        i = int(np.flatnonzero((labels == a.label).all(axis=1))[0])
        assert m[i] == pytest.approx(a.margin, abs=1e-9)
        assert loss[i] == a.terms["loss"]
        assert m[i] + lam * loss[i] == pytest.approx(np.max(m + lam * loss), abs=1e-9)


# ------------------------------------------------------------------------------- slow runs


@pytest.fixture(scope="module")
def data(data_dir):
    return data_dir


@pytest.mark.slow
def test_ner_scores_agree_with_seqeval(data):
    seqeval = pytest.importorskip("seqeval.metrics")
    from seqeval.metrics.sequence_labeling import get_entities

    from bicrit.reproduce import ner

    corpus = ner.prepare("conll2002/esp", SCALE, 0, root=data)
    for method in ("margin", "probloss", "microf1"):
        result, scores = ner.train_method(corpus, method, epochs=2, track=False)
        assert len(result.history) == 2 and result.calls_per_inference >= 1.0
        s = corpus.structure()
        pred = corpus.decode(s.batch_predict(result.w, corpus.X_test))
        gold = corpus.test_tags
        assert scores["f1_micro"] == pytest.approx(seqeval.f1_score(gold, pred), abs=1e-9)
        assert scores["f1_macro"] == pytest.approx(
            seqeval.f1_score(gold, pred, average="macro"), abs=1e-9
        )
        per = []
        for gs, ps in zip(gold, pred, strict=True):
            ge, pe = set(get_entities(gs)), set(get_entities(ps))
            per.append(1.0 if not ge and not pe else 2 * len(ge & pe) / (len(ge) + len(pe)))
        assert scores["sentence_f1"] == pytest.approx(float(np.mean(per)), abs=1e-9)


@pytest.mark.slow
def test_ner_run_end_to_end(data, tmp_path):
    from bicrit.reproduce import ner

    table = ner.run(
        SCALE,
        1,
        tmp_path,
        datasets=("wnut17",),
        epochs=2,
        lams=(1e-4,),
        etas=(0.003,),
        phase_factors=(1.0,),
        bcfw_cs=(0.1,),
        root=data,
    )
    assert set(table["method"]) >= {"margin", "probloss", "microf1", "margin-bcfw"}
    for col in ("f1_micro", "f1_macro", "sentence_f1", "token_accuracy"):
        assert table[col].is_between(0.0, 1.0).all(), col
    assert (table.filter(table["method"] != "crfsuite")["calls_per_inference"] >= 1).all()
    assert (tmp_path / "ner.csv").exists() and (tmp_path / "ner_history.csv").exists()


@pytest.mark.slow
def test_parsing_scores_by_hand(data, tmp_path):
    from bicrit.reproduce import parsing

    tb = parsing.prepare(SCALE, 0, root=data, test_scale=0.2)
    for method in parsing.METHODS:
        result, scores = parsing.train_method(tb, method, epochs=2, track=False)
        s = tb.structure()
        pred = s.batch_predict(result.w, s.prepare(tb.test))
        gh = np.concatenate([t["heads"] for t in tb.test])
        ph = np.concatenate([np.asarray(p[0]) for p in pred])
        gr = np.concatenate([np.asarray(t["deprels"]) for t in tb.test])
        pr = np.concatenate([np.asarray(s.relation_names(p[1])) for p in pred])
        assert scores["uas"] == pytest.approx(float(np.mean(gh == ph)), abs=1e-12)
        assert scores["las"] == pytest.approx(float(np.mean((gh == ph) & (gr == pr))), abs=1e-12)
        assert scores["las"] <= scores["uas"]
        assert result.calls_per_inference >= 1.0
    table = parsing.run(SCALE, 1, tmp_path, epochs=1, root=data)
    assert set(table["method"]) == set(parsing.METHODS)
    assert table["uas"].is_between(0.0, 1.0).all()


@pytest.mark.slow
def test_searches_against_brute_force(data, tmp_path):
    clouds, _, _ = searches.record(SCALE, 0, epochs=2, n_instances=8, k=10, root=data)
    assert {c.kind for c in clouds} <= {"enumerated", "kbest"}
    per = searches.run_searches(clouds, "slack")
    psi = bicrit.surrogate("slack")
    # the brute-force optimum recorded for each row is the max over the cloud
    for c in clouds:
        for e, (h, g) in enumerate(c.points, start=1):
            rows = per.filter((per["instance"] == c.instance) & (per["epoch"] == e))
            assert rows["optimum"].to_numpy() == pytest.approx(
                max(0.0, float(np.max(psi.value(h, g))))
            )
    exact = per.filter(per["search"].is_in(["angular", "convex-hull-ban", "convex-hull-kbest"]))
    assert exact["exact"].all()
    hull = per.filter(per["search"].str.starts_with("convex-hull ("))
    assert hull["hull_exact"].all()
    # no search claims more than the hull optimum; integral answers never beat brute force
    assert (per["value"] <= per["hull_optimum"] + 1e-6 * per["hull_optimum"].abs().clip(1)).all()
    table = searches.run(SCALE, 1, tmp_path, epochs=2, n_instances=6, k=10, root=data)
    assert (tmp_path / "clouds.npz").exists()
    assert math.isfinite(table["calls_per_inference"].mean())
