"""Full-scale UD English EWT parsing (issue 5, 4(c)), sized to the time there was: margin
rescaling 4 epochs, ProbLoss 2 margin epochs + 2 ProbLoss epochs (capped k-best recovery), the
fixed λ and step of :mod:`bicrit.reproduce.parsing` (no dev grid), one seed. Each method is
written as soon as it finishes (``parsing_<method>.csv`` and history) under the folder given.

Usage: ``python benches/learners/run_parsing_full.py benches/learners/results/parsing_full``
"""

from __future__ import annotations

import sys
from pathlib import Path

from bicrit.reproduce import parsing


def main(out: Path) -> None:
    for method in ("margin", "probloss"):
        d = out / method
        table = parsing.run(1.0, 1, d, methods=(method,), epochs=4)
        print(table, flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else "benches/learners/results/parsing_full"))
