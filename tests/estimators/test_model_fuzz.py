"""Fuzzed model files (``model_fuzz.py``): ≥ 10⁴ mutated files of five estimators per test run,
every one refused with a one-line ModelFormatError naming the file, or loaded into a model that
predicts (byte-level damage never changes a prediction unnoticed); and the cases of the issue
that escaped before: raw zlib/zip errors, a 200 MB manifest in a small file, a huge ``.npy``
header, duplicate entries, wrong-typed manifest fields, fitted attributes that are no
attributes."""

from __future__ import annotations

import io
import json
import os
import zipfile
from pathlib import Path

import numpy as np
import pytest

import bicrit
from bicrit import datasets
from bicrit.errors import ModelFormatError

from .model_fuzz import BYTE_MUTATIONS, STRUCTURAL_MUTATIONS, Base, mutate, run

#: Mutated files per test run (the bench runs 10⁶: benches/reliability/fuzz_model_files.py).
N_FILES = int(os.environ.get("BICRIT_FUZZ_MODELS", "10000"))


def fuzz_bases(folder: Path) -> list[Base]:
    """Small fitted models of five estimators, saved in ``folder`` (bundled and synthetic data:
    no data root needed)."""
    from sklearn.datasets import load_iris

    out = []
    train = datasets.load_bundled("train")
    est = bicrit.MultiLabelSVM(max_epochs=1, random_state=0).fit(train)
    out.append(("multilabel", est, train.X[:20]))
    X, y = load_iris(return_X_y=True)
    X = (X - X.mean(0)) / X.std(0)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    est = bicrit.StructuredSVM(structure="multiclass", max_epochs=2, random_state=0)
    out.append(("multiclass", est.fit(X, names), X[:20]))
    tokens = [["El", "Rey", "de", "España"], ["Juan", "vive", "en", "Madrid"]] * 10
    tags = [["O", "B-PER", "O", "B-LOC"], ["B-PER", "O", "O", "B-LOC"]] * 10
    est = bicrit.SequenceSVM(featurizer=datasets.SequenceFeaturizer(2**10), max_epochs=2)
    out.append(("sequence", est.set_params(random_state=0).fit(tokens, tags), tokens[:4]))
    h = datasets.synthetic_hierarchy("balanced", n=120, d=20, seed=0)
    est = bicrit.HierarchicalSVM(max_epochs=2, random_state=0).fit(h.split("train"))
    out.append(("hierarchy", est, h.split("test").X[:10]))
    est = bicrit.StructuredSVM(structure_params={"edges": "tree"}, max_epochs=1, random_state=0)
    Y = train.Y
    Xs = (train.X - train.X.mean(0)) / (train.X.std(0) + 1e-12)
    out.append(("multilabel-tree", est.fit(Xs, Y), Xs[:20]))
    bases = []
    for name, model, sample in out:
        path = folder / f"{name}.bicrit"
        model.save(path)
        bases.append(Base.of(name, path, sample))
    return bases


@pytest.fixture(scope="module")
def bases(tmp_path_factory: pytest.TempPathFactory) -> list[Base]:
    return fuzz_bases(tmp_path_factory.mktemp("fuzz-bases"))


def test_mutated_model_files_are_refused_or_load(bases: list[Base], tmp_path: Path) -> None:
    tally = run(bases, N_FILES, seed=0, workdir=tmp_path)
    assert tally.total >= N_FILES
    assert tally.failures == [], tally.failures[:5]
    for kind in BYTE_MUTATIONS:  # damage is noticed: a model that loads predicts the same
        assert tally.counts[(kind, "loaded-changed")] == 0, kind
    outcomes = tally.by_outcome()
    kinds = {kind for kind, outcome in tally.counts if outcome == "refused"}
    assert kinds == set(BYTE_MUTATIONS) | set(STRUCTURAL_MUTATIONS)  # every kind was exercised
    assert outcomes["refused"] > N_FILES // 2


def _rewrite(base: Base, members: list[tuple[str, bytes]], path: Path) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return path


def test_bomb_manifest_refused_before_inflating(bases: list[Base], tmp_path: Path) -> None:
    """A 200 KB file holding a 200 MB manifest (spaces inside valid JSON) is refused from the
    sizes in the archive's directory, before decompressing anything."""
    base = bases[0]
    manifest = base.members["manifest.json"]
    padded = manifest[:-1] + b" " * (200 * 2**20) + manifest[-1:]
    rest = [(n, d) for n, d in base.members.items() if n != "manifest.json"]
    members = [("manifest.json", padded), *rest]
    path = _rewrite(base, members, tmp_path / "bomb.bicrit")
    assert path.stat().st_size < 400_000
    import tracemalloc

    tracemalloc.start()
    try:
        with pytest.raises(ModelFormatError, match=r"manifest.json.*claims \d+ bytes"):
            bicrit.load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 20 * 2**20


