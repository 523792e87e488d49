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
ratios of issue 14's "≤ 2× margin" on a loaded machine. ``--epochs E`` times a training loop
instead: small scorers trained with Adam over E epochs of the same batches, one model per loss
(margin; slack and ProbLoss cold and with example ``ids``, i.e. warm starts across batches), steps
interleaved, CPU seconds of the loss's forward + backward.
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
    names = list(methods)
    for r in range(rounds):
        # each round starts one method later: no method always runs right after the slowest
        # (torch-struct's seconds-long calls), whose after-effects hit whichever runs next
        for k in names[r % len(names) :] + names[: r % len(names)]:
            t0 = clock()
            methods[k]()
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


# ---- a training loop over epochs (warm starts across batches) --------------------------------


class _Task:
    """A small trained scorer over fixed random token features: ``n_batches`` batches of B
    examples with ragged lengths, gold labels decoded from a teacher scorer of the same form
    (10 % of the chain tags then resampled), and a student trained with Adam on one loss."""

    def __init__(self, kind: str, size: tuple[int, ...], n_batches: int, seed: int = 0) -> None:
        g = torch.Generator().manual_seed(seed)
        self.kind, self.d = kind, 16
        if kind == "chain":
            s, t = size
            self.s, self.t = s, t
        else:
            (t,) = size
            self.t = t
        self.batches = []
        teacher = self.init(g)
        for k in range(n_batches):
            x = torch.randn(B, self.t + (kind != "chain"), self.d, generator=g)
            lens = _lengths(self.t, g)
            with torch.no_grad():
                sc = self.scores(teacher, x)
            if kind == "chain":
                gold = bt.chain_decode(sc[0], sc[1], lengths=lens)
                flip = torch.rand(gold.shape, generator=g) < 0.1
                gold = torch.where(flip, torch.randint(0, s, gold.shape, generator=g), gold)
            else:
                gold = bt.tree_decode(sc[0], lengths=lens, projective=True)
            ids = torch.arange(k * B, (k + 1) * B)
            self.batches.append((x, gold, lens, ids))

    def init(self, g: torch.Generator) -> list[torch.Tensor]:
        d = self.d
        if self.kind == "chain":
            return [torch.randn(d, self.s, generator=g), torch.randn(self.s, self.s, generator=g)]
        return [torch.randn(d, d, generator=g) / d**0.5, torch.randn(d, d, generator=g) / d**0.5]

    def scores(self, params: list[torch.Tensor], x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        if self.kind == "chain":
            return (x @ params[0], params[1])
        return ((x @ params[0]) @ (x @ params[1]).transpose(1, 2),)


def _training_loop(kind: str, size: tuple[int, ...], epochs: int, n_batches: int) -> list[str]:
    """One model per method trained on the same batches, steps interleaved; CPU seconds of the
    loss's forward + backward, per epoch, summed over the methods' own trajectories."""
    task = _Task(kind, size, n_batches)
    loss_of = {
        "margin": ("margin", False),
        "slack": ("slack", False),
        "slack+ids": ("slack", True),
        "probloss": ("probloss", False),
        "probloss+ids": ("probloss", True),
    }
    trees = [None] if kind == "chain" else [True, False]
    lines = []
    for proj in trees:
        models = {}
        for m, (sur, warm) in loss_of.items():
            params = [
                p.clone().requires_grad_(True) for p in task.init(torch.Generator().manual_seed(1))
            ]
            if kind == "chain":
                fn = bt.ChainLoss(surrogate=sur, reduction="sum")
            else:
                fn = bt.TreeLoss(surrogate=sur, reduction="sum", projective=bool(proj))
            models[m] = (params, torch.optim.Adam(params, lr=0.05), fn, warm)
        cpu = {m: [0.0] * epochs for m in models}
        for e in range(epochs):
            for x, gold, lens, ids in task.batches:
                for m, (params, opt, fn, warm) in models.items():
                    opt.zero_grad()
                    sc = task.scores(params, x)
                    sc = tuple(a.detach().requires_grad_(True) for a in sc)
                    t0 = time.process_time()
                    loss = fn(*sc, gold, lengths=lens, ids=ids if warm else None)
                    loss.backward()
                    cpu[m][e] += time.process_time() - t0
                    torch.autograd.backward(task.scores(params, x), [a.grad for a in sc])
                    opt.step()
        where = "chain" if kind == "chain" else ("tree, Eisner" if proj else "tree, CLE")
        label = f"S = {size[0]}, T = {size[1]}" if kind == "chain" else f"n = {size[0]}"
        m0 = sum(cpu["margin"][1:])
        first = cpu["margin"][0]
        cells = " | ".join(
            f"{cpu[m][0] / first:.2f} / {sum(cpu[m][1:]) / m0:.2f}" for m in list(models)[1:]
        )
        lines.append(
            f"| {where} | {label} | {1000 * m0 / ((epochs - 1) * n_batches):.2f} | {cells} |"
        )
        print(lines[-1], flush=True)
    return lines


def _epochs_table(epochs: int, n_batches: int) -> list[str]:
    lines = [
        "| structure | size | margin (ms CPU per batch, epochs 2+) "
        "| slack | slack + ids | ProbLoss | ProbLoss + ids |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for s, t in CHAIN_SIZES:
        lines += _training_loop("chain", (s, t), epochs, n_batches)
    for n in TREE_SIZES:
        lines += _training_loop("tree", (n,), epochs, n_batches)
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
    p.add_argument(
        "--epochs",
        type=int,
        default=0,
        help="time a training loop of this many epochs instead (warm starts across batches)",
    )
    p.add_argument("--batches", type=int, default=4, help="batches per epoch (--epochs)")
    args = p.parse_args(argv)
    # One intra-op thread: on the shared 2-core machine, 2 OpenMP threads made the peers' many
    # small ops 100× slower (barrier spinning under oversubscription); bicrit's native loop has
    # its own rayon pool.
    torch.set_num_threads(args.torch_threads)
    if args.epochs:
        head = (
            f"`python benches/torch/bench_torch.py --epochs {args.epochs} --batches "
            f"{args.batches}`: a training loop, {args.batches} batches of {B} per epoch, "
            f"{args.epochs} epochs; CPU seconds of the loss's forward + backward; cells: "
            "epoch 1 ÷ margin's epoch 1 / epochs 2+ ÷ margin's epochs 2+. torch "
            f"{torch.__version__}."
        )
        _atomic_write(
            Path(args.out), "\n".join([head, "", *_epochs_table(args.epochs, args.batches)]) + "\n"
        )
        return 0
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
