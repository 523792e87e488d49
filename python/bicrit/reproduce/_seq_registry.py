"""Reproductions of issue 5 items 4(b)–(d), to merge into the ``bicrit reproduce`` registry:
name → ``"module:function"``, each ``function(scale: float, seeds: int, out: Path | None) ->
polars.DataFrame`` (resolved lazily)."""

from __future__ import annotations

SEQ_EXPERIMENTS: dict[str, str] = {
    "ner": "bicrit.reproduce.ner:run",
    "parsing": "bicrit.reproduce.parsing:run",
    "searches": "bicrit.reproduce.searches:run",
}
