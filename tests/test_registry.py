"""The pluggy registry: built-ins, third-party entry points, broken plugins, name clashes."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from bicrit import registry
from bicrit.errors import BrokenPluginWarning, RegistryError, UnknownNameError


def _fake_dist(site: Path, dist: str, version: str, module: str, source: str, ep_name: str) -> None:
    """Writes what an installer writes: a module and a ``.dist-info`` with an entry point."""
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{dist}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[bicrit]\n{ep_name} = {module}\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("BICRIT_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    registry.reload()
    yield tmp_path
    registry.reload()
    for name in list(sys.modules):
        if name.startswith("bicrit_test_"):
            del sys.modules[name]


SURROGATE_PLUGIN = """
from bicrit.hookspecs import hookimpl

class Squared:
    def value(self, h, g):
        return (h + 1) * g * g
    def grad(self, h, g):
        return g * g, 2 * (h + 1) * g

@hookimpl
def bicrit_register_surrogates(registry):
    registry.add_surrogate("{name}", Squared, description="test plugin")
"""


def test_builtins_are_listed_with_their_package() -> None:
    registry.reload()
    c = registry.get("structure", "multiclass")
    assert c.package == "bicrit"
    assert c.plugin == "bicrit"
    assert "multiclass" in registry.names("structure")


def test_unknown_name_lists_known_names() -> None:
    with pytest.raises(
        UnknownNameError, match=r"unknown structure 'nope'; known structures: .*multiclass"
    ):
        registry.get("structure", "nope")
    with pytest.raises(ValueError, match="unknown kind"):
        registry.names("oracle")


def test_entry_point_plugin_is_found(site: Path) -> None:
    _fake_dist(
        site, "bicrit_test_a", "1.2.3", "bicrit_test_a", SURROGATE_PLUGIN.format(name="sq"), "sq"
    )
    c = registry.get("surrogate", "sq")
    assert (c.package, c.version, c.plugin, c.description) == (
        "bicrit_test_a",
        "1.2.3",
        "sq",
        "test plugin",
    )
    assert c.create().value(0.0, 2.0) == 4.0


def test_broken_plugin_warns_and_others_load(site: Path) -> None:
    _fake_dist(
        site,
        "bicrit_test_bad",
        "0.1",
        "bicrit_test_bad",
        "raise ImportError('no such thing')",
        "bad",
    )
    _fake_dist(
        site, "bicrit_test_ok", "0.2", "bicrit_test_ok", SURROGATE_PLUGIN.format(name="ok"), "ok"
    )
    with pytest.warns(
        BrokenPluginWarning, match=r"'bad' from package bicrit_test_bad 0.1 failed to load"
    ):
        names = registry.names("surrogate")
    assert "ok" in names
    [b] = registry.broken()
    assert (b.plugin, b.package) == ("bad", "bicrit_test_bad")
    assert "no such thing" in b.reason


def test_name_clash_names_both_packages(site: Path) -> None:
    _fake_dist(
        site,
        "bicrit_test_one",
        "1.0",
        "bicrit_test_one",
        SURROGATE_PLUGIN.format(name="dup"),
        "one",
    )
    _fake_dist(
        site,
        "bicrit_test_two",
        "2.0",
        "bicrit_test_two",
        SURROGATE_PLUGIN.format(name="dup"),
        "two",
    )
    names = registry.names("surrogate")  # the registry works: only 'dup' is unusable
    assert "dup" not in names and "margin" in names
    message = r"'dup' is registered twice.*bicrit_test_(one|two).*bicrit_test_(one|two)"
    with pytest.raises(RegistryError, match=message):
        registry.create("surrogate", "dup")
    [clash] = registry.clashes()
    assert (clash.kind, clash.name) == ("surrogate", "dup")
    assert {c.package for c in clash.contributions} == {"bicrit_test_one", "bicrit_test_two"}


def test_a_plugin_taking_a_builtin_name_breaks_only_that_name(site: Path, tmp_path: Path) -> None:
    """A plugin registering ``slack`` too: using ``slack`` is an error naming both packages;
    margin fits, saving and loading, and the other names keep working."""
    import numpy as np

    import bicrit

    data = bicrit.datasets.load_bundled("train")
    saved = tmp_path / "margin.bicrit"
    bicrit.MultiLabelSVM(max_epochs=1, random_state=0).fit(data).save(saved)
    _fake_dist(
        site, "bicrit_test_sl", "0.3", "bicrit_test_sl", SURROGATE_PLUGIN.format(name="slack"), "sl"
    )
    registry.reload()
    both = r"surrogate 'slack' is registered twice: by bicrit .* and by bicrit_test_sl 0.3"
    with pytest.raises(RegistryError, match=both):
        bicrit.surrogate("slack")
    with pytest.raises(RegistryError, match=both):
        bicrit.MultiLabelSVM(surrogate="slack", max_epochs=1).fit(data)
    est = bicrit.MultiLabelSVM(surrogate="margin", max_epochs=1, random_state=0).fit(data)
    loaded = bicrit.load(saved)
    assert np.array_equal(loaded.predict(data.X), est.predict(data.X))
    assert bicrit.surrogate("beta", beta=0.5).name == "beta"
    assert "slack" not in registry.names("surrogate")


def test_autoload_can_be_disabled(site: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_dist(
        site, "bicrit_test_c", "1.0", "bicrit_test_c", SURROGATE_PLUGIN.format(name="cc"), "cc"
    )
    monkeypatch.setenv("BICRIT_DISABLE_PLUGIN_AUTOLOAD", "1")
    registry.reload()
    assert "cc" not in registry.names("surrogate")
    assert "multiclass" in registry.names("structure")


def test_pip_installed_plugin_appears_in_cli(tmp_path: Path) -> None:
    """A real package, installed by pip, is discovered through its entry point."""
    src = tmp_path / "src"
    (src / "bicrit_test_pkg").mkdir(parents=True)
    (src / "bicrit_test_pkg" / "__init__.py").write_text(
        textwrap.dedent(SURROGATE_PLUGIN.format(name="pipsq"))
    )
    (src / "pyproject.toml").write_text(
        textwrap.dedent(
            """
            [build-system]
            requires = ["setuptools>=61"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "bicrit-test-pkg"
            version = "0.9"

            [project.entry-points.bicrit]
            pipsq = "bicrit_test_pkg"
            """
        )
    )
    target = tmp_path / "site"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--target",
            str(target),
            str(src),
        ],
        check=True,
    )
    env = dict(os.environ, PYTHONPATH=str(target))
    env.pop("BICRIT_DISABLE_PLUGIN_AUTOLOAD", None)
    out = subprocess.run(
        [sys.executable, "-m", "bicrit.cli", "plugins", "--kind", "surrogate"],
        check=True,
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    assert "pipsq" in out and "bicrit-test-pkg 0.9" in out
