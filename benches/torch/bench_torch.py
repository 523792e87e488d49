"""bicrit.torch against its peers, side by side in one run (issue 14, "Speed"): forward plus
backward on CPU, float32, batch 32, ragged lengths (T/2 … T, one full-length sequence).

* Chains, S ∈ {9, 17, 50} tags and T ∈ {20, 50}: ``ChainLoss`` with margin, slack and ProbLoss
  (default search: the exact integral maximum) against pytorch-crf's CRF negative
  log-likelihood and torch-struct's ``LinearChainCRF`` on the same unary and transition scores.
* Trees, n ∈ {20, 50} words: ``TreeLoss`` (margin and ProbLoss; projective = Eisner, and
  non-projective = Chu–Liu–Edmonds) against torch-struct's projective ``DependencyCRF``.

Run ``pytest benches/torch/bench_torch.py --benchmark-enable`` (one group per size), or
``python benches/torch/bench_torch.py`` for ``benches/torch/RESULTS.md``: the methods are timed
in interleaved rounds (each round runs every method once), medians reported with ratios.
``--bicrit-only --clock cpu --out FILE`` times bicrit's surrogates alone (slack and ProbLoss
against margin, chains and trees) in CPU seconds of the process (the rayon pool included): the
ratios of issue 14's "≤ 2× margin" on a loaded machine.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

import bicrit.torch as bt  # noqa: E402
from bicrit._atomic import atomic_write  # noqa: E402

B = 32
CHAIN_SIZES = [(s, t) for s in (9, 17, 50) for t in (20, 50)]
TREE_SIZES = [20, 50]


def _lengths(t: int, g: torch.Generator) -> torch.Tensor:
    lens = torch.randint(max(1, t // 2), t + 1, (B,), generator=g)
    lens[0] = t
    return lens


def chain_methods(
    s: int, t: int, seed: int = 0, peers: bool = True
) -> dict[str, Callable[[], float]]:
    """Each method: one forward + backward, returning the loss (gradients are reset)."""
    g = torch.Generator().manual_seed(seed)
    unary = torch.randn(B, t, s, generator=g, requires_grad=True)
    trans = torch.nn.Parameter(torch.randn(s, s, generator=g))
    gold = torch.randint(0, s, (B, t), generator=g)
    lens = _lengths(t, g)
    mask = torch.arange(t).unsqueeze(0) < lens.unsqueeze(1)
    out: dict[str, Callable[[], float]] = {}

    def run(f: Callable[[], torch.Tensor]) -> Callable[[], float]:
        def call() -> float:
            unary.grad = None
            trans.grad = None
            loss = f()
            loss.backward()
            return float(loss.detach())

        return call

    for name in ("margin", "slack", "probloss"):
        fn = bt.ChainLoss(surrogate=name, reduction="sum")
        out[f"bicrit-{name}"] = run(lambda fn=fn: fn(unary, trans, gold, lengths=lens))
    if not peers:
        return out
    try:
        from torchcrf import CRF

        crf = CRF(s, batch_first=True)
        with torch.no_grad():
            crf.start_transitions.zero_()
            crf.end_transitions.zero_()
        crf.transitions = trans  # the same transition scores (and gradient)
        out["pytorch-crf"] = run(lambda: -crf(unary, gold, mask=mask, reduction="sum"))
    except ImportError:
        pass
    try:
        import torch_struct

        def nll() -> torch.Tensor:
            # log_potentials[b, n, z_{n+1}, z_n] = unary[b, n + 1, z_{n+1}] + trans[z_n, z_{n+1}]
            lp = unary[:, 1:, :, None] + trans.t()[None, None]
            lp = torch.cat([lp[:, :1] + unary[:, :1, None, :], lp[:, 1:]], dim=1)
            dist = torch_struct.LinearChainCRF(lp, lengths=lens)
            parts = torch_struct.LinearChainCRF.struct.to_parts(gold, s, lengths=lens).type_as(lp)
            return -dist.log_prob(parts).sum()

        out["torch-struct"] = run(nll)
    except ImportError:
        pass
    return out


def tree_methods(n: int, seed: int = 0, peers: bool = True) -> dict[str, Callable[[], float]]:
    g = torch.Generator().manual_seed(seed)
    arcs = torch.randn(B, n + 1, n + 1, generator=g, requires_grad=True)
    lens = _lengths(n, g)
    # gold: a right-branching chain 0 → 1 → 2 … (projective, single root)
    heads = torch.arange(n).unsqueeze(0).expand(B, n).clone()
    out: dict[str, Callable[[], float]] = {}

    def run(f: Callable[[], torch.Tensor]) -> Callable[[], float]:
        def call() -> float:
            arcs.grad = None
            loss = f()
            loss.backward()
            return float(loss.detach())

        return call

    for name in ("margin", "slack", "probloss"):
        for proj in (True, False):
            fn = bt.TreeLoss(surrogate=name, reduction="sum", projective=proj)
            tag = "eisner" if proj else "cle"
            out[f"bicrit-{name}-{tag}"] = run(lambda fn=fn: fn(arcs, heads, lengths=lens))
    if not peers:
        return out
    try:
        import warnings

        import torch_struct

        def nll() -> torch.Tensor:
            # torch-struct: potentials[b, head, mod] over words, root arcs on the diagonal
            pot = arcs[:, 1:, 1:].clone()
            idx = torch.arange(n)
            pot[:, idx, idx] = arcs[:, 0, 1:]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                dist = torch_struct.DependencyCRF(pot, lengths=lens, multiroot=False)
                logz = dist.partition
            adj = torch.zeros_like(pot)
            adj[:, 0, 0] = 1.0
            adj[:, idx[:-1], idx[1:]] = 1.0
            mask = (torch.arange(n).unsqueeze(0) < lens.unsqueeze(1)).to(pot.dtype)
            gold_score = (pot * adj * mask.unsqueeze(1) * mask.unsqueeze(2)).sum((1, 2))
            return (logz - gold_score).sum()

        out["torch-struct-dependency"] = run(nll)
    except ImportError:
        pass
    return out


# ---- pytest-benchmark ------------------------------------------------------------------------


@pytest.mark.parametrize(("s", "t"), CHAIN_SIZES)
@pytest.mark.parametrize(
    "method", ["bicrit-margin", "bicrit-slack", "bicrit-probloss", "pytorch-crf", "torch-struct"]
)
def test_chain(benchmark, s, t, method):
    methods = chain_methods(s, t)
    if method not in methods:
        pytest.skip(f"{method} is not installed")
    benchmark.group = f"chain-S{s}-T{t}"
    benchmark(methods[method])


@pytest.mark.parametrize("n", TREE_SIZES)
@pytest.mark.parametrize(
    "method",
    [
        "bicrit-margin-eisner",
        "bicrit-margin-cle",
        "bicrit-probloss-eisner",
        "torch-struct-dependency",
    ],
)
def test_tree(benchmark, n, method):
    methods = tree_methods(n)
    if method not in methods:
        pytest.skip(f"{method} is not installed")
    benchmark.group = f"tree-n{n}"
    benchmark(methods[method])


# ---- the RESULTS.md table --------------------------------------------------------------------


def _interleaved(
    methods: dict[str, Callable[[], float]],
    rounds: int,
    clock: Callable[[], float] = time.perf_counter,
) -> dict[str, float]:
    for f in methods.values():  # warm-up (first calls build caches)
        f()
    times: dict[str, list[float]] = {k: [] for k in methods}
    for _ in range(rounds):
        for k, f in methods.items():
            t0 = clock()
            f()
            times[k].append(clock() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def _surrogates_only(rounds: int, repeat: int) -> list[str]:
    """bicrit's slack and ProbLoss against margin (CPU seconds of `repeat` calls per round)."""

    def many(f: Callable[[], float]) -> Callable[[], float]:
        return lambda: [f() for _ in range(repeat)][-1]

    lines = [
        "| structure | size | margin (ms CPU) | slack / margin | ProbLoss / margin |",
        "|---|---|---:|---:|---:|",
    ]
    for s, t in CHAIN_SIZES:
        med = _interleaved(
            {k: many(f) for k, f in chain_methods(s, t, peers=False).items()},
            rounds,
            time.process_time,
        )
        m = med["bicrit-margin"]
        lines.append(
            f"| chain | S = {s}, T = {t} | {1000 * m / repeat:.2f} | {med['bicrit-slack'] / m:.2f} "
            f"| {med['bicrit-probloss'] / m:.2f} |"
        )
        print(lines[-1], flush=True)
    for n in TREE_SIZES:
        med = _interleaved(
            {k: many(f) for k, f in tree_methods(n, peers=False).items()}, rounds, time.process_time
        )
        for tag, name in (("eisner", "projective (Eisner)"), ("cle", "non-projective (CLE)")):
            m = med[f"bicrit-margin-{tag}"]
            lines.append(
                f"| tree, {name} | n = {n} | {1000 * m / repeat:.2f} "
                f"| {med[f'bicrit-slack-{tag}'] / m:.2f} "
                f"| {med[f'bicrit-probloss-{tag}'] / m:.2f} |"
            )
            print(lines[-1], flush=True)
    return lines


