"""Oracle calls per example along a training loop (the evidence behind benches/torch/RESULTS.md's
"Slack on trees: not met"): trains the `bench_torch --epochs` tree scorer with one surrogate and,
after each epoch, prints the histogram of `bicrit.scores.loss(...).calls` on the first batch
(cold: no warm start). ``python benches/torch/slack_calls.py N SURROGATE [--cle]``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).parent))

import bench_torch as bench

import bicrit.scores as bs
import bicrit.torch as bt


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("n", type=int)
    p.add_argument("surrogate")
    p.add_argument("--cle", action="store_true", help="non-projective (Chu–Liu–Edmonds)")
    p.add_argument("--epochs", type=int, default=4)
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    proj = not args.cle
    task = bench._Task("tree", (args.n,), 4)
    params = [q.clone().requires_grad_(True) for q in task.init(torch.Generator().manual_seed(1))]
    opt = torch.optim.Adam(params, lr=0.05)
    fn = bt.TreeLoss(surrogate=args.surrogate, reduction="sum", projective=proj)
    for e in range(args.epochs):
        for x, gold, lens, _ in task.batches:
            opt.zero_grad()
            (arcs,) = task.scores(params, x)
            fn(arcs, gold, lengths=lens).backward()
            opt.step()
        x, gold, lens, _ = task.batches[0]
        with torch.no_grad():
            (arcs,) = task.scores(params, x)
        r = bs.loss(
            "tree",
            arcs.double().numpy(),
            gold.numpy(),
            surrogate=args.surrogate,
            lengths=lens.numpy(),
            projective=proj,
        )
        hist = np.bincount(r.calls)
        print(f"epoch {e + 1}: calls per example {dict(enumerate(hist.tolist()))}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
