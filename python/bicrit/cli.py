"""The ``bicrit`` command line (console script). Every command has ``--help``."""

from __future__ import annotations

import argparse
import inspect
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["main"]


def _class_capabilities(kind: str, factory: Any) -> dict[str, Any]:
    """Capabilities a plugin's factory class declares itself (read without instantiating it),
    shown when the plugin registered none: a structure's ``capabilities`` mapping; a surrogate's
    ``product_shift``, ``affine_in_h`` and ``tangent`` (and the searches they allow)."""
    cls = factory if isinstance(factory, type) else None
    if cls is None:
        return {}
    out: dict[str, Any] = {}
    if kind == "structure":
        caps = inspect.getattr_static(cls, "capabilities", None)
        if isinstance(caps, Mapping):
            out.update({k: v for k, v in caps.items() if isinstance(v, bool)})
    elif kind == "surrogate":
        shift = inspect.getattr_static(cls, "product_shift", None)
        if shift is None or isinstance(shift, int | float):
            out["product_form"] = shift is not None
        affine = inspect.getattr_static(cls, "affine_in_h", False)
        if isinstance(affine, bool):
            out["affine_in_h"] = affine
        out["tangent"] = callable(getattr(cls, "tangent", None))
        if "product_form" in out:
            hull = ["convex-hull", "convex-hull-ban", "convex-hull-kbest"]
            product = ["angular", "bisecting", "binary", "sarawagi"]
            out["searches"] = hull + (product if out["product_form"] else [])
    return out


def _format_capabilities(caps: Mapping[str, Any]) -> str:
    def fmt(v: Any) -> str:
        if isinstance(v, list | tuple):
            return ",".join(map(str, v))
        if isinstance(v, Mapping):
            return "{" + ", ".join(f"{k}: {fmt(x)}" for k, x in v.items()) + "}"
        return str(v)

    return "; ".join(f"{k}={fmt(v)}" for k, v in sorted(caps.items()))


def _cmd_plugins(args: argparse.Namespace) -> int:
    from bicrit import registry
    from bicrit.errors import BrokenPluginWarning, RegistryError

    with warnings.catch_warnings():
        # Broken plugins are listed below as BROKEN, with the reason: no need to warn as well.
        warnings.simplefilter("ignore", BrokenPluginWarning)
        try:
            rows = registry.contributions(args.kind)
            broken = registry.broken()
        except RegistryError as exc:  # two packages registering one name
            print(f"bicrit plugins: error: {exc}", file=sys.stderr)
            return 1
    if not rows:
        print("nothing registered")
    width = max((len(c.name) for c in rows), default=4)
    for c in rows:
        caps = dict(c.capabilities) or _class_capabilities(c.kind, c.factory)
        line = f"{c.kind:<10} {c.name:<{width}}  {c.package} {c.version}"
        if caps:
            line += f"  [{_format_capabilities(caps)}]"
        if c.description:
            line += f"  {c.description}"
        print(line)
    for b in broken:
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

    from bicrit.reproduce.cli import add_reproduce_parser

    add_reproduce_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())
