"""The example plugin packages under ``plugins/``, installed for real by pip into a fresh target
directory, change nothing in bicrit and yet appear in ``bicrit plugins`` and work by name; a
broken package is listed as BROKEN and does not stop the others; two packages registering one
name make ``bicrit plugins`` fail with an error naming both."""

from __future__ import annotations

import importlib.metadata as metadata
import importlib.util
import itertools
import json
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
PLUGINS = REPO / "plugins"
GUIDE = REPO / "docs" / "plugins.md"

BROKEN_MODULE = 'raise RuntimeError("this plugin is broken on purpose")\n'

CLASH_MODULE = """
from bicrit.hookspecs import hookimpl

class Twin:
    \"\"\"A stand-in structure: registering needs only a callable factory.\"\"\"

@hookimpl
def bicrit_register_structures(registry):
    registry.add_structure("twin", Twin)
"""


def _project(root: Path, dist: str, version: str, module: str, source: str) -> Path:
    """Writes a minimal setuptools project whose module ``module`` is its ``bicrit`` entry point."""
    src = root / dist
    src.mkdir(parents=True)
    (src / f"{module}.py").write_text(textwrap.dedent(source))
    (src / "pyproject.toml").write_text(
        textwrap.dedent(
            f"""
            [build-system]
            requires = ["setuptools>=61"]
            build-backend = "setuptools.build_meta"

            [project]
            name = "{dist}"
            version = "{version}"

            [tool.setuptools]
            py-modules = ["{module}"]

            [project.entry-points.bicrit]
            {module} = "{module}"
            """
        )
    )
    return src


def _fake_dist(site: Path, dist: str, version: str, module: str, source: str) -> None:
    """Writes what an installer writes: a module and a ``.dist-info`` with an entry point."""
    (site / f"{module}.py").write_text(textwrap.dedent(source))
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    (info / "entry_points.txt").write_text(f"[bicrit]\n{module} = {module}\n")


def _guide_blocks() -> list[str]:
    """The fenced code blocks of ``docs/plugins.md``."""
    return re.findall(r"```[a-z]*\n(.*?)```", GUIDE.read_text(), flags=re.S)


def _guide_example(root: Path) -> tuple[Path, str]:
    """Writes the guide's complete example package (blocks starting ``# file: <name>``) and
    returns its folder and the guide's usage snippet (the block starting ``# usage``)."""
    project = root / "bicrit-bits-example"
    project.mkdir()
    usage = None
    for block in _guide_blocks():
        first, _, rest = block.partition("\n")
        if first.startswith("# file: "):
            (project / first.removeprefix("# file: ").strip()).write_text(rest)
        elif first.strip() == "# usage":
            usage = rest
    assert usage is not None and (project / "pyproject.toml").exists()
    return project, usage


def _local_setuptools_builds_wheels() -> bool:
    """Whether this environment's setuptools can build a wheel without build isolation
    (setuptools ≥ 70.1, or the ``wheel`` package beside it)."""
    try:
        version = metadata.version("setuptools")
    except metadata.PackageNotFoundError:
        return False
    major, minor = (int(p) if p.isdigit() else 0 for p in version.split(".")[:2])
    return (major, minor) >= (70, 1) or importlib.util.find_spec("wheel") is not None


def _pip(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "pip", "install", "-q", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)


