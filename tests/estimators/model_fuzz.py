"""Mutated model files: what ``tests/estimators/test_model_fuzz.py`` (≥ 10⁴ files in every test
run) and ``benches/reliability/fuzz_model_files.py`` (10⁶) feed to ``bicrit.load``.

Byte-level mutations hit the archive as a disk or a transfer damages it (bit flips, random
bytes, truncation, spliced, deleted or repeated ranges); structural mutations rewrite the archive
with valid CRCs, as a person editing a file would (an entry removed, renamed or repeated,
manifest fields removed or of the wrong type, arrays whose manifest and ``.npy`` header agree on
a wrong shape, entries claiming a huge size). A load must end in a model or in
``ModelFormatError``; a model that loads must predict as the original does or raise a clear
bicrit error.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import struct
import warnings
import zipfile
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

import bicrit
from bicrit.errors import BicritError, ModelFormatError

BYTE_MUTATIONS = ("flip", "bytes", "truncate", "insert", "delete", "repeat")
STRUCTURAL_MUTATIONS = (
    "drop-entry",
    "rename-entry",
    "duplicate-entry",
    "drop-field",
    "retype-field",
    "reshape-array",
    "npy-header",
    "claim-size",
)


@dataclass
class Base:
    """A saved model to mutate: its bytes, its members and how to check a loaded copy."""

    name: str
    data: bytes
    members: dict[str, bytes]
    manifest: dict[str, Any]
    predict: Callable[[Any], Any]
    expected: Any

    @classmethod
    def of(cls, name: str, path: Path, X: Any) -> Base:
        data = path.read_bytes()
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = {n: zf.read(n) for n in zf.namelist()}
        model = bicrit.load(path)
        return cls(
            name=name,
            data=data,
            members=members,
            manifest=json.loads(members["manifest.json"]),
            predict=lambda m: m.predict(X),
            expected=model.predict(X),
        )


@dataclass
class Tally:
    """Outcomes by mutation: ``loaded`` (a model that predicts as the original or raises a
    bicrit error), ``refused`` (ModelFormatError); anything else is in ``failures``."""

    counts: Counter[tuple[str, str]] = field(default_factory=Counter)
    failures: list[tuple[str, str, str]] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def by_outcome(self) -> Counter[str]:
        out: Counter[str] = Counter()
        for (_, outcome), n in self.counts.items():
            out[outcome] += n
        return out


def _zip(members: list[tuple[str, bytes]]) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Duplicate name": wanted here
        with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
            for name, data in members:
                zf.writestr(name, data)
    return buf.getvalue()


def _nodes(value: Any, path: tuple = ()) -> list[tuple]:
    """Paths of every node of a JSON value (objects and lists walked)."""
    out = [path]
    if isinstance(value, dict):
        for k, v in value.items():
            out += _nodes(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value[:8]):  # long lists: their first items
            out += _nodes(v, (*path, i))
    return out


def _other_type(value: Any, rng: np.random.Generator) -> Any:
    """A JSON value of another type than ``value`` (or an extreme one of the same type)."""
    choices: list[Any] = [
        None,
        True,
        -1,
        0,
        2**63,
        -(10**30),
        1e308,
        -0.5,
        "",
        "x" * 300,
        "auto",
        [],
        [1, "a", None],
        {},
        {"piece": "surrogate", "name": "nosuch"},
    ]
    for _ in range(20):
        c = choices[int(rng.integers(len(choices)))]
        if type(c) is not type(value) or (isinstance(c, int | float) and c != value):
            return copy.deepcopy(c)
    return None


def _set(root: Any, path: tuple, value: Any) -> None:
    for p in path[:-1]:
        root = root[p]
    root[path[-1]] = value


def _delete(root: Any, path: tuple) -> None:
    for p in path[:-1]:
        root = root[p]
    del root[path[-1]]


def _npy(shape: tuple[int, ...], dtype: str, data: bytes) -> bytes:
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": dtype, "fortran_order": False, "shape": shape}
    )
    return buf.getvalue() + data


def mutate(base: Base, kind: str, rng: np.random.Generator) -> bytes:
    """``base``'s file with one mutation of ``kind``."""
    data = bytearray(base.data)
    n = len(data)
    if kind == "flip":
        for _ in range(int(rng.integers(1, 4))):
            data[int(rng.integers(n))] ^= 1 << int(rng.integers(8))
        return bytes(data)
    if kind == "bytes":
        at = int(rng.integers(n))
        k = int(rng.integers(1, 9))
        data[at : at + k] = rng.integers(0, 256, k, dtype=np.uint8).tobytes()
        return bytes(data[:n])
    if kind == "truncate":
        return bytes(data[: int(rng.integers(n))])
    if kind == "insert":
        at = int(rng.integers(n))
        junk = rng.integers(0, 256, int(rng.integers(1, 64)), dtype=np.uint8).tobytes()
        return bytes(data[:at]) + junk + bytes(data[at:])
    if kind == "delete":
        at = int(rng.integers(n))
        return bytes(data[:at] + data[at + int(rng.integers(1, 64)) :])
    if kind == "repeat":  # a range copied over another place (spliced)
        a, b = sorted(int(x) for x in rng.integers(n, size=2))
        at = int(rng.integers(n))
        chunk = data[a : min(b, a + 512)]
        return bytes(data[:at] + chunk + data[at + len(chunk) :])
    return _structural(base, kind, rng)


