"""``bicrit plugins`` for plugin contributions: capabilities a plugin's classes declare are shown
even when it registered none; plugins failing at import or at registration are listed as BROKEN
with the reason (once, without a warning on top); a clash is listed, then reported as a one-line
error (exit 2), and the other names keep working."""

from __future__ import annotations

import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from bicrit import registry
from bicrit.cli import main

UNDECLARED = """
from bicrit.hookspecs import hookimpl

class Perm:
    name = "perm"
    capabilities = {"ban": True, "kbest": False, "cone": False, "relaxed": False}

class Prod:
    product_shift = 2.0
    affine_in_h = True
    def value(self, h, g):
        return (h + 2.0) * g
    def grad(self, h, g):
        return g, h + 2.0
    def tangent(self, h, g):
        return (h + 2.0) / g

class Bent:
    convex_in_h = False
    def value(self, h, g):
        return g * (1.0 + h / (1.0 + abs(h)))
    def grad(self, h, g):
        return g / (1.0 + abs(h)) ** 2, 1.0 + h / (1.0 + abs(h))

@hookimpl
def bicrit_register_structures(registry):
    registry.add_structure("perm", Perm)

@hookimpl
def bicrit_register_surrogates(registry):
    registry.add_surrogate("prod2", Prod, description="(h + 2)·g")
    registry.add_surrogate("bent", Bent, description="g·(1 + h/(1 + |h|))")
"""

FAILS_WHILE_REGISTERING = """
from bicrit.hookspecs import hookimpl

@hookimpl
def bicrit_register_structures(registry):
    raise LookupError("missing resource file")
"""


def _fake_dist(site: Path, dist: str, version: str, module: str, source: str) -> None:
    """Writes what an installer writes: a module and a ``.dist-info`` with an entry point."""
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{dist}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[bicrit]\n{module} = {module}\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delenv("BICRIT_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    registry.reload()
    yield tmp_path
    registry.reload()
    for name in list(sys.modules):
        if name.startswith("bicrit_clitest_"):
            del sys.modules[name]


def _line(out: str, kind: str, name: str) -> str:
    [line] = [ln for ln in out.splitlines() if ln.split()[:2] == [kind, name]]
    return line


def test_capabilities_declared_by_plugin_classes_are_shown(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_dist(site, "bicrit_clitest_a", "3.1", "bicrit_clitest_a", UNDECLARED)
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    perm = _line(out, "structure", "perm")
    assert "bicrit_clitest_a 3.1" in perm
    assert "[ban=True; cone=False; kbest=False; relaxed=False]" in perm
    prod = _line(out, "surrogate", "prod2")
    assert "affine_in_h=True; convex_in_h=True; g_by_loss=True;" in prod
    assert "product_form=True" in prod
    # judged by the native core: the product form with shift 2 runs the product-form searches
    # but not angular, whose cones are written for shift 1
    assert "searches=sarawagi,binary,bisecting,convex-hull,convex-hull-ban," in prod
    assert "angular" not in prod
    assert "tangent=True" in prod and prod.endswith("(h + 2)·g")
    bent = _line(out, "surrogate", "bent")
    assert "convex_in_h=False" in bent and "tangent=False" in bent


def test_broken_plugins_are_listed_once_with_the_reason(
    site: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _fake_dist(site, "bicrit_clitest_imp", "0.1", "bicrit_clitest_imp", "import no_such_module_x\n")
    _fake_dist(site, "bicrit_clitest_reg", "0.2", "bicrit_clitest_reg", FAILS_WHILE_REGISTERING)
    _fake_dist(site, "bicrit_clitest_ok", "0.3", "bicrit_clitest_ok", UNDECLARED)
    assert main(["plugins", "--kind", "structure"]) == 0
    captured = capsys.readouterr()
    broken = [ln for ln in captured.out.splitlines() if ln.startswith("BROKEN")]
    assert len(broken) == 2
    assert any(
        "bicrit_clitest_imp 0.1" in ln and "ModuleNotFoundError" in ln and "no_such_module_x" in ln
        for ln in broken
    )
    assert any(
        "bicrit_clitest_reg 0.2" in ln
        and "LookupError in bicrit_register_structures: missing resource file" in ln
        for ln in broken
    )
    assert "perm" in captured.out and "multiclass" in captured.out  # the others still load
    assert "BrokenPluginWarning" not in captured.err


def test_name_clash_is_a_one_line_error(site: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _fake_dist(site, "bicrit_clitest_x", "1.0", "bicrit_clitest_x", UNDECLARED)
    _fake_dist(site, "bicrit_clitest_y", "2.0", "bicrit_clitest_y", UNDECLARED)
    assert main(["plugins"]) == 2  # the whole listing, then the clash as the error
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert err.startswith("bicrit plugins: error: structure 'perm' is registered twice")
    assert "bicrit_clitest_x 1.0" in err and "bicrit_clitest_y 2.0" in err
    assert "(and 2 more clashes)" in err and len(err.splitlines()) == 1  # prod2 and bent too
    out = captured.out
    assert "CLASH      structure perm  bicrit_clitest_x 1.0, bicrit_clitest_y 2.0" in out
    assert "CLASH      surrogate prod2" in out and "multiclass" in out
    assert not any(ln.split()[:2] == ["structure", "perm"] for ln in out.splitlines())
    # everything else works: a margin fit on the bundled data
    assert main(["train", "--surrogate", "margin", "--epochs", "1"]) == 0
