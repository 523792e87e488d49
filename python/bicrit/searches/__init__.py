"""Searches: see DESIGN §3."""

from __future__ import annotations

from bicrit.registry import Registrar


def register_builtins(registry: Registrar) -> None:
    """Registers bicrit's built-in searches."""
