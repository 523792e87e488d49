"""The pieces of a model (structure, surrogate, search, hierarchy) as plain JSON configs and
back, through the registry: what model files and pickles store instead of Python objects
(``docs/model-format.md``)."""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import Any

from bicrit.errors import InvalidParameterError, ModelFormatError

__all__ = [
    "PickledStructure",
    "create_piece",
    "ctor_params",
    "param_config",
    "param_value",
    "piece_config",
    "require_installed",
    "structure_config",
]


def ctor_params(obj: Any) -> dict[str, Any]:
    """Constructor parameters of ``obj`` read back from its attributes (scikit-learn style),
    or ``obj.get_config()`` when its class defines one."""
    get_config = getattr(type(obj), "get_config", None)
    if callable(get_config) and get_config is not _base_get_config():
        return dict(obj.get_config())
    out: dict[str, Any] = {}
    try:
        sig = inspect.signature(type(obj).__init__)
    except (TypeError, ValueError):
        return out
    for name, p in sig.parameters.items():
        if name == "self" or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if hasattr(obj, name):
            out[name] = getattr(obj, name)
    return out


def _base_get_config() -> Any:
    from bicrit.structures.base import Structure

    return Structure.get_config


def structure_config(s: Any) -> dict[str, Any]:
    """``{"name", "params"}`` from which the registry rebuilds a fitted structure, sizes
    included, with no data (the structure's own :meth:`~bicrit.structures.Structure.get_config`
    for the built-ins; the constructor's parameters for others)."""
    name = getattr(s, "name", None) or type(s).__name__
    return {"name": name, "params": ctor_params(s)}


def piece_config(kind: str, obj: Any, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """A structure/surrogate/search parameter as stored in a model file: a registry name with
    its parameters (plugins included)."""
    if isinstance(obj, str):
        return {"name": obj, "params": dict(params or {})}
    if isinstance(obj, tuple) and len(obj) == 2 and isinstance(obj[0], str):
        return {"name": obj[0], "params": dict(obj[1] or {})}
    if kind == "surrogate" and hasattr(obj, "params") and hasattr(obj, "name"):
        return {"name": obj.name, "params": dict(obj.params)}
    if kind == "search" and hasattr(obj, "options") and hasattr(obj, "name"):
        return {"name": obj.name, "params": dict(obj.options)}
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        raise InvalidParameterError(
            f"cannot save {kind} {obj!r}: it has no registry name (register it as a plugin)"
        )
    return {"name": name, "params": ctor_params(obj)}


def require_installed(kind: str, name: str) -> None:
    """A piece a model names must be registered when it is loaded (``docs/model-format.md``):
    a plugin that is not installed is a :class:`ModelFormatError` saying so, even when the
    model could predict without it (the surrogate and the search)."""
    from bicrit import registry
    from bicrit.errors import RegistryError, UnknownNameError

    if kind == "search" and name == "auto":
        return
    try:
        registry.get(kind, name)
    except UnknownNameError:
        known = ", ".join(registry.names(kind))
        raise ModelFormatError(
            f"the model needs the {kind} {name!r}, which is not installed (install the plugin "
            f"that provides it; installed {kind}s: {known})"
        ) from None
    except RegistryError as exc:  # several packages registered the name
        raise ModelFormatError(f"the model needs the {kind} {name!r}: {exc}") from None


def create_piece(kind: str, config: Mapping[str, Any]) -> Any:
    """Rebuilds a piece through the registry; a missing plugin is a :class:`ModelFormatError`
    (:func:`require_installed`)."""
    from bicrit import registry

    require_installed(kind, config["name"])
    return registry.create(kind, config["name"], **dict(config.get("params") or {}))


def param_config(name: str, value: Any) -> Any:
    """An estimator parameter as JSON: pieces by registry name, hierarchies by their nodes."""
    from bicrit.hierarchy.graph import Hierarchy

    if name in ("structure", "surrogate", "search") and not isinstance(value, str):
        return {"piece": name, **piece_config(name, value, None)}
    if isinstance(value, Hierarchy):
        return {"piece": "hierarchy", **value.get_config()}
    inner = getattr(value, "hierarchy", None)
    if isinstance(inner, Hierarchy):  # a hierarchy dataset: its hierarchy is what the model needs
        return {"piece": "hierarchy", **inner.get_config()}
    return value


def param_value(value: Any) -> Any:
    """The inverse of :func:`param_config`."""
    if isinstance(value, Mapping) and "piece" in value:
        if value["piece"] == "hierarchy":
            from bicrit.hierarchy.graph import Hierarchy

            return Hierarchy.from_config(value)
        return create_piece(value["piece"], value)
    return value


class PickledStructure:
    """Stand-in for a fitted structure inside a pickle: its registry config."""

    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
