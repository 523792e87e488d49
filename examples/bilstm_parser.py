"""A BiLSTM dependency parser (Kiperwasser & Goldberg style) trained with a structured loss of
bicrit on UD English EWT, on CPU: margin rescaling, then ProbLoss from the middle epoch, as the
thesis's neural parsing experiment (§"Dependency Parsing on Deep Network").

    pip install -e ".[torch]"
    nice -n 10 python examples/bilstm_parser.py --scale 0.1 --seeds 1 --out /tmp/parser

The model and protocol are those of ``bicrit reproduce parsing-bilstm``
(:mod:`bicrit.reproduce.neural`): word and UPOS embeddings, a 2-layer BiLSTM, MLP arc and
relation scores, :class:`bicrit.torch.TreeLoss` on both (Chu–Liu–Edmonds, one root child),
the epoch chosen on dev LAS, test UAS/LAS at that epoch.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from bicrit.reproduce.neural import parsing_bilstm


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--scale", type=float, default=1.0, help="fraction of train and epochs")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--out", type=Path, default=None, help="folder for the CSV logs")
    p.add_argument("--epochs", type=int, default=None, help="epochs (default: 6 × scale, ≥ 2)")
    p.add_argument("--first-seed", type=int, default=0)
    a = p.parse_args()
    print(parsing_bilstm(a.scale, a.seeds, a.out, epochs=a.epochs, first_seed=a.first_seed))


if __name__ == "__main__":
    main()
