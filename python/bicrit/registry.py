"""The plugin registry: what structures, surrogates and searches exist, and who provides them.

Contributions come from plugins discovered through the entry-point group ``bicrit`` (see
:mod:`bicrit.hookspecs`); bicrit's built-ins register through the same hooks. The registry is built
lazily on first use. A plugin that fails to import is reported by a :class:`BrokenPluginWarning`
naming it and skipped, the others still load. Two packages registering the same name (a plugin
registering ``slack`` too, say) make that one name unusable: using it raises a
:class:`RegistryError` naming both packages, :func:`clashes` and ``bicrit plugins`` list it, and
every other name keeps working. Set ``BICRIT_DISABLE_PLUGIN_AUTOLOAD=1`` to load only the
built-ins.

>>> import bicrit
>>> [c.name for c in bicrit.registry.contributions("surrogate")][:2]  # doctest: +SKIP
['margin', 'slack']
"""

from __future__ import annotations

import importlib
import importlib.metadata as metadata
import os
import threading
import warnings
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import pluggy

from bicrit import hookspecs
from bicrit.errors import BrokenPluginWarning, RegistryError, UnknownNameError

__all__ = [
    "KINDS",
    "BrokenPlugin",
    "Clash",
    "Contribution",
    "Registrar",
    "broken",
    "capability_tables",
    "clashes",
    "contributions",
    "create",
    "get",
    "names",
    "reload",
    "resolve",
]

#: The three kinds of contribution, in the order of the design's families.
KINDS = ("structure", "surrogate", "search")

_HOOKS = {
    "structure": "bicrit_register_structures",
    "surrogate": "bicrit_register_surrogates",
    "search": "bicrit_register_searches",
}

#: Modules holding bicrit's own hook implementations (also declared as the ``builtins`` entry
#: point; listed here so that a source checkout without installed metadata still works).
BUILTIN_MODULE = "bicrit._builtins"


@dataclass(frozen=True)
class Contribution:
    """One registered structure, surrogate or search."""

    kind: str
    name: str
    factory: Callable[..., Any]
    package: str
    version: str
    plugin: str
    description: str = ""
    capabilities: dict[str, Any] = field(default_factory=dict)

    def create(self, **params: Any) -> Any:
        """Instantiates the contribution with ``params``."""
        return self.factory(**params)


@dataclass(frozen=True)
class BrokenPlugin:
    """A plugin entry point that could not be loaded, with the reason."""

    plugin: str
    package: str
    version: str
    reason: str


@dataclass(frozen=True)
class Clash:
    """A name that several packages registered for one kind: unusable until all but one of
    them are uninstalled."""

    kind: str
    name: str
    contributions: tuple[Contribution, ...]

    def message(self) -> str:
        """The one-line error raised when the name is used."""
        ordered = sorted(self.contributions, key=lambda c: (c.package != "bicrit", c.package))
        who = " and by ".join(f"{c.package} {c.version} (plugin {c.plugin!r})" for c in ordered)
        n = len(self.contributions)
        times = "twice" if n == 2 else f"{n} times"
        which = "one of the two" if n == 2 else f"all but one of the {n}"
        return (
            f"{self.kind} {self.name!r} is registered {times}: by {who}; uninstall {which} packages"
        )


class Registrar:
    """What a hook receives: adds contributions on behalf of one plugin."""

    def __init__(self, state: _State, plugin: str, package: str, version: str) -> None:
        self._state = state
        self._plugin = plugin
        self._package = package
        self._version = version

    def _add(
        self,
        kind: str,
        name: str,
        factory: Callable[..., Any],
        description: str,
        capabilities: dict[str, Any] | None,
    ) -> None:
        if not isinstance(name, str) or not name:
            raise RegistryError(f"plugin {self._plugin!r} registered a {kind} with an empty name")
        if not callable(factory):
            raise RegistryError(
                f"plugin {self._plugin!r} registered {kind} {name!r} with a factory that is "
                f"not callable ({type(factory).__name__})"
            )
        self._state.add(
            Contribution(
                kind=kind,
                name=name,
                factory=factory,
                package=self._package,
                version=self._version,
                plugin=self._plugin,
                description=description,
                capabilities=dict(capabilities or {}),
            )
        )

    def add_structure(
        self,
        name: str,
        factory: Callable[..., Any],
        *,
        description: str = "",
        capabilities: dict[str, Any] | None = None,
    ) -> None:
        """Registers a label structure; ``factory(**params)`` returns a structure object."""
        self._add("structure", name, factory, description, capabilities)

    def add_surrogate(
        self,
        name: str,
        factory: Callable[..., Any],
        *,
        description: str = "",
        capabilities: dict[str, Any] | None = None,
    ) -> None:
        """Registers a ψ surrogate; ``factory(**params)`` returns a surrogate object."""
        self._add("surrogate", name, factory, description, capabilities)

    def add_search(
        self,
        name: str,
        factory: Callable[..., Any],
        *,
        description: str = "",
        capabilities: dict[str, Any] | None = None,
    ) -> None:
        """Registers a search; ``factory(**options)`` returns a search object."""
        self._add("search", name, factory, description, capabilities)

    def add_native(self, kind: str, factory: Callable[[str], Callable[..., Any]]) -> None:
        """Registers the built-ins of ``kind`` as the native catalog describes them
        (:func:`bicrit._native.catalog`); ``factory(name)`` is the factory of each."""
        from bicrit import _native

        for entry in _native.catalog()[kind]:
            note = f" ({entry['note']})" if entry.get("note") else ""
            description = entry["description"] + note
            capabilities = dict(entry["capabilities"])
            self._add(kind, entry["name"], factory(entry["name"]), description, capabilities)


