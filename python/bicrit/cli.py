"""The ``bicrit`` command line (console script). Every command has ``--help``."""

from __future__ import annotations

import argparse
import inspect
import sys
import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

__all__ = ["main"]


def _class_capabilities(kind: str, factory: Any) -> dict[str, Any]:
    """Capabilities a plugin's factory class declares itself (read without instantiating it),
    shown when the plugin registered none: a structure's ``capabilities`` mapping; a surrogate's
    ``product_shift``, ``affine_in_h``, ``convex_in_h`` and ``tangent`` (and the searches they
    allow)."""
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
        convex = inspect.getattr_static(cls, "convex_in_h", True)
        if isinstance(convex, bool):
            out["convex_in_h"] = convex
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


# ---------------------------------------------------------------------------- train / evaluate /
# predict

BUNDLED = "emotions (bundled)"
DEFAULT_SURROGATES = ("margin", "slack")


class CliError(Exception):
    """An error reported as one line on stderr (exit code 2)."""


def _load_dataset(name: str | None, split: str, limit: int | None = None) -> tuple[Any, str]:
    """``(dataset, description)``: the bundled set (no name), a dataset name of
    ``bicrit.datasets.load`` or a file path (``.conllu`` treebank, ``.arff`` with its MULAN
    ``.xml`` next to it, anything else a CoNLL column file)."""
    from pathlib import Path

    from bicrit import datasets

    if name is None or name.lower() in ("emotions-bundled", "bundled"):
        data: Any = datasets.load_bundled(split)
        desc = f"{BUNDLED}, {split}"
    else:
        path = Path(name)
        if path.is_file():
            low = path.name.lower()
            if low.endswith((".conllu", ".conllu.gz")):
                data = datasets.read_conllu(path)
            elif low.endswith((".arff", ".arff.gz")):
                xmls = sorted(path.parent.glob("*.xml"))
                if len(xmls) != 1:
                    raise CliError(f"{path}: need exactly one MULAN .xml label file beside it")
                data = datasets.read_mulan(path, xmls[0])
            else:
                data = datasets.read_conll(path)
            desc = str(path)
        else:
            if name.lower() == "emotions" and datasets.find_data_root() is None:
                data = datasets.load_bundled(split)
            else:
                data = datasets.load(name, split)
            desc = f"{name}, {split}"
    if limit is not None:
        data = _head(data, limit)
        desc += f", first {limit}"
    return data, desc


def _head(data: Any, n: int) -> Any:
    """The first ``n`` instances / sentences of a dataset."""
    from dataclasses import fields, replace

    from bicrit import datasets

    if isinstance(data, datasets.MultiLabelDataset):
        return replace(data, X=data.X[:n], Y=data.Y[:n])
    if isinstance(data, datasets.SequenceDataset):
        return replace(
            data,
            tokens=data.tokens[:n],
            tags=data.tags[:n],
            columns={k: v[:n] for k, v in data.columns.items()},
            doc_starts=[d for d in data.doc_starts if d < n],
        )
    if isinstance(data, datasets.TreebankDataset):
        changes = {}
        for f in fields(data):
            v = getattr(data, f.name)
            if f.name != "paths" and isinstance(v, list):
                changes[f.name] = v[:n]
        return replace(data, **changes)
    raise CliError(f"--limit is not supported for {type(data).__name__}")


def _estimator_for(data: Any, surrogate: str, args: argparse.Namespace) -> Any:
    from bicrit import DependencySVM, MultiLabelSVM, SequenceSVM, datasets

    common: dict[str, Any] = {"surrogate": surrogate, "learner": args.learner, "C": args.C}
    if args.search is not None:
        common["search"] = args.search
    if args.epochs is not None:
        common["max_epochs"] = args.epochs
    if args.seed is not None:
        common["random_state"] = args.seed
    if args.n_jobs is not None:
        common["n_jobs"] = args.n_jobs
    common["verbose"] = 1
    if isinstance(data, datasets.MultiLabelDataset):
        return MultiLabelSVM(**common)
    if isinstance(data, datasets.SequenceDataset):
        return SequenceSVM(**common)
    if isinstance(data, datasets.TreebankDataset):
        return DependencySVM(**common)
    raise CliError(
        f"bicrit train handles multi-label, sequence and treebank datasets, not "
        f"{type(data).__name__}"
    )


_HEADLINES = {
    "MultiLabelSVM": [
        ("subset_accuracy", "subset acc"),
        ("jaccard_accuracy", "Jaccard acc (thesis Acc)"),
        ("hamming_loss", "Hamming loss"),
        ("micro_f1", "micro-F1"),
        ("macro_f1", "macro-F1"),
        ("example_f1", "example F1"),
    ],
    "SequenceSVM": [
        ("f1", "entity micro-F1"),
        ("macro_f1", "entity macro-F1"),
        ("sentence_f1", "sentence F1 (thesis NER Micro-F1)"),
        ("token_accuracy", "token accuracy"),
    ],
    "DependencySVM": [("uas", "UAS"), ("las", "LAS"), ("uem", "exact match (unlabelled)")],
}


