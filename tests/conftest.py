"""Shared fixtures: the development data root (``BICRIT_DATA``, default ``../shared/data``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def data_root() -> Path:
    """Root of the development datasets."""
    return Path(os.environ.get("BICRIT_DATA", REPO.parent / "shared" / "data"))


@pytest.fixture(scope="session")
def data_dir() -> Path:
    root = data_root()
    if not root.is_dir():
        pytest.skip(f"development data not found at {root} (set BICRIT_DATA)")
    return root
