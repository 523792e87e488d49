"""The pickle-free model file (``docs/model-format.md``): a zip holding ``manifest.json`` and one
raw ``.npy`` file per array.

An estimator class takes part by implementing::

    def _export(self) -> tuple[dict, dict[str, np.ndarray]]: ...   # JSON-able config, arrays
    @classmethod
    def _import(cls, config: dict, arrays: dict[str, np.ndarray]) -> Estimator: ...

and registering under a stable name with :func:`register_estimator` (the name, not the Python
class path, is written to the file, so classes may move between modules). :func:`save_model`
writes the file; :func:`load_model` checks it (format name and version, every entry present, the
sha256 of every array, dtype and shape as declared) and returns ``cls._import(config, arrays)``.
Arrays are read with ``allow_pickle=False``: object arrays cannot be stored.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from bicrit._atomic import atomic_write, check_writable
from bicrit.errors import InvalidParameterError, ModelFormatError

__all__ = [
    "ESTIMATOR_CLASSES",
    "FORMAT_NAME",
    "FORMAT_VERSION",
    "load_model",
    "read_manifest",
    "register_estimator",
    "save_model",
]

#: Written as ``manifest["format"]``.
FORMAT_NAME = "bicrit-model"
#: The version this bicrit writes; it reads every version up to this one.
FORMAT_VERSION = 1
MANIFEST = "manifest.json"

#: Estimator classes by their stable name (``manifest["estimator"]``).
ESTIMATOR_CLASSES: dict[str, type] = {}


def register_estimator(name: str, cls: type) -> type:
    """Registers ``cls`` (with ``_export``/``_import``) under ``name``; returns ``cls``.
    Registering another class under a taken name is an error."""
    if not isinstance(name, str) or not name:
        raise InvalidParameterError(f"an estimator name is a non-empty str, got {name!r}")
    for method in ("_export", "_import"):
        if not callable(getattr(cls, method, None)):
            raise InvalidParameterError(f"{cls.__name__} has no {method} method")
    known = ESTIMATOR_CLASSES.get(name)
    if known is not None and known is not cls:
        raise InvalidParameterError(
            f"estimator name {name!r} is taken by {known.__module__}.{known.__qualname__}"
        )
    ESTIMATOR_CLASSES[name] = cls
    return cls


def _estimator_name(estimator: Any) -> str:
    for name, cls in ESTIMATOR_CLASSES.items():
        if type(estimator) is cls:
            return name
    raise InvalidParameterError(
        f"{type(estimator).__name__} is not a registered estimator class "
        f"(known: {', '.join(ESTIMATOR_CLASSES)}); see register_estimator"
    )


def _jsonable(value: Any) -> Any:
    """Plain JSON: numpy scalars to Python, NaN/inf to None, tuples to lists."""
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.bool_):
        return bool(value)
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        f = float(value)
        return f if math.isfinite(f) else None
    if value is None or isinstance(value, bool | int | str):
        return value
    raise InvalidParameterError(
        f"cannot store {type(value).__name__} {value!r} in a model manifest (JSON only)"
    )


def save_model(path: str | Path, estimator: Any) -> Path:
    """Writes ``estimator`` (a fitted, registered estimator) to ``path`` atomically (the old
    file stays whole until the new one is complete); returns the path."""
    from bicrit import __version__

    check_writable(path)  # before the export, which can be long

    name = _estimator_name(estimator)
    config, arrays = estimator._export()
    entries: dict[str, Any] = {}
    blobs: dict[str, bytes] = {}
    for key, arr in arrays.items():
        a = np.asarray(arr)
        if a.dtype == object:
            raise InvalidParameterError(f"array {key!r} has dtype object: not storable")
        buf = io.BytesIO()
        np.save(buf, a, allow_pickle=False)
        blob = buf.getvalue()
        member = f"arrays/{key}.npy"
        blobs[member] = blob
        entries[key] = {
            "file": member,
            "dtype": a.dtype.str,
            "shape": list(a.shape),
            "sha256": hashlib.sha256(blob).hexdigest(),
        }
    manifest = {
        "format": FORMAT_NAME,
        "format_version": FORMAT_VERSION,
        "bicrit_version": __version__,
        "estimator": name,
        "config": _jsonable(config),
        "arrays": entries,
    }
    path = check_writable(path)
    # atomic: an interrupted save leaves the previous file at ``path`` whole
    with atomic_write(path, "wb") as fh, zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr(MANIFEST, json.dumps(manifest, indent=1, sort_keys=True, allow_nan=False))
        for member, blob in blobs.items():
            zf.writestr(member, blob)
    return path


def _open(path: Path) -> zipfile.ZipFile:
    if not path.is_file():
        raise FileNotFoundError(f"no model file {path}")
    try:
        return zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise ModelFormatError(
            f"{path} is not a bicrit model file (not a readable zip: {exc}); truncated?"
        ) from None


def _read(zf: zipfile.ZipFile, member: str, path: Path) -> bytes:
    try:
        return zf.read(member)
    except KeyError:
        raise ModelFormatError(f"{path} is corrupted: entry {member!r} is missing") from None
    except (zipfile.BadZipFile, OSError, EOFError, ValueError) as exc:
        raise ModelFormatError(f"{path} is corrupted: entry {member!r}: {exc}") from None


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The checked manifest of a model file (format and version; not the arrays)."""
    path = Path(path)
    with _open(path) as zf:
        return _check_manifest(_read(zf, MANIFEST, path), path)


