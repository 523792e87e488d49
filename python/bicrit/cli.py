"""The ``bicrit`` command line (console script). Every command has ``--help``.

Nothing here knows a task by name: the dataset picks its estimator (each estimator class
declares the ``dataset_type`` it trains on), the fitted structure names its metrics
(``report_names``) and writes its predictions (``record``), and the dataset adds what each
prediction is about (``context``). Every error and warning is one line on stderr (errors exit
with code 2); Ctrl-C stops the whole command, prints what finished and exits with 130.
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from bicrit._atomic import atomic_write, check_writable

__all__ = ["main"]

BUNDLED = "emotions (bundled)"
DEFAULT_SURROGATES = ("margin", "slack")
#: Share of a dataset held out for testing when it has no test split (``--test-size``).
TEST_SIZE = 0.2


class CliError(Exception):
    """An error reported as one line on stderr (exit code 2)."""


class Interrupted(Exception):
    """Ctrl-C stopped the command after some of its work finished."""


# ---------------------------------------------------------------------------- plugins / datasets


def _class_capabilities(kind: str, factory: Any) -> dict[str, Any]:
    """Capabilities a plugin's factory class declares itself (read without instantiating it),
    shown when the plugin registered none: a structure's ``capabilities`` mapping; what a
    surrogate's ``product_shift``, ``affine_in_h`` and ``convex_in_h`` make it (the searches and
    learners it combines with, computed by the native core) and whether it has ``tangent``."""
    cls = factory if isinstance(factory, type) else None
    if cls is None:
        return {}
    out: dict[str, Any] = {}
    if kind == "structure":
        caps = inspect.getattr_static(cls, "capabilities", None)
        if isinstance(caps, Mapping):
            out.update({k: v for k, v in caps.items() if isinstance(v, bool)})
    elif kind == "surrogate":
        from types import SimpleNamespace

        from bicrit import _native

        declared: dict[str, Any] = {"name": getattr(cls, "name", cls.__name__)}
        defaults = {"product_shift": None, "affine_in_h": False, "convex_in_h": True}
        for attr, default in defaults.items():
            value = inspect.getattr_static(cls, attr, default)
            if value is None or isinstance(value, bool | int | float):
                declared[attr] = value
        # the class's declarations, judged by the native core as the built-ins are
        stand_in = SimpleNamespace(value=lambda h, g: 0.0, grad=lambda h, g: (1.0, 0.0), **declared)
        out.update(_native.surrogate_capabilities(stand_in))
        out["tangent"] = callable(getattr(cls, "tangent", None))
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
    from bicrit.errors import BrokenPluginWarning

    if args.markdown:
        print(registry.capability_tables(builtins_only=False), end="")
        return 0
    with warnings.catch_warnings():
        # Broken plugins are listed below as BROKEN, with the reason: no need to warn as well.
        warnings.simplefilter("ignore", BrokenPluginWarning)
        rows = registry.contributions(args.kind)
        broken = registry.broken()
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
    clashes = registry.clashes(args.kind)
    for clash in clashes:
        who = ", ".join(f"{c.package} {c.version}" for c in clash.contributions)
        print(f"CLASH      {clash.kind} {clash.name}  {who}  (unusable until one is uninstalled)")
    if clashes:  # the listing is complete; the command fails so that scripts notice
        more = f" (and {len(clashes) - 1} more clashes)" if len(clashes) > 1 else ""
        raise CliError(clashes[0].message() + more)
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


# ---------------------------------------------------------------------------- data


def _read_file(path: Path) -> Any:
    """A dataset file by its extension (:func:`bicrit.datasets.read_file`)."""
    from bicrit import datasets
    from bicrit.errors import InvalidInputError

    try:
        return datasets.read_file(path)
    except InvalidInputError as e:
        if "MULAN .xml" in str(e):
            raise CliError(str(e)) from None
        raise


def _looks_like_path(name: str) -> bool:
    return os.sep in name or name.startswith(".") or Path(name).suffix != ""


def _load(name: str | None, split: str | None) -> tuple[Any, str]:
    """``(dataset, description)``: the bundled set (no name), a file, or split ``split`` of a
    named dataset (``None``: the whole dataset of a named set without splits)."""
    from bicrit import datasets

    if _bundled(name):
        return datasets.load_bundled(split or "train"), f"{BUNDLED}, {split or 'train'}"
    assert name is not None  # the bundled set when there is no name
    path = Path(name)
    if path.is_file():
        return _read_file(path), str(path)
    if _looks_like_path(name) and name not in datasets.names():
        raise CliError(f"no such file: {name}")
    spec = datasets.spec(name)
    split = split or _default_split(spec)
    options: dict[str, Any] = {}
    if spec.task.startswith("hierarch"):  # Clus HMC: missing features filled with train means
        options["impute"] = "mean"
    return datasets.load(name, split, **options), f"{name}, {split}"


def _bundled(name: str | None) -> bool:
    """Whether ``name`` means the bundled set: none, ``bundled``, ``emotions-bundled``, or
    ``emotions`` when there is no data root."""
    from bicrit import datasets

    if name is None or name.lower() in ("emotions-bundled", "bundled"):
        return True
    return name.lower() == "emotions" and datasets.find_data_root() is None


def _default_split(spec: Any) -> str:
    """The training split when none is given: ``train``, else the first."""
    return "train" if "train" in spec.splits else spec.splits[0]


def _head(data: Any, n: int | None) -> Any:
    return data if n is None or n >= len(data) else data.subset(range(n))


def _holdout(data: Any, size: float, seed: int) -> tuple[Any, Any]:
    """A seeded split of ``data`` into (train, held-out test)."""
    n = len(data)
    n_test = max(1, round(size * n))
    if n - n_test < 1:
        raise CliError(f"{n} instances are too few to hold out a test part")
    perm = np.random.default_rng(seed).permutation(n)
    return data.subset(np.sort(perm[n_test:])), data.subset(np.sort(perm[:n_test]))


def _train_and_test(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """The training and test sets of ``bicrit train`` and a line saying which they are.
    Nothing called "test" was trained on: a file or a dataset without a test split holds out a
    seeded ``--test-size`` part unless ``--test FILE`` is given."""
    if args.test is not None and args.test_split is not None:
        raise CliError("pass --test FILE or --test-split, not both")
    is_file = args.dataset is not None and Path(args.dataset).is_file()
    if is_file and args.test_split is not None:
        raise CliError("a file has no splits: pass --test FILE or --test-size")
    seed = 0 if args.seed is None else int(args.seed)
    train, desc = _load(args.dataset, args.split)
    train = _head(train, args.limit)
    official = None if is_file else _official_test(args.dataset)
    if args.test is not None:
        test, test_desc = _read_file(Path(args.test)), f"{args.test} (--test)"
    elif args.test_split is not None:
        _check_disjoint(args.dataset, args.split, args.test_split)
        test, test_desc = _load(args.dataset, args.test_split)
    elif args.test_size is None and official is not None:
        _check_disjoint(args.dataset, args.split, official)
        test, test_desc = _load(args.dataset, official)
    else:
        size = TEST_SIZE if args.test_size is None else args.test_size
        train, test = _holdout(train, size, seed)
        test_desc = f"a held-out {size:.0%} of the training data (seed {seed}, --test-size)"
    test = _head(test, args.test_limit)
    where = f"train: {desc} ({len(train)})   test: {test_desc} ({len(test)})"
    return train, test, where


def _check_disjoint(name: str | None, train_split: str | None, test_split: str) -> None:
    """Refuses a test split that shares files with the training split (``all`` holds the
    ``test`` files of nltk_dependency_treebank): nothing called "test" was trained on."""
    from bicrit import datasets

    if _bundled(name):
        return
    assert name is not None
    spec = datasets.spec(name)
    train = spec.resolve_split(train_split or _default_split(spec))
    test = spec.resolve_split(test_split)
    shared = set(spec.files[train]) & set(spec.files[test])
    if shared:
        raise CliError(
            f"{name}: the test split {test!r} is part of the training split {train!r} "
            f"({len(shared)} shared files): pass --split train, another --test-split, "
            "--test FILE or --test-size"
        )


def _official_test(name: str | None) -> str | None:
    """The test split of the bundled set or of a named dataset (``testb`` for CoNLL-2002),
    None if it has none."""
    from bicrit import datasets

    if _bundled(name):
        return "test"
    assert name is not None
    splits = datasets.spec(name).splits
    return next((s for s in ("test", "testb") if s in splits), None)


# ---------------------------------------------------------------------------- estimators


def _estimator_for(data: Any, params: dict[str, Any]) -> Any:
    """The estimator whose ``dataset_type`` ``data`` is, with ``params`` (those it has)."""
    from bicrit.estimators import ESTIMATOR_CLASSES

    for cls in ESTIMATOR_CLASSES.values():
        dtype = getattr(cls, "dataset_type", None)
        if dtype is not None and isinstance(data, dtype):
            accepted = set(inspect.signature(cls).parameters)
            return cls.for_dataset(data, **{k: v for k, v in params.items() if k in accepted})
    raise CliError(f"bicrit train has no estimator for {type(data).__name__}")


def _surrogate_option(text: str) -> tuple[str, dict[str, float]]:
    """``NAME`` or ``NAME:key=value[,key=value]`` (e.g. ``beta:beta=0.5``), checked now."""
    import bicrit

    name, _, rest = text.partition(":")
    params: dict[str, float] = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        try:
            if not eq:
                raise ValueError
            params[key.strip()] = float(value)
        except ValueError:
            raise CliError(
                f"--surrogate {text!r}: write NAME or NAME:key=value[,key=value]"
            ) from None
    bicrit.surrogate(name, **params)  # unknown names and bad parameters fail before any work
    return name, params


def _params(args: argparse.Namespace, surrogate: str) -> dict[str, Any]:
    """Estimator parameters from the options the user gave (the others keep the estimator's
    defaults)."""
    given = {
        "learner": args.learner,
        "search": args.search,
        "C": "auto" if args.tune else args.C,
        "max_epochs": args.epochs,
        "random_state": args.seed,
        "n_jobs": args.n_jobs,
        "edges": args.edges,
        "slack_norm": args.slack_norm,
    }
    chosen = {k: v for k, v in given.items() if v is not None}
    name, params = _surrogate_option(surrogate)
    if params:
        chosen["surrogate_params"] = params
    return {"surrogate": name, "verbose": 1, **chosen}


def _metric_rows(est: Any, report: dict[str, Any]) -> list[tuple[str, Any]]:
    names = getattr(est.structure_, "report_names", None) or [(k, k) for k in report]
    return [(label, report[k]) for k, label in names if k in report]


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


def _cmd_train(args: argparse.Namespace) -> int:
    surrogates = args.surrogate or list(DEFAULT_SURROGATES)
    for text in surrogates:
        _surrogate_option(text)
    if args.save and len(surrogates) != 1:
        raise CliError("--save writes one model: pass a single --surrogate")
    save = check_writable(args.save) if args.save else None
    train, test, where = _train_and_test(args)
    print(where)
    columns: list[str] = []
    results: list[tuple[Any, dict[str, Any], dict[str, Any]]] = []
    interrupted = False
    # a fit stopped before its first epoch, or whose evaluation Ctrl-C cut short: no column,
    # a line saying why instead
    cut: tuple[str, str] | None = None
    for name in surrogates:
        try:
            est = _estimator_for(train, _params(args, name))
            est.fit(train)
        except KeyboardInterrupt:  # nothing of this fit finished
            interrupted, cut = True, (name, "stopped before its first epoch finished")
            break
        try:
            summary, report = est.training_summary(), est.report(test)
        except KeyboardInterrupt:  # the fit finished, its evaluation on the test split did not
            interrupted, cut = True, (name, "interrupted while it was evaluated")
            break
        columns.append(name + (" (interrupted)" if est.interrupted_ else ""))
        results.append((est, summary, report))
        if est.interrupted_:
            interrupted = True
            break
    if not results:
        if cut is not None and cut[1].startswith("interrupted while"):
            raise Interrupted("interrupted while the first fit was evaluated: nothing to report")
        raise Interrupted("interrupted before the first epoch finished: nothing to report")
    est0 = results[0][0]
    rows: list[tuple[str, list[Any]]] = []
    for i, (label, _) in enumerate(_metric_rows(est0, results[0][2])):
        rows.append((f"test {label}", [_metric_rows(e, r)[i][1] for e, _, r in results]))
    rows += [
        ("fit time (s)", [s["fit_time"] for _, s, _ in results]),
        ("epochs", [s["epochs"] for _, s, _ in results]),
        ("C", [s["C"] for _, s, _ in results]),
        ("oracle calls per inference", [s["calls_per_inference"] for _, s, _ in results]),
        ("fractional answers", [s["fractional"] for _, s, _ in results]),
        ("learner", [s["learner"] for _, s, _ in results]),
        ("search", [s["search"] for _, s, _ in results]),
    ]
    print(type(est0).__name__ + (" (C chosen on held-out data, --tune)" if args.tune else ""))
    _print_table(columns, rows)
    for graph in dict.fromkeys(s["edges"] for _, s, _ in results if "edges" in s):
        print(f"label graph: {graph}")  # the graph edges="auto" chose, and why
    if cut is not None:
        print(f"{cut[0]} (interrupted): {cut[1]}, not in the table")
    if save is not None and not interrupted:
        est0.save(save)
        print(f"saved: {save}")
    if interrupted:
        raise Interrupted("interrupted (Ctrl-C): the table shows what finished")
    return 0


def _model_and_data(args: argparse.Namespace) -> tuple[Any, Any, str]:
    """The saved model, the first ``--limit`` items of the dataset split it is applied to, and
    a description of them; a dataset of another task than the model's is refused."""
    import bicrit

    est = bicrit.load(args.model)
    data, desc = _load(args.dataset, args.split)
    data = _head(data, args.limit)
    dtype = getattr(est, "dataset_type", None)
    if dtype is not None and not isinstance(data, dtype):
        raise CliError(
            f"the model is a {type(est).__name__}, which takes a {dtype.__name__}; "
            f"{args.dataset} is a {type(data).__name__}"
        )
    return est, data, desc