def _atomic_write(path: Path, text: str) -> None:
    with atomic_write(path) as f:
        f.write(text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15)
    p.add_argument("--out", default=str(Path(__file__).with_name("RESULTS.md")))
    p.add_argument("--torch-threads", type=int, default=1)
    p.add_argument(
        "--bicrit-only", action="store_true", help="slack and ProbLoss against margin only"
    )
    p.add_argument("--repeat", type=int, default=5, help="calls per timed sample (--bicrit-only)")
    args = p.parse_args(argv)
    # One intra-op thread: on the shared 2-core machine, 2 OpenMP threads made the peers' many
    # small ops 100× slower (barrier spinning under oversubscription); bicrit's native loop has
    # its own rayon pool.
    torch.set_num_threads(args.torch_threads)
    if args.bicrit_only:
        head = (
            f"`python benches/torch/bench_torch.py --bicrit-only --rounds {args.rounds} --repeat "
            f"{args.repeat}`: forward + backward, batch {B}, CPU seconds of the process "
            f"(medians of {args.rounds} interleaved rounds of {args.repeat} calls), "
            f"torch {torch.__version__}."
        )
        _atomic_write(
            Path(args.out),
            "\n".join([head, "", *_surrogates_only(args.rounds, args.repeat)]) + "\n",
        )
        return 0
    lines = [
        "# bicrit.torch against pytorch-crf and torch-struct",
        "",
        f"`python benches/torch/bench_torch.py --rounds {args.rounds}`: forward + backward on "
        f"CPU, float32, batch {B}, ragged lengths (T/2 … T). Medians of {args.rounds} interleaved "
        "rounds "
        "(every method once per round), in milliseconds; ratios inside one run. The machine "
        "(2 cores) was shared with other jobs, so absolute times are noisy; ratios are what to "
        f"read. torch {torch.__version__} with {args.torch_threads} intra-op thread(s) (2 threads "
        "made "
        "the peers' many small ops about 100× slower on the oversubscribed machine), bicrit's "
        f"native batch on its rayon pool; Python {platform.python_version()}.",
        "",
        "## Chains",
        "",
        "bicrit's default search (`auto`): margin = one loss-augmented Viterbi; slack and ProbLoss "
        "= the exact integral maximum of ψ (see the README).",
        "",
        "| S | T | bicrit margin | slack | ProbLoss | pytorch-crf | torch-struct "
        "| margin / pytorch-crf | slack / margin | ProbLoss / margin | margin / torch-struct |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for s, t in CHAIN_SIZES:
        med = _interleaved(chain_methods(s, t), args.rounds)
        ms = {k: 1000 * v for k, v in med.items()}
        m = ms["bicrit-margin"]
        crf, st = ms.get("pytorch-crf", float("nan")), ms.get("torch-struct", float("nan"))
        lines.append(
            f"| {s} | {t} | {m:.2f} | {ms['bicrit-slack']:.2f} | {ms['bicrit-probloss']:.2f} "
            f"| {crf:.2f} | {st:.2f} | {m / crf:.2f} | {ms['bicrit-slack'] / m:.2f} "
            f"| {ms['bicrit-probloss'] / m:.2f} | {m / st:.2f} |"
        )
        print(lines[-1], flush=True)
    lines += [
        "",
        "## Trees",
        "",
        "Gold: a right-branching tree; bicrit projective = Eisner, non-projective = "
        "Chu–Liu–Edmonds; torch-struct = projective `DependencyCRF` negative log-likelihood "
        "(single root).",
        "",
        "| n | margin Eisner | margin CLE | ProbLoss Eisner | ProbLoss CLE | torch-struct "
        "| margin Eisner / torch-struct | ProbLoss Eisner / margin Eisner |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for n in TREE_SIZES:
        med = _interleaved(tree_methods(n), max(3, args.rounds // 3))
        ms = {k: 1000 * v for k, v in med.items()}
        me, st = ms["bicrit-margin-eisner"], ms.get("torch-struct-dependency", float("nan"))
        lines.append(
            f"| {n} | {me:.2f} | {ms['bicrit-margin-cle']:.2f} "
            f"| {ms['bicrit-probloss-eisner']:.2f} "
            f"| {ms['bicrit-probloss-cle']:.2f} | {st:.2f} | {me / st:.2f} "
            f"| {ms['bicrit-probloss-eisner'] / me:.2f} |"
        )
        print(lines[-1], flush=True)
    _atomic_write(Path(args.out), "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
