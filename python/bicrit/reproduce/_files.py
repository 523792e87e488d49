"""Files the reproductions write: atomically (a temporary file in the same folder, flushed,
then renamed over the target), so an interrupted run never leaves a half-written table."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["atomic_write"]


def atomic_write(path: Path, text: str) -> None:
    """Writes ``text`` to ``path`` atomically, creating the folder when needed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