def _cmd_evaluate(args: argparse.Namespace) -> int:
    est, data, desc = _model_and_data(args)
    report = est.report(data)
    print(f"{type(est).__name__} ({args.model}) on {desc} ({len(data)})")
    _print_table(["value"], [(label, [v]) for label, v in _metric_rows(est, report)])
    return 0


def _cmd_predict(args: argparse.Namespace) -> int:
    import json

    out = check_writable(args.output)
    est, data, desc = _model_and_data(args)
    records = est.prediction_records(data)  # every prediction before the file is touched
    lines = (
        json.dumps({"index": i, **data.context(i), **r}, ensure_ascii=False) + "\n"
        for i, r in enumerate(records)
    )
    n = 0
    with atomic_write(out) as fh:  # an existing file is replaced whole or kept
        for line in lines:
            fh.write(line)
            n += 1
    print(f"{n} predictions of {type(est).__name__} on {desc} written to {out}")
    return 0


# ---------------------------------------------------------------------------- parser


def _number(kind: Callable[[str], Any], ok: Callable[[Any], bool], what: str) -> Any:
    """An argparse type: ``kind(text)`` when ``ok`` accepts it, else the error "expected
    ``what``"."""

    def parse(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}") from None
        if not ok(v):
            raise argparse.ArgumentTypeError(f"expected {what}, got {v}")
        return v

    return parse