def _build_options(root: Path) -> tuple[list[str], dict[str, str] | None]:
    """pip options and environment for building the projects. Isolated builds cost several
    seconds each (a fresh environment per project), so build them all in one environment
    instead: this one's setuptools when it can build wheels, else a recent setuptools installed
    once into a folder on the ``PYTHONPATH`` of pip; isolated builds are the fallback."""
    if _local_setuptools_builds_wheels():
        return ["--no-build-isolation"], None
    tools = root / "build-tools"
    if _pip("--target", str(tools), "setuptools>=70.1").returncode == 0:
        return ["--no-build-isolation"], dict(os.environ, PYTHONPATH=str(tools))
    return [], None


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    """Both example packages, the guide's example package and a package that raises on import,
    installed for real by ``pip install --no-deps --target``; the target is the ``PYTHONPATH``
    of the subprocesses below."""
    root = tmp_path_factory.mktemp("plugin-packages")
    broken = _project(
        root, "bicrit-broken-example", "0.0.1", "bicrit_broken_example", BROKEN_MODULE
    )
    guide, _ = _guide_example(root)
    projects = [PLUGINS / "bicrit-smooth-slack", PLUGINS / "bicrit-assignment", broken, guide]
    options, env = _build_options(root)
    target = root / "site"
    done = _pip("--no-deps", "--target", str(target), *options, *map(str, projects), env=env)
    assert done.returncode == 0, done.stderr
    return [target]


def _run(path: list[Path], *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, path)))
    env.pop("BICRIT_DISABLE_PLUGIN_AUTOLOAD", None)
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, env=env, cwd=path[0], timeout=300
    )


def test_cli_lists_the_installed_packages_with_versions_and_capabilities(site) -> None:
    out = _run(site, "-m", "bicrit.cli", "plugins")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    [assignment] = [ln for ln in lines if ln.split()[:2] == ["structure", "assignment"]]
    assert "bicrit-assignment 0.1.0" in assignment
    assert "[ban=True; cone=False; frontier=False; kbest=True; relaxed=False]" in assignment
    [smooth] = [ln for ln in lines if ln.split()[:2] == ["surrogate", "smooth-slack"]]
    assert "bicrit-smooth-slack 0.1.0" in smooth
    assert "product_form=False" in smooth
    assert "convex_in_h=True" in smooth
    assert "searches=convex-hull,convex-hull-ban,convex-hull-kbest,frontier;" in smooth
    # the broken package is listed with its package, version and the reason; the rest loads
    [broken] = [ln for ln in lines if ln.startswith("BROKEN")]
    assert "bicrit_broken_example" in broken and "bicrit-broken-example 0.0.1" in broken
    assert "RuntimeError: this plugin is broken on purpose" in broken
    assert any(ln.split()[:2] == ["structure", "multiclass"] for ln in lines)
    # --kind filters contributions (BROKEN lines stay)
    only = _run(site, "-m", "bicrit.cli", "plugins", "--kind", "surrogate").stdout
    assert "smooth-slack" in only and "assignment" not in only.replace("BROKEN", "")


USE_BY_NAME = """
import json, sys, warnings
import numpy as np
import bicrit
from bicrit.errors import BrokenPluginWarning

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    names = bicrit.registry.names("structure")
out = {
    "warned": [str(w.message) for w in caught if issubclass(w.category, BrokenPluginWarning)],
    "broken": [b.package for b in bicrit.registry.broken()],
    "files": [sys.modules[m].__file__ for m in ("bicrit_assignment", "bicrit_smooth_slack")
              if m in sys.modules],
}
s = bicrit.structure("assignment", n_features=2)
rng = np.random.default_rng(0)
results = []
for _ in range(5):
    x = rng.normal(size=(4, 4, 2)); y = rng.permutation(4); w = rng.normal(size=2)
    r = bicrit.search("convex-hull-kbest", s.instance_oracle(w, x, y), "smooth-slack", )
    r2 = bicrit.search("convex-hull-ban", s.instance_oracle(w, x, y),
                       bicrit.surrogate("smooth-slack", tau=0.2))
    results.append({"x": x.tolist(), "y": y.tolist(), "w": w.tolist(), "value": r.value,
                    "value_tau02": r2.value, "label": [int(v) for v in r.label]})
out["results"] = results
out["files"] += [sys.modules[m].__file__ for m in ("bicrit_assignment", "bicrit_smooth_slack")]
est = getattr(bicrit, "StructuredSVM", None)
if est is not None:
    from bicrit_assignment import make_assignment_data
    X, Y, _ = make_assignment_data(30, 4, 3, random_state=0)
    model = est(structure="assignment", surrogate="smooth-slack", search="convex-hull-kbest",
                learner="sgd", C=1.0, max_epochs=2, random_state=0).fit(X, Y)
    out["estimator"] = [[int(v) for v in p] for p in model.predict(X[:3])]
print(json.dumps(out))
"""


