"""Benchmarks of the ``chain`` structure on NER-like sizes.

Run: ``pytest benches/structures/bench_chain.py --benchmark-enable``. On a shared, loaded machine
wall-clock times swing; ``python benches/structures/bench_chain.py`` prints single-thread
CPU-time throughput (and the crfsuite comparison) instead.

Data: synthetic NER-like sequences — lengths uniform in 15..40 tokens, 2^18 hashed features,
30 features per token drawn log-uniformly over frequency ranks (a Zipf-like law, as word, shape
and affix features are: a few very common, a long tail) and hashed to ids — with 9 tags (CoNLL:
O + B/I × PER, LOC, ORG, MISC) or 13 tags (O + B/I × 6 types). ``extra_info`` holds
``sequences_per_s``.

Groups:

* ``chain-oracle-throughput``: batch λ-oracle (λ = 1, k = 1) over 1000 sequences, 9 and 13 tags,
  token Hamming and segment loss, 1 and 2 threads.
* ``chain-kbest-vs-k``: batch oracle with k = 1 … 50 (9 tags, 1 thread).
* ``chain-viterbi-vs-crfsuite``: prediction (Viterbi) on equal sizes — bicrit's ``batch_predict``
  on 1 thread against python-crfsuite's ``Tagger.tag`` on a model with the same 9 labels,
  2^18 attributes × 9 labels state features and 81 transitions (trained for one L-BFGS iteration
  with ``feature.possible_states`` so that every feature exists), on the same sequences.
  crfsuite takes attribute *strings* (it looks them up inside ``tag``), bicrit a CSR matrix of
  feature ids. ``extra_info``: ``speed_ratio_vs_bicrit`` = crfsuite time / bicrit time (wall),
  and an interleaved CPU-time comparison that also splits crfsuite's ``Tagger.set`` (attribute
  lookup + state scoring) from its Viterbi-only ``tag()``. Skipped with a reason when
  python-crfsuite (the ``peers`` extra) is not installed.
* ``chain-per-call``: the per-sequence Python path (``predict_one`` in a loop), which pays the
  binding's per-call checks (w finite: O(|w|) = 2.4 M values) — use the batch methods.
"""

from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pytest
import scipy.sparse as sp

import bicrit

N_FEATURES = 2**18
NNZ = 30
N_SEQ = 1000
TYPES = ["PER", "LOC", "ORG", "MISC", "DATE", "NUM"]

_results: dict[str, float] = {}


