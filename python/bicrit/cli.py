"""The ``bicrit`` command line (console script). Every command has ``--help``."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

__all__ = ["main"]


def _cmd_plugins(args: argparse.Namespace) -> int:
    from bicrit import registry

    rows = registry.contributions(args.kind)
    if not rows:
        print("nothing registered")
    width = max((len(c.name) for c in rows), default=4)
    for c in rows:
        caps = ", ".join(f"{k}={v}" for k, v in sorted(c.capabilities.items()))
        line = f"{c.kind:<10} {c.name:<{width}}  {c.package} {c.version}"
        if caps:
            line += f"  [{caps}]"
        if c.description:
            line += f"  {c.description}"
        print(line)
    for b in registry.broken():
        print(f"BROKEN     {b.plugin}  {b.package} {b.version}  {b.reason}")
    return 0


def _cmd_datasets(args: argparse.Namespace) -> int:
    from bicrit import datasets

    table = datasets.available(args.root)
    root = datasets.find_data_root(args.root)
    if root is None:
        print(
            "data root: not found (set BICRIT_DATA or pass --root); "
            "only the bundled dataset is available"
        )
    else:
        print(f"data root: {root}")
    rows = table.rows(named=True)
    header = {"name": "NAME", "task": "TASK", "format": "FORMAT", "counts": "SPLITS (README)"}
    widths = {k: max(len(header[k]), *(len(r[k]) for r in rows)) for k in header}
    print("  ".join(f"{header[k]:<{widths[k]}}" for k in header) + "  PRESENT  FOLDER")
    for r in rows:
        cells = "  ".join(f"{r[k]:<{widths[k]}}" for k in header)
        folder = r["path"] if r["present"] or root is None else r["path"] + " (missing)"
        print(f"{cells}  {'yes' if r['present'] else 'no':<7}  {folder}")
    print(
        "bundled: emotions (inside the package; train 391 / test 202 instances) — "
        'bicrit.datasets.load("emotions", bundled=True)'
    )
    return 0


def _cmd_not_yet(args: argparse.Namespace) -> int:
    print(
        f"bicrit {args.command}: no learner is installed in this build of bicrit yet; "
        "`bicrit plugins` lists what is available."
    )
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``bicrit`` command."""
    parser = argparse.ArgumentParser(
        prog="bicrit",
        description="Structured SVMs with bi-criteria surrogate losses.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("plugins", help="list registered structures, surrogates and searches")
    p.add_argument("--kind", choices=["structure", "surrogate", "search"], default=None)
    p.set_defaults(func=_cmd_plugins)

    p = sub.add_parser(
        "datasets",
        help="list the datasets bicrit.datasets.load() can open, where they are, their counts",
        description="List every dataset name of bicrit.datasets.load(): task, format, official "
        "splits with the README's counts, and its folder under the data root (BICRIT_DATA, "
        "default ../shared/data next to the source checkout).",
    )
    p.add_argument("--root", default=None, help="data root (default: BICRIT_DATA, ../shared/data)")
    p.set_defaults(func=_cmd_datasets)

    for name, text in [
        ("train", "train a model (default: margin vs slack rescaling on the bundled dataset)"),
        ("evaluate", "evaluate a saved model on a dataset"),
        ("predict", "predict with a saved model"),
    ]:
        p = sub.add_parser(name, help=text)
        p.set_defaults(func=_cmd_not_yet)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