_positive_int = _number(int, lambda v: v >= 1, "a positive integer")
_positive_float = _number(float, lambda v: v > 0, "a number > 0")
_fraction = _number(float, lambda v: 0 < v < 1, "a fraction in (0, 1)")


def _learner_names() -> list[str]:
    from bicrit.learners import LEARNER_NAMES

    return [*LEARNER_NAMES, "auto"]


DATASET_HELP = (
    "a dataset name (bicrit datasets lists them) or a file (.conllu, .arff with its .xml, "
    "CoNLL columns)"
)


def _add_train(sub: Any) -> None:
    p = sub.add_parser(
        "train",
        help="train a model (default: margin vs slack rescaling on the bundled dataset)",
        description="Train structured SVMs and print the task's metrics on a test set, the "
        "fit time and the oracle calls per inference. With no DATASET: margin- and "
        "slack-rescaled models on the bundled emotions set, side by side (a few seconds). The "
        "test set is the dataset's test split, --test FILE, or a seeded held-out part of the "
        "training data (--test-size; files and datasets without a test split). Options not "
        "given keep the estimator's defaults.",
    )
    p.add_argument("dataset", nargs="?", default=None, metavar="DATASET", help=DATASET_HELP)
    p.add_argument(
        "--surrogate",
        action="append",
        default=None,
        help="surrogate, NAME or NAME:key=value (e.g. beta:beta=0.5); repeat to compare "
        "(default: margin and slack)",
    )
    p.add_argument("--search", default=None, help="search (default: the estimator's, auto)")
    p.add_argument(
        "--learner",
        default=None,
        choices=_learner_names(),
        help="learner (default: the estimator's; auto: bcfw when the surrogate allows it)",
    )
    p.add_argument("-C", type=_positive_float, default=None, help="C, multiplies the loss")
    p.add_argument(
        "--slack-norm",
        type=int,
        choices=[1, 2],
        default=None,
        help="1: C·Σ ξ_i; 2: squared slacks C·Σ ξ_i² (learner bcfw; default: the estimator's)",
    )
    p.add_argument(
        "--tune",
        action="store_true",
        help="choose C on held-out training data (C='auto'), printed per surrogate",
    )
    p.add_argument("--epochs", type=_positive_int, default=None, help="maximum epochs")
    p.add_argument("--seed", type=int, default=None, help="random_state (and the hold-out seed)")
    p.add_argument("--n-jobs", type=int, default=None, help="threads (-1: all cores)")
    p.add_argument("--edges", default=None, help="multi-label graph: auto, full, tree or chain")
    p.add_argument("--split", default=None, help="training split (default: the first)")
    p.add_argument("--test", default=None, metavar="FILE", help="a test file")
    p.add_argument("--test-split", default=None, help="evaluation split of a named dataset")
    p.add_argument(
        "--test-size",
        type=_fraction,
        default=None,
        help=f"hold out this share of the training data for testing (default {TEST_SIZE} "
        "where there is no test split)",
    )
    p.add_argument("--limit", type=_positive_int, default=None, help="first N training items")
    p.add_argument("--test-limit", type=_positive_int, default=None, help="first N test items")
    p.add_argument("--save", default=None, metavar="PATH", help="save the model (one surrogate)")
    p.set_defaults(func=_cmd_train)


