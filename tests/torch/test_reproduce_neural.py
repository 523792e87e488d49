"""End-to-end runs of ``bicrit reproduce parsing-bilstm`` and ``ner-bilstm`` at a tiny size
(``slow``; the fraction of training data from ``BICRIT_REPRO_SCALE``, default 0.005): the tables
have the runs the protocol promises, with scores in range, and the logs are written."""

from __future__ import annotations

import os

import polars as pl
import pytest

pytest.importorskip("torch")

SCALE = float(os.environ.get("BICRIT_REPRO_SCALE", "0.005"))


@pytest.mark.slow
def test_parsing_bilstm_runs_end_to_end(data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("BICRIT_DATA", str(data_dir))
    from bicrit.reproduce import run

    table = run("parsing-bilstm", scale=SCALE, seeds=1, out=tmp_path)
    assert table["run"].to_list() == ["margin", "probloss"]
    for col in ("uas_mean", "las_mean"):
        assert all(0.0 <= v <= 1.0 for v in table[col].to_list())
    assert all(las <= uas for las, uas in zip(table["las_mean"], table["uas_mean"], strict=True))
    log = pl.read_csv(tmp_path / "parsing_bilstm_log.csv")
    # ProbLoss continues from the margin run's middle epoch: its epochs are the later ones
    m = log.filter(pl.col("run") == "margin")["epoch"].to_list()
    p = log.filter(pl.col("run") == "probloss")["epoch"].to_list()
    assert p and min(p) > min(m) and max(p) == max(m)


@pytest.mark.slow
def test_ner_bilstm_runs_end_to_end(data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("BICRIT_DATA", str(data_dir))
    from bicrit.reproduce import run

    table = run("ner-bilstm", scale=max(SCALE, 0.01), seeds=1, out=tmp_path)
    import importlib.util

    crf = ["crf"] if importlib.util.find_spec("torchcrf") else []
    assert table["head"].to_list() == ["margin", "slack", "probloss", *crf]
    assert all(0.0 <= v <= 1.0 for v in table["f1_mean"].to_list())
    assert (tmp_path / "ner_bilstm_best.csv").exists()
