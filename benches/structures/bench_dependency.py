"""Benchmarks of the ``dependency`` oracles on UD English EWT sentences.

Run: ``BICRIT_DATA=/path/to/data pytest benches/structures/bench_dependency.py --benchmark-enable``
(the first 300 sentences of ``ud_english_ewt/en_ewt-ud-dev.conllu``, read minimally here).

Groups:
* ``dependency-oracle-threads`` — loss-augmented oracle (λ = 1) over the batch, Eisner and
  Chu–Liu–Edmonds, 1 and 2 threads;
* ``dependency-decoder`` — Eisner against Chu–Liu–Edmonds, labeled and unlabeled, 1 thread;
* ``dependency-kbest`` — cost of k-best lists, k = 1…16, both decoders, 1 thread.

``extra_info["sentences_per_s"]`` is the throughput (sentences of the batch / mean time).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import bicrit

REPO = Path(__file__).resolve().parents[2]
N_SENTENCES = 300
N_FEATURES = 2**20


def _data_root() -> Path:
    return Path(os.environ.get("BICRIT_DATA", REPO.parent / "shared" / "data"))


def _read_conllu(path: Path, limit: int) -> list[dict]:
    """Basic trees only: skips comments, multiword-token ranges and empty nodes."""
    out: list[dict] = []
    keys = ("words", "lemmas", "upos", "xpos", "heads", "deprels")
    cur: dict[str, list] = {k: [] for k in keys}
    with path.open(encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                if cur["words"]:
                    out.append(cur)
                    if len(out) == limit:
                        break
                cur = {k: [] for k in keys}
                continue
            if line.startswith("#"):
                continue
            c = line.split("\t")
            if "-" in c[0] or "." in c[0]:
                continue
            for k, v in zip(keys, (c[1], c[2], c[3], c[4], int(c[6]), c[7]), strict=True):
                cur[k].append(v)
    return out


@pytest.fixture(scope="module")
def ewt() -> list[dict]:
    path = _data_root() / "ud_english_ewt" / "en_ewt-ud-dev.conllu"
    if not path.exists():
        pytest.skip(f"{path} not found (set BICRIT_DATA)")
    return _read_conllu(path, N_SENTENCES)


@pytest.fixture(scope="module")
def weights() -> np.ndarray:
    return np.random.default_rng(0).normal(size=N_FEATURES)


def _setup(ewt: list[dict], projective: bool, labeled: bool = True):
    s = bicrit.structure(
        "dependency", n_features=N_FEATURES, projective=projective, labeled=labeled
    ).initialize(ewt)
    return s, s.prepare(ewt), s.gold_labels(ewt)


def _throughput(benchmark, n: int, tokens: int) -> None:
    benchmark.extra_info["sentences"] = n
    benchmark.extra_info["tokens"] = tokens
    stats = getattr(benchmark, "stats", None)
    if stats is not None and getattr(stats, "stats", None) is not None and stats.stats.mean > 0:
        benchmark.extra_info["sentences_per_s"] = n / stats.stats.mean


DECODERS = {"eisner": True, "cle": False}


@pytest.mark.benchmark(group="dependency-oracle-threads")
@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("decoder", list(DECODERS))
def test_oracle_threads(benchmark, ewt, weights, decoder: str, n_jobs: int) -> None:
    s, X, Y = _setup(ewt, DECODERS[decoder])
    out = benchmark(s.batch_oracle, weights, X, Y, {"loss": 1.0}, n_jobs=n_jobs)
    assert len(out) == len(ewt)
    _throughput(benchmark, len(ewt), int(X.lengths.sum()))


@pytest.mark.benchmark(group="dependency-decoder")
@pytest.mark.parametrize("labeled", [True, False], ids=["labeled", "unlabeled"])
@pytest.mark.parametrize("decoder", list(DECODERS))
def test_decoder(benchmark, ewt, weights, decoder: str, labeled: bool) -> None:
    s, X, Y = _setup(ewt, DECODERS[decoder], labeled)
    out = benchmark(s.batch_oracle, weights, X, Y, {"loss": 1.0}, n_jobs=1)
    assert len(out) == len(ewt)
    _throughput(benchmark, len(ewt), int(X.lengths.sum()))


@pytest.mark.benchmark(group="dependency-kbest")
@pytest.mark.parametrize("k", [1, 2, 4, 8, 16])
@pytest.mark.parametrize("decoder", list(DECODERS))
def test_kbest(benchmark, ewt, weights, decoder: str, k: int) -> None:
    s, X, Y = _setup(ewt, DECODERS[decoder])
    out = benchmark(s.batch_oracle, weights, X, Y, {"loss": 1.0}, k=k, n_jobs=1)
    # sentences of ≥ 4 tokens have ≥ 30 projective trees, so exactly k answers
    assert all(0 < len(a) <= k for a in out)
    assert all(len(a) == k for a, x in zip(out, ewt, strict=True) if len(x["words"]) >= 4)
    _throughput(benchmark, len(ewt), int(X.lengths.sum()))
