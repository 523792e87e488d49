"""One authority for what combines with what: the registry's built-in entries, the learners'
table and docs/capabilities.md are the native core's, and the lists agree with what the native
check enforces."""

from __future__ import annotations

from pathlib import Path

import pytest

import bicrit
from bicrit import _native, registry
from bicrit.errors import IncompatibleError
from bicrit.learners import LEARNER_NAMES, LEARNERS, check

CATALOG = _native.catalog()


@pytest.mark.parametrize("kind", ["structure", "surrogate", "search"])
def test_registry_entries_are_the_native_catalog(kind: str) -> None:
    native = {e["name"]: e for e in CATALOG[kind]}
    builtins = {c.name: c for c in registry.contributions(kind) if c.package == "bicrit"}
    assert set(builtins) == set(native)
    for name, c in builtins.items():
        assert c.capabilities == native[name]["capabilities"], name
        assert c.description.startswith(native[name]["description"])


def test_learner_table_is_the_native_catalog() -> None:
    assert tuple(e["name"] for e in CATALOG["learner"]) == LEARNER_NAMES
    for e in CATALOG["learner"]:
        assert LEARNERS[e["name"]].capabilities == e["capabilities"]
        assert list(LEARNERS[e["name"]].params) == e["capabilities"]["params"]


def _allowed(learner: str, surrogate: object, search: str) -> bool:
    try:
        check(learner, surrogate, search)
    except IncompatibleError:
        return False
    return True


@pytest.mark.parametrize("entry", CATALOG["surrogate"], ids=lambda e: e["name"])
def test_listed_searches_and_learners_are_what_the_check_enforces(entry: dict) -> None:
    name = entry["name"]
    params = {"generalized": {"alpha": 1.5, "beta": 0.5}, "beta": {"beta": 0.5}}.get(name, {})
    psi = bicrit.surrogate(name, **params)
    caps = entry["capabilities"]
    searches = [s["name"] for s in CATALOG["search"]]
    for search in searches:
        ok = any(_allowed(learner, psi, search) for learner in LEARNER_NAMES)
        assert ok == (search in caps["searches"]), (name, search)
    for learner in LEARNER_NAMES:
        ok = any(_allowed(learner, psi, search) for search in searches)
        assert ok == (learner in caps["learners"]), (name, learner)


@pytest.mark.parametrize("entry", CATALOG["search"], ids=lambda e: e["name"])
def test_listed_learners_of_a_search_are_what_the_check_enforces(entry: dict) -> None:
    for learner in LEARNER_NAMES:
        ok = _allowed(learner, "slack", entry["name"])  # slack runs every built-in search
        assert ok == (learner in entry["capabilities"]["learners"]), (entry["name"], learner)


def test_a_plugin_surrogate_is_judged_like_the_builtins() -> None:
    class Shifted:
        name = "shifted"
        product_shift = 2.0
        affine_in_h = True

        def value(self, h: float, g: float) -> float:
            return (h + 2.0) * g

        def grad(self, h: float, g: float) -> tuple[float, float]:
            return g, h + 2.0

    caps = _native.surrogate_capabilities(Shifted())
    assert "bisecting" in caps["searches"] and "angular" not in caps["searches"]
    assert caps["learners"] == list(LEARNER_NAMES)
    for search in ("bisecting", "angular"):
        assert _allowed("sgd", Shifted(), search) == (search in caps["searches"])


def test_docs_capabilities_is_up_to_date() -> None:
    doc = Path(__file__).resolve().parent.parent / "docs" / "capabilities.md"
    assert doc.read_text(encoding="utf-8") == registry.capability_tables(), (
        "regenerate it: bicrit plugins --markdown > docs/capabilities.md (with no plugins)"
    )
