"""Shared fixtures: the development data root (``BICRIT_DATA``, default ``../shared/data``) and
Ctrl-C as a terminal delivers it."""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
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


@pytest.fixture
def ctrl_c() -> Iterator[None]:
    """SIGINT raises KeyboardInterrupt for the test's duration, as in an interactive Python.

    A process started with SIGINT ignored (a background job of a non-interactive shell) keeps
    it ignored, and ``_thread.interrupt_main`` is then a no-op: the Ctrl-C tests would wait for
    an interrupt that never comes."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