def tag_names(n_states: int) -> list[str]:
    names = ["O"]
    for t in TYPES[: (n_states - 1) // 2]:
        names += [f"B-{t}", f"I-{t}"]
    return names


def ner_like(n_seq: int, seed: int = 0) -> tuple[sp.csr_array, np.ndarray, list[np.ndarray]]:
    """``(token_matrix, offsets, token_ids_per_row)`` of synthetic NER-like sequences."""
    rng = np.random.default_rng(seed)
    lens = rng.integers(15, 41, size=n_seq)
    n_tok = int(lens.sum())
    perm = rng.permutation(N_FEATURES)
    ranks = np.floor(N_FEATURES ** rng.random((n_tok, NNZ))).astype(np.int64) - 1
    ids = perm[np.clip(ranks, 0, N_FEATURES - 1)]
    rows = [np.unique(r) for r in ids]
    indptr = np.zeros(n_tok + 1, dtype=np.int64)
    np.cumsum([len(r) for r in rows], out=indptr[1:])
    indices = np.concatenate(rows).astype(np.int32)
    M = sp.csr_array((np.ones(len(indices)), indices, indptr), shape=(n_tok, N_FEATURES))
    offsets = np.zeros(n_seq + 1, dtype=np.int64)
    np.cumsum(lens, out=offsets[1:])
    return M, offsets, rows


@pytest.fixture(scope="module")
def data():
    return ner_like(N_SEQ)


def setup_chain(n_states: int, loss: str, data):
    M, offsets, _ = data
    s = bicrit.structure("chain", tag_names=tag_names(n_states), n_features=N_FEATURES, loss=loss)
    rng = np.random.default_rng(1)
    w = rng.normal(scale=0.1, size=s.size_joint_feature)
    X = s._x_many((M, offsets))  # normalise once, as a learner would
    lens = np.diff(offsets)
    Y = [rng.integers(0, n_states, size=int(t)) for t in lens]
    return s, w, X, Y


def record(benchmark, n: int, key: str | None = None) -> float | None:
    stats = getattr(benchmark, "stats", None)
    if stats is None:  # --benchmark-disable
        return None
    mean = stats.stats.mean
    benchmark.extra_info["sequences_per_s"] = n / mean
    benchmark.extra_info["us_per_sequence"] = 1e6 * mean / n
    if key is not None:
        _results[key] = mean
    return mean


@pytest.mark.benchmark(group="chain-oracle-throughput")
@pytest.mark.parametrize("n_jobs", [1, 2])
@pytest.mark.parametrize("loss", ["hamming", "segment"])
@pytest.mark.parametrize("n_states", [9, 13])
def test_oracle_throughput(benchmark, data, n_states: int, loss: str, n_jobs: int) -> None:
    s, w, X, Y = setup_chain(n_states, loss, data)
    out = benchmark(lambda: s.batch_oracle(w, X, Y, {"loss": 1.0}, n_jobs=n_jobs))
    assert len(out) == N_SEQ
    record(benchmark, N_SEQ)


@pytest.mark.benchmark(group="chain-kbest-vs-k")
@pytest.mark.parametrize("k", [1, 2, 5, 10, 20, 50])
def test_kbest_cost_vs_k(benchmark, data, k: int) -> None:
    s, w, X, Y = setup_chain(9, "hamming", data)
    out = benchmark(lambda: s.batch_oracle(w, X, Y, {"loss": 1.0}, k=k, n_jobs=1))
    assert all(len(a) == k for a in out)
    record(benchmark, N_SEQ)


@pytest.mark.benchmark(group="chain-viterbi-vs-crfsuite")
def test_viterbi_bicrit(benchmark, data) -> None:
    s, w, X, _ = setup_chain(9, "hamming", data)
    out = benchmark(lambda: s.batch_predict(w, X, n_jobs=1))
    assert len(out) == N_SEQ
    record(benchmark, N_SEQ, "bicrit")


@pytest.fixture(scope="module")
def crfsuite_tagger(tmp_path_factory, data):
    pycrfsuite = pytest.importorskip(
        "pycrfsuite", reason="python-crfsuite is not installed (pip install 'bicrit[peers]')"
    )
    return crfsuite_model(pycrfsuite, str(tmp_path_factory.mktemp("crfsuite")), data)


def crfsuite_model(pycrfsuite, folder: str, data):
    """A crfsuite tagger of the benchmark's sizes and the test sequences as ItemSequences."""
    rng = np.random.default_rng(2)
    labels = tag_names(9)
    # every attribute once (then random fill), so that possible_states creates all 2^18 × 9
    n_tok = -(-N_FEATURES // NNZ)
    ids = np.concatenate(
        [rng.permutation(N_FEATURES), rng.integers(0, N_FEATURES, n_tok * NNZ - N_FEATURES)]
    ).reshape(n_tok, NNZ)
    trainer = pycrfsuite.Trainer(algorithm="lbfgs", verbose=False)
    trainer.set_params(
        {
            "max_iterations": 1,
            "c1": 0.0,
            "c2": 1.0,
            "feature.possible_states": True,
            "feature.possible_transitions": True,
        }
    )
    pos = 0
    while pos < n_tok:
        rows = ids[pos : pos + int(rng.integers(15, 41))]
        pos += len(rows)
        xseq = pycrfsuite.ItemSequence([[f"f{a}" for a in r] for r in rows])
        trainer.append(xseq, [labels[i] for i in rng.integers(0, 9, len(rows))])
    path = f"{folder}/chain.crfsuite"
    trainer.train(path)
    tagger = pycrfsuite.Tagger()
    tagger.open(path)
    info = tagger.info()
    if len(info.state_features) != N_FEATURES * 9 or len(info.transitions) != 81:
        raise RuntimeError("the crfsuite model does not have the benchmark's sizes")
    _, offsets, rows = data
    xseqs = [
        pycrfsuite.ItemSequence([[f"f{a}" for a in rows[t]] for t in range(a, b)])
        for a, b in itertools.pairwise(offsets)
    ]
    return tagger, xseqs


@pytest.mark.benchmark(group="chain-viterbi-vs-crfsuite")
def test_viterbi_crfsuite(benchmark, crfsuite_tagger, data) -> None:
    tagger, xseqs = crfsuite_tagger

    def run() -> None:
        for x in xseqs:
            tagger.tag(x)

    benchmark(run)
    mean = record(benchmark, N_SEQ, "crfsuite")
    if mean is None:
        return
    if "bicrit" in _results:
        benchmark.extra_info["speed_ratio_vs_bicrit"] = mean / _results["bicrit"]
    # CPU-time comparison, interleaved (robust on a shared machine), with crfsuite's parts
    s, w, X, _ = setup_chain(9, "hamming", data)
    cpu = crfsuite_cpu_split(tagger, xseqs, lambda: s.batch_predict(w, X, n_jobs=1))
    benchmark.extra_info.update(cpu)


def crfsuite_cpu_split(tagger, xseqs, bicrit_run, reps: int = 3) -> dict[str, float]:
    """Best-of-``reps`` CPU seconds of bicrit's batch predict, crfsuite's ``tag(x)``, and
    crfsuite's ``set(x)`` (attribute lookup + state scoring) and ``tag()`` (Viterbi) apart."""
    best = {"bicrit": math.inf, "crfsuite": math.inf, "set": math.inf, "viterbi": math.inf}
    for _ in range(reps):
        t0 = time.process_time()
        bicrit_run()
        best["bicrit"] = min(best["bicrit"], time.process_time() - t0)
        t0 = time.process_time()
        for x in xseqs:
            tagger.tag(x)
        best["crfsuite"] = min(best["crfsuite"], time.process_time() - t0)
        t_set = t_vit = 0.0
        for x in xseqs:
            t0 = time.process_time()
            tagger.set(x)
            t1 = time.process_time()
            tagger.tag()
            t_vit += time.process_time() - t1
            t_set += t1 - t0
        best["set"] = min(best["set"], t_set)
        best["viterbi"] = min(best["viterbi"], t_vit)
    n = len(xseqs)
    return {
        "cpu_us_per_seq_bicrit": 1e6 * best["bicrit"] / n,
        "cpu_us_per_seq_crfsuite": 1e6 * best["crfsuite"] / n,
        "cpu_us_per_seq_crfsuite_set": 1e6 * best["set"] / n,
        "cpu_us_per_seq_crfsuite_viterbi_only": 1e6 * best["viterbi"] / n,
        "cpu_speed_ratio_vs_bicrit": best["crfsuite"] / best["bicrit"],
    }


@pytest.mark.benchmark(group="chain-per-call")
def test_predict_one_loop(benchmark, data) -> None:
    s, w, _, _ = setup_chain(9, "hamming", data)
    M, offsets, _ = data
    seqs = [M[a:b] for a, b in itertools.pairwise(offsets[:101])]
    benchmark(lambda: [s.predict_one(w, x) for x in seqs])
    record(benchmark, len(seqs))


def _cpu_best(f, reps: int = 5) -> float:
    f()
    best = math.inf
    for _ in range(reps):
        t0 = time.process_time()
        f()
        best = min(best, time.process_time() - t0)
    return best


def _print_rates(n_states: int, loss: str, data) -> None:
    s, w, X, Y = setup_chain(n_states, loss, data)
    t = _cpu_best(lambda: s.batch_predict(w, X, n_jobs=1))
    print(f"  S={n_states:2d} {loss:8s} predict          {N_SEQ / t:9.0f} seq/s")
    for k in (1, 2, 5, 10, 20, 50) if (n_states, loss) == (9, "hamming") else (1, 5):
        t = _cpu_best(lambda k=k: s.batch_oracle(w, X, Y, {"loss": 1.0}, k=k, n_jobs=1))
        print(f"  S={n_states:2d} {loss:8s} oracle k={k:<2d}      {N_SEQ / t:9.0f} seq/s")


def main() -> None:
    """Single-thread CPU-time throughput table (sequences per CPU second)."""
    import tempfile

    data = ner_like(N_SEQ)
    print(f"{N_SEQ} sequences, 15-40 tokens, 2^18 features, {NNZ} per token; CPU time, 1 thread")
    for n_states in (9, 13):
        for loss in ("hamming", "segment"):
            _print_rates(n_states, loss, data)
    try:
        import pycrfsuite
    except ImportError:
        print("python-crfsuite not installed: no comparison")
        return
    with tempfile.TemporaryDirectory() as folder:
        tagger, xseqs = crfsuite_model(pycrfsuite, folder, data)
        s, w, X, _ = setup_chain(9, "hamming", data)
        split = crfsuite_cpu_split(tagger, xseqs, lambda: s.batch_predict(w, X, n_jobs=1))
        for key, v in split.items():
            print(f"  {key:40s} {v:9.2f}")


if __name__ == "__main__":
    main()