def _smooth_slack(h: float, g: float, tau: float) -> float:
    return g * tau * float(np.logaddexp(0.0, (h + 1.0) / tau))


def test_installed_plugins_work_by_name_in_bicrit_search(site) -> None:
    proc = _run(site, "-c", USE_BY_NAME)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # the broken package was reported and skipped; the pip-installed copies were the ones used
    assert out["broken"] == ["bicrit-broken-example"]
    assert any("bicrit-broken-example" in m for m in out["warned"])
    assert all(any(f.startswith(str(t)) for t in site) for f in out["files"]), out["files"]
    for r in out["results"]:
        x, y, w = np.array(r["x"]), np.array(r["y"]), np.array(r["w"])
        S = x @ w
        best = {0.5: 0.0, 0.2: 0.0}
        for perm in itertools.permutations(range(len(y))):
            m = sum(S[i, j] for i, j in enumerate(perm)) - sum(S[i, j] for i, j in enumerate(y))
            L = float(sum(a != b for a, b in zip(perm, y, strict=True)))
            for tau in best:
                best[tau] = max(best[tau], _smooth_slack(m, L, tau))
        assert r["value"] == pytest.approx(best[0.5], rel=1e-9, abs=1e-12)
        assert r["value_tau02"] == pytest.approx(best[0.2], rel=1e-9, abs=1e-12)
        assert sorted(r["label"]) == list(range(len(y)))
    # the plugins by name in the estimator too
    assert all(sorted(p) == [0, 1, 2, 3] for p in out["estimator"])


def test_cli_trains_with_a_plugin_surrogate_by_name(site) -> None:
    """`bicrit train --surrogate smooth-slack` on the bundled data, with no change to bicrit."""
    out = _run(site, "-m", "bicrit.cli", "train", "--surrogate", "smooth-slack", "--epochs", "2")
    assert out.returncode == 0, out.stderr
    assert "smooth-slack" in out.stdout
    assert "test Hamming loss" in out.stdout


def test_name_clash_is_an_error_naming_both_packages(tmp_path: Path) -> None:
    _fake_dist(tmp_path, "bicrit-clash-a", "1.0", "bicrit_clash_a", CLASH_MODULE)
    _fake_dist(tmp_path, "bicrit-clash-b", "2.0", "bicrit_clash_b", CLASH_MODULE)
    proc = _run([tmp_path], "-m", "bicrit.cli", "plugins")
    assert proc.returncode == 2
    assert proc.stderr.startswith("bicrit plugins: error: structure 'twin' is registered twice")
    assert "bicrit-clash-a 1.0" in proc.stderr and "bicrit-clash-b 2.0" in proc.stderr
    assert "uninstall one of the two packages" in proc.stderr
    assert "Traceback" not in proc.stderr


GUIDE_CHECK = """
import itertools, json
best = 0.0
for bits in itertools.product((0, 1), repeat=Y.shape[1]):
    y = np.array(bits)
    m = float(w @ (s.joint_feature(X[0], y) - s.joint_feature(X[0], Y[0])))
    best = max(best, m + float(np.count_nonzero(y != Y[0])))
print(json.dumps({"value": r.value, "best": best, "label": [int(v) for v in r.label]}))
"""


def test_the_guides_complete_example_installs_and_works(site, tmp_path: Path) -> None:
    _, usage = _guide_example(tmp_path)
    listing = _run(site, "-m", "bicrit.cli", "plugins", "--kind", "structure")
    assert "bits" in listing.stdout and "bicrit-bits-example 0.1.0" in listing.stdout
    proc = _run(site, "-c", usage + GUIDE_CHECK)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["value"] == pytest.approx(out["best"], rel=1e-12, abs=1e-12)
    assert len(out["label"]) == 4