def _metric_rows(est: Any, report: dict[str, Any]) -> list[tuple[str, Any]]:
    keys = _HEADLINES.get(type(est).__name__)
    if keys is None:
        return [(k, v) for k, v in report.items() if isinstance(v, int | float)]
    return [(label, report[k]) for k, label in keys if k in report]


def _print_table(columns: list[str], rows: list[tuple[str, list[Any]]]) -> None:
    def fmt(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.4f}" if abs(v) < 1000 else f"{v:.1f}"
        return str(v)

    cells = [[fmt(v) for v in vals] for _, vals in rows]
    w0 = max(len(r[0]) for r in rows)
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    print(f"{'':<{w0}}  " + "  ".join(f"{c:>{w}}" for c, w in zip(columns, widths, strict=True)))
    for (label, _), r in zip(rows, cells, strict=True):
        print(f"{label:<{w0}}  " + "  ".join(f"{v:>{w}}" for v, w in zip(r, widths, strict=True)))


def _test_split(args: argparse.Namespace) -> str:
    if args.test_split is not None:
        return args.test_split
    if args.dataset is None:
        return "test"
    from bicrit import datasets

    try:
        splits = datasets.spec(args.dataset).splits
    except Exception:
        return "test"
    return "test" if "test" in splits or "testb" in splits else splits[-1]


def _cmd_train(args: argparse.Namespace) -> int:
    surrogates = args.surrogate or list(DEFAULT_SURROGATES)
    if args.save and len(surrogates) != 1:
        raise CliError("--save writes one model: pass a single --surrogate")
    train, train_desc = _load_dataset(args.dataset, args.split, args.limit)
    test_split = _test_split(args)
    test, test_desc = _load_dataset(args.dataset, test_split, args.test_limit)
    print(f"train: {train_desc} ({len(train)})   test: {test_desc} ({len(test)})")
    columns, results = [], []
    for name in surrogates:
        est = _estimator_for(train, name, args)
        est.fit(train)
        summary = est.training_summary()
        report = est.report(test)
        columns.append(name)
        results.append((est, summary, report))
        if args.save:
            est.save(args.save)
    est0 = results[0][0]
    rows: list[tuple[str, list[Any]]] = []
    for i, (label, _) in enumerate(_metric_rows(est0, results[0][2])):
        rows.append((f"test {label}", [_metric_rows(e, r)[i][1] for e, _, r in results]))
    rows += [
        ("fit time (s)", [s["fit_time"] for _, s, _ in results]),
        ("epochs", [s["epochs"] for _, s, _ in results]),
        ("oracle calls per inference", [s["calls_per_inference"] for _, s, _ in results]),
        ("fractional answers", [s["fractional"] for _, s, _ in results]),
        ("search", [s["search"] for _, s, _ in results]),
    ]
    print(f"{type(est0).__name__}, learner {args.learner}, C = {args.C}")
    _print_table(columns, rows)
    if args.save:
        print(f"saved: {args.save}")
    return 0


def _cmd_evaluate(args: argparse.Namespace) -> int:
    import bicrit

    est = bicrit.load(args.model)
    data, desc = _load_dataset(args.dataset, args.split, args.limit)
    report = est.report(data)
    print(f"{type(est).__name__} ({args.model}) on {desc} ({len(data)})")
    _print_table(["value"], [(label, [v]) for label, v in _metric_rows(est, report)])
    return 0


def _prediction_records(est: Any, data: Any) -> Any:
    from bicrit import datasets
    from bicrit.estimators.dependency import sentences_of

    if isinstance(data, datasets.MultiLabelDataset):
        P = est.predict(data)
        names = getattr(est, "label_names_", None) or data.label_names
        for i, y in enumerate(np.asarray(P)):
            labels = [n for n, v in zip(names, y, strict=True) if v]
            yield {"index": i, "y": y.tolist(), "labels": labels}
    elif isinstance(data, datasets.SequenceDataset):
        for i, (toks, tags) in enumerate(zip(data.tokens, est.predict(data), strict=True)):
            yield {"index": i, "tokens": toks, "tags": [str(t) for t in tags]}
    elif isinstance(data, datasets.TreebankDataset):
        sentences = sentences_of(data)
        for i, (s, p) in enumerate(zip(sentences, est.predict(sentences), strict=True)):
            heads, rels = p if isinstance(p, tuple) else (p, None)
            rec = {"index": i, "words": list(s["words"]), "heads": np.asarray(heads).tolist()}
            if rels is not None:
                rec["deprels"] = list(rels)
            yield rec
    else:
        raise CliError(f"cannot predict on {type(data).__name__}")


def _cmd_predict(args: argparse.Namespace) -> int:
    import json

    import bicrit

    est = bicrit.load(args.model)
    data, desc = _load_dataset(args.dataset, args.split, args.limit)
    n = 0
    with open(args.output, "w", encoding="utf-8") as fh:
        for rec in _prediction_records(est, data):
            fh.write(json.dumps(rec, ensure_ascii=False) + "\n")
            n += 1
    print(f"{n} predictions of {type(est).__name__} on {desc} written to {args.output}")
    return 0


