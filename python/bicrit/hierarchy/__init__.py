"""Hierarchy: label hierarchies (trees and DAGs) for hierarchical classification, DESIGN §6."""

from __future__ import annotations

from bicrit.hierarchy.graph import Hierarchy

__all__ = ["Hierarchy"]