def test_each_structural_mutation_gives_its_message(bases: list[Base], tmp_path: Path) -> None:
    rng = np.random.default_rng(1)
    base = bases[0]
    cases = {
        "drop-entry": r"is missing|not a bicrit model",
        "duplicate-entry": "appears twice",
        "npy-header": r"claims \d+ bytes|is <f8 \[\d+\], the manifest says|holds \d+ bytes",
        "claim-size": r"claims \d+ bytes|not a readable zip",
    }
    for kind, pattern in cases.items():
        path = tmp_path / f"{kind}.bicrit"
        path.write_bytes(mutate(base, kind, rng))
        with pytest.raises(ModelFormatError, match=pattern):
            bicrit.load(path)


def _edit_manifest(base: Base, edit, path: Path) -> Path:
    manifest = json.loads(base.members["manifest.json"])
    edit(manifest)
    members = [
        (n, json.dumps(manifest).encode() if n == "manifest.json" else d)
        for n, d in base.members.items()
    ]
    return _rewrite(base, members, path)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.update(arrays=[1, 2]), "'arrays' is a list, not a dict"),
        (lambda m: m["arrays"]["coef"].update(shape="big"), "'shape' is str"),
        (lambda m: m["arrays"]["coef"].update(shape=[-3]), "invalid shape"),
        (lambda m: m["arrays"]["coef"].update(dtype="|O"), "not a numeric array type"),
        (lambda m: m["arrays"]["coef"].update(dtype="<f8)"), "invalid dtype"),
        (lambda m: m["arrays"]["coef"].update(file="manifest.json"), "its file is"),
        (lambda m: m.update(format_version="1"), "invalid format_version"),
        (lambda m: m["config"]["attributes"].update(predict=1), "unknown fitted attribute"),
        (lambda m: m["config"]["attributes"].update(n_epochs_="3"), "'n_epochs_' is str"),
        (lambda m: m["config"].update(history=[1]), "history is not a list of objects"),
        (lambda m: m["config"]["params"].update(max_epochs="x"), "max_epochs must be"),
        (lambda m: m["config"].pop("structure"), r"cannot be rebuilt.*KeyError"),
        (lambda m: m["config"]["params"].update(surrogate="smooth-nosuch"), "not installed"),
    ],
)
def test_tampered_manifest_fields(bases: list[Base], tmp_path: Path, edit, message) -> None:
    path = _edit_manifest(bases[0], edit, tmp_path / "t.bicrit")
    with pytest.raises(ModelFormatError, match=message) as info:
        bicrit.load(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)


def test_every_corruption_is_one_line_exit_2_in_the_cli(
    bases: list[Base], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bicrit.cli import main

    data = bases[0].data
    for i, off in enumerate(range(0, len(data), 997)):  # the reproduction
        blob = bytearray(data)
        blob[off] ^= 0xFF
        path = tmp_path / f"flip{i}.bicrit"
        path.write_bytes(bytes(blob))
        code = main(["evaluate", str(path), "bundled"])
        err = capsys.readouterr().err
        assert code in (0, 2), (off, code)
        if code == 2:
            assert err.startswith("bicrit evaluate: error: ") and err.count("\n") == 1, err


def test_zip_entry_with_another_compression_method(bases: list[Base], tmp_path: Path) -> None:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_BZIP2) as zf:
        for name, d in bases[0].members.items():
            zf.writestr(name, d)
    path = tmp_path / "bz2.bicrit"
    path.write_bytes(buf.getvalue())
    with pytest.raises(ModelFormatError, match="compression method 12"):
        bicrit.load(path)


@pytest.mark.parametrize(
    ("name", "edit", "message"),
    [
        # found by the 10⁶ bench: a window of 10²⁰ made predict allocate until the OOM killer
        (
            "sequence",
            lambda m: m["config"]["featurizer_"].update(window=10**20),
            "window must be <= 100",
        ),
        (
            "hierarchy",
            lambda m: m["config"]["params"].update(n_hashed_features=2**63),
            r"n_hashed_features must be None or an int in \[1, 2\*\*31\)",
        ),
    ],
)
def test_sizes_that_would_exhaust_memory_are_refused(
    bases: list[Base], tmp_path: Path, name: str, edit, message: str
) -> None:
    [base] = [b for b in bases if b.name == name]
    path = _edit_manifest(base, edit, tmp_path / "t.bicrit")
    with pytest.raises(ModelFormatError, match=message):
        bicrit.load(path)
