"""Atomic file output: every file bicrit writes (model files, ``predict`` output, reproduction
and benchmark tables, plots) goes through :func:`atomic_write`.

The content goes to a temporary file in the target's folder, which is flushed and fsynced and
then renamed over the target (``os.replace``, atomic on POSIX and Windows); the folder is then
fsynced so that the rename itself survives a crash. Whatever happens to the process — an
exception, Ctrl-C, SIGTERM, SIGKILL, a power cut — the target is either the old file or the
complete new one, never a piece. On an exception (Ctrl-C included) the temporary file is
removed; a process killed outright can leave a ``.NAME.*.tmp`` file beside the target, never a
damaged target.
"""

from __future__ import annotations

import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, Any

__all__ = ["atomic_write", "check_output_folder", "check_writable", "write_text"]

_umask_lock = threading.Lock()


def check_writable(path: str | os.PathLike[str]) -> Path:
    """``path`` as a :class:`~pathlib.Path` once it is known to be writable: its folder exists
    and is writable and it is not a folder itself. Raises :class:`FileNotFoundError`,
    :class:`PermissionError` or :class:`IsADirectoryError` with a one-line message otherwise —
    call it before the work whose result it will hold."""
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.is_dir():
        raise FileNotFoundError(f"cannot write {p}: the folder {folder} does not exist")
    if p.is_dir():
        raise IsADirectoryError(f"cannot write {p}: it is a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"cannot write {p}: the folder {folder} is not writable")
    if p.exists() and not os.access(p, os.W_OK):
        raise PermissionError(f"cannot write {p}: the file is read-only")
    return p


def check_output_folder(path: str | os.PathLike[str]) -> Path:
    """``path`` as a :class:`~pathlib.Path` once it is known that files can be written into it:
    it is a writable folder, or it does not exist yet and its nearest existing parent is one
    (the writer creates it). Same errors as :func:`check_writable`."""
    p = Path(path)
    if p.exists() and not p.is_dir():
        raise NotADirectoryError(f"cannot write into {p}: it is a file, not a folder")
    existing = p
    while not existing.exists():
        existing = existing.parent
    if not existing.is_dir():
        raise NotADirectoryError(f"cannot write into {p}: {existing} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise PermissionError(f"cannot write into {p}: the folder {existing} is not writable")
    return p


def _new_file_mode() -> int:
    """The permission bits a plain ``open(path, "w")`` would give a new file (0666 less the
    umask); ``mkstemp`` creates its files 0600."""
    with _umask_lock:  # os.umask can only be read by setting it
        mask = os.umask(0o022)
        os.umask(mask)
    return 0o666 & ~mask


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:  # platforms that cannot open a folder (Windows): the rename is enough
        return
    try:
        with suppress(OSError):
            os.fsync(fd)
    finally:
        os.close(fd)


@contextmanager
def atomic_write(
    path: str | os.PathLike[str],
    mode: str = "w",
    *,
    encoding: str | None = None,
    newline: str | None = None,
) -> Iterator[IO[Any]]:
    """Opens a temporary file beside ``path`` for writing and, when the ``with`` block ends
    without an exception, makes it ``path`` atomically (see the module docstring).

    ``mode`` is ``"w"`` (text, UTF-8 unless ``encoding`` is given) or ``"wb"``. The new file
    keeps the permission bits of the file it replaces (a new file gets those of ``open``). A
    symbolic link is written through: its target is replaced, the link kept.

    >>> with atomic_write("table.csv") as f:  # doctest: +SKIP
    ...     f.write("a,b\\n1,2\\n")
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"atomic_write writes whole files: mode 'w' or 'wb', not {mode!r}")
    target = Path(os.path.realpath(check_writable(path)))
    try:
        bits = target.stat().st_mode & 0o7777
    except FileNotFoundError:
        bits = _new_file_mode()
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        try:
            if "b" in mode:
                fh: IO[Any] = os.fdopen(fd, mode)
            else:
                fh = os.fdopen(fd, mode, encoding=encoding or "utf-8", newline=newline)
        except BaseException:
            os.close(fd)
            raise
        with fh:
            yield fh
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, bits)
        os.replace(tmp, target)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    _fsync_folder(target.parent)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Writes ``text`` to ``path`` through :func:`atomic_write`, creating its folder first
    (the reproductions' tables)."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(path) as f:
        f.write(text)