def _add_model_and_data(p: Any) -> None:
    """The arguments of the commands that apply a saved model to a dataset."""
    p.add_argument("model", metavar="MODEL", help="a model file written by train --save")
    p.add_argument("dataset", metavar="DATASET", help=DATASET_HELP)
    p.add_argument("--split", default="test", help="split (default: test)")
    p.add_argument("--limit", type=_positive_int, default=None, help="first N items")


def _add_evaluate(sub: Any) -> None:
    p = sub.add_parser(
        "evaluate",
        help="evaluate a saved model on a dataset",
        description="Print the task's metrics of a saved model on a dataset split.",
    )
    _add_model_and_data(p)
    p.set_defaults(func=_cmd_evaluate)


def _add_predict(sub: Any) -> None:
    p = sub.add_parser(
        "predict",
        help="predict with a saved model",
        description="Write predictions as JSON Lines, one object per instance with its index, "
        "what it is about (tokens, words) and the prediction as the model's structure writes "
        'it: multi-label {"y" (0/1 list), "labels" (names)}; sequences {"tags"}; trees '
        '{"heads" (0 = root), "deprels"}; hierarchies {"nodes", "names"}. The file is written '
        "only once every prediction is made (an existing file is replaced whole or kept).",
    )
    _add_model_and_data(p)
    p.add_argument("--output", "-o", required=True, metavar="FILE", help="output file (.jsonl)")
    p.set_defaults(func=_cmd_predict)