class _State:
    def __init__(self) -> None:
        self.by_kind: dict[str, dict[str, Contribution]] = {k: {} for k in KINDS}
        self.clashes: dict[str, dict[str, Clash]] = {k: {} for k in KINDS}
        self.broken: list[BrokenPlugin] = []

    def add(self, c: Contribution) -> None:
        """Adds ``c``; a name already taken becomes a clash (neither contribution is used)."""
        known, clashes = self.by_kind[c.kind], self.clashes[c.kind]
        if c.name in clashes:
            old = clashes[c.name]
            clashes[c.name] = Clash(c.kind, c.name, (*old.contributions, c))
        elif c.name in known:
            clashes[c.name] = Clash(c.kind, c.name, (known.pop(c.name), c))
        else:
            known[c.name] = c


_lock = threading.RLock()
_state: _State | None = None


def _bicrit_version() -> str:
    try:
        return metadata.version("bicrit")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def _entry_points() -> Iterable[metadata.EntryPoint]:
    return metadata.entry_points(group=hookspecs.PROJECT)


def _build() -> _State:
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    state = _State()
    origins: dict[str, tuple[str, str]] = {}

    builtins = importlib.import_module(BUILTIN_MODULE)
    pm.register(builtins, name="bicrit")
    origins["bicrit"] = ("bicrit", _bicrit_version())

    if not os.environ.get("BICRIT_DISABLE_PLUGIN_AUTOLOAD"):
        for ep in _entry_points():
            if ep.value == BUILTIN_MODULE:
                continue
            dist = ep.dist
            package = dist.name if dist is not None else "?"
            version = dist.version if dist is not None else "?"
            try:
                plugin = ep.load()
                pm.register(plugin, name=ep.name)
            except Exception as exc:  # a broken plugin must not stop the others
                reason = f"{type(exc).__name__}: {exc}"
                state.broken.append(BrokenPlugin(ep.name, package, version, reason))
                warnings.warn(
                    f"bicrit plugin {ep.name!r} from package {package} {version} failed to load "
                    f"and was skipped ({reason})",
                    BrokenPluginWarning,
                    stacklevel=3,
                )
                continue
            origins[ep.name] = (package, version)
    pm.check_pending()

    for kind in KINDS:
        caller = getattr(pm.hook, _HOOKS[kind])
        # Call each plugin's implementation separately so that contributions are attributed.
        for impl in reversed(caller.get_hookimpls()):
            package, version = origins.get(impl.plugin_name, ("?", "?"))
            registrar = Registrar(state, impl.plugin_name, package, version)
            try:
                impl.function(registry=registrar)
            except Exception as exc:
                reason = f"{type(exc).__name__} in {_HOOKS[kind]}: {exc}"
                state.broken.append(BrokenPlugin(impl.plugin_name, package, version, reason))
                warnings.warn(
                    f"bicrit plugin {impl.plugin_name!r} from package {package} {version} failed "
                    f"while registering and was skipped ({reason})",
                    BrokenPluginWarning,
                    stacklevel=3,
                )
    return state


def _current() -> _State:
    global _state
    with _lock:
        if _state is None:
            _state = _build()
        return _state


def reload() -> None:
    """Forgets the registry; the next use discovers the plugins again."""
    global _state
    with _lock:
        _state = None


def _check_kind(kind: str) -> None:
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")


