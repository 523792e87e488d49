"""Writes the API reference's sources (``docs/api/``, generated at each build, not committed):
one page per public module (its docstring and a table of its names) and one page per public name,
documented once under its *canonical* module — the public module whose path is the longest prefix
of the module that defines it; other modules that export it link there.

The public modules are :data:`PUBLIC_MODULES`; ``tests/docs`` checks that every name in their
``__all__`` lists has a page in the built site, and that every module a public ``__all__`` names
is listed here.
"""

from __future__ import annotations

import importlib
import inspect
import os
import types
from pathlib import Path
from typing import Any

#: The public modules, in the reference's order (optional extras last).
PUBLIC_MODULES = (
    "bicrit",
    "bicrit.estimators",
    "bicrit.estimators.model_format",
    "bicrit.hierarchy",
    "bicrit.structures",
    "bicrit.surrogates",
    "bicrit.searches",
    "bicrit.searches.plot",
    "bicrit.learners",
    "bicrit.datasets",
    "bicrit.metrics",
    "bicrit.metrics.multilabel",
    "bicrit.metrics.sequence",
    "bicrit.metrics.dependency",
    "bicrit.metrics.hierarchy",
    "bicrit.scores",
    "bicrit.registry",
    "bicrit.hookspecs",
    "bicrit.errors",
    "bicrit.cli",
    "bicrit.torch",
    "bicrit.dask",
)


def public_names(module: types.ModuleType) -> list[str]:
    """The module's ``__all__`` (the version string aside: it is data on the home page)."""
    return [n for n in module.__all__ if n != "__version__"]


def canonical_module(name: str, obj: Any, modules: dict[str, types.ModuleType]) -> str:
    """The public module a name is documented under."""
    defined_in = getattr(obj, "__module__", None) if not isinstance(obj, types.ModuleType) else None
    holders = [m for m, mod in modules.items() if name in getattr(mod, "__all__", ())]
    if isinstance(defined_in, str):
        prefixes = [m for m in holders if defined_in == m or defined_in.startswith(m + ".")]
        if prefixes:
            return max(prefixes, key=len)
    return max(holders, key=len)  # data (constants, tuples): the deepest module exporting it


def _directive(obj: Any) -> tuple[str, list[str]]:
    if inspect.isclass(obj) and issubclass(obj, BaseException):
        return "autoexception", [":show-inheritance:"]
    if inspect.isclass(obj):
        return "autoclass", [":members:", ":show-inheritance:"]
    if callable(obj):
        return "autofunction", []
    return "autodata", [":no-value:"]


def _title(text: str) -> str:
    return f"{text}\n{'=' * len(text)}\n"


def generate(out: Path) -> dict[str, str]:
    """Writes ``out/<module>.rst`` and ``out/<module>.<name>.rst``; returns {qualified name:
    page} for every documented name."""
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.rst"):
        old.unlink()
    modules = {}
    for m in PUBLIC_MODULES:
        try:
            modules[m] = importlib.import_module(m)
        except ImportError:
            # an extra's module (bicrit.torch, bicrit.dask) without the extra: CI installs them;
            # a local build may leave them out by saying so
            if os.environ.get("BICRIT_DOCS_SKIP_MISSING") != "1":
                raise
            print(f"docs: {m} skipped (its extra is not installed)")
    pages: dict[str, str] = {}
    index = [
        _title("API reference"),
        "Every public module, and every name in its ``__all__``.\n",
        ".. toctree::\n   :maxdepth: 1\n",
    ]
    for mname, module in modules.items():
        index.append(f"   {mname}")
        own, elsewhere, submodules = [], [], []
        for name in public_names(module):
            obj = getattr(module, name)
            if isinstance(obj, types.ModuleType):
                submodules.append(obj.__name__)
                continue
            home = canonical_module(name, obj, modules)
            (own if home == mname else elsewhere).append((name, home))
        lines = [_title(f"``{mname}``"), f".. automodule:: {mname}\n   :no-members:\n"]
        if own:
            lines.append(f".. currentmodule:: {mname}\n")
            lines.append(".. autosummary::\n   :nosignatures:\n")
            lines += [f"   {name}" for name, _ in own]
            lines.append("\n.. toctree::\n   :hidden:\n")
            lines += [f"   {mname}.{name}" for name, _ in own]
            lines.append("")
        if elsewhere:
            lines.append("Also exported here (documented where they are defined):\n")
            lines += [f"* :py:obj:`{n} <{home}.{n}>` (:mod:`{home}`)" for n, home in elsewhere]
            lines.append("")
        if submodules:
            lines.append("Submodules: " + ", ".join(f":mod:`{s}`" for s in submodules) + "\n")
        (out / f"{mname}.rst").write_text("\n".join(lines) + "\n")
        for name, _ in own:
            obj = getattr(module, name)
            directive, options = _directive(obj)
            body = [
                _title(f"``{mname}.{name}``"),
                f".. currentmodule:: {mname}\n",
                f".. {directive}:: {name}",
            ] + [f"   {o}" for o in options]
            (out / f"{mname}.{name}.rst").write_text("\n".join(body) + "\n")
            pages[f"{mname}.{name}"] = f"api/{mname}.{name}"
        pages[mname] = f"api/{mname}"
    (out / "index.rst").write_text("\n".join(index) + "\n")
    return pages