def _positive_int(text: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if v < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {v}")
    return v


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {text!r}") from None
    if not v > 0:
        raise argparse.ArgumentTypeError(f"expected a number > 0, got {v}")
    return v


DATASET_HELP = (
    "a dataset name (bicrit datasets lists them) or a file (.conllu, .arff with its .xml, "
    "CoNLL columns)"
)


def _add_train(sub: Any) -> None:
    p = sub.add_parser(
        "train",
        help="train a model (default: margin vs slack rescaling on the bundled dataset)",
        description="Train structured SVMs and print the task's metrics on the test split, the "
        "fit time and the oracle calls per inference. With no DATASET: margin- and "
        "slack-rescaled models on the bundled emotions set, side by side (a few seconds).",
    )
    p.add_argument("dataset", nargs="?", default=None, metavar="DATASET", help=DATASET_HELP)
    p.add_argument(
        "--surrogate",
        action="append",
        default=None,
        help="surrogate (repeat to compare; default: margin and slack)",
    )
    p.add_argument("--search", default=None, help="search (default: auto)")
    p.add_argument(
        "--learner",
        default="sgd",
        choices=["sgd", "bcfw", "cutting-plane", "cutting-plane-n", "auto"],
        help="learner (default: sgd; auto: bcfw when the surrogate allows it, else sgd)",
    )
    p.add_argument("-C", type=_positive_float, default=1.0, help="C, multiplies the loss")
    p.add_argument("--epochs", type=_positive_int, default=None, help="maximum epochs (50)")
    p.add_argument("--seed", type=int, default=0, help="random_state (default 0)")
    p.add_argument("--n-jobs", type=int, default=None, help="threads (-1: all cores)")
    p.add_argument("--split", default="train", help="training split (default: train)")
    p.add_argument("--test-split", default=None, help="evaluation split (default: test)")
    p.add_argument("--limit", type=_positive_int, default=None, help="first N training items")
    p.add_argument(
        "--test-limit", type=_positive_int, default=None, help="first N evaluation items"
    )
    p.add_argument("--save", default=None, metavar="PATH", help="save the model (one surrogate)")
    p.set_defaults(func=_cmd_train)


def _add_evaluate(sub: Any) -> None:
    p = sub.add_parser(
        "evaluate",
        help="evaluate a saved model on a dataset",
        description="Print the task's metrics of a saved model on a dataset split.",
    )
    p.add_argument("model", metavar="MODEL", help="a model file written by train --save")
    p.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    p.add_argument("--split", default="test", help="split (default: test)")
    p.add_argument("--limit", type=_positive_int, default=None, help="first N items")
    p.set_defaults(func=_cmd_evaluate)


def _add_predict(sub: Any) -> None:
    p = sub.add_parser(
        "predict",
        help="predict with a saved model",
        description="Write predictions as JSON Lines, one object per instance: multi-label "
        '{"index", "y" (0/1 list), "labels" (names)}; sequences {"index", "tokens", "tags"}; '
        'trees {"index", "words", "heads" (0 = root), "deprels"}.',
    )
    p.add_argument("model", metavar="MODEL", help="a model file written by train --save")
    p.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    p.add_argument("--split", default="test", help="split (default: test)")
    p.add_argument("--limit", type=_positive_int, default=None, help="first N items")
    p.add_argument("--output", "-o", required=True, metavar="FILE", help="output file (.jsonl)")
    p.set_defaults(func=_cmd_predict)


def _add_plugins(sub: Any) -> None:
    p = sub.add_parser("plugins", help="list registered structures, surrogates and searches")
    p.add_argument("--kind", choices=["structure", "surrogate", "search"], default=None)
    p.set_defaults(func=_cmd_plugins)


def _add_datasets(sub: Any) -> None:
    p = sub.add_parser(
        "datasets",
        help="list the datasets bicrit.datasets.load() can open, where they are, their counts",
        description="List every dataset name of bicrit.datasets.load(): task, format, official "
        "splits with the README's counts, and its folder under the data root (BICRIT_DATA, "
        "default ../shared/data next to the source checkout).",
    )
    p.add_argument("--root", default=None, help="data root (default: BICRIT_DATA, ../shared/data)")
    p.set_defaults(func=_cmd_datasets)


def _add_reproduce(sub: Any) -> None:
    from bicrit.reproduce.cli import add_reproduce_parser

    add_reproduce_parser(sub)


#: One subparser builder per subcommand, in --help order.
SUBCOMMANDS = [_add_plugins, _add_datasets, _add_train, _add_evaluate, _add_predict, _add_reproduce]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``bicrit`` command."""
    parser = argparse.ArgumentParser(
        prog="bicrit",
        description="Structured SVMs with bi-criteria surrogate losses.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script."""
    from bicrit.errors import BicritError

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args))
    except (CliError, BicritError, FileNotFoundError, OSError, ValueError) as exc:
        msg = " ".join(str(exc).split()) or type(exc).__name__
        print(f"bicrit {args.command}: error: {msg}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    raise SystemExit(main())