def contributions(kind: str | None = None) -> list[Contribution]:
    """All usable contributions (of one kind when given), sorted by kind then name; names
    that clash are in :func:`clashes` instead."""
    state = _current()
    kinds = KINDS if kind is None else (kind,)
    out: list[Contribution] = []
    for k in kinds:
        _check_kind(k)
        out.extend(sorted(state.by_kind[k].values(), key=lambda c: c.name))
    return out


def names(kind: str) -> list[str]:
    """Registered names of one kind, sorted."""
    return [c.name for c in contributions(kind)]


def get(kind: str, name: str) -> Contribution:
    """The contribution ``name`` of ``kind``; an unknown name lists the known ones, a name
    several packages registered is a :class:`RegistryError` naming them."""
    _check_kind(kind)
    state = _current()
    clash = state.clashes[kind].get(name)
    if clash is not None:
        raise RegistryError(clash.message())
    known = state.by_kind[kind]
    if name not in known:
        listing = ", ".join(sorted(known)) or "none"
        raise UnknownNameError(f"unknown {kind} {name!r}; known {kind}s: {listing}")
    return known[name]


def create(kind: str, name: str, **params: Any) -> Any:
    """Looks up ``name`` and instantiates it with ``params``."""
    return get(kind, name).create(**params)


def resolve(kind: str, piece: Any) -> Any:
    """A piece given by registry name or ``(name, params)``, built through the registry (plugins
    included); objects are returned unchanged."""
    if isinstance(piece, str):
        return create(kind, piece)
    if isinstance(piece, tuple) and len(piece) == 2 and isinstance(piece[0], str):
        return create(kind, piece[0], **dict(piece[1] or {}))
    return piece


def clashes(kind: str | None = None) -> list[Clash]:
    """Names registered by several packages (of one kind when given), sorted; each is
    unusable, the others are not affected."""
    state = _current()
    kinds = KINDS if kind is None else (kind,)
    out: list[Clash] = []
    for k in kinds:
        _check_kind(k)
        out.extend(sorted(state.clashes[k].values(), key=lambda c: c.name))
    return out


def broken() -> list[BrokenPlugin]:
    """Plugins that failed to load, with the reason."""
    return list(_current().broken)


def _cell(value: Any) -> str:
    if isinstance(value, list | tuple):
        text = ", ".join(f"`{v}`" for v in value) or "—"
    elif isinstance(value, dict):
        text = "; ".join(f"`{k}`: {v}" for k, v in value.items()) or "—"
    elif isinstance(value, bool):
        text = "yes" if value else "no"
    else:
        text = str(value)
    return text.replace("|", "\\|")


def capability_tables(*, builtins_only: bool = True) -> str:
    """Markdown tables of what is registered and what combines with what (one per kind, the
    learners from :data:`bicrit.learners.LEARNERS`), from the registry's capabilities — which
    the built-ins take from the native core. ``docs/capabilities.md`` is this text."""
    from bicrit.learners import LEARNERS

    columns = {
        "structure": ["ban", "kbest", "cone", "relaxed", "frontier"],
        "surrogate": [
            "params", "affine_in_h", "convex_in_h", "product_form", "searches", "learners"
        ],
        "search": ["oracle", "surrogates", "guarantee", "target", "learners"],
    }  # fmt: skip
    out = [
        "# What combines with what",
        "",
        "Generated by `bicrit plugins --markdown` from the registry, whose built-in entries are",
        "read from the native core (`bicrit._native.catalog()`); a test checks that this file is",
        "up to date. `bicrit plugins` shows the same with the installed plugins.",
    ]
    for kind, cols in columns.items():
        rows = [c for c in contributions(kind) if not builtins_only or c.package == "bicrit"]
        out += ["", f"## {kind.capitalize()}{'es' if kind.endswith('h') else 's'}", ""]
        out.append("| name | " + " | ".join(cols) + " | description |")
        out.append("|" + "---|" * (len(cols) + 2))
        for c in rows:
            cells = [_cell(c.capabilities.get(k, "")) for k in cols]
            text = _cell(c.description)
            out.append(f"| `{c.name}` | " + " | ".join(cells) + f" | {text} |")
    out += ["", "## Learners", ""]
    cols = ["surrogates", "provides_xi", "slack_norms"]
    out.append("| name | " + " | ".join(cols) + " | parameters | description |")
    out.append("|" + "---|" * (len(cols) + 3))
    for info in LEARNERS.values():
        cells = [_cell(info.capabilities.get(k, "")) for k in cols]
        params, text = _cell(list(info.params)), _cell(info.description)
        out.append(f"| `{info.name}` | " + " | ".join(cells) + f" | {params} | {text} |")
    return "\n".join(out) + "\n"
