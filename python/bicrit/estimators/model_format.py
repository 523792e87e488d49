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
#: The version this bicrit writes; it reads every version up to this one. It changes only with a
#: bicrit release whose CHANGELOG.md entry says so (docs/model-format.md, "Versions").
FORMAT_VERSION = 1
MANIFEST = "manifest.json"

#: Estimator classes by their stable name (``manifest["estimator"]``).
ESTIMATOR_CLASSES: dict[str, type[Any]] = {}


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
        if a.dtype.kind not in ARRAY_KINDS:
            raise InvalidParameterError(
                f"array {key!r} has dtype {a.dtype}: only numeric arrays are storable"
            )
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


#: Deflate expands its input at most about 1032 times (a 258-byte match per 2 bits, RFC 1951):
#: an entry claiming more is lying, and is refused before anything is decompressed.
MAX_DEFLATE_RATIO = 1032
#: ``manifest.json`` is JSON text, which deflate shrinks some 3–10 times: it may claim at most
#: this many times its compressed size (plus :data:`MANIFEST_SLACK`), so that a small file
#: cannot make the loader inflate a huge manifest.
MAX_MANIFEST_RATIO = 100
MANIFEST_SLACK = 1 << 20
#: The element types an array may have: bool, signed and unsigned integers, floats, complex.
ARRAY_KINDS = "biufc"
_SHA256_HEX = frozenset("0123456789abcdef")


def _open(path: Path) -> tuple[zipfile.ZipFile, dict[str, zipfile.ZipInfo]]:
    """The archive and its entries by name, every entry's sizes checked against the file."""
    if not path.is_file():
        raise FileNotFoundError(f"no model file {path}")
    size = path.stat().st_size
    try:
        zf = zipfile.ZipFile(path)
    except Exception as exc:  # whatever a damaged archive raises, it is not a model file
        raise ModelFormatError(
            f"{path} is not a bicrit model file (not a readable zip: {_why(exc)}); truncated?"
        ) from None
    try:
        infos: dict[str, zipfile.ZipInfo] = {}
        total = 0
        for info in zf.infolist():
            name = info.filename
            if name in infos:
                raise ModelFormatError(f"{path} is corrupted: entry {name!r} appears twice")
            if info.flag_bits & 0x1:
                raise ModelFormatError(f"{path}: entry {name!r} is encrypted")
            if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
                raise ModelFormatError(
                    f"{path}: entry {name!r} uses compression method {info.compress_type}; "
                    "model files use deflate"
                )
            ratio = 1 if info.compress_type == zipfile.ZIP_STORED else MAX_DEFLATE_RATIO
            if info.file_size > ratio * info.compress_size + 64:
                raise ModelFormatError(
                    f"{path} is corrupted: entry {name!r} claims {info.file_size} bytes from "
                    f"{info.compress_size} compressed bytes, more than deflate can produce"
                )
            total += info.compress_size
            infos[name] = info
        if total > size:
            raise ModelFormatError(
                f"{path} is corrupted: its entries claim {total} compressed bytes, the file "
                f"has {size}"
            )
    except BaseException:
        zf.close()
        raise
    return zf, infos


