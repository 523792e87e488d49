"""Names registered by plugins work wherever bicrit takes a name: a plugin surrogate by name in
``bicrit.search`` (resolved through the registry, not only among the built-ins)."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import bicrit
from bicrit import registry
from bicrit.errors import IncompatibleError, UnknownNameError

PLUGIN = """
from bicrit.hookspecs import hookimpl

class HalfSlack:
    '''ψ = (h + 1)·g / 2: a product form with shift 1.'''
    name = "half-slack"
    product_shift = 1.0
    def value(self, h, g):
        return 0.5 * (h + 1.0) * g
    def grad(self, h, g):
        return 0.5 * g, 0.5 * (h + 1.0)

class Steep:
    '''ψ = h + 3g: not a product form.'''
    def value(self, h, g):
        return h + 3.0 * g
    def grad(self, h, g):
        return 1.0, 3.0

@hookimpl
def bicrit_register_surrogates(registry):
    registry.add_surrogate("half-slack", HalfSlack)
    registry.add_surrogate("steep", Steep)
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    (tmp_path / "bicrit_byname_test.py").write_text(textwrap.dedent(PLUGIN))
    info = tmp_path / "bicrit_byname_test-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: bicrit_byname_test\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text("[bicrit]\nbyname = bicrit_byname_test\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("BICRIT_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    registry.reload()
    yield tmp_path
    registry.reload()
    sys.modules.pop("bicrit_byname_test", None)


def test_plugin_surrogate_by_name_in_search(site: Path) -> None:
    h, g = [0.0, 0.3, -0.2, -1.5], [0.0, 2.0, 4.0, 6.0]
    for search in ["convex-hull", "convex-hull-kbest", "angular", "bisecting"]:
        by_name = bicrit.search(search, bicrit.PointSetOracle(h, g), "half-slack")
        slack = bicrit.search(search, bicrit.PointSetOracle(h, g), "slack")
        assert by_name.value == pytest.approx(0.5 * slack.value), search
    with pytest.raises(IncompatibleError, match="product form"):
        bicrit.search("bisecting", bicrit.PointSetOracle(h, g), "steep")
    assert bicrit.search(
        "convex-hull", bicrit.PointSetOracle(h, g), "steep"
    ).value == pytest.approx(16.5)
    with pytest.raises(UnknownNameError, match=r"unknown surrogate 'nope'.*half-slack"):
        bicrit.search("convex-hull", bicrit.PointSetOracle(h, g), "nope")


def test_a_model_needing_a_plugin_that_is_gone_is_refused(
    site: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/model-format.md: a model naming a plugin surrogate that is not installed is
    refused with a ModelFormatError saying which, although it could still predict."""
    from bicrit.errors import ModelFormatError

    data = bicrit.datasets.load_bundled("train")
    path = tmp_path / "half.bicrit"
    est = bicrit.MultiLabelSVM(surrogate="half-slack", max_epochs=1, random_state=0).fit(data)
    est.save(path)
    assert bicrit.load(path).surrogate == "half-slack"  # with the plugin: loads
    monkeypatch.setenv("BICRIT_DISABLE_PLUGIN_AUTOLOAD", "1")  # the plugin uninstalled
    registry.reload()
    with pytest.raises(ModelFormatError, match=r"needs the surrogate 'half-slack', which is not"):
        bicrit.load(path)