def _check_manifest(raw: bytes, path: Path) -> dict[str, Any]:
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ModelFormatError(f"{path} is corrupted: manifest.json is not JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise ModelFormatError(f"{path} is not a bicrit model file (format is not {FORMAT_NAME!r})")
    version = manifest.get("format_version")
    if not isinstance(version, int) or version < 1:
        raise ModelFormatError(f"{path}: invalid format_version {version!r}")
    if version > FORMAT_VERSION:
        raise ModelFormatError(
            f"{path} has model format version {version}, written by bicrit "
            f"{manifest.get('bicrit_version', '?')}; this bicrit reads versions up to "
            f"{FORMAT_VERSION}: upgrade bicrit to load it"
        )
    for key in ("estimator", "config", "arrays"):
        if key not in manifest:
            raise ModelFormatError(f"{path} is corrupted: the manifest has no {key!r}")
    return manifest


def load_model(path: str | Path) -> Any:
    """Reads a model file written by :func:`save_model` (see the module docstring)."""
    path = Path(path)
    with _open(path) as zf:
        manifest = _check_manifest(_read(zf, MANIFEST, path), path)
        arrays: dict[str, np.ndarray] = {}
        for key, entry in manifest["arrays"].items():
            blob = _read(zf, entry["file"], path)
            if hashlib.sha256(blob).hexdigest() != entry["sha256"]:
                raise ModelFormatError(f"{path} is corrupted: checksum mismatch for array {key!r}")
            try:
                a = np.load(io.BytesIO(blob), allow_pickle=False)
            except (ValueError, OSError, EOFError) as exc:
                raise ModelFormatError(f"{path}: array {key!r} is unreadable ({exc})") from None
            if a.dtype.str != entry["dtype"] or list(a.shape) != list(entry["shape"]):
                raise ModelFormatError(
                    f"{path}: array {key!r} is {a.dtype.str} {list(a.shape)}, the manifest "
                    f"says {entry['dtype']} {entry['shape']}"
                )
            arrays[key] = a
    name = manifest["estimator"]
    _ensure_builtin_classes()
    cls = ESTIMATOR_CLASSES.get(name)
    if cls is None:
        raise ModelFormatError(
            f"{path} holds a {name!r} model, but no such estimator is registered "
            f"(known: {', '.join(ESTIMATOR_CLASSES)}); is the package providing it installed?"
        )
    return cls._import(manifest["config"], arrays)


def _ensure_builtin_classes() -> None:
    import bicrit.estimators  # noqa: F401  (registers the built-in estimators)