def _why(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _read(
    zf: zipfile.ZipFile, infos: dict[str, zipfile.ZipInfo], member: str, path: Path, limit: int
) -> bytes:
    """The bytes of ``member``, refused before decompressing when it claims more than
    ``limit`` bytes; a damaged entry (bad CRC, broken deflate stream) is a ModelFormatError."""
    info = infos.get(member)
    if info is None:
        raise ModelFormatError(f"{path} is corrupted: entry {member!r} is missing")
    if info.file_size > limit:
        raise ModelFormatError(
            f"{path} is corrupted: entry {member!r} claims {info.file_size} bytes, more than "
            f"its {limit} allowed"
        )
    try:
        data = zf.read(info)
    except Exception as exc:  # zlib.error, bad CRC, truncated stream, unsupported features …
        raise ModelFormatError(f"{path} is corrupted: entry {member!r}: {_why(exc)}") from None
    if len(data) != info.file_size:
        raise ModelFormatError(
            f"{path} is corrupted: entry {member!r} has {len(data)} bytes, its header says "
            f"{info.file_size}"
        )
    return data


def _manifest_limit(info: zipfile.ZipInfo | None) -> int:
    return MANIFEST_SLACK + MAX_MANIFEST_RATIO * (info.compress_size if info else 0)


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The checked manifest of a model file (format, version and the types of its fields; not
    the arrays)."""
    path = Path(path)
    zf, infos = _open(path)
    with zf:
        raw = _read(zf, infos, MANIFEST, path, _manifest_limit(infos.get(MANIFEST)))
        return _check_manifest(raw, path)


def _check_manifest(raw: bytes, path: Path) -> dict[str, Any]:
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelFormatError(
            f"{path} is corrupted: manifest.json is not JSON ({_why(exc)})"
        ) from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_NAME:
        raise ModelFormatError(f"{path} is not a bicrit model file (format is not {FORMAT_NAME!r})")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ModelFormatError(f"{path}: invalid format_version {version!r}")
    if version > FORMAT_VERSION:
        raise ModelFormatError(
            f"{path} has model format version {version}, written by bicrit "
            f"{manifest.get('bicrit_version', '?')}; this bicrit reads versions up to "
            f"{FORMAT_VERSION}: upgrade bicrit to load it"
        )
    for key, kind in (("estimator", str), ("config", dict), ("arrays", dict)):
        if key not in manifest:
            raise ModelFormatError(f"{path} is corrupted: the manifest has no {key!r}")
        if not isinstance(manifest[key], kind):
            raise ModelFormatError(
                f"{path} is corrupted: the manifest's {key!r} is a "
                f"{type(manifest[key]).__name__}, not a {kind.__name__}"
            )
    for key, entry in manifest["arrays"].items():
        _check_entry(key, entry, path)
    return manifest


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_entry(key: str, entry: Any, path: Path) -> None:
    """An ``arrays`` entry: ``file`` its member, a numeric ``dtype``, a ``shape`` of
    non-negative integers and a hex ``sha256``."""
    where = f"{path} is corrupted: array {key!r}"
    if not isinstance(entry, dict):
        raise ModelFormatError(f"{where}: its entry is a {type(entry).__name__}, not an object")
    for field, kind in (("file", str), ("dtype", str), ("shape", list), ("sha256", str)):
        if not isinstance(entry.get(field), kind):
            raise ModelFormatError(
                f"{where}: {field!r} is {type(entry.get(field)).__name__}, not {kind.__name__}"
            )
    if entry["file"] != f"arrays/{key}.npy":
        raise ModelFormatError(f"{where}: its file is {entry['file']!r}, not 'arrays/{key}.npy'")
    if not all(_is_int(n) and n >= 0 for n in entry["shape"]) or len(entry["shape"]) > 32:
        raise ModelFormatError(f"{where}: invalid shape {entry['shape']!r}")
    sha = entry["sha256"]
    if len(sha) != 64 or not set(sha) <= _SHA256_HEX:
        raise ModelFormatError(f"{where}: invalid sha256 {sha!r}")
    try:
        dtype = np.dtype(entry["dtype"])
    except (TypeError, ValueError, SyntaxError) as exc:
        raise ModelFormatError(f"{where}: invalid dtype {entry['dtype']!r} ({_why(exc)})") from None
    if dtype.kind not in ARRAY_KINDS or dtype.str != entry["dtype"]:
        raise ModelFormatError(f"{where}: dtype {entry['dtype']!r} is not a numeric array type")


def _read_array(
    zf: zipfile.ZipFile,
    infos: dict[str, zipfile.ZipInfo],
    key: str,
    entry: dict[str, Any],
    path: Path,
) -> np.ndarray:
    """One array, checked against its manifest entry before it is allocated: the member may
    hold no more than the declared shape needs, the sha256 matches, and the ``.npy`` header
    declares that dtype and shape."""
    dtype = np.dtype(entry["dtype"])
    nbytes = math.prod(entry["shape"]) * dtype.itemsize
    member = entry["file"]
    blob = _read(zf, infos, member, path, nbytes + 4096)  # the .npy header is small
    if hashlib.sha256(blob).hexdigest() != entry["sha256"]:
        raise ModelFormatError(f"{path} is corrupted: checksum mismatch for array {key!r}")
    f = io.BytesIO(blob)
    try:
        major, _ = np.lib.format.read_magic(f)
        if major not in (1, 2):  # what np.save writes for numeric arrays
            raise ValueError(f".npy format version {major}")
        fmt = np.lib.format
        read_header = fmt.read_array_header_1_0 if major == 1 else fmt.read_array_header_2_0
        shape, _, header_dtype = read_header(f)
    except Exception as exc:  # any malformed header
        raise ModelFormatError(f"{path}: array {key!r} is unreadable ({_why(exc)})") from None
    if header_dtype != dtype or list(shape) != entry["shape"]:
        raise ModelFormatError(
            f"{path}: array {key!r} is {header_dtype.str} {list(shape)}, the manifest says "
            f"{entry['dtype']} {entry['shape']}"
        )
    if len(blob) - f.tell() != nbytes:
        raise ModelFormatError(
            f"{path} is corrupted: array {key!r} holds {len(blob) - f.tell()} bytes of data, "
            f"its shape needs {nbytes}"
        )
    try:
        a: np.ndarray = np.load(io.BytesIO(blob), allow_pickle=False)
    except Exception as exc:
        raise ModelFormatError(f"{path}: array {key!r} is unreadable ({_why(exc)})") from None
    return a


def load_model(path: str | Path) -> Any:
    """Reads a model file written by :func:`save_model` (see the module docstring). Every way
    the file can be damaged or tampered with raises :class:`ModelFormatError` naming the file
    and the part; sizes are checked against the file before anything is decompressed."""
    path = Path(path)
    zf, infos = _open(path)
    with zf:
        raw = _read(zf, infos, MANIFEST, path, _manifest_limit(infos.get(MANIFEST)))
        manifest = _check_manifest(raw, path)
        arrays = {
            key: _read_array(zf, infos, key, entry, path)
            for key, entry in manifest["arrays"].items()
        }
    name = manifest["estimator"]
    _ensure_builtin_classes()
    cls = ESTIMATOR_CLASSES.get(name)
    if cls is None:
        raise ModelFormatError(
            f"{path} holds a {name!r} model, but no such estimator is registered "
            f"(known: {', '.join(ESTIMATOR_CLASSES)}); is the package providing it installed?"
        )
    try:
        return cls._import(manifest["config"], arrays)
    except ModelFormatError as exc:
        raise ModelFormatError(f"{path}: {exc}") from None
    except Exception as exc:  # a config the estimator cannot be rebuilt from
        raise ModelFormatError(
            f"{path}: the {name} model cannot be rebuilt from its config ({_why(exc)})"
        ) from None


def _ensure_builtin_classes() -> None:
    import bicrit.estimators  # noqa: F401  (registers the built-in estimators)
