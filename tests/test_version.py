"""The version has one source (the Cargo workspace), is shown by ``bicrit --version``, has a
CHANGELOG section, and that section and docs/model-format.md name the format version written."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import bicrit
from bicrit import _native
from bicrit.estimators.model_format import FORMAT_VERSION

ROOT = Path(__file__).resolve().parents[1]


def _source_file(name: str) -> Path:
    path = ROOT / name
    if not path.exists():
        pytest.skip(f"{name} is not beside the tests (an installed wheel's tests)")
    return path


def test_version_is_the_cargo_workspace_version() -> None:
    cargo = tomllib.loads(_source_file("Cargo.toml").read_text())
    assert bicrit.__version__ == cargo["workspace"]["package"]["version"]


def test_metadata_and_native_module_agree() -> None:
    assert bicrit.__version__ == _native.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+([.-]?\w+)*", bicrit.__version__)


def test_cli_version() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "bicrit.cli", "--version"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == f"bicrit {bicrit.__version__}"


def _changelog_section(version: str) -> str:
    text = _source_file("CHANGELOG.md").read_text()
    sections = re.split(r"^## ", text, flags=re.M)[1:]
    for section in sections:
        if section.split()[0] == version:
            return section
    raise AssertionError(f"CHANGELOG.md has no section for {version}")


def test_changelog_names_the_format_version_written() -> None:
    section = _changelog_section(bicrit.__version__)
    found = re.search(r"Model format: version (\d+)", section)
    assert found, "the section does not name its model format version"
    assert int(found.group(1)) == FORMAT_VERSION


def test_model_format_doc_names_the_format_version_written() -> None:
    doc = _source_file("docs/model-format.md").read_text()
    assert doc.splitlines()[0] == f"# The bicrit model file (format version {FORMAT_VERSION})"
    row = re.search(rf"^\| {re.escape(bicrit.__version__)} \| (\d+) \| (\d+) \|$", doc, re.M)
    assert row, f"docs/model-format.md's version table has no row for {bicrit.__version__}"
    assert int(row.group(1)) == FORMAT_VERSION


def test_written_file_carries_both_versions(tmp_path: Path) -> None:
    import json
    import zipfile

    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    Y = (X[:, :2] > 0).astype(int)
    model = bicrit.MultiLabelSVM(max_epochs=2).fit(X, Y)
    path = model.save(tmp_path / "m.bicrit")
    with zipfile.ZipFile(path) as zf:
        manifest = json.loads(zf.read("manifest.json"))
    assert manifest["format_version"] == FORMAT_VERSION
    assert manifest["bicrit_version"] == bicrit.__version__
