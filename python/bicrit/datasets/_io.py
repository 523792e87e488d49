"""Reading text files, gzipped or not, with errors that name the file."""

from __future__ import annotations

import gzip
import os
import zlib
from pathlib import Path

from bicrit.errors import DataFormatError

__all__ = ["PathLike", "read_lines"]

PathLike = str | os.PathLike[str]


def read_lines(path: PathLike, encoding: str = "utf-8") -> list[str]:
    """All lines of ``path`` without their line ends; ``*.gz`` is decompressed on the fly.

    Only ``\\n`` (and ``\\r\\n``) end a line, never the other Unicode line breaks that
    :meth:`str.splitlines` would honour (U+0085, U+2028, …), so line numbers match ``wc -l``.
    """
    p = Path(path)
    try:
        raw = gzip.decompress(p.read_bytes()) if p.suffix == ".gz" else p.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{p}: no such file") from None
    except (OSError, EOFError, zlib.error) as exc:  # a corrupt gzip stream
        raise DataFormatError(p, None, f"cannot read: {exc}") from None
    try:
        text = raw.decode(encoding)
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataFormatError(p, line, f"not valid {encoding}: {exc.reason}") from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if "\r" in text:
        lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    return lines