def _structural(base: Base, kind: str, rng: np.random.Generator) -> bytes:
    members = list(base.members.items())
    names = [m[0] for m in members]
    manifest = copy.deepcopy(base.manifest)

    def with_manifest(m: Any) -> list[tuple[str, bytes]]:
        text = json.dumps(m).encode()
        return [(name, text if name == "manifest.json" else d) for name, d in members]

    if kind == "drop-entry":
        i = int(rng.integers(len(members)))
        return _zip(members[:i] + members[i + 1 :])
    if kind == "rename-entry":
        i = int(rng.integers(len(members)))
        renamed = names[i] + ("x" if rng.random() < 0.5 else "/")
        return _zip([*members[:i], (renamed, members[i][1]), *members[i + 1 :]])
    if kind == "duplicate-entry":
        i = int(rng.integers(len(members)))
        other = rng.integers(0, 256, 32, dtype=np.uint8).tobytes()
        twin = members[i][1] if rng.random() < 0.5 else other
        return _zip([*members, (names[i], twin)])
    if kind in ("drop-field", "retype-field"):
        paths = [p for p in _nodes(manifest) if p]
        path = paths[int(rng.integers(len(paths)))]
        if kind == "drop-field":
            _delete(manifest, path)
        else:
            node = manifest
            for p in path:
                node = node[p]
            _set(manifest, path, _other_type(node, rng))
        return _zip(with_manifest(manifest))
    if kind == "reshape-array":  # manifest, .npy header and sha256 agree on a wrong shape
        key = sorted(manifest["arrays"])[int(rng.integers(len(manifest["arrays"])))]
        entry = manifest["arrays"][key]
        dtype = np.dtype(entry["dtype"])
        size = int(np.prod(entry["shape"]))
        new_size = max(0, size + int(rng.choice([-size, -1, 1, size])))
        shape = (new_size,) if rng.random() < 0.5 else (1, new_size)
        blob = _npy(shape, entry["dtype"], bytes(new_size * dtype.itemsize))
        entry.update(shape=list(shape), sha256=hashlib.sha256(blob).hexdigest())
        out = with_manifest(manifest)
        return _zip([(nm, blob if nm == entry["file"] else d) for nm, d in out])
    if kind == "npy-header":  # the .npy header claims a huge array, its sha256 recomputed
        key = sorted(manifest["arrays"])[int(rng.integers(len(manifest["arrays"])))]
        entry = manifest["arrays"][key]
        huge = (int(rng.choice([2**31, 2**40, 2**62])),)
        blob = _npy(huge, entry["dtype"], b"\0" * 64)
        entry["sha256"] = hashlib.sha256(blob).hexdigest()
        if rng.random() < 0.5:
            entry["shape"] = list(huge)
        out = with_manifest(manifest)
        return _zip([(nm, blob if nm == entry["file"] else d) for nm, d in out])
    if kind == "claim-size":  # a central-directory entry claims a huge uncompressed size
        data = bytearray(base.data)
        at = data.find(b"PK\x01\x02")
        starts = []
        while at >= 0:
            starts.append(at)
            at = data.find(b"PK\x01\x02", at + 4)
        at = starts[int(rng.integers(len(starts)))]
        claim = int(rng.choice([2**31 - 1, 2**32 - 2, 200 * 2**20]))
        struct.pack_into("<I", data, at + 24, claim)  # uncompressed size field
        return bytes(data)
    raise ValueError(f"unknown mutation {kind!r}")


def check(base: Base, blob: bytes, path: Path) -> str:
    """Loads ``blob`` (written to ``path``): "refused" (ModelFormatError) or "loaded" (a model
    that predicts as the original, or refuses its input with a bicrit error). Anything else
    raises AssertionError naming what escaped."""
    path.unlink(missing_ok=True)  # a new file: truncating one in place is slow on ext4
    path.write_bytes(blob)
    try:
        model = bicrit.load(path)
    except ModelFormatError as exc:
        message = str(exc)
        assert "\n" not in message and str(path) in message, message
        return "refused"
    try:
        got = base.predict(model)
    except BicritError:
        return "loaded"
    same = (
        np.array_equal(got, base.expected)
        if isinstance(got, np.ndarray)
        else repr(got) == repr(base.expected)
    )
    return "loaded" if same else "loaded-changed"


def run(
    bases: list[Base], n: int, seed: int, workdir: Path, kinds: tuple[str, ...] | None = None
) -> Tally:
    """``n`` mutated files, cycling through ``bases`` and ``kinds`` (default: every mutation),
    seeded."""
    kinds = kinds or (*BYTE_MUTATIONS, *STRUCTURAL_MUTATIONS)
    rng = np.random.default_rng(seed)
    tally = Tally()
    path = workdir / "fuzzed.bicrit"
    with warnings.catch_warnings():  # tampered weights overflow: numpy says so, not our concern
        warnings.simplefilter("ignore", RuntimeWarning)
        _run(bases, n, kinds, rng, tally, path)
    return tally


def _run(bases: list[Base], n: int, kinds: tuple[str, ...], rng: Any, tally: Tally, path: Path):
    for i in range(n):
        base = bases[i % len(bases)]
        kind = kinds[(i // len(bases)) % len(kinds)]
        blob = mutate(base, kind, rng)
        try:
            outcome = check(base, blob, path)
        except Exception as exc:  # what the test counts as a failure
            outcome = "escaped"
            tally.failures.append((base.name, kind, f"{type(exc).__name__}: {exc}"[:300]))
        tally.counts[(kind, outcome)] += 1