def _add_plugins(sub: Any) -> None:
    p = sub.add_parser("plugins", help="list registered structures, surrogates and searches")
    p.add_argument("--kind", choices=["structure", "surrogate", "search"], default=None)
    p.add_argument(
        "--markdown", action="store_true", help="what combines with what, as Markdown tables"
    )
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
    from bicrit import __version__

    parser = argparse.ArgumentParser(
        prog="bicrit",
        description="Structured SVMs with bi-criteria surrogate losses.",
    )
    parser.add_argument("--version", action="version", version=f"bicrit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for add in SUBCOMMANDS:
        add(sub)
    return parser


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


@contextmanager
def _warnings_as_lines(command: str) -> Iterator[None]:
    """Warnings printed as one line on stderr (``bicrit CMD: warning: …``), without the
    source line Python adds."""

    def show(message: Any, category: type, *_: Any, **__: Any) -> None:
        print(f"bicrit {command}: warning: {_one_line(message)}", file=sys.stderr)

    previous = warnings.showwarning
    warnings.showwarning = show
    try:
        yield
    finally:
        warnings.showwarning = previous


@contextmanager
def _ctrl_c_never_lost() -> Iterator[None]:
    """Ctrl-C that lands in a weakref callback or a ``__del__`` (the import system's module
    locks have one: a fit's first lazy imports) cannot raise there: Python prints "Exception
    ignored" and the command would run on. During a command such a ``KeyboardInterrupt`` is
    delivered again to the main thread, where it stops the command as any Ctrl-C does. From
    a timer thread, a moment later: the main thread handles a signal at its next bytecode,
    which would still be inside this hook."""
    import _thread
    import threading

    previous = sys.unraisablehook

    def hook(unraisable: Any) -> None:
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            previous(unraisable)
            return
        while True:
            try:
                threading.Timer(0.05, _thread.interrupt_main).start()
                return
            except KeyboardInterrupt:  # an earlier delivery landed in this hook: one more
                continue

    sys.unraisablehook = hook
    try:
        yield
    finally:
        sys.unraisablehook = previous


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script: 0 on success, 2 on an error (one line on stderr),
    130 after Ctrl-C."""
    from bicrit.errors import BicritError

    parser = build_parser()
    args = parser.parse_args(argv)
    with _warnings_as_lines(args.command), _ctrl_c_never_lost():
        try:
            return int(args.func(args))
        except Interrupted as exc:
            print(f"bicrit {args.command}: {_one_line(exc)}", file=sys.stderr)
            return 130
        except KeyboardInterrupt:
            print(f"bicrit {args.command}: interrupted (Ctrl-C)", file=sys.stderr)
            return 130
        except (CliError, BicritError, OSError, ValueError) as exc:
            msg = _one_line(exc) or type(exc).__name__
            print(f"bicrit {args.command}: error: {msg}", file=sys.stderr)
            return 2


if __name__ == "__main__":
    raise SystemExit(main())
